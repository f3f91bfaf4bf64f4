//! The bound on running handlers (`ModernConfig::running`,
//! `mcp_transport_core::admission`): a request over `max_running` or
//! `max_running_bytes` is answered 503 with a `-32603` naming the limit,
//! its handler never runs, the request already running goes on, and the
//! place is given back when a handler ends. (Tasks' workers: `tasks.rs`.)

mod server_common;

use serde_json::json;
use server_common::*;

/// A `slow` call whose progress shows that its handler runs.
fn slow(id: i64) -> serde_json::Value {
    body(
        id,
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 10_000}, "_meta": {"progressToken": id}}),
        json!({}),
    )
}

/// Starts a `slow` call and reads its first progress: its handler runs.
async fn running_slow(t: &TestServer, id: i64) -> SseReader {
    let mut r = SseReader::without_ids(t.send(&slow(id)).await);
    let first = r.next_json().await.unwrap();
    assert_eq!(first["method"], "notifications/progress");
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_max_running_is_refused_and_the_running_one_goes_on() {
    let t = start(config().with_max_running(1)).await;
    let running = running_slow(&t, 1).await;
    assert_eq!(t.server.in_flight_requests(), 1);

    let refused = t.send(&tool(2, "echo", json!({"x": 1}))).await;
    assert_eq!(refused.status(), 503);
    // Nothing of it ran: the client may send it again, in a second.
    assert_eq!(refused.headers()["retry-after"], "1");
    let e = error_json(refused).await;
    assert_eq!(e["id"], 2);
    assert_eq!(e["error"]["code"], -32603);
    let message = e["error"]["message"].as_str().unwrap();
    assert!(message.contains("maximum of 1 requests"), "{message}");
    // The refused handler never ran; the running one still runs.
    assert_eq!(t.server.in_flight_requests(), 1);
    assert!(t.handler.cancelled_at.lock().unwrap().is_empty());

    // Closing the first stream cancels it (2026-07-28); its place is given
    // back once its handler has returned, and the next request runs.
    drop(running);
    eventually("no request in flight", || {
        t.server.in_flight_requests() == 0
    })
    .await;
    let a = t.exchange(&tool(3, "echo", json!({"x": 3}))).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.result()["structuredContent"]["x"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bytes_of_running_requests_are_bounded() {
    // Smaller than any request: the first runs alone (a request the body
    // limit accepted can always run), every other waits for it to end.
    let t = start(config().with_max_running_bytes(16)).await;
    let running = running_slow(&t, 1).await;

    let refused = t.send(&tool(2, "echo", json!({"x": 1}))).await;
    assert_eq!(refused.status(), 503);
    let e = error_json(refused).await;
    assert_eq!(e["error"]["code"], -32603);
    let message = e["error"]["message"].as_str().unwrap();
    assert!(message.contains("maximum of 16"), "{message}");
    assert!(message.contains("bytes"), "{message}");

    drop(running);
    eventually("no request in flight", || {
        t.server.in_flight_requests() == 0
    })
    .await;
    let a = t.exchange(&tool(3, "echo", json!({"x": 3}))).await;
    assert_eq!(a.result()["structuredContent"]["x"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_the_default_limits_many_requests_run_at_once() {
    let t = start(config()).await;
    let mut streams = Vec::new();
    for id in 1..=20 {
        streams.push(running_slow(&t, id).await);
    }
    assert_eq!(t.server.in_flight_requests(), 20);
    let a = t.exchange(&tool(99, "echo", json!({"x": 99}))).await;
    assert_eq!(a.status, 200);
}
