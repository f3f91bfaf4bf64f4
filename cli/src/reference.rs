//! The reference handler: the tools `mcp-compat serve` offers, written once
//! on the typed tool layer ([`mcp_tools`]) over the era-independent
//! [`Handler`] API and served in every revision. Each tool's arguments are
//! a Rust type; `tools/list` carries the schemas generated from them, in
//! each revision's dialect, and bad arguments are reported as each
//! revision says (see [`mcp_tools::ToolRules`]).
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
use mcp_tools::{Elicitation, NoArgs, Tool, ToolContext, ToolError, Tools};
use mcp_transport_core::handler::{
    Execution, Handler, LogLevel, Outcome, RequestContext, ServerDescription,
};
use mcp_transport_core::jsonrpc::Request;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Upper bound for `slow`, `countdown` and `close_stream` waits, so a client
/// cannot park a request for ever.
const MAX_WAIT_MS: u64 = 10 * 60 * 1000;
/// Upper bound for `countdown`'s `n`.
const MAX_COUNT: u64 = 10_000;

/// The reference tool set (see the module docs).
#[derive(Debug)]
pub struct ReferenceHandler {
    cancelled: Arc<AtomicU64>,
    tools: Tools,
}

impl Default for ReferenceHandler {
    fn default() -> Self {
        Self::new()
    }
}

/// `echo`'s arguments.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to answer.
    text: String,
}

/// `add`'s arguments.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

/// `countdown`'s arguments.
#[derive(Deserialize, JsonSchema)]
struct CountdownArgs {
    /// How many steps (at most 10000).
    n: u64,
    /// Milliseconds between steps.
    #[serde(default = "ten")]
    interval_ms: u64,
}

/// `slow`'s arguments.
#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    /// How long to work, in milliseconds (at most ten minutes).
    ms: u64,
}

/// Arguments of the tools that wait a little (`close_stream`, `slow_ask`).
#[derive(Deserialize, JsonSchema)]
struct PauseArgs {
    /// How long to wait, in milliseconds (at most ten minutes).
    #[serde(default = "hundred")]
    ms: u64,
}

/// What `ask_name` elicits.
#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

fn ten() -> u64 {
    10
}

fn hundred() -> u64 {
    100
}

/// `ms`, or an invalid-arguments error when it is over [`MAX_WAIT_MS`].
fn bounded(ms: u64) -> Result<u64, ToolError> {
    if ms > MAX_WAIT_MS {
        return Err(ToolError::invalid_arguments(format!(
            "ms must be <= {MAX_WAIT_MS}"
        )));
    }
    Ok(ms)
}

/// Sleeps `ms` unless the request is cancelled first; a cancellation is
/// counted (`cancelled_count`).
async fn wait(count: &AtomicU64, cx: &ToolContext, ms: u64) -> Result<(), ToolError> {
    cx.sleep(Duration::from_millis(ms)).await.inspect_err(|_| {
        count.fetch_add(1, Ordering::SeqCst);
    })
}

/// Asks the client's name by elicitation; answers with it once it came.
fn ask_name(cx: &ToolContext) -> Result<String, ToolError> {
    Ok(match cx.elicit::<Name>("name", "What is your name?")? {
        Elicitation::Accept(n) => format!("hello, {}", n.name),
        Elicitation::Refused(action) => format!("no name ({action})"),
    })
}

