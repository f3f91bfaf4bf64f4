//! The standalone GET stream ("Listening for Messages from the Server").

mod server_common;

use std::time::{Duration, Instant};

use mcp_rev_2025_11_25::{DisconnectPolicy, PollingExt};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::event_id::{EventId, StreamId};
use mcp_transport_core::jsonrpc::Notification;
use serde_json::json;
use server_common::*;

fn changed() -> Notification {
    Notification::new::<()>("notifications/tools/list_changed", None).unwrap()
}

#[tokio::test]
async fn get_carries_server_notifications_on_the_standalone_stream() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let other = t.init("2025-11-25").await;
    assert!(
        !t.server.notify_session(&s.id, &changed()).await,
        "no GET stream yet: nowhere to send"
    );
    assert_eq!(t.server.standalone_streams().await, 0);
    let mut get = SseReader::new(t.get_in(&s).send().await.unwrap());
    let priming = get.next().await.unwrap();
    assert!(priming.is_priming());
    assert_eq!(t.server.standalone_streams().await, 1);
    let mut other_get = SseReader::new(t.get_in(&other).send().await.unwrap());
    assert!(other_get.next().await.unwrap().is_priming());
    assert_eq!(t.server.standalone_streams().await, 2);
    assert!(t.server.terminate_session(&other.id).await);
    assert_eq!(t.server.standalone_streams().await, 1);
    let pid = EventId::parse(priming.id()).unwrap();
    assert_eq!(pid.stream, StreamId::STANDALONE);
    assert_eq!(pid.seq, 0);
    assert_eq!(t.server.notify_all(&changed()).await, 1);
    let m = get.next().await.unwrap();
    assert_eq!(m.json()["method"], "notifications/tools/list_changed");
    assert_eq!(EventId::parse(m.id()).unwrap().seq, 1);
    // A request's response never goes on the GET stream.
    let (recs, _) = read_all(t.call(&s, 1, "progress", json!({"n": 2})).await).await;
    assert_eq!(messages(&recs).len(), 3);
    assert!(t.server.notify_session(&s.id, &changed()).await);
    let m = get.next().await.unwrap();
    assert_eq!(m.json()["method"], "notifications/tools/list_changed");
    assert!(!get.raw.contains("\"result\""), "{}", get.raw);
}

#[tokio::test]
async fn get_needs_accept_event_stream() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let resp = t
        .http
        .get(&t.url)
        .header("accept", "application/json")
        .header("mcp-session-id", &s.id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 406);
    error_body(resp).await;
}

#[tokio::test]
async fn get_is_405_when_the_stream_is_off() {
    let t = start(config().with_get_stream(false)).await;
    let s = t.init("2025-11-25").await;
    let resp = t.get_in(&s).send().await.unwrap();
    assert_eq!(resp.status(), 405);
    let allow = resp.headers()["allow"].to_str().unwrap().to_owned();
    assert!(allow.contains("POST"), "{allow}");
    error_body(resp).await;
}

/// `Allow` names only supported methods: with DELETE refused too, GET's 405
/// says `POST` alone.
#[tokio::test]
async fn get_405_does_not_offer_a_refused_delete() {
    let t = start(config().with_get_stream(false).with_allow_delete(false)).await;
    let s = t.init("2025-11-25").await;
    let resp = t.get_in(&s).send().await.unwrap();
    assert_eq!(resp.status(), 405);
    assert_eq!(resp.headers()["allow"], "POST");
}

