//! [`TaskState`]: a task's record and the input keys it has used, with the
//! transitions every [`TaskStore`](super::TaskStore) applies — written once
//! so a store only decides where the state lives and how a change is made
//! atomic (a mutex in [`MemoryTaskStore`](super::MemoryTaskStore), a
//! compare-and-set in a shared store), never what a change does.
//!
//! The rules (2026-07-28 Tasks extension, *Task Lifecycle*; 2025-11-25
//! *Tasks*): a terminal status is final (the first terminal transition
//! wins); input request keys are unique for the task's life; responses to
//! keys that are not outstanding are ignored; a terminal transition drops
//! the outstanding requests and undelivered responses.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::value::RawValue;

use super::{NewTask, TaskRecord, TaskStatus, TaskStoreError, Terminal};

/// Input requests or responses by key.
pub type InputMap = BTreeMap<String, Box<RawValue>>;

/// What a store keeps per task.
#[derive(Clone, Debug)]
pub struct TaskState {
    /// The task as `tasks/get` shows it.
    pub record: TaskRecord,
    /// Every input request key issued so far (unique over the task's life).
    pub used_keys: BTreeSet<String>,
}

impl TaskState {
    /// A new `working` task created at `now_ms`; its TTL is the requested
    /// one capped at `max_ttl_ms` (receivers may shorten it), or
    /// `max_ttl_ms` when none was asked.
    pub fn new(task: NewTask, now_ms: u64, max_ttl_ms: Option<u64>) -> Self {
        let ttl_ms = match (task.ttl_ms, max_ttl_ms) {
            (Some(t), Some(max)) => Some(t.min(max)),
            (None, max) => max,
            (Some(t), None) => Some(t),
        };
        TaskState {
            record: TaskRecord {
                id: task.id,
                scope: task.scope,
                status: TaskStatus::Working,
                status_message: task.status_message,
                created_at_ms: now_ms,
                last_updated_at_ms: now_ms,
                ttl_ms,
                poll_interval_ms: task.poll_interval_ms,
                input_requests: BTreeMap::new(),
                input_responses: BTreeMap::new(),
                result: None,
                error: None,
            },
            used_keys: BTreeSet::new(),
        }
    }

    /// The bytes a store's bounds count: the record's payload and the used
    /// keys.
    pub fn measure(&self) -> usize {
        self.record.payload_bytes() + self.used_keys.iter().map(String::len).sum::<usize>()
    }

    fn unless_terminal(&self) -> Result<(), TaskStoreError> {
        if self.record.status.is_terminal() {
            return Err(TaskStoreError::Terminal {
                id: self.record.id.clone(),
                status: self.record.status,
            });
        }
        Ok(())
    }

    /// `input_required` with these requests added; a key used before in
    /// this task is refused. No requests: unchanged.
    pub fn require_input(
        &mut self,
        requests: &InputMap,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.unless_terminal()?;
        if let Some(key) = requests.keys().find(|k| self.used_keys.contains(*k)) {
            return Err(TaskStoreError::KeyReused {
                id: self.record.id.clone(),
                key: key.clone(),
            });
        }
        if requests.is_empty() {
            return Ok(self.record.clone());
        }
        self.used_keys.extend(requests.keys().cloned());
        let r = &mut self.record;
        r.input_requests
            .extend(requests.iter().map(|(k, v)| (k.clone(), v.clone())));
        r.status = TaskStatus::InputRequired;
        r.last_updated_at_ms = now_ms;
        Ok(r.clone())
    }

    /// Takes the responses to outstanding requests (others are ignored);
    /// `working` again once none is outstanding. A terminal task is left
    /// as it is.
    pub fn deliver_input(&mut self, responses: &InputMap, now_ms: u64) -> TaskRecord {
        let r = &mut self.record;
        if r.status.is_terminal() {
            return r.clone();
        }
        let mut changed = false;
        for (key, value) in responses {
            if r.input_requests.remove(key).is_some() {
                r.input_responses.insert(key.clone(), value.clone());
                changed = true;
            }
        }
        if changed {
            if r.input_requests.is_empty() {
                r.status = TaskStatus::Working;
            }
            r.last_updated_at_ms = now_ms;
        }
        r.clone()
    }

