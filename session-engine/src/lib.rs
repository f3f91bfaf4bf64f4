//! # mcp-session-engine
//!
//! The session-based ("legacy era") Streamable HTTP engine, shared by the
//! revisions 2025-03-26, 2025-06-18 and 2025-11-25: sessions, POST and GET
//! SSE streams, event ids and the replay log, the standalone GET stream,
//! server-to-client requests, and the client's stream handling and
//! resumption.
//!
//! These revisions differ in a handful of switches — batches, the
//! `MCP-Protocol-Version` header, SEP-1699 priming and polling, elicitation —
//! and every one of them is answered by the session's
//! [`mcp_transport_core::version::Features`] row, chosen once when
//! `initialize` negotiates the session's version. No code here compares
//! version strings. The revision crates (`mcp-rev-2025-11-25`,
//! `mcp-rev-2025-03-26`) configure this engine for their revisions and hold
//! their revision-specific tests.

pub mod client;
pub mod headers;
pub mod server;
