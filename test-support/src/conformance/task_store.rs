//! The [`TaskStore`] contract as a suite every implementation runs: the
//! in-memory store (`transport-core/tests/memory_stores.rs`) and the Redis
//! store (`store-redis/tests/`) pass the same cases, with explicit times
//! (the stores read no clock).
//!
//! Each case is a `pub async fn` taking a [`TaskStoreMaker`], which builds a
//! fresh, empty store with the given limits ([`MemoryTaskStoreConfig`]'s
//! fields, kept with the same meaning by every implementation);
//! [`task_store_suite!`](crate::task_store_suite) expands to one
//! `#[tokio::test]` per case.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::value::RawValue;

use mcp_transport_core::task_store::{
    MemoryTaskStoreConfig, NewTask, TaskPage, TaskStatus, TaskStore, TaskStoreError, Terminal,
};

/// Builds fresh, empty stores for the suite.
#[async_trait::async_trait]
pub trait TaskStoreMaker: Send + Sync {
    /// A new store, sharing nothing with earlier ones, with these limits.
    async fn make(&self, limits: MemoryTaskStoreConfig) -> Arc<dyn TaskStore>;
}

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

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, Box<RawValue>> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), raw(v)))
        .collect()
}

const ELICIT: &str = r#"{"method":"elicitation/create","params":{"message":"name?"}}"#;

/// Case: created task is working and readable.
pub async fn created_task_is_working_and_readable(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    let t = s.create(new("a", Some(60_000)), 1_000).await.unwrap();
    assert_eq!(t.status, TaskStatus::Working);
    assert_eq!((t.created_at_ms, t.last_updated_at_ms), (1_000, 1_000));
    assert_eq!(t.ttl_ms, Some(60_000));
    let got = s.get("a", None, 1_001).await.unwrap();
    assert_eq!(got.status, TaskStatus::Working);
    assert!(got.result.is_none() && got.error.is_none() && got.input_requests.is_empty());
    assert!(matches!(
        s.create(new("a", None), 1_002).await,
        Err(TaskStoreError::Exists { .. })
    ));
    assert!(matches!(
        s.get("nope", None, 1_002).await,
        Err(TaskStoreError::NotFound { .. })
    ));
}

