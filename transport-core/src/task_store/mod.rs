//! Durable task state behind the [`TaskStore`] trait: the state machine of
//! the Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) and of
//! 2025-11-25's experimental tasks (SEP-1686), which share it.
//!
//! A server that answers a request with a task handle keeps the task's
//! state here; `tasks/get` reads it, `tasks/update` delivers input into it,
//! `tasks/cancel` ends it, and the worker running the request writes its
//! progress and final result. The store is revision-neutral: the wire shapes
//! (`CreateTaskResult`, `DetailedTask`) are the revision crates'; the text of
//! a task's timestamps, which both revisions' `Task` define alike ("ISO 8601
//! timestamp"), is here ([`TaskRecord::created_at`]).
//!
//! # State machine (*Tasks*, "Task Status")
//!
//! ```text
//!                require_input            deliver_input (all answered)
//!   create ──▶ working ───────────▶ input_required ─────────────▶ working
//!                 │                        │
//!                 └──── finish / cancel ───┴──▶ completed | failed | cancelled
//! ```
//!
//! * A terminal status never changes again. The first terminal transition
//!   wins: [`TaskStore::cancel`] of a task that already finished returns it
//!   unchanged ("MAY ultimately reach a terminal status other than
//!   `cancelled` if the work finished before cancellation could take
//!   effect"), and [`TaskStore::finish`] of a task already cancelled is
//!   [`TaskStoreError::Terminal`] (the worker's result is dropped).
//! * Input request keys are unique over the task's life ("Each request key
//!   in `inputRequests` MUST be unique over the lifetime of a single task"):
//!   re-issuing one is [`TaskStoreError::KeyReused`]. Responses to keys that
//!   are not outstanding are ignored ("A server SHOULD ignore any
//!   `inputResponses` responses mapped to a key that is not currently
//!   outstanding"); a partial set leaves the task `input_required`.
//! * A task whose `created_at + ttl` has passed is gone: every operation on
//!   it is [`TaskStoreError::Expired`] (or [`TaskStoreError::NotFound`] once
//!   purged). Before that it stays readable ("A task MUST remain accessible
//!   … for the duration of its `ttlMs`").
//! * **Scope**: a task created with a scope (the principal on 2026-07-28,
//!   the session on 2025-11-25) is visible only to callers naming the same
//!   scope; to anyone else it does not exist ([`TaskStoreError::NotFound`],
//!   so its existence does not leak). A task without a scope is visible to
//!   every caller.
//!
//! # No process-local assumptions
//!
//! The store reads no clock: every method takes `now_ms`, milliseconds since
//! the Unix epoch, from the caller. Records are plain data (raw JSON
//! payloads), and nothing in the contract depends on the worker running in
//! the same process as the caller of `tasks/get`, so a networked store
//! (Redis, …) can implement it; what *is* process-local — the running
//! worker, its cancellation token, waking it when input arrives — stays in
//! the server. [`MemoryTaskStore`] is the bounded in-memory default.

mod input;
pub mod liveness;
mod memory;
mod state;
mod supervise;

pub use input::{InputEnd, InputRounds, InputWake, TaskInput, follow_store, now_ms};
pub use memory::{MemoryTaskStore, MemoryTaskStoreConfig};
pub use state::{Changed, InputMap, TaskChange, TaskState, unique_input_key};
pub use supervise::{Exit, Supervision, WorkEnd, supervise};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::event_log::BackendError;

/// A task's status (*Tasks*, "Task Status").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The server needs input from the client (see
    /// [`TaskRecord::input_requests`]).
    InputRequired,
    /// Finished with a result (also a tool result with `isError: true`).
    Completed,
    /// Finished with a JSON-RPC error.
    Failed,
    /// Cancelled before completion.
    Cancelled,
}

