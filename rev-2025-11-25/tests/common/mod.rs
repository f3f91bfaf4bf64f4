//! Shared pieces of the end-to-end tests: our server (on 127.0.0.1:0, every
//! HTTP exchange recorded), a small test [`Handler`], an [`InputHandler`]
//! for elicitation, our client configured for the tests, and a TCP proxy
//! that can cut every live connection.

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
use futures::StreamExt;
use mcp_rev_2025_11_25::{
    self as rev, ClientConfig, LegacyClient, LegacyServer, PollingExt, ServerConfig,
};
use mcp_transport_core::handler::{
    Handler, InputRequest, InputRequired, LogLevel, Outcome, RequestContext, ServerDescription,
};
use mcp_transport_core::jsonrpc::{
    ErrorObject, Notification, Request as RpcRequest, Response, to_raw,
};
use mcp_transport_core::transport::{
    InputHandler, RequestOptions, ResponseStream, StreamEvent, Transport, TransportError,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// The bound on any single wait in a test (a hang fails instead of blocking).
pub const WAIT: Duration = Duration::from_secs(5);
/// The `retry` the test servers send (and the client's backoff): short, so
/// that polling tests stay fast.
pub const RETRY_MS: u64 = 50;

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
/// | `close_stream` | `{ms}` | log `before`, `close_sse_stream()`, wait `ms`, log `after-1`, `after-2`; answers `{"closed": bool}` |
/// | `ask` | `{}` | `elicitation/create` through `Outcome::InputRequired`; answers with what came back |
#[derive(Default)]
pub struct TestHandler {
    /// Requests that started (any tool).
    pub started: AtomicUsize,
    /// `slow`/`countdown` requests that saw their cancellation.
    pub cancellations: AtomicUsize,
    /// Requests that answered normally.
    pub completions: AtomicUsize,
    /// Rounds of `ask` (1 = asked, 2 = answered).
    pub ask_rounds: AtomicUsize,
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

    async fn close_stream(&self, cx: &RequestContext, args: &Value) -> Outcome {
        let ms = arg(args, "ms", 2 * RETRY_MS);
        let say = |what: &'static str| cx.log(LogLevel::Info, Some("close_stream"), json!(what));
        let _ = say("before").await;
        let closed = cx.close_sse_stream();
        tokio::time::sleep(Duration::from_millis(ms)).await;
        let _ = say("after-1").await;
        let _ = say("after-2").await;
        Outcome::json(&json!({ "closed": closed }))
    }

    fn ask(&self, cx: &RequestContext) -> Outcome {
        self.ask_rounds.fetch_add(1, Ordering::SeqCst);
        if let Some(answers) = &cx.input_responses {
            let answer: Value = answers
                .get("name")
                .and_then(|a| serde_json::from_str(a.get()).ok())
                .unwrap_or(Value::Null);
            return Outcome::json(&json!({ "answer": answer, "state": cx.request_state }));
        }
        let params = json!({
            "message": "What is your name?",
            "requestedSchema": {
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"]
            }
        });
        let mut requests = BTreeMap::new();
        requests.insert(
            "name".to_owned(),
            InputRequest {
                method: "elicitation/create".into(),
                params: Some(to_raw(&params).expect("valid JSON")),
            },
        );
        Outcome::InputRequired(InputRequired {
            requests,
            state: Some("round-1".into()),
        })
    }
}

#[async_trait]
impl Handler for TestHandler {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "rev-2025-11-25-tests", "version": "0.0.1" }),
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
        let outcome = match params["name"].as_str().unwrap_or("") {
            "echo" => Outcome::json(&json!({ "text": args["text"] })),
            "countdown" => self.countdown(&cx, &args).await,
            "slow" => self.slow(&cx, &args).await,
            "close_stream" => self.close_stream(&cx, &args).await,
            "ask" => self.ask(&cx),
            other => Outcome::Error(ErrorObject::invalid_params(format!("unknown tool {other}"))),
        };
        if matches!(outcome, Outcome::Result(_)) {
            self.completions.fetch_add(1, Ordering::SeqCst);
        }
        outcome
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
    /// The JSON-RPC method of a POST body (`None` for responses).
    pub rpc_method: Option<String>,
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

/// Our server of this revision on 127.0.0.1:0.
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

