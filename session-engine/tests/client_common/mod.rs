//! A scriptable fake MCP server (axum on 127.0.0.1:0) for the client tests.
//!
//! Every HTTP request is recorded ([`Seen`]); a test's handler answers the
//! requests it cares about and returns `None` for the rest, which get the
//! default legacy behaviour: `initialize` → JSON result with a fresh
//! `MCP-Session-Id` (`sess-1`, `sess-2`, ...), notifications and responses →
//! 202, DELETE → 200, GET → 405, any other request → a JSON result.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::response::Response;
use axum::routing::any;
use http::{HeaderMap, Method, StatusCode};
use mcp_transport_core::jsonrpc::{ErrorObject, to_raw};
use mcp_transport_core::transport::InputHandler;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::time::Instant;

/// One HTTP request the fake server received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: Method,
    pub headers: HeaderMap,
    pub body: Option<Value>,
    pub at: Instant,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    /// The JSON-RPC method of a POST body.
    pub fn rpc_method(&self) -> Option<&str> {
        self.body.as_ref()?.get("method")?.as_str()
    }
    /// The JSON-RPC id of a POST body.
    pub fn rpc_id(&self) -> Option<&Value> {
        self.body.as_ref()?.get("id")
    }
    pub fn is_get(&self) -> bool {
        self.method == Method::GET
    }
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

type Handler = dyn Fn(&Seen) -> Option<Response> + Send + Sync;

#[derive(Clone)]
struct AppState {
    version: String,
    log: Arc<Mutex<Vec<Seen>>>,
    sessions: Arc<AtomicUsize>,
    handler: Arc<Handler>,
}

/// A running fake server.
pub struct Fake {
    pub url: String,
    pub version: String,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    /// Starts a fake server answering `initialize` with `version`.
    pub async fn start(
        version: &str,
        handler: impl Fn(&Seen) -> Option<Response> + Send + Sync + 'static,
    ) -> Fake {
        let log = Arc::new(Mutex::new(Vec::new()));
        let state = AppState {
            version: version.to_owned(),
            log: log.clone(),
            sessions: Arc::new(AtomicUsize::new(0)),
            handler: Arc::new(handler),
        };
        let app = axum::Router::new()
            .route("/mcp", any(handle))
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Fake {
            url: format!("http://{addr}/mcp"),
            version: version.to_owned(),
            log,
        }
    }

    /// Everything received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }

    /// The requests matching `pred`.
    pub fn seen_where(&self, pred: impl Fn(&Seen) -> bool) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| pred(s)).collect()
    }
}

async fn handle(
    State(state): State<AppState>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let seen = Seen {
        method: method.clone(),
        headers,
        body: serde_json::from_slice(&body).ok(),
        at: Instant::now(),
    };
    state.log.lock().unwrap().push(seen.clone());
    if let Some(response) = (state.handler)(&seen) {
        return response;
    }
    default_answer(&state, &seen)
}

fn default_answer(state: &AppState, seen: &Seen) -> Response {
    match seen.method {
        Method::DELETE => status(StatusCode::OK, ""),
        Method::GET => status(StatusCode::METHOD_NOT_ALLOWED, ""),
        Method::POST => {
            if seen.is_rpc("initialize") {
                let n = state.sessions.fetch_add(1, Ordering::SeqCst) + 1;
                let mut r = json_response(&init_result(seen.rpc_id().unwrap(), &state.version));
                r.headers_mut()
                    .insert("mcp-session-id", format!("sess-{n}").parse().unwrap());
                r
            } else if seen.rpc_id().is_none() || seen.is_rpc_response() {
                status(StatusCode::ACCEPTED, "")
            } else {
                json_response(&result(seen.rpc_id().unwrap(), json!({"ok": true})))
            }
        }
        _ => status(StatusCode::METHOD_NOT_ALLOWED, ""),
    }
}

/// An `InitializeResult` response for `id` answering `version`.
pub fn init_result(id: &Value, version: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "0.0.1"},
        }
    })
}

