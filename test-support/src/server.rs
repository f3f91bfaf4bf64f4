//! A server on 127.0.0.1:0 for any axum [`Router`], and a recorder of the
//! HTTP exchanges it answers.
//!
//! [`TestServer`] binds, spawns and gives the URL of any router;
//! [`EngineServer`] adds the engine and its [`TestHandler`], so each test
//! suite keeps only a thin wrapper that builds its engine. [`Hits`] wraps a router so every exchange is
//! recorded as a [`Hit`] (request headers and JSON-RPC methods, answer
//! status and content type, arrival time).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use axum::serve::ListenerExt;
use http::{HeaderMap, Method, header};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::handler::TestHandler;

/// The largest request body a recorder reads.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// An axum app served on 127.0.0.1:0 (`TCP_NODELAY` on every connection);
/// stops when dropped.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl TestServer {
    /// Binds 127.0.0.1:0 and serves `app` there.
    pub async fn serve(app: Router) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        TestServer { addr, task }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint, `http://<addr>/mcp` (every test app mounts its
    /// endpoint at `/mcp`).
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl TestServer {
    /// Leaves the server running until the runtime ends (nobody aborts its
    /// task) and gives its MCP endpoint: for tests that only need a URL.
    pub fn detach(self) -> String {
        let url = self.url();
        // Forgetting the handle detaches the task; the only leak is the
        // handle itself.
        std::mem::forget(self);
        url
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// An MCP engine (any server type: session-based, stateless,
/// multi-revision) with its [`TestHandler`], served at `/mcp` on
/// 127.0.0.1:0; stops when dropped. Each suite wraps it in a newtype that
/// builds its engine and adds its raw requests.
pub struct EngineServer<E> {
    /// The engine.
    pub server: E,
    /// The handler it answers with.
    pub handler: Arc<TestHandler>,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its port.
    pub port: u16,
    /// The MCP endpoint.
    pub url: String,
    /// An HTTP client for raw requests.
    pub http: reqwest::Client,
    hits: Hits,
    _http: TestServer,
}

impl<E> EngineServer<E> {
    /// Serves `app` (which mounts `server` at `/mcp`).
    pub async fn serve(server: E, handler: Arc<TestHandler>, app: Router) -> Self {
        Self::serve_with(server, handler, app, Hits::default()).await
    }

    /// [`serve`](Self::serve) with every exchange recorded ([`hits`](Self::hits)).
    /// Request bodies are buffered (up to 16 MiB) to be recorded.
    pub async fn serve_recorded(server: E, handler: Arc<TestHandler>, app: Router) -> Self {
        let hits = Hits::default();
        let app = hits.record(app);
        Self::serve_with(server, handler, app, hits).await
    }

    async fn serve_with(server: E, handler: Arc<TestHandler>, app: Router, hits: Hits) -> Self {
        let http = TestServer::serve(app).await;
        EngineServer {
            server,
            handler,
            addr: http.addr(),
            port: http.addr().port(),
            url: http.url(),
            http: reqwest::Client::new(),
            hits,
            _http: http,
        }
    }

    /// A POST to the endpoint with `Accept: application/json,
    /// text/event-stream` and `Content-Type: application/json`.
    pub fn post(&self) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
    }

    /// Every exchange so far (with [`serve_recorded`](Self::serve_recorded)).
    pub fn hits(&self) -> Vec<Hit> {
        self.hits.all()
    }

    /// How many GETs resumed a stream with `Last-Event-ID`.
    pub fn resumes(&self) -> usize {
        self.hits.resumes()
    }
}

/// One HTTP request a test server received.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The HTTP method.
    pub method: Method,
    /// The request headers.
    pub headers: HeaderMap,
    /// The body, when it is JSON.
    pub body: Option<Value>,
    /// When the request arrived (tokio's clock).
    pub at: Instant,
}

static NULL: Value = Value::Null;

impl Seen {
    /// Parses what arrived.
    pub fn new(method: Method, headers: HeaderMap, body: &[u8]) -> Seen {
        Seen {
            method,
            headers,
            body: serde_json::from_slice(body).ok(),
            at: Instant::now(),
        }
    }

    /// A header's value, when it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The JSON-RPC method of a (non-batch) body.
    pub fn rpc_method(&self) -> Option<&str> {
        self.body.as_ref()?.get("method")?.as_str()
    }

    /// The JSON-RPC id of a (non-batch) body.
    pub fn rpc_id(&self) -> Option<&Value> {
        self.body.as_ref()?.get("id")
    }

    /// The JSON-RPC id, `null` when there is none.
    pub fn id(&self) -> Value {
        self.rpc_id().cloned().unwrap_or(Value::Null)
    }

    /// The JSON-RPC `params`, `null` when there are none.
    pub fn params(&self) -> &Value {
        self.body
            .as_ref()
            .and_then(|b| b.get("params"))
            .unwrap_or(&NULL)
    }

    /// A member of `params._meta`.
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.params().get("_meta")?.get(key)
    }

    /// The protocol version in the request metadata (2026-07-28).
    pub fn version(&self) -> Option<&str> {
        self.meta("io.modelcontextprotocol/protocolVersion")?
            .as_str()
    }

    /// A GET.
    pub fn is_get(&self) -> bool {
        self.method == Method::GET
    }

    /// A POST of JSON-RPC `method`.
    pub fn is_rpc(&self, method: &str) -> bool {
        self.method == Method::POST && self.rpc_method() == Some(method)
    }

    /// A POSTed JSON-RPC response (an answer to a server request).
    pub fn is_rpc_response(&self) -> bool {
        self.method == Method::POST
            && self.body.as_ref().is_some_and(|b| {
                b.get("method").is_none() && (b.get("result").is_some() || b.get("error").is_some())
            })
    }
}

