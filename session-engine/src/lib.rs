//! # mcp-session-engine
//!
//! The session-based ("legacy era") Streamable HTTP engine, shared by the
//! revisions 2025-03-26, 2025-06-18 and 2025-11-25: sessions, POST and GET
//! SSE streams, event ids and the replay log, the standalone GET stream,
//! server-to-client requests, and the client's stream handling and
//! resumption.
//!
//! These revisions differ in a handful of rules — batches, the
//! `MCP-Protocol-Version` header, SEP-1699 priming and polling, elicitation —
//! and the server asks every one of them of the session's
//! [`revision::SessionRevision`], implemented by the revision crates
//! (`mcp-rev-2025-03-26` for 2025-03-26 and 2025-06-18, `mcp-rev-2025-11-25`
//! for 2025-11-25, where SEP-1699's disconnect policies live as pure state
//! machines) and chosen once when `initialize` negotiates the session's
//! version. No code here compares version strings.
//!
//! The client's resumption loop stays here, shared by all three: GET with
//! `Last-Event-ID` is 2025-03-26's "Resumability and Redelivery", and what
//! SEP-1699 adds on the client side — wait exactly `retry`, and take a
//! priming event (an id with empty data) as no message — are plain SSE
//! rules that a client of any revision follows.

pub mod client;
pub mod headers;
pub mod revision;
pub mod server;
