//! The tracing vocabulary every engine and client of the workspace shares:
//! span names and field names are the same whichever revision runs, so one
//! filter (`RUST_LOG=mcp=debug`) or one OpenTelemetry mapping covers all.
//!
//! Servers:
//!
//! | span | when | fields |
//! | --- | --- | --- |
//! | `mcp.request` | one HTTP request to the endpoint (`mcp-negotiate`) | `http.method`, `http.status`, `mcp.era`, `mcp.session_id`, `mcp.protocol_version`, `mcp.last_event_id`, `rpc.method`, `rpc.id` |
//! | `mcp.stream` | one SSE connection that starts a stream (a POST answered as SSE, the standalone GET stream, a 2026-07-28 response or `subscriptions/listen` stream) | `mcp.session_id`, `mcp.stream_id`, `mcp.cursor`, `rpc.id`, then [`SSE_EVENTS`] and [`SSE_END`] |
//! | `mcp.resume` | one SSE connection that resumes a stream (`GET` + `Last-Event-ID`) | as `mcp.stream` |
//!
//! Clients:
//!
//! | span | when | fields |
//! | --- | --- | --- |
//! | `mcp.client.request` | one JSON-RPC request sent, until its answer | `rpc.method`, `rpc.id`, `mcp.protocol_version`, `mcp.session_id` |
//! | `mcp.client.resume` | one reconnection of a stream (`GET` + `Last-Event-ID`) | `mcp.session_id`, `mcp.last_event_id`, `mcp.attempt`, `http.status` |
//!
//! Stream spans are children of the request span that opened them, so a
//! log line written while a stream is sent names the HTTP request, the
//! JSON-RPC request and the stream.

use std::fmt;

/// Field recorded when a stream connection ends: message events written.
pub const SSE_EVENTS: &str = "sse.events";
/// Field recorded when a stream connection ends: how ([`SseEnd`]).
pub const SSE_END: &str = "sse.end";

/// How a server's SSE connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SseEnd {
    /// The stream is complete: its last event (the response) went out.
    Finished,
    /// The server closed the connection before the stream's end (a
    /// SEP-1699 policy, `close_sse_stream`, a takeover, shutdown); the
    /// client resumes.
    Closed,
    /// The client went away first (on 2026-07-28 this cancels the
    /// request; on a session revision the request goes on).
    Detached,
}

impl SseEnd {
    /// The value recorded in [`SSE_END`].
    pub fn as_str(self) -> &'static str {
        match self {
            SseEnd::Finished => "finished",
            SseEnd::Closed => "closed",
            SseEnd::Detached => "detached",
        }
    }
}

impl fmt::Display for SseEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Records the end of a stream connection in its span and logs it (at
/// debug, inside the span).
pub fn record_sse_end(span: &tracing::Span, events: u64, how: SseEnd) {
    span.record(SSE_EVENTS, events);
    span.record(SSE_END, how.as_str());
    tracing::debug!(parent: span, events, end = how.as_str(), "SSE connection ended");
}
