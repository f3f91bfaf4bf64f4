//! Interop with rmcp 3.11.0, the official Rust SDK: its client
//! (`scripts/rmcp-interop`, `ServiceExt::serve` over
//! `StreamableHttpClientTransport`) against `mcp-compat serve` at
//! 2025-11-25 under every SEP-1699 disconnect policy.
//!
//! Each run calls `countdown` with its progress events spaced wider than
//! the server's `retry` (250 ms against 100 ms), then `slow`, silent for
//! ten `retry` intervals: under every policy both calls must complete and
//! every progress event must arrive exactly once (the client checks 1..=N
//! and fails otherwise). rmcp gives no view of its HTTP requests, so unlike
//! the TypeScript and Python runs these do not count resumptions; the
//! policies that close early are the ones where a client that did not
//! resume would not complete.
//!
//! Every test is ignored by default (they need the client built from
//! crates.io); `scripts/rmcp-interop.sh` builds it into `.cache/` and runs
//! them with `--ignored`. Environment: `RMCP_CLIENT_BIN`, `MCP_COMPAT_BIN`.

mod peers;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use peers::{Ran, root, serve};
use serde_json::Value;

/// The bound on one run of the client.
const CLIENT_WAIT: Duration = Duration::from_secs(90);

fn client_bin() -> PathBuf {
    let bin = std::env::var_os("RMCP_CLIENT_BIN").map_or_else(
        || root().join(".cache/rmcp-interop/target/debug/rmcp-interop-client"),
        PathBuf::from,
    );
    assert!(
        bin.exists(),
        "the rmcp client is not built ({}); run scripts/rmcp-interop.sh",
        bin.display()
    );
    bin
}

/// Serves 2025-11-25 under `policy` and runs the rmcp client against it.
fn run_under(policy: &str) -> Value {
    let bin = client_bin();
    let server = serve(&[
        "--revisions",
        "2025-11-25",
        "--disconnect",
        policy,
        "--retry-ms",
        "100",
    ]);
    let mut cmd = Command::new(bin);
    cmd.args([server.url.as_str(), "4", "250", "1000"]);
    let ran = Ran::run(&format!("rmcp client under {policy}"), cmd, CLIENT_WAIT);
    let s = ran.summary;
    assert!(
        ran.status.success() && s["ok"] == true,
        "under {policy}: {s:#}\nstderr:\n{}",
        ran.stderr
    );
    assert_eq!(s["protocolVersion"], "2025-11-25", "{s:#}");
    assert_eq!(s["countdown"]["text"], "done", "{s:#}");
    assert_eq!(s["slow"]["text"], "slept 1000 ms", "{s:#}");
    s
}

mod rmcp_client_vs_serve {
    use super::*;

    macro_rules! policies {
        ($($name:ident: $policy:literal,)*) => {$(
            /// Both calls complete, every progress event exactly once (the
            /// client sorts them: rmcp's handlers may run out of order).
            #[test]
            #[ignore = "needs the rmcp client: run scripts/rmcp-interop.sh"]
            fn $name() {
                let s = run_under($policy);
                let progress: Vec<f64> = s["countdown"]["progress"]
                    .as_array()
                    .expect("progress")
                    .iter()
                    .filter_map(Value::as_f64)
                    .collect();
                assert_eq!(progress, [1.0, 2.0, 3.0, 4.0], "{s:#}");
            }
        )*};
    }

    policies! {
        never: "never",
        after_priming: "after-priming",
        after_events: "after-events:2",
        after_ms: "after-ms:300",
        idle: "idle:200",
    }
}
