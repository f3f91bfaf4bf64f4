//! [`RedisTaskStore`]: the `TaskStore` in Redis.
//!
//! A task is one hash, `PREFIX:task:{ID}` (the id as a Redis Cluster hash
//! tag): its record as JSON and a version number. A change reads the
//! record, applies the transition in Rust (`TaskState`, the one written
//! in transport-core that `MemoryTaskStore` applies too), and writes it back with a
//! compare-and-set script that also keeps the bounds (bytes per task, bytes
//! and tasks in total; as in `MemoryTaskStore`, a new task is refused once
//! the total is reached, `TaskStoreError::Full`); a lost race is retried.
//! The key lives until the
//! task's TTL has passed plus [`EXPIRED_GRACE`] (so a late `tasks/get` hears
//! "expired" before "not found"); an unlimited task's key has no TTL.
//!
//! A task created with a scope (the requestor) is also entered in the
//! scope's index for [`TaskStore::list`]: two sorted sets under the
//! scope's hash tag, `PREFIX:tasks:{SCOPE}:idx` (id → creation order) and
//! `PREFIX:tasks:{SCOPE}:exp` (id → expiry), bounded by
//! `max_tasks_per_scope`, expired entries dropped on every call, the keys
//! living as long as the longest-lived task in them. The index is written
//! by its own call before the task's (they are in different hash slots):
//! an instance dying between the two leaves an entry whose task does not
//! exist, which the next listing drops.
//!
//! On [`Layout::Cluster`] every call touches one hash slot: the task's
//! key, or the scope's index. The count and total-bytes bounds
//! (`max_tasks`, `max_total_bytes`) are not kept (Redis's `maxmemory` with
//! a `volatile-*` policy is the store-wide bound), the per-task and
//! per-scope bounds are; an unlimited TTL is shortened to 24 h when
//! `max_ttl_ms` is `None`, so every key can expire; and
//! [`TaskStore::purge_expired`] returns 0 (Redis expires the keys).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;
use std::time::Duration;

use mcp_transport_core::task_store::{
    Changed, MemoryTaskStoreConfig, NewTask, TaskChange, TaskPage, TaskRecord, TaskState,
    TaskStatus, TaskStore, TaskStoreError,
};
use redis::Value;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::connection::{Layout, RedisConnection};
use crate::error::RedisStoreError;

static SCRIPT: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("task_store.lua")));

static INDEX: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("task_index.lua")));

