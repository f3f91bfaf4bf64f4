//! Shared session records behind the [`SessionStore`] trait: what any
//! server instance needs to serve a legacy (2025-03-26 … 2025-11-25)
//! session it did not create — the negotiated revision, the client's
//! capabilities and description, the principal, the session's event-log
//! tag — and its idle expiry.
//!
//! The store holds plain data only; what is process-local (running
//! requests, their cancellation tokens, attached SSE connections) stays in
//! the server. Like the other stores it reads no clock: every method takes
//! `now_ms`, milliseconds since the Unix epoch, from the caller.
//!
//! # Contract (for every implementation)
//!
//! * [`create`](SessionStore::create) stores a new session; its id must be
//!   unused ([`SessionStoreError::Exists`]); the store may bound the count
//!   ([`SessionStoreError::TooManySessions`]) and the size of a record
//!   ([`SessionStoreError::TooLarge`]).
//! * A session expires `idle_timeout_ms` after it was last
//!   [touched](SessionStore::touch) (or created): from then on
//!   [`get`](SessionStore::get) and `touch` report
//!   [`SessionStoreError::Expired`] once, and [`SessionStoreError::NotFound`]
//!   after it has been dropped (the store may drop it at once). Both mean
//!   404 on the wire (*Session Management*: "the server MUST respond to
//!   requests containing that session ID with HTTP 404 Not Found").
//! * [`remove`](SessionStore::remove) (`DELETE`) drops it at once, and every
//!   later operation is `NotFound`; removing an unknown session is not an
//!   error.
//!
//! [`MemorySessionStore`] is the bounded in-memory implementation.
//!
//! What cannot be stored — a running request's cancellation token, a
//! server-to-client request waiting for its answer — is reached across
//! instances through a [`SignalBus`] (see [`SessionSignal`]);
//! [`LocalSignalBus`] is the in-process one.

mod memory;
mod signals;

pub use memory::{MemorySessionStore, MemorySessionStoreConfig};
pub use signals::{
    BROADCAST_MARK, LocalSignalBus, SessionSignal, SignalBus, SignalFanout, SignalSubscription,
};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::event_log::BackendError;

/// What [`SessionStore::create`] needs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NewSession {
    /// The `Mcp-Session-Id`, minted by the server from a CSPRNG.
    pub id: String,
    /// The session's event-log tag (its `SessionTag`, as text).
    pub tag: String,
    /// The negotiated protocol revision (`2025-11-25`, …).
    pub version: String,
    /// The client's `capabilities` from `initialize`.
    pub capabilities: Box<RawValue>,
    /// The client's `clientInfo` from `initialize`.
    pub client_info: Option<Box<RawValue>>,
    /// The authenticated principal that created the session, if any.
    pub principal: Option<String>,
    /// How long the session may stay untouched before it expires, in ms.
    pub idle_timeout_ms: u64,
}

/// A session as stored.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SessionRecord {
    /// What it was created with.
    pub session: NewSession,
    /// Creation time, ms since the Unix epoch.
    pub created_at_ms: u64,
    /// The last [`SessionStore::touch`] (or creation), ms since the epoch.
    pub last_seen_ms: u64,
}

impl SessionRecord {
    /// A new session's record, created and last seen at `now_ms`: what
    /// every store's [`SessionStore::create`] keeps.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::TooLarge`] when its payload is over
    /// `max_record_bytes`.
    pub fn new(
        session: NewSession,
        now_ms: u64,
        max_record_bytes: usize,
    ) -> Result<Self, SessionStoreError> {
        let record = SessionRecord {
            session,
            created_at_ms: now_ms,
            last_seen_ms: now_ms,
        };
        let size = record.payload_bytes();
        if size > max_record_bytes {
            return Err(SessionStoreError::TooLarge {
                size,
                max: max_record_bytes,
            });
        }
        Ok(record)
    }

    /// When the session expires if not touched again.
    pub fn expires_at_ms(&self) -> u64 {
        self.last_seen_ms
            .saturating_add(self.session.idle_timeout_ms)
    }

    /// Whether it has expired at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        now_ms >= self.expires_at_ms()
    }

    /// Bytes the size bound counts: the payloads and strings it holds.
    pub fn payload_bytes(&self) -> usize {
        let s = &self.session;
        s.id.len()
            + s.tag.len()
            + s.version.len()
            + s.capabilities.get().len()
            + s.client_info.as_ref().map_or(0, |c| c.get().len())
            + s.principal.as_ref().map_or(0, String::len)
    }
}

