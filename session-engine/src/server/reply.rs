//! Building HTTP responses: the edge's builders
//! ([`mcp_http_edge::server::reply`]), and the batch answer only this
//! engine sends.
//!
//! Every HTTP error this server returns carries a JSON-RPC error response
//! *that has no id* ("The HTTP response body MAY comprise a JSON-RPC error
//! response that has no id", *Transports*, "Sending Messages to the
//! Server" 4), whose message says exactly what was wrong.

use http::StatusCode;
use mcp_transport_core::jsonrpc;

pub(crate) use mcp_http_edge::server::Reject;
pub(crate) use mcp_http_edge::server::reply::{
    HttpResponse, accepted, body_error, internal, invalid, json, json_response, method_not_allowed,
    not_admitted, sse,
};

/// 200 `application/json` carrying a JSON-RPC batch response: an array of
/// responses (2025-03-26 batches; never empty, JSON-RPC 2.0 §6: "the Server
/// MUST NOT return an empty Array").
pub(crate) fn json_batch(responses: &[jsonrpc::Response]) -> HttpResponse {
    // Serializing a response cannot fail (string keys, payloads already JSON).
    let body = serde_json::to_string(responses).unwrap_or_default();
    json(StatusCode::OK, body)
}
