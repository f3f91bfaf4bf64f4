//! Two instances sharing one set of in-memory stores, as instances
//! behind a load balancer without sticky sessions share Redis
//! (`server_cluster*.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_session_engine::server::ServerConfig;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::event_log::MemoryEventStore;
use mcp_transport_core::session_store::{
    LocalSignalBus, MemorySessionStore, MemorySessionStoreConfig, NewSession, SessionRecord,
    SessionStore, SessionStoreError,
};

use super::{TestServer, config, start};

/// A [`MemorySessionStore`] that can be taken out of reach: while `down`,
/// every operation fails as a backend error.
pub struct Sessions {
    /// The store behind.
    pub inner: MemorySessionStore,
    /// While set, every operation fails.
    pub down: AtomicBool,
}

impl Sessions {
    fn check(&self) -> Result<(), SessionStoreError> {
        if self.down.load(Ordering::SeqCst) {
            Err(SessionStoreError::Backend("connection refused".into()))
        } else {
            Ok(())
        }
    }
}

#[async_trait::async_trait]
impl SessionStore for Sessions {
    async fn create(&self, s: NewSession, now_ms: u64) -> Result<SessionRecord, SessionStoreError> {
        self.check()?;
        self.inner.create(s, now_ms).await
    }

    async fn get(&self, id: &str, now_ms: u64) -> Result<SessionRecord, SessionStoreError> {
        self.check()?;
        self.inner.get(id, now_ms).await
    }

    async fn touch(&self, id: &str, now_ms: u64) -> Result<SessionRecord, SessionStoreError> {
        self.check()?;
        self.inner.touch(id, now_ms).await
    }

    async fn remove(&self, id: &str) -> Result<bool, SessionStoreError> {
        self.check()?;
        self.inner.remove(id).await
    }

    async fn purge_expired(&self, now_ms: u64) -> Result<usize, SessionStoreError> {
        self.check()?;
        self.inner.purge_expired(now_ms).await
    }
}

/// What the two instances share.
pub struct Stores {
    /// The session records.
    pub sessions: Arc<Sessions>,
    /// The event log.
    pub events: Arc<MemoryEventStore>,
    /// The signal bus.
    pub bus: Arc<LocalSignalBus>,
}

impl Stores {
    /// With the default limits.
    pub fn new() -> Stores {
        Stores::limited(MemorySessionStoreConfig::default())
    }

    /// With a session store of these limits.
    pub fn limited(limits: MemorySessionStoreConfig) -> Stores {
        Stores {
            sessions: Arc::new(Sessions {
                inner: MemorySessionStore::new(limits),
                down: AtomicBool::new(false),
            }),
            events: Arc::new(MemoryEventStore::default()),
            bus: Arc::new(LocalSignalBus::default()),
        }
    }

    /// An instance's config: 2025-06-18 and 2025-11-25 over these stores.
    pub fn config(&self) -> ServerConfig {
        config()
            .with_versions([ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25])
            .with_session_store(self.sessions.clone())
            .with_event_store(self.events.clone())
            .with_signals(self.bus.clone())
    }

    /// An instance whose sessions go idle after `ms` (its sweep runs every
    /// quarter of that).
    pub async fn start_idle(&self, ms: u64) -> TestServer {
        start(
            self.config()
                .with_session_idle_timeout(Duration::from_millis(ms)),
        )
        .await
    }

    /// Two instances with the same config.
    pub async fn pair(&self) -> (TestServer, TestServer) {
        (start(self.config()).await, start(self.config()).await)
    }

    /// A record written straight into the store, as an instance of another
    /// build might have: `version`, `tag`, `capabilities` as given.
    pub async fn put(&self, id: &str, version: &str, tag: &str, capabilities: &str) {
        let raw = |s: &str| serde_json::value::RawValue::from_string(s.to_owned()).unwrap();
        let new = NewSession {
            id: id.to_owned(),
            tag: tag.to_owned(),
            version: version.to_owned(),
            capabilities: raw(capabilities),
            client_info: Some(raw(r#"{"name":"elsewhere","version":"9"}"#)),
            principal: None,
            idle_timeout_ms: 60_000,
        };
        self.sessions.inner.create(new, now_ms()).await.unwrap();
    }
}

/// Wall-clock milliseconds, the session store's clock.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}