/// Why a [`SessionStore`] operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionStoreError {
    /// No such session (never created, removed, or dropped after expiry):
    /// 404 on the wire.
    #[error("session {id} not found")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// The session's idle timeout has passed: 404 on the wire.
    #[error("session {id} has expired")]
    Expired {
        /// The id asked for.
        id: String,
    },
    /// [`SessionStore::create`] with an id already in use (mint another).
    #[error("session id {id} is already in use")]
    Exists {
        /// The id.
        id: String,
    },
    /// The store holds its maximum number of sessions: 503 at `initialize`.
    #[error("the session store already holds its maximum of {max} sessions")]
    TooManySessions {
        /// The configured maximum.
        max: usize,
    },
    /// The record is larger than the store keeps.
    #[error("the session record of {size} bytes exceeds the limit of {max}")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The store's backend failed: 503.
    #[error("session store backend failed")]
    Backend(#[source] BackendError),
}

/// Storage for session records (see the [module documentation](self) for
/// the contract). Object safe; async so that a networked store can
/// implement it.
#[async_trait::async_trait]
pub trait SessionStore: Send + Sync + 'static {
    /// Stores a new session and returns it as stored.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Exists`], [`SessionStoreError::TooManySessions`],
    /// [`SessionStoreError::TooLarge`], [`SessionStoreError::Backend`].
    async fn create(
        &self,
        session: NewSession,
        now_ms: u64,
    ) -> Result<SessionRecord, SessionStoreError>;

    /// The session, without touching it.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::NotFound`], [`SessionStoreError::Expired`],
    /// [`SessionStoreError::Backend`].
    async fn get(&self, id: &str, now_ms: u64) -> Result<SessionRecord, SessionStoreError>;

    /// Records activity: the idle timeout starts again from `now_ms`.
    /// Returns the record as touched.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::NotFound`], [`SessionStoreError::Expired`],
    /// [`SessionStoreError::Backend`].
    async fn touch(&self, id: &str, now_ms: u64) -> Result<SessionRecord, SessionStoreError>;

    /// Drops the session (`DELETE`); whether it existed.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Backend`] only.
    async fn remove(&self, id: &str) -> Result<bool, SessionStoreError>;

    /// Drops every session expired at `now_ms`; returns how many.
    ///
    /// # Errors
    ///
    /// [`SessionStoreError::Backend`] only.
    async fn purge_expired(&self, now_ms: u64) -> Result<usize, SessionStoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    fn session(client_info: Option<&str>, principal: Option<&str>) -> NewSession {
        NewSession {
            id: "ab".into(),
            tag: "cde".into(),
            version: "2025-11-25".into(),
            capabilities: raw("{}"),
            client_info: client_info.map(raw),
            principal: principal.map(str::to_owned),
            idle_timeout_ms: 100,
        }
    }

    /// Every string and payload a record holds counts once, by its
    /// length; absent ones count nothing.
    #[test]
    fn payload_bytes_sum_what_the_record_holds() {
        let bare = SessionRecord::new(session(None, None), 0, usize::MAX).unwrap();
        assert_eq!(bare.payload_bytes(), 2 + 3 + 10 + 2);
        let full =
            SessionRecord::new(session(Some(r#"{"n":1}"#), Some("p1234")), 0, usize::MAX).unwrap();
        assert_eq!(full.payload_bytes(), 2 + 3 + 10 + 2 + 7 + 5);
    }

    /// The bound is a maximum: a record of exactly `max_record_bytes` is
    /// kept, one byte more is refused naming both sizes.
    #[test]
    fn the_record_bound_is_inclusive() {
        let s = || session(Some(r#"{"n":1}"#), Some("p1234"));
        let r = SessionRecord::new(s(), 7, 29).unwrap();
        assert_eq!((r.created_at_ms, r.last_seen_ms), (7, 7));
        assert!(matches!(
            SessionRecord::new(s(), 7, 28),
            Err(SessionStoreError::TooLarge { size: 29, max: 28 })
        ));
    }

    /// A session expires exactly `idle_timeout_ms` after it was last seen;
    /// an unbounded timeout never overflows into the past.
    #[test]
    fn expiry_is_exact_and_saturates() {
        let mut r = SessionRecord::new(session(None, None), 1_000, usize::MAX).unwrap();
        assert_eq!(r.expires_at_ms(), 1_100);
        assert!(!r.is_expired(1_099));
        assert!(r.is_expired(1_100));
        r.session.idle_timeout_ms = u64::MAX;
        assert_eq!(r.expires_at_ms(), u64::MAX);
        assert!(!r.is_expired(u64::MAX - 1));
    }
}
