//! The [`SessionStore`] contract as a suite every implementation runs: the
//! in-memory store (`transport-core/tests/memory_stores.rs`) and the Redis
//! store (`store-redis/tests/`) pass the same cases, with explicit times.
//!
//! Each case is a `pub async fn` taking a [`SessionStoreMaker`];
//! [`session_store_suite!`](crate::session_store_suite) expands to one
//! `#[tokio::test]` per case.

use std::sync::Arc;

use serde_json::value::RawValue;

use mcp_transport_core::session_store::{
    MemorySessionStoreConfig, NewSession, SessionStore, SessionStoreError,
};

/// Builds fresh, empty stores for the suite.
#[async_trait::async_trait]
pub trait SessionStoreMaker: Send + Sync {
    /// A new store, sharing nothing with earlier ones, with these limits.
    async fn make(&self, limits: MemorySessionStoreConfig) -> Arc<dyn SessionStore>;
}

fn session(id: &str, idle_ms: u64) -> NewSession {
    NewSession {
        id: id.to_owned(),
        tag: format!("tag-{id}"),
        version: "2025-11-25".to_owned(),
        // Raw JSON kept byte for byte (spacing and number text included).
        capabilities: RawValue::from_string(r#"{"sampling": {}, "x": 1.50}"#.to_owned()).unwrap(),
        client_info: Some(
            RawValue::from_string(r#"{"name":"c","version":"1"}"#.to_owned()).unwrap(),
        ),
        principal: Some("alice".to_owned()),
        idle_timeout_ms: idle_ms,
    }
}

/// A created session reads back exactly, and its id cannot be reused.
pub async fn created_sessions_read_back_exactly(m: &dyn SessionStoreMaker) {
    let s = m.make(MemorySessionStoreConfig::default()).await;
    let created = s.create(session("a", 1_000), 5_000).await.unwrap();
    assert_eq!(
        (created.created_at_ms, created.last_seen_ms),
        (5_000, 5_000)
    );
    let got = s.get("a", 5_001).await.unwrap();
    assert_eq!(got.session.tag, "tag-a");
    assert_eq!(got.session.version, "2025-11-25");
    assert_eq!(
        got.session.capabilities.get(),
        r#"{"sampling": {}, "x": 1.50}"#
    );
    assert_eq!(
        got.session.client_info.unwrap().get(),
        r#"{"name":"c","version":"1"}"#
    );
    assert_eq!(got.session.principal.as_deref(), Some("alice"));
    assert_eq!(got.session.idle_timeout_ms, 1_000);
    assert_eq!(got.created_at_ms, 5_000);
    assert!(matches!(
        s.create(session("a", 1_000), 5_002).await,
        Err(SessionStoreError::Exists { id }) if id == "a"
    ));
    assert!(matches!(
        s.get("b", 5_002).await,
        Err(SessionStoreError::NotFound { .. })
    ));
}

/// Idle expiry counts from the last touch; expired is reported once, then
/// the session is not found.
pub async fn idle_expiry_counts_from_the_last_touch(m: &dyn SessionStoreMaker) {
    let s = m.make(MemorySessionStoreConfig::default()).await;
    s.create(session("a", 100), 1_000).await.unwrap();
    assert!(s.get("a", 1_099).await.is_ok());
    let touched = s.touch("a", 1_050).await.unwrap();
    assert_eq!(touched.last_seen_ms, 1_050);
    // get does not touch.
    assert_eq!(s.get("a", 1_060).await.unwrap().last_seen_ms, 1_050);
    assert!(s.get("a", 1_149).await.is_ok());
    assert!(matches!(
        s.get("a", 1_150).await,
        Err(SessionStoreError::Expired { .. })
    ));
    assert!(matches!(
        s.get("a", 1_151).await,
        Err(SessionStoreError::NotFound { .. })
    ));
    assert!(matches!(
        s.touch("a", 1_151).await,
        Err(SessionStoreError::NotFound { .. })
    ));
    // An expired session's id is free again.
    s.create(session("b", 10), 0).await.unwrap();
    assert!(matches!(
        s.touch("b", 10).await,
        Err(SessionStoreError::Expired { .. })
    ));
    s.create(session("b", 10), 20).await.unwrap();
    assert!(s.get("b", 29).await.is_ok());
}

/// `DELETE`: removed at once, every later operation is not found.
pub async fn removed_sessions_are_gone(m: &dyn SessionStoreMaker) {
    let s = m.make(MemorySessionStoreConfig::default()).await;
    s.create(session("a", 1_000), 0).await.unwrap();
    s.create(session("b", 1_000), 0).await.unwrap();
    assert!(s.remove("a").await.unwrap());
    assert!(!s.remove("a").await.unwrap());
    assert!(matches!(
        s.get("a", 1).await,
        Err(SessionStoreError::NotFound { .. })
    ));
    assert!(matches!(
        s.touch("a", 1).await,
        Err(SessionStoreError::NotFound { .. })
    ));
    assert!(s.get("b", 1).await.is_ok(), "other sessions untouched");
}

/// The count bound refuses until a session expires or is removed; a record
/// over the size bound is refused.
pub async fn bounds_refuse_and_free(m: &dyn SessionStoreMaker) {
    let s = m
        .make(MemorySessionStoreConfig {
            max_sessions: 2,
            max_record_bytes: 200,
        })
        .await;
    s.create(session("a", 100), 0).await.unwrap();
    s.create(session("b", 10_000), 0).await.unwrap();
    assert!(matches!(
        s.create(session("c", 100), 50).await,
        Err(SessionStoreError::TooManySessions { max: 2 })
    ));
    // "a" has expired by 100: room for "c".
    s.create(session("c", 100), 100).await.unwrap();
    assert!(matches!(
        s.create(session("d", 100), 100).await,
        Err(SessionStoreError::TooManySessions { .. })
    ));
    s.remove("b").await.unwrap();
    s.create(session("d", 100), 100).await.unwrap();
    let mut big = session("e", 100);
    big.principal = Some("p".repeat(300));
    s.remove("d").await.unwrap();
    assert!(matches!(
        s.create(big, 100).await,
        Err(SessionStoreError::TooLarge { max: 200, .. })
    ));
}

/// `purge_expired` drops exactly the expired sessions.
pub async fn purge_drops_only_expired_sessions(m: &dyn SessionStoreMaker) {
    let s = m.make(MemorySessionStoreConfig::default()).await;
    s.create(session("short", 10), 0).await.unwrap();
    s.create(session("long", 1_000), 0).await.unwrap();
    assert_eq!(s.purge_expired(9).await.unwrap(), 0);
    assert_eq!(s.purge_expired(10).await.unwrap(), 1);
    assert!(matches!(
        s.get("short", 11).await,
        Err(SessionStoreError::NotFound { .. })
    ));
    assert!(s.get("long", 11).await.is_ok());
}

/// Expands to one `#[tokio::test]` per case of the [`SessionStore`]
/// suite, each calling the case with the maker `$maker` evaluates to.
#[macro_export]
macro_rules! session_store_suite {
    ($maker:expr) => {
        $crate::__store_cases!(session_store, $maker, [tokio::test];
            created_sessions_read_back_exactly,
            idle_expiry_counts_from_the_last_touch,
            removed_sessions_are_gone,
            bounds_refuse_and_free,
            purge_drops_only_expired_sessions,
        );
    };
}
