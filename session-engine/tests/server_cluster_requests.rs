//! Requests and streams across instances (`cluster.rs`, `fanout.rs`,
//! `open.rs`): two servers, A and B, over one set of in-memory stores
//! (`server_common::cluster::Stores`). Stream numbers in the shared log,
//! a cancel or a client's answer reaching the instance that runs the
//! request, server notifications reaching every instance's GET streams.

mod server_common;

use std::sync::atomic::Ordering;

use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::EventStore;
use mcp_transport_core::jsonrpc::{Message, Notification};
use mcp_transport_core::session_store::{SessionSignal, SignalBus};
use serde_json::{Value, json};
use server_common::cluster::Stores;
use server_common::*;

/// The priming id of `resp`'s SSE stream.
async fn priming_of(resp: reqwest::Response) -> EventId {
    let mut sse = SseReader::new(resp);
    let priming = sse.next().await.unwrap();
    assert!(priming.is_priming(), "{priming:?}");
    EventId::parse(priming.id()).unwrap()
}

/// Streams B opens in an adopted session are numbered at or above 2^32,
/// away from the numbers A gives its own (A counts from 1), so the two
/// never write one stream of the shared log.
#[tokio::test]
async fn an_adopted_session_numbers_its_streams_above_the_creators() {
    let stores = Stores::new();
    let (a, b) = stores.pair().await;
    let s = a.init("2025-11-25").await;
    let on_a = priming_of(a.call(&s, 1, "slow", json!({"ms": 1})).await)
        .await
        .stream;
    let on_b = priming_of(b.call(&s, 2, "slow", json!({"ms": 1})).await)
        .await
        .stream;
    assert!(on_a < StreamId(1 << 32), "{on_a}");
    assert!(on_b >= StreamId(1 << 32), "{on_b}");
}

/// Takes stream numbers `numbers` of `tag`'s log, as another instance
/// writing in the session would.
async fn take(stores: &Stores, tag: &SessionTag, numbers: std::ops::RangeInclusive<u64>) {
    for n in numbers {
        stores.events.open_stream(tag, StreamId(n)).await.unwrap();
    }
}

/// A stream number another instance sharing the session already took in
/// the log is skipped for the session's next one (`open.rs`), whether the
/// request answered at once (its stream opened with the answer in it) or
/// still runs; after eight numbers taken in a row an answer gives up on a
/// stream and goes back as JSON, which the client accepts as well, and the
/// session's numbering goes on past them.
#[tokio::test]
async fn stream_numbers_taken_by_another_instance_are_skipped() {
    let stores = Stores::new();
    let a = start(stores.config()).await;
    let s = a.init("2025-11-25").await;
    let first = priming_of(a.call(&s, 1, "echo", json!({})).await).await;
    let (tag, n) = (first.session, first.stream.0);
    take(&stores, &tag, n + 1..=n + 3).await;
    let answered = priming_of(a.call(&s, 2, "echo", json!({})).await).await;
    assert_eq!(answered.stream, StreamId(n + 4));
    take(&stores, &tag, n + 5..=n + 6).await;
    let running = priming_of(a.call(&s, 3, "slow", json!({"ms": 1})).await).await;
    assert_eq!(running.stream, StreamId(n + 7));
    take(&stores, &tag, n + 8..=n + 15).await;
    let resp = a.call(&s, 4, "echo", json!({"x": 4})).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(content_type(&resp), "application/json");
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["result"]["echo"]["x"], 4, "{v}");
    let next = priming_of(a.call(&s, 5, "echo", json!({})).await).await;
    assert_eq!(next.stream, StreamId(n + 16));
}