impl TaskStatus {
    /// Whether no further transition is possible.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The wire name (`working`, `input_required`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What [`TaskStore::create`] needs.
#[derive(Clone, Debug)]
pub struct NewTask {
    /// The task id, minted by the server from a CSPRNG (*Tasks*, "Security
    /// Considerations": "Servers MUST generate them with sufficient entropy
    /// that a third party cannot enumerate or guess them").
    pub id: String,
    /// Who may see the task (see the [module docs](self)); `None`: anyone.
    pub scope: Option<String>,
    /// The requested time to live in ms from creation; `None` asks for
    /// unlimited. A store may shorten it (the record says what it kept).
    pub ttl_ms: Option<u64>,
    /// The suggested polling interval.
    pub poll_interval_ms: Option<u64>,
    /// The initial `statusMessage`.
    pub status_message: Option<String>,
}

/// A task as stored.
#[derive(Clone, Debug)]
pub struct TaskRecord {
    /// The task id.
    pub id: String,
    /// Who may see it.
    pub scope: Option<String>,
    /// The current status.
    pub status: TaskStatus,
    /// The current `statusMessage`.
    pub status_message: Option<String>,
    /// Creation time, ms since the Unix epoch.
    pub created_at_ms: u64,
    /// Time of the last change, ms since the Unix epoch.
    pub last_updated_at_ms: u64,
    /// Time to live from creation in ms; `None` is unlimited.
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval in ms.
    pub poll_interval_ms: Option<u64>,
    /// The outstanding input requests, by key: each value is the request
    /// object (`{"method": …, "params": …}`). Non-empty exactly when the
    /// status is `input_required`.
    pub input_requests: BTreeMap<String, Box<RawValue>>,
    /// Responses delivered by the client and not yet taken by the worker
    /// ([`TaskStore::take_input`]), by key.
    pub input_responses: BTreeMap<String, Box<RawValue>>,
    /// The final result (status `completed`).
    pub result: Option<Box<RawValue>>,
    /// The JSON-RPC error object (status `failed`).
    pub error: Option<Box<RawValue>>,
}

/// `ms` since the Unix epoch as an RFC 3339 UTC timestamp; the epoch
/// itself for a time `time` cannot represent (past the year 9999).
fn rfc3339(ms: u64) -> String {
    use time::OffsetDateTime;
    use time::format_description::well_known::Rfc3339;
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

impl TaskRecord {
    /// `createdAt` as both revisions' `Task` carries it (2025-11-25's
    /// `schema.ts` and the Tasks extension's: "ISO 8601 timestamp when the
    /// task was created"): RFC 3339, an ISO 8601 profile, in UTC, with the
    /// milliseconds when there are any.
    pub fn created_at(&self) -> String {
        rfc3339(self.created_at_ms)
    }

    /// `lastUpdatedAt`, written as [`created_at`](Self::created_at).
    pub fn last_updated_at(&self) -> String {
        rfc3339(self.last_updated_at_ms)
    }

    /// When the task expires (ms since the Unix epoch), if it does.
    pub fn expires_at_ms(&self) -> Option<u64> {
        self.ttl_ms.map(|t| self.created_at_ms.saturating_add(t))
    }

    /// Whether the task has expired at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expires_at_ms().is_some_and(|e| now_ms >= e)
    }

    /// Whether a caller with `scope` may see the task.
    pub fn visible_to(&self, scope: Option<&str>) -> bool {
        match &self.scope {
            None => true,
            Some(s) => scope == Some(s.as_str()),
        }
    }

    /// Payload bytes held (results, errors, input requests and responses),
    /// what the stores' byte bounds count.
    pub fn payload_bytes(&self) -> usize {
        let map = |m: &BTreeMap<String, Box<RawValue>>| {
            m.iter()
                .map(|(k, v)| k.len() + v.get().len())
                .sum::<usize>()
        };
        map(&self.input_requests)
            + map(&self.input_responses)
            + self.result.as_ref().map_or(0, |r| r.get().len())
            + self.error.as_ref().map_or(0, |r| r.get().len())
            + self.status_message.as_ref().map_or(0, String::len)
    }
}

/// How a task ends ([`TaskStore::finish`]).
#[derive(Clone, Debug)]
pub enum Terminal {
    /// With a result (status `completed`).
    Completed(Box<RawValue>),
    /// With a JSON-RPC error object (status `failed`).
    Failed(Box<RawValue>),
    /// Cancelled by the worker itself (status `cancelled`).
    Cancelled,
}

impl Terminal {
    /// The status it leads to.
    pub fn status(&self) -> TaskStatus {
        match self {
            Terminal::Completed(_) => TaskStatus::Completed,
            Terminal::Failed(_) => TaskStatus::Failed,
            Terminal::Cancelled => TaskStatus::Cancelled,
        }
    }
}

/// Why a [`TaskStore`] operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// No task with this id is visible to the caller (never created,
    /// purged, or of another scope). On the wire: `-32602`, "Task not
    /// found".
    #[error("task {id} not found")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// The task's TTL has passed. On the wire: `-32602`, "Task has
    /// expired".
    #[error("task {id} has expired")]
    Expired {
        /// The id asked for.
        id: String,
    },
    /// [`TaskStore::create`] with an id already in use (mint another).
    #[error("task id {id} is already in use")]
    Exists {
        /// The id.
        id: String,
    },
    /// The store holds its maximum number of live tasks.
    #[error("the task store already holds its maximum of {max} tasks")]
    TooManyTasks {
        /// The configured maximum.
        max: usize,
    },
    /// The tasks together hold the store's total of payload bytes
    /// ([`MemoryTaskStoreConfig::max_total_bytes`]): no new task is taken,
    /// even an empty one (it would have no room for its result), until
    /// some expire — none is evicted before its TTL. A load condition: on
    /// the wire, 503 with `-32603`, like [`TaskStoreError::TooManyTasks`].
    #[error("the task store already holds its maximum of {max} payload bytes")]
    Full {
        /// The configured total.
        max: usize,
    },
    /// The operation would make one task hold more payload than allowed, or
    /// the store more than its total.
    #[error("the task would hold {size} bytes, over the task store's limit of {max}")]
    TooLarge {
        /// The bytes the operation needed.
        size: usize,
        /// The limit it hit.
        max: usize,
    },
    /// A transition from a terminal status (the task already ended).
    #[error("task {id} has already ended ({status})")]
    Terminal {
        /// The task.
        id: String,
        /// Its terminal status.
        status: TaskStatus,
    },
    /// An input request key that the task has used before.
    #[error(
        "input request key {key} was already used by task {id}; keys are unique over a task's life"
    )]
    KeyReused {
        /// The task.
        id: String,
        /// The key.
        key: String,
    },
    /// [`TaskStore::list`] with a cursor the scope's index does not hold.
    /// On the wire: `-32602` ("Invalid or nonexistent cursor").
    #[error("unknown task list cursor {cursor}")]
    UnknownCursor {
        /// The cursor given.
        cursor: String,
    },
    /// The scope already holds its maximum of listed tasks
    /// ([`MemoryTaskStoreConfig::max_tasks_per_scope`]).
    #[error("this requestor already holds its maximum of {max} tasks")]
    TooManyForScope {
        /// The configured maximum.
        max: usize,
    },
    /// The store's backend failed.
    #[error("task store backend failed")]
    Backend(#[source] BackendError),
}

