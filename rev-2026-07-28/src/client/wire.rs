//! HTTP plumbing: the edge's client helpers ([`mcp_http_edge::client`]:
//! sending, media types, bounded bodies, error-body excerpts) and the
//! JSON-RPC error response of an error body, as this revision reads it.

use mcp_transport_core::jsonrpc::{Message, Response, parse_message};

pub(crate) use mcp_http_edge::client::{
    BodyError, MAX_ERROR_BODY, MediaType, body_excerpt, error_chain, media_type, read_body,
    read_limited, send,
};

/// The JSON-RPC error response in an error body, if it holds one.
pub(crate) fn error_response(body: &[u8]) -> Option<Response> {
    let text = std::str::from_utf8(body).ok()?;
    match parse_message(text).ok()? {
        Message::Response(r) if r.is_error() => Some(r),
        _ => None,
    }
}
