//! The state every handle, stream and background task of one client shares.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use mcp_transport_core::jsonrpc::RequestId;
use mcp_transport_core::transport::{ConfigError, TransportError};
use tokio_util::sync::CancellationToken;

use super::config::ClientConfig;
use super::state::Current;

/// Shared client state.
pub(crate) struct Shared {
    /// The configuration (bounds, input handler, offered versions).
    pub(crate) config: ClientConfig,
    /// The HTTP client.
    pub(crate) http: reqwest::Client,
    /// The MCP endpoint.
    pub(crate) url: reqwest::Url,
    /// The next JSON-RPC request id (integers counting up).
    next_id: AtomicI64,
    /// The current session; `None` before the first handshake succeeded.
    pub(crate) current: RwLock<Option<Arc<Current>>>,
    /// Serializes handshakes (the first one and those after a 404).
    pub(crate) handshake: tokio::sync::Mutex<()>,
    /// Fired by `close()`: every stream ends and later calls fail.
    pub(crate) closed: CancellationToken,
    /// Whether `close()` has already run (it is idempotent).
    pub(crate) close_started: AtomicBool,
}

impl Shared {
    /// Validates the configuration and builds the shared state.
    pub(crate) fn new(config: ClientConfig) -> Result<Arc<Self>, TransportError> {
        let url = config.http.parse_url("MCP endpoint URL")?;
        if config.versions.is_empty() {
            return Err(TransportError::Config(ConfigError::NoVersions {
                setting: "ClientConfig::versions",
            }));
        }
        if let Some(v) = config
            .versions
            .iter()
            .find(|v| !v.is_legacy() || !v.is_known())
        {
            return Err(TransportError::Config(ConfigError::UnusableVersion {
                setting: "ClientConfig::versions",
                version: v.clone(),
                accepted: "known legacy (session-based) revisions",
            }));
        }
        let http = config.http.client()?;
        Ok(Arc::new(Shared {
            config,
            http,
            url,
            next_id: AtomicI64::new(1),
            current: RwLock::new(None),
            handshake: tokio::sync::Mutex::new(()),
            closed: CancellationToken::new(),
            close_started: AtomicBool::new(false),
        }))
    }

    /// A fresh request id.
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// The current session, if a handshake has succeeded.
    pub(crate) fn current(&self) -> Option<Arc<Current>> {
        match self.current.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Installs a new session.
    pub(crate) fn set_current(&self, current: Arc<Current>) {
        match self.current.write() {
            Ok(mut guard) => *guard = Some(current),
            Err(poisoned) => *poisoned.into_inner() = Some(current),
        }
    }

    /// `Err(Closed)` once `close()` has been called.
    pub(crate) fn check_open(&self) -> Result<(), TransportError> {
        if self.closed.is_cancelled() {
            Err(TransportError::Closed)
        } else {
            Ok(())
        }
    }
}