fn tools(count: &Arc<AtomicU64>) -> Tools {
    let (c1, c2, c3, c4, c5) = (
        count.clone(),
        count.clone(),
        count.clone(),
        count.clone(),
        count.clone(),
    );
    Tools::new()
        .tool("echo", "Answers the text.", |a: EchoArgs, _cx| async move {
            a.text
        })
        .tool("add", "Answers a + b as text.", |a: AddArgs, _cx| async move {
            let sum = a.a + a.b;
            // `to_string`, not `format!`: integers have their own
            // `ToString`, ~300 instructions fewer than the formatting
            // machinery (the in-process count, docs/PERFORMANCE.md,
            // session 44).
            if sum.fract() == 0.0 && sum.abs() < 9.0e15 {
                (sum as i64).to_string()
            } else {
                sum.to_string()
            }
        })
        .tool(
            "countdown",
            "Sends n progress and log notifications, one every interval_ms, then answers done.",
            move |a: CountdownArgs, cx: ToolContext| {
                let count = c1.clone();
                async move {
                    if a.n > MAX_COUNT {
                        return Err(ToolError::invalid_arguments(format!(
                            "n must be <= {MAX_COUNT}"
                        )));
                    }
                    let interval = bounded(a.interval_ms)?;
                    for i in 1..=a.n {
                        wait(&count, &cx, interval).await?;
                        let left = a.n - i;
                        let _ = cx
                            .progress(i as f64, Some(a.n as f64), Some(&format!("{left} left")))
                            .await;
                        let _ = cx
                            .log(
                                LogLevel::Info,
                                Some("countdown"),
                                json!(format!("{left} left")),
                            )
                            .await;
                    }
                    Ok("done")
                }
            },
        )
        .register(
            Tool::new(
                "slow",
                "Answers after ms milliseconds unless cancelled.",
                move |a: SlowArgs, cx: ToolContext| {
                    let count = c2.clone();
                    async move {
                        let ms = bounded(a.ms)?;
                        wait(&count, &cx, ms).await?;
                        Ok(format!("slept {ms} ms"))
                    }
                },
            )
            .execution(Execution::MayBeLong),
        )
        .tool(
            "cancelled_count",
            "How many requests have been cancelled so far.",
            move |_: NoArgs, _cx| {
                let n = c3.load(Ordering::SeqCst);
                async move { n.to_string() }
            },
        )
        .tool(
            "close_stream",
            "Closes its SSE connection mid-call (SEP-1699), then answers.",
            move |a: PauseArgs, cx: ToolContext| {
                let count = c4.clone();
                async move {
                    let ms = bounded(a.ms)?;
                    let _ = cx
                        .log(LogLevel::Info, Some("close_stream"), json!("before close"))
                        .await;
                    let closed = cx.close_sse_stream();
                    wait(&count, &cx, ms).await?;
                    let _ = cx
                        .log(LogLevel::Info, Some("close_stream"), json!("after close"))
                        .await;
                    Ok(if closed { "resumed" } else { "not closed" })
                }
            },
        )
        .tool(
            "ask_name",
            "Asks the client for a name by elicitation and answers with it.",
            |_: NoArgs, cx: ToolContext| async move { ask_name(&cx) },
        )
        .register(
            Tool::new(
                "slow_ask",
                "Works ms, asks the client for a name by elicitation, works ms more, answers with it; long-running (a task for clients that declare tasks).",
                move |a: PauseArgs, cx: ToolContext| {
                    let count = c5.clone();
                    async move {
                        let ms = bounded(a.ms)?;
                        // Work before the question (first round) and after
                        // the answer (second round).
                        wait(&count, &cx, ms).await?;
                        ask_name(&cx)
                    }
                },
            )
            .execution(Execution::MayBeLong),
        )
}

impl ReferenceHandler {
    /// A new handler with a zero cancellation count.
    pub fn new() -> Self {
        let cancelled = Arc::new(AtomicU64::new(0));
        ReferenceHandler {
            tools: tools(&cancelled),
            cancelled,
        }
    }

