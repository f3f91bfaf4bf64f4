//! The state every handle and stream of one client shares.

use std::sync::RwLock;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::RequestId;
use mcp_transport_core::transport::{ConfigError, TransportError};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::config::ModernClientConfig;
use super::tool_cache::ToolCache;

/// The version in use and how it was chosen.
#[derive(Clone, Debug)]
pub(crate) struct VersionChoice {
    /// The version sent in `_meta` and `MCP-Protocol-Version`.
    pub(crate) version: ProtocolVersion,
    /// Why (for `Transport::negotiated`).
    pub(crate) reason: String,
}

/// Shared client state.
pub(crate) struct Shared {
    /// The configuration.
    pub(crate) config: ModernClientConfig,
    /// The HTTP client.
    pub(crate) http: reqwest::Client,
    /// The MCP endpoint.
    pub(crate) url: reqwest::Url,
    /// The next JSON-RPC request id (integers counting up; every attempt of
    /// every request gets a fresh one).
    next_id: AtomicI64,
    /// The next progress token number.
    next_progress: AtomicU64,
    /// The protocol version of the next request.
    version: RwLock<VersionChoice>,
    /// Fired by `close()`: every stream ends and later calls fail.
    pub(crate) closed: CancellationToken,
    /// The `x-mcp-header` annotations of the tools seen in `tools/list`.
    pub(crate) tools: ToolCache,
}

impl Shared {
    /// Validates the configuration and builds the shared state.
    pub(crate) fn new(config: ModernClientConfig) -> Result<Self, TransportError> {
        let url = config.http.parse_url("MCP endpoint URL")?;
        let Some(first) = config.versions.first().cloned() else {
            return Err(TransportError::Config(ConfigError::NoVersions {
                setting: "ModernClientConfig::versions",
            }));
        };
        if let Some(v) = config.versions.iter().find(|v| !v.is_modern()) {
            return Err(TransportError::Config(ConfigError::UnusableVersion {
                setting: "ModernClientConfig::versions",
                version: v.clone(),
                accepted: "modern (stateless, 2026-07-28 and later) versions",
            }));
        }
        let http = config.http.client()?;
        Ok(Shared {
            http,
            url,
            next_id: AtomicI64::new(1),
            next_progress: AtomicU64::new(1),
            version: RwLock::new(VersionChoice {
                reason: format!("{first}: the most preferred configured version"),
                version: first,
            }),
            closed: CancellationToken::new(),
            tools: ToolCache::default(),
            config,
        })
    }

    /// A fresh request id.
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// A fresh progress token.
    pub(crate) fn next_progress_token(&self) -> Value {
        Value::String(format!(
            "progress-{}",
            self.next_progress.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// The version for the next request.
    pub(crate) fn version(&self) -> ProtocolVersion {
        self.version_choice().version
    }

    /// The version for the next request and why it was chosen.
    pub(crate) fn version_choice(&self) -> VersionChoice {
        self.version
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Switches the version of later requests.
    pub(crate) fn set_version(&self, version: ProtocolVersion, reason: String) {
        let mut current = self.version.write().unwrap_or_else(|e| e.into_inner());
        if current.version != version {
            tracing::info!(from = %current.version, to = %version, "switching protocol version: {reason}");
        }
        *current = VersionChoice { version, reason };
    }

    /// `Err(Closed)` once `close()` has run.
    pub(crate) fn check_open(&self) -> Result<(), TransportError> {
        if self.closed.is_cancelled() {
            Err(TransportError::Closed)
        } else {
            Ok(())
        }
    }
}