/// Case: working to completed keeps the result.
pub async fn working_to_completed_keeps_the_result(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    s.create(new("a", None), 0).await.unwrap();
    let done = s
        .finish("a", Terminal::Completed(raw(r#"{"content":[]}"#)), None, 5)
        .await
        .unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.last_updated_at_ms, 5);
    let got = s.get("a", None, 6).await.unwrap();
    assert_eq!(got.result.unwrap().get(), r#"{"content":[]}"#);
    assert!(got.error.is_none());
}

/// Case: working to failed keeps the error.
pub async fn working_to_failed_keeps_the_error(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    s.create(new("a", None), 0).await.unwrap();
    s.finish(
        "a",
        Terminal::Failed(raw(r#"{"code":-32603,"message":"boom"}"#)),
        Some("boom".into()),
        1,
    )
    .await
    .unwrap();
    let got = s.get("a", None, 2).await.unwrap();
    assert_eq!(got.status, TaskStatus::Failed);
    assert!(got.result.is_none());
    assert_eq!(
        got.error.unwrap().get(),
        r#"{"code":-32603,"message":"boom"}"#
    );
    assert_eq!(got.status_message.as_deref(), Some("boom"));
}

/// Case: input round trip partial then complete.
pub async fn input_round_trip_partial_then_complete(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    s.create(new("a", None), 0).await.unwrap();
    let t = s
        .require_input("a", map(&[("k1", ELICIT), ("k2", ELICIT)]), 1)
        .await
        .unwrap();
    assert_eq!(t.status, TaskStatus::InputRequired);
    assert_eq!(t.input_requests.len(), 2);

    // A partial answer (plus an unknown key, ignored) leaves it waiting.
    let t = s
        .deliver_input("a", None, map(&[("k1", "1"), ("zz", "9")]), 2)
        .await
        .unwrap();
    assert_eq!(t.status, TaskStatus::InputRequired);
    assert_eq!(t.input_requests.keys().collect::<Vec<_>>(), ["k2"]);
    // Answering k1 again is ignored: it is no longer outstanding.
    let t = s
        .deliver_input("a", None, map(&[("k1", "7")]), 3)
        .await
        .unwrap();
    assert_eq!(t.input_responses["k1"].get(), "1");

    let t = s
        .deliver_input("a", None, map(&[("k2", "2")]), 4)
        .await
        .unwrap();
    assert_eq!(t.status, TaskStatus::Working);
    let taken = s.take_input("a", 5).await.unwrap();
    assert_eq!(taken.keys().collect::<Vec<_>>(), ["k1", "k2"]);
    assert!(s.take_input("a", 6).await.unwrap().is_empty());

    // Keys are unique over the task's life.
    assert!(matches!(
        s.require_input("a", map(&[("k1", ELICIT)]), 7).await,
        Err(TaskStoreError::KeyReused { key, .. }) if key == "k1"
    ));
    let t = s
        .require_input("a", map(&[("k3", ELICIT)]), 8)
        .await
        .unwrap();
    assert_eq!(t.status, TaskStatus::InputRequired);
    let t = s
        .finish("a", Terminal::Completed(raw("{}")), None, 9)
        .await
        .unwrap();
    assert_eq!(t.status, TaskStatus::Completed);
    assert!(t.input_requests.is_empty());
}

/// Case: terminal states never change.
pub async fn terminal_states_never_change(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    for (id, end) in [
        ("c", Terminal::Completed(raw("{}"))),
        ("f", Terminal::Failed(raw(r#"{"code":1,"message":"m"}"#))),
        ("x", Terminal::Cancelled),
    ] {
        s.create(new(id, None), 0).await.unwrap();
        let status = end.status();
        s.finish(id, end, None, 1).await.unwrap();
        assert!(matches!(
            s.finish(id, Terminal::Completed(raw("{}")), None, 2).await,
            Err(TaskStoreError::Terminal { status: st, .. }) if st == status
        ));
        assert!(matches!(
            s.require_input(id, map(&[("k", ELICIT)]), 2).await,
            Err(TaskStoreError::Terminal { .. })
        ));
        assert!(matches!(
            s.set_message(id, Some("m".into()), 2).await,
            Err(TaskStoreError::Terminal { .. })
        ));
        // Cancel and deliver are acknowledged and change nothing.
        assert_eq!(s.cancel(id, None, 3).await.unwrap().status, status);
        let t = s
            .deliver_input(id, None, map(&[("k", "1")]), 3)
            .await
            .unwrap();
        assert_eq!(t.status, status);
        assert_eq!(t.last_updated_at_ms, 1);
    }
}

/// Case: cancel from working and from input required.
pub async fn cancel_from_working_and_from_input_required(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    s.create(new("w", None), 0).await.unwrap();
    let t = s.cancel("w", None, 1).await.unwrap();
    assert_eq!(t.status, TaskStatus::Cancelled);
    s.create(new("i", None), 0).await.unwrap();
    s.require_input("i", map(&[("k", ELICIT)]), 1)
        .await
        .unwrap();
    let t = s.cancel("i", None, 2).await.unwrap();
    assert_eq!(t.status, TaskStatus::Cancelled);
    assert!(t.input_requests.is_empty());
}

/// Case: cancel racing completion first terminal transition wins.
pub async fn cancel_racing_completion_first_terminal_transition_wins(m: &dyn TaskStoreMaker) {
    // Cancel first: the worker's later result is refused and dropped.
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    s.create(new("a", None), 0).await.unwrap();
    s.cancel("a", None, 1).await.unwrap();
    assert!(matches!(
        s.finish("a", Terminal::Completed(raw("{}")), None, 2).await,
        Err(TaskStoreError::Terminal {
            status: TaskStatus::Cancelled,
            ..
        })
    ));
    let t = s.get("a", None, 3).await.unwrap();
    assert_eq!(t.status, TaskStatus::Cancelled);
    assert!(t.result.is_none());

    // Completion first: the cancel is acknowledged, the result stays.
    s.create(new("b", None), 0).await.unwrap();
    s.finish("b", Terminal::Completed(raw(r#"{"ok":1}"#)), None, 1)
        .await
        .unwrap();
    let t = s.cancel("b", None, 2).await.unwrap();
    assert_eq!(t.status, TaskStatus::Completed);
    assert_eq!(t.result.unwrap().get(), r#"{"ok":1}"#);

    // Both at once from many threads: exactly one terminal status, and it
    // is what every later read sees.
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    for i in 0..64 {
        let id = format!("r{i}");
        s.create(new(&id, None), 0).await.unwrap();
        let (a, b) = (s.clone(), s.clone());
        let (ia, ib) = (id.clone(), id.clone());
        let fin = tokio::spawn(async move {
            a.finish(&ia, Terminal::Completed(raw("{}")), None, 1)
                .await
                .is_ok()
        });
        let can = tokio::spawn(async move { b.cancel(&ib, None, 1).await.unwrap().status });
        let (finished, cancel_saw) = (fin.await.unwrap(), can.await.unwrap());
        let end = s.get(&id, None, 2).await.unwrap().status;
        if finished {
            assert_eq!(end, TaskStatus::Completed);
            assert_eq!(cancel_saw, TaskStatus::Completed);
        } else {
            assert_eq!(end, TaskStatus::Cancelled);
            assert_eq!(cancel_saw, TaskStatus::Cancelled);
        }
    }
}

/// Case: ttl expiry is exact and reported.
pub async fn ttl_expiry_is_exact_and_reported(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
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

    // Every operation sees the expiry.
    s.create(new("b", Some(10)), 0).await.unwrap();
    assert!(matches!(
        s.finish("b", Terminal::Cancelled, None, 10).await,
        Err(TaskStoreError::Expired { .. })
    ));
}

/// Case: ttl is capped and unlimited only when allowed.
pub async fn ttl_is_capped_and_unlimited_only_when_allowed(m: &dyn TaskStoreMaker) {
    let s = m
        .make(MemoryTaskStoreConfig {
            max_ttl_ms: Some(5_000),
            ..Default::default()
        })
        .await;
    assert_eq!(
        s.create(new("a", None), 0).await.unwrap().ttl_ms,
        Some(5_000)
    );
    assert_eq!(
        s.create(new("b", Some(9_000)), 0).await.unwrap().ttl_ms,
        Some(5_000)
    );
    assert_eq!(
        s.create(new("c", Some(1)), 0).await.unwrap().ttl_ms,
        Some(1)
    );
    let s = m
        .make(MemoryTaskStoreConfig {
            max_ttl_ms: None,
            ..Default::default()
        })
        .await;
    let t = s.create(new("a", None), 0).await.unwrap();
    assert_eq!(t.ttl_ms, None);
    assert!(s.get("a", None, u64::MAX).await.is_ok());
}

/// Case: purge drops only expired tasks.
pub async fn purge_drops_only_expired_tasks(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    s.create(new("short", Some(10)), 0).await.unwrap();
    s.create(new("long", Some(1_000)), 0).await.unwrap();
    assert_eq!(s.purge_expired(9).await.unwrap(), 0);
    assert_eq!(s.purge_expired(10).await.unwrap(), 1);
    assert!(s.get("long", None, 11).await.is_ok());
}

/// Case: count bound refuses until something expires.
pub async fn count_bound_refuses_until_something_expires(m: &dyn TaskStoreMaker) {
    let s = m
        .make(MemoryTaskStoreConfig {
            max_tasks: 2,
            ..Default::default()
        })
        .await;
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
}

/// Case: byte bounds per task and in total.
pub async fn byte_bounds_per_task_and_in_total(m: &dyn TaskStoreMaker) {
    let s = m
        .make(MemoryTaskStoreConfig {
            max_task_bytes: 100,
            max_total_bytes: 150,
            ..Default::default()
        })
        .await;
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
}

fn with_message(id: &str, ttl: Option<u64>, message: &str) -> NewTask {
    NewTask {
        status_message: Some(message.to_owned()),
        ..new(id, ttl)
    }
}

/// Case: once the tasks together hold `max_total_bytes`, a new task is
/// refused ([`TaskStoreError::Full`], 503 on the wire: DESIGN.md's Limits
/// table), even an empty one, until some expire (none is evicted before its
/// TTL); a task that would take the total past the bound is refused too,
/// and one that fits it exactly is taken.
pub async fn a_full_store_refuses_new_tasks_until_some_expire(m: &dyn TaskStoreMaker) {
    let s = m
        .make(MemoryTaskStoreConfig {
            max_task_bytes: 10,
            max_total_bytes: 15,
            ..Default::default()
        })
        .await;
    s.create(with_message("a", Some(100), "1234567890"), 0)
        .await
        .unwrap();
    // 10 + 6 > 15.
    assert!(matches!(
        s.create(with_message("b", None, "123456"), 1).await,
        Err(TaskStoreError::Full { max: 15 })
    ));
    assert!(matches!(
        s.get("b", None, 1).await,
        Err(TaskStoreError::NotFound { .. })
    ));
    // 10 + 5 = 15: taken.
    s.create(with_message("b", None, "12345"), 2).await.unwrap();
    // The total is reached: even a task of no bytes is refused.
    assert!(matches!(
        s.create(new("c", None), 3).await,
        Err(TaskStoreError::Full { max: 15 })
    ));
    // Nothing grows past it; a task can still end.
    assert!(matches!(
        s.set_message("b", Some("123456".into()), 4).await,
        Err(TaskStoreError::TooLarge { size: 16, max: 15 })
    ));
    s.finish("b", Terminal::Completed(raw("1")), None, 5)
        .await
        .unwrap();
    // 10 + 1 + 5 > 15; 10 + 1 + 4 = 15.
    assert!(matches!(
        s.create(with_message("c", None, "12345"), 6).await,
        Err(TaskStoreError::Full { max: 15 })
    ));
    s.create(with_message("c", None, "1234"), 6).await.unwrap();
    // "a" has expired by 100: creating purges it and makes room.
    assert!(matches!(
        s.create(new("d", None), 99).await,
        Err(TaskStoreError::Full { max: 15 })
    ));
    s.create(with_message("d", None, "1234567890"), 100)
        .await
        .unwrap();
    assert!(matches!(
        s.get("a", None, 100).await,
        Err(TaskStoreError::NotFound { .. } | TaskStoreError::Expired { .. })
    ));
    for id in ["b", "c", "d"] {
        assert!(s.get(id, None, 100).await.is_ok(), "{id}");
    }
}

/// Case: scoped tasks are invisible to other scopes.
pub async fn scoped_tasks_are_invisible_to_other_scopes(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    s.create(
        NewTask {
            scope: Some("alice".into()),
            ..new("a", None)
        },
        0,
    )
    .await
    .unwrap();
    assert!(s.get("a", Some("alice"), 1).await.is_ok());
    for scope in [None, Some("bob")] {
        assert!(matches!(
            s.get("a", scope, 1).await,
            Err(TaskStoreError::NotFound { .. })
        ));
        assert!(matches!(
            s.cancel("a", scope, 1).await,
            Err(TaskStoreError::NotFound { .. })
        ));
        assert!(matches!(
            s.deliver_input("a", scope, BTreeMap::new(), 1).await,
            Err(TaskStoreError::NotFound { .. })
        ));
    }
    assert_eq!(
        s.get("a", Some("alice"), 2).await.unwrap().status,
        TaskStatus::Working
    );
}

/// Case: the worker's changes need no scope; the client's need the task's.
/// A scoped task is changed by its worker without naming the scope
/// (`require_input`, `take_input`, `set_message`, `finish`), and by a
/// client naming it (`deliver_input`, `cancel`).
pub async fn the_workers_changes_need_no_scope(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    for id in ["a", "b"] {
        let task = NewTask {
            scope: Some("alice".into()),
            ..new(id, None)
        };
        s.create(task, 0).await.unwrap();
    }
    let r = s
        .require_input("a", map(&[("k", ELICIT)]), 1)
        .await
        .unwrap();
    assert_eq!(r.status, TaskStatus::InputRequired);
    let r = s
        .deliver_input("a", Some("alice"), map(&[("k", "{}")]), 2)
        .await
        .unwrap();
    assert_eq!(r.status, TaskStatus::Working);
    let taken = s.take_input("a", 3).await.unwrap();
    assert_eq!(taken.keys().collect::<Vec<_>>(), ["k"]);
    let r = s.set_message("a", Some("half".into()), 4).await.unwrap();
    assert_eq!(r.status_message.as_deref(), Some("half"));
    let r = s
        .finish("a", Terminal::Completed(raw("{}")), None, 5)
        .await
        .unwrap();
    assert_eq!(r.status, TaskStatus::Completed);
    let r = s.cancel("b", Some("alice"), 6).await.unwrap();
    assert_eq!(r.status, TaskStatus::Cancelled);
}

/// Case: status message updates touch last updated.
pub async fn status_message_updates_touch_last_updated(m: &dyn TaskStoreMaker) {
    let s = m.make(MemoryTaskStoreConfig::default()).await;
    s.create(new("a", None), 0).await.unwrap();
    let t = s.set_message("a", Some("half".into()), 7).await.unwrap();
    assert_eq!(t.status_message.as_deref(), Some("half"));
    assert_eq!(t.last_updated_at_ms, 7);
    let t = s.set_message("a", Some("half".into()), 9).await.unwrap();
    assert_eq!(t.last_updated_at_ms, 7);
}

fn scoped(id: &str, scope: &str, ttl: Option<u64>) -> NewTask {
    NewTask {
        scope: Some(scope.to_owned()),
        ..new(id, ttl)
    }
}

fn ids(page: &TaskPage) -> Vec<&str> {
    page.tasks.iter().map(|t| t.id.as_str()).collect()
}

/// Case: `list` pages one scope's tasks in creation order (expired ones
/// left out), with the last id of a page as the next cursor; a cursor
/// outside the scope's index is refused; the per-scope bound refuses until
/// one of the scope's tasks expires; unscoped tasks are not listed. (Ids
/// not in alphabetical order, so an order by id is told apart.)
pub async fn list_pages_by_scope_in_creation_order(m: &dyn TaskStoreMaker) {
    let s = m
        .make(MemoryTaskStoreConfig {
            max_tasks_per_scope: 3,
            ..Default::default()
        })
        .await;
    s.create(scoped("m", "s1", Some(1_000)), 0).await.unwrap();
    s.create(scoped("b", "s2", Some(1_000)), 0).await.unwrap();
    s.create(scoped("c", "s1", Some(10)), 0).await.unwrap();
    s.create(scoped("x", "s1", None), 0).await.unwrap();
    s.create(new("e", None), 0).await.unwrap();
    let p = s.list("s1", None, 2, 1).await.unwrap();
    assert_eq!(ids(&p), ["m", "c"]);
    assert_eq!(p.next_cursor.as_deref(), Some("c"));
    let p = s.list("s1", Some("c"), 2, 1).await.unwrap();
    assert_eq!(ids(&p), ["x"]);
    assert_eq!(p.next_cursor, None);
    assert_eq!(ids(&s.list("s2", None, 10, 1).await.unwrap()), ["b"]);
    let none = s.list("nobody", None, 10, 1).await.unwrap();
    assert!(none.tasks.is_empty() && none.next_cursor.is_none());
    for cursor in ["b", "e", "zzz", ""] {
        assert!(
            matches!(
                s.list("s1", Some(cursor), 2, 1).await,
                Err(TaskStoreError::UnknownCursor { .. })
            ),
            "cursor {cursor}"
        );
    }
    // The scope holds its maximum until "c" expires (at 10).
    assert!(matches!(
        s.create(scoped("f", "s1", Some(1_000)), 5).await,
        Err(TaskStoreError::TooManyForScope { max: 3 })
    ));
    s.create(scoped("f", "s1", Some(1_000)), 10).await.unwrap();
    assert_eq!(
        ids(&s.list("s1", None, 10, 10).await.unwrap()),
        ["m", "x", "f"]
    );
    assert!(matches!(
        s.list("s1", Some("c"), 2, 10).await,
        Err(TaskStoreError::UnknownCursor { .. })
    ));
    // A limit of 0 is taken as 1; a page that ends on the last task has no
    // next cursor.
    let p = s.list("s1", None, 0, 10).await.unwrap();
    assert_eq!((ids(&p), p.next_cursor.as_deref()), (vec!["m"], Some("m")));
    let p = s.list("s1", Some("x"), 1, 10).await.unwrap();
    assert_eq!((ids(&p), p.next_cursor.as_deref()), (vec!["f"], None));
    // What the task's own operations see is what the list shows.
    s.cancel("m", Some("s1"), 11).await.unwrap();
    let p = s.list("s1", None, 1, 11).await.unwrap();
    assert_eq!(p.tasks[0].status, TaskStatus::Cancelled);
}

/// Expands to one `#[tokio::test]` per case of the [`TaskStore`] suite,
/// each calling the case with the maker `$maker` evaluates to.
#[macro_export]
macro_rules! task_store_suite {
    ($maker:expr) => {
        $crate::__store_cases!(task_store, $maker, [tokio::test(flavor = "multi_thread", worker_threads = 2)];
            created_task_is_working_and_readable,
            working_to_completed_keeps_the_result,
            working_to_failed_keeps_the_error,
            input_round_trip_partial_then_complete,
            terminal_states_never_change,
            cancel_from_working_and_from_input_required,
            cancel_racing_completion_first_terminal_transition_wins,
            ttl_expiry_is_exact_and_reported,
            ttl_is_capped_and_unlimited_only_when_allowed,
            purge_drops_only_expired_tasks,
            count_bound_refuses_until_something_expires,
            byte_bounds_per_task_and_in_total,
            a_full_store_refuses_new_tasks_until_some_expire,
            scoped_tasks_are_invisible_to_other_scopes,
            the_workers_changes_need_no_scope,
            status_message_updates_touch_last_updated,
            list_pages_by_scope_in_creation_order,
        );
    };
}
