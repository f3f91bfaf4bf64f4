//! `mcp-compat bench`: the load benchmark (issue 19), not a test.
//!
//! In one run it starts, as child processes of this binary, a bare-axum
//! floor server ([`floor`]) and `mcp-compat serve` configurations on
//! `127.0.0.1:0`, then measures:
//!
//! * request rate and p50/p99 latency of small `tools/call`s ([`throughput`])
//!   from an in-process closed-loop generator ([`load`]), each as a ratio
//!   to the floor measured in the same run;
//! * memory per idle 2025-11-25 session ([`idle`]);
//! * cancel-by-close latency on 2026-07-28 ([`edges`], server in process);
//! * resume latency after a server-initiated disconnect on 2025-11-25
//!   ([`resume`], server in process);
//! * (in `cli/benches/per_request.rs`, not this command) allocations,
//!   instructions and time per request in process ([`inproc`]);
//! * N long-running requests at once, held, polled (SEP-1699) or run as
//!   tasks ([`long`]): server RSS, descriptors, CPU per request, latency.
//!
//! Servers are children so their figures are separable from the client's
//! (`/proc`, [`proc`]). Results print as a table or as JSON ([`report`]).
//! `docs/PERFORMANCE.md` has the figures measured and what they mean.

pub mod child;
pub mod edges;
pub mod floor;
pub mod idle;
pub mod inproc;
pub mod latency;
pub mod load;
pub mod long;
pub mod proc;
pub mod report;
pub mod resume;
pub mod sse_read;
pub mod throughput;
pub mod wire;

use std::time::Duration;

use clap::Args;
use serde::Serialize;

use long::Mode;
use throughput::Workload;

/// Options of `mcp-compat bench`.
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Measured time per request-rate workload, ms.
    #[arg(long, default_value_t = 5_000)]
    pub duration_ms: u64,
    /// Rounds of the request-rate workloads: each round runs the floor and
    /// then every selected workload; a workload's ratio is to its own
    /// round's floor, and its row is the round with the median ratio (the
    /// lowest and highest beside it). More rounds for a shared host whose
    /// speed drifts.
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Warm-up before each request-rate workload is measured, ms.
    #[arg(long, default_value_t = 1_000)]
    pub warmup_ms: u64,
    /// Connections of the request-rate workloads.
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// Workloads to run (comma-separated): floor, modern-json, modern-sse,
    /// legacy-json, legacy-sse, legacy-sse-shared, legacy-sse-rmcp (rmcp's
    /// server, `--rmcp-server`; only when named), idle, held-2025,
    /// held-2026, polling, tasks, cancel, resume; `all`, `rate` (the request-rate
    /// ones) or `long` (the long-running ones). The floor runs with any request-rate
    /// workload.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// Idle 2025-11-25 sessions opened to measure memory per session
    /// (the server keeps at most 4,096).
    #[arg(long, default_value_t = 2_000)]
    pub idle_sessions: usize,
    /// Long-running requests at once.
    #[arg(long, default_value_t = 1_000)]
    pub long_requests: usize,
    /// Seconds each long-running request works (one progress event a second).
    #[arg(long, default_value_t = 10)]
    pub long_seconds: u64,
    /// The `retry` of the polling mode, ms.
    #[arg(long, default_value_t = 2_000)]
    pub retry_ms: u64,
    /// Idle connections the long-running client keeps open (0: a new
    /// connection for every request, so the server's descriptors are the
    /// requests' own).
    #[arg(long, default_value_t = long::POOL_IDLE)]
    pub pool_idle: usize,
    /// A few seconds in all: 300 ms per rate workload on 4 connections,
    /// two rounds, 200 idle sessions, 20 long requests of 1 s, retry 500 ms, 50
    /// cancel-by-close and 50 resume trials (overrides those options).
    #[arg(long)]
    pub quick: bool,
    /// Cancel-by-close trials (`cancel`).
    #[arg(long, default_value_t = 1_000)]
    pub cancel_trials: usize,
    /// Resume trials (`resume`).
    #[arg(long, default_value_t = 1_000)]
    pub resume_trials: usize,
    /// Output format.
    #[arg(long, default_value = "table", value_parser = ["table", "json"])]
    pub format: String,
    /// Also write the JSON report to this file.
    #[arg(long)]
    pub json_output: Option<std::path::PathBuf>,
    /// Run the floor server instead (used by the benchmark itself).
    #[arg(long, hide = true)]
    pub floor_server: bool,
    /// With `--floor-server`: behind `mcp-http-edge`'s accept loop.
    #[arg(long, hide = true, requires = "floor_server")]
    pub edge: bool,
    /// The rmcp 3.11 server adapter (`peers/rmcp`) that `legacy-sse-rmcp`
    /// drives, run as `EXE --port 0 --mode sse`. For figures build it
    /// optimised: `CARGO_TARGET_DIR=.cache/peer-rmcp cargo build --release
    /// --locked --manifest-path peers/rmcp/Cargo.toml`.
    #[arg(long, default_value = ".cache/peer-rmcp/release/rmcp-peer-server")]
    pub rmcp_server: std::path::PathBuf,
    /// Where the `serve` children keep their state (`serve --store`):
    /// `memory` (the default) or `redis://HOST:PORT/DB`, to measure the
    /// Redis store's cost against the in-memory one.
    #[arg(long, default_value = "memory")]
    pub store: String,
}

