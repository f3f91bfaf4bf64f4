//! What the real-peer tests (`ts_sdk.rs`, `py_sdk.rs`) share: the
//! workspace's paths, the `mcp-compat` binary, long-running peers (a
//! server that announces its URL) and one-shot clients that print a JSON
//! summary as their last stdout line.
//!
//! Every child process is killed when its test ends, however it ends
//! (`mcp_test_support::process`), and every wait is bounded.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use mcp_test_support::process::{Finished, Listening, run_to_end};
use serde_json::Value;

/// The bound on any one step: a process starting, a call, an event showing up.
pub const WAIT: Duration = Duration::from_secs(30);

/// The workspace's root folder.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// The `mcp-compat` binary: `MCP_COMPAT_BIN`, else the newest of
/// `target/{debug,release}/mcp-compat` (`CARGO_TARGET_DIR` honoured).
pub fn mcp_compat() -> PathBuf {
    if let Some(bin) = std::env::var_os("MCP_COMPAT_BIN") {
        return PathBuf::from(bin);
    }
    let target = match std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from) {
        Some(t) if t.is_absolute() => t,
        Some(t) => root().join(t),
        None => root().join("target"),
    };
    ["debug", "release"]
        .iter()
        .map(|profile| target.join(profile).join("mcp-compat"))
        .filter_map(|p| {
            let modified = p.metadata().and_then(|m| m.modified()).ok()?;
            Some((modified, p))
        })
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| {
            panic!(
                "no mcp-compat binary under {}: run `cargo build -p mcp-compat` or set MCP_COMPAT_BIN",
                target.display()
            )
        })
}

/// `mcp-compat serve --bind 127.0.0.1:0 ARGS...`.
pub fn serve(args: &[&str]) -> Peer {
    let mut cmd = Command::new(mcp_compat());
    cmd.args(["serve", "--bind", "127.0.0.1:0"]).args(args);
    Peer::spawn("mcp-compat serve", cmd)
}

/// A long-running peer (an SDK's server, `mcp-compat serve`): its URL from
/// the first stdout line `listening on http://…`, its stderr lines
/// collected; killed on drop (its stderr is printed when the test failed).
pub struct Peer {
    name: &'static str,
    process: Listening,
}

impl std::ops::Deref for Peer {
    type Target = Listening;

    fn deref(&self) -> &Listening {
        &self.process
    }
}

impl Peer {
    /// Starts `cmd` and waits (bounded) for its `listening on` line.
    pub fn spawn(name: &'static str, mut cmd: Command) -> Peer {
        cmd.env_remove("RUST_LOG");
        Peer {
            name,
            process: Listening::spawn(name, &mut cmd, WAIT),
        }
    }

    /// The JSON objects the peer wrote on stderr so far (other lines skipped).
    pub fn events(&self) -> Vec<Value> {
        self.process
            .stderr_lines()
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(Value::is_object)
            .collect()
    }

    /// Waits (bounded) until an event matching `pred` has been logged.
    pub async fn wait_event(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(e) = self.events().into_iter().find(|e| pred(e)) {
                return e;
            }
            assert!(
                Instant::now() < deadline,
                "{}: no {what} logged within {WAIT:?}",
                self.name
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// What a run of a one-shot client script left.
#[derive(Debug)]
pub struct Ran {
    /// Its exit status.
    pub status: ExitStatus,
    /// The JSON summary (its last stdout line).
    pub summary: Value,
    /// Everything it wrote on stderr.
    pub stderr: String,
}

impl Ran {
    /// Runs `cmd` to its end (at most `wait`) and reads its summary; fails
    /// the test when it printed none.
    pub fn run(name: &str, mut cmd: Command, wait: Duration) -> Ran {
        let Finished {
            status,
            stdout,
            stderr,
            ..
        } = run_to_end(name, &mut cmd, wait);
        let last = stdout.lines().rev().find(|l| !l.trim().is_empty());
        let summary = last
            .and_then(|l| serde_json::from_str(l).ok())
            .unwrap_or_else(|| {
                panic!("{name} printed no JSON summary (exit {status}); stdout:\n{stdout}\nstderr:\n{stderr}")
            });
        Ran {
            status,
            summary,
            stderr,
        }
    }
}

/// One ignored `#[test]` per SEP-1699 disconnect policy that closes
/// connections early (issue 18, "Real clients under every policy"): `run`
/// serves 2025-11-25 under the policy, runs the SDK client (a countdown
/// with events spaced wider than `retry`, then a call silent for several
/// `retry`s) and returns its summary, having checked that every call
/// completed with every progress event once; each test then checks that
/// the SDK resumed with `Last-Event-ID` during the countdown, and during
/// the silent call exactly when the policy closes connections that carry
/// no event. (Not every test binary that includes this module uses it.)
#[allow(unused_macros)]
macro_rules! closing_policies {
    ($why:literal, $run:path; $($name:ident: $policy:literal, silent_call_resumes: $slow:literal;)*) => {$(
        #[doc = concat!("`--disconnect ", $policy, "`: every call completes; the SDK resumed.")]
        #[test]
        #[ignore = $why]
        fn $name() {
            let s = $run($policy);
            assert!(s["countdown"]["resumptions"].as_u64() >= Some(1), "{s:#}");
            let slow = s["slow"]["resumptions"].as_u64().unwrap_or(0);
            assert_eq!(slow >= 1, $slow, "{s:#}");
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use closing_policies;