/// A `notifications/cancelled` posted to B for a request running on A
/// reaches A through the signal bus and stops it (*Cancellation*); one
/// without a `requestId` is ignored.
#[tokio::test]
async fn a_cancel_posted_to_b_stops_the_request_running_on_a() {
    let stores = Stores::new();
    let (a, b) = stores.pair().await;
    let s = a.init("2025-11-25").await;
    let mut running = SseReader::new(a.call(&s, 1, "slow", json!({"ms": 60_000})).await);
    assert!(running.next().await.unwrap().is_priming());
    let cancel = |params: Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}).to_string()
    };
    let resp = b
        .post_in(&s)
        .body(cancel(json!({"reason": "?"})))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    let resp = b
        .post_in(&s)
        .body(cancel(json!({"requestId": 1})))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    eventually("the cancellation on A", || {
        a.handler.stats().cancellations.load(Ordering::SeqCst) == 1
    })
    .await;
    let rest = within("the cancelled request's stream", running.rest()).await;
    assert!(messages(&rest).is_empty(), "{rest:?}");
}

/// The client's answer to a server-to-client request A sent, posted to B,
/// reaches the handler waiting on A through the signal bus; the request's
/// response then comes on A's stream.
#[tokio::test]
async fn an_answer_posted_to_b_reaches_the_request_waiting_on_a() {
    let stores = Stores::new();
    let (a, b) = stores.pair().await;
    let s = a.init_with("2025-11-25", json!({"elicitation": {}})).await;
    let mut stream = SseReader::new(a.call(&s, 1, "ask", json!({})).await);
    let asked = stream.next_message().await.unwrap().json();
    assert_eq!(asked["method"], "elicitation/create");
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"],
                       "result": {"action": "accept", "content": {"ok": true}}});
    let resp = b.post_in(&s).body(reply.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    let rest = within("the response on A", stream.rest()).await;
    let got = messages(&rest);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(is_response(&got[0], 1), "{got:?}");
    assert_eq!(got[0]["result"]["answer"]["content"]["ok"], true, "{got:?}");
}

/// The method of the next message on `get`.
async fn next_method(get: &mut SseReader) -> String {
    let m = within("the notification", get.next_message())
        .await
        .unwrap();
    m.json()["method"].as_str().unwrap().to_owned()
}

/// A parameterless notification `method`.
fn note(method: &str) -> Notification {
    Notification::new::<()>(method, None).unwrap()
}

/// A server notification one instance sends to every session
/// (`notify_all`) reaches the standalone GET streams every instance holds
/// through the bus, each once: the sender skips its own broadcast
/// (`fanout.rs`), and a broadcast of another scope (a 2026-07-28 engine's
/// behind the same endpoint) is not this engine's to deliver. The bus is
/// in order, so B's last notification reaches A's stream after anything
/// A's listener did with A's own two.
#[tokio::test]
async fn a_notification_sent_on_one_instance_reaches_every_get_stream_once() {
    let stores = Stores::new();
    let (a, b) = stores.pair().await;
    let held_on_a = a.init("2025-11-25").await;
    let held_on_b = a.init("2025-11-25").await;
    let mut get_a = SseReader::new(a.get_in(&held_on_a).send().await.unwrap());
    let mut get_b = SseReader::new(b.get_in(&held_on_b).send().await.unwrap());
    assert!(get_a.next().await.unwrap().is_priming());
    assert!(get_b.next().await.unwrap().is_priming());
    let other_era = Message::Notification(note("notifications/other_era"));
    stores
        .bus
        .publish(SessionSignal::broadcast(
            "modern",
            "elsewhere",
            other_era.to_json().into(),
        ))
        .await
        .unwrap();
    let from_a = [
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
    ];
    for method in from_a {
        // Counted: the sender's own streams only.
        assert_eq!(a.server.notify_all(&note(method)).await, 1);
    }
    for method in from_a {
        assert_eq!(next_method(&mut get_b).await, method);
    }
    let from_b = "notifications/prompts/list_changed";
    assert_eq!(b.server.notify_all(&note(from_b)).await, 1);
    assert_eq!(next_method(&mut get_b).await, from_b);
    for method in from_a.into_iter().chain([from_b]) {
        assert_eq!(next_method(&mut get_a).await, method);
    }
}
