//! One configurable MCP [`Handler`] for the server tests.
//!
//! A [`TestHandler`] answers `tools/call` from a table of tools and any
//! other method from a table of method handlers, and counts what happened
//! ([`Stats`], reachable through the handler: `handler.cancellations`).
//! The tools the suites share are in [`tools`] (each with its options);
//! a suite adds its own tools as closures ([`tool_fn`]).
//!
//! ```
//! use mcp_test_support::handler::{TestHandler, tools};
//!
//! let handler = TestHandler::builder("my-tests")
//!     .tool("echo", tools::echo_text())
//!     .tool("slow", tools::slow(1000))
//!     .build();
//! assert_eq!(handler.describe_name(), "my-tests");
//! ```

use std::collections::BTreeMap;
use std::future::Future;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures_util::future::BoxFuture;
use mcp_transport_core::handler::{Handler, Outcome, RequestContext, ServerDescription};
use mcp_transport_core::jsonrpc::{ErrorObject, Notification, Request};
use serde_json::{Value, json};

/// What a [`TestHandler`] saw: counters the tests assert on.
#[derive(Debug, Default)]
pub struct Stats {
    /// `tools/call` requests that started.
    pub started: AtomicUsize,
    /// `tools/call` requests that answered with a result.
    pub completions: AtomicUsize,
    /// Requests (`slow`, `countdown`) that saw their cancellation.
    pub cancellations: AtomicUsize,
    /// When each cancellation was seen (real time).
    pub cancelled_at: Mutex<Vec<std::time::Instant>>,
    /// Ticks `countdown` has sent.
    pub ticks: AtomicUsize,
    /// Rounds of an input-asking tool (1 = asked, 2 = answered).
    pub ask_rounds: AtomicUsize,
    /// Calls of `tools/list`.
    pub tools_list_calls: AtomicUsize,
    /// Methods of the notifications the transport passed on, in order.
    pub notifications: Mutex<Vec<String>>,
    /// Errors a tool got when sending (for tools that expect a refusal).
    pub refusals: Mutex<Vec<String>>,
    /// A switch a test flips to change a tool's behaviour mid-test.
    pub switch: AtomicBool,
}

impl Stats {
    /// Counts a cancellation seen now.
    pub fn cancelled(&self) {
        self.cancellations.fetch_add(1, Ordering::SeqCst);
        self.cancelled_at
            .lock()
            .unwrap()
            .push(std::time::Instant::now());
    }
}

/// One `tools/call` as a tool sees it.
pub struct Call {
    /// The tool's `arguments` (`{}` when absent).
    pub args: Value,
    /// The request's context.
    pub cx: RequestContext,
    /// The handler's counters.
    pub stats: Arc<Stats>,
}

impl Call {
    /// An integer argument, `default` when absent.
    pub fn arg(&self, key: &str, default: u64) -> u64 {
        self.args
            .get(key)
            .and_then(Value::as_u64)
            .unwrap_or(default)
    }
}

/// A tool: answers one [`Call`].
pub type Tool = Arc<dyn Fn(Call) -> BoxFuture<'static, Outcome> + Send + Sync>;

/// A method other than `tools/call`: answers its params.
pub type Method =
    Arc<dyn Fn(Value, RequestContext, Arc<Stats>) -> BoxFuture<'static, Outcome> + Send + Sync>;

/// A [`Tool`] from an async closure.
pub fn tool_fn<F, Fut>(f: F) -> Tool
where
    F: Fn(Call) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    Arc::new(move |call| Box::pin(f(call)))
}

/// A [`Method`] from an async closure.
pub fn method_fn<F, Fut>(f: F) -> Method
where
    F: Fn(Value, RequestContext, Arc<Stats>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    Arc::new(move |params, cx, stats| Box::pin(f(params, cx, stats)))
}

/// Wraps a tool's JSON result as a `CallToolResult`: the JSON as text
/// content and as `structuredContent`.
pub fn structured(v: &Value) -> Value {
    json!({"content": [{"type": "text", "text": v.to_string()}], "structuredContent": v})
}

/// The test handler: see the [module documentation](self).
pub struct TestHandler {
    stats: Arc<Stats>,
    description: ServerDescription,
    tools: BTreeMap<String, Tool>,
    methods: BTreeMap<String, Method>,
    structured: bool,
}

impl Deref for TestHandler {
    type Target = Stats;

    fn deref(&self) -> &Stats {
        &self.stats
    }
}

impl TestHandler {
    /// A handler describing itself as `name` (version `0.0.1`, capabilities
    /// `tools` and `logging`, no instructions), with no tools yet.
    pub fn builder(name: &str) -> TestHandlerBuilder {
        TestHandlerBuilder {
            handler: TestHandler {
                stats: Arc::default(),
                description: ServerDescription {
                    info: json!({"name": name, "version": "0.0.1"}),
                    capabilities: json!({"tools": {}, "logging": {}}),
                    instructions: None,
                },
                tools: BTreeMap::new(),
                methods: BTreeMap::new(),
                structured: false,
            },
        }
    }

