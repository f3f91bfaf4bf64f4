//! [`HttpSseConfig`]: what the HTTP+SSE client offers and the bounds it keeps.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_http_edge::config::ClientHttp;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::sse::DEFAULT_MAX_EVENT_SIZE;
use mcp_transport_core::transport::{ConfigError, InputHandler, NoInput, TransportError};

/// The default wait for the `endpoint` event after the SSE stream was
/// requested: 10 seconds.
pub const DEFAULT_ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default overall deadline of one request: 5 minutes.
pub use mcp_http_edge::config::DEFAULT_REQUEST_TIMEOUT;
/// The default capacity of the bounded channels the reader task feeds (one
/// per request for its progress notifications, one for the listener).
pub const DEFAULT_CHANNEL_CAPACITY: usize = 64;
/// The default bound on server-to-client requests being answered at once.
pub const DEFAULT_MAX_CONCURRENT_INPUT: usize = 16;

/// How an [`HttpSseClient`](super::HttpSseClient) connects and what it bounds.
///
/// Build it with [`HttpSseConfig::new`] and the `with_*` methods, or set
/// the public fields directly:
///
/// ```
/// use std::time::Duration;
/// use mcp_rev_2024_11_05::HttpSseConfig;
///
/// let config = HttpSseConfig::new("http://127.0.0.1:8080/sse")
///     .with_endpoint_timeout(Duration::from_secs(2));
/// assert_eq!(config.protocol_versions[0].as_str(), "2024-11-05");
/// ```
#[derive(Clone)]
pub struct HttpSseConfig {
    /// Where and how to reach the server: `url`, the SSE URL (2024-11-05
    /// *Transports*, "HTTP with SSE": "An SSE endpoint, for clients to
    /// establish a connection and receive messages from the server"), also
    /// the URL the user gave the negotiating client (2025-11-25
    /// *Transports*, "Backwards Compatibility": "Issue a GET request to the
    /// server URL"); `request_timeout`, the default overall deadline of a
    /// request, `initialize` included (overridden per request by
    /// `RequestOptions::timeout`; `None` waits as long as the SSE stream
    /// stays open); `http_client`, a custom HTTP client, which must not have
    /// an overall request timeout (it would cut the SSE stream).
    pub http: ClientHttp,
    /// `clientInfo` sent in `initialize` (an `Implementation` object).
    pub client_info: serde_json::Value,
    /// `capabilities` sent in `initialize`.
    pub capabilities: serde_json::Value,
    /// Answers server-to-client requests (sampling, roots). `ping` is
    /// answered by the transport itself.
    pub input_handler: Arc<dyn InputHandler>,
    /// The protocol versions the client accepts over this transport, most
    /// preferred first; the first is offered in `initialize` and a
    /// counter-offer is accepted when it is in the list (2024-11-05
    /// *Lifecycle*, "Version Negotiation"). Default: `[2024-11-05]`. Only
    /// initialization-based (legacy era) versions make sense here.
    pub protocol_versions: Vec<ProtocolVersion>,
    /// The most bytes one SSE event may hold (the decoder's limit).
    /// Exceeding it ends the connection with `TransportError::Limit`.
    pub max_event_bytes: usize,
    /// How long [`connect`](super::HttpSseClient::connect) waits for the
    /// answer to its GET and the `endpoint` event on it. A server that does
    /// not speak HTTP+SSE must not make connecting hang.
    pub endpoint_timeout: Duration,
    /// The capacity of the bounded channels the reader task fills: each
    /// request's progress notifications and the listener's messages. When a
    /// consumer falls this far behind, further notifications for it are
    /// dropped (and logged) rather than stall every other request.
    pub channel_capacity: usize,
    /// How many server-to-client requests may be answered at once; past it
    /// the reader waits (back-pressure on the SSE stream).
    pub max_concurrent_input: usize,
}

impl HttpSseConfig {
    /// A configuration for the SSE URL `url`, every other field at its
    /// default.
    pub fn new(url: impl Into<String>) -> Self {
        HttpSseConfig {
            http: ClientHttp::new(url),
            ..Default::default()
        }
    }

    /// Sets [`client_info`](Self::client_info).
    pub fn with_client_info(mut self, client_info: serde_json::Value) -> Self {
        self.client_info = client_info;
        self
    }

    /// Sets [`protocol_versions`](Self::protocol_versions).
    pub fn with_protocol_versions(mut self, versions: Vec<ProtocolVersion>) -> Self {
        self.protocol_versions = versions;
        self
    }

