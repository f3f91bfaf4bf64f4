//! `supervise`, the run both revisions' task workers share: the work beside
//! `follow_store` and the lease watch, within the task's TTL, and the
//! task's end written once (on tokio's paused clock).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::lease::{LeaseStore, Leases, MemoryLeaseStore};
use mcp_transport_core::task_store::{
    Exit, InputWake, MemoryTaskStore, MemoryTaskStoreConfig, NewTask, Supervision, TaskInput,
    TaskStatus, TaskStore, Terminal, WorkEnd, liveness, now_ms, supervise,
};

struct Fixture {
    store: Arc<MemoryTaskStore>,
    leases: Leases,
    lease_store: Arc<MemoryLeaseStore>,
    cancel: CancellationToken,
}

impl Fixture {
    async fn new(config: MemoryTaskStoreConfig, ttl_ms: Option<u64>) -> Self {
        let store = Arc::new(MemoryTaskStore::new(config));
        let task = NewTask {
            id: "t".into(),
            scope: Some("s".into()),
            ttl_ms,
            poll_interval_ms: None,
            status_message: None,
        };
        store.create(task, now_ms()).await.unwrap();
        let lease_store = Arc::new(MemoryLeaseStore::default());
        let leases = Leases::new(lease_store.clone());
        assert!(liveness::start_worker_lease(&leases, "t").await);
        Fixture {
            store,
            leases,
            lease_store,
            cancel: CancellationToken::new(),
        }
    }

    fn supervision(&self, follow_store: bool, expires_at_ms: Option<u64>) -> Supervision {
        Supervision {
            task: TaskInput {
                store: self.store.clone(),
                id: "t".into(),
                scope: Some("s".into()),
                max_rounds: 0,
                wake: Arc::new(InputWake::new()),
                cancel: self.cancel.clone(),
            },
            leases: Some(self.leases.clone()),
            tick: Duration::from_millis(50),
            expires_at_ms,
            follow_store,
        }
    }

    async fn status(&self) -> TaskStatus {
        self.store
            .get("t", Some("s"), now_ms())
            .await
            .unwrap()
            .status
    }

    async fn lease_held(&self) -> bool {
        let key = Leases::task_key("t");
        matches!(self.lease_store.get(&key).await, Ok(Some(l)) if l.held)
    }
}

/// Work that ends as `cancelled` once its token is cancelled, noting that
/// it saw the cancellation.
async fn until_cancelled(cancel: CancellationToken, saw: Arc<AtomicBool>) -> WorkEnd {
    cancel.cancelled().await;
    saw.store(true, Ordering::SeqCst);
    WorkEnd::Finish(Terminal::Cancelled, Some("cancelled".into()))
}

/// Runs [`until_cancelled`] work under `sup` beside `other` (what another
/// instance does): how the run ended, and whether the work saw the
/// cancellation.
async fn run_beside(
    f: &Fixture,
    sup: &Supervision,
    other: impl Future<Output = ()>,
) -> (Exit, bool) {
    let saw = Arc::new(AtomicBool::new(false));
    let work = until_cancelled(f.cancel.clone(), saw.clone());
    let (exit, ()) = tokio::join!(supervise(sup, work, tokio::time::sleep), other);
    (exit, saw.load(Ordering::SeqCst))
}

/// Another instance cancels the task a second in.
async fn cancel_elsewhere(f: &Fixture) {
    tokio::time::sleep(Duration::from_secs(1)).await;
    f.store.cancel("t", Some("s"), now_ms()).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_finished_work_is_recorded_and_the_lease_released() {
    let f = Fixture::new(MemoryTaskStoreConfig::default(), None).await;
    let work = async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        WorkEnd::Finish(Terminal::Completed(to_raw(&"done").unwrap()), None)
    };
    let exit = supervise(&f.supervision(true, None), work, tokio::time::sleep).await;
    let Exit::Finished(r) = exit else {
        panic!("expected Finished, got {exit:?}");
    };
    assert_eq!(r.status, TaskStatus::Completed);
    assert!(
        f.cancel.is_cancelled(),
        "the worker's token ends with the run"
    );
    assert!(!f.lease_held().await, "the lease is released");
}

#[tokio::test(start_paused = true)]
async fn a_cancel_recorded_by_another_instance_reaches_the_work() {
    let f = Fixture::new(MemoryTaskStoreConfig::default(), None).await;
    // A TTL, so that a worker deaf to it ends (expired) instead of hanging.
    let sup = f.supervision(true, Some(now_ms() + 60_000));
    let (exit, saw) = run_beside(&f, &sup, cancel_elsewhere(&f)).await;
    assert!(saw, "the handler saw the cancellation");
    assert!(
        matches!(exit, Exit::NotRecorded(_)),
        "the cancel won: {exit:?}"
    );
    assert_eq!(f.status().await, TaskStatus::Cancelled);
}

