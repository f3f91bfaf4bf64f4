//! Shared helpers for the server tests: the test handler, a server on
//! 127.0.0.1:0, and a small reqwest-based client that builds 2026-07-28
//! requests (metadata and mirrored headers). The generic pieces (server,
//! handler, SSE reader, waiting) come from `mcp-test-support`.

#![allow(dead_code, unused_imports)]

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_rev_2026_07_28::headers::encode_value;
use mcp_rev_2026_07_28::server::{ModernConfig, ModernServer};
use mcp_test_support::handler::{Call, Stats, method_fn, tool_fn, tools};
use mcp_transport_core::handler::{
    InputRequest, InputRequired, LogLevel, Outcome, RequestContext, SendError,
};
use mcp_transport_core::jsonrpc::{ErrorObject, Notification, to_raw};
use serde_json::{Value, json};

pub use mcp_test_support::sse::{Ev, SseReader};
pub use mcp_test_support::{EngineServer, TestHandler, WAIT, eventually};

/// The protocol version the tests speak.
pub const V: &str = "2026-07-28";

/// The test handler. Every tool result is also given as text content
/// (`structuredContent` holds the JSON).
///
/// | method / tool | behaviour |
/// | --- | --- |
/// | `tools/list` | the tools below in two pages (counted); with `handler.switch` set, the `route` tool's `region` header is named `Area` instead of `Region` |
/// | `echo`, `route`, `bad_schema` | answer their arguments |
/// | `slow {ms}` | progress `0` first, then answers after `ms` (10 s) unless cancelled (time recorded) |
/// | `countdown {n, delay_ms}` | `n` steps of progress, info log and debug log |
/// | `ask` | two elicitation rounds (name, then confirmation) carried by `requestState` |
/// | `ask_sampling` | always asks for a sampling |
/// | `push_list_changed` | sends `notifications/tools/list_changed` (refusals recorded) |
/// | `panic` | panics |
/// | `resources/read`, `prompts/get` | answer; `file:///missing` is `-32002` |
pub fn test_handler() -> TestHandler {
    TestHandler::builder("test-server")
        .capabilities(json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true},
            "prompts": {},
            "logging": {}
        }))
        .instructions("for tests")
        .structured_results()
        .method("tools/list", method_fn(tools_list))
        .method("resources/read", method_fn(resources_read))
        .method(
            "prompts/get",
            method_fn(|_, _, _| async { Outcome::json(&json!({"messages": []})) }),
        )
        .tool("echo", tools::echo())
        .tool("route", tools::echo())
        .tool("bad_schema", tools::echo())
        .tool("slow", tools::slow_announced(10_000))
        .tool("countdown", tool_fn(countdown))
        .tool("ask", tool_fn(ask))
        .tool("ask_sampling", tool_fn(ask_sampling))
        .tool("push_list_changed", tool_fn(push_list_changed))
        .tool("raw_notify", tool_fn(raw_notify))
        .tool("panic", tool_fn(|_| async { panic!("test panic") }))
        .build()
}

fn tool_list(schema_v2: bool) -> Vec<Value> {
    let region = if schema_v2 { "Area" } else { "Region" };
    vec![
        json!({"name": "echo", "inputSchema": {"type": "object"}}),
        json!({"name": "slow", "inputSchema": {"type": "object", "properties": {"ms": {"type": "integer"}}}}),
        json!({"name": "countdown", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}),
        json!({"name": "ask", "inputSchema": {"type": "object"}}),
        json!({"name": "ask_sampling", "inputSchema": {"type": "object"}}),
        json!({"name": "route", "inputSchema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": region},
                "count": {"type": "integer", "x-mcp-header": "Count"},
                "dry_run": {"type": "boolean", "x-mcp-header": "DryRun"},
                "target": {"type": "object", "properties": {
                    "zone": {"type": "string", "x-mcp-header": "Zone"}
                }},
                "query": {"type": "string"}
            }
        }}),
        // Invalid annotation (type number): clients exclude the tool;
        // the server expects no header for it.
        json!({"name": "bad_schema", "inputSchema": {"type": "object", "properties": {
            "ratio": {"type": "number", "x-mcp-header": "Ratio"}
        }}}),
    ]
}

async fn tools_list(params: Value, _: RequestContext, stats: Arc<Stats>) -> Outcome {
    stats.tools_list_calls.fetch_add(1, Ordering::SeqCst);
    let tools = tool_list(stats.switch.load(Ordering::SeqCst));
    // Two pages.
    match params.get("cursor").and_then(Value::as_str) {
        None => Outcome::json(&json!({"tools": tools[..3], "nextCursor": "page-2"})),
        Some("page-2") => Outcome::json(&json!({"tools": tools[3..]})),
        Some(_) => Outcome::Error(ErrorObject::invalid_params("bad cursor")),
    }
}

