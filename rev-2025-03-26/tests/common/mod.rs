//! Shared pieces of the end-to-end tests: our server (on 127.0.0.1:0, every
//! HTTP exchange recorded), a small test [`Handler`], raw HTTP helpers for
//! the tests where the wire matters, our client configured for the tests,
//! and a TCP proxy that can cut every live connection.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, header};
use axum::serve::ListenerExt;
use mcp_rev_2025_03_26::{
    self as rev, ClientConfig, LegacyClient, LegacyServer, Profile, ServerConfig,
};
use mcp_transport_core::handler::{
    Handler, InputRequest, InputRequired, LogLevel, Outcome, RequestContext, ServerDescription,
};
use mcp_transport_core::jsonrpc::{ErrorObject, Notification, Request as RpcRequest, to_raw};
use mcp_transport_core::sse::{Decoder, SseItem};
use mcp_transport_core::transport::{InputHandler, StreamEvent};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The bound on any single wait in a test (a hang fails instead of blocking).
pub const WAIT: Duration = Duration::from_secs(5);
/// The client's reconnection backoff in the tests (these revisions send no
/// `retry`).
pub const BACKOFF_MS: u64 = 50;
/// `Accept` of every POST.
pub const ACCEPT_POST: &str = "application/json, text/event-stream";

// ---------------------------------------------------------------------------
// The test handler
// ---------------------------------------------------------------------------

/// The tools of the end-to-end tests:
///
/// | tool | arguments | behaviour |
/// | --- | --- | --- |
/// | `echo` | `{text}` | answers `{"text": text}` |
/// | `countdown` | `{n, interval_ms}` | `n` times: wait, `notifications/progress` (with a token) and `notifications/message` `{"tick": i}`; answers `{"done": n}` |
/// | `slow` | `{ms}` | answers after `ms` unless cancelled (counted) |
/// | `close_stream` | `{}` | `close_sse_stream()`, logs `after`; answers `{"closed": bool}` |
/// | `ask` | `{}` | `elicitation/create` through `Outcome::InputRequired` |
/// | `sample` | `{}` | `sampling/createMessage` through `Outcome::InputRequired` |
#[derive(Default)]
pub struct TestHandler {
    /// Requests that started (any tool).
    pub started: AtomicUsize,
    /// `slow`/`countdown` requests that saw their cancellation.
    pub cancellations: AtomicUsize,
    /// Ticks `countdown` has sent.
    pub ticks: AtomicUsize,
    /// Methods of the notifications the transport passed on, in order.
    pub notifications: Mutex<Vec<String>>,
}

fn arg(args: &Value, key: &str, default: u64) -> u64 {
    args.get(key).and_then(Value::as_u64).unwrap_or(default)
}

impl TestHandler {
    async fn countdown(&self, cx: &RequestContext, args: &Value) -> Outcome {
        let n = arg(args, "n", 3);
        let interval = arg(args, "interval_ms", 10);
        for i in 1..=n {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(interval)) => {}
                () = cx.cancelled() => {
                    self.cancellations.fetch_add(1, Ordering::SeqCst);
                    return Outcome::Error(ErrorObject::internal("cancelled"));
                }
            }
            let _ = cx
                .progress(i as f64, Some(n as f64), Some(&format!("{} left", n - i)))
                .await;
            let _ = cx
                .log(LogLevel::Info, Some("countdown"), json!({ "tick": i }))
                .await;
            self.ticks.fetch_add(1, Ordering::SeqCst);
        }
        Outcome::json(&json!({ "done": n }))
    }

    async fn slow(&self, cx: &RequestContext, args: &Value) -> Outcome {
        let ms = arg(args, "ms", 1000);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => Outcome::json(&json!({ "slept": ms })),
            () = cx.cancelled() => {
                self.cancellations.fetch_add(1, Ordering::SeqCst);
                Outcome::Error(ErrorObject::internal("cancelled"))
            }
        }
    }

    async fn close_stream(&self, cx: &RequestContext) -> Outcome {
        let closed = cx.close_sse_stream();
        tokio::time::sleep(Duration::from_millis(30)).await;
        let _ = cx
            .log(LogLevel::Info, Some("close_stream"), json!("after"))
            .await;
        Outcome::json(&json!({ "closed": closed }))
    }

    fn input(cx: &RequestContext, method: &str, params: Value) -> Outcome {
        if let Some(answers) = &cx.input_responses {
            let answer: Value = answers
                .get("answer")
                .and_then(|a| serde_json::from_str(a.get()).ok())
                .unwrap_or(Value::Null);
            return Outcome::json(&json!({ "answer": answer }));
        }
        let mut requests = BTreeMap::new();
        requests.insert(
            "answer".to_owned(),
            InputRequest {
                method: method.into(),
                params: Some(to_raw(&params).expect("valid JSON")),
            },
        );
        Outcome::InputRequired(InputRequired {
            requests,
            state: None,
        })
    }
}

