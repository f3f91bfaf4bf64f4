//! The reference handler: the tools `mcp-compat serve` offers, written once
//! against the era-independent [`Handler`] API and served in every revision.
//!
//! | tool | arguments | behaviour |
//! | --- | --- | --- |
//! | `echo` | `{text}` | answers the text |
//! | `add` | `{a, b}` | answers the sum, as text |
//! | `countdown` | `{n, interval_ms}` | sends `n` progress notifications (when the request has a progress token) and `n` log messages, one every interval, then answers `done` |
//! | `slow` | `{ms}` | answers after `ms` unless cancelled; long-running ([`Execution::MayBeLong`]): a task for clients that declare tasks, a held stream for the others |
//! | `cancelled_count` | `{}` | how many requests have been cancelled so far |
//! | `close_stream` | `{ms}` | closes its SSE connection (SEP-1699, where the revision has it), waits `ms`, sends a log message, answers `resumed` |
//! | `ask_name` | `{}` | asks the client for input (an elicitation) and answers with what came back |
//! | `slow_ask` | `{ms}` | long-running ([`Execution::MayBeLong`]): works `ms`, asks the client's name (an elicitation; inside a task, the task's `inputRequests`), works `ms` more, answers `hello, NAME` |

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use mcp_transport_core::handler::{
    Execution, Handler, InputRequest, InputRequired, LogLevel, Outcome, RequestContext,
    ServerDescription,
};
use mcp_transport_core::jsonrpc::{ErrorObject, Request, to_raw};
use serde::Deserialize;
use serde_json::{Value, json};

/// The reference tool set (see the module docs).
#[derive(Debug, Default)]
pub struct ReferenceHandler {
    cancelled: Arc<AtomicU64>,
}

impl ReferenceHandler {
    /// A new handler with a zero cancellation count.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many requests have been cancelled so far.
    pub fn cancelled_count(&self) -> u64 {
        self.cancelled.load(Ordering::SeqCst)
    }
}

fn text(s: impl Into<String>) -> Outcome {
    Outcome::json(&json!({ "content": [{ "type": "text", "text": s.into() }] }))
}

fn tool_error(s: impl Into<String>) -> Outcome {
    Outcome::json(&json!({ "content": [{ "type": "text", "text": s.into() }], "isError": true }))
}

fn tools() -> Value {
    let obj = |props: Value, required: &[&str]| json!({ "type": "object", "properties": props, "required": required });
    json!({ "tools": [
        { "name": "echo", "description": "Answers the text.",
          "inputSchema": obj(json!({"text": {"type": "string"}}), &["text"]) },
        { "name": "add", "description": "Answers a + b as text.",
          "inputSchema": obj(json!({"a": {"type": "number"}, "b": {"type": "number"}}), &["a", "b"]) },
        { "name": "countdown", "description": "Sends n progress and log notifications, one every interval_ms, then answers done.",
          "inputSchema": obj(json!({"n": {"type": "integer"}, "interval_ms": {"type": "integer"}}), &["n"]) },
        { "name": "slow", "description": "Answers after ms milliseconds unless cancelled.",
          "inputSchema": obj(json!({"ms": {"type": "integer"}}), &["ms"]) },
        { "name": "cancelled_count", "description": "How many requests have been cancelled so far.",
          "inputSchema": obj(json!({}), &[]) },
        { "name": "close_stream", "description": "Closes its SSE connection mid-call (SEP-1699), then answers.",
          "inputSchema": obj(json!({"ms": {"type": "integer"}}), &[]) },
        { "name": "ask_name", "description": "Asks the client for a name by elicitation and answers with it.",
          "inputSchema": obj(json!({}), &[]) },
        { "name": "slow_ask", "description": "Works ms, asks the client for a name by elicitation, works ms more, answers with it; long-running (a task for clients that declare tasks).",
          "inputSchema": obj(json!({"ms": {"type": "integer"}}), &[]) },
    ]})
}

#[derive(Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// Upper bound for `slow`, `countdown` and `close_stream` waits, so a client
/// cannot park a request for ever.
const MAX_WAIT_MS: u64 = 10 * 60 * 1000;
/// Upper bound for `countdown`'s `n`.
const MAX_COUNT: u64 = 10_000;

fn arg_u64(args: &Value, key: &str, default: Option<u64>) -> Result<u64, String> {
    match args.get(key) {
        Some(v) => v
            .as_u64()
            .ok_or_else(|| format!("argument {key} must be a non-negative integer")),
        None => default.ok_or_else(|| format!("missing argument {key}")),
    }
}

