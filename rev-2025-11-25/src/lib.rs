//! # mcp-rev-2025-11-25
//!
//! MCP Streamable HTTP as revision **2025-11-25** defines it, on the
//! session-based engine of [`mcp_session_engine`]. What 2025-11-25 adds to
//! the session-based transport is SEP-1699 ("Support SSE polling via
//! server-side disconnect"), and it lives here: [`Revision`] is the engine's
//! [`SessionRevision`](mcp_session_engine::revision::SessionRevision) for
//! this version (chosen once, when `initialize` settles on 2025-11-25), and
//! its [`policy`] module holds the disconnect policies as pure state
//! machines.
//!
//! | rule (2025-11-25 *Transports*) | where |
//! | --- | --- |
//! | "Sending Messages to the Server" 6: "The server SHOULD immediately send an SSE event consisting of an event ID and an empty `data` field in order to prime the client to reconnect" (SEP-1699: "MUST") | the server primes every new stream |
//! | 6: "After the server has sent an SSE event with an event ID to the client, the server MAY close the _connection_ (without terminating the _SSE stream_) at any time" | [`DisconnectPolicy`] ([`policy::PolicyState`] per connection) and `RequestContext::close_sse_stream` |
//! | 6: "it SHOULD send an SSE event with a standard `retry` field before closing the connection. The client MUST respect the `retry` field" | [`Revision::retry_ms`]; the client waits exactly that long |
//! | 6: "Disconnection SHOULD NOT be interpreted as the client cancelling its request. To cancel, the client SHOULD explicitly send an MCP `CancelledNotification`" | a dropped connection never cancels; dropping a `ResponseStream` sends `notifications/cancelled` |
//! | "Resumability and Redelivery" 2: resume "with an HTTP GET ... and include the `Last-Event-ID` header"; the server "MUST NOT replay messages that would have been delivered on a different stream" | the client's resumption loop; the server's event log |
//! | "Session Management" 3-5: 404 for a terminated session, a fresh `InitializeRequest` after it, `DELETE` to end a session | both sides |
//! | "Protocol Version Header": `MCP-Protocol-Version: 2025-11-25` on every request after `initialize`, 400 when invalid or unsupported | both sides |
//!
//! # Use
//!
//! ```no_run
//! use std::sync::Arc;
//! # async fn run(handler: Arc<dyn mcp_transport_core::handler::Handler>) -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_rev_2025_11_25::{self as rev, PollingExt};
//! use mcp_transport_core::transport::{RequestOptions, Transport};
//!
//! // Server: poll clients every 500 ms instead of holding connections open.
//! let config = rev::server_config()
//!     .with_disconnect(rev::DisconnectPolicy::AfterPriming)
//!     .with_retry_ms(500);
//! let server = rev::server(handler, config);
//! let app = axum::Router::new().nest_service("/mcp", server.router());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! tokio::spawn(async move { axum::serve(listener, app).await });
//!
//! // Client.
//! let client = rev::connect("http://127.0.0.1:3000/mcp").await?;
//! let response = client
//!     .request("tools/list", None, RequestOptions::default())
//!     .await?
//!     .response()
//!     .await?;
//! println!("{:?}", response.payload);
//! client.close().await?;
//! # Ok(()) }
//! ```
//!
//! To serve or speak several legacy revisions at once, build a
//! [`ServerConfig`] or [`ClientConfig`] with more `versions` and use
//! [`LegacyServer::new`] / [`LegacyClient::connect`] directly: the engine is
//! the same.

pub mod policy;
mod server;
pub mod tasks;

use std::sync::Arc;

use mcp_transport_core::handler::Handler;
use mcp_transport_core::transport::TransportError;