#[async_trait]
impl Handler for TestHandler {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "rev-2025-03-26-tests", "version": "0.0.1" }),
            capabilities: json!({ "tools": {}, "logging": {} }),
            instructions: None,
        }
    }

    async fn handle(&self, request: RpcRequest, cx: RequestContext) -> Outcome {
        if request.method != "tools/call" {
            return Outcome::Error(ErrorObject::method_not_found(&request.method));
        }
        self.started.fetch_add(1, Ordering::SeqCst);
        let params: Value = request
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        match params["name"].as_str().unwrap_or("") {
            "echo" => Outcome::json(&json!({ "text": args["text"] })),
            "countdown" => self.countdown(&cx, &args).await,
            "slow" => self.slow(&cx, &args).await,
            "close_stream" => self.close_stream(&cx).await,
            "ask" => Self::input(
                &cx,
                "elicitation/create",
                json!({
                    "message": "What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": { "name": { "type": "string" } }
                    }
                }),
            ),
            "sample" => Self::input(
                &cx,
                "sampling/createMessage",
                json!({
                    "messages": [{ "role": "user", "content": { "type": "text", "text": "hi" } }],
                    "maxTokens": 10
                }),
            ),
            other => Outcome::Error(ErrorObject::invalid_params(format!("unknown tool {other}"))),
        }
    }

    async fn notification(&self, notification: Notification) {
        self.notifications
            .lock()
            .unwrap()
            .push(notification.method.clone());
    }
}

// ---------------------------------------------------------------------------
// The server, with every HTTP exchange recorded
// ---------------------------------------------------------------------------

/// One HTTP exchange the server answered.
#[derive(Clone, Debug)]
pub struct Hit {
    /// GET, POST or DELETE.
    pub method: Method,
    /// The JSON-RPC methods of a POST body (several for a batch; none for
    /// responses).
    pub rpc_methods: Vec<String>,
    /// Whether the POST body was a JSON array.
    pub batch: bool,
    /// The `Last-Event-ID` header.
    pub last_event_id: Option<String>,
    /// The `MCP-Session-Id` header.
    pub session_id: Option<String>,
    /// The `MCP-Protocol-Version` header.
    pub protocol_version: Option<String>,
    /// The status answered.
    pub status: u16,
    /// The `Content-Type` answered.
    pub content_type: Option<String>,
    /// When the request arrived.
    pub at: Instant,
}

impl Hit {
    /// A GET resuming a stream.
    pub fn is_resume(&self) -> bool {
        self.method == Method::GET && self.last_event_id.is_some()
    }
}

/// Our server on 127.0.0.1:0.
pub struct TestServer {
    /// The server handle.
    pub server: LegacyServer,
    /// The handler it answers with.
    pub handler: Arc<TestHandler>,
    /// Where it listens.
    pub addr: SocketAddr,
    /// The MCP endpoint.
    pub url: String,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// [`rev::server_config`] for `profile` without keep-alive noise.
pub fn test_config(profile: Profile) -> ServerConfig {
    rev::server_config(profile).with_keepalive(None)
}

impl TestServer {
    /// Starts a server of `profile` with [`test_config`].
    pub async fn profile(profile: Profile) -> TestServer {
        Self::start(test_config(profile)).await
    }

