//! Building HTTP responses: JSON-RPC error bodies, JSON answers, SSE heads.
//!
//! Every HTTP error this server returns carries a JSON-RPC error response
//! *that has no id* ("The HTTP response body MAY comprise a JSON-RPC error
//! response that has no id", *Transports*, "Sending Messages to the
//! Server" 4), whose message says exactly what was wrong.

use axum::body::Body;
use bytes::Bytes;
use http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use mcp_transport_core::jsonrpc::{
    self, BodyError, ErrorObject, INTERNAL_ERROR, INVALID_REQUEST, Message,
};

use crate::headers::{EVENT_STREAM, JSON};

/// An HTTP response with a body of this crate.
pub(crate) type HttpResponse = Response<Body>;

/// A request refused before any work: status, JSON-RPC code and message.
/// Small (unlike a whole response), so checks can return it in a `Result`.
#[derive(Debug)]
pub(crate) struct Reject {
    /// The HTTP status.
    pub status: StatusCode,
    /// The JSON-RPC error code of the body.
    pub code: i64,
    /// What was wrong.
    pub message: String,
}

impl Reject {
    /// A refusal with code `-32600 Invalid Request`.
    pub fn invalid(status: StatusCode, message: impl Into<String>) -> Self {
        Reject {
            status,
            code: INVALID_REQUEST,
            message: message.into(),
        }
    }

    /// The HTTP response.
    pub fn response(self) -> HttpResponse {
        error(self.status, self.code, self.message)
    }
}

/// An HTTP error with a JSON-RPC error body (no id) with `code` and `message`.
pub(crate) fn error(status: StatusCode, code: i64, message: impl Into<String>) -> HttpResponse {
    let body = Message::Response(jsonrpc::Response::error(
        None,
        ErrorObject::new(code, message),
    ))
    .to_json();
    json_body(status, body)
}

/// An HTTP error whose JSON-RPC code is `-32600 Invalid Request`.
pub(crate) fn invalid(status: StatusCode, message: impl Into<String>) -> HttpResponse {
    error(status, INVALID_REQUEST, message)
}

/// A 5xx with `-32603 Internal error`.
pub(crate) fn internal(status: StatusCode, message: impl Into<String>) -> HttpResponse {
    error(status, INTERNAL_ERROR, message)
}

/// 400 for a body that failed `jsonrpc::parse_body` (`-32700` or `-32600`).
pub(crate) fn body_error(e: &BodyError) -> HttpResponse {
    json_body(
        StatusCode::BAD_REQUEST,
        Message::Response(e.to_response()).to_json(),
    )
}

/// 405 with an `Allow` header.
pub(crate) fn method_not_allowed(allow: &'static str, message: impl Into<String>) -> HttpResponse {
    let mut r = invalid(StatusCode::METHOD_NOT_ALLOWED, message);
    r.headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    r
}

/// 200 `application/json` carrying one JSON-RPC response.
pub(crate) fn json_response(resp: jsonrpc::Response) -> HttpResponse {
    json_body(StatusCode::OK, Message::Response(resp).to_json())
}

/// 200 `application/json` carrying a JSON-RPC batch response: an array of
/// responses (2025-03-26 batches; never empty, JSON-RPC 2.0 §6: "the Server
/// MUST NOT return an empty Array").
pub(crate) fn json_batch(responses: &[jsonrpc::Response]) -> HttpResponse {
    // Serializing a response cannot fail (string keys, payloads already JSON).
    let body = serde_json::to_string(responses).unwrap_or_default();
    json_body(StatusCode::OK, body)
}

/// 202 Accepted with no body (a notification or response was accepted).
pub(crate) fn accepted() -> HttpResponse {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::ACCEPTED;
    r
}

fn json_body(status: StatusCode, body: String) -> HttpResponse {
    let mut r = Response::new(Body::from(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
    r
}

/// 200 `text/event-stream` with `Cache-Control: no-cache` and
/// `X-Accel-Buffering: no` (so proxies such as nginx pass events on at once).
pub(crate) fn sse(body: Body) -> HttpResponse {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}
