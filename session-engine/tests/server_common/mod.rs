//! Shared helpers for the server tests: the test handler, a server on
//! 127.0.0.1:0, and raw requests to it. The generic pieces (server,
//! handler, SSE reader, waiting) come from `mcp-test-support`.

#![allow(dead_code, unused_imports)]

pub mod cluster;
pub mod memory;
pub mod store;

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use mcp_rev_2025_11_25::PollingExt;
use mcp_session_engine::server::{LegacyServer, ServerConfig};
use mcp_test_support::handler::tools::{self, Ask, CloseStream};
use mcp_test_support::handler::{Call, tool_fn};
use mcp_transport_core::handler::{InputRequest, InputRequired, LogLevel, Outcome};
use mcp_transport_core::jsonrpc::ErrorObject;
use serde_json::{Value, json};

pub use mcp_test_support::sse::{
    Rec, SseReader, content_type, has_retry, is_response, last_id, messages, read_all,
};
pub use mcp_test_support::{EngineServer, TestHandler, WAIT, eventually, within};

/// The test handler: `tools/call` with a few tools.
///
/// | tool | arguments | behaviour |
/// | --- | --- | --- |
/// | `echo` | any | answers `{"echo": arguments}` |
/// | `progress` | `{n, delay_ms}` | `n` steps: progress (with a token) or a log `{"step": i}`; answers `{"steps": n}` |
/// | `slow` | `{ms}` | answers `{"slept": ms}` after `ms` unless cancelled (counted) |
/// | `ask`, `ask_sampling` | `{}` | elicitation / sampling keyed `confirm`, state `round-1`; answers `{answer, state}` |
/// | `ask_forever` | `{}` | always asks for `roots/list` |
/// | `close_stream` | `{delay_ms}` | logs `{"phase": "before"}`, closes the stream, waits, logs `{"phase": "after"}` |
/// | `logs` | `{}` | logs at debug, info and error |
/// | `client` | `{}` | answers the client as the session knows it: `{info, capabilities}` |
pub fn test_handler() -> TestHandler {
    TestHandler::builder("test-server")
        .instructions("for tests")
        .tool(
            "echo",
            tool_fn(|c: Call| async move { Outcome::json(&json!({"echo": c.args})) }),
        )
        .tool("progress", tool_fn(progress))
        .tool("slow", tools::slow(1000))
        .tool(
            "ask",
            tools::ask(
                Ask::elicitation(
                    "confirm",
                    json!({
                        "message": "Proceed?",
                        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
                    }),
                )
                .with_state("round-1"),
            ),
        )
        .tool(
            "ask_sampling",
            tools::ask(
                Ask::sampling("confirm", json!({"messages": [], "maxTokens": 10}))
                    .with_state("round-1"),
            ),
        )
        .tool("ask_forever", tool_fn(ask_forever))
        .tool(
            "close_stream",
            tools::close_stream(CloseStream {
                logger: None,
                before: Some(json!({"phase": "before"})),
                wait_arg: "delay_ms",
                default_ms: 100,
                after: vec![json!({"phase": "after"})],
            }),
        )
        .tool("logs", tool_fn(logs))
        .tool(
            "client",
            tool_fn(|c: Call| async move {
                let client = &c.cx.client;
                Outcome::json(&json!({"info": client.info, "capabilities": client.capabilities}))
            }),
        )
        .build()
}

async fn progress(c: Call) -> Outcome {
    let n = c.arg("n", 3);
    let delay = c.arg("delay_ms", 0);
    for i in 1..=n {
        let r = if c.cx.progress_token.is_some() {
            c.cx.progress(i as f64, Some(n as f64), Some(&format!("step {i}")))
                .await
        } else {
            c.cx.log(LogLevel::Info, Some("test"), json!({"step": i}))
                .await
        };
        if r.is_err() {
            return Outcome::Error(ErrorObject::internal("send failed"));
        }
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
    }
    Outcome::json(&json!({"steps": n}))
}

async fn ask_forever(_: Call) -> Outcome {
    let mut requests = BTreeMap::new();
    requests.insert(
        "roots".to_owned(),
        InputRequest {
            method: "roots/list".into(),
            params: None,
        },
    );
    Outcome::InputRequired(InputRequired {
        requests,
        state: None,
    })
}

async fn logs(c: Call) -> Outcome {
    for level in [LogLevel::Debug, LogLevel::Info, LogLevel::Error] {
        let _ = c.cx.log(level, None, json!({"level": level})).await;
    }
    Outcome::json(&json!({}))
}

/// A running server.
pub struct TestServer(EngineServer<LegacyServer>);

