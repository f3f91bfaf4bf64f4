//! Event ids of standalone GET streams are unique within the session
//! (2025-11-25 *Transports*, "Resumability and Redelivery": "globally
//! unique across all streams within that session"): every fresh GET opens
//! a new stream, so no id string — priming ids included — goes out twice.

mod server_common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use mcp_rev_2025_11_25::{DisconnectPolicy, PollingExt};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::event_id::EventId;
use mcp_transport_core::event_log::{MemoryEventStore, MemoryEventStoreConfig};
use mcp_transport_core::jsonrpc::Notification;
use serde_json::json;
use server_common::*;

/// A notification told apart by `n`.
fn note(n: u64) -> Notification {
    Notification::new(
        "notifications/message",
        Some(&json!({"level": "info", "data": n})),
    )
    .unwrap()
}

/// The `n` of a message event made by [`note`].
fn n_of(r: &Rec) -> u64 {
    r.json()["params"]["data"].as_u64().unwrap()
}

/// A fresh GET, retried while the previous standalone connection is still
/// attached (409 until the server has seen it go).
async fn fresh_get(t: &TestServer, s: &Session) -> SseReader {
    for _ in 0..200 {
        let r = t.get_in(s).send().await.unwrap();
        if r.status() == 200 {
            return SseReader::new(r);
        }
        assert_eq!(r.status(), 409, "a fresh GET got {}", r.status());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the previous standalone connection was never released");
}

/// Adds `id` to `seen`, failing if it was there.
fn unique(seen: &mut HashSet<String>, id: &str) {
    assert!(!id.is_empty(), "an event without an id");
    assert!(seen.insert(id.to_owned()), "event id {id} was sent twice");
}

#[tokio::test]
async fn every_fresh_get_opens_a_new_stream_with_distinct_ids() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let mut seen = HashSet::new();

    // First standalone connection: priming + one message.
    let mut first = fresh_get(&t, &s).await;
    let p1 = first.next().await.unwrap();
    assert!(p1.is_priming());
    unique(&mut seen, p1.id());
    assert_eq!(t.server.notify_all(&note(1)).await, 1);
    let m1 = first.next().await.unwrap();
    assert_eq!(n_of(&m1), 1);
    unique(&mut seen, m1.id());
    drop(first);

    // Sent while no standalone connection is attached: it is logged on the
    // current (first) stream, the only one there is.
    assert!(t.server.notify_session(&s.id, &note(2)).await);

    // Second fresh GET: a new stream with its own priming id.
    let mut second = fresh_get(&t, &s).await;
    let p2 = second.next().await.unwrap();
    assert!(p2.is_priming());
    unique(&mut seen, p2.id());
    let (e1, e2) = (
        EventId::parse(p1.id()).unwrap(),
        EventId::parse(p2.id()).unwrap(),
    );
    assert_ne!(e1.stream, e2.stream, "a fresh GET opens a new stream");
    assert_eq!(e2.seq, 0, "the priming event of a new stream is its seq 0");
    assert_eq!(t.server.notify_all(&note(3)).await, 1);
    let m3 = second.next().await.unwrap();
    // Not the message sent between the GETs: that one stays on the first
    // stream (no replay across streams).
    assert_eq!(n_of(&m3), 3);
    unique(&mut seen, m3.id());
    assert_eq!(EventId::parse(m3.id()).unwrap().stream, e2.stream);

    // Resuming the first stream from its last delivered id gives what was
    // missed (the message sent between the GETs), then the stream ends: a
    // fresh GET finished it.
    let (missed, _) = read_all(t.resume(&s, m1.id()).send().await.unwrap()).await;
    let missed_msgs: Vec<&Rec> = missed.iter().filter(|r| !r.is_priming()).collect();
    assert_eq!(missed_msgs.len(), 1, "{missed:?}");
    assert_eq!(n_of(missed_msgs[0]), 2);
    unique(&mut seen, missed_msgs[0].id());
    assert_eq!(
        EventId::parse(missed_msgs[0].id()).unwrap().stream,
        e1.stream
    );
    assert!(
        !has_retry(&missed),
        "a finished stream just ends: {missed:?}"
    );

    // Resuming the first stream from its very last id: nothing new, and the
    // response ends (no hang).
    let (again, _) = read_all(t.resume(&s, missed_msgs[0].id()).send().await.unwrap()).await;
    assert!(again.is_empty(), "{again:?}");

    // The second (current) stream still works, and is still one connection
    // at a time.
    assert_eq!(t.get_in(&s).send().await.unwrap().status(), 409);
    assert!(t.server.notify_session(&s.id, &note(4)).await);
    let m4 = second.next().await.unwrap();
    assert_eq!(n_of(&m4), 4);
    unique(&mut seen, m4.id());
    assert_eq!(seen.len(), 6);
}