    /// The counters, to share with something that outlives the handler.
    pub fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    /// The name the handler describes itself with.
    pub fn describe_name(&self) -> &str {
        self.description.info["name"].as_str().unwrap_or("")
    }

    async fn call_tool(&self, params: Value, cx: RequestContext) -> Outcome {
        self.stats.started.fetch_add(1, Ordering::SeqCst);
        let name = params["name"].as_str().unwrap_or("");
        let Some(tool) = self.tools.get(name) else {
            return Outcome::Error(ErrorObject::invalid_params(format!("unknown tool {name}")));
        };
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        let outcome = tool(Call {
            args,
            cx,
            stats: self.stats.clone(),
        })
        .await;
        let Outcome::Result(raw) = outcome else {
            return outcome;
        };
        self.stats.completions.fetch_add(1, Ordering::SeqCst);
        if !self.structured {
            return Outcome::Result(raw);
        }
        let v: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
        Outcome::json(&structured(&v))
    }
}

/// Builds a [`TestHandler`].
#[must_use]
pub struct TestHandlerBuilder {
    handler: TestHandler,
}

impl TestHandlerBuilder {
    /// The version in its `serverInfo`.
    pub fn version(mut self, version: &str) -> Self {
        self.handler.description.info["version"] = Value::from(version);
        self
    }

    /// The `capabilities` it declares.
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.handler.description.capabilities = capabilities;
        self
    }

    /// The `instructions` it gives.
    pub fn instructions(mut self, instructions: &str) -> Self {
        self.handler.description.instructions = Some(instructions.to_owned());
        self
    }

    /// Adds (or replaces) a tool.
    pub fn tool(mut self, name: &str, tool: Tool) -> Self {
        self.handler.tools.insert(name.to_owned(), tool);
        self
    }

    /// The tools of the session revisions' end-to-end suites:
    /// `echo` ([`tools::echo_text`]), `countdown` ([`tools::countdown`]) and
    /// `slow` ([`tools::slow`], 1 s by default).
    pub fn streaming_tools(self) -> Self {
        self.tool("echo", tools::echo_text())
            .tool("countdown", tools::countdown())
            .tool("slow", tools::slow(1000))
    }

    /// Answers `method` (anything but `tools/call`) with `handler`.
    pub fn method(mut self, name: &str, handler: Method) -> Self {
        self.handler.methods.insert(name.to_owned(), handler);
        self
    }

    /// Wraps every tool result with [`structured`] (what the tools of the
    /// 2026-07-28 tests answer).
    pub fn structured_results(mut self) -> Self {
        self.handler.structured = true;
        self
    }

    /// The handler.
    pub fn build(self) -> TestHandler {
        self.handler
    }
}

#[async_trait]
impl Handler for TestHandler {
    fn describe(&self) -> ServerDescription {
        self.description.clone()
    }

    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome {
        let params: Value = request
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        if request.method == "tools/call" {
            return self.call_tool(params, cx).await;
        }
        match self.methods.get(&request.method) {
            Some(method) => method(params, cx, self.stats.clone()).await,
            None => Outcome::Error(ErrorObject::method_not_found(&request.method)),
        }
    }

    async fn notification(&self, notification: Notification) {
        self.stats
            .notifications
            .lock()
            .unwrap()
            .push(notification.method);
    }
}

/// The tools the suites share.
pub mod tools {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use mcp_transport_core::handler::{InputRequest, InputRequired, LogLevel, Outcome};
    use mcp_transport_core::jsonrpc::{ErrorObject, to_raw};
    use serde_json::{Value, json};

    use super::{Call, Tool, tool_fn};

    /// `echo {text}`: answers `{"text": text}`.
    pub fn echo_text() -> Tool {
        tool_fn(|c: Call| async move { Outcome::json(&json!({ "text": c.args["text"] })) })
    }

    /// `echo {..}`: answers its arguments.
    pub fn echo() -> Tool {
        tool_fn(|c: Call| async move { Outcome::json(&c.args) })
    }

