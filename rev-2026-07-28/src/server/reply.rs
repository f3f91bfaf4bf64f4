//! Building HTTP responses: JSON-RPC bodies, SSE heads and SSE blocks.
//!
//! An HTTP error carries a JSON-RPC error response. When the request could
//! be parsed its `id` is echoed ("Error responses MUST include the same ID
//! as the request they correspond to (except in error cases where the ID
//! could not be read due a malformed request)", *Overview*, "Error
//! Responses"); otherwise the error has no `id` (*Streamable HTTP*: "The
//! HTTP response body MAY comprise a JSON-RPC error response that has no
//! `id`").

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use mcp_transport_core::jsonrpc::{
    self, BodyError, ErrorObject, HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST,
    METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, Message, RESOURCE_NOT_FOUND, RequestId,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use mcp_transport_core::sse;

/// `Content-Type` of JSON answers.
pub(crate) const JSON: &str = "application/json";
/// `Content-Type` of SSE answers.
pub(crate) const EVENT_STREAM: &str = "text/event-stream";

/// An HTTP response of this server.
pub(crate) type HttpResponse = Response<Body>;

/// The HTTP status an error outcome is sent with, when it is sent before
/// any SSE stream was opened:
///
/// * `-32601` → 404 (*Streamable HTTP*, "Protocol Version Header": "If the
///   server does not implement the requested RPC method, it MUST respond
///   with `404 Not Found` and a JSON-RPC error with code `-32601`");
/// * `-32020`, `-32021`, `-32022` → 400 (each is specified with "the
///   response status code MUST be `400 Bad Request`" in the schema);
/// * anything else → 200 (a JSON-RPC error is an ordinary response).
pub(crate) fn status_for(code: i64) -> StatusCode {
    match code {
        METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION => {
            StatusCode::BAD_REQUEST
        }
        _ => StatusCode::OK,
    }
}

/// A handler's error as this revision may send it (*Overview*, "Error
/// Codes"): "Implementations of this protocol version MUST NOT emit these
/// codes: `-32002` — resource not found (… replaced by `-32602`) … `-32042`
/// — URL elicitation required", and "Implementations MUST NOT emit any
/// code from this sub-range [`-32020` to `-32099`] that is not defined by
/// this specification". So `-32002` becomes `-32602` (same message and
/// data), and `-32042` or an undefined code of that sub-range becomes
/// `-32603`, naming the code the handler used. Everything else is kept.
pub(crate) fn wire_error(mut e: ErrorObject) -> ErrorObject {
    match e.code {
        RESOURCE_NOT_FOUND => {
            e.code = INVALID_PARAMS;
            e
        }
        HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION => e,
        c if (-32099..=-32020).contains(&c) => ErrorObject::new(
            INTERNAL_ERROR,
            format!(
                "Internal error: the handler answered with error code {c}, which protocol revision 2026-07-28 does not define ({})",
                e.message
            ),
        ),
        _ => e,
    }
}

/// `status` with a JSON body.
pub(crate) fn json(status: StatusCode, body: impl Into<Bytes>) -> HttpResponse {
    let mut r = Response::new(Body::from(body.into()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
    r
}

/// The JSON text of one response.
pub(crate) fn response_json(resp: jsonrpc::Response) -> String {
    Message::Response(resp).to_json()
}

/// `status` with a JSON-RPC error response.
pub(crate) fn error(status: StatusCode, id: Option<RequestId>, error: ErrorObject) -> HttpResponse {
    json(status, response_json(jsonrpc::Response::error(id, error)))
}

/// `status` with a `-32600 Invalid Request` error and no id.
pub(crate) fn invalid(status: StatusCode, message: impl Into<String>) -> HttpResponse {
    error(status, None, ErrorObject::new(INVALID_REQUEST, message))
}

/// 400 for a body `jsonrpc::parse_body` rejected (`-32700` or `-32600`).
pub(crate) fn body_error(e: &BodyError) -> HttpResponse {
    json(
        StatusCode::BAD_REQUEST,
        Message::Response(e.to_response()).to_json(),
    )
}

/// 405 with `Allow: POST` (*Streamable HTTP*, "Earlier Streamable HTTP
/// Revisions": "HTTP GET or DELETE to the MCP endpoint: respond with
/// `405 Method Not Allowed`").
pub(crate) fn method_not_allowed(method: &http::Method) -> HttpResponse {
    let mut r = invalid(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "Method Not Allowed: this MCP endpoint (protocol revision 2026-07-28, stateless) accepts only POST, not {method}; there is no GET stream (use subscriptions/listen) and no session to DELETE"
        ),
    );
    r.headers_mut()
        .insert(ALLOW, HeaderValue::from_static("POST"));
    r
}

/// 202 Accepted with no body.
pub(crate) fn accepted() -> HttpResponse {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::ACCEPTED;
    r
}

/// 200 `text/event-stream` with `Cache-Control: no-cache` and
/// `X-Accel-Buffering: no` (*Streamable HTTP*, "Receiving Messages":
/// "servers SHOULD include the `X-Accel-Buffering: no` header").
pub(crate) fn sse(body: Body) -> HttpResponse {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

/// One SSE event carrying `json`: `data:` lines and the blank line, no
/// `event:` and no `id:` (this revision has no resumption: "Resumable SSE
/// streams via `Last-Event-ID` are not supported").
pub(crate) fn event(json: &str) -> Bytes {
    let mut buf = BytesMut::with_capacity(json.len() + 8);
    // No event type and no id: nothing to validate, so this cannot fail.
    let _ = sse::write_event(&mut buf, None, None, json);
    buf.freeze()
}

/// A keep-alive comment line, `:` (*Streamable HTTP*, "Receiving
/// Messages", Note: "periodically emit an SSE comment line (a line beginning
/// with a colon …) as a keep-alive").
pub(crate) fn comment() -> Bytes {
    let mut buf = BytesMut::with_capacity(2);
    // Empty text: nothing to validate, so this cannot fail.
    let _ = sse::write_comment(&mut buf, "");
    buf.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_has_no_id() {
        let e = event(r#"{"a":1}"#);
        assert_eq!(&e[..], b"data: {\"a\":1}\n\n");
        assert_eq!(status_for(-32601), StatusCode::NOT_FOUND);
        assert_eq!(status_for(-32021), StatusCode::BAD_REQUEST);
        assert_eq!(status_for(-32602), StatusCode::OK);
    }

    #[test]
    fn retired_and_undefined_codes_are_translated() {
        let e = wire_error(ErrorObject::new(-32002, "Resource not found").with_data(&1));
        assert_eq!((e.code, e.message.as_str()), (-32602, "Resource not found"));
        assert!(e.data.is_some());
        for c in [-32042, -32023, -32099] {
            let e = wire_error(ErrorObject::new(c, "x"));
            assert_eq!(e.code, -32603);
            assert!(e.message.contains(&c.to_string()));
        }
        for c in [-32020, -32021, -32022, -32601, -32000, -32019, -32100, 7] {
            assert_eq!(wire_error(ErrorObject::new(c, "x")).code, c);
        }
    }
}
