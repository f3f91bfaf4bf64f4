//! Cancellation (*Cancellation*): `notifications/cancelled` fires the
//! request's token, and no response is sent; a disconnect is not a cancel
//! (except under the self-test fault that makes it one).

mod server_common;

use std::sync::atomic::Ordering;

use mcp_http_edge::faults::Fault;
use serde_json::json;
use server_common::*;

fn cancelled(id: i64) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "user pressed stop"}})
    .to_string()
}

#[tokio::test]
async fn cancelled_notification_stops_the_request_without_a_response() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let mut stream = SseReader::new(t.call(&s, 7, "slow", json!({"ms": 5000})).await);
    let priming = stream.next().await.unwrap();
    assert!(priming.is_priming());
    let resp = t.post_in(&s).body(cancelled(7)).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    let rest = stream.rest().await;
    assert!(
        messages(&rest).is_empty(),
        "no response after cancel: {rest:?}"
    );
    eventually("the cancellation", || {
        t.handler.cancellations.load(Ordering::SeqCst) == 1
    })
    .await;
    // The id is free again, and the session goes on.
    let (recs, _) = read_all(t.call(&s, 7, "echo", json!({})).await).await;
    assert!(is_response(messages(&recs).last().unwrap(), 7));
    // A resume of the cancelled stream ends at once without a response.
    let (again, _) = read_all(t.resume(&s, priming.id()).send().await.unwrap()).await;
    assert!(again.is_empty(), "{again:?}");
}

#[tokio::test]
async fn cancelled_in_json_mode_ends_without_a_response() {
    let t = start(config().with_json_response(true)).await;
    let s = t.init("2025-11-25").await;
    let url = t.url.clone();
    let http = t.http.clone();
    let sid = s.id.clone();
    let pending = tokio::spawn(async move {
        http.post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", sid)
            .body(call_body(3, "slow", json!({"ms": 5000})))
            .send()
            .await
            .unwrap()
    });
    // Cancel until the handler has seen it (the request may not have
    // started when the first notification arrives: it is then ignored).
    let start = std::time::Instant::now();
    while t.handler.cancellations.load(Ordering::SeqCst) == 0 {
        assert!(start.elapsed() < WAIT);
        t.post_in(&s).body(cancelled(3)).send().await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let resp = pending.await.unwrap();
    let (recs, _) = read_all(resp).await;
    assert!(messages(&recs).is_empty());
}

#[tokio::test]
async fn unknown_or_malformed_cancellations_are_ignored() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    for body in [
        cancelled(12345),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}"#
            .to_owned(),
    ] {
        let resp = t.post_in(&s).body(body).send().await.unwrap();
        assert_eq!(resp.status(), 202);
    }
    assert_eq!(t.call(&s, 1, "echo", json!({})).await.status(), 200);
}

#[tokio::test]
async fn a_disconnect_does_not_cancel() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let mut stream = SseReader::new(t.call(&s, 1, "slow", json!({"ms": 100})).await);
    let priming = stream.next().await.unwrap();
    drop(stream);
    eventually("the completion", || {
        t.handler.completions.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(t.handler.cancellations.load(Ordering::SeqCst), 0);
    let (recs, _) = read_all(t.resume(&s, priming.id()).send().await.unwrap()).await;
    assert_eq!(messages(&recs)[0]["result"]["slept"], 100);
}

/// The `cancel-on-disconnect` self-test fault (a deliberately wrong server
/// that `mcp-conformance self-test` must catch) does cancel: a 2025-11-25
/// connection that ends before its response cancels the session's
/// requests.
#[tokio::test]
async fn the_cancel_on_disconnect_fault_cancels_on_a_disconnect() {
    let t = start(faulty(Fault::CancelOnDisconnect)).await;
    let s = t.init("2025-11-25").await;
    let mut stream = SseReader::new(t.call(&s, 1, "slow", json!({"ms": 60_000})).await);
    assert!(stream.next().await.unwrap().is_priming());
    drop(stream);
    eventually("the cancellation", || {
        t.handler.cancellations.load(Ordering::SeqCst) == 1
    })
    .await;
}
