//! Building HTTP responses: JSON answers, SSE heads, JSON-RPC errors with
//! their HTTP status.
//!
//! An HTTP error carries a JSON-RPC error response ("The HTTP response body
//! MAY comprise a JSON-RPC error response that has no id", *Transports*,
//! "Sending Messages to the Server" 4); it echoes the request's `id` when
//! the engine could read one.

use std::sync::LazyLock;

use axum::body::Body;
use bytes::Bytes;
use http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use mcp_transport_core::jsonrpc::{
    self, BodyError, ErrorObject, INTERNAL_ERROR, INVALID_REQUEST, Message, RequestId,
};

use crate::headers::{EVENT_STREAM, JSON, X_ACCEL_BUFFERING};

/// An HTTP response of an engine.
pub type HttpResponse = Response<Body>;

/// `status` with the JSON text `text` as its body.
///
/// The text is boxed to its length before it becomes the body's
/// [`Bytes`]: `Bytes::from(String)` of a string with spare capacity (a
/// serializer's buffer, or one sized for the most a result can grow)
/// allocates a shared header beside the buffer and releases it with an
/// atomic decrement, where a boxed slice is the `Bytes`' own buffer. The
/// shrink is a `realloc` that allocators do in place (mimalloc when at
/// least half the block stays used); docs/PERFORMANCE.md, session 48.
pub fn json(status: StatusCode, text: String) -> HttpResponse {
    let body = Bytes::from(text.into_bytes().into_boxed_slice());
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
    r
}

/// The JSON text of one JSON-RPC response.
pub fn response_json(resp: jsonrpc::Response) -> String {
    Message::Response(resp).to_json()
}

/// 200 `application/json` carrying one JSON-RPC response.
pub fn json_response(resp: jsonrpc::Response) -> HttpResponse {
    json(StatusCode::OK, response_json(resp))
}

/// `status` with a JSON-RPC error response (with `id` when known).
pub fn error(status: StatusCode, id: Option<RequestId>, error: ErrorObject) -> HttpResponse {
    json(status, response_json(jsonrpc::Response::error(id, error)))
}

/// 503 with a `-32603` naming the limit a request was refused for at
/// admission ([`mcp_transport_core::admission`]): too many handlers run
/// already, or their requests hold too many bytes. Only this request is
/// refused, before anything of it ran, so the client may send it again:
/// `Retry-After: 1` says when (RFC 9110 §10.2.3: "When sent with a 503
/// (Service Unavailable) response, Retry-After indicates how long the
/// service is expected to be unavailable to the client"; a running
/// handler's end frees a place, so a second is a guess, not a promise).
pub fn not_admitted(
    id: Option<RequestId>,
    why: &mcp_transport_core::admission::Refused,
) -> HttpResponse {
    retry_soon(error(StatusCode::SERVICE_UNAVAILABLE, id, why.to_error()))
}

