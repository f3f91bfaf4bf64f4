//! [`ModernClientConfig`]: what the client declares on every request and the
//! bounds it keeps.

use std::fmt;
use std::sync::Arc;

use mcp_http_edge::config::ClientHttp;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::LogLevel;
use mcp_transport_core::sse::DEFAULT_MAX_EVENT_SIZE;
use mcp_transport_core::transport::{InputHandler, NoInput};

/// The default bound on `InputRequiredResult` rounds of one request.
pub const DEFAULT_MAX_INPUT_ROUNDS: u32 = 8;
/// The default bound on a JSON (`application/json`) answer body: 4 MiB;
/// the default deadline of one HTTP exchange (one POST and its answer): 5
/// minutes.
pub use mcp_http_edge::config::{DEFAULT_MAX_BODY_BYTES, DEFAULT_REQUEST_TIMEOUT};

/// How a [`ModernClient`](super::ModernClient) talks to a 2026-07-28 server.
///
/// There is no handshake (*Versioning*, "There is no negotiation
/// handshake"): everything here is sent with **every** request, in
/// `params._meta` (*Overview*, "`_meta`", "Per-request protocol fields") and
/// mirrored into headers (*Streamable HTTP*, "Request Metadata").
///
/// ```
/// use std::time::Duration;
/// use mcp_rev_2026_07_28::client::ModernClientConfig;
/// use mcp_transport_core::handler::LogLevel;
///
/// let config = ModernClientConfig::new("http://127.0.0.1:8080/mcp")
///     .with_capabilities(serde_json::json!({"elicitation": {}}))
///     .with_log_level(Some(LogLevel::Info))
///     .with_request_timeout(Some(Duration::from_secs(30)));
/// assert_eq!(config.max_input_rounds, 8);
/// ```
#[derive(Clone)]
pub struct ModernClientConfig {
    /// Where and how to reach the server: `url`, the MCP endpoint
    /// (*Streamable HTTP*: "a single HTTP endpoint path ... that supports
    /// POST"); `http_client`, a custom HTTP client; `request_timeout`, the
    /// deadline of one HTTP exchange: one POST until its response (each
    /// MRTR round and each retry gets a fresh one; the input handler's time
    /// is not counted), overridden per request by `RequestOptions::timeout`.
    /// For `subscriptions/listen` it bounds the wait for the acknowledgment
    /// only. `None` waits as long as the server keeps the stream open.
    pub http: ClientHttp,
    /// The modern protocol versions the client speaks, most preferred first.
    /// The first is sent until a server's `UnsupportedProtocolVersionError`
    /// (or `server/discover`) makes the client pick the highest version both
    /// sides support (*Versioning*, "Protocol Version Negotiation"). Legacy
    /// (handshake-era) versions are refused by
    /// [`ModernClient::new`](super::ModernClient::new); unknown versions dated
    /// 2026-07-28 or later are accepted as modern.
    pub versions: Vec<ProtocolVersion>,
    /// `io.modelcontextprotocol/clientInfo` (an `Implementation`: `name`,
    /// `version`, ...). `None` sends no client info; clients "SHOULD include
    /// `io.modelcontextprotocol/clientInfo` on every request unless
    /// specifically configured not to do so", so the default is this crate's.
    pub client_info: Option<serde_json::Value>,
    /// `io.modelcontextprotocol/clientCapabilities` (required; `{}` declares
    /// none). Declare `sampling`, `elicitation` or `roots` here when the
    /// [`input_handler`](Self::input_handler) can answer them: servers "MUST
    /// NOT send an `inputRequests` that the client has not declared support
    /// for" (*MRTR*, "Server Requirements").
    pub capabilities: serde_json::Value,
    /// Answers the `inputRequests` of an `InputRequiredResult` (*MRTR*).
    pub input_handler: Arc<dyn InputHandler>,
    /// The most `InputRequiredResult` rounds one request may take before it
    /// fails with `TransportError::Limit`.
    pub max_input_rounds: u32,
    /// `io.modelcontextprotocol/logLevel`: when set, the server may send
    /// `notifications/message` at or above this level on a request's stream;
    /// when `None` it "MUST NOT send any" (schema, `RequestMetaObject`).
    pub log_level: Option<LogLevel>,
    /// The most bytes one SSE event may hold (the decoder's limit; exceeding
    /// it is `TransportError::Limit`).
    pub max_event_bytes: usize,
    /// The most bytes a JSON answer body may hold (`TransportError::Limit`).
    pub max_body_bytes: usize,
}

impl ModernClientConfig {
    /// A configuration for the endpoint `url`, every other field at its default.
    pub fn new(url: impl Into<String>) -> Self {
        ModernClientConfig {
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
    pub fn with_client_info(mut self, client_info: Option<serde_json::Value>) -> Self {
        self.client_info = client_info;
        self
    }

    /// Sets [`max_input_rounds`](Self::max_input_rounds).
    pub fn with_max_input_rounds(mut self, rounds: u32) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Sets [`log_level`](Self::log_level).
    pub fn with_log_level(mut self, level: Option<LogLevel>) -> Self {
        self.log_level = level;
        self
    }

    /// Sets [`max_body_bytes`](Self::max_body_bytes).
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }
}

mcp_http_edge::impl_client_setters!(ModernClientConfig);

impl Default for ModernClientConfig {
    fn default() -> Self {
        ModernClientConfig {
            http: ClientHttp::default(),
            versions: vec![ProtocolVersion::V2026_07_28],
            client_info: Some(serde_json::json!({
                "name": "mcp-rev-2026-07-28",
                "version": env!("CARGO_PKG_VERSION"),
            })),
            capabilities: serde_json::json!({}),
            input_handler: Arc::new(NoInput),
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            log_level: None,
            max_event_bytes: DEFAULT_MAX_EVENT_SIZE,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl fmt::Debug for ModernClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModernClientConfig")
            .field("http", &self.http)
            .field("versions", &self.versions)
            .field("client_info", &self.client_info)
            .field("capabilities", &self.capabilities)
            .field("max_input_rounds", &self.max_input_rounds)
            .field("log_level", &self.log_level)
            .field("max_event_bytes", &self.max_event_bytes)
            .field("max_body_bytes", &self.max_body_bytes)
            .finish_non_exhaustive()
    }
}
