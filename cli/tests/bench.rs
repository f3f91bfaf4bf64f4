//! `mcp-compat bench --quick` runs end to end (issue 19): every workload
//! completes with correct answers and the JSON report has every figure,
//! each greater than zero. No timing is asserted: speed is for the
//! benchmark itself (`docs/PERFORMANCE.md`).

use std::process::Command;
use std::time::Duration;

use mcp_test_support::process::run_to_end;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-compat");
/// A bound on the whole run, so a hang fails instead of blocking.
const WAIT: Duration = Duration::from_secs(180);

fn positive(v: &Value, key: &str, what: &str) {
    let x = v
        .get(key)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{what}: no figure {key} in {v}"));
    assert!(x > 0.0, "{what}: {key} = {x}, expected > 0");
}

#[test]
fn quick_bench_reports_every_figure() {
    let mut cmd = Command::new(BIN);
    cmd.args(["bench", "--quick", "--format", "json"])
        .env_remove("RUST_LOG");
    let out = run_to_end("mcp-compat bench --quick", &mut cmd, WAIT);
    assert!(out.status.success(), "bench failed: {}", out.stderr);
    // Every server child exits through its own shutdown on SIGTERM (an
    // instrumented build writes its profile only then: scripts/pgo-build.sh).
    assert!(
        !out.stderr
            .contains("did not exit through its shutdown on SIGTERM"),
        "a server child did not shut down on SIGTERM: {}",
        out.stderr
    );
    let report: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout));

    positive(&report["machine"], "cpus", "machine");
    assert_eq!(report["machine"]["rounds"], 2, "quick mode's rounds");
    let rows = report["throughput"].as_array().expect("throughput rows");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["workload"].as_str()).collect();
    assert_eq!(
        names,
        [
            "floor",
            "floor-edge",
            "modern-json",
            "modern-sse",
            "legacy-json",
            "legacy-sse",
            "legacy-sse-shared"
        ]
    );
    for r in rows {
        let what = r["workload"].as_str().unwrap_or("?");
        for key in [
            "requests_per_sec",
            "requests",
            "p50_us",
            "p99_us",
            "server_cpu_us_per_request",
            "client_cpu_us_per_request",
            "rps_ratio_to_floor",
            "p50_ratio_to_floor",
            "p99_ratio_to_floor",
            "rps_ratio_min",
            "rps_ratio_max",
        ] {
            positive(r, key, what);
        }
        // Quick mode runs two rounds; the row's ratio is one of them.
        let (lo, mid, hi) = (
            r["rps_ratio_min"].as_f64().unwrap_or(0.0),
            r["rps_ratio_to_floor"].as_f64().unwrap_or(0.0),
            r["rps_ratio_max"].as_f64().unwrap_or(0.0),
        );
        assert!(lo <= mid && mid <= hi, "{what}: {lo} ≤ {mid} ≤ {hi}");
        assert_eq!(r["errors"], 0, "{what}: wrong answers: {r}");
    }

    let idle = &report["idle_sessions"];
    for key in [
        "sessions",
        "rss_before_kib",
        "rss_after_kib",
        "bytes_per_idle_session",
    ] {
        positive(idle, key, "idle sessions");
    }

    let cancel = &report["cancel_by_close"];
    assert_eq!(
        cancel["trials"], 50,
        "quick mode's cancel-by-close trials: {cancel}"
    );
    for key in ["p50_us", "p99_us", "max_us"] {
        positive(cancel, key, "cancel-by-close");
    }

    let resume = &report["resume_after_disconnect"];
    assert_eq!(resume["trials"], 50, "quick mode's resume trials: {resume}");
    for key in ["p50_us", "p99_us", "max_us"] {
        positive(resume, key, "resume after disconnect");
    }

    let long = report["long_running"]
        .as_array()
        .expect("long-running rows");
    let modes: Vec<&str> = long.iter().filter_map(|r| r["mode"].as_str()).collect();
    assert_eq!(modes, ["held-2025", "held-2026", "polling", "tasks"]);
    for r in long {
        let mode = r["mode"].as_str().unwrap_or("?");
        assert_eq!(
            r["completed"], r["requests"],
            "{mode}: not all completed: {r}"
        );
        assert_eq!(r["errors"], 0, "{mode}: {r}");
        for key in [
            "completed",
            "http_requests_per_request",
            "completion_p50_ms",
            "completion_p99_ms",
            "server_rss_idle_kib",
            "server_rss_peak_kib",
            "server_bytes_per_pending_request",
            "server_rss_midway_kib",
            "server_fds_idle",
            "server_fds_midway",
            "server_fds_peak",
            "server_cpu_ms_per_request",
            "client_cpu_ms_per_request",
        ] {
            positive(r, key, mode);
        }
        // One progress notification per second of work, except for tasks
        // (`slow` sends none); polling needs more than one HTTP request.
        let progress = r["progress_per_request"].as_f64().unwrap_or(-1.0);
        let http = r["http_requests_per_request"].as_f64().unwrap_or(0.0);
        match mode {
            "tasks" => assert!(http > 1.0, "{mode}: {r}"),
            "polling" => assert!(progress == 1.0 && http > 1.0, "{mode}: {r}"),
            _ => assert!(progress == 1.0 && http == 1.0, "{mode}: {r}"),
        }
    }
    for key in [
        "polling_extra_latency_p50_ms",
        "polling_extra_latency_p99_ms",
    ] {
        assert!(report[key].is_number(), "no {key} in the report");
    }
}

