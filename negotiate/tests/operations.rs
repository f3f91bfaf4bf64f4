//! The server-wide operations of `MultiServer` reach both eras and count
//! what they reached: `publish` (a change notification to every listening
//! stream), `drain` (the streams a graceful shutdown ends) and
//! `abandon_after` (the leased requests still running when it ends).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use mcp_negotiate::client::{NegotiateConfig, connect};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_test_support::handler::tools;
use mcp_test_support::{TestHandler, TestServer, within};
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::jsonrpc::{Message, Notification, to_raw};
use mcp_transport_core::lease::{Leases, MemoryLeaseStore};
use mcp_transport_core::transport::{ListenFilter, RequestOptions, Transport};
use serde_json::json;

/// Every revision, the legacy engine with in-memory leases; tools that
/// announce list changes, and `slow`.
async fn serve() -> (MultiServer, TestServer) {
    let handler = TestHandler::builder("operations")
        .capabilities(json!({ "tools": { "listChanged": true } }))
        .tool("slow", tools::slow(60_000))
        .build();
    let mut config = MultiConfig::all();
    config.legacy.leases = Some(Leases::new(Arc::new(MemoryLeaseStore::default())));
    let server = MultiServer::new(Arc::new(handler), config);
    let http = TestServer::serve(server.route("/mcp")).await;
    (server, http)
}

fn tools_changed() -> Notification {
    Notification {
        method: "notifications/tools/list_changed".into(),
        params: None,
    }
}

/// The method of the next message of `messages`.
async fn next_method(messages: &mut mcp_transport_core::transport::ServerMessages) -> String {
    match within("a server message", messages.next()).await {
        Some(Ok(Message::Notification(n))) => n.method,
        other => panic!("not a notification: {other:?}"),
    }
}

#[tokio::test]
async fn publish_drain_and_abandon_count_what_they_reached_in_both_eras() {
    let (server, http) = serve().await;
    let filter = ListenFilter {
        tools_list_changed: true,
        ..Default::default()
    };
    let legacy = connect(NegotiateConfig::new(http.url()).with_revisions(vec![V::V2025_06_18]))
        .await
        .unwrap();
    let mut legacy_messages = legacy.listen(filter.clone()).await.unwrap();
    let modern = connect(NegotiateConfig::new(http.url()).with_revisions(vec![V::V2026_07_28]))
        .await
        .unwrap();
    let mut modern_messages = modern.listen(filter).await.unwrap();

    // One stream in each era: the notification is queued on both, and
    // both clients get it.
    assert_eq!(server.publish(&tools_changed()).await, 2);
    assert_eq!(
        next_method(&mut legacy_messages).await,
        "notifications/tools/list_changed"
    );
    assert_eq!(
        next_method(&mut modern_messages).await,
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(
        next_method(&mut modern_messages).await,
        "notifications/tools/list_changed"
    );

    // A request running under a lease, answered as an SSE stream.
    let call = to_raw(&json!({ "name": "slow", "arguments": {} })).unwrap();
    let running = legacy
        .request("tools/call", Some(call), RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(server.running_requests(), 1);
    // The drain ends both listening streams (the GET stream of the
    // 2025-06-18 session and the `subscriptions/listen` stream); the
    // request's stream goes on.
    assert_eq!(server.drain().await, 2);
    // Dropped unread: the client does not open a new GET stream (it would
    // on its next read), so the drained one stays this instance's.
    drop(legacy_messages);
    // The end of the grace period abandons what this instance still
    // writes under a lease: the GET stream (unfinished, its connection
    // gone) and the running request, whose client gets a `-32603`.
    assert_eq!(server.abandon_after(Duration::ZERO).await, 2);
    let answer = within("the abandoned request's answer", running.response())
        .await
        .unwrap();
    let error = answer.payload.expect_err("an error response");
    assert_eq!(error.code, -32603, "{error:?}");
    assert_eq!(
        server.abandon_after(Duration::ZERO).await,
        0,
        "nothing left"
    );
}

/// `legacy_config` is the engine's default configuration with every
/// legacy revision's implementation registered, so a `ServerConfig` built
/// from it serves all three.
#[test]
fn the_legacy_config_implements_every_legacy_revision() {
    let config = mcp_negotiate::server::legacy_config();
    for v in [V::V2025_03_26, V::V2025_06_18, V::V2025_11_25] {
        assert!(config.revision(&v).is_some(), "{v}");
    }
}

/// A server's `Debug` says which engines it runs.
#[test]
fn a_servers_debug_names_its_engines() {
    let handler = Arc::new(TestHandler::builder("operations").build());
    let both = MultiServer::new(handler.clone(), MultiConfig::all());
    assert_eq!(
        format!("{both:?}"),
        "MultiServer { legacy: true, modern: true }"
    );
    let modern = MultiServer::new(handler, MultiConfig::revisions([V::V2026_07_28]));
    assert_eq!(
        format!("{modern:?}"),
        "MultiServer { legacy: false, modern: true }"
    );
}