    /// Starts a server with `config` (through [`rev::server`]).
    pub async fn start(config: ServerConfig) -> TestServer {
        let handler = Arc::new(TestHandler::default());
        let server = rev::server(handler.clone(), config);
        Self::serve(server, handler).await
    }

    /// Serves an already built server.
    pub async fn serve(server: LegacyServer, handler: Arc<TestHandler>) -> TestServer {
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let app = {
            let server = server.clone();
            let hits = hits.clone();
            axum::Router::new().route(
                "/mcp",
                axum::routing::any(move |req: Request| {
                    let server = server.clone();
                    let hits = hits.clone();
                    async move { record(&server, &hits, req).await }
                }),
            )
        };
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        TestServer {
            server,
            handler,
            addr,
            url: format!("http://{addr}/mcp"),
            hits,
            task,
        }
    }

    /// Every exchange so far.
    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    /// How many GETs resumed a stream with `Last-Event-ID`.
    pub fn resumes(&self) -> usize {
        self.hits().iter().filter(|h| h.is_resume()).count()
    }

    /// Raw HTTP access to this server.
    pub fn raw(&self) -> Raw {
        Raw {
            http: reqwest::Client::new(),
            url: self.url.clone(),
        }
    }
}

async fn record(
    server: &LegacyServer,
    hits: &Mutex<Vec<Hit>>,
    req: Request,
) -> axum::response::Response {
    let at = Instant::now();
    let (parts, body) = req.into_parts();
    let header_of = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let last_event_id = header_of("last-event-id");
    let session_id = header_of("mcp-session-id");
    let protocol_version = header_of("mcp-protocol-version");
    let bytes = axum::body::to_bytes(body, 16 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let parsed = serde_json::from_slice::<Value>(&bytes).ok();
    let batch = parsed.as_ref().is_some_and(Value::is_array);
    let rpc_methods = match parsed {
        Some(Value::Array(items)) => items,
        Some(v) => vec![v],
        None => Vec::new(),
    }
    .iter()
    .filter_map(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
    .collect();
    let method = parts.method.clone();
    let response = server
        .handle(axum::http::Request::from_parts(parts, Body::from(bytes)))
        .await;
    hits.lock().unwrap().push(Hit {
        method,
        rpc_methods,
        batch,
        last_event_id,
        session_id,
        protocol_version,
        status: response.status().as_u16(),
        content_type: response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        at,
    });
    response
}

// ---------------------------------------------------------------------------
// Raw HTTP, for the tests where the wire matters
// ---------------------------------------------------------------------------

/// A reqwest client aimed at one endpoint.
#[derive(Clone)]
pub struct Raw {
    /// The HTTP client.
    pub http: reqwest::Client,
    /// The MCP endpoint.
    pub url: String,
}

/// A session opened with raw requests.
#[derive(Clone, Debug)]
pub struct RawSession {
    /// `MCP-Session-Id`.
    pub id: String,
    /// The negotiated version.
    pub version: String,
    /// Send `MCP-Protocol-Version: <version>` on later requests.
    pub header: bool,
}

impl Raw {
    /// A POST with the right `Accept` and `Content-Type`, no session.
    pub fn post(&self) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("accept", ACCEPT_POST)
            .header("content-type", "application/json")
    }

    /// A POST in `s` (with its version header when `s.header`).
    pub fn post_in(&self, s: &RawSession) -> reqwest::RequestBuilder {
        let b = self.post().header("mcp-session-id", &s.id);
        if s.header {
            b.header("mcp-protocol-version", &s.version)
        } else {
            b
        }
    }

    /// A GET in `s` (`Accept: text/event-stream`).
    pub fn get_in(&self, s: &RawSession) -> reqwest::RequestBuilder {
        let b = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &s.id);
        if s.header {
            b.header("mcp-protocol-version", &s.version)
        } else {
            b
        }
    }

    /// `initialize` offering `version` with `capabilities`, then
    /// `notifications/initialized`. Later requests send the version header
    /// when the negotiated revision has it.
    pub async fn init_with(&self, version: &str, capabilities: Value) -> RawSession {
        let body = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": { "name": "raw", "version": "0" }
            }
        });
        let resp = self.post().body(body.to_string()).send().await.unwrap();
        assert_eq!(resp.status(), 200, "initialize");
        let id = resp
            .headers()
            .get("mcp-session-id")
            .expect("a session id")
            .to_str()
            .unwrap()
            .to_owned();
        let v: Value = resp.json().await.unwrap();
        let version = v["result"]["protocolVersion"].as_str().unwrap().to_owned();
        let header = rev::ProtocolVersion::parse(&version).has(|f| f.version_header);
        let s = RawSession {
            id,
            version,
            header,
        };
        let resp = self
            .post_in(&s)
            .body(notification("notifications/initialized").to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 202, "notifications/initialized");
        s
    }

    /// [`init_with`](Self::init_with) without capabilities.
    pub async fn init(&self, version: &str) -> RawSession {
        self.init_with(version, json!({})).await
    }
}

