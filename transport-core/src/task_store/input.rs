//! Client input inside a task, the same in both eras: a task's handler
//! answers [`Outcome::InputRequired`](crate::handler::Outcome), the worker
//! puts the requests in the store (the task becomes `input_required`), the
//! client answers them (2026-07-28 `tasks/update`, 2025-11-25 through
//! `tasks/result`), and the worker runs the handler again with the answers
//! under the handler's own keys.
//!
//! [`InputRounds`] is that exchange for one task. It is sans-IO: how the
//! worker waits for the answers (a wake-up, a cancellation) is the
//! `wait` future the revision gives it, and the clock is the caller's.
//! Which client capabilities an input request needs is checked by each
//! revision before (the rule differs: `initialize` capabilities on
//! 2025-11-25, the creating request's on 2026-07-28).

use std::collections::{BTreeMap, HashSet};
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use event_listener::Event;

use super::{InputMap, TaskRecord, TaskStatus, TaskStore, TaskStoreError, unique_input_key};
use crate::cancel::CancellationToken;
use crate::handler::InputRequired;
use crate::jsonrpc::{ErrorObject, to_raw};

/// Milliseconds since the Unix epoch: the clock the task workers give the
/// store (a wall clock, as another instance may read the same task).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Wakes a task's worker waiting in [`InputRounds::exchange`]: whoever
/// delivers the client's answers into the store (`tasks/update`,
/// `tasks/result`) calls [`notify`](Self::notify) afterwards. A wake with
/// no waiter is not lost: the waiter re-reads the store before it sleeps.
#[derive(Debug, Default)]
pub struct InputWake {
    event: Event,
}

impl InputWake {
    /// A wake nobody waits on yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wakes the waiting worker, if any.
    pub fn notify(&self) {
        self.event.notify(usize::MAX);
    }
}

/// How an input exchange ended without answers.
#[derive(Debug)]
pub enum InputEnd {
    /// The task should fail with this error: too many rounds, or the store
    /// refused the requests.
    Fail(ErrorObject),
    /// The task ended meanwhile (cancelled, expired, purged) or the worker
    /// was cancelled: nothing more to do.
    Ended,
}

/// The task an [`InputRounds`] asks input for, and how its worker is woken
/// or stopped.
pub struct TaskInput {
    /// Where the task lives.
    pub store: Arc<dyn TaskStore>,
    /// The task's id.
    pub id: String,
    /// The task's scope (see the [module docs](super)).
    pub scope: Option<String>,
    /// At most this many rounds; one more fails the task.
    pub max_rounds: u32,
    /// Notified when answers were delivered.
    pub wake: Arc<InputWake>,
    /// The worker's cancellation.
    pub cancel: CancellationToken,
}

/// The input rounds of one task: counts them against a bound and keeps the
/// keys on the wire unique for the task's life (*Tasks*, "Each request key
/// in `inputRequests` MUST be unique over the lifetime of a single task";
/// a handler may reuse its own keys from round to round).
pub struct InputRounds {
    task: TaskInput,
    used: HashSet<String>,
    round: u32,
}

impl InputRounds {
    /// No round yet.
    pub fn new(task: TaskInput) -> Self {
        InputRounds {
            task,
            used: HashSet::new(),
            round: 0,
        }
    }

    /// One round: stores `input`'s requests (under keys unique for the
    /// task), calls `published` with the `input_required` record, then waits
    /// — re-reading the task whenever [`InputWake::notify`] is called —
    /// until the client has answered every request, and returns the answers
    /// under the handler's keys.
    ///
    /// # Errors
    ///
    /// [`InputEnd::Fail`] past `max_rounds` or when the store refuses the
    /// requests; [`InputEnd::Ended`] when the task ended meanwhile or the
    /// worker was cancelled.
    pub async fn exchange(
        &mut self,
        input: &InputRequired,
        published: impl FnOnce(&TaskRecord),
    ) -> Result<InputMap, InputEnd> {
        let t = &self.task;
        self.round += 1;
        if self.round > t.max_rounds {
            return Err(InputEnd::Fail(ErrorObject::internal(format!(
                "the task needed client input more than {} times; giving up",
                t.max_rounds
            ))));
        }
        let mut wire_to_handler = BTreeMap::new();
        let mut requests = BTreeMap::new();
        for (key, req) in &input.requests {
            let wire_key = unique_input_key(key, &mut self.used);
            let value = serde_json::json!({ "method": req.method, "params": req.params });
            let raw = to_raw(&value).map_err(|_| {
                InputEnd::Fail(ErrorObject::internal("unserializable input request"))
            })?;
            requests.insert(wire_key.clone(), raw);
            wire_to_handler.insert(wire_key, key.clone());
        }
        match t.store.require_input(&t.id, requests, now_ms()).await {
            Ok(record) => published(&record),
            Err(TaskStoreError::Terminal { .. } | TaskStoreError::NotFound { .. }) => {
                return Err(InputEnd::Ended);
            }
            Err(e) => return Err(InputEnd::Fail(ErrorObject::internal(e))),
        }
        // Wait until every request is answered (the task is `working`
        // again). Listen before reading, so a wake in between is not lost.
        loop {
            let mut woken = t.wake.event.listen();
            match t.store.get(&t.id, t.scope.as_deref(), now_ms()).await {
                Ok(r) if r.status.is_terminal() => return Err(InputEnd::Ended),
                Ok(r) if r.status == TaskStatus::Working => break,
                Ok(_) => {}
                Err(_) => return Err(InputEnd::Ended),
            }
            let mut cancelled = t.cancel.cancelled();
            let go_on = poll_fn(|cx| {
                if Pin::new(&mut cancelled).poll(cx).is_ready() {
                    Poll::Ready(false)
                } else if Pin::new(&mut woken).poll(cx).is_ready() {
                    Poll::Ready(true)
                } else {
                    Poll::Pending
                }
            })
            .await;
            if !go_on {
                return Err(InputEnd::Ended);
            }
        }
        let answers = t
            .store
            .take_input(&t.id, now_ms())
            .await
            .map_err(|_| InputEnd::Ended)?;
        Ok(answers
            .into_iter()
            .filter_map(|(k, v)| wire_to_handler.get(&k).map(|h| (h.clone(), v)))
            .collect())
    }
}

/// Follows a running task's record in a store other instances share, so
/// that what another instance does to the task reaches the worker running
/// it here: a `tasks/cancel` that instance recorded (the task is terminal)
/// cancels the worker's token — the handler sees the cancellation, as
/// *Tasks* "Cancellation" asks of the receiver — and answers it delivered
/// (the task is `working` again, or anything else changed) wake an
/// [`InputRounds::exchange`] waiting here. Re-reads the record after each
/// `tick()` (the caller's timer: this crate has none); returns once the
/// task is terminal or gone. A store out of reach is tried again at the
/// next tick. Cost: one `get` per tick while the worker runs.
pub async fn follow_store<F, Fut>(task: &TaskInput, mut tick: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    loop {
        tick().await;
        match task
            .store
            .get(&task.id, task.scope.as_deref(), now_ms())
            .await
        {
            Ok(r) if r.status.is_terminal() => break,
            Err(TaskStoreError::NotFound { .. } | TaskStoreError::Expired { .. }) => break,
            Ok(r) if r.status != TaskStatus::InputRequired => task.wake.notify(),
            _ => {}
        }
    }
    task.cancel.cancel();
    task.wake.notify();
}
