//! 2025-11-25's experimental tasks (SEP-1686; *Tasks* in
//! `basic/utilities`) on the session engine.
//!
//! When a [`TasksConfig`] is set ([`TasksExt::with_tasks`](crate::TasksExt::with_tasks)), every
//! 2025-11-25 session is served through a `handler` wrapper (the
//! engine's `SessionRevision::session_handler` hook) that:
//!
//! * declares `capabilities.tasks` (`list`, `cancel`,
//!   `requests.tools.call`) in `initialize`, and nothing without a config;
//! * marks each tool of `tools/list` with `execution.taskSupport` from
//!   [`Handler::execution`]: `MayBeLong` → `optional`, `TaskOnly` →
//!   `required`, `Immediate` → absent (= `forbidden`);
//! * answers a `tools/call` carrying `params.task` with a
//!   `CreateTaskResult`, the task stored first, the handler running in a
//!   `worker` that outlives the HTTP exchange and takes over the call's
//!   place in the engine's bound on running work
//!   (`RequestContext::admission`, `Admission::try_admit_successor`; none
//!   left: the call's `-32603` names the limit, no task made); `-32601`
//!   for a task on a
//!   `forbidden` tool and for a `required` tool called without one
//!   (*Tasks*, "Tool-Level Negotiation");
//! * answers `tasks/get`, `tasks/list` (cursor = the last task id of the
//!   page), `tasks/cancel` (`-32602` for a terminal task: "Receivers MUST
//!   reject cancellation requests for tasks already in a terminal status …
//!   with error code `-32602`") and `tasks/result` (`request`), which blocks
//!   until the task ends. `tasks/result` is an ordinary request of the
//!   engine, so it is served on its own SSE stream, SEP-1699 polling may
//!   close its connection, and the client resumes it; on it go the task's
//!   input requests (as server-to-client requests with the
//!   `io.modelcontextprotocol/related-task` metadata), its progress and log
//!   messages and `notifications/tasks/status` at each status change.
//!
//! **Scope**: a task belongs to the session that created it; any other
//! session gets "not found" (`-32602`). When the session ends, its running
//! tasks are cancelled.
//!
//! What is process-local: the worker, its cancellation token, its
//! wake-ups and the session's list of the task ids created here (for the
//! per-session bound and for cancelling them when the session ends). The
//! task state is the [`TaskStore`]'s, and so is the per-session index
//! `tasks/list` reads (`TaskStore::list`): a task created through another
//! instance sharing the store is listed too.
//!
//! [`Handler::execution`]: mcp_transport_core::handler::Handler::execution

pub(crate) mod handler;
mod request;
pub mod wire;
mod worker;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::jsonrpc::Notification;
pub(crate) use mcp_transport_core::task_store::now_ms;
use mcp_transport_core::task_store::{InputWake, MemoryTaskStore, TaskStore};
use tokio::sync::broadcast;

/// Settings of 2025-11-25 tasks on a server.
#[derive(Clone)]
pub struct TasksConfig {
    /// Where task state lives. Default: a [`MemoryTaskStore`] with its
    /// default bounds (10 000 tasks, 64 MiB, TTL at most 24 h).
    pub store: Arc<dyn TaskStore>,
    /// The TTL used when the request asks none (`params.task.ttl`
    /// absent), in ms; `None` asks the store for unlimited. A requested
    /// TTL is passed on and the store may shorten it ("Receivers MAY
    /// override the requested `ttl` duration"). Default one hour.
    pub ttl_ms: Option<u64>,
    /// The `pollInterval` suggested to clients, and how often a waiting
    /// `tasks/result` re-reads the store. Default 500 ms.
    pub poll_interval_ms: u64,
    /// Tasks one session may hold (live or finished, until they expire);
    /// one more is `-32603` ("Enforce limits on concurrent tasks per
    /// requestor"). Default 256.
    pub max_tasks_per_session: usize,
    /// Tasks per `tasks/list` page. Default 50.
    pub list_page: usize,
    /// Rounds of client input one task may ask for. Default 8.
    pub max_input_rounds: u32,
    /// Liveness across instances sharing the store: the instance running
    /// a task's worker holds a lease on it, and a `tasks/get` or
    /// `tasks/result` on another instance fails a task whose worker's
    /// lease lapsed (`mcp_transport_core::task_store::liveness`). Default
    /// `None`: no lease, as in one process.
    pub leases: Option<mcp_transport_core::lease::Leases>,
}

impl Default for TasksConfig {
    fn default() -> Self {
        TasksConfig {
            store: Arc::new(MemoryTaskStore::default()),
            ttl_ms: Some(60 * 60 * 1000),
            poll_interval_ms: 500,
            max_tasks_per_session: 256,
            list_page: 50,
            max_input_rounds: 8,
            leases: None,
        }
    }
}

