//! Per-request cost of the servers `mcp-compat serve` builds, in process
//! (`mcp_compat::bench::inproc`): load-independent figures for issue 19.
//!
//! ```sh
//! cargo bench -p mcp-compat --bench per_request            # allocations table, then criterion
//! PER_REQUEST_ALLOCS_ONLY=1 cargo bench -p mcp-compat --bench per_request
//! # what an idle session and a pending polled request keep allocated
//! PER_REQUEST_RETAINED_ONLY=1 cargo bench -p mcp-compat --bench per_request
//! # the same, failing when a figure is over issue 19's bound (1 KiB an idle
//! # session, 2 KiB a polled request between polls; `.ci/run` does this)
//! PER_REQUEST_RETAINED_ONLY=check cargo bench -p mcp-compat --bench per_request
//! # one of those rows only (idle, idle-distinct, idle-no-tasks, polled):
//! # where its blocks come from, under valgrind's DHAT (`eb` at the end)
//! PER_REQUEST_RETAINED_ONLY=polled valgrind --tool=dhat target/release/deps/per_request-HASH
//! # instructions per request: run N requests of one case under callgrind
//! # (twice, with different N, and take the difference: set-up cancels out)
//! PER_REQUEST_LOOP=modern-json:2000 valgrind --tool=callgrind \
//!     --callgrind-out-file=cg.out target/release/deps/per_request-HASH
//! ```
//!
//! This binary allocates with glibc's `malloc` (what `stats_alloc` can wrap
//! in a `static` without `unsafe`), which costs several times mimalloc's
//! instructions a call; `benches/instructions.rs` runs the same loop with
//! the binary's allocator, for the instruction counts `serve` pays.
//!
//! The allocations table runs each case 200 times to warm up, then counts
//! the allocator's calls over 2,000 requests on a current-thread runtime
//! (the handler task runs on the same thread, so every allocation of a
//! request is counted and nothing else runs).

use std::alloc::System;
use std::time::{Duration, Instant};

use criterion::Criterion;
use mcp_compat::bench::inproc::{Case, Harness, Retention};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const WARMUP: u64 = 200;
const COUNTED: u64 = 2_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn harness(rt: &tokio::runtime::Runtime, case: Case) -> Harness {
    let mut h = rt
        .block_on(Harness::new(case))
        .unwrap_or_else(|e| panic!("{}: {e}", case.name()));
    rt.block_on(h.many(WARMUP))
        .unwrap_or_else(|e| panic!("{e}"));
    h
}

/// Allocations and bytes per request of every case.
fn allocations() {
    let rt = runtime();
    println!("per-request allocations ({COUNTED} requests after {WARMUP} warm-up)");
    println!("| case | allocs/req | reallocs/req | bytes allocated/req | bytes freed/req |");
    println!("| --- | --- | --- | --- | --- |");
    for case in Case::ALL {
        let mut h = harness(&rt, case);
        let region = Region::new(GLOBAL);
        rt.block_on(h.many(COUNTED))
            .unwrap_or_else(|e| panic!("{e}"));
        let s = region.change();
        let per = |v: usize| v as f64 / COUNTED as f64;
        println!(
            "| {} | {:.1} | {:.1} | {:.0} | {:.0} |",
            case.name(),
            per(s.allocations),
            per(s.reallocations),
            // `bytes_allocated` already counts what reallocations grew
            // by (`stats_alloc` adds the difference to it as well as to
            // `bytes_reallocated`).
            per(s.bytes_allocated),
            per(s.bytes_deallocated),
        );
    }
}

/// Idle sessions measured, and pending polled requests.
const RETAINED: usize = 1_000;
/// Issue 19's bounds: an idle legacy session, a pending request under
/// SEP-1699 polling between polls (bytes).
const IDLE_BOUND: f64 = 1024.0;
const POLLED_BOUND: f64 = 2048.0;
/// Polled requests per session (a session keeps at most 256 streams).
const PER_SESSION: usize = 100;

/// Bytes (and live blocks) that `n` runs of `step` leave allocated.
fn retained_by(n: usize, mut step: impl FnMut(usize)) -> (f64, f64) {
    let region = Region::new(GLOBAL);
    for i in 0..n {
        step(i);
    }
    let s = region.change();
    // A reallocation's growth (shrinkage) is in `bytes_allocated`
    // (`bytes_deallocated`) already; `bytes_reallocated` repeats it.
    let bytes = s.bytes_allocated as f64 - s.bytes_deallocated as f64;
    let blocks = s.allocations as f64 - s.deallocations as f64;
    (bytes / n as f64, blocks / n as f64)
}

