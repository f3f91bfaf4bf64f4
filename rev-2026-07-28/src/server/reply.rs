//! Building HTTP responses: the edge's builders
//! ([`mcp_http_edge::server::reply`]: JSON, SSE heads, JSON-RPC errors),
//! and what only this revision does — its status mapping, its error-code
//! translation, SSE blocks without ids.
//!
//! An HTTP error carries a JSON-RPC error response. When the request could
//! be parsed its `id` is echoed ("Error responses MUST include the same ID
//! as the request they correspond to (except in error cases where the ID
//! could not be read due a malformed request)", *Overview*, "Error
//! Responses"); otherwise the error has no `id` (*Streamable HTTP*: "The
//! HTTP response body MAY comprise a JSON-RPC error response that has no
//! `id`").

use bytes::{Bytes, BytesMut};
use http::StatusCode;
use mcp_http_edge::trace;
use mcp_transport_core::jsonrpc::{
    ErrorObject, HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY, RESOURCE_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION,
};
use mcp_transport_core::sse;

pub(crate) use mcp_http_edge::server::reply::{
    HttpResponse, accepted, body_error, error, invalid, json, not_admitted, response_json,
    retry_soon, sse,
};

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

/// 405 with `Allow: POST` (*Streamable HTTP*, "Earlier Streamable HTTP
/// Revisions": "HTTP GET or DELETE to the MCP endpoint: respond with
/// `405 Method Not Allowed`").
pub(crate) fn method_not_allowed(method: &http::Method) -> HttpResponse {
    mcp_http_edge::server::reply::method_not_allowed(
        "POST",
        format!(
            "Method Not Allowed: this MCP endpoint (protocol revision 2026-07-28, stateless) accepts only POST, not {method}; there is no GET stream (use subscriptions/listen) and no session to DELETE"
        ),
    )
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

/// What a response or listen stream records of itself in its `mcp.stream`
/// span ([`mcp_http_edge::trace`]): the message events sent
/// (`sse.events`) and, when the stream is dropped, how it ended
/// (`sse.end`): `finished` when the server sent its last event (`done`),
/// `detached` when the client closed it first.
pub(crate) struct StreamTally {
    /// The stream's span.
    pub span: tracing::Span,
    /// Message events sent.
    pub events: u64,
    /// The server sent the stream's last event.
    pub done: bool,
}

impl StreamTally {
    /// The tally of the stream answering request `id`, in a new span.
    pub fn new(id: &mcp_transport_core::jsonrpc::RequestId) -> Self {
        StreamTally {
            span: tracing::info_span!(
                "mcp.stream",
                rpc.id = %id,
                sse.events = tracing::field::Empty,
                sse.end = tracing::field::Empty,
            ),
            events: 0,
            done: false,
        }
    }
}

/// The next item of a stream's channel (`None`: the channel closed), or
/// `None` when `keepalive` passed first: the caller then sends a
/// [`comment`] to keep the connection alive.
pub(crate) async fn next_or_keepalive<T>(
    rx: &mut tokio::sync::mpsc::Receiver<T>,
    keepalive: Option<std::time::Duration>,
) -> Option<Option<T>> {
    match keepalive {
        Some(every) => tokio::time::timeout(every, rx.recv()).await.ok(),
        None => Some(rx.recv().await),
    }
}

impl Drop for StreamTally {
    fn drop(&mut self) {
        let how = if self.done {
            trace::SseEnd::Finished
        } else {
            trace::SseEnd::Detached
        };
        trace::record_sse_end(&self.span, self.events, how);
    }
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
