//! What the binary's tests share and `mcp-test-support` cannot hold (it
//! would need `mcp-compat` itself).

use mcp_compat::serve::ServeArgs;

pub mod cluster;

/// The options of `mcp-compat serve` with nothing set.
pub fn serve_args() -> ServeArgs {
    ServeArgs {
        bind: "127.0.0.1:0".parse().unwrap(),
        path: "/mcp".into(),
        revisions: "all".into(),
        json_response: false,
        retry_ms: None,
        disconnect: None,
        resume_hold_ms: None,
        no_get_stream: false,
        no_legacy_tasks: false,
        allowed_origins: None,
        allowed_hosts: None,
        keepalive_ms: 15_000,
        header_read_timeout_ms: 30_000,
        body_read_timeout_ms: 60_000,
        idle_timeout_ms: 60_000,
        write_timeout_ms: 60_000,
        max_connections: 768,
        max_running: mcp_transport_core::admission::DEFAULT_MAX_RUNNING,
        max_running_bytes: mcp_transport_core::admission::DEFAULT_MAX_RUNNING_BYTES,
        shutdown_grace_ms: 10_000,
        store: "memory".into(),
        lease_ttl_ms: None,
        lease_renew_ms: None,
        state_key_file: None,
    }
}
