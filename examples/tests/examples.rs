//! The examples run as a user runs them: each server as a child process
//! (its first stdout line names the endpoint), the client against it, and
//! the negotiating client of the library against each server in every era.

use std::process::Command;
use std::time::Duration;

use http::HeaderValue;
use http::header::AUTHORIZATION;
use mcp_negotiate::client::{NegotiateConfig, connect};
use mcp_test_support::process::{Finished, Listening, run_to_end};
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

fn start(bin: &str, args: &[&str]) -> Listening {
    let mut cmd = Command::new(bin);
    cmd.args(args).env_remove("RUST_LOG");
    Listening::spawn(bin, &mut cmd, WAIT)
}

async fn run(bin: &'static str, args: Vec<String>) -> Finished {
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(bin);
        cmd.args(&args).env_remove("RUST_LOG");
        run_to_end(bin, &mut cmd, WAIT)
    })
    .await
    .unwrap()
}

/// `add(2, 3)` through a negotiating client limited to `revision`.
async fn add_at(url: &str, revision: V, token: Option<&str>) -> Result<String, String> {
    let mut config = NegotiateConfig::new(url).with_revisions(vec![revision.clone()]);
    if let Some(t) = token {
        config = config.with_header(
            AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {t}")).unwrap(),
        );
    }
    let conn = connect(config).await.map_err(|e| e.to_string())?;
    assert_eq!(conn.revision(), revision);
    let params = to_raw(&json!({ "name": "add", "arguments": { "a": 2, "b": 3 } })).unwrap();
    let response = conn
        .request("tools/call", Some(params), RequestOptions::default())
        .await
        .map_err(|e| e.to_string())?
        .response()
        .await
        .map_err(|e| e.to_string())?;
    let v: Value =
        serde_json::from_str(response.payload.map_err(|e| e.to_string())?.get()).unwrap();
    conn.close().await.map_err(|e| e.to_string())?;
    Ok(v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minimal_server_answers_every_streamable_revision_and_stops_on_sigterm() {
    let mut server = start(env!("CARGO_BIN_EXE_minimal_server"), &[]);
    for revision in [
        V::V2025_03_26,
        V::V2025_06_18,
        V::V2025_11_25,
        V::V2026_07_28,
    ] {
        assert_eq!(
            add_at(&server.url, revision.clone(), None).await.as_deref(),
            Ok("5"),
            "{revision}"
        );
    }
    server.signal("TERM");
    let status = server.wait_exit(WAIT);
    assert_eq!(status.code(), Some(0), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn minimal_client_calls_the_minimal_server() {
    let server = start(env!("CARGO_BIN_EXE_minimal_server"), &[]);
    let ran = run(
        env!("CARGO_BIN_EXE_minimal_client"),
        vec![server.url.clone()],
    )
    .await;
    assert!(ran.ok(), "{ran:?}");
    assert!(
        ran.stdout.contains("revision: 2026-07-28"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains(r#"add(2, 3) = "5""#), "{}", ran.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_era_server_serves_every_era_behind_its_token() {
    let server = start(
        env!("CARGO_BIN_EXE_every_era_server"),
        &["127.0.0.1:0", "t0ken"],
    );
    let mcp = server.url.clone();
    let sse = mcp.replace("/mcp", "/sse");
    // The app's own route, outside the MCP layers.
    let health = reqwest::get(mcp.replace("/mcp", "/health")).await.unwrap();
    assert_eq!(health.status(), 200);
    // No token: 401 from the auth layer, in every era.
    let refused = add_at(&mcp, V::V2025_11_25, None).await.unwrap_err();
    assert!(refused.contains("401"), "{refused}");
    for revision in [
        V::V2025_03_26,
        V::V2025_06_18,
        V::V2025_11_25,
        V::V2026_07_28,
    ] {
        assert_eq!(
            add_at(&mcp, revision.clone(), Some("t0ken"))
                .await
                .as_deref(),
            Ok("5"),
            "{revision}"
        );
    }
    assert_eq!(
        add_at(&sse, V::V2024_11_05, Some("t0ken")).await.as_deref(),
        Ok("5")
    );
    // And the example client, through the HTTP+SSE fallback.
    let ran = run(
        env!("CARGO_BIN_EXE_minimal_client"),
        vec![sse, "t0ken".into()],
    )
    .await;
    assert!(ran.ok(), "{ran:?}");
    assert!(
        ran.stdout.contains("revision: 2024-11-05"),
        "{}",
        ran.stdout
    );
}

/// Calls `tool` through a client limited to `revision`; the result's text
/// and the progress values that arrived on the way.
async fn call_at(url: &str, revision: V, tool: &str, args: Value) -> (String, Vec<f64>) {
    let config = NegotiateConfig::new(url).with_revisions(vec![revision.clone()]);
    let conn = connect(config).await.unwrap();
    let params = to_raw(&json!({ "name": tool, "arguments": args })).unwrap();
    let options = RequestOptions {
        progress: true,
        ..RequestOptions::default()
    };
    let mut progress = Vec::new();
    let response = conn
        .request("tools/call", Some(params), options)
        .await
        .unwrap()
        .response_with(|event| {
            if let StreamEvent::Notification(n) = event
                && n.method == "notifications/progress"
            {
                let p: Value = serde_json::from_str(n.params.as_ref().unwrap().get()).unwrap();
                progress.push(p["progress"].as_f64().unwrap());
            }
        })
        .await
        .unwrap();
    let v: Value = serde_json::from_str(response.payload.unwrap().get()).unwrap();
    conn.close().await.unwrap();
    let text = v["content"][0]["text"].as_str().unwrap().to_owned();
    (text, progress)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_running_server_closes_the_connection_and_the_client_resumes_from_the_custom_store() {
    let server = start(env!("CARGO_BIN_EXE_long_running_server"), &[]);
    let stats = |s: String| -> Value { serde_json::from_str(&s).unwrap() };
    let (before, _) = call_at(&server.url, V::V2025_11_25, "store_stats", json!({})).await;
    assert_eq!(stats(before)["resumes"], 0);
    // 2025-11-25: the tool closes the connection after step 1; the client
    // resumes, and the events sent while it was away come from the store.
    let (text, progress) = call_at(
        &server.url,
        V::V2025_11_25,
        "crunch",
        json!({ "steps": 4, "step_ms": 150 }),
    )
    .await;
    assert_eq!(text, "crunched 4 steps");
    assert_eq!(progress, [1.0, 2.0, 3.0, 4.0]);
    let (after, _) = call_at(&server.url, V::V2025_11_25, "store_stats", json!({})).await;
    let after = stats(after);
    assert!(after["resumes"].as_u64().unwrap() >= 1, "{after}");
    // The 4 progress events and the result went through the custom store.
    assert!(after["appends"].as_u64().unwrap() >= 5, "{after}");
    // 2026-07-28: closing would cancel, so the stream is held.
    let (text, progress) = call_at(
        &server.url,
        V::V2026_07_28,
        "crunch",
        json!({ "steps": 2, "step_ms": 50 }),
    )
    .await;
    assert_eq!(text, "crunched 2 steps");
    assert_eq!(progress, [1.0, 2.0]);
}