#[tokio::test(start_paused = true)]
async fn without_following_the_store_the_work_runs_until_the_ttl() {
    let f = Fixture::new(MemoryTaskStoreConfig::default(), Some(600_000)).await;
    let sup = f.supervision(false, Some(now_ms() + 10_000));
    let (exit, saw) = run_beside(&f, &sup, cancel_elsewhere(&f)).await;
    assert!(matches!(exit, Exit::Expired), "{exit:?}");
    assert!(!saw, "the work was never told");
    assert!(!f.lease_held().await);
}

#[tokio::test(start_paused = true)]
async fn a_lost_lease_cancels_the_work_and_writes_nothing() {
    let f = Fixture::new(MemoryTaskStoreConfig::default(), None).await;
    // A TTL, so that a worker deaf to it ends (expired) instead of hanging.
    let sup = f.supervision(true, Some(now_ms() + 60_000));
    let other = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        // Another instance took it for dead and took the lease over.
        f.lease_store.lapse_holder(&f.leases.holder);
        let taken = f
            .lease_store
            .take_over(&Leases::task_key("t"), "other", f.leases.ttl)
            .await
            .unwrap();
        assert!(taken.is_some());
    };
    let (exit, saw) = run_beside(&f, &sup, other).await;
    assert!(matches!(exit, Exit::LeaseLost), "{exit:?}");
    assert!(saw, "the handler was cancelled");
    assert_eq!(f.status().await, TaskStatus::Working, "nothing written");
}

#[tokio::test(start_paused = true)]
async fn a_result_too_large_for_the_store_fails_the_task() {
    let config = MemoryTaskStoreConfig {
        max_task_bytes: 400,
        ..MemoryTaskStoreConfig::default()
    };
    let f = Fixture::new(config, None).await;
    let big = "x".repeat(1000);
    let work = async { WorkEnd::Finish(Terminal::Completed(to_raw(&big).unwrap()), None) };
    let exit = supervise(&f.supervision(true, None), work, tokio::time::sleep).await;
    let Exit::Finished(r) = exit else {
        panic!("expected Finished, got {exit:?}");
    };
    assert_eq!(r.status, TaskStatus::Failed);
    let error = r.error.expect("an error object").get().to_owned();
    assert!(error.contains("-32603"), "{error}");
    assert!(
        error.contains("exceeds the task store's limit of 400"),
        "{error}"
    );
}

/// Another instance reading the task: while the worker's lease is held the
/// task is left as it is; once it lapsed the task is failed with
/// `WORKER_GONE` and the lease let go; an ended task is never touched.
#[tokio::test]
async fn a_reader_fails_a_task_only_when_its_workers_lease_lapsed() {
    let f = Fixture::new(MemoryTaskStoreConfig::default(), None).await;
    let reader = Leases::new(f.lease_store.clone());
    let read = || async { f.store.get("t", Some("s"), now_ms()).await.unwrap() };

    let alive = liveness::fail_if_worker_gone(&reader, &*f.store, read().await).await;
    assert_eq!(alive.status, TaskStatus::Working, "a live worker's task");
    assert!(f.lease_held().await);

    f.lease_store.lapse_holder(&f.leases.holder);
    let gone = liveness::fail_if_worker_gone(&reader, &*f.store, read().await).await;
    assert_eq!(gone.status, TaskStatus::Failed);
    assert_eq!(gone.status_message.as_deref(), Some(liveness::WORKER_GONE));
    let error = gone.error.expect("an error object").get().to_owned();
    assert!(
        error.contains("-32603") && error.contains(liveness::WORKER_GONE),
        "{error}"
    );
    assert_eq!(f.status().await, TaskStatus::Failed);
    let key = Leases::task_key("t");
    assert!(
        f.lease_store.get(&key).await.unwrap().is_none(),
        "the lease was let go"
    );

    // Ended: returned as read, its lapsed lease not even taken over.
    assert!(liveness::start_worker_lease(&f.leases, "t").await);
    f.lease_store.lapse_holder(&f.leases.holder);
    let again = liveness::fail_if_worker_gone(&reader, &*f.store, read().await).await;
    assert_eq!(again.status, TaskStatus::Failed);
    let lease = f.lease_store.get(&key).await.unwrap().expect("left alone");
    assert_eq!(
        (lease.holder.as_str(), lease.held),
        (f.leases.holder.as_str(), false)
    );
}
