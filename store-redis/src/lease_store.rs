//! [`RedisLeaseStore`]: the `LeaseStore` in Redis.
//!
//! A lease is one hash, `PREFIX:lease:{KEY}` (the whole key as a Redis
//! Cluster hash tag: every operation touches this one key only): holder,
//! data, and the time it is held until, on **Redis's clock** (`TIME` inside
//! the script), so instances whose clocks disagree still agree on when a
//! lease lapsed. Every operation is one call of `lease_store.lua`, so a
//! takeover is atomic: of several instances taking a lapsed lease over at
//! once, exactly one gets it. The key expires [`LEASE_KEEP`] after its last
//! write: a lapsed lease stays readable that long, then is gone.

use std::sync::LazyLock;
use std::time::Duration;

use mcp_transport_core::lease::{LeaseError, LeaseInfo, LeaseStore};
use redis::Value;

use crate::connection::RedisConnection;
use crate::error::RedisStoreError;

static SCRIPT: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("lease_store.lua")));

/// How long a lease's key outlives its last renewal: 24 h, the default TTL
/// of the event log's keys (a lapsed lease matters while the stream it
/// guards can still be resumed).
pub const LEASE_KEEP: Duration = Duration::from_secs(24 * 60 * 60);

/// The `LeaseStore` in Redis (see the module documentation).
#[derive(Clone, Debug)]
pub struct RedisLeaseStore {
    conn: RedisConnection,
}

fn backend(e: RedisStoreError) -> LeaseError {
    LeaseError::Backend(Box::new(e))
}

fn ms(d: Duration) -> String {
    u64::try_from(d.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
        .to_string()
}

impl RedisLeaseStore {
    /// A store over `conn`.
    pub fn new(conn: RedisConnection) -> Self {
        RedisLeaseStore { conn }
    }

    async fn call(
        &self,
        op: &str,
        key: &str,
        holder: &str,
        ttl: Duration,
        data: &str,
    ) -> Result<Value, LeaseError> {
        let mut inv = SCRIPT.prepare_invoke();
        inv.key(format!("{}:lease:{{{key}}}", self.conn.prefix))
            .arg(op)
            .arg(holder)
            .arg(ms(ttl))
            .arg(ms(LEASE_KEEP))
            .arg(data);
        let mut m = self.conn.manager.clone();
        inv.invoke_async(&mut m)
            .await
            .map_err(|e| backend(e.into()))
    }

    async fn flag(
        &self,
        op: &str,
        key: &str,
        holder: &str,
        ttl: Duration,
        data: &str,
    ) -> Result<bool, LeaseError> {
        match self.call(op, key, holder, ttl, data).await? {
            Value::Int(n) => Ok(n == 1),
            other => Err(backend(RedisStoreError::Protocol(format!(
                "lease {op}: expected 0 or 1, got {other:?}"
            )))),
        }
    }

    async fn info(
        &self,
        op: &str,
        key: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<LeaseInfo>, LeaseError> {
        let text = |v: &Value| match v {
            Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        };
        match self.call(op, key, holder, ttl, "").await? {
            Value::Array(v) if v.is_empty() => Ok(None),
            Value::Array(v) if v.len() == 3 => match (text(&v[0]), text(&v[1]), &v[2]) {
                (Some(holder), Some(data), Value::Int(h)) => Ok(Some(LeaseInfo {
                    holder,
                    data,
                    held: *h == 1,
                })),
                _ => Err(backend(RedisStoreError::Protocol(format!(
                    "lease {op}: unexpected reply {v:?}"
                )))),
            },
            other => Err(backend(RedisStoreError::Protocol(format!(
                "lease {op}: unexpected reply {other:?}"
            )))),
        }
    }
}

#[async_trait::async_trait]
impl LeaseStore for RedisLeaseStore {
    async fn acquire(
        &self,
        key: &str,
        holder: &str,
        data: &str,
        ttl: Duration,
    ) -> Result<bool, LeaseError> {
        self.flag("acquire", key, holder, ttl, data).await
    }

    async fn renew(&self, key: &str, holder: &str, ttl: Duration) -> Result<bool, LeaseError> {
        self.flag("renew", key, holder, ttl, "").await
    }

    async fn release(&self, key: &str, holder: &str) -> Result<bool, LeaseError> {
        self.flag("release", key, holder, Duration::ZERO, "").await
    }

    async fn get(&self, key: &str) -> Result<Option<LeaseInfo>, LeaseError> {
        self.info("get", key, "", Duration::ZERO).await
    }

    async fn take_over(
        &self,
        key: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<LeaseInfo>, LeaseError> {
        self.info("take_over", key, holder, ttl).await
    }
}
