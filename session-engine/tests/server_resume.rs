//! Resumption with `GET` + `Last-Event-ID` ("Resumability and Redelivery").

mod server_common;

use std::sync::Arc;
use std::time::Duration;

use mcp_http_edge::faults::Fault;
use mcp_rev_2025_11_25::{DisconnectPolicy, PollingExt};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::event_id::EventId;
use mcp_transport_core::event_log::{MemoryEventStore, MemoryEventStoreConfig};
use mcp_transport_core::jsonrpc::Notification;
use serde_json::json;
use server_common::*;

#[tokio::test]
async fn resume_after_every_position_returns_exactly_what_follows() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let (recs, _) = read_all(t.call(&s, 1, "progress", json!({"n": 4})).await).await;
    assert_eq!(recs.len(), 6, "priming, 4 logs, response");
    for (pos, r) in recs.iter().enumerate() {
        let (again, _) = read_all(t.resume(&s, r.id()).send().await.unwrap()).await;
        assert_eq!(again, recs[pos + 1..], "resume after position {pos}");
    }
}

#[tokio::test]
async fn resume_works_on_sessions_without_polling_too() {
    let t = start(config().with_versions([ProtocolVersion::V2025_06_18])).await;
    let s = t.init("2025-06-18").await;
    let (recs, _) = read_all(t.call(&s, 1, "progress", json!({"n": 2})).await).await;
    assert_eq!(recs.len(), 3);
    let (again, _) = read_all(t.resume(&s, recs[0].id()).send().await.unwrap()).await;
    assert_eq!(again, recs[1..]);
}

