//! A task's worker from the outside, the same in both eras: the revision's
//! handler loop (the *work*) runs beside [`follow_store`] — what another
//! instance does to the task reaches the worker — and, with leases,
//! beside [`liveness::watch_worker`] — the worker stops when its lease was
//! taken over —, all within the task's TTL; then the task's end is written
//! into the store and the lease released.
//!
//! Runtime-generic like the rest of this crate: the caller gives the timer
//! (`sleep`). What differs between the revisions — the handler loop, what a
//! finished task publishes, how a self-test fault changes the worker —
//! stays with the caller.

use std::future::{Future, pending, poll_fn};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use super::{TaskInput, TaskRecord, TaskStoreError, Terminal, follow_store, liveness, now_ms};
use crate::jsonrpc::{ErrorObject, to_raw};
use crate::lease::Leases;

/// How a task's work ended.
#[derive(Debug)]
pub enum WorkEnd {
    /// End the task so, with this `statusMessage`.
    Finish(Terminal, Option<String>),
    /// The task already ended (cancelled, expired, purged) or the work has
    /// nothing to record.
    Already,
}

impl WorkEnd {
    /// End the task `failed` with `error` (its message becomes the
    /// `statusMessage`); [`WorkEnd::Already`] if it cannot be serialized.
    pub fn failed(error: ErrorObject) -> Self {
        let message = error.message.clone();
        match to_raw(&error) {
            Ok(raw) => WorkEnd::Finish(Terminal::Failed(raw), Some(message)),
            Err(_) => WorkEnd::Already,
        }
    }
}

/// What a supervised worker watches besides its work.
pub struct Supervision {
    /// The task (`max_rounds` is not used here); its `cancel` is the
    /// worker's token, cancelled when the run ends.
    pub task: TaskInput,
    /// The cluster's leases, when the worker holds one
    /// ([`liveness::start_worker_lease`]); released at the end.
    pub leases: Option<Leases>,
    /// How often the store is re-read ([`follow_store`]).
    pub tick: Duration,
    /// When the task expires (ms since the Unix epoch): the work is
    /// dropped then.
    pub expires_at_ms: Option<u64>,
    /// Whether to follow the store at all (`false` only for a self-test
    /// fault that makes the worker deaf to cancellation).
    pub follow_store: bool,
}

/// How a supervised run ended.
#[derive(Debug)]
pub enum Exit {
    /// The worker wrote the task's end: the record as stored. A result too
    /// large for the store was replaced by a `-32603` error.
    Finished(TaskRecord),
    /// The work ended with nothing to write ([`WorkEnd::Already`]).
    Ended,
    /// The task's TTL passed while the work ran; the work was dropped.
    Expired,
    /// The worker's lease was taken over (this instance was taken for
    /// dead); the work was cancelled and awaited, nothing written.
    LeaseLost,
    /// Writing the end failed: [`TaskStoreError::Terminal`] when the task
    /// had already ended (a cancel wins), else the store's error.
    NotRecorded(TaskStoreError),
}

/// What the select loop saw first.
enum First {
    Work(WorkEnd),
    Expired,
    LeaseLost,
}

/// Runs `work` under `sup` (see the module docs) and records its
/// end. `sleep` is the runtime's timer.
pub async fn supervise<W, S, F>(sup: &Supervision, work: W, sleep: S) -> Exit
where
    W: Future<Output = WorkEnd>,
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    let task = &sup.task;
    let mut work = pin!(work);
    let mut follow = pin!(async {
        if sup.follow_store {
            follow_store(task, || sleep(sup.tick)).await;
        } else {
            pending::<()>().await;
        }
    });
    let mut lease_lost = pin!(async {
        match &sup.leases {
            Some(l) => liveness::watch_worker(l, &task.id, &sleep).await,
            None => pending().await,
        }
    });
    let mut expired = pin!(async {
        match sup.expires_at_ms {
            Some(at) => sleep(Duration::from_millis(at.saturating_sub(now_ms()))).await,
            None => pending().await,
        }
    });
    // Once the store says the task ended (`follow` returned, the token is
    // cancelled), only the work and the TTL are waited for.
    let mut following = true;
    let first = poll_fn(|cx| {
        if let Poll::Ready(end) = work.as_mut().poll(cx) {
            return Poll::Ready(First::Work(end));
        }
        if expired.as_mut().poll(cx).is_ready() {
            return Poll::Ready(First::Expired);
        }
        if following && follow.as_mut().poll(cx).is_ready() {
            following = false;
            // The token was cancelled: let the work see it.
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        if following && lease_lost.as_mut().poll(cx).is_ready() {
            return Poll::Ready(First::LeaseLost);
        }
        Poll::Pending
    })
    .await;
    let exit = match first {
        First::Work(WorkEnd::Finish(terminal, message)) => {
            task.cancel.cancel();
            finish(sup, terminal, message).await
        }
        First::Work(WorkEnd::Already) => Exit::Ended,
        First::Expired => Exit::Expired,
        First::LeaseLost => {
            task.cancel.cancel();
            // The handler sees the cancellation; its outcome is not ours
            // to write any more. Within the TTL still.
            let rest = poll_fn(|cx| {
                if work.as_mut().poll(cx).is_ready() || expired.as_mut().poll(cx).is_ready() {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            });
            rest.await;
            Exit::LeaseLost
        }
    };
    task.cancel.cancel();
    if let Some(l) = &sup.leases {
        liveness::end_worker_lease(l, &task.id).await;
    }
    exit
}

/// Writes the task's end; a result over the store's size limit becomes a
/// `-32603` error instead.
async fn finish(sup: &Supervision, terminal: Terminal, message: Option<String>) -> Exit {
    let task = &sup.task;
    match task
        .store
        .finish(&task.id, terminal, message, now_ms())
        .await
    {
        Ok(r) => Exit::Finished(r),
        Err(TaskStoreError::TooLarge { size, max }) => {
            let e = ErrorObject::internal(format!(
                "the task's result of {size} bytes exceeds the task store's limit of {max}"
            ));
            let WorkEnd::Finish(t, m) = WorkEnd::failed(e) else {
                return Exit::Ended;
            };
            match task.store.finish(&task.id, t, m, now_ms()).await {
                Ok(r) => Exit::Finished(r),
                Err(e) => Exit::NotRecorded(e),
            }
        }
        Err(e) => Exit::NotRecorded(e),
    }
}
