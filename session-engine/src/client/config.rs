//! [`ClientConfig`]: what the client offers and the bounds it keeps.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_http_edge::config::ClientHttp;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::sse::DEFAULT_MAX_EVENT_SIZE;
use mcp_transport_core::transport::{InputHandler, NoInput};

/// The default wait before reconnecting when the server sent no `retry`.
pub const DEFAULT_RECONNECT_BACKOFF: Duration = Duration::from_secs(1);
/// The default bound on reconnections in a row that bring nothing new.
pub const DEFAULT_MAX_RESUME_ATTEMPTS: u32 = 20;
/// The default bound on the time spent reconnecting without anything new.
pub const DEFAULT_MAX_RESUME_TIME: Duration = Duration::from_secs(5 * 60);
/// The default bound on a JSON (`application/json`) answer body: 4 MiB;
/// the default overall deadline of one request: 5 minutes.
pub use mcp_http_edge::config::{DEFAULT_MAX_BODY_BYTES, DEFAULT_REQUEST_TIMEOUT};

/// How a [`LegacyClient`](super::LegacyClient) connects and what it bounds.
///
/// Build it with [`ClientConfig::new`] and the `with_*` methods, or set the
/// public fields directly:
///
/// ```
/// use std::time::Duration;
/// use mcp_session_engine::client::ClientConfig;
/// use mcp_transport_core::ProtocolVersion;
///
/// let config = ClientConfig::new("http://127.0.0.1:8080/mcp")
///     .with_versions(vec![ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18])
///     .with_reconnect_backoff(Duration::from_millis(500));
/// assert_eq!(config.versions[0], ProtocolVersion::V2025_11_25);
/// ```
#[derive(Clone)]
pub struct ClientConfig {
    /// Where and how to reach the server: `url`, the MCP endpoint
    /// (*Transports*, "Streamable HTTP": "a single HTTP endpoint path ...
    /// that supports both POST and GET"); `request_timeout`, the default
    /// overall deadline of a request (overridden per request by
    /// `RequestOptions::timeout`; `None` waits as long as the server keeps
    /// the stream alive); `http_client`, a custom HTTP client.
    pub http: ClientHttp,
    /// The legacy versions the client supports, most preferred first. The
    /// first is the one sent in `initialize` (*Lifecycle*, "Version
    /// Negotiation": it "SHOULD be the latest version supported by the
    /// client"); a counter-offer from the server is accepted when it is in
    /// this list.
    pub versions: Vec<ProtocolVersion>,
    /// `clientInfo` sent in `initialize` (an `Implementation` object).
    pub client_info: serde_json::Value,
    /// `capabilities` sent in `initialize`.
    pub capabilities: serde_json::Value,
    /// Answers server-to-client requests (sampling, elicitation, roots).
    /// `ping` is answered by the transport itself.
    pub input_handler: Arc<dyn InputHandler>,
    /// The wait before reconnecting when the server sent no `retry` field.
    pub reconnect_backoff: Duration,
    /// How many reconnections in a row may bring nothing new (no new event
    /// id, no message, no `retry` from a polling server) before the stream
    /// fails with
    /// [`TransportError::ResumeFailed`](mcp_transport_core::transport::TransportError::ResumeFailed).
    pub max_resume_attempts: u32,
    /// How long the client may keep reconnecting without anything new
    /// arriving before the stream fails with `ResumeFailed`.
    pub max_resume_time: Duration,
    /// The most bytes one SSE event may hold (the decoder's limit; exceeding
    /// it is a `TransportError::Limit`).
    pub max_event_bytes: usize,
    /// The most bytes a JSON answer body may hold (`TransportError::Limit`).
    pub max_body_bytes: usize,
}

impl ClientConfig {
    /// A configuration for the endpoint `url`, every other field at its default.
    pub fn new(url: impl Into<String>) -> Self {
        ClientConfig {
            http: ClientHttp::new(url),
            ..Default::default()
        }
    }