/// A `tools/call` request.
pub fn call(id: impl Into<Value>, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
}

/// A notification without params.
pub fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

/// Everything an SSE body says, read to its end (bounded by [`WAIT`]).
pub async fn read_sse(mut resp: reqwest::Response) -> Vec<SseItem> {
    assert_eq!(
        content_type(&resp),
        "text/event-stream",
        "status {}",
        resp.status()
    );
    let mut decoder = Decoder::new();
    let mut items = Vec::new();
    let work = async {
        while let Some(chunk) = resp.chunk().await.expect("the body reads") {
            decoder.feed(&chunk, &mut items).unwrap();
        }
        decoder.finish(&mut items).unwrap();
    };
    tokio::time::timeout(WAIT, work)
        .await
        .expect("the SSE body ended in time");
    items
}

/// The JSON-RPC messages of SSE items (each event's data parsed; events
/// with empty data skipped).
pub fn sse_messages(items: &[SseItem]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|i| match i {
            SseItem::Event(e) if !e.data.is_empty() => {
                Some(serde_json::from_str(&e.data).expect("event data is JSON"))
            }
            _ => None,
        })
        .collect()
}

/// The media type of an answer (without parameters).
pub fn content_type(resp: &reqwest::Response) -> String {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_owned()
}

/// Asserts the answer is 400 with a `-32600`-or-other JSON-RPC error body
/// whose message contains `says`; returns the body.
pub async fn expect_error(resp: reqwest::Response, status: u16, code: i64, says: &str) -> Value {
    assert_eq!(resp.status().as_u16(), status);
    let v: Value = resp.json().await.expect("a JSON error body");
    assert_eq!(v["error"]["code"], code, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains(says), "{message:?} should say {says:?}");
    assert!(v.get("id").is_none(), "an HTTP error body has no id: {v}");
    v
}

// ---------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------

/// Answers `elicitation/create` and `sampling/createMessage`, remembering
/// what it was asked.
#[derive(Default)]
pub struct TestInput {
    /// Methods of the requests answered.
    pub asked: Mutex<Vec<String>>,
}

