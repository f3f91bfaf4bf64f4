//! Shared helpers for the server tests: a test handler, a server on
//! 127.0.0.1:0, and a small reqwest-based client that builds 2026-07-28
//! requests (metadata and mirrored headers) and reads SSE bodies with
//! `mcp_transport_core::sse::Decoder`.

#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use axum::serve::ListenerExt;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use mcp_rev_2026_07_28::headers::encode_value;
use mcp_rev_2026_07_28::server::{ModernConfig, ModernServer};
use mcp_transport_core::handler::{
    Handler, InputRequest, InputRequired, LogLevel, Outcome, RequestContext, ServerDescription,
};
use mcp_transport_core::jsonrpc::{ErrorObject, Notification, Request, to_raw};
use mcp_transport_core::sse::{Decoder, SseItem};
use serde_json::{Value, json};

/// How long any single wait in a test may take before it fails.
pub const WAIT: Duration = Duration::from_secs(5);

/// The protocol version the tests speak.
pub const V: &str = "2026-07-28";

/// The test handler.
#[derive(Default)]
pub struct TestHandler {
    /// When each `slow` call saw its cancellation.
    pub cancelled_at: Mutex<Vec<Instant>>,
    /// `slow` calls that finished their sleep.
    pub completions: AtomicUsize,
    /// Calls of `tools/list`.
    pub tools_list_calls: AtomicUsize,
    /// Use the second version of the `route` tool's schema (its `region`
    /// header is named `Area` instead of `Region`).
    pub schema_v2: AtomicBool,
    /// Notifications the transport passed on.
    pub notifications: Mutex<Vec<String>>,
    /// What `SendError` the `push_list_changed` tool got.
    pub refusals: Mutex<Vec<String>>,
}

fn arg_u64(args: &Value, name: &str, default: u64) -> u64 {
    args.get(name).and_then(Value::as_u64).unwrap_or(default)
}

fn text(v: &Value) -> Value {
    json!({"content": [{"type": "text", "text": v.to_string()}], "structuredContent": v})
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
    cx.input_responses
        .as_ref()?
        .get(key)
        .and_then(|r| serde_json::from_str(r.get()).ok())
}

impl TestHandler {
    fn tools(&self) -> Vec<Value> {
        let region = if self.schema_v2.load(Ordering::SeqCst) {
            "Area"
        } else {
            "Region"
        };
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

    async fn call(&self, name: &str, args: Value, cx: RequestContext) -> Outcome {
        match name {
            "echo" | "route" | "bad_schema" => Outcome::json(&text(&args)),
            "slow" => {
                let ms = arg_u64(&args, "ms", 10_000);
                // Something on the stream first, so the client has the
                // response head and a stream to close.
                let _ = cx.progress(0.0, None, Some("started")).await;
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => {
                        self.completions.fetch_add(1, Ordering::SeqCst);
                        Outcome::json(&text(&json!({"slept": ms})))
                    }
                    () = cx.cancelled() => {
                        self.cancelled_at.lock().unwrap().push(Instant::now());
                        Outcome::Error(ErrorObject::internal("cancelled"))
                    }
                }
            }
            "countdown" => {
                let n = arg_u64(&args, "n", 3);
                let delay = arg_u64(&args, "delay_ms", 0);
                for i in (0..n).rev() {
                    let _ = cx
                        .progress((n - i) as f64, Some(n as f64), Some(&format!("{i} left")))
                        .await;
                    let _ = cx
                        .log(LogLevel::Info, Some("countdown"), json!({"left": i}))
                        .await;
                    let _ = cx
                        .log(LogLevel::Debug, Some("countdown"), json!({"debug": i}))
                        .await;
                    if delay > 0 {
                        tokio::time::sleep(Duration::from_millis(delay)).await;
                    }
                }
                Outcome::json(&text(&json!({"done": n})))
            }
            "ask" => {
                // Round 1: the name; round 2: a confirmation; then done.
                let state = cx.request_state.clone();
                match (
                    state.as_deref(),
                    answer(&cx, "name"),
                    answer(&cx, "confirm"),
                ) {
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
                    (Some(s), _, Some(confirm)) if s.starts_with("want-confirm:") => {
                        Outcome::json(&text(&json!({
                            "name": &s["want-confirm:".len()..],
                            "confirmed": confirm["content"]["ok"],
                            "state": s,
                        })))
                    }
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
            "ask_sampling" => {
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
            "push_list_changed" => {
                let r = cx
                    .notify(Notification {
                        method: "notifications/tools/list_changed".into(),
                        params: None,
                    })
                    .await;
                if let Err(e) = &r {
                    self.refusals.lock().unwrap().push(e.to_string());
                }
                Outcome::json(&text(&json!({"refused": r.is_err()})))
            }
            "panic" => panic!("test panic"),
            other => Outcome::Error(ErrorObject::invalid_params(format!("no tool {other}"))),
        }
    }
}

#[async_trait]
impl Handler for TestHandler {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({"name": "test-server", "version": "0.0.1"}),
            capabilities: json!({
                "tools": {"listChanged": true},
                "resources": {"subscribe": true},
                "prompts": {},
                "logging": {}
            }),
            instructions: Some("for tests".into()),
        }
    }

    async fn handle(&self, req: Request, cx: RequestContext) -> Outcome {
        let params: Value = req
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        match req.method.as_str() {
            "tools/list" => {
                self.tools_list_calls.fetch_add(1, Ordering::SeqCst);
                let tools = self.tools();
                // Two pages.
                match params.get("cursor").and_then(Value::as_str) {
                    None => Outcome::json(&json!({"tools": tools[..3], "nextCursor": "page-2"})),
                    Some("page-2") => Outcome::json(&json!({"tools": tools[3..]})),
                    Some(_) => Outcome::Error(ErrorObject::invalid_params("bad cursor")),
                }
            }
            "tools/call" => {
                let name = params["name"].as_str().unwrap_or("").to_owned();
                let args = params.get("arguments").cloned().unwrap_or(json!({}));
                self.call(&name, args, cx).await
            }
            "resources/read" => {
                let uri = params["uri"].as_str().unwrap_or("");
                if uri == "file:///missing" {
                    // What an era-agnostic handler written for 2025-11-25 says.
                    return Outcome::Error(ErrorObject::new(-32002, "Resource not found"));
                }
                Outcome::json(&json!({"contents": [{"uri": uri, "text": "hello"}]}))
            }
            "prompts/get" => Outcome::json(&json!({"messages": []})),
            other => Outcome::Error(ErrorObject::method_not_found(other)),
        }
    }

    async fn notification(&self, n: Notification) {
        self.notifications.lock().unwrap().push(n.method);
    }
}

/// A running server.
pub struct TestServer {
    /// The MCP endpoint URL.
    pub url: String,
    /// The server handle.
    pub server: ModernServer,
    /// The handler.
    pub handler: Arc<TestHandler>,
    /// The HTTP client.
    pub http: reqwest::Client,
}

/// A config with a short keep-alive for tests.
pub fn config() -> ModernConfig {
    ModernConfig::default()
}

/// Starts a server with `config` at `/mcp` on 127.0.0.1:0.
pub async fn start(config: ModernConfig) -> TestServer {
    start_with(Arc::new(TestHandler::default()), config).await
}

/// Starts a server with a given handler.
pub async fn start_with(handler: Arc<TestHandler>, config: ModernConfig) -> TestServer {
    let server = ModernServer::new(handler.clone(), config);
    let app = axum::Router::new().nest_service("/mcp", server.router());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    TestServer {
        url: format!("http://127.0.0.1:{port}/mcp"),
        server,
        handler,
        http: reqwest::Client::new(),
    }
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
    /// A POST with the right Accept and Content-Type, and nothing else.
    pub fn post(&self) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
    }

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
        let mut r = SseReader::new(resp);
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

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// One decoded SSE event.
#[derive(Clone, Debug)]
pub struct Ev {
    /// The last event id in force (always empty on this revision).
    pub id: String,
    /// The data.
    pub data: String,
}

/// Reads an SSE response incrementally.
pub struct SseReader {
    stream: ByteStream,
    decoder: Decoder,
    queue: VecDeque<Ev>,
    /// Everything read so far, as text.
    pub raw: String,
    /// The body has ended.
    pub ended: bool,
}

impl SseReader {
    /// Wraps a 200 `text/event-stream` response (asserted).
    pub fn new(resp: reqwest::Response) -> Self {
        assert_eq!(resp.status(), 200, "expected an SSE stream");
        let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(ct.starts_with("text/event-stream"), "content-type {ct}");
        SseReader {
            stream: Box::pin(resp.bytes_stream()),
            decoder: Decoder::new(),
            queue: VecDeque::new(),
            raw: String::new(),
            ended: false,
        }
    }