    /// `countdown {n = 3, interval_ms = 10}`: `n` times, waits, then sends
    /// `notifications/progress` (`i`/`n`, with a token) and
    /// `notifications/message` `{"tick": i}`; answers `{"done": n}`.
    /// Cancellation ends it with an error (counted). See
    /// [`countdown_expected`](crate::client::countdown_expected).
    pub fn countdown() -> Tool {
        tool_fn(|c: Call| async move {
            let n = c.arg("n", 3);
            let interval = c.arg("interval_ms", 10);
            for i in 1..=n {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(interval)) => {}
                    () = c.cx.cancelled() => {
                        c.stats.cancelled();
                        return Outcome::Error(ErrorObject::internal("cancelled"));
                    }
                }
                let _ =
                    c.cx.progress(i as f64, Some(n as f64), Some(&format!("{} left", n - i)))
                        .await;
                let _ =
                    c.cx.log(LogLevel::Info, Some("countdown"), json!({ "tick": i }))
                        .await;
                c.stats
                    .ticks
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Outcome::json(&json!({ "done": n }))
        })
    }

    /// `slow {ms = default_ms}`: answers `{"slept": ms}` after `ms` unless
    /// cancelled first (counted, answered with an error).
    pub fn slow(default_ms: u64) -> Tool {
        slow_tool(default_ms, false)
    }

    /// [`slow`], but first sends `notifications/progress` `0` ("started"),
    /// so the client has the response head and a stream to close.
    pub fn slow_announced(default_ms: u64) -> Tool {
        slow_tool(default_ms, true)
    }

    fn slow_tool(default_ms: u64, announce: bool) -> Tool {
        tool_fn(move |c: Call| async move {
            let ms = c.arg("ms", default_ms);
            if announce {
                let _ = c.cx.progress(0.0, None, Some("started")).await;
            }
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => {
                    Outcome::json(&json!({ "slept": ms }))
                }
                () = c.cx.cancelled() => {
                    c.stats.cancelled();
                    Outcome::Error(ErrorObject::internal("cancelled"))
                }
            }
        })
    }

    /// How [`close_stream`] behaves.
    #[derive(Clone, Debug)]
    pub struct CloseStream {
        /// The logger name of its log messages.
        pub logger: Option<&'static str>,
        /// The data logged before the close, if any.
        pub before: Option<Value>,
        /// The argument naming how long to wait after the close (ms).
        pub wait_arg: &'static str,
        /// The wait when the argument is absent (ms).
        pub default_ms: u64,
        /// The data logged after the wait, in order.
        pub after: Vec<Value>,
    }

    /// `close_stream`: logs `before`, closes the request's SSE stream
    /// (`close_sse_stream()`), waits, logs each of `after`; answers
    /// `{"closed": bool}`.
    pub fn close_stream(how: CloseStream) -> Tool {
        tool_fn(move |c: Call| {
            let how = how.clone();
            async move {
                let log = |data: Value| c.cx.log(LogLevel::Info, how.logger, data);
                if let Some(before) = how.before.clone() {
                    let _ = log(before).await;
                }
                let closed = c.cx.close_sse_stream();
                let ms = c.arg(how.wait_arg, how.default_ms);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                for data in how.after.iter().cloned() {
                    let _ = log(data).await;
                }
                Outcome::json(&json!({ "closed": closed }))
            }
        })
    }

    /// How [`ask`] behaves.
    #[derive(Clone, Debug)]
    pub struct Ask {
        /// The key of its one input request.
        pub key: &'static str,
        /// The method asked (`elicitation/create`, `sampling/createMessage`,
        /// ...).
        pub method: &'static str,
        /// The params of the input request.
        pub params: Value,
        /// The `requestState` sent with the input request.
        pub state: Option<&'static str>,
        /// Whether the answer repeats the `requestState` that came back.
        pub answer_state: bool,
    }

    impl Ask {
        /// An elicitation (`elicitation/create`) with `params`, keyed `key`,
        /// without state.
        pub fn elicitation(key: &'static str, params: Value) -> Ask {
            Ask {
                key,
                method: "elicitation/create",
                params,
                state: None,
                answer_state: false,
            }
        }

        /// A sampling request (`sampling/createMessage`) with `params`,
        /// keyed `key`, without state.
        pub fn sampling(key: &'static str, params: Value) -> Ask {
            Ask {
                method: "sampling/createMessage",
                ..Ask::elicitation(key, params)
            }
        }

        /// Sends `state` as `requestState` and repeats what comes back in
        /// the answer.
        pub fn with_state(self, state: &'static str) -> Ask {
            Ask {
                state: Some(state),
                answer_state: true,
                ..self
            }
        }
    }

    /// A tool that asks the client one thing through
    /// `Outcome::InputRequired` (rounds counted), then answers
    /// `{"answer": <what came back>}` (and `"state"` when asked to).
    pub fn ask(how: Ask) -> Tool {
        tool_fn(move |c: Call| {
            let how = how.clone();
            async move {
                c.stats
                    .ask_rounds
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if let Some(answers) = c.cx.input_responses() {
                    let answer: Value = answers
                        .get(how.key)
                        .and_then(|a| serde_json::from_str(a.get()).ok())
                        .unwrap_or(Value::Null);
                    return if how.answer_state {
                        Outcome::json(&json!({ "answer": answer, "state": c.cx.request_state() }))
                    } else {
                        Outcome::json(&json!({ "answer": answer }))
                    };
                }
                let mut requests = BTreeMap::new();
                requests.insert(
                    how.key.to_owned(),
                    InputRequest {
                        method: how.method.into(),
                        params: Some(to_raw(&how.params).expect("valid JSON")),
                    },
                );
                Outcome::InputRequired(InputRequired {
                    requests,
                    state: how.state.map(str::to_owned),
                })
            }
        })
    }
}
