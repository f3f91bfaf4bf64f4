//! A 2024-11-05 **HTTP+SSE** server over the era-independent
//! [`Handler`] API: what servers of that era look like to a client, for the
//! compatibility matrix's `s-2024-11-05` column.
//!
//! 2024-11-05 *Transports*, "HTTP with SSE":
//!
//! * "The server MUST provide two endpoints": the SSE endpoint (`GET`) and
//!   the message endpoint (`POST`).
//! * "When a client connects, the server MUST send an `endpoint` event
//!   containing a URI for the client to use for sending messages": here
//!   `<messages path>?sessionId=<id>`.
//! * "Server messages are sent as SSE `message` events, with the message
//!   content encoded as JSON in the event data." A POST is answered
//!   `202 Accepted`; the response goes down the session's stream.
//!
//! The SSE path answers anything but `GET` with 405, as an old server with
//! no Streamable HTTP endpoint does, so a client's Streamable POST is
//! refused and it falls back (2026-07-28 *Streamable HTTP*, "HTTP+SSE
//! Transport (2024-11-05)").
//!
//! 2024-11-05 has no elicitation: a `tools/call` whose handler asks for
//! client input ends with a tool execution error (`isError: true`). There
//! are no event ids and no resumption. Bounded: at most
//! [`MAX_SESSIONS`] sessions, each stream's queue [`QUEUE`] messages deep
//! (a handler's sends wait when it is full).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::StatusCode;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::handler::{
    ClientDescription, Handler, LogLevel, Outcome, RequestContext, RequestSink, SendError,
};
use mcp_transport_core::jsonrpc::{
    ErrorObject, Message, Notification, RequestId, Response as RpcResponse, parse_message, to_raw,
};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;

/// The most sessions at once; one more `GET` is answered 503.
pub const MAX_SESSIONS: usize = 1000;
/// The depth of a session stream's queue.
pub const QUEUE: usize = 64;
/// The largest POST body accepted.
const MAX_BODY: usize = 4 * 1024 * 1024;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Session {
    tx: mpsc::Sender<String>,
    client: Mutex<Arc<ClientDescription>>,
    running: Mutex<HashMap<String, CancellationToken>>,
}

struct Shared {
    handler: Arc<dyn Handler>,
    messages_path: String,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    next: AtomicU64,
}

/// The server (cheap to clone).
#[derive(Clone)]
pub struct HttpSseServer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for HttpSseServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSseServer").finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct SessionQuery {
    #[serde(rename = "sessionId")]
    session_id: String,
}

impl HttpSseServer {
    /// A server for `handler`, its message endpoint at `messages_path`.
    pub fn new(handler: Arc<dyn Handler>, messages_path: impl Into<String>) -> Self {
        HttpSseServer {
            shared: Arc::new(Shared {
                handler,
                messages_path: messages_path.into(),
                sessions: Mutex::default(),
                next: AtomicU64::new(1),
            }),
        }
    }

    /// The routes: `GET sse_path` opens a session's stream (other methods
    /// there are 405); `POST <messages path>?sessionId=` takes a message.
    pub fn router(&self, sse_path: &str) -> Router {
        Router::new()
            .route(
                sse_path,
                get(open).fallback(|| async {
                    (
                        StatusCode::METHOD_NOT_ALLOWED,
                        [(http::header::ALLOW, "GET")],
                        "Method Not Allowed: this is an HTTP+SSE (2024-11-05) server",
                    )
                }),
            )
            .route(&self.shared.messages_path.clone(), post(message))
            .with_state(self.shared.clone())
    }

    /// Sends `notification` on every session's stream; returns on how many
    /// it was queued.
    pub fn publish(&self, notification: &Notification) -> usize {
        let text = Message::Notification(notification.clone()).to_json();
        lock(&self.shared.sessions)
            .values()
            .filter(|s| s.tx.try_send(text.clone()).is_ok())
            .count()
    }

    /// How many sessions have a stream open.
    pub fn session_count(&self) -> usize {
        lock(&self.shared.sessions).len()
    }
}

/// Removes the session when its stream is dropped.
struct Closing(Arc<Shared>, String);

impl Drop for Closing {
    fn drop(&mut self) {
        if let Some(s) = lock(&self.0.sessions).remove(&self.1) {
            for t in lock(&s.running).values() {
                t.cancel();
            }
        }
    }
}