impl Deref for TestServer {
    type Target = EngineServer<LegacyServer>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// Starts a server with `config` at `/mcp` on 127.0.0.1:0.
pub async fn start(config: ServerConfig) -> TestServer {
    let handler = Arc::new(test_handler());
    let server = LegacyServer::new(handler.clone(), config);
    let app = axum::Router::new().nest_service("/mcp", server.router());
    TestServer(EngineServer::serve(server, handler, app).await)
}

/// [`config`] with one self-test fault injected (a deliberately wrong
/// server: each fault's test shows it does what `mcp-compat self-test`
/// counts on).
pub fn faulty(fault: mcp_http_edge::faults::Fault) -> ServerConfig {
    config().with_http(mcp_http_edge::config::ServerHttp {
        faults: mcp_http_edge::faults::Faults::only(fault),
        ..mcp_http_edge::config::ServerHttp::default()
    })
}

/// A 2025-11-25 config with short timings for tests, with every legacy
/// revision's implementation registered (so `with_versions` may pick any).
pub fn config() -> ServerConfig {
    mcp_rev_2025_03_26::register(mcp_rev_2025_11_25::server_config()).with_retry_ms(50)
}

/// A `tools/call` body.
pub fn call_body(id: impl Into<Value>, tool: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
    .to_string()
}

/// A `tools/call` body that asks for progress with `token`.
pub fn call_body_with_progress(
    id: impl Into<Value>,
    tool: &str,
    args: Value,
    token: &str,
) -> String {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
           "params": {"name": tool, "arguments": args, "_meta": {"progressToken": token}}})
    .to_string()
}

/// A session as the tests see it.
#[derive(Clone, Debug)]
pub struct Session {
    /// `MCP-Session-Id`.
    pub id: String,
    /// The negotiated version.
    pub version: String,
    /// The full InitializeResult.
    pub result: Value,
}

impl TestServer {
    /// A POST in `session` (with its version header).
    pub fn post_in(&self, s: &Session) -> reqwest::RequestBuilder {
        self.post()
            .header("mcp-session-id", &s.id)
            .header("mcp-protocol-version", &s.version)
    }

    /// A GET in `session` accepting SSE.
    pub fn get_in(&self, s: &Session) -> reqwest::RequestBuilder {
        self.http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &s.id)
            .header("mcp-protocol-version", &s.version)
    }

    /// A resume of `s` from `last_event_id`.
    pub fn resume(&self, s: &Session, last_event_id: &str) -> reqwest::RequestBuilder {
        self.get_in(s).header("last-event-id", last_event_id)
    }

    /// Initializes with `version` and `capabilities`; sends `initialized`.
    pub async fn init_with(&self, version: &str, capabilities: Value) -> Session {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "test-client", "version": "1"}
        }});
        let resp = self.post().body(body.to_string()).send().await.unwrap();
        assert_eq!(resp.status(), 200, "initialize failed");
        let id = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(content_type(&resp), "application/json");
        let v: Value = resp.json().await.unwrap();
        let version = v["result"]["protocolVersion"].as_str().unwrap().to_owned();
        let s = Session {
            id,
            version,
            result: v["result"].clone(),
        };
        let r = self
            .post_in(&s)
            .body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
        s
    }

    /// Initializes with `version` and no capabilities.
    pub async fn init(&self, version: &str) -> Session {
        self.init_with(version, json!({})).await
    }

    /// POSTs a `tools/call` in `s`.
    pub async fn call(&self, s: &Session, id: i64, tool: &str, args: Value) -> reqwest::Response {
        self.post_in(s)
            .body(call_body(id, tool, args))
            .send()
            .await
            .unwrap()
    }
}

/// Follows a request's stream across server-initiated disconnects: reads
/// `first` to its end, then resumes with the last id until the response to
/// `id` arrives. Returns every connection's records.
pub async fn follow(
    t: &TestServer,
    s: &Session,
    first: reqwest::Response,
    id: i64,
) -> Vec<Vec<Rec>> {
    let mut conns = Vec::new();
    let (recs, _) = read_all(first).await;
    let mut last = last_id(&recs);
    let mut done = messages(&recs).iter().any(|m| is_response(m, id));
    conns.push(recs);
    let mut rounds = 0;
    while !done {
        rounds += 1;
        assert!(rounds < 100, "the response never came");
        // Respect the server's `retry` (SEP-1699: "Clients MUST respect
        // the retry field").
        if let Some(Rec::Retry(ms)) = conns.last().and_then(|c: &Vec<Rec>| c.last()) {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
        }
        let resp = t.resume(s, &last).send().await.unwrap();
        let (recs, _) = read_all(resp).await;
        if let Some(Rec::Event { id, .. }) =
            recs.iter().rev().find(|r| matches!(r, Rec::Event { .. }))
        {
            last = id.clone();
        }
        done = messages(&recs).iter().any(|m| is_response(m, id));
        conns.push(recs);
    }
    conns
}

/// The JSON body of an error response, checked to have no id.
pub async fn error_body(resp: reqwest::Response) -> Value {
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    assert!(v.get("id").is_none(), "an HTTP error body has no id: {v}");
    assert!(v["error"]["code"].is_i64(), "{v}");
    v
}
