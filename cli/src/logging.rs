//! The `tracing` subscriber the `mcp-compat` binary installs, shared with
//! the in-process benchmarks so that they pay for spans what `serve` pays.
//!
//! Without a subscriber, `tracing` (whose `log` feature axum's default
//! `tower-log` turns on) checks the `log` crate's level on every span it
//! enters, exits or records, and the servers open a few spans a request:
//! the in-process benchmarks counted ~0.6k instructions a stateless request
//! that the binary, which always installs this subscriber, does not spend
//! (docs/PERFORMANCE.md, session 16).

/// Install the binary's subscriber: `fmt` to standard error, filtered by
/// `RUST_LOG` (errors only when it is unset). Returns `false`, changing
/// nothing, when a global subscriber was installed already.
pub fn init() -> bool {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init()
        .is_ok()
}
