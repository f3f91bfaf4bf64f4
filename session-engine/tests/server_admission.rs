//! The bound on running requests across sessions (`ServerConfig::running`,
//! `mcp_transport_core::admission`): a request over `max_running` or
//! `max_running_bytes` is answered 503 with a `-32603` naming the limit
//! (one element of a batch gets the error in the batch's answer), its
//! handler never runs, and what runs goes on. A request whose connection
//! is gone still holds its place (a disconnect is not a cancellation), and
//! gives it back when its handler ends.

mod server_common;

use std::sync::atomic::Ordering;

use mcp_transport_core::ProtocolVersion;
use serde_json::{Value, json};
use server_common::*;

fn cancelled(id: i64) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id}})
    .to_string()
}

/// A `slow` call in `s` whose stream is open (priming read): it runs.
async fn running_slow(t: &TestServer, s: &Session, id: i64) -> SseReader {
    let mut stream = SseReader::new(t.call(s, id, "slow", json!({"ms": 60_000})).await);
    assert!(stream.next().await.unwrap().is_priming());
    stream
}

/// The 503 answer of a refused request: its id, `-32603`, the message.
async fn refusal(resp: reqwest::Response, id: i64) -> String {
    assert_eq!(resp.status(), 503);
    // Nothing of it ran: the client may send it again, in a second.
    assert_eq!(resp.headers()["retry-after"], "1");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["id"], id, "{v}");
    assert_eq!(v["error"]["code"], -32603, "{v}");
    v["error"]["message"].as_str().unwrap().to_owned()
}

/// A POST in `s` (2025-03-26 defines no `MCP-Protocol-Version` header).
fn post_in(t: &TestServer, s: &Session) -> reqwest::RequestBuilder {
    if s.version == "2025-03-26" {
        t.post().header("mcp-session-id", &s.id)
    } else {
        t.post_in(s)
    }
}

/// Cancels `id` in `s` and waits until nothing runs.
async fn end(t: &TestServer, s: &Session, id: i64) {
    let resp = post_in(t, s).body(cancelled(id)).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    eventually("no request running", || t.server.running_requests() == 0).await;
}

#[tokio::test]
async fn a_request_over_max_running_is_refused_in_any_session() {
    let t = start(config().with_max_running(1)).await;
    let a = t.init("2025-11-25").await;
    let b = t.init("2025-11-25").await;
    let _running = running_slow(&t, &a, 1).await;
    assert_eq!(t.server.running_requests(), 1);

    // The bound is the server's, not the session's.
    let message = refusal(t.call(&b, 2, "echo", json!({})).await, 2).await;
    assert!(message.contains("maximum of 1 requests"), "{message}");
    // What the engine answers itself needs no handler and is not refused.
    let ping = t
        .post_in(&b)
        .body(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(ping.status(), 200);
    assert_eq!(t.server.running_requests(), 1);
    assert_eq!(t.handler.cancellations.load(Ordering::SeqCst), 0);

    end(&t, &a, 1).await;
    let (recs, _) = read_all(t.call(&b, 4, "echo", json!({"x": 4})).await).await;
    assert!(is_response(messages(&recs).last().unwrap(), 4), "{recs:?}");
}

#[tokio::test]
async fn a_request_without_its_connection_keeps_its_place() {
    let t = start(config().with_max_running(1)).await;
    let s = t.init("2025-11-25").await;
    let stream = running_slow(&t, &s, 1).await;
    // The client goes away; the request is not cancelled and still counts.
    drop(stream);
    let message = refusal(t.call(&s, 2, "echo", json!({})).await, 2).await;
    assert!(message.contains("maximum of 1 requests"), "{message}");
    assert_eq!(t.server.running_requests(), 1);
    end(&t, &s, 1).await;
    let (recs, _) = read_all(t.call(&s, 3, "echo", json!({})).await).await;
    assert!(is_response(messages(&recs).last().unwrap(), 3), "{recs:?}");
}

#[tokio::test]
async fn the_bytes_of_running_requests_are_bounded() {
    // Smaller than any request: one runs alone, every other is refused
    // until it ends.
    let t = start(config().with_max_running_bytes(16)).await;
    let s = t.init("2025-11-25").await;
    let _running = running_slow(&t, &s, 1).await;
    let message = refusal(t.call(&s, 2, "echo", json!({})).await, 2).await;
    assert!(
        message.contains("bytes") && message.contains("maximum of 16"),
        "{message}"
    );
    end(&t, &s, 1).await;
    let (recs, _) = read_all(t.call(&s, 3, "echo", json!({})).await).await;
    assert!(is_response(messages(&recs).last().unwrap(), 3), "{recs:?}");
}

#[tokio::test]
async fn a_batch_element_over_the_bound_gets_its_error_in_the_answer() {
    let t = start(
        config()
            .with_versions([ProtocolVersion::V2025_03_26])
            .with_max_running(1),
    )
    .await;
    let s = t.init("2025-03-26").await;
    assert_eq!(s.version, "2025-03-26");
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "slow", "arguments": {"ms": 60_000}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "echo", "arguments": {}}},
    ]);
    let resp = post_in(&t, &s)
        .body(batch.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let mut stream = SseReader::new(resp);
    let refused = loop {
        let m = stream
            .next_json()
            .await
            .expect("the batch's stream ended before element 2's answer");
        if is_response(&m, 2) {
            break m;
        }
    };
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("maximum of 1 requests"), "{message}");
    // The first element runs.
    assert_eq!(t.server.running_requests(), 1);
    end(&t, &s, 1).await;
}