async fn open(State(shared): State<Arc<Shared>>) -> Response {
    let id = format!("s{}", shared.next.fetch_add(1, Ordering::Relaxed));
    let (tx, rx) = mpsc::channel(QUEUE);
    {
        let mut sessions = lock(&shared.sessions);
        if sessions.len() >= MAX_SESSIONS {
            return (StatusCode::SERVICE_UNAVAILABLE, "too many sessions").into_response();
        }
        sessions.insert(
            id.clone(),
            Arc::new(Session {
                tx,
                client: Mutex::new(Arc::new(ClientDescription {
                    info: None,
                    capabilities: json!({}),
                })),
                running: Mutex::default(),
            }),
        );
    }
    let endpoint = format!("{}?sessionId={id}", shared.messages_path);
    let first = Bytes::from(format!("event: endpoint\ndata: {endpoint}\n\n"));
    let closing = Closing(shared, id);
    let body = futures_util::stream::unfold(
        (Some(first), rx, closing),
        |(first, mut rx, closing)| async move {
            if let Some(first) = first {
                return Some((
                    Ok::<Bytes, std::convert::Infallible>(first),
                    (None, rx, closing),
                ));
            }
            let text = rx.recv().await?;
            let event = Bytes::from(format!("event: message\ndata: {text}\n\n"));
            Some((Ok(event), (None, rx, closing)))
        },
    );
    (
        [
            (http::header::CONTENT_TYPE, "text/event-stream"),
            (http::header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

async fn message(
    State(shared): State<Arc<Shared>>,
    Query(q): Query<SessionQuery>,
    body: Body,
) -> Response {
    let Some(session) = lock(&shared.sessions).get(&q.session_id).cloned() else {
        return (StatusCode::NOT_FOUND, "no such session").into_response();
    };
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "body too large").into_response();
    };
    let text = String::from_utf8_lossy(&bytes);
    let msg = match parse_message(&text) {
        Ok(m) => m,
        Err(e) => return (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    };
    match msg {
        Message::Request(req) => match req.method.as_str() {
            "initialize" => {
                let v: serde_json::Value = req
                    .params
                    .as_deref()
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or_default();
                *lock(&session.client) = Arc::new(ClientDescription {
                    info: v.get("clientInfo").cloned(),
                    capabilities: v.get("capabilities").cloned().unwrap_or(json!({})),
                });
                let d = shared.handler.describe();
                let result = json!({
                    "protocolVersion": ProtocolVersion::V2024_11_05.as_str(),
                    "capabilities": d.capabilities,
                    "serverInfo": d.info,
                });
                answer(&session, RpcResponse::result(req.id, raw(&result))).await;
            }
            "ping" => answer(&session, RpcResponse::result(req.id, raw(&json!({})))).await,
            _ => {
                let cancel = CancellationToken::new();
                lock(&session.running).insert(key(&req.id), cancel.clone());
                tokio::spawn(run(shared.clone(), session.clone(), req, cancel));
            }
        },
        Message::Notification(n) if n.method == "notifications/cancelled" => {
            let v: serde_json::Value = n
                .params
                .as_deref()
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or_default();
            if let Some(t) = lock(&session.running).get(&v["requestId"].to_string()) {
                t.cancel();
            }
        }
        Message::Notification(n) => shared.handler.notification(n).await,
        Message::Response(_) => {}
    }
    StatusCode::ACCEPTED.into_response()
}

fn key(id: &RequestId) -> String {
    serde_json::to_value(id).unwrap_or_default().to_string()
}

fn raw(v: &serde_json::Value) -> Box<serde_json::value::RawValue> {
    to_raw(v).unwrap_or_else(|_| to_raw(&json!({})).expect("an empty object serializes"))
}

async fn answer(session: &Session, response: RpcResponse) {
    let _ = session.tx.send(Message::Response(response).to_json()).await;
}

/// A request's messages go down the session's stream.
struct Sink {
    tx: mpsc::Sender<String>,
    cancel: CancellationToken,
}

#[async_trait]
impl RequestSink for Sink {
    async fn send(&self, notification: Notification) -> Result<(), SendError> {
        if self.cancel.is_cancelled() {
            return Err(SendError::Finished);
        }
        self.tx
            .send(Message::Notification(notification).to_json())
            .await
            .map_err(|_| SendError::Finished)
    }

    fn log_level(&self) -> Option<LogLevel> {
        Some(LogLevel::Debug)
    }
}

async fn run(
    shared: Arc<Shared>,
    session: Arc<Session>,
    req: mcp_transport_core::jsonrpc::Request,
    cancel: CancellationToken,
) {
    let client = lock(&session.client).clone();
    let sink = Arc::new(Sink {
        tx: session.tx.clone(),
        cancel: cancel.clone(),
    });
    let mut cx = RequestContext::new(
        ProtocolVersion::V2024_11_05,
        req.id.clone(),
        client,
        cancel.clone(),
        sink,
    );
    cx.progress_token = req
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str::<serde_json::Value>(p.get()).ok())
        .and_then(|v| v.pointer("/_meta/progressToken").cloned());
    let id = req.id.clone();
    let method = req.method.clone();
    // The handler is polled first, so one that watches its cancellation
    // sees it before it is dropped.
    let outcome = tokio::select! {
        biased;
        o = shared.handler.handle(req, cx) => Some(o),
        () = cancel.cancelled() => None,
    };
    lock(&session.running).remove(&key(&id));
    let response = match outcome {
        // Cancelled: no response ("Not send a response for the cancelled
        // request").
        None => return,
        Some(_) if cancel.is_cancelled() => return,
        Some(Outcome::Result(r)) => RpcResponse::result(id, r),
        Some(Outcome::Error(e)) => RpcResponse::error(Some(id), e),
        Some(Outcome::InputRequired(_)) if method == "tools/call" => RpcResponse::result(
            id,
            raw(&json!({
                "content": [{ "type": "text", "text": "client input (elicitation) does not exist in protocol revision 2024-11-05" }],
                "isError": true,
            })),
        ),
        Some(Outcome::InputRequired(_)) => RpcResponse::error(
            Some(id),
            ErrorObject::new(
                -32601,
                "client input (elicitation) does not exist in protocol revision 2024-11-05",
            ),
        ),
    };
    answer(&session, response).await;
}
