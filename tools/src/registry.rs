//! [`Tool`] and [`Tools`]: the registry, `tools/list`, `tools/call` (and
//! `prompts/*`, `resources/*` for the prompts and resources registered),
//! and the [`Handler`] it implements.

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use futures_util::future::BoxFuture;
use mcp_transport_core::handler::{Execution, Handler, Outcome, RequestContext, ServerDescription};
use mcp_transport_core::json_members::{Member, ObjectIndex, Valid};
use mcp_transport_core::jsonrpc::{ErrorObject, INVALID_PARAMS, Notification, Request};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::context::ToolContext;
use crate::output::{IntoToolResult, Reply};
use crate::prompts::{IntoPrompt, Prompt};
use crate::resources::{Resource, resource_not_found};
use crate::revision::ToolRules;
use crate::schema::Schemas;
use crate::typed::{Args, lookup, typed_fn};

/// A tool's typed function behind an untyped one: the whole call, the
/// reply shaped for the context's revision, in one boxed future.
type RunFn = dyn Fn(Args<'_>, ToolContext) -> BoxFuture<'static, Outcome> + Send + Sync;

/// One tool: its definition (name, description, schemas, execution) and
/// the typed function that runs it.
pub struct Tool {
    name: String,
    title: Option<String>,
    description: String,
    input: Schemas,
    output: Option<Schemas>,
    annotations: Option<Value>,
    execution: Execution,
    run: Arc<RunFn>,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("execution", &self.execution)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// A tool named `name` whose arguments deserialize into `A` (its
    /// `inputSchema` generated from `A`) and whose function returns any
    /// [`IntoToolResult`] (text, [`Json`](crate::Json) with its
    /// `outputSchema`, a [`CallToolResult`](crate::CallToolResult), or a
    /// `Result` of one with a [`ToolError`](crate::ToolError)).
    pub fn new<A, R, F, Fut>(name: impl Into<String>, description: impl Into<String>, f: F) -> Tool
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoToolResult,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let name = name.into();
        let tool_name = name.clone();
        let run = typed_fn(
            f,
            |cx: &ToolContext| {
                let rules = ToolRules::of(&cx.revision);
                move |r: R| r.into_reply().into_outcome(&rules)
            },
            move |e, cx: &ToolContext| {
                Reply::InvalidArguments(format!("Invalid arguments for tool {tool_name}: {e}"))
                    .into_outcome(&ToolRules::of(&cx.revision))
            },
        );
        Tool {
            name,
            title: None,
            description: description.into(),
            input: Schemas::input::<A>(),
            output: R::output_schema(),
            annotations: None,
            execution: Execution::Immediate,
            run: Arc::new(run),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the display `title`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets `annotations` (`ToolAnnotations`: `readOnlyHint`, ...).
    pub fn annotations(mut self, annotations: Value) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Whether the tool may run long (a task for clients that declared
    /// tasks; see `mcp_transport_core::handler`'s "Long-running work").
    pub fn execution(mut self, execution: Execution) -> Self {
        self.execution = execution;
        self
    }

    /// Publishes `schema` verbatim as the `inputSchema` in every revision,
    /// instead of the generated one (for keywords the argument type cannot
    /// express, such as `x-mcp-header`). The arguments still deserialize
    /// into the tool's type.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input = Schemas::verbatim(schema);
        self
    }

    /// The `Tool` definition on `revision`'s terms: the schemas in its
    /// dialect, `outputSchema` only where it exists and fits.
    pub fn definition(&self, rules: &ToolRules) -> Value {
        let mut t = json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input.get(rules.dialect),
        });
        if let Some(title) = &self.title {
            t["title"] = title.as_str().into();
        }
        if let Some(output) = &self.output
            && rules.structured
            && (output.is_object() || rules.structured_any)
        {
            t["outputSchema"] = output.get(rules.dialect).clone();
        }
        if let Some(a) = &self.annotations {
            t["annotations"] = a.clone();
        }
        t
    }

    /// Runs the tool with `arguments` (an object) on `cx`'s revision. The
    /// future is the tool's own (boxed once, its reply shaped for the
    /// revision when it ends), so a layer above can return it as it is.
    pub fn call(&self, arguments: Value, cx: RequestContext) -> BoxFuture<'static, Outcome> {
        (self.run)(Args::Value(arguments), ToolContext::new(cx))
    }
}

/// `CallToolRequest.params` (the members this layer reads), borrowed from
/// the request: the arguments go to the tool's type as their JSON text.
struct CallParams<'a> {
    name: Cow<'a, str>,
    /// `None` when absent or `null`.
    arguments: Option<&'a str>,
}

