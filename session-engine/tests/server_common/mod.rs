//! Shared helpers for the server tests: a test handler, a server on
//! 127.0.0.1:0, and a small reqwest-based client that reads SSE bodies with
//! `mcp_transport_core::sse::Decoder`.

#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::serve::ListenerExt;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use mcp_rev_2025_11_25::PollingExt;
use mcp_session_engine::server::{LegacyServer, ServerConfig};
use mcp_transport_core::handler::{
    Handler, InputRequest, InputRequired, LogLevel, Outcome, RequestContext, ServerDescription,
};
use mcp_transport_core::jsonrpc::{ErrorObject, Notification, Request, to_raw};
use mcp_transport_core::sse::{Decoder, SseItem};
use serde_json::{Value, json};

/// How long any single wait in a test may take before it fails.
pub const WAIT: Duration = Duration::from_secs(5);

/// The test handler: `tools/call` with a few tools.
#[derive(Default)]
pub struct TestHandler {
    /// Requests that saw their cancellation.
    pub cancellations: AtomicUsize,
    /// Requests that finished their work.
    pub completions: AtomicUsize,
    /// Notifications the transport passed on.
    pub notifications: Mutex<Vec<String>>,
}

fn arg_u64(args: &Value, name: &str, default: u64) -> u64 {
    args.get(name).and_then(Value::as_u64).unwrap_or(default)
}

#[async_trait]
impl Handler for TestHandler {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({"name": "test-server", "version": "0.0.1"}),
            capabilities: json!({"tools": {}, "logging": {}}),
            instructions: Some("for tests".into()),
        }
    }

    async fn handle(&self, req: Request, cx: RequestContext) -> Outcome {
        if req.method != "tools/call" {
            return Outcome::Error(ErrorObject::method_not_found(&req.method));
        }
        let params: Value = req
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        let name = params["name"].as_str().unwrap_or("").to_owned();
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        match name.as_str() {
            "echo" => Outcome::json(&json!({"echo": args})),
            "progress" => {
                let n = arg_u64(&args, "n", 3);
                let delay = arg_u64(&args, "delay_ms", 0);
                for i in 1..=n {
                    let r = if cx.progress_token.is_some() {
                        cx.progress(i as f64, Some(n as f64), Some(&format!("step {i}")))
                            .await
                    } else {
                        cx.log(LogLevel::Info, Some("test"), json!({"step": i}))
                            .await
                    };
                    if r.is_err() {
                        return Outcome::Error(ErrorObject::internal("send failed"));
                    }
                    if delay > 0 {
                        tokio::time::sleep(Duration::from_millis(delay)).await;
                    }
                }
                self.completions.fetch_add(1, Ordering::SeqCst);
                Outcome::json(&json!({"steps": n}))
            }
            "slow" => {
                let ms = arg_u64(&args, "ms", 1000);
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => {
                        self.completions.fetch_add(1, Ordering::SeqCst);
                        Outcome::json(&json!({"slept": ms}))
                    }
                    () = cx.cancelled() => {
                        self.cancellations.fetch_add(1, Ordering::SeqCst);
                        Outcome::Error(ErrorObject::internal("cancelled"))
                    }
                }
            }
            "ask" | "ask_sampling" => {
                if let Some(answers) = &cx.input_responses {
                    let answer: Value = answers
                        .get("confirm")
                        .and_then(|r| serde_json::from_str(r.get()).ok())
                        .unwrap_or(Value::Null);
                    return Outcome::json(&json!({
                        "answer": answer,
                        "state": cx.request_state,
                    }));
                }
                let (method, params) = if name == "ask" {
                    (
                        "elicitation/create",
                        json!({
                            "message": "Proceed?",
                            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
                        }),
                    )
                } else {
                    (
                        "sampling/createMessage",
                        json!({"messages": [], "maxTokens": 10}),
                    )
                };
                let mut requests = BTreeMap::new();
                requests.insert(
                    "confirm".to_owned(),
                    InputRequest {
                        method: method.into(),
                        params: Some(to_raw(&params).unwrap()),
                    },
                );
                Outcome::InputRequired(InputRequired {
                    requests,
                    state: Some("round-1".into()),
                })
            }
            "ask_forever" => {
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
            "close_stream" => {
                let delay = arg_u64(&args, "delay_ms", 100);
                let _ = cx
                    .log(LogLevel::Info, None, json!({"phase": "before"}))
                    .await;
                let closed = cx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(delay)).await;
                let _ = cx
                    .log(LogLevel::Info, None, json!({"phase": "after"}))
                    .await;
                Outcome::json(&json!({"closed": closed}))
            }
            "logs" => {
                for level in [LogLevel::Debug, LogLevel::Info, LogLevel::Error] {
                    let _ = cx.log(level, None, json!({"level": level})).await;
                }
                Outcome::json(&json!({}))
            }
            other => Outcome::Error(ErrorObject::invalid_params(format!("no tool {other}"))),
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
    pub server: LegacyServer,
    /// The handler.
    pub handler: Arc<TestHandler>,
    /// The HTTP client.
    pub http: reqwest::Client,
    /// The port.
    pub port: u16,
}