    /// The responses delivered so far, handed over once.
    pub fn take_input(&mut self) -> InputMap {
        std::mem::take(&mut self.record.input_responses)
    }

    /// A new status message (a non-terminal task only).
    pub fn set_message(
        &mut self,
        message: &Option<String>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.unless_terminal()?;
        if self.record.status_message != *message {
            self.record.status_message.clone_from(message);
            self.record.last_updated_at_ms = now_ms;
        }
        Ok(self.record.clone())
    }

    /// The terminal transition; refused when the task has already ended
    /// (the first terminal transition wins).
    pub fn finish(
        &mut self,
        terminal: &Terminal,
        message: &Option<String>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.unless_terminal()?;
        let r = &mut self.record;
        r.status = terminal.status();
        match terminal {
            Terminal::Completed(result) => r.result = Some(result.clone()),
            Terminal::Failed(error) => r.error = Some(error.clone()),
            Terminal::Cancelled => {}
        }
        r.input_requests.clear();
        r.input_responses.clear();
        r.status_message.clone_from(message);
        r.last_updated_at_ms = now_ms;
        Ok(r.clone())
    }

    /// `cancelled` at the client's request; a task that has already ended
    /// stays as it is (cancellation is cooperative and eventually
    /// consistent: the caller sees the status it got).
    pub fn cancel(&mut self, now_ms: u64) -> TaskRecord {
        let r = &mut self.record;
        if !r.status.is_terminal() {
            r.status = TaskStatus::Cancelled;
            r.input_requests.clear();
            r.input_responses.clear();
            r.status_message = Some("cancelled at the client's request".to_owned());
            r.last_updated_at_ms = now_ms;
        }
        r.clone()
    }
}

/// One of [`TaskStore`](super::TaskStore)'s writing operations as data:
/// what [`TaskStore::change`](super::TaskStore::change), a store's one
/// atomic read-modify-write, applies to a task. The operations
/// themselves ([`require_input`](super::TaskStore::require_input),
/// [`cancel`](super::TaskStore::cancel), …) are the trait's provided
/// methods, each naming its change, so what a change does and whose scope
/// it checks are decided here once, for every store.
#[derive(Debug)]
pub enum TaskChange<'a> {
    /// The worker asks for input ([`TaskState::require_input`]).
    RequireInput(InputMap),
    /// The client answers (`tasks/update`, [`TaskState::deliver_input`]).
    DeliverInput {
        /// The caller's scope: the task must be visible to it.
        scope: Option<&'a str>,
        /// Responses by input request key.
        responses: InputMap,
    },
    /// The worker takes the responses delivered so far
    /// ([`TaskState::take_input`]).
    TakeInput,
    /// The worker sets the status message ([`TaskState::set_message`]).
    SetMessage(Option<String>),
    /// The worker ends the task ([`TaskState::finish`]).
    Finish {
        /// How it ended.
        terminal: Terminal,
        /// The final status message.
        message: Option<String>,
    },
    /// The client cancels (`tasks/cancel`, [`TaskState::cancel`]).
    Cancel {
        /// The caller's scope: the task must be visible to it.
        scope: Option<&'a str>,
    },
}

/// What a [`TaskChange`] gives back: the task as changed, or, for
/// [`TaskChange::TakeInput`], the responses taken.
#[derive(Debug)]
pub enum Changed {
    /// The task after the change.
    Record(TaskRecord),
    /// The responses [`TaskChange::TakeInput`] took.
    Input(InputMap),
}

