//! `mcp-compat conformance-client` against our own reference server, in
//! every era it can pin, and the binary's handling of the scenario variable.
//! (The real proof is `scripts/conformance.sh client`, which runs it against
//! the official suite's mock servers.)

use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_compat::conformance_client::{self, Options};
use mcp_compat::serve;
use mcp_test_support::TestServer;

mod common;

use common::serve_args;
use mcp_negotiate::server::MultiServer;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-compat");

/// Our reference server on 127.0.0.1:0; the task ends with the test's runtime.
async fn start() -> String {
    let server =
        MultiServer::try_new(serve::handler(), serve::config(&serve_args()).unwrap()).unwrap();
    TestServer::serve(server.route("/mcp")).await.detach()
}

fn pinned(version: Option<&str>) -> Options {
    Options {
        protocol_version: version.map(str::to_owned),
        request_timeout: Duration::from_secs(10),
        ..Options::default()
    }
}

#[tokio::test]
async fn the_generic_default_lists_and_calls_the_first_tool_in_every_era() {
    let url = start().await;
    for version in [
        None,
        Some("2025-03-26"),
        Some("2025-06-18"),
        Some("2025-11-25"),
        Some("2026-07-28"),
    ] {
        conformance_client::run_with(&url, "", pinned(version))
            .await
            .unwrap_or_else(|e| panic!("{version:?}: {e}"));
    }
}

#[tokio::test]
async fn a_list_only_scenario_runs_on_a_legacy_session_and_on_2026_07_28() {
    let url = start().await;
    for version in ["2025-11-25", "2026-07-28"] {
        conformance_client::run_with(&url, "json-schema-ref-no-deref", pinned(Some(version)))
            .await
            .unwrap_or_else(|e| panic!("{version}: {e}"));
    }
}

#[tokio::test]
async fn a_server_that_is_not_there_is_a_clear_error() {
    // Bind and drop, so the port is (very likely) closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = conformance_client::run_with(
        &format!("http://127.0.0.1:{port}/mcp"),
        "tools_call",
        pinned(None),
    )
    .await
    .unwrap_err();
    assert!(err.contains("cannot connect"), "{err}");
}

#[test]
fn an_unknown_scenario_exits_non_zero_naming_the_known_ones() {
    let out = Command::new(BIN)
        .args(["conformance-client", "http://127.0.0.1:9/mcp"])
        .env(conformance_client::SCENARIO_ENV, "no-such-scenario")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-compat");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unknown conformance scenario \"no-such-scenario\"")
            && stderr.contains("sse-retry"),
        "{stderr}"
    );
}

#[test]
fn help_lists_every_subcommand_including_the_conformance_client() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for sub in [
        "serve",
        "call",
        "matrix",
        "bench",
        "check-server",
        "check-client",
        "conformance-client",
    ] {
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with(&format!("{sub} "))),
            "{sub} missing from --help:\n{help}"
        );
    }
}

/// Runs the binary against `url` with `env` set (every other suite
/// variable removed); its exit status and stderr.
async fn run_binary(url: &str, env: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(["conformance-client", url])
        .env_remove(conformance_client::SCENARIO_ENV)
        .env_remove(conformance_client::PROTOCOL_VERSION_ENV)
        .env_remove(conformance_client::CONTEXT_ENV)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run mcp-compat"))
        .await
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The suite's variables as the binary reads them: the pinned revision
/// (and the older legacy ones) offered, a blank one taken as unset, a
/// context that is not JSON refused before anything is sent.
#[tokio::test]
async fn the_binary_reads_the_suite_s_environment() {
    let url = start().await;
    let (ok, stderr) = run_binary(
        &url,
        &[(conformance_client::PROTOCOL_VERSION_ENV, "2025-06-18")],
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("offering 2025-06-18, 2025-03-26\n"),
        "{stderr}"
    );
    let (ok, stderr) = run_binary(&url, &[(conformance_client::PROTOCOL_VERSION_ENV, " ")]).await;
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("offering 2026-07-28, 2025-11-25"),
        "{stderr}"
    );
    let (ok, stderr) = run_binary(&url, &[(conformance_client::CONTEXT_ENV, "{not json")]).await;
    assert!(!ok);
    assert!(
        stderr.contains("MCP_CONFORMANCE_CONTEXT is not JSON"),
        "{stderr}"
    );
}
