//! A scriptable fake 2026-07-28 server (axum on 127.0.0.1:0) for the client
//! tests, with fault injection: every HTTP request is recorded ([`Seen`]) and
//! answered by the test's handler; SSE answers can end, abort the
//! connection, or hang with keep-alives while a [`DropFlag`] reports when
//! the client closed them.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::response::Response;
use axum::routing::any;
use http::{HeaderMap, Method, StatusCode};
use mcp_rev_2026_07_28::client::{ModernClient, ModernClientConfig};
use mcp_transport_core::jsonrpc::{ErrorObject, to_raw};
use mcp_transport_core::transport::InputHandler;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// One HTTP request the fake server received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: Method,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
    pub fn rpc_method(&self) -> Option<&str> {
        self.body.get("method")?.as_str()
    }
    pub fn id(&self) -> Value {
        self.body.get("id").cloned().unwrap_or(Value::Null)
    }
    pub fn params(&self) -> &Value {
        self.body.get("params").unwrap_or(&Value::Null)
    }
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.params().get("_meta")?.get(key)
    }
    pub fn version(&self) -> Option<&str> {
        self.meta("io.modelcontextprotocol/protocolVersion")?
            .as_str()
    }
}

type Handler = dyn Fn(&Seen) -> Response + Send + Sync;

#[derive(Clone)]
struct AppState {
    log: Arc<Mutex<Vec<Seen>>>,
    handler: Arc<Handler>,
}

/// A running fake server.
pub struct Fake {
    pub url: String,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    /// Starts a server answering every request with `handler`.
    pub async fn start(handler: impl Fn(&Seen) -> Response + Send + Sync + 'static) -> Fake {
        let log = Arc::new(Mutex::new(Vec::new()));
        let state = AppState {
            log: log.clone(),
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
            log,
        }
    }

    /// Everything received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }

    /// The POSTs of JSON-RPC `method`.
    pub fn rpc(&self, method: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.rpc_method() == Some(method))
            .collect()
    }

    /// A client for this server.
    pub fn client(&self) -> ModernClient {
        ModernClient::new(self.config()).unwrap()
    }

    /// The default configuration for this server.
    pub fn config(&self) -> ModernClientConfig {
        ModernClientConfig::new(&self.url).with_request_timeout(Some(Duration::from_secs(10)))
    }
}

async fn handle(
    State(state): State<AppState>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let seen = Seen {
        method,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    state.log.lock().unwrap().push(seen.clone());
    (state.handler)(&seen)
}

/// A result response.
pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response.
pub fn rpc_error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({"code": code, "message": message});
    if let Some(d) = data {
        error["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

/// A notification.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// 200 with a JSON body.
pub fn json_ok(body: &Value) -> Response {
    status_json(StatusCode::OK, body)
}

/// A status with a JSON body.
pub fn status_json(code: StatusCode, body: &Value) -> Response {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

/// A status with a text body.
pub fn status(code: StatusCode, body: &str) -> Response {
    Response::builder()
        .status(code)
        .body(Body::from(body.to_owned()))
        .unwrap()
}

/// One SSE event carrying `message`.
pub fn event(message: &Value) -> String {
    format!("data: {message}\n\n")
}

/// A complete SSE answer with these events.
pub fn sse(messages: &[Value]) -> Response {
    sse_raw(messages.iter().map(event).collect(), Tail::End, None)
}

/// How an SSE answer ends after its chunks.
#[derive(Clone, Copy, Debug)]
pub enum Tail {
    /// The body ends normally.
    End,
    /// The connection is aborted (the body fails mid-stream) after the
    /// chunks were flushed.
    Abort,
    /// The body fails at once (hyper may not even send the headers).
    AbortNow,
    /// Keep-alive comments every 50 ms, forever.
    Hang,
}

/// Reports when the body holding its guard is dropped (the client went away).
#[derive(Clone, Default)]
pub struct DropFlag {
    dropped: Arc<AtomicBool>,
    notify: Arc<tokio::sync::Notify>,
}

/// Sets its [`DropFlag`] when dropped.
pub struct DropGuard(DropFlag);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }
}

impl DropFlag {
    pub fn guard(&self) -> DropGuard {
        DropGuard(self.clone())
    }
    pub fn is_set(&self) -> bool {
        self.dropped.load(Ordering::SeqCst)
    }
    /// Waits up to `limit` for the drop.
    pub async fn wait(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if self.is_set() {
                return true;
            }
            let notified = self.notify.notified();
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.is_set();
            }
        }
    }
}

/// An SSE answer made of raw text chunks (sent one per body frame), then `tail`.
pub fn sse_raw(chunks: Vec<String>, tail: Tail, guard: Option<DropGuard>) -> Response {
    let items: VecDeque<Bytes> = chunks.into_iter().map(Bytes::from).collect();
    let stream = futures::stream::unfold(
        (items, tail, guard),
        |(mut items, tail, guard)| async move {
            if let Some(b) = items.pop_front() {
                return Some((Ok::<Bytes, std::io::Error>(b), (items, tail, guard)));
            }
            match tail {
                Tail::End => None,
                Tail::Abort => {
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    Some((
                        Err(std::io::Error::other("injected abort")),
                        (items, Tail::End, guard),
                    ))
                }
                Tail::AbortNow => Some((
                    Err(std::io::Error::other("injected abort")),
                    (items, Tail::End, guard),
                )),
                Tail::Hang => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Some((Ok(Bytes::from_static(b":\n\n")), (items, Tail::Hang, guard)))
                }
            }
        },
    );
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

/// An input handler that records what it was asked and answers from a script.
#[derive(Default)]
pub struct ScriptedInput {
    pub asked: Mutex<Vec<(String, Value)>>,
    /// Answers by method; a missing method is answered with `-32601`.
    pub answers: Vec<(String, Value)>,
}

impl ScriptedInput {
    pub fn new(answers: &[(&str, Value)]) -> Arc<Self> {
        Arc::new(ScriptedInput {
            asked: Mutex::new(Vec::new()),
            answers: answers
                .iter()
                .map(|(m, v)| ((*m).to_owned(), v.clone()))
                .collect(),
        })
    }
    pub fn asked(&self) -> Vec<(String, Value)> {
        self.asked.lock().unwrap().clone()
    }
}

#[async_trait]
impl InputHandler for ScriptedInput {
    async fn handle(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let params = params
            .map(|p| serde_json::from_str(p.get()).unwrap())
            .unwrap_or(Value::Null);
        self.asked.lock().unwrap().push((method.to_owned(), params));
        match self.answers.iter().find(|(m, _)| m == method) {
            Some((_, v)) => Ok(to_raw(v).unwrap()),
            None => Err(ErrorObject::method_not_found(method)),
        }
    }
}

/// Raw params for a request.
pub fn params(v: Value) -> Option<Box<RawValue>> {
    Some(to_raw(&v).unwrap())
}

/// The result of a response, as JSON.
pub fn result_of(r: &mcp_transport_core::jsonrpc::Response) -> Value {
    serde_json::from_str(r.payload.as_ref().expect("a result").get()).unwrap()
}