impl<'a> CallParams<'a> {
    /// Reads `name` and `arguments` as `CallToolRequest`'s schema has them
    /// (a string `name`, each member at most once). The params were
    /// validated with the request's envelope (they are a `RawValue`), so
    /// they are walked, not parsed again (`json_members`), or, when the
    /// transport left its index of these very params in the context
    /// ([`RequestContext::params_index`]), not even walked; the other
    /// members are skipped unread.
    fn read(
        params: Option<&'a RawValue>,
        index: Option<&'a ObjectIndex>,
    ) -> Result<CallParams<'a>, String> {
        match (index, params.map(Valid::from)) {
            (Some(index), _) => Self::from_members(index.members()),
            (None, None) => Self::from_members(std::iter::empty()),
            (None, Some(p)) => {
                Self::from_members(p.object().ok_or("tools/call params must be an object")?)
            }
        }
    }

    fn from_members(members: impl Iterator<Item = Member<'a>>) -> Result<CallParams<'a>, String> {
        let (mut name, mut arguments) = (None, None);
        for m in members {
            let slot = if m.is("name") {
                &mut name
            } else if m.is("arguments") {
                &mut arguments
            } else {
                continue;
            };
            if slot.replace(m.value()).is_some() {
                return Err(format!("tools/call params name `{}` twice", m.name()));
            }
        }
        let name = name
            .ok_or("tools/call params have no `name`")?
            .as_str()
            .ok_or("the tools/call `name` must be a string")?;
        Ok(CallParams {
            name,
            arguments: arguments.map(Valid::text).filter(|a| *a != "null"),
        })
    }
}

/// A future that is ready with `outcome`.
fn ready(outcome: Outcome) -> BoxFuture<'static, Outcome> {
    Box::pin(std::future::ready(outcome))
}

/// A registry of typed tools (and prompts and resources). It is a
/// [`Handler`]: `tools/list` lists the tools in registration order on the
/// request's revision's terms, `tools/call` runs one; once a prompt is
/// registered `prompts/list` and `prompts/get` are answered here, once a
/// resource is `resources/list` and `resources/read`; every other method
/// goes to the [`fallback`](Tools::fallback) handler (or is `-32601`).
///
/// ```
/// use mcp_tools::{Json, Tools};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs { a: f64, b: f64 }
///
/// #[derive(Serialize, JsonSchema)]
/// struct Sum { sum: f64 }
///
/// let tools = Tools::new()
///     .tool("add", "Adds two numbers", |args: AddArgs, _cx| async move {
///         Json(Sum { sum: args.a + args.b })
///     });
/// assert_eq!(tools.names().collect::<Vec<_>>(), ["add"]);
/// ```
#[derive(Default)]
pub struct Tools {
    tools: Vec<Tool>,
    /// Positions in `tools` by name. Fx-hashed, not SipHash: the keys are
    /// the names this server registered, so no client can choose them
    /// (a lookup of a client's name inserts nothing), and each
    /// `tools/call` looks its tool up at least once (measured: ~250
    /// instructions a lookup with SipHash on a three-letter name).
    index: FxHashMap<String, usize>,
    prompts: Vec<Prompt>,
    resources: Vec<Resource>,
    description: Option<ServerDescription>,
    fallback: Option<Arc<dyn Handler>>,
}

impl fmt::Debug for Tools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tools")
            .field("tools", &self.tools)
            .field("prompts", &self.prompts)
            .field("resources", &self.resources)
            .field("fallback", &self.fallback.is_some())
            .finish_non_exhaustive()
    }
}