static STORE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The `--store URL` arguments every `serve` child of this run gets
/// (none for the in-memory default).
pub fn store_args() -> Vec<&'static str> {
    STORE.get().map_or_else(Vec::new, |url| store_args_of(url))
}

/// Whether an open-file limit of `nofile` is enough for `long_requests`
/// held connections at once: one each, and 512 to spare for the rest.
fn enough_open_files(long_requests: usize, nofile: u64) -> Result<(), String> {
    let needed = long_requests as u64 + 512;
    if nofile < needed {
        return Err(format!(
            "--long-requests {long_requests} needs about {needed} open files; the limit is {nofile} (raise `ulimit -Hn`)"
        ));
    }
    Ok(())
}

/// The `serve` arguments that keep state at `url`: none for `memory`.
fn store_args_of(url: &str) -> Vec<&str> {
    if url == "memory" {
        Vec::new()
    } else {
        vec!["--store", url]
    }
}

/// Everything one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The machine: CPUs available and the open-file limit.
    pub machine: Machine,
    /// The request-rate workloads, the floor first.
    pub throughput: Vec<throughput::ThroughputRow>,
    /// Memory per idle session, when run.
    pub idle_sessions: Option<idle::IdleFigures>,
    /// The long-running modes run.
    pub long_running: Vec<long::LongFigures>,
    /// Cancel-by-close latency on 2026-07-28 (client's close → handler's
    /// cancellation token), when run.
    pub cancel_by_close: Option<latency::LatencyFigures>,
    /// Resume latency after a server-initiated disconnect on 2025-11-25
    /// (end of the POST's stream → first event of the resumed stream),
    /// when run.
    pub resume_after_disconnect: Option<latency::LatencyFigures>,
    /// `legacy-sse`'s request rate over `legacy-sse-rmcp`'s (rmcp 3.11's
    /// server under the same load), when both ran.
    pub legacy_sse_rate_over_rmcp: Option<f64>,
    /// rmcp's server CPU per request over `legacy-sse`'s, when both ran.
    pub rmcp_server_cpu_over_legacy_sse: Option<f64>,
    /// Polling's completion p50 minus held-2025's, ms (when both ran).
    pub polling_extra_latency_p50_ms: Option<f64>,
    /// The same at p99, ms.
    pub polling_extra_latency_p99_ms: Option<f64>,
}

/// The machine the figures come from.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// CPUs this process may use.
    pub cpus: usize,
    /// The 1-minute load average when the run started (`/proc/loadavg`):
    /// other work on the machine skews every figure.
    pub load_average: f64,
    /// Open-file soft limit after raising it.
    pub nofile_limit: u64,
    /// The options' effective values.
    pub duration_ms: u64,
    /// Connections of the request-rate workloads.
    pub connections: usize,
    /// Rounds of the request-rate workloads (`--rounds`).
    pub rounds: usize,
    /// Long-running requests at once.
    pub long_requests: usize,
    /// Seconds each works.
    pub long_seconds: u64,
    /// Polling `retry`, ms.
    pub retry_ms: u64,
    /// Idle connections the long-running client keeps.
    pub pool_idle: usize,
    /// Where the `serve` children keep their state (`--store`).
    pub store: String,
}

/// The figures that compare two rows of one run ([`Report`]'s fields of
/// the same names): each `None` unless both rows ran (and, for a ratio,
/// its divisor is above zero).
#[derive(Debug, PartialEq)]
struct Compared {
    legacy_sse_rate_over_rmcp: Option<f64>,
    rmcp_server_cpu_over_legacy_sse: Option<f64>,
    polling_extra_latency_p50_ms: Option<f64>,
    polling_extra_latency_p99_ms: Option<f64>,
}

