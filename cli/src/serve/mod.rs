//! `mcp-compat serve`: the reference server, every configured revision on
//! one endpoint ([`MultiServer`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use mcp_http_edge::server::limits::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_SHUTDOWN_GRACE, DEFAULT_WRITE_TIMEOUT,
};
use mcp_http_edge::server::{ConnLimits, Endpoint, serve_with_shutdown};
use mcp_negotiate::server::{MultiConfig, MultiServer, legacy_config};
use mcp_rev_2025_11_25::{
    DEFAULT_RESUME_HOLD, DEFAULT_RETRY_MS, DisconnectPolicy, PollingExt,
    TasksConfig as LegacyTasksConfig, TasksExt,
};
use mcp_rev_2026_07_28::server::{ModernConfig, TasksConfig};
use mcp_store_redis::{
    RedisConnection, RedisConnectionConfig, RedisEventStore, RedisEventStoreConfig,
    RedisLeaseStore, RedisSessionStore, RedisSignalBus, RedisTaskStore,
};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::admission::{DEFAULT_MAX_RUNNING, DEFAULT_MAX_RUNNING_BYTES, RunLimits};
use mcp_transport_core::handler::Handler;
use mcp_transport_core::lease::{DEFAULT_LEASE_RENEW, DEFAULT_LEASE_TTL, Leases};
use mcp_transport_core::session_store::MemorySessionStoreConfig;
use mcp_transport_core::task_store::MemoryTaskStoreConfig;

use crate::fixtures::ConformanceHandler;
use crate::revisions;