impl Tools {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a tool (see [`Tool::new`]).
    pub fn tool<A, R, F, Fut>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoToolResult,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        self.register(Tool::new(name, description, f))
    }

    /// Registers a built [`Tool`].
    ///
    /// # Panics
    /// When the name is taken, or the input schema's root is not
    /// `type: "object"` (*Tools*, "Tool": `inputSchema` is an object schema
    /// in every revision; take a struct, or [`NoArgs`](crate::NoArgs)).
    pub fn register(mut self, tool: Tool) -> Self {
        assert!(
            tool.input.is_object(),
            "tool {}: the input schema must be an object schema (arguments are a JSON object)",
            tool.name
        );
        let i = self.tools.len();
        assert!(
            self.index.insert(tool.name.clone(), i).is_none(),
            "tool {} registered twice",
            tool.name
        );
        self.tools.push(tool);
        self
    }

    /// Registers a prompt (see [`Prompt::new`]).
    pub fn prompt<A, R, F, Fut>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoPrompt,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        self.register_prompt(Prompt::new(name, description, f))
    }

    /// Registers a built [`Prompt`].
    ///
    /// # Panics
    /// When the name is taken.
    pub fn register_prompt(mut self, prompt: Prompt) -> Self {
        assert!(
            self.prompts.iter().all(|p| p.name() != prompt.name()),
            "prompt {} registered twice",
            prompt.name()
        );
        self.prompts.push(prompt);
        self
    }

    /// Registers a [`Resource`].
    ///
    /// # Panics
    /// When the URI is taken.
    pub fn resource(mut self, resource: Resource) -> Self {
        assert!(
            self.resources.iter().all(|r| r.uri() != resource.uri()),
            "resource {} registered twice",
            resource.uri()
        );
        self.resources.push(resource);
        self
    }

    /// What `initialize`/`server/discover` say; the `tools` capability is
    /// added when missing (and `prompts`/`resources` when one is
    /// registered). Default: the fallback's description, else a
    /// minimal one naming this crate.
    pub fn describe_as(mut self, description: ServerDescription) -> Self {
        self.description = Some(description);
        self
    }

    /// The handler for every method but `tools/list` and `tools/call`
    /// (prompts, resources, ...).
    pub fn fallback(mut self, handler: Arc<dyn Handler>) -> Self {
        self.fallback = Some(handler);
        self
    }

    /// The tool names, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// How the tool named `name` runs ([`Tool::execution`]), `None` when no
    /// tool has that name: for a handler in front of this registry that has
    /// read the name already ([`Handler::execution`] reads it again).
    pub fn execution_of(&self, name: &str) -> Option<Execution> {
        self.get(name).map(|t| t.execution)
    }

    /// The `Tool` definitions on `cx`'s revision's terms.
    pub fn list(&self, rules: &ToolRules) -> Vec<Value> {
        self.tools.iter().map(|t| t.definition(rules)).collect()
    }

    /// Answers a `tools/call` with these params. Protocol errors (*Tools*,
    /// "Error Handling") are `-32602` in every revision: an unknown tool
    /// ("Unknown tool: NAME", the spec's example), and params that fail
    /// `CallToolRequest`'s schema (no string `name`, `arguments` not an
    /// object). Arguments that fail the tool's type are reported per
    /// revision ([`ToolRules::invalid_arguments_are_tool_errors`]).
    ///
    /// The params are read before this returns; the future is the tool's
    /// own ([`Tool::call`]), or a ready answer.
    pub fn call(
        &self,
        params: Option<&RawValue>,
        cx: RequestContext,
    ) -> BoxFuture<'static, Outcome> {
        let index = cx.params_index(params).cloned();
        let p = match CallParams::read(params, index.as_deref()) {
            Ok(p) => p,
            Err(e) => return ready(Outcome::Error(ErrorObject::invalid_params(e))),
        };
        let Some(tool) = self.get(&p.name) else {
            return ready(Outcome::Error(ErrorObject::new(
                INVALID_PARAMS,
                format!("Unknown tool: {}", p.name),
            )));
        };
        Self::run(tool, &p, cx)
    }

    /// [`Self::call`] when these params name a tool of this registry;
    /// otherwise (an unknown name, params that do not read as
    /// `CallToolRequest`'s) `cx` is handed back untouched (boxed), for a handler
    /// that serves other tools besides these to go on with, having read
    /// the params once.
    pub fn try_call(
        &self,
        params: Option<&RawValue>,
        cx: RequestContext,
    ) -> Result<BoxFuture<'static, Outcome>, Box<RequestContext>> {
        // Boxed on the way back only: a miss is the rare path, and the
        // result stays two words wide on the common one. The index is
        // shared with `cx` (which the tool takes), so `p` borrows a clone.
        let index = cx.params_index(params).cloned();
        let Ok(p) = CallParams::read(params, index.as_deref()) else {
            return Err(Box::new(cx));
        };
        match self.get(&p.name) {
            Some(tool) => Ok(Self::run(tool, &p, cx)),
            None => Err(Box::new(cx)),
        }
    }

    /// Runs `tool` with the arguments of `p`.
    fn run(tool: &Tool, p: &CallParams<'_>, cx: RequestContext) -> BoxFuture<'static, Outcome> {
        // `arguments` absent or `null` is `{}`; anything else but an object
        // fails `CallToolRequest`'s schema.
        let arguments = match p.arguments {
            None => "{}",
            Some(a) if a.starts_with('{') => a,
            Some(_) => {
                return ready(Outcome::Error(ErrorObject::invalid_params(
                    "tools/call arguments must be an object",
                )));
            }
        };
        (tool.run)(Args::Text(arguments), ToolContext::new(cx))
    }

    /// Answers a `prompts/get` (*Prompts*, "Error Handling": an unknown
    /// name and missing or invalid arguments are `-32602`).
    async fn get_prompt(&self, params: Option<&str>, cx: RequestContext) -> Outcome {
        #[derive(Deserialize)]
        struct GetParams {
            name: String,
            #[serde(default)]
            arguments: Option<Map<String, Value>>,
        }
        let found = lookup(
            params,
            |p: &GetParams| self.prompts.iter().find(|x| x.name() == p.name),
            |p| ErrorObject::new(INVALID_PARAMS, format!("Invalid prompt name: {}", p.name)),
        );
        let (p, prompt) = match found {
            Ok(found) => found,
            Err(e) => return Outcome::Error(e),
        };
        match prompt
            .get(p.arguments.unwrap_or_default(), ToolContext::new(cx))
            .await
        {
            Ok(result) => Outcome::json(&result),
            Err(e) => Outcome::Error(e),
        }
    }

    /// Answers a `resources/read`; an unknown URI is
    /// [`resource_not_found`] on the request's revision's terms.
    async fn read(&self, params: Option<&str>, cx: RequestContext) -> Outcome {
        #[derive(Deserialize)]
        struct ReadParams {
            uri: String,
        }
        let found = lookup(
            params,
            |p: &ReadParams| self.resources.iter().find(|r| r.uri() == p.uri),
            |p| resource_not_found(&p.uri, &cx.revision),
        );
        let resource = match found {
            Ok((_, resource)) => resource,
            Err(e) => return Outcome::Error(e),
        };
        match resource.read(ToolContext::new(cx)).await {
            Ok(result) => Outcome::json(&result),
            Err(e) => Outcome::Error(e),
        }
    }

    /// The name of the tool a `tools/call` names, when it is one of these.
    fn called<'a>(&'a self, request: &Request) -> Option<&'a Tool> {
        if request.method != "tools/call" {
            return None;
        }
        let p = CallParams::read(request.params.as_deref(), None).ok()?;
        self.get(&p.name)
    }
}