    /// Sets [`endpoint_timeout`](Self::endpoint_timeout).
    pub fn with_endpoint_timeout(mut self, timeout: Duration) -> Self {
        self.endpoint_timeout = timeout;
        self
    }

    /// Sets [`channel_capacity`](Self::channel_capacity).
    pub fn with_channel_capacity(mut self, capacity: usize) -> Self {
        self.channel_capacity = capacity;
        self
    }

    /// Sets [`max_concurrent_input`](Self::max_concurrent_input).
    pub fn with_max_concurrent_input(mut self, n: usize) -> Self {
        self.max_concurrent_input = n;
        self
    }

    /// Checks the configuration (nothing is sent when it is refused).
    pub(crate) fn validate(&self) -> Result<reqwest::Url, TransportError> {
        let url = self.http.parse_url("SSE URL")?;
        if self.protocol_versions.is_empty() {
            return Err(TransportError::Config(ConfigError::NoVersions {
                setting: "HttpSseConfig::protocol_versions",
            }));
        }
        if let Some(v) = self
            .protocol_versions
            .iter()
            .find(|v| !v.is_well_formed() || !v.is_legacy())
        {
            return Err(TransportError::Config(ConfigError::UnusableVersion {
                setting: "HttpSseConfig::protocol_versions",
                version: v.clone(),
                accepted: "initialization-based (legacy era) versions, as HTTP+SSE servers negotiate with initialize",
            }));
        }
        if self.channel_capacity == 0 || self.max_concurrent_input == 0 {
            return Err(TransportError::Config(ConfigError::Zero {
                setting: "HttpSseConfig::channel_capacity or max_concurrent_input",
            }));
        }
        Ok(url)
    }
}

mcp_http_edge::impl_client_setters!(HttpSseConfig);

impl Default for HttpSseConfig {
    fn default() -> Self {
        HttpSseConfig {
            http: ClientHttp::default(),
            client_info: serde_json::json!({
                "name": "mcp-negotiate",
                "version": env!("CARGO_PKG_VERSION"),
            }),
            capabilities: serde_json::json!({}),
            input_handler: Arc::new(NoInput),
            protocol_versions: vec![ProtocolVersion::V2024_11_05],
            max_event_bytes: DEFAULT_MAX_EVENT_SIZE,
            endpoint_timeout: DEFAULT_ENDPOINT_TIMEOUT,
            channel_capacity: DEFAULT_CHANNEL_CAPACITY,
            max_concurrent_input: DEFAULT_MAX_CONCURRENT_INPUT,
        }
    }
}

impl fmt::Debug for HttpSseConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSseConfig")
            .field("http", &self.http)
            .field("client_info", &self.client_info)
            .field("capabilities", &self.capabilities)
            .field("protocol_versions", &self.protocol_versions)
            .field("max_event_bytes", &self.max_event_bytes)
            .field("endpoint_timeout", &self.endpoint_timeout)
            .field("channel_capacity", &self.channel_capacity)
            .field("max_concurrent_input", &self.max_concurrent_input)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setters_keep_what_they_are_given_and_debug_shows_it() {
        let c = HttpSseConfig::new("http://127.0.0.1:1/sse")
            .with_client_info(serde_json::json!({"name": "me", "version": "9"}))
            .with_channel_capacity(3)
            .with_max_concurrent_input(5);
        assert_eq!(c.client_info["name"], "me");
        assert_eq!(c.channel_capacity, 3);
        assert_eq!(c.max_concurrent_input, 5);
        let debug = format!("{c:?}");
        for part in [
            "HttpSseConfig",
            "127.0.0.1:1",
            "\"me\"",
            "channel_capacity: 3",
        ] {
            assert!(debug.contains(part), "{part} in {debug}");
        }
    }

    /// Either bound at zero is refused on its own.
    #[test]
    fn each_zero_bound_is_refused() {
        let ok = HttpSseConfig::new("http://127.0.0.1:1/sse");
        assert!(ok.validate().is_ok());
        for c in [
            ok.clone().with_channel_capacity(0),
            ok.clone().with_max_concurrent_input(0),
        ] {
            assert!(
                matches!(
                    c.validate(),
                    Err(TransportError::Config(ConfigError::Zero { .. }))
                ),
                "{c:?}"
            );
        }
    }
}