/// The TTL cap of tasks on [`Layout::Cluster`] when the configuration has
/// none (every key there must be able to expire).
pub const CLUSTER_MAX_TTL_MS: u64 = 24 * 60 * 60 * 1000;

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
    /// A store over `conn` with these limits. On [`Layout::Cluster`],
    /// `max_tasks` and `max_total_bytes` are not kept and a `max_ttl_ms`
    /// of `None` becomes [`CLUSTER_MAX_TTL_MS`] (see the module
    /// documentation).
    pub fn new(conn: RedisConnection, mut config: MemoryTaskStoreConfig) -> Self {
        if conn.layout() == Layout::Cluster && config.max_ttl_ms.is_none() {
            config.max_ttl_ms = Some(CLUSTER_MAX_TTL_MS);
        }
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
        inv.key(self.task_key(id));
        if self.conn.layout() == Layout::Single {
            inv.key(format!("{p}:tasks"))
                .key(format!("{p}:tbytes"))
                .key(format!("{p}:tasks:bytes"));
        }
        inv.arg(p.as_str()).arg(op).arg(id);
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

    /// Runs one operation of the scope index script.
    async fn index(
        &self,
        op: &str,
        scope: &str,
        args: &[String],
    ) -> Result<Vec<Value>, TaskStoreError> {
        let p = &self.conn.prefix;
        let mut inv = INDEX.prepare_invoke();
        inv.key(format!("{p}:tasks:{{{scope}}}:idx"))
            .key(format!("{p}:tasks:{{{scope}}}:exp"))
            .arg(op);
        for a in args {
            inv.arg(a.as_str());
        }
        let mut m = self.conn.manager.clone();
        inv.invoke_async(&mut m)
            .await
            .map_err(|e| backend(e.into()))
    }

    /// Drops `id` from the scope's index.
    async fn unindex(&self, scope: &str, id: &str) -> Result<(), TaskStoreError> {
        self.index("remove", scope, &[id.to_owned()])
            .await
            .map(drop)
    }

    /// Up to `count` ids of the scope's index after `cursor`; `None` when
    /// the cursor is not in the index.
    async fn index_page(
        &self,
        scope: &str,
        cursor: Option<&str>,
        count: usize,
        now_ms: u64,
    ) -> Result<Option<Vec<String>>, TaskStoreError> {
        let reply = self
            .index(
                "page",
                scope,
                &[
                    cursor.map_or_else(String::new, |c| format!(">{c}")),
                    count.to_string(),
                    now_ms.to_string(),
                ],
            )
            .await?;
        let mut it = reply.into_iter().map(|v| match v {
            Value::BulkString(s) => Ok(String::from_utf8_lossy(&s).into_owned()),
            other => Err(bad(format!("expected an id, got {other:?}"))),
        });
        match it.next().transpose()?.as_deref() {
            Some("ok") => Ok(Some(it.collect::<Result<_, _>>()?)),
            Some("unknown_cursor") => Ok(None),
            other => Err(bad(format!("unexpected index status {other:?}"))),
        }
    }

    /// The `create` script: stores the task within the bounds.
    async fn create_task(
        &self,
        record: &TaskRecord,
        json: String,
        bytes: usize,
        expires: String,
        now_ms: u64,
        pexpire: u64,
    ) -> Result<(), TaskStoreError> {
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
                    self.config.max_total_bytes.to_string(),
                ],
            )
            .await?;
        match status.as_str() {
            "ok" => Ok(()),
            "exists" => Err(TaskStoreError::Exists {
                id: record.id.clone(),
            }),
            "too_many_tasks" => Err(TaskStoreError::TooManyTasks {
                max: self.config.max_tasks,
            }),
            "full" => Err(TaskStoreError::Full {
                max: self.config.max_total_bytes,
            }),
            other => Err(bad(format!("unexpected status {other}"))),
        }
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
        if let Some(scope) = &record.scope {
            let reply = self
                .index(
                    "add",
                    scope,
                    &[
                        record.id.clone(),
                        self.config.max_tasks_per_scope.to_string(),
                        expires.clone(),
                        now_ms.to_string(),
                        pexpire.to_string(),
                    ],
                )
                .await?;
            match reply.first() {
                Some(Value::BulkString(s)) if s == b"ok" => {}
                Some(Value::BulkString(s)) if s == b"exists" => {
                    return Err(TaskStoreError::Exists { id: record.id });
                }
                Some(Value::BulkString(s)) if s == b"full" => {
                    return Err(TaskStoreError::TooManyForScope {
                        max: self.config.max_tasks_per_scope,
                    });
                }
                other => return Err(bad(format!("unexpected index status {other:?}"))),
            }
        }
        let created = self
            .create_task(&record, json, bytes, expires, now_ms, pexpire)
            .await;
        if created.is_err()
            && let Some(scope) = &record.scope
        {
            // Best effort: a leftover entry is dropped by the next listing.
            let _ = self.unindex(scope, &record.id).await;
        }
        created.map(|()| record)
    }

    async fn get(
        &self,
        id: &str,
        scope: Option<&str>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        Ok(self.visible(id, Some(scope), now_ms).await?.1.record)
    }

    async fn change(
        &self,
        id: &str,
        change: TaskChange<'_>,
        now_ms: u64,
    ) -> Result<Changed, TaskStoreError> {
        self.modify(id, change.scope(), now_ms, |t| change.apply(t, now_ms))
            .await
    }

    async fn purge_expired(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
        if self.conn.layout() == Layout::Cluster {
            return Ok(0);
        }
        let (status, rest) = self.call("purge", "", &[now_ms.to_string()]).await?;
        if status != "ok" {
            return Err(bad(format!("unexpected status {status}")));
        }
        int(rest.first())
    }

    async fn list(
        &self,
        scope: &str,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> Result<TaskPage, TaskStoreError> {
        let limit = limit.max(1);
        let mut tasks: Vec<TaskRecord> = Vec::new();
        // Where the next read of the index starts: the cursor, then the
        // last live task read (entries of gone tasks are dropped).
        let mut after = cursor.map(str::to_owned);
        let mut first = true;
        loop {
            let want = limit - tasks.len() + 1;
            let Some(ids) = self
                .index_page(scope, after.as_deref(), want, now_ms)
                .await?
            else {
                if first {
                    return Err(TaskStoreError::UnknownCursor {
                        cursor: cursor.unwrap_or_default().to_owned(),
                    });
                }
                // Our own position expired meanwhile: end the listing here.
                return Ok(TaskPage {
                    tasks,
                    next_cursor: None,
                });
            };
            first = false;
            let fetched = ids.len();
            for id in ids {
                if tasks.len() == limit {
                    let next_cursor = tasks.last().map(|t| t.id.clone());
                    return Ok(TaskPage { tasks, next_cursor });
                }
                match self.get(&id, Some(scope), now_ms).await {
                    Ok(r) => {
                        after = Some(r.id.clone());
                        tasks.push(r);
                    }
                    Err(TaskStoreError::NotFound { .. } | TaskStoreError::Expired { .. }) => {
                        self.unindex(scope, &id).await?;
                    }
                    Err(e) => return Err(e),
                }
            }
            if fetched < want {
                return Ok(TaskPage {
                    tasks,
                    next_cursor: None,
                });
            }
        }
    }
}
