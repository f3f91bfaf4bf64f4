//! [`RedisConnection`]: the connection and key prefix the stores share,
//! to one Redis/Valkey or to a Redis Cluster.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster::{ClusterClient, ClusterConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

use crate::error::RedisStoreError;

/// The URL scheme that names a Redis Cluster:
/// `redis+cluster://HOST:PORT[,HOST:PORT…]`.
pub const CLUSTER_SCHEME: &str = "redis+cluster://";

/// How to reach Redis.
#[derive(Clone, Debug)]
pub struct RedisConnectionConfig {
    /// `redis://HOST:PORT/DB` (also `rediss://`, `redis+unix://`) for one
    /// Redis or Valkey (or a primary with replicas), or
    /// `redis+cluster://HOST:PORT[,HOST:PORT…]` for a Redis Cluster (any
    /// of its nodes; the rest are discovered). A cluster URL selects the
    /// cluster key layout (see [`Layout::Cluster`]). [`is_store_url`] says
    /// whether a string is one of these.
    pub url: String,
    /// Prepended to every key (`PREFIX:…`), so that several deployments
    /// (or tests) can share one Redis. Default `mcp`.
    pub prefix: String,
    /// How long one command may take before it fails as unavailable.
    /// Default 2 s.
    pub response_timeout: Duration,
    /// How long one connection attempt may take. Default 1 s.
    pub connection_timeout: Duration,
}

impl RedisConnectionConfig {
    /// The defaults for `url`.
    pub fn new(url: impl Into<String>) -> Self {
        RedisConnectionConfig {
            url: url.into(),
            prefix: "mcp".to_owned(),
            response_timeout: Duration::from_secs(2),
            connection_timeout: Duration::from_secs(1),
        }
    }
}

/// Whether `url` names a Redis the stores can use: `redis://`, `rediss://`,
/// `redis+unix://` or `redis+cluster://` (what `serve --store` and
/// `matrix --store` accept besides `memory`).
pub fn is_store_url(url: &str) -> bool {
    ["redis://", "rediss://", "redis+unix://", CLUSTER_SCHEME]
        .iter()
        .any(|s| url.starts_with(s))
}

/// Which keys one script may touch together.
///
/// * [`Layout::Single`] — one Redis/Valkey (or a primary with replicas):
///   a script updates a session's or task's keys **and** the store-wide
///   bounds (the event store's session count and byte budget, the task
///   store's count and bytes, the session store's index) in one atomic
///   call, so those bounds are exact.
/// * [`Layout::Cluster`] — Redis Cluster: every script touches the keys of
///   **one hash slot** only (one session's `{SID}` keys, one task's, one
///   lease's, one scope's task index), so nothing is ever refused with
///   `CROSSSLOT`. The per-stream, per-session, per-task and per-scope
///   bounds hold exactly as on one Redis; the store-wide ones
///   (`max_sessions`, `max_bytes_total` of the event store, `max_tasks`
///   and `max_total_bytes` of the task store, `max_sessions` of the
///   session store) are **not kept** — the store-wide bound is then
///   Redis's own `maxmemory` with a `volatile-*` eviction policy
///   (`volatile-lru` or `volatile-ttl`): every key the stores write has a
///   TTL (on this layout a task asking for an unlimited TTL gets the
///   store's `max_ttl_ms`, 24 h by default), so Redis may evict any of
///   them, and an evicted event or task is reported as expired or not
///   found, as after its TTL. `purge_expired` has nothing to scan (no
///   store-wide index) and returns 0: Redis expires the keys itself.
///   See `docs/DESIGN.md`, "Redis Cluster".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Layout {
    /// One Redis: exact store-wide bounds.
    Single,
    /// Redis Cluster: single-slot scripts, store-wide bound by `maxmemory`.
    Cluster,
}

/// The multiplexed connection every store operation goes through.
#[derive(Clone)]
pub(crate) enum Multiplexed {
    /// One Redis: a `ConnectionManager` (reconnects in the background).
    Single(ConnectionManager),
    /// Redis Cluster: the cluster client's connection (routes each command
    /// to its slot's node, follows `MOVED`/`ASK`, reconnects per node).
    Cluster(ClusterConnection),
}

impl redis::aio::ConnectionLike for Multiplexed {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Multiplexed::Single(c) => c.req_packed_command(cmd),
            Multiplexed::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Multiplexed::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Multiplexed::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Multiplexed::Single(c) => c.get_db(),
            Multiplexed::Cluster(c) => c.get_db(),
        }
    }
}

