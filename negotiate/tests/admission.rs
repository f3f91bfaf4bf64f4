//! One bound on running work for the whole dual-era endpoint
//! (`MultiConfig::running`): both engines count their handlers against one
//! `Admission`, so a request of either era is refused (503, `-32603`
//! naming the limit) while the other era's handlers fill it, and served
//! again once they end. Two engines with a budget each would let the
//! endpoint run twice its limit.

use std::sync::Arc;

use mcp_negotiate::client::{Connection, NegotiateConfig, connect};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_test_support::TestHandler;
use mcp_test_support::handler::{Call, tool_fn};
use mcp_test_support::server::TestServer;
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::admission::RunLimits;
use mcp_transport_core::handler::Outcome;
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::{RequestOptions, Transport};
use serde_json::json;
use tokio::sync::Semaphore;

/// `gate` answers once the test opens the gate (one permit a call);
/// `echo` answers at once.
fn handler(gate: Arc<Semaphore>) -> TestHandler {
    TestHandler::builder("admission-test")
        .capabilities(json!({ "tools": {} }))
        .tool(
            "gate",
            tool_fn(move |_: Call| {
                let gate = gate.clone();
                async move {
                    gate.acquire().await.unwrap().forget();
                    Outcome::json(&json!({ "content": [{ "type": "text", "text": "opened" }] }))
                }
            }),
        )
        .tool(
            "echo",
            tool_fn(|_: Call| async {
                Outcome::json(&json!({ "content": [{ "type": "text", "text": "echo" }] }))
            }),
        )
        .build()
}

struct Endpoint {
    server: MultiServer,
    gate: Arc<Semaphore>,
    http: TestServer,
}

async fn start(config: MultiConfig) -> Endpoint {
    let gate = Arc::new(Semaphore::new(0));
    let server = MultiServer::new(Arc::new(handler(gate.clone())), config);
    let http = TestServer::serve(server.route("/mcp")).await;
    Endpoint { server, gate, http }
}

async fn client(e: &Endpoint, revision: V) -> Connection {
    let conn = connect(NegotiateConfig::new(e.http.url()).with_revisions(vec![revision.clone()]))
        .await
        .unwrap();
    assert_eq!(conn.negotiated().revision, revision);
    conn
}

/// Calls `tool` and waits for its answer: its text, or the error's (the
/// 2025-11-25 client reports the 503 as an HTTP error; the 2026-07-28 one
/// hands over the JSON-RPC error the answer carries).
async fn call(conn: &Connection, tool: &str) -> Result<String, String> {
    let params = to_raw(&json!({ "name": tool, "arguments": {} })).unwrap();
    let pending = conn
        .request("tools/call", Some(params), RequestOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let resp = pending.response().await.map_err(|e| e.to_string())?;
    match resp.payload {
        Ok(result) => Ok(result.get().to_owned()),
        Err(e) => Err(format!("{} {}", e.code, e.message)),
    }
}

async fn until_running(e: &Endpoint, n: usize) {
    for _ in 0..500 {
        if e.server.running_requests() == n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("{n} handlers never ran: {}", e.server.running_requests());
}

/// `holder`'s era fills the budget of one with a `gate` call; `other`'s
/// request is refused until the gate opens.
async fn one_budget(holder: V, other: V) {
    let e = start(MultiConfig::all().with_max_running(1)).await;
    let held = client(&e, holder.clone()).await;
    let refused = client(&e, other.clone()).await;
    let held = tokio::spawn(async move { call(&held, "gate").await });
    until_running(&e, 1).await;

    let err = call(&refused, "echo").await.unwrap_err();
    assert!(
        err.contains("maximum of 1 requests"),
        "{holder} holding, {other} refused: {err}"
    );
    assert_eq!(e.server.running_requests(), 1);

    e.gate.add_permits(1);
    assert!(held.await.unwrap().unwrap().contains("opened"));
    until_running(&e, 0).await;
    assert!(call(&refused, "echo").await.unwrap().contains("echo"));
}

#[tokio::test]
async fn a_stateless_request_fills_the_budget_of_a_session_one() {
    one_budget(V::V2026_07_28, V::V2025_11_25).await;
}

#[tokio::test]
async fn a_session_request_fills_the_budget_of_a_stateless_one() {
    one_budget(V::V2025_11_25, V::V2026_07_28).await;
}

#[tokio::test]
async fn both_engines_report_the_shared_limits() {
    let limits = RunLimits {
        max_running: 7,
        max_running_bytes: 9_000,
    };
    let mut config = MultiConfig::all()
        .with_max_running(7)
        .with_max_running_bytes(9_000);
    // The engines' own fields are overwritten by the endpoint's.
    config.legacy.running = RunLimits::default().with_max_running(1);
    let e = start(config).await;
    assert_eq!(e.server.legacy().unwrap().config().running, limits);
    assert_eq!(e.server.modern().unwrap().config().running, limits);
}
