//! `MemoryTaskStore`'s own accounting (`len`, `total_bytes`) through expiry,
//! purges and the byte bounds. The `TaskStore` contract itself is the shared
//! suite in `mcp-test-support` (`conformance::task_store`), run against this
//! store by `test-support/tests/memory_stores.rs` and against Redis by
//! `store-redis`.

use serde_json::value::RawValue;

use mcp_transport_core::task_store::{
    MemoryTaskStore, MemoryTaskStoreConfig, NewTask, TaskStatus, TaskStore, TaskStoreError,
    Terminal,
};

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).unwrap()
}

fn new(id: &str, ttl: Option<u64>) -> NewTask {
    NewTask {
        id: id.to_owned(),
        scope: None,
        ttl_ms: ttl,
        poll_interval_ms: Some(500),
        status_message: None,
    }
}

fn store() -> MemoryTaskStore {
    MemoryTaskStore::new(MemoryTaskStoreConfig::default())
}

#[tokio::test]
async fn ttl_expiry_is_exact_and_reported() {
    let s = store();
    s.create(new("a", Some(1_000)), 10_000).await.unwrap();
    // Readable for the whole TTL.
    assert!(s.get("a", None, 10_999).await.is_ok());
    assert!(matches!(
        s.get("a", None, 11_000).await,
        Err(TaskStoreError::Expired { .. })
    ));
    // Once reported expired it is gone.
    assert!(matches!(
        s.get("a", None, 11_001).await,
        Err(TaskStoreError::NotFound { .. })
    ));
    assert_eq!(s.total_bytes(), 0);

    // Every operation sees the expiry.
    s.create(new("b", Some(10)), 0).await.unwrap();
    assert!(matches!(
        s.finish("b", Terminal::Cancelled, None, 10).await,
        Err(TaskStoreError::Expired { .. })
    ));
}

#[tokio::test]
async fn purge_drops_only_expired_tasks() {
    let s = store();
    s.create(new("short", Some(10)), 0).await.unwrap();
    s.create(new("long", Some(1_000)), 0).await.unwrap();
    assert_eq!(s.purge_expired(9).await.unwrap(), 0);
    assert_eq!(s.purge_expired(10).await.unwrap(), 1);
    assert_eq!(s.len(), 1);
    assert!(s.get("long", None, 11).await.is_ok());
}

#[tokio::test]
async fn count_bound_refuses_until_something_expires() {
    let s = MemoryTaskStore::new(MemoryTaskStoreConfig {
        max_tasks: 2,
        ..Default::default()
    });
    s.create(new("a", Some(100)), 0).await.unwrap();
    s.create(new("b", Some(10_000)), 0).await.unwrap();
    assert!(matches!(
        s.create(new("c", None), 50).await,
        Err(TaskStoreError::TooManyTasks { max: 2 })
    ));
    // "a" has expired by 100: creating purges it and makes room; nothing
    // unexpired was evicted.
    s.create(new("c", None), 100).await.unwrap();
    assert!(s.get("b", None, 100).await.is_ok());
    assert_eq!(s.len(), 2);
}

#[tokio::test]
async fn byte_bounds_per_task_and_in_total() {
    let s = MemoryTaskStore::new(MemoryTaskStoreConfig {
        max_task_bytes: 100,
        max_total_bytes: 150,
        ..Default::default()
    });
    s.create(new("a", None), 0).await.unwrap();
    let big = format!(r#""{}""#, "x".repeat(120));
    assert!(matches!(
        s.finish("a", Terminal::Completed(raw(&big)), None, 1).await,
        Err(TaskStoreError::TooLarge { max: 100, .. })
    ));
    // The refused change left the task as it was, and it can still end.
    assert_eq!(
        s.get("a", None, 2).await.unwrap().status,
        TaskStatus::Working
    );
    let eighty = format!(r#""{}""#, "x".repeat(78));
    s.finish("a", Terminal::Completed(raw(&eighty)), None, 3)
        .await
        .unwrap();
    assert_eq!(s.total_bytes(), 80);
    s.create(new("b", None), 0).await.unwrap();
    // 80 + 80 > 150 in total.
    assert!(matches!(
        s.finish("b", Terminal::Completed(raw(&eighty)), None, 4)
            .await,
        Err(TaskStoreError::TooLarge { max: 150, .. })
    ));
    s.finish("b", Terminal::Completed(raw("{}")), None, 5)
        .await
        .unwrap();
    assert_eq!(s.total_bytes(), 82);
}