    /// Sets [`versions`](Self::versions).
    pub fn with_versions(mut self, versions: Vec<ProtocolVersion>) -> Self {
        self.versions = versions;
        self
    }

    /// Sets [`client_info`](Self::client_info).
    pub fn with_client_info(mut self, client_info: serde_json::Value) -> Self {
        self.client_info = client_info;
        self
    }

    /// Sets [`reconnect_backoff`](Self::reconnect_backoff).
    pub fn with_reconnect_backoff(mut self, backoff: Duration) -> Self {
        self.reconnect_backoff = backoff;
        self
    }

    /// Sets [`max_resume_attempts`](Self::max_resume_attempts).
    pub fn with_max_resume_attempts(mut self, attempts: u32) -> Self {
        self.max_resume_attempts = attempts;
        self
    }

    /// Sets [`max_resume_time`](Self::max_resume_time).
    pub fn with_max_resume_time(mut self, time: Duration) -> Self {
        self.max_resume_time = time;
        self
    }

    /// Sets [`max_body_bytes`](Self::max_body_bytes).
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }
}

mcp_http_edge::impl_client_setters!(ClientConfig);

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            http: ClientHttp::default(),
            versions: vec![
                ProtocolVersion::V2025_11_25,
                ProtocolVersion::V2025_06_18,
                ProtocolVersion::V2025_03_26,
            ],
            client_info: serde_json::json!({
                "name": "mcp-session-engine",
                "version": env!("CARGO_PKG_VERSION"),
            }),
            capabilities: serde_json::json!({}),
            input_handler: Arc::new(NoInput),
            reconnect_backoff: DEFAULT_RECONNECT_BACKOFF,
            max_resume_attempts: DEFAULT_MAX_RESUME_ATTEMPTS,
            max_resume_time: DEFAULT_MAX_RESUME_TIME,
            max_event_bytes: DEFAULT_MAX_EVENT_SIZE,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConfig")
            .field("http", &self.http)
            .field("versions", &self.versions)
            .field("client_info", &self.client_info)
            .field("capabilities", &self.capabilities)
            .field("reconnect_backoff", &self.reconnect_backoff)
            .field("max_resume_attempts", &self.max_resume_attempts)
            .field("max_resume_time", &self.max_resume_time)
            .field("max_event_bytes", &self.max_event_bytes)
            .field("max_body_bytes", &self.max_body_bytes)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults a client gets without setting anything: the newest
    /// revision first, 1 s before a reconnection without `retry`, 20
    /// reconnections in a row or 5 minutes of them, 4 MiB of JSON answer.
    #[test]
    fn the_defaults_are_the_documented_ones() {
        let c = ClientConfig::default();
        assert_eq!(
            c.versions,
            [
                ProtocolVersion::V2025_11_25,
                ProtocolVersion::V2025_06_18,
                ProtocolVersion::V2025_03_26
            ]
        );
        assert_eq!(c.reconnect_backoff, Duration::from_secs(1));
        assert_eq!(c.max_resume_attempts, 20);
        assert_eq!(c.max_resume_time, Duration::from_secs(300));
        assert_eq!(c.max_body_bytes, 4 * 1024 * 1024);
    }
    /// What a client says of itself at `initialize` is the caller's, and
    /// a config's `Debug` shows every bound.
    #[test]
    fn the_client_info_is_the_callers_and_debug_shows_the_bounds() {
        let info = serde_json::json!({"name": "my-gateway", "version": "2"});
        let c = ClientConfig::default().with_client_info(info.clone());
        assert_eq!(c.client_info, info);
        let shown = format!("{c:?}");
        for part in [
            "ClientConfig",
            "my-gateway",
            "max_resume_time: 300s",
            "max_body_bytes",
        ] {
            assert!(shown.contains(part), "{part} in {shown}");
        }
    }
}