/// `legacy-sse-rmcp` drives rmcp 3.11's server (the `peers/rmcp` adapter)
/// with `legacy-sse`'s load in the same run, every answer checked, and
/// reports the ratio. Runs where the adapter is built: `.ci/run` builds
/// it (`peers/rmcp/install.sh`, debug) before the tests; `RMCP_PEER_SERVER`
/// names another build.
#[test]
fn quick_bench_against_rmcp() {
    let exe = std::env::var_os("RMCP_PEER_SERVER")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../.cache/peer-rmcp/debug/rmcp-peer-server")
        });
    if !exe.exists() {
        eprintln!(
            "skipped: no rmcp adapter at {} (peers/rmcp/install.sh)",
            exe.display()
        );
        return;
    }
    let mut cmd = Command::new(BIN);
    cmd.args([
        "bench",
        "--quick",
        "--format",
        "json",
        "--workloads",
        "legacy-sse,legacy-sse-rmcp",
        "--rmcp-server",
    ])
    .arg(&exe)
    .env_remove("RUST_LOG");
    let out = run_to_end("mcp-compat bench against rmcp", &mut cmd, WAIT);
    assert!(out.status.success(), "bench failed: {}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout));
    let rows = report["throughput"].as_array().expect("throughput rows");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["workload"].as_str()).collect();
    assert_eq!(names, ["floor", "legacy-sse", "legacy-sse-rmcp"]);
    for r in rows {
        let what = r["workload"].as_str().unwrap_or("?");
        positive(r, "requests", what);
        positive(r, "server_cpu_us_per_request", what);
        assert_eq!(r["errors"], 0, "{what}: wrong answers: {r}");
    }
    positive(&report, "legacy_sse_rate_over_rmcp", "report");
    positive(&report, "rmcp_server_cpu_over_legacy_sse", "report");
}

/// Runs `bench ARGS` and expects it to fail with `cause` on stderr.
fn refused(args: &[&str], cause: &str) {
    let mut cmd = Command::new(BIN);
    cmd.arg("bench").args(args).env_remove("RUST_LOG");
    let out = run_to_end("mcp-compat bench", &mut cmd, WAIT);
    assert!(!out.status.success(), "{args:?} succeeded: {}", out.stdout);
    assert!(
        out.stderr.contains(cause),
        "{args:?}: expected {cause:?} in {}",
        out.stderr
    );
}

/// `--store URL` reaches every `serve` child, the request-rate ones and
/// the long-running ones: with nothing listening at the URL, each child
/// refuses to start and the run fails saying why (measured on the
/// in-memory store instead, it would pass). Port 1 on loopback: nothing
/// listens there.
#[test]
fn the_store_reaches_every_server_child() {
    for workload in ["modern-json", "held-2025"] {
        refused(
            &[
                "--quick",
                "--workloads",
                workload,
                "--store",
                "redis://127.0.0.1:1/0",
            ],
            "--store redis://127.0.0.1:1/0: Redis is unavailable",
        );
    }
}

/// A long-running workload larger than the open-file limit allows is
/// refused before anything runs, saying what to raise.
#[test]
fn long_requests_beyond_the_open_file_limit_are_refused_at_once() {
    refused(
        &["--workloads", "held-2025", "--long-requests", "100000000"],
        "--long-requests 100000000 needs about 100000512 open files",
    );
}
