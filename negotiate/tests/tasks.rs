//! Long-running work through one endpoint for every revision: the same
//! handler, the same negotiating client configuration (declaring the Tasks
//! extension), and each era gets what it can do — a task followed to its
//! result on 2026-07-28, the answer on the request's own stream on
//! 2025-11-25 — or, when the server serves 2025-11-25's experimental tasks
//! and the caller adds `params.task`, a task followed through
//! `tasks/result`, detachable and resumed by id through the negotiated
//! connection.

use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use mcp_negotiate::client::{NegotiateConfig, connect};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_rev_2026_07_28::server::TasksConfig;
use mcp_test_support::server::TestServer;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::{Execution, Handler, Outcome, RequestContext, ServerDescription};
use mcp_transport_core::jsonrpc::{ErrorObject, Request, to_raw};
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport};
use serde_json::{Value, json};

/// `work` may be long (it answers after a short sleep, saying whether it ran
/// as a task); everything else is `-32601`.
struct Worker;

#[async_trait]
impl Handler for Worker {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({"name": "worker", "version": "1"}),
            capabilities: json!({"tools": {}}),
            instructions: None,
        }
    }

    fn execution(&self, request: &Request) -> Execution {
        match request.method.as_str() {
            "tools/call" => Execution::MayBeLong,
            _ => Execution::Immediate,
        }
    }

    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome {
        match request.method.as_str() {
            "tools/list" => Outcome::json(&json!({"tools": [
                {"name": "work", "inputSchema": {"type": "object"}}
            ]})),
            "tools/call" => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                let how = if cx.task_id().is_some() {
                    "task"
                } else {
                    "stream"
                };
                Outcome::json(&json!({"content": [{"type": "text", "text": how}]}))
            }
            m => Outcome::Error(ErrorObject::method_not_found(m)),
        }
    }
}

async fn run(client_revisions: Vec<ProtocolVersion>) -> (ProtocolVersion, Vec<String>, String) {
    let config = MultiConfig::all();
    let server = MultiServer::new(Arc::new(Worker), with_tasks(config));
    let http = TestServer::serve(axum::Router::new().nest_service("/mcp", server.router())).await;
    let client = connect(
        NegotiateConfig::new(http.url())
            .with_revisions(client_revisions)
            .with_capabilities(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})),
    )
    .await
    .unwrap();
    let revision = client.revision();
    let params = to_raw(&json!({"name": "work", "arguments": {}})).unwrap();
    let mut stream = client
        .request("tools/call", Some(params), RequestOptions::default())
        .await
        .unwrap();
    let mut statuses = Vec::new();
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            StreamEvent::Notification(n) if n.method == "notifications/tasks" => {
                let p: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
                statuses.push(p["status"].as_str().unwrap().to_owned());
            }
            StreamEvent::Response(r) => {
                let v: Value = serde_json::from_str(r.payload.unwrap().get()).unwrap();
                text = v["content"][0]["text"].as_str().unwrap().to_owned();
            }
            _ => {}
        }
    }
    (revision, statuses, text)
}

fn with_tasks(mut config: MultiConfig) -> MultiConfig {
    config.modern = config.modern.with_tasks(Some(TasksConfig {
        poll_interval_ms: 10,
        ..TasksConfig::default()
    }));
    config
}

#[tokio::test]
async fn the_2026_client_follows_a_task_to_its_result() {
    let (revision, statuses, text) = run(ProtocolVersion::STREAMABLE.to_vec()).await;
    assert_eq!(revision, ProtocolVersion::V2026_07_28);
    assert_eq!(text, "task");
    assert_eq!(statuses.first().map(String::as_str), Some("working"));
    assert_eq!(statuses.last().map(String::as_str), Some("completed"));
}

#[tokio::test]
async fn a_legacy_session_gets_the_answer_on_its_stream() {
    let (revision, statuses, text) = run(vec![ProtocolVersion::V2025_11_25]).await;
    assert_eq!(revision, ProtocolVersion::V2025_11_25);
    assert_eq!(text, "stream");
    assert!(statuses.is_empty());
}

#[tokio::test]
async fn a_2025_11_25_task_is_followed_detached_and_resumed_through_the_connection() {
    use mcp_rev_2025_11_25::TasksExt;
    let mut config = with_tasks(MultiConfig::all());
    config.legacy = config.legacy.with_tasks(mcp_rev_2025_11_25::TasksConfig {
        poll_interval_ms: 10,
        ..mcp_rev_2025_11_25::TasksConfig::default()
    });
    let server = MultiServer::new(Arc::new(Worker), config);
    let http = TestServer::serve(axum::Router::new().nest_service("/mcp", server.router())).await;
    let client = connect(
        NegotiateConfig::new(http.url()).with_revisions(vec![ProtocolVersion::V2025_11_25]),
    )
    .await
    .unwrap();
    assert_eq!(client.revision(), ProtocolVersion::V2025_11_25);
    let params = to_raw(&json!({"name": "work", "arguments": {}, "task": {}})).unwrap();
    let mut stream = client
        .request("tools/call", Some(params), RequestOptions::default())
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert!(
        matches!(&first, StreamEvent::Notification(n) if n.method == "notifications/tasks/status"),
        "{first:?}"
    );
    let id = stream.detach_task().expect("a task");
    let r = client
        .resume_task(&id)
        .await
        .unwrap()
        .response()
        .await
        .unwrap();
    let v: Value = serde_json::from_str(r.payload.unwrap().get()).unwrap();
    assert_eq!(v["content"][0]["text"], "task");
}
