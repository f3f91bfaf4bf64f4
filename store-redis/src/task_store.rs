//! [`RedisTaskStore`]: the `TaskStore` in Redis.
//!
//! A task is one hash, `PREFIX:task:{ID}` (the id as a Redis Cluster hash
//! tag): its record as JSON and a version number. A change reads the
//! record, applies the transition in Rust (`TaskState`, the one written
//! in transport-core that `MemoryTaskStore` applies too), and writes it back with a
//! compare-and-set script that also keeps the bounds (bytes per task, bytes
//! and tasks in total); a lost race is retried. The key lives until the
//! task's TTL has passed plus [`EXPIRED_GRACE`] (so a late `tasks/get` hears
//! "expired" before "not found"); an unlimited task's key has no TTL.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;
use std::time::Duration;

use mcp_transport_core::task_store::{
    InputMap, MemoryTaskStoreConfig, NewTask, TaskRecord, TaskState, TaskStatus, TaskStore,
    TaskStoreError, Terminal,
};
use redis::Value;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::connection::RedisConnection;
use crate::error::RedisStoreError;

static SCRIPT: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("task_store.lua")));

/// How long an expired task's key outlives its TTL, so that it is reported
/// `Expired` rather than `NotFound` for a while.
pub const EXPIRED_GRACE: Duration = Duration::from_secs(60);

/// How many times a change is retried after losing a race.
const CAS_ATTEMPTS: usize = 32;

/// A task as stored: the record and every input key it ever used.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Stored {
    id: String,
    scope: Option<String>,
    status: TaskStatus,
    status_message: Option<String>,
    created_at_ms: u64,
    last_updated_at_ms: u64,
    ttl_ms: Option<u64>,
    poll_interval_ms: Option<u64>,
    input_requests: BTreeMap<String, Box<RawValue>>,
    input_responses: BTreeMap<String, Box<RawValue>>,
    result: Option<Box<RawValue>>,
    error: Option<Box<RawValue>>,
    used_keys: BTreeSet<String>,
}

impl Stored {
    fn from_record(r: TaskRecord, used_keys: BTreeSet<String>) -> Stored {
        Stored {
            id: r.id,
            scope: r.scope,
            status: r.status,
            status_message: r.status_message,
            created_at_ms: r.created_at_ms,
            last_updated_at_ms: r.last_updated_at_ms,
            ttl_ms: r.ttl_ms,
            poll_interval_ms: r.poll_interval_ms,
            input_requests: r.input_requests,
            input_responses: r.input_responses,
            result: r.result,
            error: r.error,
            used_keys,
        }
    }

    fn split(self) -> (TaskRecord, BTreeSet<String>) {
        (
            TaskRecord {
                id: self.id,
                scope: self.scope,
                status: self.status,
                status_message: self.status_message,
                created_at_ms: self.created_at_ms,
                last_updated_at_ms: self.last_updated_at_ms,
                ttl_ms: self.ttl_ms,
                poll_interval_ms: self.poll_interval_ms,
                input_requests: self.input_requests,
                input_responses: self.input_responses,
                result: self.result,
                error: self.error,
            },
            self.used_keys,
        )
    }
}

/// What one task key holds.
type Entry = TaskState;

/// The `TaskStore` in Redis, bounded by a [`MemoryTaskStoreConfig`] (the
/// same limits with the same meaning): a task created on one instance is
/// polled, fed input and cancelled through any other.
#[derive(Clone, Debug)]
pub struct RedisTaskStore {
    conn: RedisConnection,
    config: MemoryTaskStoreConfig,
}

fn backend(e: RedisStoreError) -> TaskStoreError {
    TaskStoreError::Backend(Box::new(e))
}

fn bad(what: String) -> TaskStoreError {
    backend(RedisStoreError::Protocol(what))
}

fn int(v: Option<&Value>) -> Result<usize, TaskStoreError> {
    match v {
        Some(Value::Int(n)) => usize::try_from(*n).map_err(|_| bad(format!("negative {n}"))),
        other => Err(bad(format!("expected an integer, got {other:?}"))),
    }
}

