//! Cancellation by close (*Streamable HTTP*, "Cancellation": "Closing the
//! SSE response stream MUST be treated by the server as cancellation of that
//! request"; *Cancellation*, "Transport-Specific Cancellation").
//!
//! The delay from the client's close to the handler seeing its token fire
//! is measured (both stamps are `Instant`s of this process) and printed; it
//! is not asserted on.

mod server_common;

use std::time::{Duration, Instant};

use serde_json::json;
use server_common::*;

fn slow_with_progress(id: i64, ms: u64) -> serde_json::Value {
    body(
        id,
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": ms}, "_meta": {"progressToken": id}}),
        json!({}),
    )
}

async fn wait_cancelled(t: &TestServer, n: usize) -> Instant {
    eventually("the cancellation", || {
        t.handler.cancelled_at.lock().unwrap().len() >= n
    })
    .await;
    t.handler.cancelled_at.lock().unwrap()[n - 1]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_sse_stream_cancels_the_handler_at_once() {
    let t = start(config()).await;
    let mut delays = Vec::new();
    for round in 1..=5 {
        let resp = t.send(&slow_with_progress(round, 10_000)).await;
        let mut r = SseReader::without_ids(resp);
        let first = r.next_json().await.unwrap();
        assert_eq!(first["method"], "notifications/progress");
        assert_eq!(t.server.in_flight_requests(), 1);
        // The client closes the stream mid-request.
        let closed = Instant::now();
        drop(r);
        let fired = wait_cancelled(&t, round as usize).await;
        let delay = fired.saturating_duration_since(closed);
        delays.push(delay);
        eventually("no request in flight", || {
            t.server.in_flight_requests() == 0
        })
        .await;
    }
    assert_eq!(
        t.handler
            .completions
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    eprintln!("cancel-on-close delay (SSE stream dropped -> handler token fired): {delays:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnecting_in_json_mode_cancels_the_handler() {
    let t = start(config().with_json_response(true)).await;
    let mut delays = Vec::new();
    for round in 1..=5 {
        // No progress token: nothing is sent before the result, so the
        // answer would be JSON; the client gives up while waiting for it.
        let b = tool(round, "slow", json!({"ms": 10_000}));
        let req = t.rpc(&b);
        let call = tokio::spawn(async move { req.send().await });
        eventually("one request in flight", || {
            t.server.in_flight_requests() == 1
        })
        .await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        let closed = Instant::now();
        call.abort();
        let fired = wait_cancelled(&t, round as usize).await;
        delays.push(fired.saturating_duration_since(closed));
        eventually("no request in flight", || {
            t.server.in_flight_requests() == 0
        })
        .await;
    }
    eprintln!(
        "cancel-on-disconnect delay (JSON mode, connection dropped -> handler token fired): {delays:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnecting_before_the_head_in_sse_mode_cancels_too() {
    // SSE mode, but the handler is silent, so no head has been sent yet.
    let t = start(config()).await;
    let b = tool(1, "slow", json!({"ms": 10_000}));
    let req = t.rpc(&b);
    let call = tokio::spawn(async move { req.send().await });
    eventually("one request in flight", || {
        t.server.in_flight_requests() == 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let closed = Instant::now();
    call.abort();
    let fired = wait_cancelled(&t, 1).await;
    eprintln!(
        "cancel-on-disconnect delay (SSE mode before the head): {:?}",
        fired.saturating_duration_since(closed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_request_is_not_cancelled() {
    let t = start(config()).await;
    let a = t.exchange(&slow_with_progress(1, 10)).await;
    assert_eq!(a.result()["structuredContent"]["slept"], 10);
    assert_eq!(a.of("notifications/progress").len(), 1);
    eventually("no request in flight", || {
        t.server.in_flight_requests() == 0
    })
    .await;
    assert!(t.handler.cancelled_at.lock().unwrap().is_empty());
    assert_eq!(
        t.handler
            .completions
            .load(std::sync::atomic::Ordering::SeqCst),
        1
    );
}