#[async_trait]
impl InputHandler for TestInput {
    async fn handle(
        &self,
        method: &str,
        _params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        self.asked.lock().unwrap().push(method.to_owned());
        match method {
            "elicitation/create" => {
                Ok(to_raw(&json!({ "action": "accept", "content": { "name": "Ada" } })).unwrap())
            }
            "sampling/createMessage" => Ok(to_raw(&json!({
                "role": "assistant",
                "content": { "type": "text", "text": "hello" },
                "model": "test"
            }))
            .unwrap()),
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

/// [`rev::client_config`] for the tests: declares `sampling` (and
/// `elicitation`, which a 2025-03-26 server ignores), answers through
/// `input`, reconnects after [`BACKOFF_MS`], waits at most [`WAIT`].
pub fn client_config(url: &str, profile: Profile, input: Arc<TestInput>) -> ClientConfig {
    rev::client_config(url, profile)
        .with_capabilities(json!({ "sampling": {}, "elicitation": {} }))
        .with_input_handler(input)
        .with_reconnect_backoff(Duration::from_millis(BACKOFF_MS))
        .with_request_timeout(Some(WAIT))
}

/// Connects our client to `url` with [`client_config`].
pub async fn connect(url: &str, profile: Profile) -> LegacyClient {
    LegacyClient::connect(client_config(url, profile, Arc::default()))
        .await
        .expect("connect")
}

/// `tools/call` params.
pub fn tool(name: &str, args: Value) -> Box<RawValue> {
    to_raw(&json!({ "name": name, "arguments": args })).unwrap()
}

/// The result of a response as JSON (panics on an error response).
pub fn result_of(response: &mcp_transport_core::jsonrpc::Response) -> Value {
    match &response.payload {
        Ok(raw) => serde_json::from_str(raw.get()).unwrap(),
        Err(e) => panic!("error response: {e}"),
    }
}

/// A short description of a notification: `progress i/n`, `log <data>`,
/// or the method.
pub fn describe(n: &Notification) -> String {
    let p: Value = n
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null);
    match n.method.as_str() {
        "notifications/progress" => format!("progress {}/{}", p["progress"], p["total"]),
        "notifications/message" => format!("log {}", p["data"]),
        other => other.to_owned(),
    }
}

/// [`describe`] of every event (server requests as `request <method>`).
pub fn describe_all(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            StreamEvent::Notification(n) => describe(n),
            StreamEvent::ServerRequest(r) => format!("request {}", r.method),
            StreamEvent::Response(_) => "response".to_owned(),
        })
        .collect()
}

/// What `countdown {n}` sends, in order, with or without a progress token.
pub fn countdown_expected(n: u64, progress: bool) -> Vec<String> {
    let mut out = Vec::new();
    for i in 1..=n {
        if progress {
            out.push(format!("progress {i}.0/{n}.0"));
        }
        out.push(format!("log {}", json!({ "tick": i })));
    }
    out
}

/// Waits (bounded by [`WAIT`]) until `cond` holds.
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

// ---------------------------------------------------------------------------
// A TCP proxy that can cut every live connection (the helper of
// rev-2025-11-25's tests, copied: test helpers of another crate cannot be
// shared without a crate of their own)
// ---------------------------------------------------------------------------

/// Forwards bytes between clients and `target`; [`cut`](Self::cut) drops
/// every live connection at once (a network failure, as both ends see it).
pub struct Proxy {
    /// Where it listens.
    pub addr: SocketAddr,
    live: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accepted: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Starts a proxy to `target` on 127.0.0.1:0.
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy addr");
        let live: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accepted = Arc::new(AtomicUsize::new(0));
        let task = {
            let live = live.clone();
            let accepted = accepted.clone();
            tokio::spawn(async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    accepted.fetch_add(1, Ordering::SeqCst);
                    let _ = inbound.set_nodelay(true);
                    let conn = tokio::spawn(async move {
                        let Ok(mut outbound) = TcpStream::connect(target).await else {
                            return;
                        };
                        let _ = outbound.set_nodelay(true);
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    });
                    let mut live = live.lock().unwrap();
                    live.retain(|h| !h.is_finished());
                    live.push(conn);
                }
            })
        };
        Proxy {
            addr,
            live,
            accepted,
            task,
        }
    }

    /// The MCP endpoint through the proxy.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Drops every live connection (both sockets) and returns once they
    /// are closed, so nothing more goes through them; returns how many
    /// were live. New connections are forwarded again.
    pub async fn cut(&self) -> usize {
        let conns: Vec<JoinHandle<()>> = self.live.lock().unwrap().drain(..).collect();
        let live = conns.iter().filter(|h| !h.is_finished()).count();
        for conn in conns {
            conn.abort();
            let _ = conn.await;
        }
        live
    }

    /// How many connections were accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        for conn in self.live.lock().unwrap().drain(..) {
            conn.abort();
        }
    }
}