impl RedisTaskStore {
    /// A store over `conn` with these limits.
    pub fn new(conn: RedisConnection, config: MemoryTaskStoreConfig) -> Self {
        RedisTaskStore { conn, config }
    }

    /// The limits.
    pub fn config(&self) -> &MemoryTaskStoreConfig {
        &self.config
    }

    fn task_key(&self, id: &str) -> String {
        format!("{}:task:{{{id}}}", self.conn.prefix)
    }

    async fn call(
        &self,
        op: &str,
        id: &str,
        args: &[String],
    ) -> Result<(String, Vec<Value>), TaskStoreError> {
        let p = &self.conn.prefix;
        let mut inv = SCRIPT.prepare_invoke();
        inv.key(self.task_key(id))
            .key(format!("{p}:tasks"))
            .key(format!("{p}:tbytes"))
            .key(format!("{p}:tasks:bytes"))
            .arg(p.as_str())
            .arg(op)
            .arg(id);
        for a in args {
            inv.arg(a.as_str());
        }
        let mut m = self.conn.manager.clone();
        let value: Vec<Value> = inv
            .invoke_async(&mut m)
            .await
            .map_err(|e| backend(e.into()))?;
        let mut it = value.into_iter();
        let status = match it.next() {
            Some(Value::BulkString(s)) => String::from_utf8_lossy(&s).into_owned(),
            other => return Err(bad(format!("expected a status, got {other:?}"))),
        };
        Ok((status, it.collect()))
    }

    /// Reads the task: its version and contents, `None` when absent.
    async fn read(&self, id: &str) -> Result<Option<(String, Entry)>, TaskStoreError> {
        let mut m = self.conn.manager.clone();
        let (v, j): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(self.task_key(id))
            .arg("v")
            .arg("j")
            .query_async(&mut m)
            .await
            .map_err(|e| backend(e.into()))?;
        let (Some(v), Some(j)) = (v, j) else {
            return Ok(None);
        };
        let stored: Stored =
            serde_json::from_str(&j).map_err(|e| backend(RedisStoreError::Corrupt(e)))?;
        let (record, used_keys) = stored.split();
        Ok(Some((v, Entry { record, used_keys })))
    }

    /// The key's lifetime in ms from `now_ms` (0: none).
    fn pexpire(record: &TaskRecord, now_ms: u64) -> u64 {
        let grace = u64::try_from(EXPIRED_GRACE.as_millis()).unwrap_or(u64::MAX);
        record
            .expires_at_ms()
            .map_or(0, |e| e.saturating_sub(now_ms).saturating_add(grace).max(1))
    }

    /// Reads the task visible to `scope` (`None`: the worker's own calls,
    /// no check), reporting and dropping it when it has expired.
    async fn visible(
        &self,
        id: &str,
        scope: Option<Option<&str>>,
        now_ms: u64,
    ) -> Result<(String, Entry), TaskStoreError> {
        let not_found = || TaskStoreError::NotFound { id: id.to_owned() };
        let (v, entry) = self.read(id).await?.ok_or_else(not_found)?;
        if let Some(scope) = scope
            && !entry.record.visible_to(scope)
        {
            return Err(not_found());
        }
        if entry.record.is_expired(now_ms) {
            self.call("remove", id, &[]).await?;
            return Err(TaskStoreError::Expired { id: id.to_owned() });
        }
        Ok((v, entry))
    }