async fn resources_read(params: Value, _: RequestContext, _: Arc<Stats>) -> Outcome {
    let uri = params["uri"].as_str().unwrap_or("");
    if uri == "file:///missing" {
        // What an era-agnostic handler written for 2025-11-25 says.
        return Outcome::Error(ErrorObject::new(-32002, "Resource not found"));
    }
    Outcome::json(&json!({"contents": [{"uri": uri, "text": "hello"}]}))
}

async fn countdown(c: Call) -> Outcome {
    let n = c.arg("n", 3);
    let delay = c.arg("delay_ms", 0);
    for i in (0..n).rev() {
        let _ =
            c.cx.progress((n - i) as f64, Some(n as f64), Some(&format!("{i} left")))
                .await;
        let _ =
            c.cx.log(LogLevel::Info, Some("countdown"), json!({"left": i}))
                .await;
        let _ =
            c.cx.log(LogLevel::Debug, Some("countdown"), json!({"debug": i}))
                .await;
        if delay > 0 {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
    }
    Outcome::json(&json!({"done": n}))
}

fn elicit(message: &str, field: &str) -> InputRequest {
    InputRequest {
        method: "elicitation/create".into(),
        params: Some(
            to_raw(&json!({
                "mode": "form",
                "message": message,
                "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}}}
            }))
            .unwrap(),
        ),
    }
}

fn answer(cx: &RequestContext, key: &str) -> Option<Value> {
    cx.input_responses()?
        .get(key)
        .and_then(|r| serde_json::from_str(r.get()).ok())
}

async fn ask(c: Call) -> Outcome {
    // Round 1: the name; round 2: a confirmation; then done.
    let cx = &c.cx;
    let state = cx.request_state().map(str::to_owned);
    match (state.as_deref(), answer(cx, "name"), answer(cx, "confirm")) {
        (Some("want-name"), Some(name), _) => {
            let who = name["content"]["name"].as_str().unwrap_or("?").to_owned();
            let mut requests = BTreeMap::new();
            requests.insert(
                "confirm".to_owned(),
                elicit(&format!("Really {who}?"), "ok"),
            );
            Outcome::InputRequired(InputRequired {
                requests,
                state: Some(format!("want-confirm:{who}")),
            })
        }
        (Some(s), _, Some(confirm)) if s.starts_with("want-confirm:") => Outcome::json(&json!({
            "name": &s["want-confirm:".len()..],
            "confirmed": confirm["content"]["ok"],
            "state": s,
        })),
        _ => {
            let mut requests = BTreeMap::new();
            requests.insert("name".to_owned(), elicit("Your name?", "name"));
            Outcome::InputRequired(InputRequired {
                requests,
                state: Some("want-name".into()),
            })
        }
    }
}

async fn ask_sampling(_: Call) -> Outcome {
    let mut requests = BTreeMap::new();
    requests.insert(
        "llm".to_owned(),
        InputRequest {
            method: "sampling/createMessage".into(),
            params: Some(to_raw(&json!({"messages": [], "maxTokens": 5})).unwrap()),
        },
    );
    Outcome::InputRequired(InputRequired {
        requests,
        state: None,
    })
}

async fn push_list_changed(c: Call) -> Outcome {
    let r =
        c.cx.notify(Notification {
            method: "notifications/tools/list_changed".into(),
            params: None,
        })
        .await;
    if let Err(e) = &r {
        c.stats.refusals.lock().unwrap().push(e.to_string());
    }
    Outcome::json(&json!({"refused": r.is_err()}))
}

/// `raw_notify`: sends through `notify` (none of the context helpers'
/// checks) what a request's stream must filter or refuse by the request's
/// own `_meta`, and answers with each send's outcome, in order: log
/// messages at `debug`, at `error` and without a level; progress with a
/// foreign token and with the request's own; `notifications/cancelled`;
/// a list change; a custom notification.
async fn raw_notify(c: Call) -> Outcome {
    let own_token = c.cx.progress_token.clone().unwrap_or(Value::Null);
    let sends = [
        (
            "notifications/message",
            json!({"level": "debug", "data": "d"}),
        ),
        (
            "notifications/message",
            json!({"level": "error", "data": "e"}),
        ),
        ("notifications/message", json!({"data": "no level"})),
        (
            "notifications/progress",
            json!({"progressToken": "foreign", "progress": 1}),
        ),
        (
            "notifications/progress",
            json!({"progressToken": own_token, "progress": 2}),
        ),
        ("notifications/cancelled", json!({"requestId": 1})),
        ("notifications/tools/list_changed", json!({})),
        ("com.example/custom", json!({"k": 1})),
    ];
    let mut outcomes = Vec::new();
    for (method, params) in sends {
        let sent = c.cx.notify(Notification {
            method: method.into(),
            params: Some(to_raw(&params).unwrap()),
        });
        outcomes.push(match sent.await {
            Ok(()) => "ok",
            Err(SendError::Unsupported(_)) => "unsupported",
            Err(_) => "other error",
        });
    }
    Outcome::json(&json!({ "outcomes": outcomes }))
}

/// A running server.
pub struct TestServer(EngineServer<ModernServer>);

impl Deref for TestServer {
    type Target = EngineServer<ModernServer>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// A config with a short keep-alive for tests.
pub fn config() -> ModernConfig {
    ModernConfig::default()
}

/// Starts a server with `config` at `/mcp` on 127.0.0.1:0.
pub async fn start(config: ModernConfig) -> TestServer {
    start_with(Arc::new(test_handler()), config).await
}

/// Starts a server with a given handler.
pub async fn start_with(handler: Arc<TestHandler>, config: ModernConfig) -> TestServer {
    let server = ModernServer::new(handler.clone(), config);
    let app = axum::Router::new().nest_service("/mcp", server.router());
    TestServer(EngineServer::serve(server, handler, app).await)
}

/// `_meta` for a request with `caps` as client capabilities.
pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1"}
    })
}

