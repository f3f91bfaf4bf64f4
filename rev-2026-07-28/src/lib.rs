//! # mcp-rev-2026-07-28
//!
//! MCP Streamable HTTP as revision 2026-07-28 defines it: stateless. No
//! `initialize`, no session, no GET stream, no `Last-Event-ID`; every request
//! carries its protocol version, client capabilities and (optionally) client
//! info in `_meta`, mirrored into `MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name` and `Mcp-Param-*` headers; closing a response stream cancels
//! that request; server-to-client input travels as `InputRequiredResult`
//! (MRTR); change notifications flow on `subscriptions/listen` streams.

pub mod client;
pub mod headers;
pub mod server;