    /// The next event, or `None` at the end of the body.
    pub async fn next(&mut self) -> Option<Ev> {
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Some(e);
            }
            if self.ended {
                return None;
            }
            let chunk = tokio::time::timeout(WAIT, self.stream.next())
                .await
                .expect("timed out waiting for the SSE body");
            let mut items = Vec::new();
            match chunk {
                Some(Ok(bytes)) => {
                    self.raw.push_str(&String::from_utf8_lossy(&bytes));
                    self.decoder.feed(&bytes, &mut items).unwrap();
                }
                Some(Err(_)) | None => {
                    self.decoder.finish(&mut items).unwrap();
                    self.ended = true;
                }
            }
            for item in items {
                if let SseItem::Event(e) = item {
                    self.queue.push_back(Ev {
                        id: e.last_event_id,
                        data: e.data,
                    });
                }
            }
        }
    }

    /// The next event's data as JSON (asserting it has no id).
    pub async fn next_json(&mut self) -> Option<Value> {
        let e = self.next().await?;
        assert_eq!(e.id, "", "events carry no id on 2026-07-28");
        Some(serde_json::from_str(&e.data).unwrap_or_else(|_| panic!("not JSON: {:?}", e.data)))
    }

    /// Waits until the raw text contains `needle` (or fails after [`WAIT`]).
    pub async fn wait_raw(&mut self, needle: &str) {
        let start = Instant::now();
        while !self.raw.contains(needle) {
            assert!(
                start.elapsed() < WAIT,
                "never saw {needle:?} in {:?}",
                self.raw
            );
            let chunk = tokio::time::timeout(WAIT, self.stream.next())
                .await
                .expect("timed out waiting for the SSE body");
            match chunk {
                Some(Ok(bytes)) => {
                    self.raw.push_str(&String::from_utf8_lossy(&bytes));
                    let mut items = Vec::new();
                    self.decoder.feed(&bytes, &mut items).unwrap();
                    for item in items {
                        if let SseItem::Event(e) = item {
                            self.queue.push_back(Ev {
                                id: e.last_event_id,
                                data: e.data,
                            });
                        }
                    }
                }
                _ => panic!("the stream ended before {needle:?} appeared"),
            }
        }
    }
}

/// Polls `f` until it is true (fails after [`WAIT`]).
pub async fn eventually(mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < WAIT, "condition never became true");
        tokio::time::sleep(Duration::from_millis(2)).await;
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
