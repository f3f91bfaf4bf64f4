//! `RedisTaskStore` against a real `redis-server` passes the same
//! `TaskStore` suite as the in-memory store.

use std::sync::Arc;

use mcp_store_redis::{EXPIRED_GRACE, RedisTaskStore};

use mcp_test_support::conformance::task_store::TaskStoreMaker;
use mcp_transport_core::task_store::{MemoryTaskStoreConfig, NewTask, TaskStore, TaskStoreError};

mod common;
use common::Redis;

#[async_trait::async_trait]
impl TaskStoreMaker for Redis {
    async fn make(&self, limits: MemoryTaskStoreConfig) -> Arc<dyn TaskStore> {
        let conn = self.conn().await;
        Arc::new(RedisTaskStore::new(conn, limits))
    }
}

mod suite {
    mcp_test_support::task_store_suite!(super::Redis::start());
}

fn new_task(id: &str, ttl_ms: Option<u64>) -> NewTask {
    NewTask {
        id: id.to_owned(),
        scope: None,
        ttl_ms,
        poll_interval_ms: None,
        status_message: None,
    }
}

/// The remaining lifetime of the key of task `id` in the test's first
/// store (prefix `t0`), in ms; -1 when it has none.
fn key_ttl_ms(redis: &Redis, id: &str) -> i64 {
    let reply = redis.server.command(&format!("PTTL t0:task:{{{id}}}"));
    reply.trim_start_matches(':').parse().unwrap()
}

/// A task's key outlives its TTL by `EXPIRED_GRACE` (so it is reported
/// `Expired`, not `NotFound`, for that long), counted from the caller's
/// clock; a task without a TTL has a key without one; the store keeps the
/// limits it was given (on a standalone server, no TTL is imposed).
#[tokio::test]
async fn a_tasks_key_outlives_its_ttl_by_the_grace() {
    let redis = Redis::start();
    let limits = MemoryTaskStoreConfig {
        max_ttl_ms: None,
        ..Default::default()
    };
    let s = RedisTaskStore::new(redis.conn().await, limits.clone());
    assert_eq!(s.config(), &limits);
    let grace = i64::try_from(EXPIRED_GRACE.as_millis()).unwrap();
    assert_eq!(grace, 60_000);
    s.create(new_task("a", Some(1_000)), 5_000).await.unwrap();
    let ttl = key_ttl_ms(&redis, "a");
    assert!(
        ttl > grace && ttl <= grace + 1_000,
        "after create: {ttl} ms"
    );
    // A change 600 ms later (the caller's clock) leaves 400 ms of TTL.
    s.set_message("a", Some("half way".into()), 5_600)
        .await
        .unwrap();
    let ttl = key_ttl_ms(&redis, "a");
    assert!(
        ttl > grace && ttl <= grace + 400,
        "after a change: {ttl} ms"
    );
    s.create(new_task("forever", None), 5_000).await.unwrap();
    assert_eq!(key_ttl_ms(&redis, "forever"), -1);
}

/// A record that does not read back is the backend's error, not a panic
/// and not "not found".
#[tokio::test]
async fn a_corrupt_record_is_a_backend_error() {
    let redis = Redis::start();
    let s = RedisTaskStore::new(redis.conn().await, MemoryTaskStoreConfig::default());
    s.create(new_task("a", None), 0).await.unwrap();
    let reply = redis.server.command("HSET t0:task:{a} j not-json");
    assert_eq!(reply, ":0");
    assert!(matches!(
        s.get("a", None, 1).await,
        Err(TaskStoreError::Backend(_))
    ));
}

/// A scoped task is indexed before it is stored: when the store then
/// refuses it (here the byte total is full), its index entry is dropped,
/// so it does not count against the scope's bound; an id already used in
/// the scope is `Exists`.
#[tokio::test]
async fn a_refused_scoped_task_leaves_no_index_entry() {
    let redis = Redis::start();
    let limits = MemoryTaskStoreConfig {
        max_tasks_per_scope: 1,
        max_total_bytes: 8,
        ..Default::default()
    };
    let s = RedisTaskStore::new(redis.conn().await, limits);
    let scoped = |id: &str, message: Option<&str>| NewTask {
        scope: Some("alice".into()),
        status_message: message.map(str::to_owned),
        ..new_task(id, None)
    };
    assert!(matches!(
        s.create(scoped("big", Some("more than eight bytes")), 0)
            .await,
        Err(TaskStoreError::Full { max: 8 })
    ));
    s.create(scoped("small", None), 0).await.unwrap();
    assert!(matches!(
        s.create(scoped("small", None), 0).await,
        Err(TaskStoreError::Exists { .. })
    ));
    assert!(matches!(
        s.create(scoped("third", None), 0).await,
        Err(TaskStoreError::TooManyForScope { max: 1 })
    ));
}

#[test]
fn the_cluster_ttl_cap_is_a_day() {
    assert_eq!(mcp_store_redis::CLUSTER_MAX_TTL_MS, 86_400_000);
}

/// A page that met the entry of a task gone from under the index (its key
/// deleted) still ends with a cursor when more tasks follow, and the next
/// page starts after the last task listed.
#[tokio::test]
async fn a_page_past_a_gone_task_still_points_to_the_next() {
    let redis = Redis::start();
    let s = RedisTaskStore::new(redis.conn().await, MemoryTaskStoreConfig::default());
    for id in ["a", "gone", "b", "c"] {
        let task = NewTask {
            scope: Some("alice".into()),
            ..new_task(id, None)
        };
        s.create(task, 0).await.unwrap();
    }
    assert_eq!(redis.server.command("DEL t0:task:{gone}"), ":1");
    let page = s.list("alice", None, 2, 1).await.unwrap();
    let ids: Vec<&str> = page.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(page.next_cursor.as_deref(), Some("b"));
    let rest = s.list("alice", Some("b"), 2, 1).await.unwrap();
    let ids: Vec<&str> = rest.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["c"]);
    assert_eq!(rest.next_cursor, None);
}
