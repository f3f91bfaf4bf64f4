//! [`RedisSessionStore`]: the `SessionStore` in Redis.
//!
//! A session is one hash, `PREFIX:session:{ID}` (the session id as a Redis
//! Cluster hash tag): the record as JSON (written once), the last-seen time
//! and the idle timeout. `touch` is one script (check expiry, move
//! last-seen, renew the key's TTL); the count bound is a sorted set of
//! id → expiry. The key's TTL is the idle timeout left plus
//! [`EXPIRED_GRACE`], so an expired session is
//! reported expired for a while, then not found.
//!
//! On [`Layout::Cluster`] there is no index: each call touches the
//! session's one key, `max_sessions` is not kept (Redis's `maxmemory` with
//! a `volatile-*` policy bounds the cluster; every session key has a TTL),
//! and [`SessionStore::purge_expired`] returns 0 (Redis expires the keys).

use std::sync::LazyLock;

use mcp_transport_core::session_store::{
    MemorySessionStoreConfig, NewSession, SessionRecord, SessionStore, SessionStoreError,
};
use redis::Value;
use serde::{Deserialize, Serialize};

use crate::connection::{Layout, RedisConnection};
use crate::error::RedisStoreError;
use crate::task_store::EXPIRED_GRACE;

static SCRIPT: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("session_store.lua")));

/// What the JSON holds: everything but the last-seen time.
#[derive(Serialize, Deserialize)]
struct Stored {
    session: NewSession,
    created_at_ms: u64,
}

/// The `SessionStore` in Redis, bounded by a [`MemorySessionStoreConfig`]
/// (the same limits with the same meaning): a session created on one
/// instance is found, touched and deleted through any other.
#[derive(Clone, Debug)]
pub struct RedisSessionStore {
    conn: RedisConnection,
    config: MemorySessionStoreConfig,
}

fn backend(e: RedisStoreError) -> SessionStoreError {
    SessionStoreError::Backend(Box::new(e))
}

fn bad(what: String) -> SessionStoreError {
    backend(RedisStoreError::Protocol(what))
}

fn grace_ms() -> u64 {
    u64::try_from(EXPIRED_GRACE.as_millis()).unwrap_or(u64::MAX)
}

fn parse(json: &[u8], seen: u64) -> Result<SessionRecord, SessionStoreError> {
    let stored: Stored =
        serde_json::from_slice(json).map_err(|e| backend(RedisStoreError::Corrupt(e)))?;
    Ok(SessionRecord {
        session: stored.session,
        created_at_ms: stored.created_at_ms,
        last_seen_ms: seen,
    })
}

impl RedisSessionStore {
    /// A store over `conn` with these limits.
    pub fn new(conn: RedisConnection, config: MemorySessionStoreConfig) -> Self {
        RedisSessionStore { conn, config }
    }

    fn key(&self, id: &str) -> String {
        format!("{}:session:{{{id}}}", self.conn.prefix)
    }

    async fn call(
        &self,
        op: &str,
        id: &str,
        args: &[String],
    ) -> Result<Vec<Value>, SessionStoreError> {
        let p = &self.conn.prefix;
        let mut inv = SCRIPT.prepare_invoke();
        inv.key(self.key(id));
        if self.conn.layout() == Layout::Single {
            inv.key(format!("{p}:sessrec"));
        }
        inv.arg(p.as_str()).arg(op).arg(id);
        for a in args {
            inv.arg(a.as_str());
        }
        let mut m = self.conn.manager.clone();
        inv.invoke_async(&mut m)
            .await
            .map_err(|e| backend(e.into()))
    }
}

fn status(v: &[Value]) -> Result<String, SessionStoreError> {
    match v.first() {
        Some(Value::BulkString(s)) => Ok(String::from_utf8_lossy(s).into_owned()),
        other => Err(bad(format!("expected a status, got {other:?}"))),
    }
}

fn int(v: Option<&Value>) -> Result<u64, SessionStoreError> {
    match v {
        Some(Value::Int(n)) => u64::try_from(*n).map_err(|_| bad(format!("negative {n}"))),
        other => Err(bad(format!("expected an integer, got {other:?}"))),
    }
}

#[async_trait::async_trait]
impl SessionStore for RedisSessionStore {
    async fn create(
        &self,
        session: NewSession,
        now_ms: u64,
    ) -> Result<SessionRecord, SessionStoreError> {
        let record = SessionRecord::new(session, now_ms, self.config.max_record_bytes)?;
        let stored = Stored {
            session: record.session.clone(),
            created_at_ms: now_ms,
        };
        let json =
            serde_json::to_string(&stored).map_err(|e| backend(RedisStoreError::Corrupt(e)))?;
        let idle = record.session.idle_timeout_ms;
        let id = record.session.id.clone();
        let reply = self
            .call(
                "create",
                &id,
                &[
                    json,
                    self.config.max_sessions.to_string(),
                    now_ms.to_string(),
                    idle.to_string(),
                    idle.saturating_add(grace_ms()).max(1).to_string(),
                ],
            )
            .await?;
        match status(&reply)?.as_str() {
            "ok" => Ok(record),
            "exists" => Err(SessionStoreError::Exists { id }),
            "too_many_sessions" => Err(SessionStoreError::TooManySessions {
                max: self.config.max_sessions,
            }),
            other => Err(bad(format!("unexpected status {other}"))),
        }
    }

    async fn get(&self, id: &str, now_ms: u64) -> Result<SessionRecord, SessionStoreError> {
        let mut m = self.conn.manager.clone();
        let (j, seen): (Option<Vec<u8>>, Option<u64>) = redis::cmd("HMGET")
            .arg(self.key(id))
            .arg("j")
            .arg("seen")
            .query_async(&mut m)
            .await
            .map_err(|e| backend(e.into()))?;
        let (Some(j), Some(seen)) = (j, seen) else {
            return Err(SessionStoreError::NotFound { id: id.to_owned() });
        };
        let record = parse(&j, seen)?;
        if record.is_expired(now_ms) {
            self.call("remove", id, &[]).await?;
            return Err(SessionStoreError::Expired { id: id.to_owned() });
        }
        Ok(record)
    }

    async fn touch(&self, id: &str, now_ms: u64) -> Result<SessionRecord, SessionStoreError> {
        let reply = self
            .call("touch", id, &[now_ms.to_string(), grace_ms().to_string()])
            .await?;
        match status(&reply)?.as_str() {
            "ok" => match reply.get(1) {
                Some(Value::BulkString(j)) => parse(j, int(reply.get(2))?),
                other => Err(bad(format!("expected the record, got {other:?}"))),
            },
            "not_found" => Err(SessionStoreError::NotFound { id: id.to_owned() }),
            "expired" => Err(SessionStoreError::Expired { id: id.to_owned() }),
            other => Err(bad(format!("unexpected status {other}"))),
        }
    }

    async fn remove(&self, id: &str) -> Result<bool, SessionStoreError> {
        let reply = self.call("remove", id, &[]).await?;
        Ok(int(reply.get(1))? > 0)
    }

    async fn purge_expired(&self, now_ms: u64) -> Result<usize, SessionStoreError> {
        if self.conn.layout() == Layout::Cluster {
            return Ok(0);
        }
        let reply = self.call("purge", "", &[now_ms.to_string()]).await?;
        usize::try_from(int(reply.get(1))?).map_err(|_| bad("count".into()))
    }
}