impl Compared {
    fn of(throughput: &[throughput::ThroughputRow], long: &[long::LongFigures]) -> Compared {
        let row = |name: &str| throughput.iter().find(|t| t.workload == name);
        let ours_and_rmcp = row(Workload::LegacySse.name())
            .zip(row(Workload::LegacySseRmcp.name()))
            .map(|(o, r)| (&o.figures, &r.figures));
        let over = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        let mode = |m: Mode| long.iter().find(|l| l.mode == m.name());
        let polling_and_held = mode(Mode::Polling).zip(mode(Mode::Held2025));
        Compared {
            legacy_sse_rate_over_rmcp: ours_and_rmcp
                .and_then(|(o, r)| over(o.requests_per_sec, r.requests_per_sec)),
            rmcp_server_cpu_over_legacy_sse: ours_and_rmcp
                .and_then(|(o, r)| over(r.server_cpu_us_per_request, o.server_cpu_us_per_request)),
            polling_extra_latency_p50_ms: polling_and_held
                .map(|(p, h)| p.completion_p50_ms - h.completion_p50_ms),
            polling_extra_latency_p99_ms: polling_and_held
                .map(|(p, h)| p.completion_p99_ms - h.completion_p99_ms),
        }
    }
}

struct Selection {
    rate: Vec<Workload>,
    idle: bool,
    cancel: bool,
    resume: bool,
    long: Vec<Mode>,
}

fn select(names: &[String]) -> Result<Selection, String> {
    let mut s = Selection {
        rate: Vec::new(),
        idle: false,
        cancel: false,
        resume: false,
        long: Vec::new(),
    };
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let (all, rate, long) = (name == "all", name == "rate", name == "long");
        // Set by whichever group below the name selects.
        let mut known = false;
        for w in Workload::EXTERNAL {
            if w.name() == name {
                known = true;
                if !s.rate.contains(&w) {
                    s.rate.push(w);
                }
            }
        }
        for w in Workload::ALL {
            if all || rate || w.name() == name {
                known = true;
                if !s.rate.contains(&w) {
                    s.rate.push(w);
                }
            }
        }
        for m in Mode::ALL {
            if all || long || m.name() == name {
                known = true;
                if !s.long.contains(&m) {
                    s.long.push(m);
                }
            }
        }
        if all || name == "idle" {
            known = true;
            s.idle = true;
        }
        if all || name == "cancel" {
            known = true;
            s.cancel = true;
        }
        if all || name == "resume" {
            known = true;
            s.resume = true;
        }
        if !known {
            return Err(format!(
                "unknown workload {name:?}: expected all, rate, long, idle, cancel, resume, or one of {}, {}",
                Workload::ALL.map(Workload::name).join(", "),
                Mode::ALL.map(Mode::name).join(", ")
            ));
        }
    }
    Ok(s)
}

/// The workloads `args` select, once every option is checked: before
/// anything runs, since a bad count found after minutes of load would
/// waste them.
fn validate(args: &BenchArgs) -> Result<Selection, String> {
    if args.connections == 0 || args.duration_ms == 0 || args.long_seconds == 0 || args.rounds == 0
    {
        return Err(
            "--connections, --duration-ms, --rounds and --long-seconds must be at least 1".into(),
        );
    }
    if !(1..=4_000).contains(&args.idle_sessions) {
        return Err("--idle-sessions must be between 1 and 4000 (the server keeps 4,096)".into());
    }
    let selection = select(&args.workloads)?;
    if selection.cancel && args.cancel_trials == 0 {
        return Err("--cancel-trials must be at least 1".into());
    }
    if selection.resume && args.resume_trials == 0 {
        return Err("--resume-trials must be at least 1".into());
    }
    Ok(selection)
}