/// One HTTP exchange a recorded server answered.
#[derive(Clone, Debug)]
pub struct Hit {
    /// GET, POST or DELETE.
    pub method: Method,
    /// The JSON-RPC method of a single-message POST body (`None` for
    /// responses and batches).
    pub rpc_method: Option<String>,
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
    /// Every request header.
    pub headers: HeaderMap,
    /// The status answered.
    pub status: u16,
    /// The `Content-Type` answered.
    pub content_type: Option<String>,
    /// When the request arrived (tokio's clock).
    pub at: Instant,
}

impl Hit {
    /// A GET resuming a stream.
    pub fn is_resume(&self) -> bool {
        self.method == Method::GET && self.last_event_id.is_some()
    }
}

/// The exchanges of a recorded router, in order of completion.
#[derive(Clone, Debug, Default)]
pub struct Hits(Arc<Mutex<Vec<Hit>>>);

impl Hits {
    /// `app` with every exchange recorded here.
    pub fn record(&self, app: Router) -> Router {
        app.layer(axum::middleware::from_fn_with_state(self.clone(), record))
    }

    /// Every exchange so far.
    pub fn all(&self) -> Vec<Hit> {
        self.0.lock().unwrap().clone()
    }

    /// How many GETs resumed a stream with `Last-Event-ID`.
    pub fn resumes(&self) -> usize {
        self.all().iter().filter(|h| h.is_resume()).count()
    }
}

async fn record(State(hits): State<Hits>, req: Request, next: Next) -> Response {
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
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .unwrap_or_default();
    let parsed = serde_json::from_slice::<Value>(&bytes).ok();
    let batch = parsed.as_ref().is_some_and(Value::is_array);
    let method_of = |v: &Value| v.get("method").and_then(Value::as_str).map(str::to_owned);
    let rpc_method = parsed.as_ref().and_then(method_of);
    let rpc_methods = match parsed {
        Some(Value::Array(items)) => items,
        Some(v) => vec![v],
        None => Vec::new(),
    }
    .iter()
    .filter_map(method_of)
    .collect();
    let method = parts.method.clone();
    let headers = parts.headers.clone();
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    hits.0.lock().unwrap().push(Hit {
        method,
        rpc_method,
        rpc_methods,
        batch,
        last_event_id,
        session_id,
        protocol_version,
        headers,
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
