//! What each SSE connection records when it ends: its `mcp.stream` /
//! `mcp.resume` span gets `sse.end` (`finished`, `closed` early by the
//! server, `detached`: the client went away) and `sse.events` (message
//! events written), and it logs "SSE connection ended" with both
//! (`connection.rs`'s module documentation; `mcp_http_edge::trace`).
//!
//! The server is driven in memory on a current-thread runtime, so every
//! connection runs on the test's thread, under the test's subscriber.

mod server_common;

use std::sync::Arc;

use mcp_session_engine::server::LegacyServer;
use mcp_test_support::sse::message_events;
use mcp_test_support::trace::{SseEnds, ended};
use serde_json::{Value, json};
use server_common::memory::{frames, initialized, post};
use tower::ServiceExt;

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

/// A connection that delivered its stream to the end records `finished`
/// and its message events (two logs and the response; the priming event
/// is not a message); one the server closed early (`close_stream`)
/// records `closed`; one whose client went away records `detached`. Each
/// counts the message events its body carried.
#[tokio::test(start_paused = true)]
async fn each_connection_records_how_it_ended_and_its_events() {
    let (ends, _guard) = SseEnds::install();
    let server = LegacyServer::new(
        Arc::new(server_common::test_handler()),
        server_common::config(),
    );
    let session = initialized(&server).await;
    let post_call = |id, tool, arguments| {
        let server = server.clone();
        let request = post(&call(id, tool, arguments), Some(&session));
        async move { frames(server.oneshot(request).await.unwrap().into_body()) }
    };

    let mut body = post_call(1, "progress", json!({"n": 2})).await;
    assert_eq!(message_events(&mut body, usize::MAX).await, 3);
    assert_eq!(ends.take(), [ended("finished", 3)]);

    let mut body = post_call(2, "close_stream", json!({"delay_ms": 10})).await;
    let events = message_events(&mut body, usize::MAX).await;
    assert_eq!(ends.take(), [ended("closed", events)]);

    // The priming event, then the first step.
    let mut body = post_call(3, "progress", json!({"n": 3, "delay_ms": 100})).await;
    assert_eq!(message_events(&mut body, 2).await, 1);
    drop(body);
    assert_eq!(ends.take(), [ended("detached", 1)]);
}
