//! When a connection of a request stream writes, and when it ends, on
//! tokio's paused clock: the server is driven in memory as a
//! `tower::Service` (no socket), so every body frame is exactly what one
//! `next_chunk` produced and every instant is virtual.
//!
//! SEP-1699: the server "MAY close the connection" after the priming event
//! and a `retry` field; *Transports*, "Resumability and Redelivery": a new
//! connection resuming a stream takes it over.
//!
//! The connection code is the engine's (`connection.rs`), the policies
//! 2025-11-25's: the tests live here so that the engine's own test targets
//! are all a mutation run of `connection.rs` needs (`scripts/mutants.sh`).

mod server_common;

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use futures::StreamExt;
use futures::stream::BoxStream;
use http::{Request, StatusCode};
use mcp_rev_2025_11_25::{self as rev, LegacyServer, PollingExt, ServerConfig};
use serde_json::json;
use server_common::memory::{frames, initialized, post};
use server_common::store::WatchedStore;
use tokio::time::Instant;
use tower::ServiceExt;

/// The `retry` the test servers send.
const RETRY_MS: u64 = 50;

/// 2025-11-25 with a short `retry` and no keep-alive comments.
fn test_config() -> ServerConfig {
    rev::server_config()
        .with_retry_ms(RETRY_MS)
        .with_keepalive(None)
}

/// The tool's run time: far longer than anything the tests wait for, so
/// the stream stays idle (no event) while they watch it.
const TOOL_MS: u64 = 60_000;

fn resume(session: &str, last_event_id: &str) -> Request<Body> {
    Request::get("/")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", session)
        .header("last-event-id", last_event_id)
        .body(Body::empty())
        .unwrap()
}

/// A server with `config` and an initialized session.
async fn session(config: ServerConfig) -> (LegacyServer, String) {
    let server = rev::server(Arc::new(server_common::test_handler()), config);
    let id = initialized(&server).await;
    (server, id)
}

/// The body frames of a `tools/call` of `slow` that runs [`TOOL_MS`].
async fn slow_call(server: &LegacyServer, session: &str) -> BoxStream<'static, Bytes> {
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "slow", "arguments": { "ms": TOOL_MS } }
    });
    let response = server
        .clone()
        .oneshot(post(&call, Some(session)))
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    frames(response.into_body())
}

fn text(frame: &Bytes) -> &str {
    std::str::from_utf8(frame).unwrap()
}

/// The `id` of the priming event in `frame`.
fn priming_id(frame: &Bytes) -> String {
    let line = text(frame)
        .lines()
        .find_map(|l| l.strip_prefix("id:"))
        .unwrap_or_else(|| panic!("no id in {:?}", text(frame)));
    line.trim().to_owned()
}

/// A keep-alive comment goes out as soon as it is due, on its own, each
/// `keepalive` of silence, not held back until the next event.
#[tokio::test(start_paused = true)]
async fn keepalive_comments_go_out_when_due() {
    let every = Duration::from_millis(100);
    let (server, id) = session(test_config().with_keepalive(Some(every))).await;
    let mut body = slow_call(&server, &id).await;
    let first = body.next().await.unwrap();
    assert!(text(&first).contains("id:"), "{:?}", text(&first));
    let start = Instant::now();
    for n in 1..=3u32 {
        let frame = body.next().await.unwrap();
        assert_eq!(text(&frame), ": keep-alive\n", "frame {n}");
        assert_eq!(Instant::now() - start, every * n, "frame {n}");
    }
}

/// `after-ms:N` ends a connection N ms after it opened even when the stream
/// has nothing to deliver, with `retry` so the client comes back.
#[tokio::test(start_paused = true)]
async fn an_after_ms_connection_ends_at_its_deadline_on_an_idle_stream() {
    let config = test_config().with_disconnect("after-ms:500".parse().unwrap());
    let (server, id) = session(config).await;
    let start = Instant::now();
    let mut body = slow_call(&server, &id).await;
    let mut seen = String::new();
    while let Some(frame) = body.next().await {
        seen.push_str(text(&frame));
    }
    assert_eq!(Instant::now() - start, Duration::from_millis(500));
    assert!(
        seen.ends_with(&format!("retry: {}\n\n", RETRY_MS)),
        "{seen:?}"
    );
    assert!(!seen.contains("\"result\""), "{seen:?}");
}

/// A connection taken over by a newer one for the same stream (a GET with
/// `Last-Event-ID`) ends at once, even when the stream is idle, after a
/// `retry`.
#[tokio::test(start_paused = true)]
async fn a_connection_taken_over_ends_at_once_on_an_idle_stream() {
    let (server, id) = session(test_config()).await;
    let mut first = slow_call(&server, &id).await;
    let priming = first.next().await.unwrap();
    let last = priming_id(&priming);
    let start = Instant::now();
    let response = server.clone().oneshot(resume(&id, &last)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let _second = frames(response.into_body());
    // The old connection has nothing more to send: it ends with `retry`
    // (issue 13, item 5: its owner waits instead of reconnecting at once).
    let last_frame = first.next().await.expect("a retry before the end");
    assert!(
        text(&last_frame).ends_with(&format!("retry: {}\n\n", RETRY_MS)),
        "{:?}",
        text(&last_frame)
    );
    assert!(first.next().await.is_none());
    assert!(Instant::now() - start < Duration::from_millis(TOOL_MS));
}

/// A connection reads the event log only when its stream has something new
/// for it: the keep-alive wake-ups of an idle stream cost the store nothing
/// (with a shared store, every idle connection would otherwise read it at
/// each keep-alive).
#[tokio::test(start_paused = true)]
async fn an_idle_connection_does_not_read_the_log() {
    let store = Arc::new(WatchedStore::default());
    let every = Duration::from_millis(100);
    let config = test_config()
        .with_keepalive(Some(every))
        .with_event_store(store.clone());
    let (server, id) = session(config).await;
    let mut body = slow_call(&server, &id).await;
    let first = body.next().await.unwrap();
    assert!(text(&first).contains("id:"), "{:?}", text(&first));
    for n in 1..=3 {
        let frame = body.next().await.unwrap();
        assert_eq!(text(&frame), ": keep-alive\n", "frame {n}");
    }
    assert_eq!(store.replays(), 0);
}