impl fmt::Debug for TasksConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TasksConfig")
            .field("ttl_ms", &self.ttl_ms)
            .field("poll_interval_ms", &self.poll_interval_ms)
            .field("max_tasks_per_session", &self.max_tasks_per_session)
            .field("list_page", &self.list_page)
            .field("max_input_rounds", &self.max_input_rounds)
            .finish_non_exhaustive()
    }
}

/// What a running task tells whoever waits on it (a `tasks/result`).
#[derive(Clone, Debug)]
pub(crate) enum Event {
    /// A related notification from the handler (progress, log).
    Notify(Notification),
    /// The task's status or message changed: re-read the store.
    Changed,
}

/// A running worker, as this process knows it.
#[derive(Clone)]
pub(crate) struct Running {
    pub cancel: CancellationToken,
    /// Woken when input is delivered into the task.
    pub wake: Arc<InputWake>,
    /// Bounded (64); a lagging waiter re-reads the store.
    pub events: broadcast::Sender<Event>,
}

/// The tasks state of one server: settings, running workers, and each
/// session's task ids (in creation order, for `tasks/list`).
pub struct Tasks {
    pub(crate) config: TasksConfig,
    running: Mutex<HashMap<String, Running>>,
    sessions: Mutex<HashMap<Arc<str>, VecDeque<String>>>,
}

impl fmt::Debug for Tasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tasks")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Tasks {
    /// The state for these settings.
    pub fn new(config: TasksConfig) -> Self {
        Tasks {
            config,
            running: Mutex::default(),
            sessions: Mutex::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &TasksConfig {
        &self.config
    }

    pub(crate) fn running(&self, id: &str) -> Option<Running> {
        lock(&self.running).get(id).cloned()
    }

    pub(crate) fn start_running(&self, id: &str) -> Running {
        let (events, _) = broadcast::channel(64);
        let r = Running {
            cancel: CancellationToken::new(),
            wake: Arc::new(InputWake::new()),
            events,
        };
        lock(&self.running).insert(id.to_owned(), r.clone());
        r
    }

    pub(crate) fn stop_running(&self, id: &str) {
        lock(&self.running).remove(id);
    }

    /// Tells waiters that the task changed.
    pub(crate) fn publish(&self, id: &str) {
        if let Some(r) = self.running(id) {
            let _ = r.events.send(Event::Changed);
        }
    }

    /// The session's task ids, oldest first.
    pub(crate) fn session_tasks(&self, session: &str) -> Vec<String> {
        lock(&self.sessions)
            .get(session)
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Records a new task of the session.
    pub(crate) fn add_to_session(&self, session: &Arc<str>, id: String) {
        lock(&self.sessions)
            .entry(session.clone())
            .or_default()
            .push_back(id);
    }

    /// Forgets the session's tasks that are gone from the store.
    pub(crate) fn forget(&self, session: &str, gone: &[String]) {
        if let Some(q) = lock(&self.sessions).get_mut(session) {
            q.retain(|id| !gone.contains(id));
        }
    }

    /// The session ended: its running tasks are cancelled (nobody can reach
    /// them any more) and its list dropped.
    pub(crate) fn end_session(&self, session: &str) {
        let ids = lock(&self.sessions).remove(session).unwrap_or_default();
        let running = lock(&self.running);
        for id in ids {
            if let Some(r) = running.get(&id) {
                r.cancel.cancel();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks() -> Tasks {
        Tasks::new(TasksConfig {
            max_tasks_per_session: 7,
            list_page: 3,
            ..TasksConfig::default()
        })
    }

    #[test]
    fn the_settings_are_kept_and_shown() {
        let t = tasks();
        assert_eq!(t.config().list_page, 3);
        let shown = format!("{t:?}");
        assert!(
            shown.contains("max_tasks_per_session: 7") && shown.contains("list_page: 3"),
            "{shown}"
        );
    }

    /// A worker is known from its start to its end, and only then; what
    /// it publishes reaches whoever follows it.
    #[tokio::test]
    async fn running_workers_are_tracked_and_heard() {
        let t = tasks();
        assert!(t.running("a").is_none());
        let r = t.start_running("a");
        let mut heard = r.events.subscribe();
        t.publish("a");
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), heard.recv()).await;
        assert!(matches!(got, Ok(Ok(Event::Changed))), "{got:?}");
        t.publish("unknown");
        assert!(t.running("a").is_some());
        t.stop_running("a");
        assert!(t.running("a").is_none(), "an ended worker is not kept");
    }

    #[test]
    fn a_session_forgets_only_the_tasks_gone_and_its_end_cancels_the_rest() {
        let t = tasks();
        let s: Arc<str> = Arc::from("s");
        for id in ["a", "b", "c"] {
            t.add_to_session(&s, id.to_owned());
        }
        t.forget("s", &["b".to_owned()]);
        assert_eq!(t.session_tasks("s"), ["a", "c"]);
        let a = t.start_running("a");
        let other = t.start_running("x");
        t.end_session("s");
        assert!(a.cancel.is_cancelled());
        assert!(!other.cancel.is_cancelled(), "another session's task");
        assert!(t.session_tasks("s").is_empty());
    }
}
