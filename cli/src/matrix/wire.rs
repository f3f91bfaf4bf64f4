//! What went over the wire: every HTTP exchange the server under test saw,
//! recorded by a middleware in front of it, so that scenarios check the
//! server's and the client's behaviour where the spec states it (headers,
//! statuses, SSE event ids, `retry`, `Last-Event-ID`, reconnection times) and
//! not only what the client chose to report.
//!
//! Bounded: at most [`MAX_EXCHANGES`] exchanges per server, each response
//! body kept up to [`MAX_BODY`] bytes (a scenario moves a few kilobytes).
//! The recorder reads a request body whole before passing it on, so one
//! over [`MAX_BODY`] reaches the server (and the record) empty: no scenario
//! sends one.

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

    /// The response body's SSE events under an event id, as `(id, data)`
    /// in order: each event dispatched while an id was in force (WHATWG:
    /// an event without an `id` field keeps the last one, the cursor a
    /// client would resume from) and each id-only block (`data` empty, as
    /// for a priming event).
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
                    // A priming event's empty data is not JSON either.
                    SseItem::Event(e) => serde_json::from_str(&e.data).ok(),
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

    /// A recorder that saw `exchanges`, in order (unit tests of the
    /// verdicts that read the wire).
    #[cfg(test)]
    pub(crate) fn recorded(exchanges: impl IntoIterator<Item = Exchange>) -> Wire {
        let log = exchanges
            .into_iter()
            .map(|e| Arc::new(Mutex::new(e)))
            .collect();
        Wire {
            log: Arc::new(Mutex::new(log)),
        }
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

#[cfg(test)]
mod tests {
    use super::super::test_wire::{get, post};
    use super::*;
    use axum::routing::any;
    use serde_json::json;
    use tower::ServiceExt;

    #[test]
    fn a_request_reads_as_its_rpc_method_and_tool() {
        let call = post(json!({"method": "tools/call", "params": {"name": "echo"}}));
        assert_eq!(call.rpc_method().as_deref(), Some("tools/call"));
        assert!(call.is_call_of("echo"));
        assert!(!call.is_call_of("add"));
        let list = post(json!({"method": "tools/list", "params": {"name": "echo"}}));
        assert!(!list.is_call_of("echo"));
        let mut as_get = call.clone();
        as_get.method = Method::GET;
        assert!(!as_get.is_call_of("echo"), "only a POST calls");
        assert_eq!(get().rpc_method(), None);
        assert_eq!(get().json(), Value::Null);
        let with = get().with_header("last-event-id", "s1-3");
        assert_eq!(with.header("last-event-id"), Some("s1-3"));
        assert_eq!(with.header("mcp-session-id"), None);
    }

    #[test]
    fn an_sse_body_reads_as_ids_messages_and_retries() {
        let e = get().answered_sse(concat!(
            "id: p1\ndata:\n\n",
            "retry: 150\n\n",
            "id: p2\ndata: {\"id\":1}\n\n",
            "data: {\"id\":2}\n\n",
            "data: not json\n\n",
            "id: p3\n\n",
            ": comment\n\n",
            "retry: 20\n\n",
        ));
        assert!(e.is_sse());
        assert_eq!(
            e.sse_ids(),
            [
                ("p1".to_owned(), String::new()),
                ("p2".to_owned(), "{\"id\":1}".to_owned()),
                // No id field: still under p2, the cursor in force.
                ("p2".to_owned(), "{\"id\":2}".to_owned()),
                ("p2".to_owned(), "not json".to_owned()),
                ("p3".to_owned(), String::new()),
            ]
        );
        // Before any id, and after `id:` with no value resets it, nothing.
        let unnamed = get().answered_sse("data: 1\n\nid: a\ndata: 2\n\nid\ndata: 3\n\nid\n\n");
        assert_eq!(unnamed.sse_ids(), [("a".to_owned(), "2".to_owned())]);
        assert_eq!(e.messages(), [json!({"id": 1}), json!({"id": 2})]);
        assert_eq!(e.retries(), [150, 20]);
        // A content type with parameters is still SSE; JSON is not.
        let charset = get()
            .answered_sse("data: {\"id\":3}\n\n")
            .with_response_header("content-type", "text/event-stream; charset=utf-8");
        assert!(charset.is_sse());
        assert_eq!(charset.messages(), [json!({"id": 3})]);
        let j = post(json!({})).answered_json(StatusCode::OK, &json!({"id": 4}));
        assert!(!j.is_sse());
        assert_eq!(j.messages(), [json!({"id": 4})]);
        assert_eq!(j.response_header("content-type"), Some("application/json"));
        let mut bad = j.clone();
        bad.response_body = b"not json".to_vec();
        assert!(bad.messages().is_empty());
    }

    /// A router that answers `n` bytes of `x` when the request body is the
    /// number `n`, else as many as the body it saw.
    fn recorded(wire: &Wire) -> Router {
        wire.wrap(Router::new().route(
            "/",
            any(|body: Bytes| async move {
                let n: usize = std::str::from_utf8(&body)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(body.len());
                Response::builder()
                    .status(StatusCode::ACCEPTED)
                    .header("x-answer", "yes")
                    .body(Body::from(vec![b'x'; n]))
                    .expect("a response")
            }),
        ))
    }

    async fn send(router: &Router, body: &str) -> Bytes {
        let req = Request::builder()
            .method(Method::POST)
            .uri("/")
            .header("x-asked", "1")
            .body(Body::from(body.to_owned()))
            .expect("a request");
        let resp = router.clone().oneshot(req).await.expect("infallible");
        axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .expect("the body")
    }

    #[tokio::test]
    async fn the_recorder_keeps_both_sides_and_bounds_them() {
        let wire = Wire::default();
        assert_eq!(format!("{wire:?}"), "Wire { .. }");
        let router = recorded(&wire);
        assert_eq!(send(&router, "5").await.len(), 5);
        let [e] = wire.exchanges().try_into().expect("one exchange");
        assert_eq!(e.method, Method::POST);
        assert_eq!(e.header("x-asked"), Some("1"));
        assert_eq!(&e.body[..], b"5", "the handler saw the body too");
        assert_eq!(e.status, Some(StatusCode::ACCEPTED));
        assert_eq!(e.response_header("x-answer"), Some("yes"));
        assert_eq!(e.response_body, b"xxxxx");
        assert!(e.ended.is_some_and(|t| t >= e.started), "{e:?}");

        // A long stream (64 KiB, far more than a scenario sends) is kept
        // whole.
        assert_eq!(send(&router, "65536").await.len(), 65536);
        let last = wire.exchanges().pop().expect("recorded");
        assert_eq!(last.response_body.len(), 65536);

        // A body longer than MAX_BODY reaches the client whole; the
        // record keeps MAX_BODY bytes of it.
        let big = MAX_BODY + 10;
        assert_eq!(send(&router, &big.to_string()).await.len(), big);
        let last = wire.exchanges().pop().expect("recorded");
        assert_eq!(last.response_body.len(), MAX_BODY);

        // A request body over MAX_BODY is passed on (and kept) empty.
        assert_eq!(send(&router, &"a".repeat(MAX_BODY + 1)).await.len(), 0);
        let last = wire.exchanges().pop().expect("recorded");
        assert!(last.body.is_empty());

        // At most MAX_EXCHANGES are kept; later ones are still served.
        for _ in 4..MAX_EXCHANGES + 3 {
            assert_eq!(send(&router, "1").await.len(), 1);
        }
        assert_eq!(wire.exchanges().len(), MAX_EXCHANGES);
    }

    #[tokio::test]
    async fn an_unfinished_response_has_no_end_until_it_is_dropped() {
        let wire = Wire::default();
        let router = recorded(&wire);
        let req = Request::builder()
            .method(Method::POST)
            .uri("/")
            .body(Body::from("3"))
            .expect("a request");
        let resp = router.oneshot(req).await.expect("infallible");
        let e = wire.exchanges().pop().expect("recorded");
        assert_eq!(e.status, Some(StatusCode::ACCEPTED));
        assert_eq!(e.ended, None, "the body is not sent yet");
        drop(resp);
        assert!(
            wire.exchanges()[0].ended.is_some(),
            "dropped: the client went away"
        );
    }
}
