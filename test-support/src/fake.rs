//! Scriptable fake MCP servers for the client tests, and the answers they
//! send.
//!
//! A [`Fake`] records every request ([`Seen`]) and answers it with the
//! test's closure; the helpers build the answers: JSON-RPC messages
//! ([`result`], [`rpc_error`], [`notification`], [`server_request`]), plain
//! HTTP answers ([`status`], [`status_json`], [`json_ok`]) and SSE bodies
//! with fault injection ([`SseBody`]: end, abort the connection, hang,
//! report when the client went away).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::response::Response;
use axum::routing::any;
use http::{HeaderMap, Method, StatusCode};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::server::{Seen, TestServer};

type Answer = dyn Fn(&Seen) -> Response + Send + Sync;

#[derive(Clone)]
struct AppState {
    log: Arc<Mutex<Vec<Seen>>>,
    answer: Arc<Answer>,
}

/// A running fake server at `/mcp` on 127.0.0.1:0; stops when dropped.
pub struct Fake {
    /// The MCP endpoint.
    pub url: String,
    log: Arc<Mutex<Vec<Seen>>>,
    _server: TestServer,
}

impl Fake {
    /// Starts a server answering every request with `answer` (after
    /// recording it).
    pub async fn start(answer: impl Fn(&Seen) -> Response + Send + Sync + 'static) -> Fake {
        let log = Arc::new(Mutex::new(Vec::new()));
        let state = AppState {
            log: log.clone(),
            answer: Arc::new(answer),
        };
        let app = axum::Router::new()
            .route("/mcp", any(handle))
            .with_state(state);
        let server = TestServer::serve(app).await;
        Fake {
            url: server.url(),
            log,
            _server: server,
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

    /// The requests of JSON-RPC `method`.
    pub fn rpc(&self, method: &str) -> Vec<Seen> {
        self.seen_where(|s| s.rpc_method() == Some(method))
    }
}

async fn handle(
    State(state): State<AppState>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let seen = Seen::new(method, headers, &body);
    state.log.lock().unwrap().push(seen.clone());
    (state.answer)(&seen)
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
pub fn json_ok(body: &Value) -> Response {
    status_json(StatusCode::OK, body)
}

/// How an SSE body ends after its chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// A clean end of the body (the server closed the stream).
    Eof,
    /// The connection is aborted mid-body (a network failure), after what
    /// was sent had time to be flushed.
    Abort,
    /// The body fails at once (hyper may not even send the headers).
    AbortNow,
    /// The body never ends and sends nothing more.
    Hang,
    /// The body never ends and sends a keep-alive comment every 50 ms.
    KeepAlive,
}

/// How long an [`Ending::Abort`] waits by default so that hyper flushes
/// what was sent (it writes when the body is pending) before the
/// connection breaks.
const FLUSH: Duration = Duration::from_millis(30);

/// The keep-alive period of [`Ending::KeepAlive`].
const KEEPALIVE: Duration = Duration::from_millis(50);

/// A 200 `text/event-stream` answer made of raw SSE text chunks (one body
/// frame each, exactly as given), then an [`Ending`].
#[must_use]
pub struct SseBody {
    chunks: Vec<String>,
    ending: Ending,
    flush: Duration,
    ended: Option<Arc<Mutex<Vec<Instant>>>>,
    guard: Option<DropGuard>,
}

impl SseBody {
    /// These chunks, then a clean end.
    pub fn new(chunks: Vec<String>) -> SseBody {
        SseBody {
            chunks,
            ending: Ending::Eof,
            flush: FLUSH,
            ended: None,
            guard: None,
        }
    }

    /// Ends as `ending` says.
    pub fn ending(mut self, ending: Ending) -> SseBody {
        self.ending = ending;
        self
    }

    /// How long an [`Ending::Abort`] waits before breaking the connection
    /// (30 ms unless set; tests on a paused clock count it).
    pub fn abort_after(mut self, flush: Duration) -> SseBody {
        self.flush = flush;
        self
    }

    /// Pushes the moment the body ends (or starts hanging) to `ended`.
    pub fn record_end(mut self, ended: Option<Arc<Mutex<Vec<Instant>>>>) -> SseBody {
        self.ended = ended;
        self
    }

    /// Holds `guard` in the body, so its [`DropFlag`] tells when the client
    /// went away.
    pub fn guard(mut self, guard: Option<DropGuard>) -> SseBody {
        self.guard = guard;
        self
    }

    /// The HTTP answer.
    pub fn response(self) -> Response {
        enum Step {
            Chunk(Bytes),
            End,
            KeepAlive,
        }
        let SseBody {
            chunks,
            ending,
            flush,
            ended,
            guard,
        } = self;
        let mut steps: VecDeque<Step> = chunks
            .into_iter()
            .map(|c| Step::Chunk(Bytes::from(c)))
            .collect();
        steps.push_back(Step::End);
        let stream = futures_util::stream::unfold((steps, guard), move |(mut steps, guard)| {
            let ended = ended.clone();
            async move {
                match steps.pop_front()? {
                    Step::Chunk(c) => Some((Ok::<_, std::io::Error>(c), (steps, guard))),
                    Step::KeepAlive => {
                        tokio::time::sleep(KEEPALIVE).await;
                        steps.push_back(Step::KeepAlive);
                        Some((Ok(Bytes::from_static(b":\n\n")), (steps, guard)))
                    }
                    Step::End => {
                        if ending == Ending::Abort {
                            tokio::time::sleep(flush).await;
                        }
                        if let Some(ended) = &ended {
                            ended.lock().unwrap().push(Instant::now());
                        }
                        let cut = || Err(std::io::Error::other("cut by the test"));
                        match ending {
                            Ending::Eof => None,
                            Ending::Abort | Ending::AbortNow => Some((cut(), (steps, guard))),
                            Ending::Hang => {
                                std::future::pending::<()>().await;
                                None
                            }
                            Ending::KeepAlive => {
                                tokio::time::sleep(KEEPALIVE).await;
                                steps.push_back(Step::KeepAlive);
                                Some((Ok(Bytes::from_static(b":\n\n")), (steps, guard)))
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
    /// A guard to put in a body.
    pub fn guard(&self) -> DropGuard {
        DropGuard(self.clone())
    }

    /// Whether the guard was dropped.
    pub fn is_set(&self) -> bool {
        self.dropped.load(Ordering::SeqCst)
    }

    /// Waits up to `limit` for the drop; returns whether it happened.
    pub async fn wait(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
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