#[tokio::test]
async fn a_request_that_finished_while_disconnected_delivers_its_response_on_resume() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let mut post = SseReader::new(
        t.call(&s, 1, "progress", json!({"n": 2, "delay_ms": 30}))
            .await,
    );
    let priming = post.next().await.unwrap();
    assert!(priming.is_priming());
    // The client goes away; the request must go on.
    drop(post);
    eventually("the completion", || {
        t.handler
            .completions
            .load(std::sync::atomic::Ordering::SeqCst)
            == 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (recs, _) = read_all(t.resume(&s, priming.id()).send().await.unwrap()).await;
    let msgs = messages(&recs);
    assert_eq!(msgs.len(), 3, "{recs:?}");
    assert!(is_response(&msgs[2], 1));
    assert_eq!(
        t.handler
            .cancellations
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[tokio::test]
async fn resume_errors_are_4xx_with_the_reason() {
    let store = Arc::new(MemoryEventStore::new(MemoryEventStoreConfig {
        max_events_per_stream: 2,
        ..MemoryEventStoreConfig::default()
    }));
    // The queue bound (1) stays below the store's window (2), so live
    // delivery never outruns retention.
    let t = start(config().with_event_store(store).with_stream_queue(1)).await;
    let s = t.init("2025-11-25").await;
    let other = t.init("2025-11-25").await;
    let (recs, _) = read_all(t.call(&s, 1, "progress", json!({"n": 4})).await).await;
    let priming = EventId::parse(recs[0].id()).unwrap();
    let (other_recs, _) = read_all(t.call(&other, 1, "echo", json!({})).await).await;

    let cases = [
        ("not-an-id".to_owned(), 400, "not an event id"),
        ("a.b.c".to_owned(), 400, "not an event id"),
        (other_recs[0].id().to_owned(), 400, "different session"),
        (
            EventId::new(
                priming.session,
                mcp_transport_core::event_id::StreamId(999),
                0,
            )
            .to_string(),
            400,
            "does not name an event",
        ),
        (
            EventId::new(priming.session, priming.stream, 99).to_string(),
            400,
            "does not name an event",
        ),
        // Only the last 2 events are retained: after the priming id, events 1.. are gone.
        (recs[0].id().to_owned(), 410, "no longer retained"),
    ];
    for (id, status, says) in cases {
        let resp = t.resume(&s, &id).send().await.unwrap();
        assert_eq!(resp.status(), status, "{id}");
        let v = error_body(resp).await;
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(says), "{id}: {msg}");
    }
    // Still resumable from a retained position.
    let (tail, _) = read_all(t.resume(&s, recs[3].id()).send().await.unwrap()).await;
    assert_eq!(tail, recs[4..]);
}

#[tokio::test]
async fn resume_needs_the_session_and_accept() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let (recs, _) = read_all(t.call(&s, 1, "echo", json!({})).await).await;
    let resp = t
        .http
        .get(&t.url)
        .header("accept", "text/event-stream")
        .header("last-event-id", recs[0].id())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let resp = t
        .http
        .get(&t.url)
        .header("accept", "application/json")
        .header("mcp-session-id", &s.id)
        .header("last-event-id", recs[0].id())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 406);
    // After DELETE the session is gone: 404, not a resume error.
    t.http
        .delete(&t.url)
        .header("mcp-session-id", &s.id)
        .send()
        .await
        .unwrap();
    let resp = t.resume(&s, recs[0].id()).send().await.unwrap();
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn resume_works_with_get_stream_off() {
    let t = start(config().with_get_stream(false)).await;
    let s = t.init("2025-11-25").await;
    let (recs, _) = read_all(t.call(&s, 1, "echo", json!({})).await).await;
    let (again, _) = read_all(t.resume(&s, recs[0].id()).send().await.unwrap()).await;
    assert_eq!(again, recs[1..]);
}

#[tokio::test]
async fn a_resume_takes_the_stream_over_from_the_old_connection() {
    let t = start(config().with_disconnect(DisconnectPolicy::Never)).await;
    let s = t.init("2025-11-25").await;
    let mut old = SseReader::new(
        t.call(&s, 1, "progress", json!({"n": 4, "delay_ms": 40}))
            .await,
    );
    let priming = old.next().await.unwrap();
    let first = old.next().await.unwrap();
    assert_eq!(first.json()["params"]["data"]["step"], 1);
    // Resume from the first message while the old connection is attached.
    let mut new = SseReader::new(t.resume(&s, first.id()).send().await.unwrap());
    let old_rest = old.rest().await;
    let new_rest = new.rest().await;
    assert!(priming.is_priming());
    // The old connection ends. An event already on its way when the new
    // connection took over may arrive on both (the server cannot know which
    // bytes the old socket delivered); it then carries the same id, so a
    // client deduplicating by id sees every message exactly once.
    // The superseded connection ends with `retry` (issue 13, item 5), so
    // its owner waits instead of reconnecting at once.
    assert!(has_retry(&old_rest), "{old_rest:?}");
    let mut all = vec![first];
    all.extend(old_rest.into_iter().filter(|r| !matches!(r, Rec::Retry(_))));
    for r in new_rest.into_iter().filter(|r| !matches!(r, Rec::Retry(_))) {
        if !all.iter().any(|a| a.id() == r.id()) {
            all.push(r);
        }
    }
    let msgs = messages(&all);
    assert_eq!(msgs.len(), 5, "{all:?}");
    assert!(is_response(&msgs[4], 1));
    assert!(
        !messages(&all[..all.len() - 1])
            .iter()
            .any(|m| is_response(m, 1)),
        "the response came last"
    );
}

/// The `replay-inclusive` self-test fault (a deliberately wrong server
/// that `mcp-compat self-test` must catch) does what it says: a resume
/// replays the `Last-Event-ID` event itself, then what follows; a resume
/// from a priming id, which names no message, replays what follows it.
#[tokio::test]
async fn the_replay_inclusive_fault_replays_the_last_event_itself() {
    let t = start(faulty(Fault::ReplayInclusive)).await;
    let s = t.init("2025-11-25").await;
    let (recs, _) = read_all(t.call(&s, 1, "progress", json!({"n": 2})).await).await;
    assert_eq!(recs.len(), 4, "priming, 2 logs, response");
    for from in 1..recs.len() {
        let (again, _) = read_all(t.resume(&s, recs[from].id()).send().await.unwrap()).await;
        assert_eq!(again, recs[from..], "resume from position {from}");
    }
    let (again, _) = read_all(t.resume(&s, recs[0].id()).send().await.unwrap()).await;
    assert_eq!(again, recs[1..], "resume from the priming id");
}

/// The `leak-other-stream` self-test fault does what it says: a resume
/// also replays the events of the session's other live streams (here, a
/// notification on the open GET stream).
#[tokio::test]
async fn the_leak_other_stream_fault_replays_another_streams_events() {
    let t = start(faulty(Fault::LeakOtherStream)).await;
    let s = t.init("2025-11-25").await;
    let (recs, _) = read_all(t.call(&s, 1, "progress", json!({"n": 2})).await).await;
    let mut get = SseReader::new(t.get_in(&s).send().await.unwrap());
    assert!(get.next().await.unwrap().is_priming());
    let changed = Notification::new::<()>("notifications/tools/list_changed", None).unwrap();
    assert!(t.server.notify_session(&s.id, &changed).await);
    let leaked = get.next().await.unwrap();
    let (again, _) = read_all(t.resume(&s, recs[0].id()).send().await.unwrap()).await;
    assert!(again.contains(&leaked), "{again:?}");
    assert_eq!(
        again.iter().filter(|r| **r == leaked).count(),
        1,
        "the other stream's event, not this one's twice: {again:?}"
    );
    assert!(again.ends_with(&recs[1..]), "{again:?}");
}
