//! # mcp-http-edge
//!
//! The HTTP layer that every MCP engine in this workspace shares, written
//! once: the session-based engine (`mcp-session-engine`, revisions
//! 2025-03-26 to 2025-11-25), the stateless engine (`mcp-rev-2026-07-28`)
//! and the deprecated 2024-11-05 HTTP+SSE client (`mcp-rev-2024-11-05`) all speak
//! HTTP the same way below their protocol rules, and before this crate each
//! kept its own copy of that glue.
//!
//! `mcp-transport-core` holds the *rules* (which `Accept` values count,
//! which `Origin`s and `Host`s are allowed, the SSE codec, JSON-RPC) and
//! stays sans-IO: no tokio, axum, reqwest or hyper among its dependencies
//! (`scripts/check-core-deps.sh`). This crate is where those rules meet
//! `http`, axum and reqwest types:
//!
//! | module | what |
//! | --- | --- |
//! | [`header_scan`] | a few headers of a request found in one pass, each with how often it was sent |
//! | [`headers`] | one constant per header name and media type of the transport |
//! | [`server`] | `Origin`/`Host`/`Accept`/`Content-Type` checks on requests, size-limited body reads, replies (JSON, SSE, JSON-RPC errors with their HTTP status), the `tower::Service` glue of the engines |
//! | [`client`] | sending with reqwest, error chains, media types, bounded answer bodies, error bodies, the SSE reader over a response |
//! | [`trace`] | the span and field names of the engines and clients, and how a stream connection ended |
//! | [`config`] | the configuration parts every engine and client has: [`config::OriginPolicy`], [`config::ServerHttp`], [`config::ClientHttp`] |
//!
//! Nothing here knows a protocol revision: what differs by revision stays
//! in the revision's crate (for example the 2026-07-28 `Mcp-Param-*` value
//! encoding), and the error texts built here are the ones the engines built
//! before.

pub mod client;
pub mod config;
#[doc(hidden)]
pub mod faults;
pub mod header_scan;
pub mod headers;
pub mod server;
pub mod trace;

/// Paths the [`impl_engine_service!`], [`impl_engine_router!`],
/// [`impl_client_setters!`] and [`impl_server_setters!`] expansions
/// name; not public API.
#[doc(hidden)]
pub mod __private {
    pub use axum::body::HttpBody;
    pub use axum::{BoxError, Router};
    pub use bytes::Bytes;
    pub use http::Request;
    pub use http::{HeaderName, HeaderValue};
    pub use mcp_transport_core::transport::InputHandler;
    pub use reqwest::Client as HttpClient;
    pub use serde_json::Value as JsonValue;
    pub use tower::Service;
}
