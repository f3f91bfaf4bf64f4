//! Typed prompts: [`Prompt`] (its arguments a Rust type, their list
//! generated from the type's JSON Schema) and what a prompt returns
//! ([`IntoPrompt`], [`PromptMessage`]).
//!
//! *Prompts* (every revision): `prompts/list` lists `Prompt`s with their
//! `arguments` (`PromptArgument`: `name`, `description`, `required`);
//! `prompts/get` takes `arguments: { [key: string]: string }` and returns a
//! `GetPromptResult` (`description?`, `messages`). "Error Handling": an
//! invalid prompt name and missing required arguments are `-32602`,
//! internal errors `-32603` — the same in 2025-03-26 through 2026-07-28.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use mcp_transport_core::jsonrpc::ErrorObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::context::ToolContext;
use crate::revision::Dialect;
use crate::schema::Schemas;
use crate::typed::{Args, typed_fn};

type PromptFn =
    dyn Fn(Args<'_>, ToolContext) -> BoxFuture<'static, Result<Value, ErrorObject>> + Send + Sync;

/// Who says a prompt message (`Role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `"user"`.
    User,
    /// `"assistant"`.
    Assistant,
}

/// One message of a prompt (`PromptMessage`: a role and one content block).
#[derive(Clone, Debug, PartialEq)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// The content block (`{"type": "text", "text": ...}`, an image, an
    /// embedded resource, ...), as JSON.
    pub content: Value,
}

impl PromptMessage {
    /// A user message of text.
    pub fn user(text: impl Into<String>) -> Self {
        Self::text(Role::User, text)
    }

    /// An assistant message of text.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::text(Role::Assistant, text)
    }

    fn text(role: Role, text: impl Into<String>) -> Self {
        PromptMessage {
            role,
            content: json!({ "type": "text", "text": text.into() }),
        }
    }

    fn to_json(&self) -> Value {
        let role = match self.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        json!({ "role": role, "content": self.content })
    }
}

/// A `GetPromptResult`: an optional description and the messages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GetPromptResult {
    /// `description`.
    pub description: Option<String>,
    /// `messages`.
    pub messages: Vec<PromptMessage>,
}

/// What a prompt function may return: text (one user message), messages,
/// a whole [`GetPromptResult`], or a `Result` of one with the JSON-RPC
/// error to answer instead.
pub trait IntoPrompt: Send + 'static {
    /// The `GetPromptResult` as JSON, or the error.
    fn into_prompt(self) -> Result<Value, ErrorObject>;
}

impl IntoPrompt for GetPromptResult {
    fn into_prompt(self) -> Result<Value, ErrorObject> {
        let messages: Vec<Value> = self.messages.iter().map(PromptMessage::to_json).collect();
        let mut r = json!({ "messages": messages });
        if let Some(d) = self.description {
            r["description"] = d.into();
        }
        Ok(r)
    }
}

impl IntoPrompt for Vec<PromptMessage> {
    fn into_prompt(self) -> Result<Value, ErrorObject> {
        GetPromptResult {
            description: None,
            messages: self,
        }
        .into_prompt()
    }
}

impl IntoPrompt for String {
    fn into_prompt(self) -> Result<Value, ErrorObject> {
        vec![PromptMessage::user(self)].into_prompt()
    }
}

impl IntoPrompt for &'static str {
    fn into_prompt(self) -> Result<Value, ErrorObject> {
        self.to_owned().into_prompt()
    }
}

impl<T: IntoPrompt> IntoPrompt for Result<T, ErrorObject> {
    fn into_prompt(self) -> Result<Value, ErrorObject> {
        self.and_then(IntoPrompt::into_prompt)
    }
}

/// One prompt: its definition and the typed function that builds it.
///
/// The arguments type's fields become the listed `arguments`: a field's
/// doc comment its `description`, a field that is not an `Option` (and has
/// no default) `required: true`. Prompt arguments are strings on the wire,
/// so the fields should be `String` or `Option<String>` (a field of another
/// type fails to deserialize: `-32602`).
pub struct Prompt {
    name: String,
    title: Option<String>,
    description: String,
    arguments: Vec<Value>,
    run: Arc<PromptFn>,
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Prompt {
    /// A prompt named `name` whose arguments deserialize into `A`.
    pub fn new<A, R, F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Prompt
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoPrompt,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let name = name.into();
        let prompt = name.clone();
        let run = typed_fn(
            f,
            |_| IntoPrompt::into_prompt,
            move |e, _| {
                Err(ErrorObject::invalid_params(format!(
                    "invalid arguments for prompt {prompt}: {e}"
                )))
            },
        );
        let schema = Schemas::input::<A>();
        Prompt {
            name,
            title: None,
            description: description.into(),
            arguments: arguments_of(schema.get(Dialect::Draft2020_12)),
            run: Arc::new(run),
        }
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the display `title` (listed from 2025-06-18 on; older clients
    /// ignore it).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The `Prompt` definition `prompts/list` lists.
    pub fn definition(&self) -> Value {
        let mut p = json!({ "name": self.name, "description": self.description });
        if let Some(t) = &self.title {
            p["title"] = t.as_str().into();
        }
        if !self.arguments.is_empty() {
            p["arguments"] = Value::Array(self.arguments.clone());
        }
        p
    }

    /// Builds the prompt from `arguments` (string values).
    pub async fn get(
        &self,
        arguments: Map<String, Value>,
        cx: ToolContext,
    ) -> Result<Value, ErrorObject> {
        (self.run)(Args::Value(Value::Object(arguments)), cx).await
    }
}

/// `PromptArgument`s from an object schema: each property, its
/// `description`, and `required` when the schema requires it.
fn arguments_of(schema: &Value) -> Vec<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, p)| {
            let mut a = json!({ "name": name });
            if let Some(d) = p.get("description").and_then(Value::as_str) {
                a["description"] = d.into();
            }
            if required.contains(&name.as_str()) {
                a["required"] = true.into();
            }
            a
        })
        .collect()
}