impl TaskChange<'_> {
    /// The scope the task must be visible to for the change to apply:
    /// `Some` for a client's change (`tasks/update`, `tasks/cancel`; a
    /// task invisible to it is [`TaskStoreError::NotFound`]), `None` for
    /// the worker's own, made without a scope check.
    pub fn scope(&self) -> Option<Option<&str>> {
        match self {
            TaskChange::DeliverInput { scope, .. } | TaskChange::Cancel { scope } => Some(*scope),
            _ => None,
        }
    }

    /// Applies the change to `state` at `now_ms`. Takes `&self`, so a
    /// store that loses a race may apply the same change again to a fresh
    /// read. The byte bounds are the store's to check afterwards.
    ///
    /// # Errors
    ///
    /// The transition's: [`TaskStoreError::Terminal`],
    /// [`TaskStoreError::KeyReused`].
    pub fn apply(&self, state: &mut TaskState, now_ms: u64) -> Result<Changed, TaskStoreError> {
        Ok(match self {
            TaskChange::RequireInput(requests) => {
                Changed::Record(state.require_input(requests, now_ms)?)
            }
            TaskChange::DeliverInput { responses, .. } => {
                Changed::Record(state.deliver_input(responses, now_ms))
            }
            TaskChange::TakeInput => Changed::Input(state.take_input()),
            TaskChange::SetMessage(message) => Changed::Record(state.set_message(message, now_ms)?),
            TaskChange::Finish { terminal, message } => {
                Changed::Record(state.finish(terminal, message, now_ms)?)
            }
            TaskChange::Cancel { .. } => Changed::Record(state.cancel(now_ms)),
        })
    }
}

impl Changed {
    /// The task, for every change but [`TaskChange::TakeInput`].
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::Backend`] when it holds responses instead: a
    /// store that answered a change with what another change gives.
    pub fn into_record(self) -> Result<TaskRecord, TaskStoreError> {
        match self {
            Changed::Record(r) => Ok(r),
            Changed::Input(_) => Err(mismatch("a task", "input responses")),
        }
    }

    /// The responses, for [`TaskChange::TakeInput`].
    ///
    /// # Errors
    ///
    /// [`TaskStoreError::Backend`] when it holds a task instead.
    pub fn into_input(self) -> Result<InputMap, TaskStoreError> {
        match self {
            Changed::Input(m) => Ok(m),
            Changed::Record(_) => Err(mismatch("input responses", "a task")),
        }
    }
}

fn mismatch(wanted: &str, got: &str) -> TaskStoreError {
    TaskStoreError::Backend(
        format!("the task store answered a change with {got}, not {wanted}").into(),
    )
}

/// A key for an input request named `key` that `used` does not hold yet
/// (`key`, else `key#2`, `key#3`, …), recorded in `used`: a worker names
/// its input requests with this so keys stay unique for the task's life,
/// which [`TaskState::require_input`] enforces.
pub fn unique_input_key(key: &str, used: &mut std::collections::HashSet<String>) -> String {
    let mut candidate = key.to_owned();
    let mut n = 1u32;
    while used.contains(&candidate) {
        n += 1;
        candidate = format!("{key}#{n}");
    }
    used.insert(candidate.clone());
    candidate
}

#[cfg(test)]
mod tests {
    use super::{Changed, InputMap, TaskStoreError, unique_input_key};

    #[test]
    fn a_change_answered_with_the_wrong_kind_is_a_backend_error() {
        let taken = Changed::Input(InputMap::new());
        let err = taken.into_record().unwrap_err();
        assert!(
            matches!(&err, TaskStoreError::Backend(e)
                if e.to_string().contains("with input responses, not a task")),
            "{err:?}"
        );
        let state = super::TaskState::new(
            super::NewTask {
                id: "t".into(),
                scope: None,
                ttl_ms: None,
                poll_interval_ms: None,
                status_message: None,
            },
            0,
            None,
        );
        let err = Changed::Record(state.record.clone())
            .into_input()
            .unwrap_err();
        assert!(
            matches!(&err, TaskStoreError::Backend(e)
                if e.to_string().contains("with a task, not input responses")),
            "{err:?}"
        );
        assert_eq!(Changed::Record(state.record).into_record().unwrap().id, "t");
        assert!(
            Changed::Input(InputMap::new())
                .into_input()
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn input_keys_stay_unique_for_the_tasks_life() {
        let mut used = std::collections::HashSet::new();
        assert_eq!(unique_input_key("ask", &mut used), "ask");
        assert_eq!(unique_input_key("ask", &mut used), "ask#2");
        assert_eq!(unique_input_key("ask", &mut used), "ask#3");
        assert_eq!(unique_input_key("other", &mut used), "other");
        assert_eq!(used.len(), 4);
    }
}
