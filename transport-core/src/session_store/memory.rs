//! [`MemorySessionStore`]: the bounded in-memory [`SessionStore`].

use rustc_hash::FxHashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{NewSession, SessionRecord, SessionStore, SessionStoreError};

/// Limits of a [`MemorySessionStore`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemorySessionStoreConfig {
    /// Sessions; creating one more (after dropping expired ones) is
    /// [`SessionStoreError::TooManySessions`]. Default
    /// [`DEFAULT_MAX_SESSIONS`](crate::event_log::DEFAULT_MAX_SESSIONS).
    pub max_sessions: usize,
    /// Bytes of one record ([`SessionRecord::payload_bytes`]). Default
    /// 64 KiB.
    pub max_record_bytes: usize,
}

impl Default for MemorySessionStoreConfig {
    fn default() -> Self {
        MemorySessionStoreConfig {
            max_sessions: crate::event_log::DEFAULT_MAX_SESSIONS,
            max_record_bytes: 64 * 1024,
        }
    }
}

/// The in-memory [`SessionStore`]: one mutex over a map, held for one
/// operation; no method awaits.
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    config: MemorySessionStoreConfig,
    /// Keyed by session ids the server minted (FxHash: no client chooses a
    /// key).
    sessions: Mutex<FxHashMap<String, SessionRecord>>,
}

impl MemorySessionStore {
    /// A store with these limits.
    pub fn new(config: MemorySessionStoreConfig) -> Self {
        MemorySessionStore {
            config,
            sessions: Mutex::default(),
        }
    }

    /// Stored sessions (expired ones not yet dropped included).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no session is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, FxHashMap<String, SessionRecord>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the live session `id`; an expired one is dropped and
    /// reported.
    fn with_live<T>(
        &self,
        id: &str,
        now_ms: u64,
        f: impl FnOnce(&mut SessionRecord) -> T,
    ) -> Result<T, SessionStoreError> {
        let mut sessions = self.lock();
        let Some(record) = sessions.get_mut(id) else {
            return Err(SessionStoreError::NotFound { id: id.to_owned() });
        };
        if record.is_expired(now_ms) {
            sessions.remove(id);
            return Err(SessionStoreError::Expired { id: id.to_owned() });
        }
        Ok(f(record))
    }
}

#[async_trait::async_trait]
impl SessionStore for MemorySessionStore {
    async fn create(
        &self,
        session: NewSession,
        now_ms: u64,
    ) -> Result<SessionRecord, SessionStoreError> {
        let record = SessionRecord::new(session, now_ms, self.config.max_record_bytes)?;
        let mut sessions = self.lock();
        let id = record.session.id.clone();
        if sessions.get(&id).is_some_and(|r| !r.is_expired(now_ms)) {
            return Err(SessionStoreError::Exists { id });
        }
        if sessions.len() >= self.config.max_sessions {
            sessions.retain(|_, r| !r.is_expired(now_ms));
            if sessions.len() >= self.config.max_sessions {
                return Err(SessionStoreError::TooManySessions {
                    max: self.config.max_sessions,
                });
            }
        }
        sessions.insert(id, record.clone());
        Ok(record)
    }

    async fn get(&self, id: &str, now_ms: u64) -> Result<SessionRecord, SessionStoreError> {
        self.with_live(id, now_ms, |r| r.clone())
    }

    async fn touch(&self, id: &str, now_ms: u64) -> Result<SessionRecord, SessionStoreError> {
        self.with_live(id, now_ms, |r| {
            r.last_seen_ms = r.last_seen_ms.max(now_ms);
            r.clone()
        })
    }

    async fn remove(&self, id: &str) -> Result<bool, SessionStoreError> {
        Ok(self.lock().remove(id).is_some())
    }

    async fn purge_expired(&self, now_ms: u64) -> Result<usize, SessionStoreError> {
        let mut sessions = self.lock();
        let before = sessions.len();
        sessions.retain(|_, r| !r.is_expired(now_ms));
        Ok(before - sessions.len())
    }
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;
    use serde_json::value::RawValue;

    use super::*;

    fn session(id: &str, idle_timeout_ms: u64) -> NewSession {
        NewSession {
            id: id.to_owned(),
            tag: "t".into(),
            version: "2025-11-25".into(),
            capabilities: RawValue::from_string("{}".into()).unwrap(),
            client_info: None,
            principal: None,
            idle_timeout_ms,
        }
    }

    #[test]
    fn the_default_limits() {
        let d = MemorySessionStoreConfig::default();
        assert_eq!(d.max_sessions, crate::event_log::DEFAULT_MAX_SESSIONS);
        assert_eq!(d.max_record_bytes, 65_536);
    }

    /// `len` counts stored records, an expired one until it is dropped
    /// (by the read that reports it, a purge or `remove`).
    #[test]
    fn len_and_is_empty_count_stored_sessions() {
        let s = MemorySessionStore::default();
        assert_eq!((s.len(), s.is_empty()), (0, true));
        block_on(s.create(session("a", 10), 0)).unwrap();
        block_on(s.create(session("b", 1_000), 0)).unwrap();
        block_on(s.create(session("c", 1_000), 0)).unwrap();
        assert_eq!((s.len(), s.is_empty()), (3, false));
        // Expired but not yet dropped: still counted.
        assert!(s.lock()["a"].is_expired(10));
        assert_eq!(s.len(), 3);
        assert!(matches!(
            block_on(s.get("a", 10)),
            Err(SessionStoreError::Expired { .. })
        ));
        assert_eq!(s.len(), 2);
        assert!(block_on(s.remove("b")).unwrap());
        assert_eq!((s.len(), s.is_empty()), (1, false));
        assert_eq!(block_on(s.purge_expired(1_000)).unwrap(), 1);
        assert_eq!((s.len(), s.is_empty()), (0, true));
    }
}
