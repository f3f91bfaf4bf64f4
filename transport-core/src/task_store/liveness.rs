//! Task workers across instances: the worker's lease (see
//! [`crate::lease`]) and what another instance does when the worker's
//! instance died.
//!
//! The instance running a task's worker holds the lease
//! [`Leases::task_key`]`(id)` from creation to the task's end
//! ([`start_worker_lease`], [`watch_worker`], [`end_worker_lease`]). Any
//! instance answering a `tasks/get` or `tasks/result` for a task that has
//! not ended and whose worker is not running there calls
//! [`fail_if_worker_gone`]: when the lease has lapsed, the one instance
//! that takes it over ends the task `failed` with a `-32603` error and a
//! status message saying why (*Tasks*, "Task Status": `failed` — "the
//! request ... did not complete successfully"), instead of the client
//! polling a `working` task forever.

use std::future::Future;
use std::time::Duration;

use super::{TaskRecord, TaskStore, Terminal};
use crate::jsonrpc::{ErrorObject, INTERNAL_ERROR, to_raw};
use crate::lease::Leases;

/// The status message (and error message) of a task whose worker's
/// instance stopped.
pub const WORKER_GONE: &str = "the server instance running this task stopped (its lease lapsed); the task's outcome is unknown";

/// Takes the lease of task `id`'s worker (just created). `false` when it
/// could not be taken: the worker then runs without one.
pub async fn start_worker_lease(leases: &Leases, id: &str) -> bool {
    matches!(
        leases
            .store
            .acquire(&Leases::task_key(id), &leases.holder, "", leases.ttl)
            .await,
        Ok(true)
    )
}

/// Renews the worker's lease every `renew_every` (with the caller's
/// `sleep`) and returns when the lease was taken over (another instance
/// found it lapsed and failed the task): the worker should stop. It is
/// [`Leases::keep`] of the task's key. What
/// another instance does to a task whose worker is alive — a cancel, input
/// — reaches the worker through [`follow_store`](super::follow_store),
/// which runs beside this, with or without leases.
pub async fn watch_worker<S, F>(leases: &Leases, id: &str, sleep: S)
where
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    leases.keep(&Leases::task_key(id), sleep).await;
}

/// Releases the worker's lease (the task ended).
pub async fn end_worker_lease(leases: &Leases, id: &str) {
    let _ = leases
        .store
        .release(&Leases::task_key(id), &leases.holder)
        .await;
}

/// For a task `record` read by an instance where its worker does not run:
/// if it has not ended and its worker's lease lapsed, takes the lease over
/// and ends the task `failed` ([`WORKER_GONE`]); returns the task as it is
/// then (unchanged when the worker is alive, or has no lease, or another
/// instance won the takeover and has not written yet).
pub async fn fail_if_worker_gone(
    leases: &Leases,
    store: &dyn TaskStore,
    record: TaskRecord,
) -> TaskRecord {
    if record.status.is_terminal() {
        return record;
    }
    let key = Leases::task_key(&record.id);
    match leases.store.get(&key).await {
        Ok(Some(l)) if !l.held => {}
        _ => return record,
    }
    let Ok(Some(_)) = leases
        .store
        .take_over(&key, &leases.holder, leases.ttl)
        .await
    else {
        return record;
    };
    let error = ErrorObject::new(INTERNAL_ERROR, format!("Internal error: {WORKER_GONE}"));
    let ended = match to_raw(&error) {
        Ok(raw) => store
            .finish(
                &record.id,
                Terminal::Failed(raw),
                Some(WORKER_GONE.to_owned()),
                super::now_ms(),
            )
            .await
            .ok(),
        Err(_) => None,
    };
    let _ = leases.store.release(&key, &leases.holder).await;
    match ended {
        Some(r) => r,
        None => store
            .get(&record.id, record.scope.as_deref(), super::now_ms())
            .await
            .unwrap_or(record),
    }
}
