//! [`MemoryTaskStore`]: the bounded in-memory [`TaskStore`].

use std::collections::{BTreeMap, HashMap};

use rustc_hash::FxHashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::{
    Changed, NewTask, TaskChange, TaskPage, TaskRecord, TaskState, TaskStore, TaskStoreError,
};

/// Limits of a [`MemoryTaskStore`].
///
/// Nothing is evicted before its TTL (a task "MUST remain accessible … for
/// the duration of its `ttlMs`"): when a bound is reached the operation
/// that would pass it fails instead, and expired tasks are purged first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryTaskStoreConfig {
    /// Live tasks; creating one more is [`TaskStoreError::TooManyTasks`].
    /// Default 10 000.
    pub max_tasks: usize,
    /// Payload bytes one task may hold (result or error, input requests and
    /// responses, status message, the keys it used). Default 4 MiB.
    pub max_task_bytes: usize,
    /// Payload bytes of all tasks together. Default 64 MiB. Once it is
    /// reached a new task is [`TaskStoreError::Full`] (expired ones are
    /// purged first), and a change that would pass it is
    /// [`TaskStoreError::TooLarge`]; the total never passes it.
    pub max_total_bytes: usize,
    /// The longest TTL kept: a longer (or unlimited) request is shortened to
    /// it. `None` allows unlimited tasks, which only a count bound then
    /// limits. Default 24 h.
    pub max_ttl_ms: Option<u64>,
    /// Live tasks of one scope (one requestor) in the index
    /// [`TaskStore::list`] reads; creating one more is
    /// [`TaskStoreError::TooManyForScope`] (expired ones are dropped
    /// first). Tasks without a scope are not indexed. Default 10 000.
    pub max_tasks_per_scope: usize,
}

impl Default for MemoryTaskStoreConfig {
    fn default() -> Self {
        MemoryTaskStoreConfig {
            max_tasks: 10_000,
            max_task_bytes: 4 * 1024 * 1024,
            max_total_bytes: 64 * 1024 * 1024,
            max_ttl_ms: Some(24 * 60 * 60 * 1000),
            max_tasks_per_scope: 10_000,
        }
    }
}

#[derive(Debug)]
struct Entry {
    state: TaskState,
    /// Bytes counted against the bounds.
    bytes: usize,
    /// Creation order (the key of the scope's index).
    seq: u64,
}

#[derive(Debug, Default)]
struct Inner {
    /// Keyed by task ids the store minted (FxHash: no client chooses a
    /// key).
    tasks: FxHashMap<String, Entry>,
    total_bytes: usize,
    /// Each scope's tasks by creation order ([`TaskStore::list`]).
    scopes: HashMap<String, BTreeMap<u64, String>>,
    next_seq: u64,
}

impl Inner {
    /// Removes task `id` with its bytes and its index entry.
    fn remove(&mut self, id: &str) {
        let Some(e) = self.tasks.remove(id) else {
            return;
        };
        self.total_bytes -= e.bytes;
        if let Some(scope) = &e.state.record.scope
            && let Some(index) = self.scopes.get_mut(scope)
        {
            index.remove(&e.seq);
            if index.is_empty() {
                self.scopes.remove(scope);
            }
        }
    }

    /// Removes the scope's expired tasks.
    fn purge_scope(&mut self, scope: &str, now_ms: u64) {
        let expired: Vec<String> = self
            .scopes
            .get(scope)
            .into_iter()
            .flat_map(|index| index.values())
            .filter(|id| {
                self.tasks
                    .get(*id)
                    .is_some_and(|e| e.state.record.is_expired(now_ms))
            })
            .cloned()
            .collect();
        for id in expired {
            self.remove(&id);
        }
    }
}

/// The in-memory [`TaskStore`], bounded by a [`MemoryTaskStoreConfig`].
/// One mutex, held for one operation; no method awaits.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    config: MemoryTaskStoreConfig,
    inner: Mutex<Inner>,
}

impl MemoryTaskStore {
    /// A store with these limits.
    pub fn new(config: MemoryTaskStoreConfig) -> Self {
        MemoryTaskStore {
            config,
            inner: Mutex::default(),
        }
    }

    /// The limits.
    pub fn config(&self) -> &MemoryTaskStoreConfig {
        &self.config
    }

