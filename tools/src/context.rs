//! [`ToolContext`]: the request's context with typed helpers for tools.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::time::Duration;

use mcp_transport_core::handler::{InputRequest, InputRequired, RequestContext};
use mcp_transport_core::jsonrpc::to_raw;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::output::ToolError;

/// What a tool sees of its request: everything of [`RequestContext`]
/// (through `Deref`: progress, log, cancellation, `close_sse_stream`, the
/// HTTP parts) plus cancellable sleeps and typed elicitation.
#[derive(Clone, Debug)]
pub struct ToolContext {
    inner: RequestContext,
}

/// The client's answer to [`ToolContext::elicit`].
#[derive(Clone, Debug, PartialEq)]
pub enum Elicitation<T> {
    /// `action: "accept"` with content of the asked type.
    Accept(T),
    /// `decline` or `cancel` (the action as the client sent it).
    Refused(String),
}

impl ToolContext {
    /// Wraps a request context.
    pub fn new(inner: RequestContext) -> Self {
        ToolContext { inner }
    }

    /// The request context.
    pub fn request(&self) -> &RequestContext {
        &self.inner
    }

    /// Sleeps for `d` unless the request is cancelled first
    /// ([`ToolError::Cancelled`], so `?` ends the tool).
    pub async fn sleep(&self, d: Duration) -> Result<(), ToolError> {
        tokio::select! {
            () = tokio::time::sleep(d) => Ok(()),
            () = self.inner.cancelled() => Err(ToolError::Cancelled),
        }
    }

    /// The answer to the input request `key` of an earlier round, parsed.
    pub fn answer(&self, key: &str) -> Option<Value> {
        let raw = self.inner.input_responses()?.get(key)?;
        serde_json::from_str(raw.get()).ok()
    }

    /// Asks the client, by `elicitation/create`, for a `T` (its
    /// `requestedSchema` generated from `T`: a flat object of primitives, as
    /// *Elicitation*, "Requested Schema" restricts it). The first call
    /// returns `Err(ToolError::InputRequired)` (so `?` ends this round);
    /// the framework asks the client and calls the tool again, when this
    /// returns the answer under `key`. An accepted answer whose content is
    /// not a `T` is a tool execution error.
    pub fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        key: &str,
        message: &str,
    ) -> Result<Elicitation<T>, ToolError> {
        if let Some(answer) = self.answer(key) {
            return match answer.get("action").and_then(Value::as_str) {
                Some("accept") => {
                    let content = answer.get("content").cloned().unwrap_or(Value::Null);
                    serde_json::from_value(content)
                        .map(Elicitation::Accept)
                        .map_err(|e| {
                            ToolError::failed(format!("malformed elicitation result: {e}"))
                        })
                }
                Some(other) => Ok(Elicitation::Refused(other.to_owned())),
                None => Err(ToolError::failed("malformed elicitation result")),
            };
        }
        let mut schema = SchemaSettings::draft2020_12()
            .for_deserialize()
            .into_generator()
            .into_root_schema_for::<T>();
        schema.remove("$schema");
        schema.remove("title");
        let params = json!({ "message": message, "requestedSchema": schema.to_value() });
        Err(ToolError::InputRequired(Self::one_request(
            key,
            "elicitation/create",
            &params,
        )))
    }

    /// An [`InputRequired`] with one request.
    pub fn one_request(key: &str, method: &str, params: &Value) -> InputRequired {
        let mut requests = BTreeMap::new();
        requests.insert(
            key.to_owned(),
            InputRequest {
                method: method.to_owned(),
                params: to_raw(params).ok(),
            },
        );
        InputRequired {
            requests,
            state: None,
        }
    }
}

impl Deref for ToolContext {
    type Target = RequestContext;

    fn deref(&self) -> &RequestContext {
        &self.inner
    }
}
