//! Header names and media types used by the Streamable HTTP transport: the
//! edge's constants ([`mcp_http_edge::headers`]), one definition each,
//! re-exported under the names this crate has always used.

pub use mcp_http_edge::headers::{EVENT_STREAM, JSON, LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID};