    /// Live (stored, possibly expired but not yet purged) tasks.
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
    }

    /// Whether no task is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Payload bytes held by all tasks.
    pub fn total_bytes(&self) -> usize {
        self.lock().total_bytes
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `change` on the task `id` visible to `scope` (`None` scope
    /// check: the worker's own calls), then re-checks the byte bounds; a
    /// change that breaks them is undone and reported.
    fn modify<T>(
        &self,
        id: &str,
        scope: Option<Option<&str>>,
        now_ms: u64,
        change: impl FnOnce(&mut TaskState) -> Result<T, TaskStoreError>,
    ) -> Result<T, TaskStoreError> {
        let mut inner = self.lock();
        let inner = &mut *inner;
        let Some(entry) = inner.tasks.get_mut(id) else {
            return Err(TaskStoreError::NotFound { id: id.to_owned() });
        };
        if let Some(scope) = scope
            && !entry.state.record.visible_to(scope)
        {
            return Err(TaskStoreError::NotFound { id: id.to_owned() });
        }
        if entry.state.record.is_expired(now_ms) {
            inner.remove(id);
            return Err(TaskStoreError::Expired { id: id.to_owned() });
        }
        let before = entry.state.clone();
        let out = change(&mut entry.state)?;
        let size = entry.state.measure();
        let total = inner.total_bytes - entry.bytes + size;
        // Creation keeps the total within its bound (`has_room`), so only
        // a change that grows a task can pass it: one that does not always
        // fits (a task can always end).
        let limit = if size > self.config.max_task_bytes {
            Some(self.config.max_task_bytes)
        } else if total > self.config.max_total_bytes {
            Some(self.config.max_total_bytes)
        } else {
            None
        };
        if let Some(max) = limit {
            entry.state = before;
            return Err(TaskStoreError::TooLarge {
                size: if max == self.config.max_task_bytes {
                    size
                } else {
                    total
                },
                max,
            });
        }
        entry.bytes = size;
        inner.total_bytes = total;
        Ok(out)
    }

    /// Whether a new task of `bytes` fits the total bound: the total is not
    /// reached yet, and the task does not take it past the bound.
    fn has_room(&self, inner: &Inner, bytes: usize) -> bool {
        let max = self.config.max_total_bytes;
        inner.total_bytes < max && inner.total_bytes + bytes <= max
    }

    fn purge(inner: &mut Inner, now_ms: u64) -> usize {
        let expired: Vec<String> = inner
            .tasks
            .iter()
            .filter(|(_, e)| e.state.record.is_expired(now_ms))
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            inner.remove(id);
        }
        expired.len()
    }
}

#[async_trait::async_trait]
impl TaskStore for MemoryTaskStore {
    async fn create(&self, task: NewTask, now_ms: u64) -> Result<TaskRecord, TaskStoreError> {
        let state = TaskState::new(task, now_ms, self.config.max_ttl_ms);
        let record = state.record.clone();
        let mut inner = self.lock();
        if inner.tasks.contains_key(&record.id) {
            return Err(TaskStoreError::Exists { id: record.id });
        }
        if inner.tasks.len() >= self.config.max_tasks {
            Self::purge(&mut inner, now_ms);
            if inner.tasks.len() >= self.config.max_tasks {
                return Err(TaskStoreError::TooManyTasks {
                    max: self.config.max_tasks,
                });
            }
        }
        let bytes = state.measure();
        if bytes > self.config.max_task_bytes {
            return Err(TaskStoreError::TooLarge {
                size: bytes,
                max: self.config.max_task_bytes,
            });
        }
        if !self.has_room(&inner, bytes) {
            Self::purge(&mut inner, now_ms);
            if !self.has_room(&inner, bytes) {
                return Err(TaskStoreError::Full {
                    max: self.config.max_total_bytes,
                });
            }
        }
        if let Some(scope) = &record.scope {
            let max = self.config.max_tasks_per_scope;
            if inner.scopes.get(scope).map_or(0, BTreeMap::len) >= max {
                inner.purge_scope(scope, now_ms);
                if inner.scopes.get(scope).map_or(0, BTreeMap::len) >= max {
                    return Err(TaskStoreError::TooManyForScope { max });
                }
            }
        }
        let seq = inner.next_seq;
        inner.next_seq += 1;
        if let Some(scope) = &record.scope {
            inner
                .scopes
                .entry(scope.clone())
                .or_default()
                .insert(seq, record.id.clone());
        }
        inner.total_bytes += bytes;
        inner
            .tasks
            .insert(record.id.clone(), Entry { state, bytes, seq });
        Ok(record)
    }

    async fn get(
        &self,
        id: &str,
        scope: Option<&str>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        let mut inner = self.lock();
        let inner = &mut *inner;
        match inner.tasks.get(id) {
            Some(e) if e.state.record.visible_to(scope) => {
                if !e.state.record.is_expired(now_ms) {
                    return Ok(e.state.record.clone());
                }
                inner.remove(id);
                Err(TaskStoreError::Expired { id: id.to_owned() })
            }
            _ => Err(TaskStoreError::NotFound { id: id.to_owned() }),
        }
    }

    async fn change(
        &self,
        id: &str,
        change: TaskChange<'_>,
        now_ms: u64,
    ) -> Result<Changed, TaskStoreError> {
        self.modify(id, change.scope(), now_ms, |t| change.apply(t, now_ms))
    }

    async fn purge_expired(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
        Ok(Self::purge(&mut self.lock(), now_ms))
    }

    async fn list(
        &self,
        scope: &str,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> Result<TaskPage, TaskStoreError> {
        let mut inner = self.lock();
        let inner = &mut *inner;
        inner.purge_scope(scope, now_ms);
        let Some(index) = inner.scopes.get(scope) else {
            return match cursor {
                None => Ok(TaskPage::default()),
                Some(c) => Err(TaskStoreError::UnknownCursor {
                    cursor: c.to_owned(),
                }),
            };
        };
        let from = match cursor {
            None => 0,
            Some(c) => match inner.tasks.get(c) {
                Some(e) if e.state.record.scope.as_deref() == Some(scope) => e.seq + 1,
                _ => {
                    return Err(TaskStoreError::UnknownCursor {
                        cursor: c.to_owned(),
                    });
                }
            },
        };
        let limit = limit.max(1);
        let mut ids = index.range(from..).map(|(_, id)| id);
        let tasks: Vec<TaskRecord> = ids
            .by_ref()
            .take(limit)
            .filter_map(|id| inner.tasks.get(id).map(|e| e.state.record.clone()))
            .collect();
        let next_cursor = match ids.next() {
            Some(_) => tasks.last().map(|t| t.id.clone()),
            None => None,
        };
        Ok(TaskPage { tasks, next_cursor })
    }
}