/// Options of `mcp-compat serve`.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address to bind; port 0 picks a free port (the first stdout line says which).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub bind: SocketAddr,
    /// The MCP endpoint's path.
    #[arg(long, default_value = "/mcp")]
    pub path: String,
    /// Revisions to serve: a comma-separated list or `all`.
    #[arg(long, default_value = "all")]
    pub revisions: String,
    /// Answer requests with application/json unless the handler streams first.
    #[arg(long)]
    pub json_response: bool,
    /// The SSE `retry` value sent before a server-initiated disconnect, in ms
    /// (2025-11-25 sessions; default 1000).
    #[arg(long)]
    pub retry_ms: Option<u64>,
    /// Server-initiated disconnect (2025-11-25 sessions): never,
    /// after-priming, after-events:N, after-ms:N or idle:N.
    #[arg(long)]
    pub disconnect: Option<DisconnectPolicy>,
    /// Under `--disconnect after-priming`, how long a resumed connection
    /// that finds nothing new is held waiting for something before it
    /// closes, in ms (2025-11-25 sessions; default 10000; 0 closes at once).
    #[arg(long)]
    pub resume_hold_ms: Option<u64>,
    /// Offer no standalone GET stream (GET answers 405; legacy revisions).
    #[arg(long)]
    pub no_get_stream: bool,
    /// Serve 2025-11-25 sessions without the experimental tasks (SEP-1686):
    /// no `tasks` capability, `params.task` ignored. By default they are
    /// served, with the default in-memory store.
    #[arg(long)]
    pub no_legacy_tasks: bool,
    /// Origins allowed to call (comma-separated); default: loopback origins.
    #[arg(long, value_delimiter = ',')]
    pub allowed_origins: Option<Vec<String>>,
    /// Host header values allowed (comma-separated); default: loopback names.
    #[arg(long, value_delimiter = ',')]
    pub allowed_hosts: Option<Vec<String>>,
    /// Keep-alive comment interval on idle SSE streams, in ms (0 = none).
    #[arg(long, default_value_t = 15_000)]
    pub keepalive_ms: u64,
    /// Close a connection whose first request head has not arrived after
    /// this many ms.
    #[arg(long, default_value_t = DEFAULT_HEADER_READ_TIMEOUT.as_millis() as u64)]
    pub header_read_timeout_ms: u64,
    /// Answer 408 and close when no part of a request body arrives for this
    /// many ms.
    #[arg(long, default_value_t = DEFAULT_BODY_READ_TIMEOUT.as_millis() as u64)]
    pub body_read_timeout_ms: u64,
    /// Close a kept-alive connection with no request in flight after this
    /// many ms.
    #[arg(long, default_value_t = DEFAULT_IDLE_TIMEOUT.as_millis() as u64)]
    pub idle_timeout_ms: u64,
    /// Close a connection whose writes have been blocked this many ms (a
    /// client that stopped reading).
    #[arg(long, default_value_t = DEFAULT_WRITE_TIMEOUT.as_millis() as u64)]
    pub write_timeout_ms: u64,
    /// Connections served at once; more wait to be accepted.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Handlers the server runs at once, every era together (requests,
    /// with or without a connection, and task workers); one more request
    /// gets 503.
    #[arg(long, default_value_t = DEFAULT_MAX_RUNNING)]
    pub max_running: usize,
    /// Bytes of requests (method and params) the running handlers of every
    /// era may keep together; a request that would pass it gets 503, unless
    /// nothing else runs.
    #[arg(long, default_value_t = DEFAULT_MAX_RUNNING_BYTES)]
    pub max_running_bytes: usize,
    /// On SIGTERM or SIGINT, how long requests in flight may take to finish
    /// before the remaining connections are closed, in ms.
    #[arg(long, default_value_t = DEFAULT_SHUTDOWN_GRACE.as_millis() as u64)]
    pub shutdown_grace_ms: u64,
    /// Where the legacy sessions' replay logs and the 2026-07-28 tasks
    /// live: `memory` (the default: in-process, nothing to install) or
    /// `redis://HOST:PORT/DB` (shared by every instance using that Redis;
    /// while Redis is down, requests that need it get 503), or
    /// `redis+cluster://HOST:PORT[,HOST:PORT…]` for a Redis Cluster (any of
    /// its nodes; every store operation then touches one hash slot, and
    /// the store-wide bounds are Redis's `maxmemory` with a `volatile-*`
    /// eviction policy: configure the cluster so).
    #[arg(long, default_value = "memory")]
    pub store: String,
    /// With `--store redis://…`: how long a lease on a running request or
    /// task lives without renewal, in ms (default 10000). When the
    /// instance running it dies, a client waiting through another instance
    /// gets a `-32603` error (or the task `failed`) after about this long.
    #[arg(long)]
    pub lease_ttl_ms: Option<u64>,
    /// With `--store redis://…`: how often a running request's lease is
    /// renewed, and how often an instance following another's request
    /// checks it, in ms (default 3000; below `--lease-ttl-ms`).
    #[arg(long)]
    pub lease_renew_ms: Option<u64>,
    /// A file holding the 32-byte key that seals 2026-07-28 `requestState`
    /// (64 hex digits, e.g. from `openssl rand -hex 32`). Instances behind
    /// one load balancer need the same key, so that an input round issued
    /// by one may be answered on another; without it each process makes
    /// its own random key.
    #[arg(long)]
    pub state_key_file: Option<std::path::PathBuf>,
}

impl ServeArgs {
    /// The options as `serve`'s command line would set them: `options` are
    /// the words after `serve` (none gives every default). For embedding
    /// and tests that build the server as the binary does.
    ///
    /// # Errors
    ///
    /// clap's, for an unknown option or a value that does not parse.
    pub fn from_options<I, S>(options: I) -> Result<ServeArgs, clap::Error>
    where
        I: IntoIterator<Item = S>,
        S: Into<std::ffi::OsString> + Clone,
    {
        #[derive(clap::Parser)]
        struct Serve {
            #[command(flatten)]
            args: ServeArgs,
        }
        let argv = std::iter::once(std::ffi::OsString::from("serve"))
            .chain(options.into_iter().map(Into::into));
        <Serve as clap::Parser>::try_parse_from(argv).map(|s| s.args)
    }
}

/// Reads the `requestState` key `--state-key-file` names: 64 hex digits
/// (surrounding whitespace ignored).
pub fn read_state_key(path: &std::path::Path) -> Result<[u8; 32], String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--state-key-file {}: {e}", path.display()))?;
    let hex = text.trim();
    let bad = || {
        format!(
            "--state-key-file {}: expected 64 hex digits (32 bytes, e.g. from `openssl rand -hex 32`), found {} characters",
            path.display(),
            hex.len()
        )
    };
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(key)
}