/// `response` (a refusal at admission, [`not_admitted`]'s or an engine's
/// own rendering of it) with `Retry-After: 1`.
pub fn retry_soon(mut response: HttpResponse) -> HttpResponse {
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// `status` with a `-32600 Invalid Request` error and no id.
pub fn invalid(status: StatusCode, message: impl Into<String>) -> HttpResponse {
    error(status, None, ErrorObject::new(INVALID_REQUEST, message))
}

/// `status` (a 5xx) with a `-32603 Internal error` and no id.
pub fn internal(status: StatusCode, message: impl Into<String>) -> HttpResponse {
    error(status, None, ErrorObject::new(INTERNAL_ERROR, message))
}

/// 400 for a body `jsonrpc::parse_body` rejected (`-32700` or `-32600`).
pub fn body_error(e: &BodyError) -> HttpResponse {
    json(StatusCode::BAD_REQUEST, response_json(e.to_response()))
}

/// 405 with an `Allow` header and a `-32600` error saying why.
pub fn method_not_allowed(allow: &'static str, message: impl Into<String>) -> HttpResponse {
    let mut r = invalid(StatusCode::METHOD_NOT_ALLOWED, message);
    r.headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    r
}

/// 202 Accepted with no body (a notification or response was accepted).
pub fn accepted() -> HttpResponse {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::ACCEPTED;
    r
}

/// 200 `text/event-stream` with `Cache-Control: no-cache` and
/// `X-Accel-Buffering: no` (so proxies such as nginx pass events on at
/// once; 2026-07-28 *Streamable HTTP*, "Receiving Messages": "servers SHOULD
/// include the `X-Accel-Buffering: no` header").
///
/// The three headers are cloned from a map built once: a clone copies the
/// map's two arrays, where three inserts hashed each name and probed for
/// it (−420 instructions an SSE answer in process; for `json`'s one header
/// the same saved ~10 to ~40, so it inserts; docs/PERFORMANCE.md, session
/// 27).
pub fn sse(body: Body) -> HttpResponse {
    static HEADERS: LazyLock<HeaderMap> = LazyLock::new(|| {
        let mut h = HeaderMap::with_capacity(3);
        h.insert(CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
        h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        h.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
        h
    });
    let mut r = Response::new(body);
    *r.headers_mut() = HEADERS.clone();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_json_rpc_bodies() {
        let r = method_not_allowed("POST", "no");
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(r.headers()[ALLOW], "POST");
        assert_eq!(r.headers()[CONTENT_TYPE], JSON);
        let s = sse(Body::empty());
        assert_eq!(s.headers()[X_ACCEL_BUFFERING], "no");
        assert_eq!(s.headers()[CONTENT_TYPE], EVENT_STREAM);
        assert_eq!(s.headers()[CACHE_CONTROL], "no-cache");
        assert_eq!(s.headers().len(), 3);
        assert_eq!(s.status(), StatusCode::OK);
        assert_eq!(accepted().status(), StatusCode::ACCEPTED);
    }

    /// The status, the JSON-RPC error code and id, and every header of a
    /// reply.
    async fn read(r: HttpResponse) -> (StatusCode, i64, serde_json::Value, HeaderMap) {
        use http_body_util::BodyExt;
        let (head, body) = r.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
        let code = v["error"]["code"].as_i64().unwrap();
        (head.status, code, v["id"].clone(), head.headers)
    }

    #[tokio::test]
    async fn each_refusal_has_its_status_code_and_headers() {
        let full = mcp_transport_core::admission::Refused::Running { max: 4 };
        let (status, code, id, headers) =
            read(not_admitted(Some(RequestId::Number(7)), &full)).await;
        assert_eq!(
            (status, code, id),
            (StatusCode::SERVICE_UNAVAILABLE, -32603, 7.into())
        );
        assert_eq!(headers[RETRY_AFTER], "1");
        assert_eq!(headers[CONTENT_TYPE], JSON);

        let (status, code, id, headers) = read(invalid(StatusCode::NOT_FOUND, "gone")).await;
        assert_eq!(
            (status, code, id),
            (StatusCode::NOT_FOUND, -32600, serde_json::Value::Null)
        );
        assert!(!headers.contains_key(RETRY_AFTER));

        let (status, code, ..) = read(internal(StatusCode::BAD_GATEWAY, "down")).await;
        assert_eq!((status, code), (StatusCode::BAD_GATEWAY, -32603));

        let parse = BodyError::Parse("eof".into());
        let (status, code, id, _) = read(body_error(&parse)).await;
        assert_eq!(
            (status, code, id),
            (StatusCode::BAD_REQUEST, -32700, serde_json::Value::Null)
        );

        let r = json_response(jsonrpc::Response::error(
            Some(RequestId::Number(1)),
            ErrorObject::new(-32601, "no"),
        ));
        let (status, code, id, _) = read(r).await;
        assert_eq!((status, code, id), (StatusCode::OK, -32601, 1.into()));
    }
}
