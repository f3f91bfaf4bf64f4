//! Interop with the Python SDK (`mcp` 2.3.0, pinned in
//! `scripts/py-interop/requirements.txt`): its client
//! (`scripts/py-interop/client.py`, `mcp.Client` over
//! `streamable_http_client`) against `mcp-compat serve` at 2025-11-25 under
//! every SEP-1699 disconnect policy.
//!
//! Each run calls `countdown` with its progress events spaced wider than
//! the server's `retry` (250 ms against 100 ms), then `slow`, which stays
//! silent for ten `retry` intervals: under every policy every call must
//! complete, with every progress event exactly once (the client script
//! checks 1..=N and fails otherwise). Policies that close connections
//! early must have made the SDK resume with `Last-Event-ID`; `never` must
//! not.
//!
//! Every test is ignored by default (they need Python and the SDK, not only
//! Rust); `scripts/py-interop.sh` installs the SDK into `.cache/py-sdk`,
//! builds `mcp-compat` and runs them with `--ignored`. Environment:
//! `PY_SDK_PYTHON` (default `.cache/py-sdk/bin/python`), `MCP_COMPAT_BIN`.

mod peers;

use std::ffi::OsString;
use std::process::Command;
use std::time::Duration;

use peers::{Ran, root, serve};
use serde_json::Value;

/// The SDK version the script pins.
const SDK_VERSION: &str = "2.3.0";
/// The bound on one run of `client.py`.
const CLIENT_WAIT: Duration = Duration::from_secs(90);
/// The server's `retry`, in ms.
const RETRY_MS: &str = "100";
/// The countdown: its events are spaced wider than `retry`.
const COUNT: &str = "4";
const INTERVAL_MS: &str = "250";
/// How long `slow` stays silent: ten `retry` intervals.
const SILENT_MS: &str = "1000";

fn python() -> Command {
    let python = std::env::var_os("PY_SDK_PYTHON")
        .unwrap_or_else(|| OsString::from(root().join(".cache/py-sdk/bin/python")));
    let mut cmd = Command::new(python);
    cmd.current_dir(root());
    cmd
}

/// Fails with how to fix it when the pinned SDK is not installed.
fn require_sdk() {
    let out = python()
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output()
        .unwrap_or_else(|e| panic!("no Python for the SDK ({e}); run scripts/py-interop.sh"));
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert_eq!(
        version,
        SDK_VERSION,
        "the Python SDK is not installed at the pinned version ({}); run scripts/py-interop.sh",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `client.py URL ARGS...` to its end.
fn py_client(url: &str, args: &[&str]) -> Ran {
    let mut cmd = python();
    cmd.arg(root().join("scripts/py-interop/client.py"))
        .arg(url)
        .args(args);
    Ran::run(&format!("client.py {url} {args:?}"), cmd, CLIENT_WAIT)
}

/// The GETs with `Last-Event-ID` the SDK sent during the run.
fn resumptions(summary: &Value) -> Vec<&Value> {
    summary["http"]
        .as_array()
        .expect("the http log")
        .iter()
        .filter(|r| r["method"] == "GET" && r["lastEventId"].is_string())
        .collect()
}

/// Serves 2025-11-25 under `policy`, runs the SDK client, and checks that
/// both calls completed with every progress event once; returns the summary.
fn run_under(policy: &str) -> Value {
    require_sdk();
    let server = serve(&[
        "--revisions",
        "2025-11-25",
        "--disconnect",
        policy,
        "--retry-ms",
        RETRY_MS,
    ]);
    let ran = py_client(
        &server.url,
        &[
            "--count",
            COUNT,
            "--interval-ms",
            INTERVAL_MS,
            "--silent-ms",
            SILENT_MS,
            "--timeout-s",
            "30",
        ],
    );
    let s = &ran.summary;
    assert!(
        ran.status.success() && s["ok"] == true,
        "under {policy}: {s:#}\nstderr:\n{}",
        ran.stderr
    );
    assert_eq!(s["protocolVersion"], "2025-11-25", "{s:#}");
    assert_eq!(s["countdown"]["text"], "done", "{s:#}");
    let progress: Vec<f64> = s["countdown"]["progress"]
        .as_array()
        .expect("progress")
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0, 4.0], "{s:#}");
    assert_eq!(s["slow"]["text"], format!("slept {SILENT_MS} ms"), "{s:#}");
    ran.summary
}

mod py_client_vs_serve {
    use super::*;

    /// `never`: no connection is closed early, so the SDK never resumes.
    #[test]
    #[ignore = "needs Python and the Python SDK: run scripts/py-interop.sh"]
    fn never() {
        let s = run_under("never");
        assert!(resumptions(&s).is_empty(), "{s:#}");
    }

    crate::peers::closing_policies! {
        "needs Python and the Python SDK: run scripts/py-interop.sh", run_under;
        after_priming: "after-priming", silent_call_resumes: true;
        // Closes after two message events: a call that sends none keeps
        // its connection.
        after_events: "after-events:2", silent_call_resumes: false;
        after_ms: "after-ms:300", silent_call_resumes: true;
        idle: "idle:200", silent_call_resumes: true;
    }
}
