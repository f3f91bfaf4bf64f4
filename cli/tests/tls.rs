//! `call` and `check-server` over https, as a user runs them: the
//! reference server behind a local rustls server whose self-signed
//! certificate is made in the test, trusted with `--ca-cert`; and
//! `--header` reaching every request.

use std::process::Command;
use std::time::Duration;

use mcp_compat::serve;
use mcp_test_support::process::{Finished, run_to_end};
use mcp_test_support::{Hits, TlsServer};
use serde_json::Value;

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-compat");
const WAIT: Duration = Duration::from_secs(60);

/// Runs the binary to its end off the runtime's threads (the server under
/// test runs on them).
async fn run(args: Vec<String>) -> Finished {
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(BIN);
        cmd.args(&args).env_remove("RUST_LOG");
        run_to_end(&format!("mcp-compat {args:?}"), &mut cmd, WAIT)
    })
    .await
    .unwrap()
}

/// The reference server over TLS, every exchange recorded; and the
/// certificate's PEM file.
async fn reference_over_tls() -> (TlsServer, Hits, tempfile_path::Path) {
    let server = serve::build(serve::config(&common::serve_args()).unwrap()).unwrap();
    let hits = Hits::default();
    let tls = TlsServer::serve(hits.record(server.route("/mcp"))).await;
    let pem = tempfile_path::Path::write(&tls.cert_pem);
    (tls, hits, pem)
}

/// A file removed on drop (no extra crate for one temporary file).
mod tempfile_path {
    pub struct Path(pub std::path::PathBuf);

    impl Path {
        pub fn write(text: &str) -> Path {
            use std::sync::atomic::{AtomicU32, Ordering};
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let p = std::env::temp_dir().join(format!(
                "mcp-compat-tls-{}-{}.pem",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::write(&p, text).unwrap();
            Path(p)
        }

        pub fn arg(&self) -> String {
            self.0.display().to_string()
        }
    }

    impl Drop for Path {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_over_https_with_ca_cert_and_header() {
    let (tls, hits, pem) = reference_over_tls().await;
    for revisions in ["2025-11-25", "2026-07-28"] {
        let ran = run(vec![
            "call".into(),
            tls.url("/mcp"),
            "--revisions".into(),
            revisions.into(),
            "--ca-cert".into(),
            pem.arg(),
            "--header".into(),
            "Authorization: Bearer s3cret".into(),
            "--tool".into(),
            "add".into(),
            "--args".into(),
            r#"{"a":2,"b":3}"#.into(),
        ])
        .await;
        assert!(ran.ok(), "{revisions}: {ran:?}");
        let result: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
        assert_eq!(result["content"][0]["text"], "5", "{result}");
    }
    let all = hits.all();
    assert!(all.len() >= 4, "{all:#?}");
    let missing: Vec<_> = all
        .iter()
        .filter(|h| {
            h.headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer s3cret")
        })
        .map(|h| format!("{} {:?}", h.method, h.rpc_method))
        .collect();
    assert!(missing.is_empty(), "without --header's value: {missing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_over_https_without_trusting_the_certificate_fails_on_it() {
    let (tls, _hits, _pem) = reference_over_tls().await;
    let ran = run(vec![
        "call".into(),
        tls.url("/mcp"),
        "--tool".into(),
        "echo".into(),
    ])
    .await;
    assert!(!ran.ok(), "{ran:?}");
    assert!(!ran.stderr.contains("scheme is not http"), "{}", ran.stderr);
    assert!(ran.stderr.contains("cannot connect"), "{}", ran.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_server_over_https() {
    let (tls, hits, pem) = reference_over_tls().await;
    let ran = run(vec![
        "check-server".into(),
        tls.url("/mcp"),
        "--ca-cert".into(),
        pem.arg(),
        "--header".into(),
        "X-Probe: yes".into(),
        "--format".into(),
        "json".into(),
    ])
    .await;
    let report: Value =
        serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("{e}: {ran:?}"));
    assert_eq!(
        report["speaks"],
        serde_json::json!(["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]),
        "{}",
        ran.stdout
    );
    assert_eq!(report["passed"], true, "{}", ran.stdout);
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert!(
        hits.all()
            .iter()
            .all(|h| h.headers.get("x-probe").is_some_and(|v| v == "yes")),
        "a request without --header"
    );
}