    /// How many requests have been cancelled so far.
    pub fn cancelled_count(&self) -> u64 {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// The tool registry.
    pub fn tools(&self) -> &Tools {
        &self.tools
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
        self.tools.execution(request)
    }

    fn tool_execution(&self, name: &str, request: &Request) -> Execution {
        self.tools.tool_execution(name, request)
    }

    /// `tools/list` and `tools/call`; anything else is `-32601`. Written
    /// out rather than `async`: the tools' own future is returned as is,
    /// so a pending call holds no boxed future of this layer.
    fn handle<'life0, 'async_trait>(
        &'life0 self,
        request: Request,
        cx: RequestContext,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Outcome> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        self.tools.handle(request, cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::testing::{Cx, error_code, first_text, request, result};
    use mcp_transport_core::ProtocolVersion as V;
    use mcp_transport_core::jsonrpc::INVALID_PARAMS;
    use serde_json::Value;

    async fn call(h: &ReferenceHandler, rev: V, name: &str, args: Value) -> Outcome {
        h.handle(
            request("tools/call", json!({ "name": name, "arguments": args })),
            Cx::at(rev).build(),
        )
        .await
    }

    #[tokio::test]
    async fn tools_list_carries_the_generated_schemas_in_each_dialect() {
        let h = ReferenceHandler::new();
        for (rev, dialect) in [
            (V::V2025_03_26, "http://json-schema.org/draft-07/schema#"),
            (V::V2025_06_18, "http://json-schema.org/draft-07/schema#"),
            (
                V::V2025_11_25,
                "https://json-schema.org/draft/2020-12/schema",
            ),
            (
                V::V2026_07_28,
                "https://json-schema.org/draft/2020-12/schema",
            ),
        ] {
            let list = result(
                h.handle(
                    request("tools/list", json!({})),
                    Cx::at(rev.clone()).build(),
                )
                .await,
            );
            let tools = list["tools"].as_array().unwrap();
            let names: Vec<_> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
            assert_eq!(
                names,
                [
                    "echo",
                    "add",
                    "countdown",
                    "slow",
                    "cancelled_count",
                    "close_stream",
                    "ask_name",
                    "slow_ask"
                ]
            );
            for t in tools {
                assert_eq!(t["inputSchema"]["$schema"], dialect, "{rev} {t}");
                assert_eq!(t["inputSchema"]["type"], "object", "{rev} {t}");
            }
            assert_eq!(tools[0]["inputSchema"]["required"], json!(["text"]));
            assert_eq!(tools[1]["inputSchema"]["required"], json!(["a", "b"]));
            let countdown = &tools[2]["inputSchema"];
            assert_eq!(countdown["required"], json!(["n"]));
            assert_eq!(countdown["properties"]["interval_ms"]["default"], 10);
        }
    }

    #[tokio::test]
    async fn bad_arguments_are_reported_as_each_revision_says() {
        let h = ReferenceHandler::new();
        let bad = [
            ("echo", json!({})),
            ("add", json!({ "a": "x", "b": 1 })),
            ("countdown", json!({ "n": 20000 })),
            ("slow", json!({ "ms": -5 })),
            ("close_stream", json!({ "ms": MAX_WAIT_MS + 1 })),
        ];
        for (name, args) in bad {
            for rev in [V::V2025_03_26, V::V2025_06_18] {
                let out = call(&h, rev.clone(), name, args.clone()).await;
                assert_eq!(error_code(&out), INVALID_PARAMS, "{rev} {name}");
            }
            for rev in [V::V2025_11_25, V::V2026_07_28] {
                let r = result(call(&h, rev.clone(), name, args.clone()).await);
                assert_eq!(r["isError"], true, "{rev} {name}");
            }
        }
        let out = call(&h, V::V2025_11_25, "nope", json!({})).await;
        assert_eq!(error_code(&out), INVALID_PARAMS);
        let r = result(call(&h, V::V2025_03_26, "add", json!({ "a": 0.5, "b": 2 })).await);
        assert_eq!(r, json!({ "content": [{ "type": "text", "text": "2.5" }] }));
    }

    /// `slow` works up to ten minutes and no longer; `close_stream` and
    /// `slow_ask` wait 100 ms when not told (paused time: exact).
    #[tokio::test(start_paused = true)]
    async fn waits_are_bounded_at_ten_minutes_and_default_to_100_ms() {
        let h = ReferenceHandler::new();
        let modern = V::V2026_07_28;
        let start = tokio::time::Instant::now();
        let r = result(call(&h, modern.clone(), "slow", json!({ "ms": 600_000 })).await);
        assert_eq!(first_text(&r), "slept 600000 ms");
        assert_eq!(start.elapsed(), Duration::from_secs(600));
        let r = result(call(&h, modern.clone(), "slow", json!({ "ms": 600_001 })).await);
        assert_eq!(r["isError"], true);
        assert_eq!(first_text(&r), "ms must be <= 600000");

        let start = tokio::time::Instant::now();
        let r = result(call(&h, modern.clone(), "close_stream", json!({})).await);
        assert_eq!(first_text(&r), "not closed", "no stream to close here");
        assert_eq!(start.elapsed(), Duration::from_millis(100));
        let start = tokio::time::Instant::now();
        let out = call(&h, modern, "slow_ask", json!({})).await;
        assert!(matches!(out, Outcome::InputRequired(_)), "{out:?}");
        assert_eq!(start.elapsed(), Duration::from_millis(100));
    }

    /// `countdown`: a progress and a log a step, counting down what is
    /// left; `n` may be 10,000 and no more.
    #[tokio::test(start_paused = true)]
    async fn countdown_counts_what_is_left() {
        let h = ReferenceHandler::new();
        let (cx, sink) = Cx::at(V::V2025_11_25)
            .progress(json!("t"))
            .log(LogLevel::Info)
            .build_with_sink();
        let req = request(
            "tools/call",
            json!({ "name": "countdown", "arguments": { "n": 3, "interval_ms": 5 } }),
        );
        let start = tokio::time::Instant::now();
        let r = result(h.handle(req, cx).await);
        assert_eq!(first_text(&r), "done");
        assert_eq!(start.elapsed(), Duration::from_millis(15));
        let sent: Vec<(String, Value)> = sink
            .sent()
            .into_iter()
            .map(|(m, p)| {
                let what = match m.as_str() {
                    "notifications/progress" => {
                        json!([p["progress"], p["total"], p["message"]])
                    }
                    _ => p["data"].clone(),
                };
                (m, what)
            })
            .collect();
        let progress =
            |i: f64, left: &str| ("notifications/progress".to_owned(), json!([i, 3.0, left]));
        let log = |left: &str| ("notifications/message".to_owned(), json!(left));
        assert_eq!(
            sent,
            [
                progress(1.0, "2 left"),
                log("2 left"),
                progress(2.0, "1 left"),
                log("1 left"),
                progress(3.0, "0 left"),
                log("0 left"),
            ]
        );
        let most = json!({ "n": MAX_COUNT, "interval_ms": 0 });
        let r = result(call(&h, V::V2026_07_28, "countdown", most).await);
        assert_eq!(first_text(&r), "done");
    }

    /// `add` answers integers as integers, however large, and a sum of
    /// zeros as `0`.
    #[tokio::test]
    async fn add_writes_the_sum_as_json_would() {
        let h = ReferenceHandler::new();
        for (a, b, want) in [
            (json!(2), json!(3), "5"),
            (json!(-7), json!(2), "-5"),
            (json!(1e20), json!(0), "100000000000000000000"),
            (json!(-0.0), json!(-0.0), "0"),
            (json!(0.25), json!(0.5), "0.75"),
        ] {
            let args = json!({ "a": a, "b": b });
            let r = result(call(&h, V::V2026_07_28, "add", args).await);
            assert_eq!(first_text(&r), want, "{a} + {b}");
        }
    }

    #[tokio::test]
    async fn long_tools_may_be_long_and_cancellations_are_counted() {
        let h = ReferenceHandler::new();
        for (name, e) in [
            ("slow", Execution::MayBeLong),
            ("slow_ask", Execution::MayBeLong),
            ("echo", Execution::Immediate),
            ("nope", Execution::Immediate),
        ] {
            let req = request("tools/call", json!({ "name": name }));
            assert_eq!(h.execution(&req), e, "{name}");
        }
        let b = Cx::at(V::V2025_11_25);
        let cancel = b.cancellation();
        cancel.cancel();
        let out = h
            .handle(
                request(
                    "tools/call",
                    json!({ "name": "slow", "arguments": { "ms": 60000 } }),
                ),
                b.build(),
            )
            .await;
        assert_eq!(error_code(&out), -32800);
        assert_eq!(h.cancelled_count(), 1);
        let r = result(call(&h, V::V2026_07_28, "cancelled_count", json!({})).await);
        assert_eq!(r["content"][0]["text"], "1");
    }
}
