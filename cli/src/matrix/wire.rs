//! What went over the wire: every HTTP exchange the server under test saw,
//! recorded by a middleware in front of it, so that scenarios check the
//! server's and the client's behaviour where the spec states it (headers,
//! statuses, SSE event ids, `retry`, `Last-Event-ID`, reconnection times) and
//! not only what the client chose to report.
//!
//! Bounded: at most [`MAX_EXCHANGES`] exchanges per server, each body kept
//! up to [`MAX_BODY`] bytes (a scenario moves a few kilobytes).

use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, Method, StatusCode};
use mcp_transport_core::sse::{Decoder, SseItem};
use serde_json::Value;
use tokio::time::Instant;

/// The most exchanges one recorder keeps.
pub const MAX_EXCHANGES: usize = 1024;
/// The most bytes kept of one request or response body.
pub const MAX_BODY: usize = 1024 * 1024;

/// One HTTP request and its response, as the server saw them.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The request method.
    pub method: Method,
    /// The request headers.
    pub headers: HeaderMap,
    /// The request body (up to [`MAX_BODY`]).
    pub body: Bytes,
    /// When the request arrived.
    pub started: Instant,
    /// The response status (`None` while the handler runs).
    pub status: Option<StatusCode>,
    /// The response headers.
    pub response_headers: HeaderMap,
    /// The response body bytes sent so far (up to [`MAX_BODY`]).
    pub response_body: Vec<u8>,
    /// When the response body ended or was dropped (client gone).
    pub ended: Option<Instant>,
}

impl Exchange {
    /// A request header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// A response header as text.
    pub fn response_header(&self, name: &str) -> Option<&str> {
        self.response_headers
            .get(name)
            .and_then(|v| v.to_str().ok())
    }

    /// The request body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC method of the request body, if it is one message.
    pub fn rpc_method(&self) -> Option<String> {
        self.json()
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }

    /// Whether this is a POST of `tools/call` for the tool `name`.
    pub fn is_call_of(&self, name: &str) -> bool {
        let v = self.json();
        self.method == Method::POST && v["method"] == "tools/call" && v["params"]["name"] == name
    }

    /// Whether the response is an SSE stream.
    pub fn is_sse(&self) -> bool {
        self.response_header("content-type")
            .is_some_and(|ct| ct.starts_with("text/event-stream"))
    }

    /// The response body decoded as SSE, in order.
    pub fn sse(&self) -> Vec<SseItem> {
        let mut out = Vec::new();
        let mut d = Decoder::new();
        let _ = d.feed(&self.response_body, &mut out);
        out
    }

    /// The response body's SSE blocks that carried an id field, as
    /// `(id, data)` in order (`data` empty for a priming event or an
    /// id-only block).
    pub fn sse_ids(&self) -> Vec<(String, String)> {
        self.sse()
            .into_iter()
            .filter_map(|i| match i {
                SseItem::Event(e) if !e.last_event_id.is_empty() => Some((e.last_event_id, e.data)),
                SseItem::LastEventId(id) if !id.is_empty() => Some((id, String::new())),
                _ => None,
            })
            .collect()
    }

    /// The JSON-RPC messages of the response: the SSE events' data, or the
    /// JSON body.
    pub fn messages(&self) -> Vec<Value> {
        if self.is_sse() {
            self.sse()
                .into_iter()
                .filter_map(|i| match i {
                    SseItem::Event(e) if !e.data.trim().is_empty() => {
                        serde_json::from_str(&e.data).ok()
                    }
                    _ => None,
                })
                .collect()
        } else {
            serde_json::from_slice(&self.response_body)
                .map(|v| vec![v])
                .unwrap_or_default()
        }
    }

    /// The `retry` values of the response's SSE body.
    pub fn retries(&self) -> Vec<u64> {
        self.sse()
            .into_iter()
            .filter_map(|i| match i {
                SseItem::Retry(ms) => Some(ms),
                _ => None,
            })
            .collect()
    }
}

type Shared = Arc<Mutex<Exchange>>;

/// The recorder: put it in front of a router with [`Wire::wrap`].
#[derive(Clone, Default)]
pub struct Wire {
    log: Arc<Mutex<Vec<Shared>>>,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Wire {
    /// `router` with every exchange recorded.
    pub fn wrap(&self, router: Router) -> Router {
        router.layer(axum::middleware::from_fn_with_state(self.clone(), record))
    }

    /// Every exchange so far, in arrival order.
    pub fn exchanges(&self) -> Vec<Exchange> {
        lock(&self.log).iter().map(|e| lock(e).clone()).collect()
    }
}

/// Sets the end time when the response body is dropped.
struct EndGuard(Shared);

impl Drop for EndGuard {
    fn drop(&mut self) {
        lock(&self.0).ended = Some(Instant::now());
    }
}

async fn record(State(wire): State<Wire>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, MAX_BODY)
        .await
        .unwrap_or_default();
    let exchange = Arc::new(Mutex::new(Exchange {
        method: parts.method.clone(),
        headers: parts.headers.clone(),
        body: body.clone(),
        started: Instant::now(),
        status: None,
        response_headers: HeaderMap::new(),
        response_body: Vec::new(),
        ended: None,
    }));
    {
        let mut log = lock(&wire.log);
        if log.len() < MAX_EXCHANGES {
            log.push(exchange.clone());
        }
    }
    let response = next.run(Request::from_parts(parts, Body::from(body))).await;
    let (parts, body) = response.into_parts();
    {
        let mut e = lock(&exchange);
        e.status = Some(parts.status);
        e.response_headers = parts.headers.clone();
    }
    let guard = EndGuard(exchange.clone());
    let tee = body.into_data_stream().map(move |chunk| {
        if let Ok(bytes) = &chunk {
            let mut e = lock(&guard.0);
            let room = MAX_BODY.saturating_sub(e.response_body.len());
            let n = bytes.len().min(room);
            e.response_body.extend_from_slice(&bytes[..n]);
        }
        chunk
    });
    Response::from_parts(parts, Body::from_stream(tee))
}