/// Storage for tasks (see the [module documentation](self) for the state
/// machine and scope rules every implementation keeps).
///
/// Object safe (servers hold `Arc<dyn TaskStore>`); async so that a
/// networked store can implement it. Every method takes the current time
/// from the caller.
///
/// A store implements [`create`](Self::create), [`get`](Self::get),
/// [`change`](Self::change), [`purge_expired`](Self::purge_expired) and
/// [`list`](Self::list): where the state lives and how a change is made
/// atomic. What each writing operation does is the provided methods' (in
/// [`TaskChange`] and [`TaskState`]), the same for every store.
#[async_trait::async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new `working` task and returns it as stored (with the TTL
    /// the store kept). When this returns, [`get`](Self::get) finds it
    /// ("A server MUST NOT return `CreateTaskResult` until the task is
    /// durably created").
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::Exists`], [`TaskStoreError::TooManyTasks`],
    /// [`TaskStoreError::TooLarge`] (the task alone is over the per-task
    /// bound), [`TaskStoreError::Full`] (the total is reached),
    /// [`TaskStoreError::TooManyForScope`], [`TaskStoreError::Backend`].
    async fn create(&self, task: NewTask, now_ms: u64) -> Result<TaskRecord, TaskStoreError>;

    /// The task, if visible to `scope`.
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::NotFound`], [`TaskStoreError::Expired`],
    /// [`TaskStoreError::Backend`].
    async fn get(
        &self,
        id: &str,
        scope: Option<&str>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError>;

    /// Applies `change` to the task `id` as one atomic read-modify-write:
    /// the one primitive behind the writing operations below, which are
    /// provided in its terms ([`TaskChange`] says what each does and whose
    /// scope it checks). The task must exist, be visible to
    /// [`TaskChange::scope`] when that is `Some`, and not have expired;
    /// then [`TaskChange::apply`] runs on its state, and the store keeps
    /// its byte bounds: a change that would pass one leaves the task as it
    /// was. A store may apply the change more than once (a compare-and-set
    /// that lost a race reads again); only the last application is kept.
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::NotFound`], [`TaskStoreError::Expired`] (the
    /// store may drop the task then), [`TaskStoreError::TooLarge`], the
    /// transition's own ([`TaskStoreError::Terminal`],
    /// [`TaskStoreError::KeyReused`]), [`TaskStoreError::Backend`].
    async fn change(
        &self,
        id: &str,
        change: TaskChange<'_>,
        now_ms: u64,
    ) -> Result<Changed, TaskStoreError>;

    /// The worker needs client input: adds `requests` (key → request
    /// object) to the outstanding ones and moves the task to
    /// `input_required`.
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::KeyReused`], [`TaskStoreError::Terminal`],
    /// [`TaskStoreError::TooLarge`], [`TaskStoreError::NotFound`],
    /// [`TaskStoreError::Expired`], [`TaskStoreError::Backend`].
    async fn require_input(
        &self,
        id: &str,
        requests: BTreeMap<String, Box<RawValue>>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.change(id, TaskChange::RequireInput(requests), now_ms)
            .await?
            .into_record()
    }

    /// The client answers (`tasks/update`): responses to outstanding keys
    /// are kept for the worker and those keys stop being outstanding; when
    /// none is left the task is `working` again. Other keys are ignored; a
    /// terminal task is returned unchanged.
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::TooLarge`], [`TaskStoreError::NotFound`],
    /// [`TaskStoreError::Expired`], [`TaskStoreError::Backend`].
    async fn deliver_input(
        &self,
        id: &str,
        scope: Option<&str>,
        responses: BTreeMap<String, Box<RawValue>>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        let change = TaskChange::DeliverInput { scope, responses };
        self.change(id, change, now_ms).await?.into_record()
    }

    /// The worker takes the responses delivered so far (they are removed).
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::NotFound`], [`TaskStoreError::Expired`],
    /// [`TaskStoreError::Backend`].
    async fn take_input(
        &self,
        id: &str,
        now_ms: u64,
    ) -> Result<BTreeMap<String, Box<RawValue>>, TaskStoreError> {
        self.change(id, TaskChange::TakeInput, now_ms)
            .await?
            .into_input()
    }

    /// Sets the `statusMessage` of a task that has not ended (a progress
    /// description, say).
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::Terminal`], [`TaskStoreError::TooLarge`],
    /// [`TaskStoreError::NotFound`], [`TaskStoreError::Expired`],
    /// [`TaskStoreError::Backend`].
    async fn set_message(
        &self,
        id: &str,
        message: Option<String>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.change(id, TaskChange::SetMessage(message), now_ms)
            .await?
            .into_record()
    }

    /// The worker ends the task. Outstanding input requests are dropped.
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::Terminal`] when it has already ended (cancelled by
    /// the client, say: the first terminal transition wins),
    /// [`TaskStoreError::TooLarge`] (the result does not fit: end it
    /// `failed` instead), [`TaskStoreError::NotFound`],
    /// [`TaskStoreError::Expired`], [`TaskStoreError::Backend`].
    async fn finish(
        &self,
        id: &str,
        terminal: Terminal,
        message: Option<String>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        let change = TaskChange::Finish { terminal, message };
        self.change(id, change, now_ms).await?.into_record()
    }

    /// The client cancels (`tasks/cancel`): a task that has not ended
    /// becomes `cancelled` at once (the worker learns it from its own
    /// cancellation signal, or when its [`finish`](Self::finish) fails); an
    /// ended one is returned unchanged.
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::NotFound`], [`TaskStoreError::Expired`],
    /// [`TaskStoreError::Backend`].
    async fn cancel(
        &self,
        id: &str,
        scope: Option<&str>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.change(id, TaskChange::Cancel { scope }, now_ms)
            .await?
            .into_record()
    }

    /// Drops every task expired at `now_ms`; returns how many.
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::Backend`] only.
    async fn purge_expired(&self, now_ms: u64) -> Result<usize, TaskStoreError>;

    /// One page of the tasks created with `scope` (the requestor: the
    /// session on 2025-11-25), oldest first, that have not expired: at
    /// most `limit` (at least one), starting after the task `cursor` (the
    /// last of the previous page, [`TaskPage::next_cursor`]). Every
    /// implementation keeps a bounded per-scope index for this, so a task
    /// created through one instance is listed through any other (*Tasks*,
    /// "Listing Tasks"). Tasks created without a scope are not listed.
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::UnknownCursor`] for a cursor that names no task
    /// of the scope's index (never one, or one that expired since),
    /// [`TaskStoreError::Backend`].
    async fn list(
        &self,
        scope: &str,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> Result<TaskPage, TaskStoreError>;
}

/// What [`TaskStore::list`] returns.
#[derive(Clone, Debug, Default)]
pub struct TaskPage {
    /// The page's tasks, oldest first.
    pub tasks: Vec<TaskRecord>,
    /// The cursor of the next page (the id of this page's last task), when
    /// more tasks follow.
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(created_at_ms: u64, last_updated_at_ms: u64) -> TaskRecord {
        TaskRecord {
            id: "t".into(),
            scope: None,
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms,
            last_updated_at_ms,
            ttl_ms: None,
            poll_interval_ms: None,
            input_requests: BTreeMap::new(),
            input_responses: BTreeMap::new(),
            result: None,
            error: None,
        }
    }

    /// `as_str` and `Display` give the wire name, the one serde writes
    /// (*Tasks*, "Task Status": `working`, `input_required`, `completed`,
    /// `failed`, `cancelled`).
    #[test]
    fn a_status_is_named_as_on_the_wire() {
        use TaskStatus::*;
        let names = [
            (Working, "working"),
            (InputRequired, "input_required"),
            (Completed, "completed"),
            (Failed, "failed"),
            (Cancelled, "cancelled"),
        ];
        for (status, name) in names {
            assert_eq!(status.as_str(), name);
            assert_eq!(status.to_string(), name);
            assert_eq!(serde_json::to_value(status).unwrap(), name);
            assert_eq!(
                status.is_terminal(),
                !matches!(status, Working | InputRequired)
            );
        }
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let r = at(0, 1_764_547_200_123);
        assert_eq!(r.created_at(), "1970-01-01T00:00:00Z");
        assert_eq!(r.last_updated_at(), "2025-12-01T00:00:00.123Z");
        // Whole seconds have no fraction; the example of 2025-11-25's
        // *Tasks* page ("createdAt": "2025-11-25T10:30:00Z").
        assert_eq!(
            at(1_764_066_600_000, 0).created_at(),
            "2025-11-25T10:30:00Z"
        );
        // Past what `time` represents: the epoch, not a panic.
        assert_eq!(at(u64::MAX, u64::MAX).created_at(), "1970-01-01T00:00:00Z");
    }
}
