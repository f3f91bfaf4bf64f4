//! # mcp-negotiate
//!
//! What makes the workspace a framework rather than four transports:
//!
//! * [`server::MultiServer`]: one MCP endpoint configured with any subset of
//!   the Streamable HTTP revisions (2025-03-26, 2025-06-18, 2025-11-25,
//!   2026-07-28) and one [`Handler`](mcp_transport_core::handler::Handler),
//!   written once. Each request is routed once, at the edge, to the engine of
//!   its era ([`server::route()`]); both eras are served concurrently.
//! * [`client`]: a client configured with the revisions it may use that finds
//!   the best one a server speaks, as 2026-07-28 *Versioning*, "Backward
//!   Compatibility with Initialization-Based Versions" and *Streamable HTTP*,
//!   "Backward Compatibility" describe, and hands back one
//!   [`Transport`](mcp_transport_core::transport::Transport).

pub mod client;
pub mod server;
