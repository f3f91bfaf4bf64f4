//! `mcp-compat serve`: the reference server.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;
use clap::Args;
use mcp_legacy_http::server::{DisconnectPolicy, LegacyServer, ServerConfig};

use crate::reference::ReferenceHandler;
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
    /// The SSE `retry` value sent before a server-initiated disconnect, in ms.
    #[arg(long, default_value_t = 1000)]
    pub retry_ms: u64,
    /// Server-initiated disconnect (2025-11-25 sessions): never,
    /// after-priming, after-events:N or after-ms:N.
    #[arg(long, default_value = "never")]
    pub disconnect: DisconnectPolicy,
    /// Offer no standalone GET stream (GET answers 405).
    #[arg(long)]
    pub no_get_stream: bool,
    /// Origins allowed to call (comma-separated); default: loopback origins.
    #[arg(long, value_delimiter = ',')]
    pub allowed_origins: Option<Vec<String>>,
    /// Host header values allowed (comma-separated); default: loopback names.
    #[arg(long, value_delimiter = ',')]
    pub allowed_hosts: Option<Vec<String>>,
    /// Keep-alive comment interval on idle SSE streams, in ms (0 = none).
    #[arg(long, default_value_t = 15_000)]
    pub keepalive_ms: u64,
}

/// Builds the server configuration from the options.
pub fn config(args: &ServeArgs) -> Result<ServerConfig, String> {
    let versions = revisions::parse(&args.revisions)?;
    if !args.path.starts_with('/') {
        return Err(format!("--path must start with '/', got {:?}", args.path));
    }
    let cfg = ServerConfig::default()
        .with_versions(versions)
        .with_json_response(args.json_response)
        .with_retry_ms(args.retry_ms)
        .with_disconnect(args.disconnect)
        .with_get_stream(!args.no_get_stream)
        .with_allowed_origins(args.allowed_origins.clone())
        .with_allowed_hosts(args.allowed_hosts.clone())
        .with_keepalive((args.keepalive_ms > 0).then(|| Duration::from_millis(args.keepalive_ms)));
    Ok(cfg)
}

/// Runs the server until the process is stopped. Prints
/// `listening on http://HOST:PORT/PATH` as the first stdout line.
pub async fn run(args: ServeArgs) -> Result<(), String> {
    let cfg = config(&args)?;
    let server = LegacyServer::new(Arc::new(ReferenceHandler::new()), cfg);
    let app = server.route(&args.path);
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .map_err(|e| format!("cannot bind {}: {e}", args.bind))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    // TCP_NODELAY: SSE events are small writes; without it Nagle's algorithm
    // and delayed ACKs add ~40 ms to each.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    println!("listening on http://{addr}{}", args.path);
    tracing::info!(%addr, path = %args.path, "serving");
    axum::serve(listener, app)
        .await
        .map_err(|e| format!("server failed: {e}"))
}