    /// Applies `change` to the task and writes it back atomically, within
    /// the byte bounds; retried when another writer got there first.
    async fn modify<T>(
        &self,
        id: &str,
        scope: Option<Option<&str>>,
        now_ms: u64,
        change: impl Fn(&mut Entry) -> Result<T, TaskStoreError>,
    ) -> Result<T, TaskStoreError> {
        for _ in 0..CAS_ATTEMPTS {
            let (version, mut entry) = self.visible(id, scope, now_ms).await?;
            let out = change(&mut entry)?;
            let size = entry.measure();
            let pexpire = Self::pexpire(&entry.record, now_ms);
            let json = serde_json::to_string(&Stored::from_record(entry.record, entry.used_keys))
                .map_err(|e| backend(RedisStoreError::Corrupt(e)))?;
            let (status, rest) = self
                .call(
                    "cas",
                    id,
                    &[
                        version,
                        json,
                        size.to_string(),
                        self.config.max_task_bytes.to_string(),
                        self.config.max_total_bytes.to_string(),
                        pexpire.to_string(),
                    ],
                )
                .await?;
            match status.as_str() {
                "ok" => return Ok(out),
                "retry" => continue,
                "gone" => return Err(TaskStoreError::NotFound { id: id.to_owned() }),
                "too_large" => {
                    return Err(TaskStoreError::TooLarge {
                        size: int(rest.first())?,
                        max: int(rest.get(1))?,
                    });
                }
                other => return Err(bad(format!("unexpected status {other}"))),
            }
        }
        Err(backend(RedisStoreError::Contention(format!("task {id}"))))
    }
}

#[async_trait::async_trait]
impl TaskStore for RedisTaskStore {
    async fn create(&self, task: NewTask, now_ms: u64) -> Result<TaskRecord, TaskStoreError> {
        let entry = TaskState::new(task, now_ms, self.config.max_ttl_ms);
        let bytes = entry.measure();
        if bytes > self.config.max_task_bytes {
            return Err(TaskStoreError::TooLarge {
                size: bytes,
                max: self.config.max_task_bytes,
            });
        }
        let record = entry.record;
        let expires = record
            .expires_at_ms()
            .map_or_else(|| "+inf".to_owned(), |e| e.to_string());
        let pexpire = Self::pexpire(&record, now_ms);
        let json = serde_json::to_string(&Stored::from_record(record.clone(), BTreeSet::new()))
            .map_err(|e| backend(RedisStoreError::Corrupt(e)))?;
        let (status, _) = self
            .call(
                "create",
                &record.id,
                &[
                    json,
                    bytes.to_string(),
                    self.config.max_tasks.to_string(),
                    expires,
                    now_ms.to_string(),
                    pexpire.to_string(),
                ],
            )
            .await?;
        match status.as_str() {
            "ok" => Ok(record),
            "exists" => Err(TaskStoreError::Exists { id: record.id }),
            "too_many_tasks" => Err(TaskStoreError::TooManyTasks {
                max: self.config.max_tasks,
            }),
            other => Err(bad(format!("unexpected status {other}"))),
        }
    }

    async fn get(
        &self,
        id: &str,
        scope: Option<&str>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        Ok(self.visible(id, Some(scope), now_ms).await?.1.record)
    }

    async fn require_input(
        &self,
        id: &str,
        requests: InputMap,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.modify(id, None, now_ms, |t| t.require_input(&requests, now_ms))
            .await
    }

    async fn deliver_input(
        &self,
        id: &str,
        scope: Option<&str>,
        responses: InputMap,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.modify(id, Some(scope), now_ms, |t| {
            Ok(t.deliver_input(&responses, now_ms))
        })
        .await
    }

    async fn take_input(&self, id: &str, now_ms: u64) -> Result<InputMap, TaskStoreError> {
        self.modify(id, None, now_ms, |t| Ok(t.take_input())).await
    }

    async fn set_message(
        &self,
        id: &str,
        message: Option<String>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.modify(id, None, now_ms, |t| t.set_message(&message, now_ms))
            .await
    }

    async fn finish(
        &self,
        id: &str,
        terminal: Terminal,
        message: Option<String>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.modify(id, None, now_ms, |t| t.finish(&terminal, &message, now_ms))
            .await
    }

    async fn cancel(
        &self,
        id: &str,
        scope: Option<&str>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.modify(id, Some(scope), now_ms, |t| Ok(t.cancel(now_ms)))
            .await
    }

    async fn purge_expired(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
        let (status, rest) = self.call("purge", "", &[now_ms.to_string()]).await?;
        if status != "ok" {
            return Err(bad(format!("unexpected status {status}")));
        }
        int(rest.first())
    }
}