/// The connection limits the options set.
pub fn conn_limits(args: &ServeArgs) -> Result<ConnLimits, String> {
    if args.max_connections == 0 {
        return Err("--max-connections must be at least 1".into());
    }
    for (flag, ms) in [
        ("--header-read-timeout-ms", args.header_read_timeout_ms),
        ("--body-read-timeout-ms", args.body_read_timeout_ms),
        ("--idle-timeout-ms", args.idle_timeout_ms),
        ("--write-timeout-ms", args.write_timeout_ms),
    ] {
        if ms == 0 {
            return Err(format!("{flag} must be at least 1"));
        }
    }
    Ok(ConnLimits::default()
        .with_header_read_timeout(Duration::from_millis(args.header_read_timeout_ms))
        .with_body_read_timeout(Duration::from_millis(args.body_read_timeout_ms))
        .with_idle_timeout(Duration::from_millis(args.idle_timeout_ms))
        .with_write_timeout(Duration::from_millis(args.write_timeout_ms))
        .with_max_connections(args.max_connections)
        .with_shutdown_grace(Duration::from_millis(args.shutdown_grace_ms))
        // The binary's handler never reads the peer's address: the
        // request's extension map is not allocated for it.
        .with_peer_address(false))
}

/// Refuses flags that mean nothing for the revisions served.
fn check_flags(args: &ServeArgs, versions: &[ProtocolVersion]) -> Result<(), String> {
    let polling = versions.iter().any(|v| v.has(|f| f.sse_polling));
    let legacy = versions.iter().any(|v| v.is_legacy());
    let served = mcp_transport_core::version::list(versions);
    if !polling {
        if args
            .disconnect
            .is_some_and(|d| d != DisconnectPolicy::Never)
        {
            return Err(format!(
                "--disconnect means nothing here: server-initiated disconnect (SEP-1699) exists only on 2025-11-25, and this server serves {served}"
            ));
        }
        if args.retry_ms.is_some() {
            return Err(format!(
                "--retry-ms means nothing here: retry before a server-initiated disconnect exists only on 2025-11-25, and this server serves {served}"
            ));
        }
        if args.resume_hold_ms.is_some() {
            return Err(format!(
                "--resume-hold-ms means nothing here: polling by resumption (SEP-1699) exists only on 2025-11-25, and this server serves {served}"
            ));
        }
        if args.no_legacy_tasks {
            return Err(format!(
                "--no-legacy-tasks means nothing here: the experimental tasks (SEP-1686) exist only on 2025-11-25, and this server serves {served}"
            ));
        }
    }
    if args.state_key_file.is_some() && !versions.contains(&ProtocolVersion::V2026_07_28) {
        return Err(format!(
            "--state-key-file means nothing here: only 2026-07-28 seals requestState, and this server serves {served}"
        ));
    }
    if !legacy && args.no_get_stream {
        return Err(format!(
            "--no-get-stream means nothing here: 2026-07-28 has no GET stream (GET always answers 405), and this server serves {served}"
        ));
    }
    Ok(())
}

/// Builds the server configuration from the options.
pub fn config(args: &ServeArgs) -> Result<MultiConfig, String> {
    let versions = revisions::parse_served(&args.revisions)?;
    check_flags(args, &versions)?;
    if !args.path.starts_with('/') {
        return Err(format!("--path must start with '/', got {:?}", args.path));
    }
    if args.max_running == 0 {
        return Err("--max-running must be at least 1".into());
    }
    let keepalive = (args.keepalive_ms > 0).then(|| Duration::from_millis(args.keepalive_ms));
    let legacy = legacy_config()
        .with_json_response(args.json_response)
        .with_retry_ms(args.retry_ms.unwrap_or(DEFAULT_RETRY_MS))
        .with_disconnect(args.disconnect.unwrap_or(DisconnectPolicy::Never))
        .with_resume_hold(
            args.resume_hold_ms
                .map_or(DEFAULT_RESUME_HOLD, Duration::from_millis),
        )
        .with_get_stream(!args.no_get_stream)
        .with_allowed_origins(args.allowed_origins.clone())
        .with_allowed_hosts(args.allowed_hosts.clone())
        .with_keepalive(keepalive);
    // 2025-11-25's experimental tasks with the default in-memory store.
    let legacy = if args.no_legacy_tasks {
        legacy
    } else {
        legacy.with_tasks(LegacyTasksConfig::default())
    };
    // The Tasks extension with the default in-memory store (bounded: count,
    // bytes, TTL).
    let modern = ModernConfig::default()
        .with_json_response(args.json_response)
        .with_allowed_origins(args.allowed_origins.clone())
        .with_allowed_hosts(args.allowed_hosts.clone())
        .with_keepalive(keepalive)
        .with_tasks(Some(TasksConfig::default()))
        .with_state_key(
            args.state_key_file
                .as_deref()
                .map(read_state_key)
                .transpose()?,
        );
    Ok(MultiConfig {
        revisions: versions,
        legacy,
        modern,
        running: RunLimits::default()
            .with_max_running(args.max_running)
            .with_max_running_bytes(args.max_running_bytes),
    })
}