/// A shared connection to Redis (cheap to clone): a `ConnectionManager`,
/// which reconnects in the background after a failure, or a cluster
/// connection; and the key prefix.
#[derive(Clone)]
pub struct RedisConnection {
    pub(crate) manager: Multiplexed,
    /// For connections of their own (the signal bus's subscription): the
    /// one server, or every configured cluster node (classic pub/sub in a
    /// cluster reaches subscribers on any node, so one of them is enough;
    /// the next is tried when one fails).
    pub(crate) clients: Vec<redis::Client>,
    pub(crate) connection_timeout: Duration,
    pub(crate) prefix: String,
}

impl std::fmt::Debug for RedisConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisConnection")
            .field("prefix", &self.prefix)
            .field("layout", &self.layout())
            .finish_non_exhaustive()
    }
}

/// The node URLs of a `redis+cluster://` URL (`None` for any other URL).
fn cluster_nodes(url: &str) -> Option<Vec<String>> {
    let rest = url.strip_prefix(CLUSTER_SCHEME)?;
    let rest = rest.trim_end_matches('/');
    Some(
        rest.split(',')
            .filter(|n| !n.is_empty())
            .map(|n| format!("redis://{n}"))
            .collect(),
    )
}

impl RedisConnection {
    /// Connects and checks that Redis answers `PING` (on a cluster: that
    /// the cluster answers, with its slots covered).
    ///
    /// # Errors
    ///
    /// [`RedisStoreError::Refused`] for a URL that does not parse,
    /// [`RedisStoreError::Unavailable`] when Redis does not answer.
    pub async fn connect(config: &RedisConnectionConfig) -> Result<Self, RedisStoreError> {
        let conn = Self::lazy(config)?;
        let mut m = conn.manager.clone();
        let _: String = redis::cmd("PING").query_async(&mut m).await?;
        Ok(conn)
    }

    /// A connection made on first use: builds even while Redis is down
    /// (operations fail as unavailable until it is up).
    ///
    /// # Errors
    ///
    /// [`RedisStoreError::Refused`] for a URL that does not parse.
    pub fn lazy(config: &RedisConnectionConfig) -> Result<Self, RedisStoreError> {
        if let Some(nodes) = cluster_nodes(&config.url) {
            return Self::lazy_cluster(config, &nodes);
        }
        let client = redis::Client::open(config.url.as_str())?;
        let manager_config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(config.response_timeout))
            .set_connection_timeout(Some(config.connection_timeout))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let manager = ConnectionManager::new_lazy_with_config(client.clone(), manager_config)?;
        Ok(RedisConnection {
            manager: Multiplexed::Single(manager),
            clients: vec![client],
            connection_timeout: config.connection_timeout,
            prefix: config.prefix.clone(),
        })
    }

    fn lazy_cluster(
        config: &RedisConnectionConfig,
        nodes: &[String],
    ) -> Result<Self, RedisStoreError> {
        if nodes.is_empty() {
            return Err(RedisStoreError::Protocol(format!(
                "{CLUSTER_SCHEME} needs at least one HOST:PORT"
            )));
        }
        let clients = nodes
            .iter()
            .map(|n| redis::Client::open(n.as_str()))
            .collect::<Result<Vec<_>, _>>()?;
        let client = ClusterClient::builder(nodes.iter().map(String::as_str))
            .connection_timeout(config.connection_timeout)
            .response_timeout(config.response_timeout)
            .retries(2)
            .max_retry_wait(500)
            .build()?;
        let cluster_config = ClusterConfig::new()
            .set_connection_timeout(config.connection_timeout)
            .set_response_timeout(config.response_timeout);
        let manager = client.get_pending_async_connection_with_config(cluster_config);
        Ok(RedisConnection {
            manager: Multiplexed::Cluster(manager),
            clients,
            connection_timeout: config.connection_timeout,
            prefix: config.prefix.clone(),
        })
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The key layout the stores use over this connection:
    /// [`Layout::Cluster`] for a `redis+cluster://` URL, else
    /// [`Layout::Single`].
    pub fn layout(&self) -> Layout {
        match self.manager {
            Multiplexed::Single(_) => Layout::Single,
            Multiplexed::Cluster(_) => Layout::Cluster,
        }
    }
}
