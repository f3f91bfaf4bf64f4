//! `RedisSessionStore` against a real `redis-server` passes the same
//! `SessionStore` suite as the in-memory store.

use std::sync::Arc;

use mcp_store_redis::{RedisConnection, RedisConnectionConfig, RedisSessionStore};
use mcp_test_support::RedisServer;
use mcp_test_support::conformance::session_store::SessionStoreMaker;
use mcp_transport_core::session_store::{
    MemorySessionStoreConfig, NewSession, SessionRecord, SessionStore, SessionStoreError,
};

mod common;
use common::Redis;

#[async_trait::async_trait]
impl SessionStoreMaker for Redis {
    async fn make(&self, limits: MemorySessionStoreConfig) -> Arc<dyn SessionStore> {
        let conn = self.conn().await;
        Arc::new(RedisSessionStore::new(conn, limits))
    }
}

mod suite {
    mcp_test_support::session_store_suite!(super::Redis::start());
}

fn new_session(id: &str, idle_ms: u64) -> NewSession {
    NewSession {
        id: id.to_owned(),
        tag: format!("tag-{id}"),
        version: "2025-11-25".to_owned(),
        capabilities: serde_json::value::RawValue::from_string("{}".to_owned()).unwrap(),
        client_info: None,
        principal: None,
        idle_timeout_ms: idle_ms,
    }
}

/// The key of session `id` in a store on the default prefix.
fn key_ttl_ms(redis: &RedisServer, id: &str) -> i64 {
    let reply = redis.command(&format!("PTTL mcp:session:{{{id}}}"));
    reply.trim_start_matches(':').parse().unwrap()
}

/// An expired session is reported `Expired` (not `NotFound`) for
/// `EXPIRED_GRACE` (60 s) after its idle timeout: its key lives the idle
/// time left plus that grace, from `create` and from every `touch`.
#[tokio::test]
async fn the_key_outlives_the_idle_timeout_by_the_grace() {
    let redis = RedisServer::start();
    let conn = RedisConnection::connect(&RedisConnectionConfig::new(redis.url()))
        .await
        .unwrap();
    let s = RedisSessionStore::new(conn, MemorySessionStoreConfig::default());
    let grace = 60_000;
    s.create(new_session("a", 1_000), 5_000).await.unwrap();
    let ttl = key_ttl_ms(&redis, "a");
    assert!(
        ttl > grace && ttl <= grace + 1_000,
        "after create: {ttl} ms"
    );
    // Touched 400 ms (of the caller's clock) later: 1 000 ms of idle time
    // from then, plus the grace.
    s.touch("a", 5_400).await.unwrap();
    let ttl = key_ttl_ms(&redis, "a");
    assert!(ttl > grace && ttl <= grace + 1_000, "after touch: {ttl} ms");
    // A touch with a clock behind the last one (another instance's) keeps
    // the later last-seen: 1 400 ms of idle time left, plus the grace.
    s.touch("a", 5_000).await.unwrap();
    let ttl = key_ttl_ms(&redis, "a");
    assert!(
        ttl > grace + 400 && ttl <= grace + 1_400,
        "after a late touch: {ttl} ms"
    );
}

/// The size bound is inclusive: a record of exactly `max_record_bytes` is
/// stored, one byte more is refused naming its size.
#[tokio::test]
async fn the_record_size_bound_is_inclusive() {
    let redis = RedisServer::start();
    let conn = RedisConnection::connect(&RedisConnectionConfig::new(redis.url()))
        .await
        .unwrap();
    let size = SessionRecord {
        session: new_session("a", 1_000),
        created_at_ms: 0,
        last_seen_ms: 0,
    }
    .payload_bytes();
    let s = RedisSessionStore::new(
        conn,
        MemorySessionStoreConfig {
            max_record_bytes: size,
            ..Default::default()
        },
    );
    s.create(new_session("a", 1_000), 0).await.unwrap();
    // One byte more ("b" is as long as "a"; the tag one byte longer).
    let mut big = new_session("b", 1_000);
    big.tag.push('x');
    match s.create(big, 0).await {
        Err(SessionStoreError::TooLarge { size: got, max }) => {
            assert_eq!((got, max), (size + 1, size));
        }
        other => panic!("{other:?}"),
    }
}

/// `touch`, which every request of a session makes, is one script of four
/// commands: the record and its times read in one `HMGET`, the last-seen
/// time, the key's TTL and the index (docs/PERFORMANCE.md, session 32).
#[tokio::test]
async fn touch_runs_four_commands() {
    let redis = RedisServer::start();
    let conn = RedisConnection::connect(&RedisConnectionConfig::new(redis.url()))
        .await
        .unwrap();
    let store = RedisSessionStore::new(conn, MemorySessionStoreConfig::default());
    store
        .create(new_session("s1", 60_000), 1_000)
        .await
        .unwrap();
    redis.reset_stats();
    let record = store.touch("s1", 2_000).await.unwrap();
    assert_eq!(record.session.id, "s1");
    let run = redis.commands_in_scripts();
    assert_eq!(run.values().sum::<u64>(), 4, "{run:?}");
}