/// A result response.
pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A notification.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// A server-to-client request.
pub fn server_request(id: &str, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// An HTTP answer with a status and a text body.
pub fn status(code: StatusCode, body: &str) -> Response {
    Response::builder()
        .status(code)
        .body(Body::from(body.to_owned()))
        .unwrap()
}

/// An HTTP answer with a status and a JSON body.
pub fn status_json(code: StatusCode, body: &Value) -> Response {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// A 200 JSON answer.
pub fn json_response(body: &Value) -> Response {
    status_json(StatusCode::OK, body)
}

/// How an SSE body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// A clean end of the body (the server closed the stream).
    Eof,
    /// The connection is aborted mid-body (a network failure).
    Abort,
    /// The body never ends.
    Hang,
}

/// A 200 `text/event-stream` answer sending `chunks` (raw SSE text, exactly
/// as given) and then ending as `ending` says; the moment the body ends is
/// pushed to `ended` when given.
pub fn sse(
    chunks: Vec<String>,
    ending: Ending,
    ended: Option<Arc<Mutex<Vec<Instant>>>>,
) -> Response {
    enum Step {
        Chunk(String),
        End,
    }
    let mut steps: VecDeque<Step> = chunks.into_iter().map(Step::Chunk).collect();
    steps.push_back(Step::End);
    let stream = futures::stream::unfold(steps, move |mut steps| {
        let ended = ended.clone();
        async move {
            match steps.pop_front()? {
                Step::Chunk(c) => Some((Ok::<_, std::io::Error>(Bytes::from(c)), steps)),
                Step::End => {
                    if ending == Ending::Abort {
                        // Let hyper flush what was sent (it writes when the
                        // body is pending) before the connection breaks.
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    }
                    if let Some(ended) = &ended {
                        ended.lock().unwrap().push(Instant::now());
                    }
                    match ending {
                        Ending::Eof => None,
                        Ending::Abort => {
                            Some((Err(std::io::Error::other("cut by the test")), steps))
                        }
                        Ending::Hang => {
                            std::future::pending::<()>().await;
                            None
                        }
                    }
                }
            }
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(stream))
        .unwrap()
}

/// One SSE event in the usual framing: `id`, optional `retry`, `data`.
pub fn event(id: Option<&str>, retry: Option<u64>, data: &Value) -> String {
    let mut s = String::new();
    if let Some(id) = id {
        s.push_str(&format!("id: {id}\n"));
    }
    if let Some(ms) = retry {
        s.push_str(&format!("retry: {ms}\n"));
    }
    s.push_str(&format!("data: {data}\n\n"));
    s
}

/// A SEP-1699 priming event: an id and empty data.
pub fn priming(id: &str, retry: Option<u64>) -> String {
    match retry {
        Some(ms) => format!("id: {id}\nretry: {ms}\ndata:\n\n"),
        None => format!("id: {id}\ndata:\n\n"),
    }
}

/// An input handler answering `sampling/createMessage` and counting calls;
/// anything else gets `-32601`.
#[derive(Default)]
pub struct Sampler {
    pub calls: AtomicUsize,
}

#[async_trait]
impl InputHandler for Sampler {
    async fn handle(
        &self,
        method: &str,
        _: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if method == "sampling/createMessage" {
            Ok(to_raw(&json!({
                "role": "assistant",
                "model": "fake-model",
                "content": {"type": "text", "text": "hi"}
            }))
            .unwrap())
        } else {
            Err(ErrorObject::method_not_found(method))
        }
    }
}

/// Bounds a test step so a bug shows as a failure, not a hang: 30 s of
/// *real* time (a plain thread keeps it, so tokio's paused clock, which
/// auto-advances, does not fire it early).
pub async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(30));
        let _ = tx.send(());
    });
    tokio::select! {
        v = fut => v,
        _ = rx => panic!("{what} did not finish in time"),
    }
}