impl ReferenceHandler {
    async fn call(&self, p: CallParams, cx: &RequestContext) -> Outcome {
        let a = &p.arguments;
        match p.name.as_str() {
            "echo" => match a.get("text").and_then(Value::as_str) {
                Some(t) => text(t),
                None => tool_error("missing string argument text"),
            },
            "add" => match (
                a.get("a").and_then(Value::as_f64),
                a.get("b").and_then(Value::as_f64),
            ) {
                (Some(x), Some(y)) => {
                    let sum = x + y;
                    if sum.fract() == 0.0 && sum.abs() < 9.0e15 {
                        text(format!("{}", sum as i64))
                    } else {
                        text(format!("{sum}"))
                    }
                }
                _ => tool_error("arguments a and b must be numbers"),
            },
            "countdown" => {
                let (n, interval) =
                    match (arg_u64(a, "n", None), arg_u64(a, "interval_ms", Some(10))) {
                        (Ok(n), Ok(i)) if n <= MAX_COUNT && i <= MAX_WAIT_MS => (n, i),
                        (Err(e), _) | (_, Err(e)) => return tool_error(e),
                        _ => return tool_error(format!("n must be <= {MAX_COUNT}")),
                    };
                for i in 1..=n {
                    if self.wait(cx, interval).await.is_err() {
                        return self.was_cancelled();
                    }
                    let left = n - i;
                    let _ = cx
                        .progress(i as f64, Some(n as f64), Some(&format!("{left} left")))
                        .await;
                    let _ = cx
                        .log(
                            LogLevel::Info,
                            Some("countdown"),
                            json!(format!("{left} left")),
                        )
                        .await;
                }
                text("done")
            }
            "slow" => match arg_u64(a, "ms", None) {
                Ok(ms) if ms <= MAX_WAIT_MS => match self.wait(cx, ms).await {
                    Ok(()) => text(format!("slept {ms} ms")),
                    Err(()) => self.was_cancelled(),
                },
                Ok(_) => tool_error(format!("ms must be <= {MAX_WAIT_MS}")),
                Err(e) => tool_error(e),
            },
            "cancelled_count" => text(self.cancelled_count().to_string()),
            "close_stream" => {
                let ms = match arg_u64(a, "ms", Some(100)) {
                    Ok(ms) if ms <= MAX_WAIT_MS => ms,
                    _ => return tool_error(format!("ms must be an integer <= {MAX_WAIT_MS}")),
                };
                let _ = cx
                    .log(LogLevel::Info, Some("close_stream"), json!("before close"))
                    .await;
                let closed = cx.close_sse_stream();
                if self.wait(cx, ms).await.is_err() {
                    return self.was_cancelled();
                }
                let _ = cx
                    .log(LogLevel::Info, Some("close_stream"), json!("after close"))
                    .await;
                text(if closed { "resumed" } else { "not closed" })
            }
            "ask_name" => self.ask_name(cx),
            "slow_ask" => {
                let ms = match arg_u64(a, "ms", Some(100)) {
                    Ok(ms) if ms <= MAX_WAIT_MS => ms,
                    _ => return tool_error(format!("ms must be an integer <= {MAX_WAIT_MS}")),
                };
                // Work before the question (first round) and after the
                // answer (second round).
                if self.wait(cx, ms).await.is_err() {
                    return self.was_cancelled();
                }
                self.ask_name(cx)
            }
            other => Outcome::Error(ErrorObject::invalid_params(format!("unknown tool {other}"))),
        }
    }

    fn ask_name(&self, cx: &RequestContext) -> Outcome {
        if let Some(answer) = cx.input_responses.as_ref().and_then(|r| r.get("name")) {
            let v: Value = serde_json::from_str(answer.get()).unwrap_or(Value::Null);
            return match (
                v.get("action").and_then(Value::as_str),
                v.pointer("/content/name"),
            ) {
                (Some("accept"), Some(Value::String(n))) => text(format!("hello, {n}")),
                (Some(action), _) => text(format!("no name ({action})")),
                _ => tool_error("malformed elicitation result"),
            };
        }
        let params = json!({
            "message": "What is your name?",
            "requestedSchema": { "type": "object",
                "properties": { "name": { "type": "string" } }, "required": ["name"] }
        });
        let mut requests = std::collections::BTreeMap::new();
        requests.insert(
            "name".to_owned(),
            InputRequest {
                method: "elicitation/create".into(),
                params: to_raw(&params).ok(),
            },
        );
        Outcome::InputRequired(InputRequired {
            requests,
            state: None,
        })
    }

    /// Sleeps `ms` unless the request is cancelled first.
    async fn wait(&self, cx: &RequestContext, ms: u64) -> Result<(), ()> {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(()),
            _ = cx.cancelled() => Err(()),
        }
    }

    fn was_cancelled(&self) -> Outcome {
        self.cancelled.fetch_add(1, Ordering::SeqCst);
        Outcome::Error(ErrorObject::new(-32800, "Request cancelled"))
    }
}

#[async_trait]
impl Handler for ReferenceHandler {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "mcp-compat", "version": env!("CARGO_PKG_VERSION") }),
            capabilities: json!({ "tools": { "listChanged": true }, "logging": {} }),
            instructions: None,
        }
    }

    /// `slow` and `slow_ask` may be long; every other tool answers at once.
    fn execution(&self, request: &Request) -> Execution {
        let name = request
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str::<CallParams>(p.get()).ok())
            .map(|p| p.name);
        match name.as_deref() {
            Some("slow" | "slow_ask") if request.method == "tools/call" => Execution::MayBeLong,
            _ => Execution::Immediate,
        }
    }

    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome {
        match request.method.as_str() {
            "tools/list" => Outcome::json(&tools()),
            "tools/call" => {
                let params = request.params.as_deref().map(|p| p.get()).unwrap_or("{}");
                match serde_json::from_str::<CallParams>(params) {
                    Ok(p) => self.call(p, &cx).await,
                    Err(e) => Outcome::Error(ErrorObject::invalid_params(e)),
                }
            }
            other => Outcome::Error(ErrorObject::method_not_found(other)),
        }
    }
}
