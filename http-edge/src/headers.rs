//! Header names and media types of the Streamable HTTP transport, one
//! constant each. Header names are case-insensitive (RFC 9110); these are
//! the lower-case spellings `http::HeaderName` uses. Revision-specific
//! *logic* about headers (2026-07-28's `Mcp-Param-*` value encoding) stays
//! in the revision's crate.

/// `MCP-Session-Id` (*Transports*, "Session Management"; ignored by
/// 2026-07-28).
pub const SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version` (2025-06-18 and later, "Protocol Version Header").
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Last-Event-ID` (*Transports*, "Resumability and Redelivery"; ignored by
/// 2026-07-28).
pub const LAST_EVENT_ID: &str = "last-event-id";
/// `Mcp-Method` (2026-07-28): mirrors the JSON-RPC `method`.
pub const METHOD: &str = "mcp-method";
/// `Mcp-Name` (2026-07-28): mirrors `params.name` (`tools/call`,
/// `prompts/get`) or `params.uri` (`resources/read`).
pub const NAME: &str = "mcp-name";
/// Prefix of the `Mcp-Param-{Name}` headers (2026-07-28: tool parameters
/// marked `x-mcp-header`).
pub const PARAM_PREFIX: &str = "mcp-param-";
/// `X-Accel-Buffering`: `no` on SSE answers, so proxies such as nginx pass
/// events on at once.
pub const X_ACCEL_BUFFERING: &str = "x-accel-buffering";

/// The header names above as [`http::HeaderName`]s, for lookups on the hot
/// path: `HeaderMap::get` with a `&str` parses the name on every call.
pub mod name {
    use http::HeaderName;

    /// [`SESSION_ID`](super::SESSION_ID).
    pub const SESSION_ID: HeaderName = HeaderName::from_static(super::SESSION_ID);
    /// [`PROTOCOL_VERSION`](super::PROTOCOL_VERSION).
    pub const PROTOCOL_VERSION: HeaderName = HeaderName::from_static(super::PROTOCOL_VERSION);
    /// [`LAST_EVENT_ID`](super::LAST_EVENT_ID).
    pub const LAST_EVENT_ID: HeaderName = HeaderName::from_static(super::LAST_EVENT_ID);
    /// [`METHOD`](super::METHOD).
    pub const METHOD: HeaderName = HeaderName::from_static(super::METHOD);
    /// [`NAME`](super::NAME).
    pub const NAME: HeaderName = HeaderName::from_static(super::NAME);
}

/// The media type `application/json`.
pub const JSON: &str = "application/json";
/// The media type `text/event-stream`.
pub const EVENT_STREAM: &str = "text/event-stream";
/// `Accept` of every client POST: both media types a server may answer with
/// (*Transports*, "Sending Messages to the Server" 2).
pub const ACCEPT_POST: &str = "application/json, text/event-stream";