/// The handler `serve` runs: the reference tools plus the conformance
/// suite's fixtures.
pub fn handler() -> Arc<ConformanceHandler> {
    Arc::new(ConformanceHandler::new())
}

/// Builds the server and forwards the handler's list-change notifications
/// to every era's listeners (legacy GET streams, 2026-07-28
/// `subscriptions/listen`). Must run inside a tokio runtime.
pub fn build(cfg: MultiConfig) -> Result<MultiServer, String> {
    let fixtures = handler();
    let mut changes = fixtures.changes();
    let as_handler: Arc<dyn Handler> = fixtures;
    let server = MultiServer::try_new(as_handler, cfg).map_err(|e| e.to_string())?;
    let publisher = server.clone();
    tokio::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(n) => {
                    publisher.publish(&n).await;
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    });
    Ok(server)
}

/// Puts the stores `--store` names into `cfg`: nothing for `memory`; for
/// `redis://…`, a [`RedisEventStore`], a [`RedisSessionStore`] and a
/// [`RedisSignalBus`] for the legacy sessions (shared between instances;
/// the bus also carries change notifications to both eras' listeners on
/// other instances), a [`RedisTaskStore`] for the 2026-07-28 tasks and for
/// 2025-11-25's experimental tasks (unless `--no-legacy-tasks`), with the
/// in-memory stores' default bounds, and a [`RedisLeaseStore`] behind all
/// of them (`--lease-ttl-ms`, `--lease-renew-ms`), after checking that
/// Redis answers (a clear error at startup rather than 503s later).
///
/// # Errors
///
/// A URL that is neither `memory` nor `redis://`/`rediss://`, a Redis
/// that does not answer, lease flags without Redis or with a renewal
/// interval not below the TTL.
pub async fn with_store(mut cfg: MultiConfig, args: &ServeArgs) -> Result<MultiConfig, String> {
    let store = args.store.as_str();
    if store == "memory" {
        if args.lease_ttl_ms.is_some() || args.lease_renew_ms.is_some() {
            return Err("--lease-ttl-ms and --lease-renew-ms mean nothing with --store memory: leases matter only between instances sharing a Redis store".into());
        }
        return Ok(cfg);
    }
    if !mcp_store_redis::is_store_url(store) {
        return Err(format!(
            "--store must be `memory`, a redis://HOST:PORT/DB URL or a redis+cluster://HOST:PORT[,HOST:PORT…] URL, got {store:?}"
        ));
    }
    let conn = RedisConnection::connect(&RedisConnectionConfig::new(store))
        .await
        .map_err(|e| format!("--store {store}: {e}"))?;
    let events = RedisEventStore::new(conn.clone(), RedisEventStoreConfig::default());
    let sessions = RedisSessionStore::new(conn.clone(), MemorySessionStoreConfig::default());
    let signals = RedisSignalBus::start(conn.clone());
    signals
        .ready()
        .await
        .map_err(|e| format!("--store {store}: {e}"))?;
    let leases = Leases::new(Arc::new(RedisLeaseStore::new(conn.clone()))).with_timing(
        args.lease_ttl_ms
            .map_or(DEFAULT_LEASE_TTL, Duration::from_millis),
        args.lease_renew_ms
            .map_or(DEFAULT_LEASE_RENEW, Duration::from_millis),
    )?;
    let signals: Arc<dyn mcp_transport_core::session_store::SignalBus> = Arc::new(signals);
    cfg.legacy = cfg
        .legacy
        .with_event_store(Arc::new(events))
        .with_session_store(Arc::new(sessions))
        .with_signals(signals.clone())
        .with_leases(leases.clone());
    // Change notifications reach the listen streams other instances hold.
    cfg.modern = cfg.modern.with_signals(Some(signals));
    let task_store = Arc::new(RedisTaskStore::new(conn, MemoryTaskStoreConfig::default()));
    if !args.no_legacy_tasks && cfg.revisions.contains(&ProtocolVersion::V2025_11_25) {
        cfg.legacy = cfg.legacy.with_tasks(LegacyTasksConfig {
            store: task_store.clone(),
            leases: Some(leases.clone()),
            ..LegacyTasksConfig::default()
        });
    }
    let tasks = TasksConfig {
        store: task_store,
        leases: Some(leases),
        ..TasksConfig::default()
    };
    cfg.modern = cfg.modern.with_tasks(Some(tasks));
    Ok(cfg)
}

