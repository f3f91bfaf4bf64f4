//! # mcp-transport-core
//!
//! The protocol rules that every revision of the MCP Streamable HTTP transport
//! shares, written **sans-IO**: nothing in this crate opens a socket, spawns a
//! task or reads a clock. The revision crates (`mcp-rev-2025-03-26`,
//! `mcp-rev-2025-11-25`, `mcp-rev-2026-07-28`) are thin drivers that feed bytes
//! and time into these rules and act on what comes out; the negotiating layer
//! (`mcp-negotiate`) picks one of them at run time.
//!
//! Why the split (the lesson of `tower`/`axum-core` and `quinn-proto`/`rustls`):
//! the rules are where the bugs hide, and rules without I/O can be tested in
//! memory, byte by byte, at every chunk boundary, with a simulated clock. A
//! CI step checks that no async runtime, HTTP server or HTTP client appears
//! among this crate's normal dependencies.
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`jsonrpc`] | JSON-RPC 2.0 messages, ids, error codes, body classification (`-32700` / `-32600`) |
//! | [`json_members`] | the members of an object validated already (a `params`, a result), located without parsing it again |
//! | [`version`] | [`ProtocolVersion`], [`Era`] and the per-revision feature table — the one place that compares versions |
//! | [`negotiation`] | pure version selection for the legacy `initialize` handshake and the modern per-request model |
//! | [`sse`] | a WHATWG-exact `text/event-stream` decoder and an encoder |
//! | [`event_id`] | session-unique event ids that name their stream and position |
//! | [`event_log`] | the bounded per-stream replay log behind the [`event_log::EventStore`] trait |
//! | [`task_store`] | task state (the Tasks extension and 2025-11-25 tasks) behind the [`task_store::TaskStore`] trait, with a bounded in-memory store |
//! | [`lease`] | liveness across instances: leases on running requests behind the [`lease::LeaseStore`] trait, with an in-process store |
//! | [`session_store`] | shared session records (revision, capabilities, principal, idle expiry) behind the [`session_store::SessionStore`] trait, with a bounded in-memory store |
//! | [`cancel`] | a runtime-free cancellation token |
//! | [`endpoint`] | `Origin`/`Host` allowlists, `Accept` and `Content-Type` rules every server applies |
//! | [`error`] | the typed reasons behind [`transport::TransportError`]: [`error::Misbehaviour`], [`error::ResumeFailure`], [`error::ConfigError`] |
//! | [`transport`] | the client-side [`transport::Transport`] trait every revision implements |
//! | [`handler`] | the server-side handler API, written once and served in every era |
//! | [`admission`] | a bound on the handlers an engine runs at once and the bytes of requests they keep ([`admission::Admission`]) |
//! | [`request_head`] | [`request_head::RequestHead`]: the HTTP request a handler sees, kept compactly |

pub mod admission;
pub mod cancel;
pub mod endpoint;
pub mod error;
pub mod event_id;
pub mod event_log;
pub mod handler;
pub mod json_members;
pub mod jsonrpc;
pub mod lease;
pub mod negotiation;
pub mod request_head;
pub mod session_store;
pub mod sse;
pub mod task_store;
pub mod transport;
pub mod version;

pub use version::{Era, ProtocolVersion};