/// Starts a server with `config` at `/mcp` on 127.0.0.1:0.
pub async fn start(config: ServerConfig) -> TestServer {
    let handler = Arc::new(TestHandler::default());
    let server = LegacyServer::new(handler.clone(), config);
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
        port,
    }
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
    /// A POST with the right Accept and Content-Type.
    pub fn post(&self) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
    }

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
        assert!(
            resp.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
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

/// One thing read from an SSE body.
#[derive(Clone, Debug, PartialEq)]
pub enum Rec {
    /// An event: the id in force and the data.
    Event {
        /// The last event id in force at dispatch.
        id: String,
        /// The data.
        data: String,
    },
    /// A `retry` field.
    Retry(u64),
}

impl Rec {
    /// The event's data as JSON (panics for priming events and retries).
    pub fn json(&self) -> Value {
        match self {
            Rec::Event { data, .. } => serde_json::from_str(data).unwrap(),
            Rec::Retry(_) => panic!("not an event: {self:?}"),
        }
    }

    /// Whether this is a priming event (empty data).
    pub fn is_priming(&self) -> bool {
        matches!(self, Rec::Event { data, .. } if data.is_empty())
    }

    /// The event id (panics for retries).
    pub fn id(&self) -> &str {
        match self {
            Rec::Event { id, .. } => id,
            Rec::Retry(_) => panic!("not an event"),
        }
    }
}

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// Reads an SSE response incrementally.
pub struct SseReader {
    stream: ByteStream,
    decoder: Decoder,
    queue: VecDeque<Rec>,
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

    /// The next record, or `None` at the end of the body.
    pub async fn next(&mut self) -> Option<Rec> {
        loop {
            if let Some(r) = self.queue.pop_front() {
                return Some(r);
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
                match item {
                    SseItem::Event(e) => self.queue.push_back(Rec::Event {
                        id: e.last_event_id,
                        data: e.data,
                    }),
                    SseItem::Retry(ms) => self.queue.push_back(Rec::Retry(ms)),
                    SseItem::LastEventId(_) => {}
                }
            }
        }
    }

    /// The next message event (skipping priming events and retries).
    pub async fn next_message(&mut self) -> Option<Rec> {
        while let Some(r) = self.next().await {
            if matches!(&r, Rec::Event { data, .. } if !data.is_empty()) {
                return Some(r);
            }
        }
        None
    }

    /// Everything until the end of the body.
    pub async fn rest(&mut self) -> Vec<Rec> {
        let mut out = Vec::new();
        while let Some(r) = self.next().await {
            out.push(r);
        }
        out
    }
}

/// Reads a whole SSE response.
pub async fn read_all(resp: reqwest::Response) -> (Vec<Rec>, String) {
    let mut r = SseReader::new(resp);
    let recs = r.rest().await;
    (recs, r.raw)
}

/// The message events of `recs`, as JSON.
pub fn messages(recs: &[Rec]) -> Vec<Value> {
    recs.iter()
        .filter(|r| matches!(r, Rec::Event { data, .. } if !data.is_empty()))
        .map(Rec::json)
        .collect()
}

/// Whether `recs` contains a `retry`.
pub fn has_retry(recs: &[Rec]) -> bool {
    recs.iter().any(|r| matches!(r, Rec::Retry(_)))
}

/// The last event id in `recs`.
pub fn last_id(recs: &[Rec]) -> String {
    recs.iter()
        .rev()
        .find_map(|r| match r {
            Rec::Event { id, .. } => Some(id.clone()),
            Rec::Retry(_) => None,
        })
        .expect("no event with an id")
}

/// Whether a message is the response to request `id`.
pub fn is_response(m: &Value, id: i64) -> bool {
    m["id"] == json!(id) && (m.get("result").is_some() || m.get("error").is_some())
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

/// Polls `f` until it is true (fails after [`WAIT`]).
pub async fn eventually(mut f: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !f() {
        assert!(start.elapsed() < WAIT, "condition never became true");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The JSON body of an error response, checked to have no id.
pub async fn error_body(resp: reqwest::Response) -> Value {
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    assert!(v.get("id").is_none(), "an HTTP error body has no id: {v}");
    assert!(v["error"]["code"].is_i64(), "{v}");
    v
}