#[tokio::test]
async fn a_second_concurrent_get_is_409() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let mut first = SseReader::new(t.get_in(&s).send().await.unwrap());
    assert!(first.next().await.unwrap().is_priming());
    let second = t.get_in(&s).send().await.unwrap();
    assert_eq!(second.status(), 409);
    let v = error_body(second).await;
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("one at a time")
    );
    // Another session has its own.
    let other = t.init("2025-11-25").await;
    let resp = t.get_in(&other).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    // Once the first is gone, a new GET is fine and starts at the end.
    drop(first);
    let mut again = None;
    for _ in 0..100 {
        let r = t.get_in(&s).send().await.unwrap();
        if r.status() == 200 {
            again = Some(SseReader::new(r));
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut again = again.expect("the first GET was never released");
    assert!(again.next().await.unwrap().is_priming());
    t.server.notify_session(&s.id, &changed()).await;
    let m = again.next().await.unwrap();
    assert_eq!(m.json()["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn the_get_stream_is_polled_and_resumable() {
    let t = start(
        config()
            .with_disconnect(DisconnectPolicy::AfterPriming)
            .with_resume_hold(Duration::from_millis(150)),
    )
    .await;
    let s = t.init("2025-11-25").await;
    let (first, _) = read_all(t.get_in(&s).send().await.unwrap()).await;
    assert_eq!(first.len(), 2);
    assert!(first[0].is_priming());
    assert_eq!(first[1], Rec::Retry(50));
    // Sent while the client is between polls: kept for the resume.
    assert!(t.server.notify_session(&s.id, &changed()).await);
    assert!(t.server.notify_session(&s.id, &changed()).await);
    let (second, _) = read_all(t.resume(&s, first[0].id()).send().await.unwrap()).await;
    assert_eq!(messages(&second).len(), 2, "{second:?}");
    assert!(
        matches!(second.last(), Some(Rec::Retry(50))),
        "the stream never ends"
    );
    // Nothing new: the resume is held (long-poll), then closed with a fresh
    // id naming the same position (so a client that remembers ids per
    // connection still has one) and `retry`.
    let held = Instant::now();
    let (third, _) = read_all(t.resume(&s, &last_id(&second)).send().await.unwrap()).await;
    assert!(
        held.elapsed() >= Duration::from_millis(150),
        "{:?}",
        held.elapsed()
    );
    assert_eq!(third.len(), 2, "{third:?}");
    assert!(third[0].is_priming(), "{third:?}");
    assert_eq!(third[1], Rec::Retry(50));
    let renewed = third[0].id().to_owned();
    assert_eq!(
        renewed,
        format!("{}.1", last_id(&second)),
        "the same position, renewed"
    );
    // Resuming from the fresh id is resuming from that position.
    assert!(t.server.notify_session(&s.id, &changed()).await);
    let (fourth, _) = read_all(t.resume(&s, &renewed).send().await.unwrap()).await;
    assert_eq!(messages(&fourth).len(), 1, "{fourth:?}");
    assert!(
        !fourth.iter().any(Rec::is_priming),
        "it carried an id: no renewal"
    );
    // Another empty poll gets another fresh id, never the same one twice.
    let (fifth, _) = read_all(t.resume(&s, &last_id(&fourth)).send().await.unwrap()).await;
    assert!(fifth[0].is_priming(), "{fifth:?}");
    assert_ne!(fifth[0].id(), renewed);
}

/// A held resume delivers what arrives during the hold, at once, and then
/// closes (the request goes on).
#[tokio::test]
async fn a_held_resume_delivers_what_arrives_and_then_closes() {
    let t = start(
        config()
            .with_disconnect(DisconnectPolicy::AfterPriming)
            .with_resume_hold(Duration::from_secs(30)),
    )
    .await;
    let s = t.init("2025-11-25").await;
    let (first, _) = read_all(t.get_in(&s).send().await.unwrap()).await;
    let resume = t.resume(&s, first[0].id()).send().await.unwrap();
    let t2 = &t;
    let sid = s.id.clone();
    let notify = async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(t2.server.notify_session(&sid, &changed()).await);
    };
    let started = Instant::now();
    let ((second, _), ()) = tokio::join!(read_all(resume), notify);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "not held for the whole hold"
    );
    assert_eq!(messages(&second).len(), 1, "{second:?}");
    assert_eq!(second.last(), Some(&Rec::Retry(50)));
    assert!(!second.iter().any(Rec::is_priming), "{second:?}");
}

#[tokio::test]
async fn a_2025_06_18_get_stream_is_not_primed() {
    let t = start(config().with_versions([ProtocolVersion::V2025_06_18])).await;
    let s = t.init("2025-06-18").await;
    let mut get = SseReader::new(t.get_in(&s).send().await.unwrap());
    // Nothing arrives until a notification is sent.
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert!(t.server.notify_session(&s.id, &changed()).await);
    let m = get.next().await.unwrap();
    assert!(!m.is_priming());
    assert_eq!(m.json()["method"], "notifications/tools/list_changed");
    assert_eq!(EventId::parse(m.id()).unwrap().seq, 1);
}
