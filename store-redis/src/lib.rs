//! Redis (or Valkey) implementations of the store traits of
//! `mcp-transport-core`, so that several server instances share what a
//! session or a task needs: [`RedisEventStore`] (the SSE replay log behind
//! `EventStore`), [`RedisTaskStore`] (`TaskStore`) and [`RedisSessionStore`]
//! (`SessionStore`), and [`RedisSignalBus`] (`SignalBus`, over Redis
//! pub/sub: a cancel or a client's answer arriving at one instance reaches
//! the one running the request), and [`RedisLeaseStore`] (`LeaseStore`:
//! the running instance's lease on a request, so that another instance
//! notices when it died).
//!
//! Both go through one [`RedisConnection`]: a `redis` crate
//! `ConnectionManager` (one multiplexed connection, reconnected in the
//! background after Redis went away) and a key prefix. Every operation is
//! one atomic Lua script (`EVALSHA`, reloaded after a Redis restart), so
//! concurrent instances never see a half-done change.
//!
//! # Keys
//!
//! Every key of a session carries the session tag as a Redis Cluster hash
//! tag (`PREFIX:{SID}:meta`, `PREFIX:{SID}:fin`, `PREFIX:{SID}:s:N`), every
//! key of a task its id (`PREFIX:task:{ID}`), every lease its key
//! (`PREFIX:lease:{KEY}`), and each has a TTL, renewed
//! on every write; a scope's task index (for `tasks/list`) is under the
//! scope (`PREFIX:tasks:{SCOPE}:idx`, `…:exp`). On one Redis
//! ([`Layout::Single`]) the store-wide bounds (session count, byte budget,
//! task count and bytes) are kept in a few store-wide keys
//! (`PREFIX:sessions`, `PREFIX:sbytes`, `PREFIX:bytes`, `PREFIX:budget`,
//! `PREFIX:tasks`, `PREFIX:tbytes`, `PREFIX:tasks:bytes`,
//! `PREFIX:sessrec`), each bounded by the limits.
//!
//! # Redis Cluster
//!
//! A `redis+cluster://HOST:PORT[,HOST:PORT…]` URL connects with the cluster
//! client and selects [`Layout::Cluster`]: every script is given the keys of
//! one hash slot only and the store-wide keys are not used, so those
//! bounds are not kept — bound the cluster with `maxmemory` and a
//! `volatile-*` eviction policy instead (every key has a TTL). See
//! [`Layout`].
//!
//! # When Redis is down
//!
//! Every operation returns the traits' `Backend` error wrapping a
//! [`RedisStoreError`] (after at most the configured response timeout);
//! nothing panics, and the next operation after Redis is back succeeds
//! (see `docs/DESIGN.md`, "Shared state in Redis").

mod connection;
mod error;
mod event_store;
mod lease_store;
mod session_store;
mod signals;
mod task_store;

pub use connection::{
    CLUSTER_SCHEME, Layout, RedisConnection, RedisConnectionConfig, is_store_url,
};
pub use error::RedisStoreError;
pub use event_store::{RedisEventStore, RedisEventStoreConfig};
pub use lease_store::{LEASE_KEEP, RedisLeaseStore};
pub use session_store::RedisSessionStore;
pub use signals::RedisSignalBus;
pub use task_store::{CLUSTER_MAX_TTL_MS, EXPIRED_GRACE, RedisTaskStore};
