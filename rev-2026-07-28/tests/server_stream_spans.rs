//! What a 2026-07-28 response stream records when it ends: its
//! `mcp.stream` span gets `sse.end` (`finished`: the answer went out;
//! `detached`: the client closed the stream first, which cancels the
//! request) and `sse.events` (the message events written, not the
//! keep-alive comments), logged as "SSE connection ended"
//! (`request::stream`, `mcp_http_edge::trace`).
//!
//! The router is driven in memory on a current-thread runtime with the
//! clock paused, so every stream runs on the test's thread, under the
//! test's subscriber.

mod server_common;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use mcp_rev_2026_07_28::server::{ModernConfig, ModernServer};
use mcp_test_support::sse::message_events;
use mcp_test_support::trace::{SseEnds, ended};
use serde_json::{Value, json};
use server_common::{body, memory_post, test_handler};
use tower::ServiceExt;

/// A `countdown` call: `n` steps of `delay_ms`, each sending progress
/// when `meta` carries a `progressToken`.
fn countdown(id: i64, n: u64, delay_ms: u64, meta: Value) -> Value {
    body(
        id,
        "tools/call",
        json!({"name": "countdown", "arguments": {"n": n, "delay_ms": delay_ms}, "_meta": meta}),
        json!({}),
    )
}

/// The response's body as a stream of frames.
async fn frames(
    router: &axum::Router,
    call: &Value,
) -> futures::stream::BoxStream<'static, axum::body::Bytes> {
    let response = router.clone().oneshot(memory_post(call)).await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    response
        .into_body()
        .into_data_stream()
        .map(Result::unwrap)
        .boxed()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn each_stream_records_how_it_ended_and_its_events() {
    let (ends, _guard) = SseEnds::install();
    let config = ModernConfig::default().with_keepalive(Some(Duration::from_millis(50)));
    let router = ModernServer::new(Arc::new(test_handler()), config).router();
    let token = json!({"progressToken": "t"});

    // The first item is a notification (the stream's first frame): two
    // progress events and the answer.
    let mut body = frames(&router, &countdown(1, 2, 10, token.clone())).await;
    assert_eq!(message_events(&mut body, usize::MAX).await, 3);
    drop(body);
    assert_eq!(ends.take(), [ended("finished", 3)]);

    // Nothing within the keep-alive: the stream opens with a comment,
    // which is not an event, then the answer.
    let mut body = frames(&router, &countdown(2, 1, 120, json!({}))).await;
    assert_eq!(message_events(&mut body, usize::MAX).await, 1);
    drop(body);
    assert_eq!(ends.take(), [ended("finished", 1)]);

    // Closed by the client after the first progress event.
    let mut body = frames(&router, &countdown(3, 3, 100, token)).await;
    assert_eq!(message_events(&mut body, 1).await, 1);
    drop(body);
    assert_eq!(ends.take(), [ended("detached", 1)]);
}

/// A `subscriptions/listen` stream's span counts its acknowledgment, each
/// notification and the closing result when the server ends it.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_listen_stream_records_its_events_when_the_server_ends_it() {
    let (ends, _guard) = SseEnds::install();
    let server = ModernServer::new(Arc::new(test_handler()), ModernConfig::default());
    let router = server.router();
    let listen = body(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        json!({}),
    );
    let mut body = frames(&router, &listen).await;
    assert_eq!(message_events(&mut body, 1).await, 1, "the acknowledgment");
    let note = mcp_transport_core::jsonrpc::Notification::new(
        "notifications/tools/list_changed",
        None::<&Value>,
    )
    .unwrap();
    assert_eq!(server.publish(note), 1);
    assert_eq!(server.end_listeners(), 1);
    assert_eq!(
        message_events(&mut body, usize::MAX).await,
        2,
        "the notification and the closing result"
    );
    drop(body);
    assert_eq!(ends.take(), [ended("finished", 3)]);
}