#[tokio::test]
async fn a_resume_of_the_current_stream_gets_what_was_sent_between_connections() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let mut first = fresh_get(&t, &s).await;
    let p1 = first.next().await.unwrap();
    drop(first);
    assert!(t.server.notify_session(&s.id, &note(1)).await);
    // Resuming (not a fresh GET) keeps the same stream, which goes on live.
    let mut resumed = SseReader::new(t.resume(&s, p1.id()).send().await.unwrap());
    let m1 = resumed.next().await.unwrap();
    assert_eq!(n_of(&m1), 1);
    // A resumed connection also counts as the one standalone connection.
    assert_eq!(t.get_in(&s).send().await.unwrap().status(), 409);
    assert!(t.server.notify_session(&s.id, &note(2)).await);
    let m2 = resumed.next().await.unwrap();
    assert_eq!(n_of(&m2), 2);
    let ids: HashSet<&str> = [p1.id(), m1.id(), m2.id()].into_iter().collect();
    assert_eq!(ids.len(), 3);
}

#[tokio::test]
async fn polled_fresh_gets_never_repeat_a_priming_id() {
    // Every connection ends right after priming; a client that keeps no id
    // (or a second listener) comes back with a fresh GET each time.
    let t = start(config().with_disconnect(DisconnectPolicy::AfterPriming)).await;
    let s = t.init("2025-11-25").await;
    let mut seen = HashSet::new();
    let mut ids = Vec::new();
    for n in 0..5 {
        let recs = fresh_get(&t, &s).await.rest().await;
        assert!(recs[0].is_priming(), "{recs:?}");
        unique(&mut seen, recs[0].id());
        ids.push(recs[0].id().to_owned());
        assert!(t.server.notify_session(&s.id, &note(n)).await);
    }
    // Each stream holds exactly the message sent while it was current.
    for (n, id) in ids.iter().enumerate() {
        let (recs, _) = read_all(t.resume(&s, id).send().await.unwrap()).await;
        let msgs: Vec<&Rec> = recs
            .iter()
            .filter(|r| matches!(r, Rec::Event { .. }))
            .collect();
        assert_eq!(msgs.len(), 1, "stream {id}: {recs:?}");
        assert_eq!(n_of(msgs[0]), n as u64);
        unique(&mut seen, msgs[0].id());
        // The last one is still current: polled (retry), not ended.
        assert_eq!(
            has_retry(&recs),
            n == ids.len() - 1,
            "stream {id}: {recs:?}"
        );
    }
}

#[tokio::test]
async fn standalone_ids_are_distinct_without_priming_too() {
    let t = start(config().with_versions([ProtocolVersion::V2025_06_18])).await;
    let s = t.init("2025-06-18").await;
    let mut seen = HashSet::new();
    for n in 0..3 {
        let mut get = fresh_get(&t, &s).await;
        // No priming before 2025-11-25: wait until the server has attached
        // the connection before sending.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(t.server.notify_session(&s.id, &note(n)).await);
        let m = get.next().await.unwrap();
        assert!(!m.is_priming());
        assert_eq!(n_of(&m), n);
        unique(&mut seen, m.id());
    }
}

#[tokio::test]
async fn replaced_standalone_streams_make_room_in_the_event_store() {
    let store = Arc::new(MemoryEventStore::new(MemoryEventStoreConfig {
        max_streams_per_session: 2,
        ..MemoryEventStoreConfig::default()
    }));
    let t = start(config().with_event_store(store)).await;
    let s = t.init("2025-11-25").await;
    let mut first_priming = None;
    for n in 0..6 {
        let mut get = fresh_get(&t, &s).await;
        let p = get.next().await.unwrap();
        assert!(p.is_priming());
        first_priming.get_or_insert_with(|| p.id().to_owned());
        assert!(t.server.notify_session(&s.id, &note(n)).await);
        assert_eq!(n_of(&get.next().await.unwrap()), n);
    }
    // The first stream was finished and then evicted for the later ones.
    let r = t
        .resume(&s, first_priming.as_deref().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 410);
    error_body(r).await;
}