/// Runs the benchmark (or, with `--floor-server`, the floor server).
pub async fn run(mut args: BenchArgs) -> Result<(), String> {
    if args.floor_server {
        return floor::run(args.edge).await;
    }
    if args.quick {
        args.duration_ms = 300;
        args.rounds = 2;
        args.warmup_ms = 100;
        args.connections = 4;
        args.idle_sessions = 200;
        args.long_requests = 20;
        args.long_seconds = 1;
        args.retry_ms = 500;
        args.cancel_trials = 50;
        args.resume_trials = 50;
    }
    let selection = validate(&args)?;
    if STORE.get_or_init(|| args.store.clone()) != &args.store {
        return Err("the benchmark's store is already set to another URL".into());
    }
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    let nofile = proc::raise_nofile_limit();
    if !selection.long.is_empty() {
        enough_open_files(args.long_requests, nofile)?;
    }
    let load = load::Load {
        connections: args.connections,
        duration: Duration::from_millis(args.duration_ms),
        warmup: Duration::from_millis(args.warmup_ms),
    };
    let throughput = if selection.rate.is_empty() {
        Vec::new()
    } else {
        throughput::run(&selection.rate, load, args.rounds, &args.rmcp_server).await?
    };
    let idle_sessions = if selection.idle {
        Some(idle::run(args.idle_sessions).await?)
    } else {
        None
    };
    let cancel_by_close = if selection.cancel {
        Some(edges::cancel_by_close(args.cancel_trials).await?)
    } else {
        None
    };
    let resume_after_disconnect = if selection.resume {
        Some(resume::resume_after_disconnect(args.resume_trials).await?)
    } else {
        None
    };
    let spec = long::Spec {
        requests: args.long_requests,
        seconds: args.long_seconds,
        retry_ms: args.retry_ms,
        pool_idle: args.pool_idle,
    };
    let mut long_running = Vec::new();
    for m in Mode::ALL.into_iter().filter(|m| selection.long.contains(m)) {
        long_running.push(long::run(m, spec).await?);
    }
    let compared = Compared::of(&throughput, &long_running);
    let report = Report {
        machine: Machine {
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            load_average,
            nofile_limit: nofile,
            duration_ms: args.duration_ms,
            connections: args.connections,
            rounds: args.rounds,
            long_requests: args.long_requests,
            long_seconds: args.long_seconds,
            retry_ms: args.retry_ms,
            pool_idle: args.pool_idle,
            store: args.store.clone(),
        },
        throughput,
        legacy_sse_rate_over_rmcp: compared.legacy_sse_rate_over_rmcp,
        rmcp_server_cpu_over_legacy_sse: compared.rmcp_server_cpu_over_legacy_sse,
        idle_sessions,
        polling_extra_latency_p50_ms: compared.polling_extra_latency_p50_ms,
        polling_extra_latency_p99_ms: compared.polling_extra_latency_p99_ms,
        long_running,
        cancel_by_close,
        resume_after_disconnect,
    };
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    if let Some(path) = &args.json_output {
        std::fs::write(path, &json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if args.format == "json" {
        println!("{json}");
    } else {
        print!("{}", report::table(&report));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::load::LoadFigures;
    use super::throughput::ThroughputRow;
    use super::*;

    #[test]
    fn the_group_names_select_their_groups() {
        let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let rate = select(&names(&["rate"])).unwrap();
        assert_eq!(rate.rate, Workload::ALL);
        assert!(rate.long.is_empty() && !rate.idle && !rate.cancel && !rate.resume);
        let long = select(&names(&["long"])).unwrap();
        assert!(long.rate.is_empty() && !long.idle);
        assert_eq!(long.long, Mode::ALL);
        let all = select(&names(&["all"])).unwrap();
        assert_eq!(all.rate, Workload::ALL);
        assert_eq!(all.long, Mode::ALL);
        assert!(all.idle && all.cancel && all.resume);
        // Named twice, selected once; blanks are skipped.
        let twice = select(&names(&["idle", " rate ", "", "floor"])).unwrap();
        assert_eq!(twice.rate, Workload::ALL);
        assert!(twice.idle && !twice.cancel);
    }

    #[test]
    fn long_requests_need_an_open_file_each_and_some_to_spare() {
        assert_eq!(enough_open_files(1_000, 1_512), Ok(()));
        assert_eq!(
            enough_open_files(1_000, 1_511),
            Err("--long-requests 1000 needs about 1512 open files; the limit is 1511 (raise `ulimit -Hn`)".into())
        );
        assert!(enough_open_files(0, 511).is_err());
    }

    #[test]
    fn only_a_store_other_than_memory_is_passed_on() {
        assert!(store_args_of("memory").is_empty());
        assert_eq!(
            store_args_of("redis://127.0.0.1:6379/0"),
            ["--store", "redis://127.0.0.1:6379/0"]
        );
    }

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: BenchArgs,
    }

    fn args(options: &[&str]) -> BenchArgs {
        let argv = std::iter::once("bench").chain(options.iter().copied());
        Cli::try_parse_from(argv).expect("valid options").args
    }

    fn error(options: &[&str]) -> String {
        match validate(&args(options)) {
            Ok(_) => panic!("{options:?} passed"),
            Err(e) => e,
        }
    }

    #[test]
    fn every_count_is_checked_before_anything_runs() {
        let at_least_1 =
            "--connections, --duration-ms, --rounds and --long-seconds must be at least 1";
        for option in [
            "--connections",
            "--duration-ms",
            "--rounds",
            "--long-seconds",
        ] {
            assert_eq!(error(&[option, "0"]), at_least_1, "{option} 0");
        }
        for idle in ["0", "4001"] {
            assert!(
                error(&["--idle-sessions", idle]).starts_with("--idle-sessions must be"),
                "--idle-sessions {idle}"
            );
        }
        assert_eq!(
            error(&["--cancel-trials", "0"]),
            "--cancel-trials must be at least 1"
        );
        assert_eq!(
            error(&["--resume-trials", "0"]),
            "--resume-trials must be at least 1"
        );
        assert!(error(&["--workloads", "nope"]).starts_with("unknown workload \"nope\""));
    }

    #[test]
    fn a_count_matters_only_to_what_it_counts() {
        // No trials of a latency edge that is not selected are needed.
        let s = validate(&args(&[
            "--workloads",
            "rate",
            "--cancel-trials",
            "0",
            "--resume-trials",
            "0",
        ]))
        .expect("no edge selected");
        assert!(!s.cancel && !s.resume && s.rate.contains(&Workload::Floor));
        // The bounds themselves pass.
        let s = validate(&args(&["--idle-sessions", "1"])).expect("1");
        assert!(s.idle && s.cancel && s.resume && s.long.len() == Mode::ALL.len());
        validate(&args(&["--idle-sessions", "4000"])).expect("4000");
    }

    fn rate(workload: &'static str, rps: f64, cpu_us: f64) -> ThroughputRow {
        ThroughputRow {
            workload,
            description: "",
            figures: LoadFigures {
                requests_per_sec: rps,
                server_cpu_us_per_request: cpu_us,
                ..LoadFigures::default()
            },
            rps_ratio_to_floor: 1.0,
            p50_ratio_to_floor: 1.0,
            p99_ratio_to_floor: 1.0,
            rps_ratio_min: 1.0,
            rps_ratio_max: 1.0,
        }
    }

    fn long(mode: Mode, p50: f64, p99: f64) -> long::LongFigures {
        long::LongFigures {
            mode: mode.name(),
            completion_p50_ms: p50,
            completion_p99_ms: p99,
            ..long::LongFigures::default()
        }
    }

    #[test]
    fn comparisons_are_between_the_rows_they_name() {
        let throughput = [
            rate("floor", 90_000.0, 8.0),
            rate("legacy-sse", 50_000.0, 10.0),
            rate("legacy-sse-shared", 1.0, 1.0),
            rate("legacy-sse-rmcp", 20_000.0, 30.0),
        ];
        let long_running = [
            long(Mode::Held2025, 1_000.0, 1_100.0),
            long(Mode::Held2026, 1.0, 1.0),
            long(Mode::Polling, 1_500.0, 2_100.0),
        ];
        assert_eq!(
            Compared::of(&throughput, &long_running),
            Compared {
                legacy_sse_rate_over_rmcp: Some(2.5),
                rmcp_server_cpu_over_legacy_sse: Some(3.0),
                polling_extra_latency_p50_ms: Some(500.0),
                polling_extra_latency_p99_ms: Some(1_000.0),
            }
        );
    }

    #[test]
    fn a_comparison_needs_both_rows_and_a_divisor() {
        let none = Compared {
            legacy_sse_rate_over_rmcp: None,
            rmcp_server_cpu_over_legacy_sse: None,
            polling_extra_latency_p50_ms: None,
            polling_extra_latency_p99_ms: None,
        };
        let held = || long(Mode::Held2025, 1.0, 2.0);
        let ours = [rate("legacy-sse", 50_000.0, 10.0)];
        let rmcp = [rate("legacy-sse-rmcp", 20_000.0, 30.0)];
        assert_eq!(Compared::of(&ours, &[held()]), none);
        assert_eq!(Compared::of(&rmcp, &[long(Mode::Polling, 3.0, 5.0)]), none);
        // A silent rmcp (no answer) or a server that cost nothing gives no ratio.
        let c = Compared::of(
            &[
                rate("legacy-sse", 50_000.0, 0.0),
                rate("legacy-sse-rmcp", 0.0, 30.0),
            ],
            &[held()],
        );
        assert_eq!(c, none);
    }
}
