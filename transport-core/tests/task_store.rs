//! `MemoryTaskStore`'s own accounting (`len`, `total_bytes`) through expiry,
//! purges and the byte bounds. The `TaskStore` contract itself is the shared
//! suite in `mcp-test-support` (`conformance::task_store`), run against this
//! store by `transport-core/tests/memory_stores.rs` and against Redis by
//! `store-redis`.

use serde_json::value::RawValue;

use mcp_transport_core::task_store::{
    MemoryTaskStore, MemoryTaskStoreConfig, NewTask, TaskStore, TaskStoreError, Terminal,
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

fn with_message(id: &str, ttl: Option<u64>, message: &str) -> NewTask {
    NewTask {
        status_message: Some(message.to_owned()),
        ..new(id, ttl)
    }
}

#[test]
fn config_reports_the_limits_given() {
    let limits = MemoryTaskStoreConfig {
        max_tasks: 3,
        max_task_bytes: 10,
        max_total_bytes: 20,
        max_ttl_ms: None,
        max_tasks_per_scope: 2,
    };
    assert_eq!(MemoryTaskStore::new(limits.clone()).config(), &limits);
}

#[tokio::test]
async fn len_and_is_empty_count_stored_tasks() {
    let s = store();
    assert_eq!((s.len(), s.is_empty()), (0, true));
    s.create(new("a", None), 0).await.unwrap();
    assert_eq!((s.len(), s.is_empty()), (1, false));
    s.create(new("b", None), 0).await.unwrap();
    assert_eq!((s.len(), s.is_empty()), (2, false));

    // At the count bound a refused task is not stored, and one created
    // once another has expired takes that one's place.
    let s = MemoryTaskStore::new(MemoryTaskStoreConfig {
        max_tasks: 2,
        ..Default::default()
    });
    s.create(new("a", Some(100)), 0).await.unwrap();
    s.create(new("b", None), 0).await.unwrap();
    assert!(matches!(
        s.create(new("c", None), 50).await,
        Err(TaskStoreError::TooManyTasks { max: 2 })
    ));
    assert_eq!(s.len(), 2);
    s.create(new("c", None), 100).await.unwrap();
    assert_eq!(s.len(), 2);
}

/// `total_bytes` is the sum of the live tasks' payloads (status message,
/// input requests and responses with their keys, result, error) and the
/// input keys they used, through every way a task grows, shrinks or goes.
#[tokio::test]
async fn total_bytes_follow_every_change_and_removal() {
    let s = store();
    s.create(with_message("a", None, "abcd"), 0).await.unwrap();
    assert_eq!(s.total_bytes(), 4);
    s.create(with_message("b", Some(10), "xy"), 0)
        .await
        .unwrap();
    assert_eq!(s.total_bytes(), 6);
    // A task's change replaces its old size.
    s.set_message("a", Some("abcdefgh".into()), 1)
        .await
        .unwrap();
    assert_eq!(s.total_bytes(), 10);
    s.set_message("a", Some("a".into()), 2).await.unwrap();
    assert_eq!(s.total_bytes(), 3);
    // Input: the request (key + value) and the key used, for the task's
    // life; the response replaces the request.
    let requests = [("k1".to_owned(), raw("{}"))].into_iter().collect();
    s.require_input("a", requests, 3).await.unwrap();
    assert_eq!(s.total_bytes(), 1 + (2 + 2) + 2 + 2);
    let responses = [("k1".to_owned(), raw("[1]"))].into_iter().collect();
    s.deliver_input("a", None, responses, 4).await.unwrap();
    assert_eq!(s.total_bytes(), 1 + (2 + 3) + 2 + 2);
    s.take_input("a", 5).await.unwrap();
    assert_eq!(s.total_bytes(), 1 + 2 + 2);
    // Expired and reported by `get`: its bytes go with it.
    assert!(matches!(
        s.get("b", None, 10).await,
        Err(TaskStoreError::Expired { .. })
    ));
    assert_eq!(s.total_bytes(), 3);
    // Expired and reported by a change.
    s.create(with_message("c", Some(10), "zzz"), 20)
        .await
        .unwrap();
    assert_eq!(s.total_bytes(), 6);
    assert!(matches!(
        s.finish("c", Terminal::Cancelled, None, 30).await,
        Err(TaskStoreError::Expired { .. })
    ));
    assert_eq!(s.total_bytes(), 3);
    // Purged: only the expired task's bytes go.
    s.create(with_message("d", Some(10), "12345"), 40)
        .await
        .unwrap();
    assert_eq!(s.total_bytes(), 8);
    assert_eq!(s.purge_expired(50).await.unwrap(), 1);
    assert_eq!(s.total_bytes(), 3);
    assert_eq!(s.len(), 1);
}

/// The bounds are maxima: a task of exactly `max_task_bytes`, and a store
/// of exactly `max_total_bytes`, are accepted; one byte more is refused,
/// and the error names the size that broke the bound (the task's for the
/// per-task bound, the store's total for the total one).
#[tokio::test]
async fn byte_bounds_are_inclusive_and_report_the_size() {
    let s = MemoryTaskStore::new(MemoryTaskStoreConfig {
        max_task_bytes: 10,
        max_total_bytes: 15,
        ..Default::default()
    });
    assert!(matches!(
        s.create(with_message("big", None, "12345678901"), 0).await,
        Err(TaskStoreError::TooLarge { size: 11, max: 10 })
    ));
    s.create(with_message("a", None, "1234567890"), 0)
        .await
        .unwrap();
    assert_eq!(s.total_bytes(), 10);
    s.create(new("b", None), 0).await.unwrap();
    assert!(matches!(
        s.set_message("b", Some("123456".into()), 1).await,
        Err(TaskStoreError::TooLarge { size: 16, max: 15 })
    ));
    s.set_message("b", Some("12345".into()), 2).await.unwrap();
    assert_eq!(s.total_bytes(), 15);
    assert!(matches!(
        s.set_message("a", Some("12345678901".into()), 3).await,
        Err(TaskStoreError::TooLarge { size: 11, max: 10 })
    ));
    // The refused changes left everything as it was.
    assert_eq!(s.total_bytes(), 15);
    let a = s.get("a", None, 4).await.unwrap();
    assert_eq!(a.status_message.as_deref(), Some("1234567890"));
}

/// The store's total never passes `max_total_bytes`: a new task that does
/// not fit is refused (`Full`) and changes nothing, and at the total a
/// change that does not grow a task is still accepted (a task can always
/// end) while one that grows it is refused, naming the total it would
/// reach.
#[tokio::test]
async fn at_the_total_new_tasks_wait_and_only_growth_is_refused() {
    let s = MemoryTaskStore::new(MemoryTaskStoreConfig {
        max_task_bytes: 10,
        max_total_bytes: 15,
        ..Default::default()
    });
    s.create(with_message("a", None, "1234567890"), 0)
        .await
        .unwrap();
    assert!(matches!(
        s.create(with_message("b", None, "123456"), 0).await,
        Err(TaskStoreError::Full { max: 15 })
    ));
    assert_eq!((s.len(), s.total_bytes()), (1, 10));
    s.create(with_message("b", None, "12345"), 0).await.unwrap();
    assert_eq!((s.len(), s.total_bytes()), (2, 15));
    assert!(matches!(
        s.create(new("c", None), 0).await,
        Err(TaskStoreError::Full { max: 15 })
    ));
    assert_eq!((s.len(), s.total_bytes()), (2, 15));
    // The same size, then smaller: accepted.
    s.set_message("a", Some("abcdefghij".into()), 1)
        .await
        .unwrap();
    assert_eq!(s.total_bytes(), 15);
    s.finish("a", Terminal::Completed(raw("1")), None, 2)
        .await
        .unwrap();
    assert_eq!(s.total_bytes(), 6);
    // Growing past the total: refused, naming the total.
    s.set_message("b", Some("123456789".into()), 3)
        .await
        .unwrap();
    assert_eq!(s.total_bytes(), 10);
    s.create(with_message("c", None, "12345"), 4).await.unwrap();
    assert!(matches!(
        s.set_message("c", Some("123456".into()), 5).await,
        Err(TaskStoreError::TooLarge { size: 16, max: 15 })
    ));
    assert_eq!((s.len(), s.total_bytes()), (3, 15));
}
