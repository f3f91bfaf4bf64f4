//! The rmcp 3.11.0 client adapter of `mcp-compat matrix --peer rmcp`
//! (peers/rmcp.toml): `ServiceExt::serve` over
//! `StreamableHttpClientTransport`.
//!
//! usage: rmcp-peer-client URL SCENARIO REVISION
//!
//! Prints one JSON line (the peer client contract, README "Peers"):
//! `{"outcome": "pass"|"fail"|"n/a", "reason", "revision", "stage"}`.
//! REVISION is put in `initialize` (rmcp offers it as given). Scenarios:
//! call (echo + add), progress (countdown, progress 1..3 once each), input
//! (ask_name: elicitation answered "Ada"), disconnect (n/a: rmcp exposes no
//! view of its HTTP requests, so a resumption cannot be told from a call
//! that completed on its stream; the call still runs and must complete).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};

#[derive(Clone)]
struct Adapter {
    progress: Arc<Mutex<Vec<f64>>>,
    config: ClientConfig,
}

impl ClientHandler for Adapter {
    async fn on_progress(&self, params: ProgressNotificationParam, _cx: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params.progress);
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _cx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let mut r = ElicitResult::new(ElicitationAction::Accept);
        r.content = Some(json!({ "name": "Ada" }));
        Ok(r)
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

fn text_of(result: &CallToolResult) -> String {
    serde_json::to_value(result).ok().and_then(|v| v["content"][0]["text"].as_str().map(str::to_owned)).unwrap_or_default()
}

fn done(out: &mut Value, outcome: &str, reason: String) {
    out["outcome"] = json!(outcome);
    out["reason"] = json!(reason);
}

async fn run(url: &str, scenario: &str, revision: &str, out: &mut Value) {
    let config: ClientConfig = match serde_json::from_value(json!({
        "protocolVersion": revision,
        "capabilities": { "elicitation": {} },
        "clientInfo": { "name": "mcp-compat-peer-rmcp", "version": "3.11.0" },
    })) {
        Ok(c) => c,
        Err(e) => return done(out, "fail", format!("client config: {e}")),
    };
    let adapter = Adapter { progress: Arc::default(), config };
    let transport = StreamableHttpClientTransport::from_uri(url);
    let client = match adapter.clone().serve(transport).await {
        Ok(c) => c,
        Err(e) => {
            out["kind"] = json!("no_mutual_revision");
            return done(out, "fail", format!("connect: {e}"));
        }
    };
    out["revision"] = json!(client.peer_info().map(|i| i.protocol_version.to_string()));
    out["stage"] = json!("scenario");
    let call = |name: &'static str, args: Value| {
        let mut p = CallToolRequestParams::new(name);
        p.arguments = args.as_object().cloned();
        client.call_tool(p)
    };
    match scenario {
        "call" => match (call("echo", json!({"text": "hello"})).await, call("add", json!({"a": 2, "b": 3})).await) {
            (Ok(e), Ok(a)) if text_of(&e) == "hello" && text_of(&a) == "5" => done(out, "pass", "echo and add answered".into()),
            (e, a) => done(out, "fail", format!("echo answered {e:?}, add answered {a:?}")),
        },
        "progress" | "disconnect" => {
            let n = if scenario == "progress" { 3 } else { 4 };
            let args = if n == 3 { json!({"n": 3, "interval_ms": 20}) } else { json!({"n": 4, "interval_ms": 40, "close_after": 2}) };
            match call("countdown", args).await {
                Ok(r) if text_of(&r) == "done" => {
                    // rmcp runs notification handlers in tasks of their own
                    // (docs/INTEROP.md): wait, bounded, for late progress.
                    let settle = Instant::now() + Duration::from_secs(2);
                    while adapter.progress.lock().unwrap().len() < n && Instant::now() < settle {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    let got = adapter.progress.lock().unwrap().clone();
                    let want: Vec<f64> = (1..=n).map(|i| i as f64).collect();
                    if got != want {
                        done(out, "fail", format!("progress {got:?}, not 1..{n} once each"));
                    } else if scenario == "disconnect" {
                        done(out, "n/a", "rmcp exposes no view of its HTTP requests: a resumption cannot be told from a call that completed on its stream (the call completed, progress 1..4 once each)".into());
                    } else {
                        done(out, "pass", format!("progress 1..{n} once each"));
                    }
                }
                other => done(out, "fail", format!("countdown answered {other:?}")),
            }
        }
        "input" => match call("ask_name", json!({})).await {
            Ok(r) if r.is_error == Some(true) => {
                out["kind"] = json!("input_unavailable");
                done(out, "fail", format!("tool error: {}", text_of(&r)));
            }
            Ok(r) if text_of(&r).contains("Ada") => done(out, "pass", format!("ask_name answered {:?}", text_of(&r))),
            // A JSON-RPC error instead of a question: what a server that
            // cannot send requests answers (a manifest's back_channel =
            // false); not rmcp's own transport or timeout errors.
            Err(rmcp::ServiceError::McpError(e)) => {
                out["kind"] = json!("no_back_channel");
                done(out, "fail", format!("JSON-RPC error {}: {}", e.code.0, e.message));
            }
            other => done(out, "fail", format!("ask_name answered {other:?}")),
        },
        other => done(out, "n/a", format!("unknown scenario {other}")),
    }
    let _ = tokio::time::timeout(Duration::from_secs(2), client.cancel()).await;
}

#[tokio::main]
async fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let [url, scenario, revision] = argv.as_slice() else {
        eprintln!("usage: rmcp-peer-client URL SCENARIO REVISION");
        std::process::exit(2);
    };
    let mut out = json!({ "outcome": "fail", "reason": "", "revision": null, "stage": "connect" });
    if tokio::time::timeout(Duration::from_secs(30), run(url, scenario, revision, &mut out)).await.is_err() {
        done(&mut out, "fail", "no outcome within 30 s".into());
    }
    println!("{out}");
}