/// A request body with the metadata merged into `params._meta`.
pub fn body(id: impl Into<Value>, method: &str, params: Value, caps: Value) -> Value {
    let mut params = if params.is_object() {
        params
    } else {
        json!({})
    };
    let mut m = meta(caps);
    if let Some(extra) = params.get("_meta").and_then(Value::as_object) {
        for (k, v) in extra {
            m[k] = v.clone();
        }
    }
    params["_meta"] = m;
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A `tools/call` body with no client capabilities.
pub fn tool(id: impl Into<Value>, name: &str, args: Value) -> Value {
    body(
        id,
        "tools/call",
        json!({"name": name, "arguments": args}),
        json!({}),
    )
}

/// `body` as a POST for a router driven in memory (`tower::ServiceExt`),
/// with the headers a conforming client sends.
pub fn memory_post(body: &Value) -> http::Request<axum::body::Body> {
    let mut req = http::Request::post("/")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in std_headers(body) {
        req = req.header(name, value);
    }
    req.body(axum::body::Body::from(body.to_string())).unwrap()
}

/// The headers a conforming client derives from `body`: version, method,
/// name (Base64-encoded when needed).
pub fn std_headers(body: &Value) -> Vec<(String, String)> {
    let mut h = Vec::new();
    if let Some(v) = body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str() {
        h.push(("MCP-Protocol-Version".to_owned(), v.to_owned()));
    }
    let method = body["method"].as_str().unwrap_or("");
    h.push(("Mcp-Method".to_owned(), method.to_owned()));
    let member = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(v) = member.and_then(|m| body["params"][m].as_str()) {
        h.push(("Mcp-Name".to_owned(), encode_value(v)));
    }
    h
}

impl TestServer {
    /// A POST of `body` with the standard headers.
    pub fn rpc(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut r = self.post().body(body.to_string());
        for (k, v) in std_headers(body) {
            r = r.header(k, v);
        }
        r
    }

    /// Sends `body` with the standard headers.
    pub async fn send(&self, body: &Value) -> reqwest::Response {
        self.rpc(body).send().await.unwrap()
    }

    /// Sends `body` and reads the whole answer (JSON or SSE).
    pub async fn exchange(&self, body: &Value) -> Answer {
        read_answer(self.send(body).await).await
    }
}

/// A whole answer: HTTP status, notifications before the response, the
/// response, and whether it came as SSE.
#[derive(Debug)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Notifications (SSE only).
    pub notifications: Vec<Value>,
    /// The final JSON-RPC response.
    pub response: Value,
    /// Whether the answer was an SSE stream.
    pub sse: bool,
    /// The raw SSE text.
    pub raw: String,
}

impl Answer {
    /// The `result` (panics on errors).
    pub fn result(&self) -> &Value {
        assert!(
            self.response.get("result").is_some(),
            "expected a result: {}",
            self.response
        );
        &self.response["result"]
    }

    /// The `error` (panics on results).
    pub fn error(&self) -> &Value {
        assert!(
            self.response.get("error").is_some(),
            "expected an error: {}",
            self.response
        );
        &self.response["error"]
    }

    /// Notifications of one method.
    pub fn of(&self, method: &str) -> Vec<&Value> {
        self.notifications
            .iter()
            .filter(|n| n["method"] == method)
            .collect()
    }
}

/// Reads a JSON or SSE answer.
pub async fn read_answer(resp: reqwest::Response) -> Answer {
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    if ct.starts_with("text/event-stream") {
        let mut r = SseReader::without_ids(resp);
        let mut notifications = Vec::new();
        let mut response = Value::Null;
        while let Some(m) = r.next_json().await {
            if m.get("method").is_some() {
                notifications.push(m);
            } else {
                response = m;
            }
        }
        Answer {
            status,
            notifications,
            response,
            sse: true,
            raw: r.raw,
        }
    } else {
        assert!(ct.starts_with("application/json"), "content-type {ct:?}");
        let response: Value = resp.json().await.unwrap();
        Answer {
            status,
            notifications: Vec::new(),
            response,
            sse: false,
            raw: String::new(),
        }
    }
}

/// The JSON body of an HTTP error response.
pub async fn error_json(resp: reqwest::Response) -> Value {
    let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("application/json"), "content-type {ct}");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    assert!(v["error"]["code"].is_i64(), "{v}");
    v
}