/// The service `run` serves: `server` at `path` and nothing else, with no
/// axum `Router` in front ([`Endpoint`]: the same answers, ~3,000
/// instructions a request fewer; docs/PERFORMANCE.md, session 27). The
/// in-process benchmarks drive this too, so they count what `serve` runs.
pub fn app(server: &MultiServer, path: &str) -> Endpoint<MultiServer> {
    server.endpoint(path)
}

/// Runs the server until SIGTERM or SIGINT, then shuts down gracefully
/// (see [`shutdown_signal`]) and returns `Ok`. Prints
/// `listening on http://HOST:PORT/PATH` as the first stdout line.
pub async fn run(args: ServeArgs) -> Result<(), String> {
    let cfg = with_store(config(&args)?, &args).await?;
    let limits = conn_limits(&args)?;
    let server = build(cfg)?;
    let app = app(&server, &args.path);
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .map_err(|e| format!("cannot bind {}: {e}", args.bind))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let signal = shutdown_signal().map_err(|e| format!("cannot install signal handlers: {e}"))?;
    println!("listening on http://{addr}{}", args.path);
    tracing::info!(%addr, path = %args.path, ?limits, "serving");
    // `serve_with_shutdown` sets TCP_NODELAY (SSE events are small writes;
    // without it Nagle's algorithm and delayed ACKs add ~40 ms to each) and
    // bounds every connection (header, body and idle timeouts, a connection
    // cap, the shutdown's grace period).
    let grace = limits.shutdown_grace;
    let signalled = Arc::new(std::sync::OnceLock::new());
    let stop = {
        let (server, signalled) = (server.clone(), signalled.clone());
        async move {
            let name = signal.await;
            let _ = signalled.set(tokio::time::Instant::now());
            eprintln!("{name}: shutting down");
            let ended = server.drain().await;
            tracing::info!(signal = name, streams_ended = ended, "shutting down");
        }
    };
    serve_with_shutdown(listener, app, limits, stop)
        .await
        .map_err(|e| format!("server failed: {e}"))?;
    // With shared stores (leases), requests still running get what is left
    // of the grace period, then are abandoned with an error that clients
    // waiting through other instances see at once.
    let left = signalled
        .get()
        .map_or(Duration::ZERO, |at: &tokio::time::Instant| {
            grace.saturating_sub(at.elapsed())
        });
    let abandoned = server.abandon_after(left).await;
    if abandoned > 0 {
        eprintln!(
            "shutdown: {abandoned} stream(s) abandoned, their requests answered with an error"
        );
    }
    Ok(())
}

/// A future that completes with the signal's name on the first SIGTERM or
/// SIGINT (Ctrl-C). The handlers are installed before it returns, so a
/// signal arriving before the future is polled is not lost.
pub fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = &'static str>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        })
    }
}

#[cfg(test)]
mod tests;