/// [`rev::server_config`] with a short `retry` and no keep-alive noise.
pub fn test_config() -> ServerConfig {
    rev::server_config()
        .with_retry_ms(RETRY_MS)
        .with_keepalive(None)
}

/// [`test_config`] with a disconnect policy given as text.
pub fn polling_config(policy: &str) -> ServerConfig {
    test_config().with_disconnect(policy.parse().expect("a valid policy"))
}

impl TestServer {
    /// Starts a server with `config`.
    pub async fn start(config: ServerConfig) -> TestServer {
        let handler = Arc::new(TestHandler::default());
        let server = rev::server(handler.clone(), config);
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

    /// The content type of the answer to the POST of the `n`-th
    /// `tools/call` (0-based).
    pub fn tools_call_content_type(&self, n: usize) -> Option<String> {
        self.hits()
            .into_iter()
            .filter(|h| h.rpc_method.as_deref() == Some("tools/call"))
            .nth(n)
            .and_then(|h| h.content_type)
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
    let rpc_method = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned));
    let method = parts.method.clone();
    let response = server
        .handle(axum::http::Request::from_parts(parts, Body::from(bytes)))
        .await;
    hits.lock().unwrap().push(Hit {
        method,
        rpc_method,
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
// The client
// ---------------------------------------------------------------------------

/// Answers `elicitation/create` with a name and remembers what it was asked.
#[derive(Default)]
pub struct TestInput {
    /// `(method, params)` of every request answered.
    pub asked: Mutex<Vec<(String, Value)>>,
}

#[async_trait]
impl InputHandler for TestInput {
    async fn handle(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params: Value = params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        self.asked.lock().unwrap().push((method.to_owned(), params));
        match method {
            "elicitation/create" => {
                Ok(to_raw(&json!({ "action": "accept", "content": { "name": "Ada" } })).unwrap())
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

/// [`rev::client_config`] for the tests: declares `elicitation`, answers
/// through `input`, reconnects after [`RETRY_MS`] when no `retry` was sent.
pub fn client_config(url: &str, input: Arc<TestInput>) -> ClientConfig {
    rev::client_config(url)
        .with_capabilities(json!({ "elicitation": {} }))
        .with_input_handler(input)
        .with_reconnect_backoff(Duration::from_millis(RETRY_MS))
        .with_request_timeout(Some(WAIT))
}

/// Connects our client to `url` with [`client_config`].
pub async fn connect(url: &str) -> LegacyClient {
    LegacyClient::connect(client_config(url, Arc::default()))
        .await
        .expect("connect")
}

/// `tools/call` of `tool` with `args`.
pub async fn call(
    client: &LegacyClient,
    tool: &str,
    args: Value,
    progress: bool,
) -> Result<ResponseStream, TransportError> {
    let params = to_raw(&json!({ "name": tool, "arguments": args })).unwrap();
    client
        .request(
            "tools/call",
            Some(params),
            RequestOptions {
                progress,
                ..RequestOptions::default()
            },
        )
        .await
}

/// Everything a request's stream yielded before its response, and the
/// response (bounded by [`WAIT`]).
pub async fn collect(
    mut stream: ResponseStream,
) -> Result<(Vec<StreamEvent>, Response), TransportError> {
    let mut events = Vec::new();
    let work = async {
        while let Some(item) = stream.next().await {
            match item? {
                StreamEvent::Response(r) => return Ok(r),
                other => events.push(other),
            }
        }
        Err(TransportError::PeerMisbehaved(
            mcp_transport_core::transport::Misbehaviour::EndedWithout {
                what: "the stream".into(),
                missing: "a response".into(),
            },
        ))
    };
    let response = tokio::time::timeout(WAIT, work)
        .await
        .expect("the request's stream did not finish in time")?;
    Ok((events, response))
}

/// The result of a response as JSON (panics on an error response).
pub fn result_of(response: &Response) -> Value {
    match &response.payload {
        Ok(raw) => serde_json::from_str(raw.get()).unwrap(),
        Err(e) => panic!("error response: {e}"),
    }
}

/// A short description of a notification, for comparing sequences:
/// `progress i/n`, `log <data>`, or the method.
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
// A TCP proxy that can cut every live connection
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