pub use mcp_session_engine;
pub use mcp_session_engine::client::{ClientConfig, InitializeResult, LegacyClient};
pub use mcp_session_engine::server::{LegacyServer, ServerConfig};
pub use mcp_transport_core;
pub use mcp_transport_core::ProtocolVersion;
pub use policy::{DisconnectPolicy, ParsePolicyError};
pub use server::{DEFAULT_RESUME_HOLD, DEFAULT_RETRY_MS, PollingExt, Revision, TasksExt};
pub use tasks::{Tasks, TasksConfig};

/// The protocol revision this crate speaks: `2025-11-25`, the value of
/// `protocolVersion` in `initialize` and of the `MCP-Protocol-Version`
/// header (*Transports*, "Protocol Version Header": "For example:
/// `MCP-Protocol-Version: 2025-11-25`").
pub const VERSION: ProtocolVersion = ProtocolVersion::V2025_11_25;

/// The server configuration for this revision: [`ServerConfig::default`]
/// with `versions = [2025-11-25]` and this crate's [`Revision`]. An
/// `initialize` offering another version is answered with 2025-11-25
/// (*Lifecycle*, "Version Negotiation": the server "MUST respond with
/// another protocol version it supports").
///
/// The defaults keep every connection open until its response
/// ([`DisconnectPolicy::Never`]) with `retry_ms = 1000`; set
/// [`PollingExt::with_disconnect`] to poll (SEP-1699).
pub fn server_config() -> ServerConfig {
    ServerConfig::default()
        .with_versions([VERSION])
        .with_revision(Arc::new(Revision::default()))
}

/// Adds this revision's implementation ([`Revision::default`]) to
/// `config` unless it has one already; which versions are served is still
/// `config.versions`. For servers of several legacy revisions.
pub fn register(config: ServerConfig) -> ServerConfig {
    if config.revision(&VERSION).is_some() {
        return config;
    }
    config.with_revision(Arc::new(Revision::default()))
}

/// A server of this revision answering with `handler`.
///
/// `config.versions` is replaced by `[2025-11-25]`, whatever it held, so
/// the server negotiates this revision only (its [`Revision`] is added when
/// missing); every other field is used as given. Start from
/// [`server_config`].
pub fn server(handler: Arc<dyn Handler>, config: ServerConfig) -> LegacyServer {
    LegacyServer::new(handler, register(config).with_versions([VERSION]))
}

/// The client configuration for the endpoint `url`: [`ClientConfig::new`]
/// with `versions = [2025-11-25]`. A server answering `initialize` with any
/// other version is refused with `TransportError::Negotiation` after a
/// best-effort `DELETE` (*Lifecycle*, "Version Negotiation": "If the client
/// does not support the version in the server's response, it SHOULD
/// disconnect").
///
/// Declare `capabilities` (for example `{"elicitation": {}}`) and set an
/// [`input_handler`](ClientConfig::input_handler) to answer the server's
/// requests.
pub fn client_config(url: impl Into<String>) -> ClientConfig {
    ClientConfig::new(url).with_versions(vec![VERSION])
}

/// Connects to the endpoint `url` with [`client_config`]: `initialize`,
/// the version check and `notifications/initialized` (*Lifecycle*,
/// "Initialization").
pub async fn connect(url: impl Into<String>) -> Result<LegacyClient, TransportError> {
    LegacyClient::connect(client_config(url)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_name_this_revision_only() {
        assert_eq!(VERSION.as_str(), "2025-11-25");
        assert_eq!(server_config().versions, [VERSION]);
        assert!(server_config().revision(&VERSION).is_some());
        let kept = register(ServerConfig::default().with_versions([]).with_retry_ms(7));
        let twice = register(register(kept));
        assert_eq!(twice.revisions.len(), 1);
        assert_eq!(
            twice.polling().retry_ms,
            7,
            "an existing implementation is kept"
        );
        assert!(
            twice.versions.is_empty(),
            "register never changes the served versions"
        );
        assert_eq!(client_config("http://127.0.0.1:1/mcp").versions, [VERSION]);
        assert!(VERSION.has(|f| f.sse_polling && f.sessions && f.version_header));
    }
}