#[async_trait]
impl Handler for Tools {
    fn describe(&self) -> ServerDescription {
        let mut d = self
            .description
            .clone()
            .or_else(|| self.fallback.as_ref().map(|f| f.describe()))
            .unwrap_or_else(|| ServerDescription {
                info: json!({ "name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION") }),
                capabilities: json!({}),
                instructions: None,
            });
        if let Value::Object(caps) = &mut d.capabilities {
            caps.entry("tools").or_insert_with(|| json!({}));
            if !self.prompts.is_empty() {
                caps.entry("prompts").or_insert_with(|| json!({}));
            }
            if !self.resources.is_empty() {
                caps.entry("resources").or_insert_with(|| json!({}));
            }
        }
        d
    }

    /// Written out rather than `async`: a `tools/call` is the tool's own
    /// future and anything for the fallback is the fallback's, each
    /// returned as it is, so a pending call holds no future of this layer
    /// (an `async` one held the request, its context and the tool's
    /// future pointer: ~1.1 KB per pending call).
    fn handle<'life0, 'async_trait>(
        &'life0 self,
        request: Request,
        cx: RequestContext,
    ) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        match request.method.as_str() {
            "tools/list" => {
                let rules = ToolRules::of(&cx.revision);
                ready(Outcome::json(&json!({ "tools": self.list(&rules) })))
            }
            "tools/call" => self.call(request.params.as_deref(), cx),
            "prompts/list" if !self.prompts.is_empty() => {
                let prompts: Vec<Value> = self.prompts.iter().map(Prompt::definition).collect();
                ready(Outcome::json(&json!({ "prompts": prompts })))
            }
            "prompts/get" if !self.prompts.is_empty() => Box::pin(async move {
                let params = request.params.as_deref().map(|p| p.get());
                self.get_prompt(params, cx).await
            }),
            "resources/list" if !self.resources.is_empty() => {
                let resources: Vec<Value> =
                    self.resources.iter().map(Resource::definition).collect();
                ready(Outcome::json(&json!({ "resources": resources })))
            }
            "resources/read" if !self.resources.is_empty() => Box::pin(async move {
                let params = request.params.as_deref().map(|p| p.get());
                self.read(params, cx).await
            }),
            _ => match &self.fallback {
                Some(f) => f.handle(request, cx),
                None => ready(Outcome::Error(ErrorObject::method_not_found(
                    &request.method,
                ))),
            },
        }
    }

    /// The called tool's [`Tool::execution`]; the fallback's for anything
    /// else.
    fn execution(&self, request: &Request) -> Execution {
        match (self.called(request), &self.fallback) {
            (Some(tool), _) => tool.execution,
            (None, Some(f)) => f.execution(request),
            (None, None) => Execution::Immediate,
        }
    }

    /// The named tool's [`Tool::execution`], read without the params; the
    /// fallback's for a name not registered.
    fn tool_execution(&self, name: &str, request: &Request) -> Execution {
        match (self.get(name), &self.fallback) {
            (Some(tool), _) => tool.execution,
            (None, Some(f)) => f.tool_execution(name, request),
            (None, None) => Execution::Immediate,
        }
    }

    async fn notification(&self, notification: Notification) {
        if let Some(f) = &self.fallback {
            f.notification(notification).await;
        }
    }
}
