//! Instructions per request in process, with the allocator `mcp-compat`
//! itself uses (mimalloc): `per_request`'s loop (`bench::inproc::run_loop`)
//! and nothing else, to be run under callgrind.
//!
//! `scripts/instructions.sh [--check] [CASE…]` does the following and
//! prints the figures (CI bounds two of them with `--check`):
//!
//! ```sh
//! cargo bench -p mcp-compat --bench instructions --no-run
//! # twice, with different N; (instructions(N2) − instructions(N1)) / (N2 − N1)
//! valgrind --tool=callgrind --callgrind-out-file=cg.out \
//!     target/release/deps/instructions-HASH modern-json:2000
//! ```
//!
//! `per_request` counts allocations with a wrapper of the system allocator
//! (`stats_alloc`, whose constructor is `const` only on nightly, so it
//! cannot wrap another allocator in a `static`, and the workspace forbids
//! the `unsafe` a wrapper of our own would need). glibc's `malloc` and
//! `free` cost several times mimalloc's instructions a call, so that
//! binary's counts overweight allocation; this one's are what `serve`
//! pays. Both install the binary's `tracing` subscriber
//! ([`mcp_compat::logging`]). Without an argument it runs `modern-json:1`, a smoke test.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // The binary's subscriber: without one, every span checks `log`'s level.
    mcp_compat::logging::init();
    // `cargo bench` passes `--bench`; the spec is the first other argument.
    let spec = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_else(|| "modern-json:1".to_string());
    if let Err(e) = mcp_compat::bench::inproc::run_loop(&spec) {
        eprintln!("instructions: {e}");
        std::process::exit(1);
    }
}
