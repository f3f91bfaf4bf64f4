//! The `s-cluster` column: two [`MultiServer`] instances (every revision
//! served) sharing their state, behind the round-robin [`Balancer`] with no
//! stickiness, so consecutive requests of one session, a resume, a task's
//! poll and its cancel land on different instances (issue 15).
//!
//! What the instances share: the legacy sessions (`SessionStore`), the SSE
//! event log (`EventStore`), the signals between instances (`SignalBus`:
//! cancels, client answers, change notifications), the task store of both
//! eras and the 2026-07-28 `requestState` key. Everything else is per
//! instance, as in separate processes: each has its own engines, its own
//! running requests and its own 2025-11-25 task runner.
//!
//! By default ([`store`] is `None`) the shared state is in process — one
//! `MemoryEventStore`, `MemorySessionStore`, `MemoryTaskStore` and
//! `LocalSignalBus` handed to both instances — so the column runs on a
//! fresh machine with nothing installed. `matrix --store redis://HOST:PORT/DB`
//! ([`set_store`]) gives each instance its own connection to that Redis
//! and its own Redis stores and signal bus, as two processes would have;
//! each scenario then uses a fresh key prefix, so scenarios never see each
//! other's keys (which expire by their TTL, 24 h at most).
//!
//! The predictions are `s-all`'s ([`super::ServerKind::predicted_as`]): a
//! cluster must behave exactly as one server.

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::serve::ListenerExt;
use mcp_negotiate::server::MultiServer;
use mcp_store_redis::{
    RedisConnection, RedisConnectionConfig, RedisEventStore, RedisEventStoreConfig,
    RedisSessionStore, RedisSignalBus, RedisTaskStore,
};
use mcp_test_support::Balancer;
use mcp_transport_core::event_log::{EventStore, MemoryEventStore};
use mcp_transport_core::session_store::{
    LocalSignalBus, MemorySessionStore, MemorySessionStoreConfig, SessionStore, SignalBus,
};
use mcp_transport_core::task_store::{MemoryTaskStore, MemoryTaskStoreConfig, TaskStore};
use tokio::task::JoinHandle;

/// How many instances the column runs.
pub const INSTANCES: usize = 2;

static STORE: OnceLock<String> = OnceLock::new();

/// Makes the `s-cluster` column share its state through the Redis at
/// `url` (`redis://HOST:PORT/DB`) instead of in-process stores; `memory`
/// keeps the default. Set once per process, before the matrix runs.
///
/// # Errors
///
/// A URL that is neither `memory` nor `redis://`/`rediss://`, or a second
/// call with another value.
pub fn set_store(url: &str) -> Result<(), String> {
    if url == "memory" {
        return Ok(());
    }
    if !mcp_store_redis::is_store_url(url) {
        return Err(format!(
            "--store must be `memory`, a redis://HOST:PORT/DB URL or a redis+cluster://HOST:PORT[,HOST:PORT…] URL, got {url:?}"
        ));
    }
    STORE.get_or_init(|| url.to_owned());
    match STORE.get() {
        Some(set) if set == url => Ok(()),
        _ => Err("the cluster store is already set to another URL".into()),
    }
}

/// The Redis the column uses (`None`: in-process stores).
pub fn store() -> Option<&'static str> {
    STORE.get().map(String::as_str)
}

/// What one instance is given to share.
#[derive(Clone)]
pub(crate) struct Stores {
    pub(crate) events: Arc<dyn EventStore>,
    pub(crate) sessions: Arc<dyn SessionStore>,
    pub(crate) signals: Arc<dyn SignalBus>,
    /// Both eras' tasks (ids are random, so one store holds both).
    pub(crate) tasks: Arc<dyn TaskStore>,
    /// The 2026-07-28 `requestState` sealing key, the same everywhere.
    pub(crate) state_key: [u8; 32],
}

/// The stores of each of the [`INSTANCES`]: one in-process set handed to
/// all, or, with [`store`], per instance over one Redis.
pub(crate) async fn stores() -> Result<Vec<Stores>, String> {
    let state_key: [u8; 32] = rand::random();
    let Some(url) = store() else {
        let one = Stores {
            events: Arc::new(MemoryEventStore::default()),
            sessions: Arc::new(MemorySessionStore::new(MemorySessionStoreConfig::default())),
            signals: Arc::new(LocalSignalBus::default()),
            tasks: Arc::new(MemoryTaskStore::default()),
            state_key,
        };
        return Ok(vec![one; INSTANCES]);
    };
    let mut config = RedisConnectionConfig::new(url);
    config.prefix = format!("mcp-matrix-{:016x}", rand::random::<u64>());
    let mut all = Vec::new();
    for _ in 0..INSTANCES {
        let conn = RedisConnection::connect(&config)
            .await
            .map_err(|e| format!("--store {url}: {e}"))?;
        let bus = RedisSignalBus::start(conn.clone());
        bus.ready()
            .await
            .map_err(|e| format!("--store {url}: {e}"))?;
        all.push(Stores {
            events: Arc::new(RedisEventStore::new(
                conn.clone(),
                RedisEventStoreConfig::default(),
            )),
            sessions: Arc::new(RedisSessionStore::new(
                conn.clone(),
                MemorySessionStoreConfig::default(),
            )),
            signals: Arc::new(bus),
            tasks: Arc::new(RedisTaskStore::new(conn, MemoryTaskStoreConfig::default())),
            state_key,
        });
    }
    Ok(all)
}

/// The running cluster of one scenario: the instances' server tasks and
/// the balancer in front, stopped when dropped.
pub(crate) struct Running {
    pub(crate) balancer: Balancer,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Serves each of `apps` (one per instance, already wrapped in the
/// recording middleware) on 127.0.0.1:0 and puts the balancer in front.
pub(crate) async fn serve(apps: Vec<Router>) -> std::io::Result<Running> {
    let mut addrs = Vec::new();
    let mut tasks = Vec::new();
    for app in apps {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        addrs.push(listener.local_addr()?);
        let listener = listener.tap_io(|t| {
            let _ = t.set_nodelay(true);
        });
        tasks.push(tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        }));
    }
    let balancer = Balancer::start(addrs).await?;
    Ok(Running { balancer, tasks })
}

/// Sends `note` the way an application of a cluster does: published on one
/// instance, reaching the listeners every instance holds through the
/// signal bus. It is published on an instance that holds no listener when
/// there is one (so the delivery crosses instances), and only once some
/// instance holds a listener; returns how many listeners the instances
/// hold (0: not published).
pub(crate) async fn publish(
    servers: &[MultiServer],
    note: &mcp_transport_core::jsonrpc::Notification,
) -> usize {
    let mut held = Vec::new();
    for s in servers {
        let mut n = s.modern().map_or(0, |m| m.active_listen_streams());
        if let Some(l) = s.legacy() {
            n += l.standalone_streams().await;
        }
        held.push(n);
    }
    let total: usize = held.iter().sum();
    if total == 0 {
        return 0;
    }
    let from = held.iter().position(|n| *n == 0).unwrap_or(0);
    servers[from].publish(note).await;
    total
}