/// What one idle 2025-11-25 session and one pending request under
/// SEP-1699 polling (between polls) keep allocated on the server: bytes
/// requested from the allocator and not freed, per session / request
/// (the allocator's own per-block overhead, 8–16 bytes with glibc, comes
/// on top of each live block).
fn retained() {
    // `PER_REQUEST_RETAINED_ONLY=NAME` runs that row alone.
    let only = std::env::var("PER_REQUEST_RETAINED_ONLY").unwrap_or_default();
    let runs = |name: &str| {
        !["idle", "idle-distinct", "idle-no-tasks", "polled"].contains(&only.as_str())
            || only == name
    };
    let rt = runtime();
    println!("retained on the server ({RETAINED} of each; bytes requested and not freed)");
    println!("| what | bytes retained | live blocks | bound |");
    println!("| --- | --- | --- | --- |");
    // Rows over their bound, for `PER_REQUEST_RETAINED_ONLY=check`.
    let over = std::cell::RefCell::new(Vec::new());
    let row = |what: &str, bytes: f64, blocks: f64, bound: f64| {
        println!("| {what} | {bytes:.0} | {blocks:.1} | {bound:.0} |");
        if bytes > bound {
            over.borrow_mut()
                .push(format!("{what}: {bytes:.0} B > {bound:.0} B"));
        }
    };
    let idle = |what: &str, args: &[&str], distinct: bool| {
        let server = rt
            .block_on(async { Retention::new(args) })
            .unwrap_or_else(|e| panic!("{e}"));
        // Warm-up: the registry, the sweeper task, the event store's maps.
        for i in 0..8 {
            rt.block_on(server.open_session(distinct.then_some(i)))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let (bytes, blocks) = retained_by(RETAINED, |i| {
            rt.block_on(server.open_session(distinct.then_some(i + 8)))
                .unwrap_or_else(|e| panic!("{e}"));
        });
        row(what, bytes, blocks, IDLE_BOUND);
        exit_if_alone();
    };
    if runs("idle") {
        idle("idle 2025-11-25 session (`serve`)", &[], false);
    }
    if runs("idle-distinct") {
        idle("the same, every client's `clientInfo` different", &[], true);
    }
    if runs("idle-no-tasks") {
        idle(
            "the same, `serve --no-legacy-tasks`",
            &["--no-legacy-tasks"],
            true,
        );
    }
    if runs("polled") {
        polled(&rt, &row);
    }
    let over = over.into_inner();
    if only == "check" && !over.is_empty() {
        eprintln!("over issue 19's bounds: {}", over.join("; "));
        std::process::exit(1);
    }
}

/// The polled row of [`retained`].
fn polled(rt: &tokio::runtime::Runtime, row: &impl Fn(&str, f64, f64, f64)) {
    let mut server = rt
        .block_on(async {
            Retention::new(&["--disconnect", "after-priming", "--retry-ms", "60000"])
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let sessions: Vec<String> = (0..=RETAINED / PER_SESSION)
        .map(|_| {
            rt.block_on(server.open_session(None))
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    // Warm-up in a session of its own (the last one).
    for _ in 0..8 {
        rt.block_on(server.start_polled(&sessions[sessions.len() - 1], 600_000))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let (bytes, blocks) = retained_by(RETAINED, |i| {
        rt.block_on(server.start_polled(&sessions[i / PER_SESSION], 600_000))
            .unwrap_or_else(|e| panic!("{e}"));
    });
    row(
        "pending `tools/call`, SEP-1699 polling, between polls",
        bytes,
        blocks,
        POLLED_BOUND,
    );
    exit_if_alone();
}

/// With one row selected, exits before anything is dropped, so what the
/// row retained is still live at the end (DHAT's `eb`).
fn exit_if_alone() {
    let only = std::env::var("PER_REQUEST_RETAINED_ONLY").unwrap_or_default();
    if ["idle", "idle-distinct", "idle-no-tasks", "polled"].contains(&only.as_str()) {
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        std::process::exit(0);
    }
}

/// Criterion's time per request of every case.
fn times(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("per_request");
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    for case in Case::ALL {
        let mut h = harness(&rt, case);
        group.bench_function(case.name(), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    h.many(iters).await.unwrap_or_else(|e| panic!("{e}"));
                    start.elapsed()
                })
            })
        });
    }
    group.finish();
}

fn main() {
    // The binary's subscriber: without one, every span checks `log`'s level.
    mcp_compat::logging::init();
    // `PER_REQUEST_LOOP=CASE:N`: N requests of one case and nothing else
    // (for callgrind's instruction counts).
    if let Ok(spec) = std::env::var("PER_REQUEST_LOOP") {
        mcp_compat::bench::inproc::run_loop(&spec).unwrap_or_else(|e| panic!("{e}"));
        return;
    }
    if std::env::var_os("PER_REQUEST_RETAINED_ONLY").is_some() {
        retained();
        return;
    }
    allocations();
    retained();
    if std::env::var_os("PER_REQUEST_ALLOCS_ONLY").is_some() {
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    times(&mut c);
    c.final_summary();
}
