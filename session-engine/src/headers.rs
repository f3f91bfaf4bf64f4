//! Header names and media types used by the Streamable HTTP transport.
//! Header names are case-insensitive (RFC 9110); these are the canonical
//! spellings from the spec.

/// `MCP-Session-Id` (*Transports*, "Session Management").
pub const SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version` (2025-06-18 and later, "Protocol Version Header").
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Last-Event-ID` (*Transports*, "Resumability and Redelivery").
pub const LAST_EVENT_ID: &str = "last-event-id";
/// `application/json`.
pub const JSON: &str = "application/json";
/// `text/event-stream`.
pub const EVENT_STREAM: &str = "text/event-stream";
