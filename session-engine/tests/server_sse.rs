//! SSE responses: priming and ids per revision, JSON vs SSE, progress on
//! the request's stream, keep-alive, disconnect policies (SEP-1699) and
//! `close_sse_stream`.

mod server_common;

use std::collections::HashSet;
use std::time::Duration;

use mcp_rev_2025_11_25::{DisconnectPolicy, PollingExt};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::event_id::EventId;
use serde_json::json;
use server_common::*;

#[tokio::test]
async fn sse_responses_carry_the_right_headers() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let resp = t.call(&s, 1, "echo", json!({})).await;
    let h = resp.headers();
    assert_eq!(h["content-type"], "text/event-stream");
    assert_eq!(h["cache-control"], "no-cache");
    assert_eq!(h["x-accel-buffering"], "no");
}

#[tokio::test]
async fn polling_sessions_prime_every_stream_with_unique_stream_naming_ids() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let mut seen = HashSet::new();
    let mut streams = HashSet::new();
    for id in 1..=3 {
        let resp = t
            .post_in(&s)
            .body(call_body_with_progress(
                id,
                "progress",
                json!({"n": 2}),
                "tok",
            ))
            .send()
            .await
            .unwrap();
        let (recs, raw) = read_all(resp).await;
        assert!(
            recs[0].is_priming(),
            "first event is the priming event: {recs:?}"
        );
        let priming = EventId::parse(recs[0].id()).unwrap();
        assert!(priming.is_priming());
        streams.insert(priming.stream);
        // Every event carries its own id, all of one stream, counting up.
        let blocks: Vec<&str> = raw.split("\n\n").filter(|b| b.contains("data")).collect();
        assert_eq!(blocks.len(), recs.len());
        assert!(blocks.iter().all(|b| b.contains("id: ")), "{raw}");
        for (seq, r) in recs.iter().enumerate() {
            let eid = EventId::parse(r.id()).unwrap();
            assert_eq!(eid.stream, priming.stream);
            assert_eq!(eid.seq, seq as u64);
            assert_eq!(eid.session, priming.session);
            assert!(seen.insert(r.id().to_owned()), "duplicate id {}", r.id());
        }
        let msgs = messages(&recs);
        assert_eq!(msgs.len(), 3);
        assert!(is_response(&msgs[2], id));
        assert!(!has_retry(&recs), "Never policy: no early close");
    }
    assert_eq!(streams.len(), 3, "each request has its own stream");
}

#[tokio::test]
async fn a_2025_06_18_session_gets_no_priming_but_ids() {
    let t = start(
        config()
            .with_versions([ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25])
            // Ignored for sessions without sse_polling.
            .with_disconnect(DisconnectPolicy::AfterPriming),
    )
    .await;
    let s = t.init("2025-06-18").await;
    assert_eq!(s.version, "2025-06-18");
    let resp = t
        .post_in(&s)
        .body(call_body_with_progress(
            1,
            "progress",
            json!({"n": 2, "delay_ms": 20}),
            "p",
        ))
        .send()
        .await
        .unwrap();
    let (recs, raw) = read_all(resp).await;
    assert!(recs.iter().all(|r| !r.is_priming()), "no priming: {recs:?}");
    assert!(!has_retry(&recs), "never closed early");
    let msgs = messages(&recs);
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[0]["method"], "notifications/progress");
    assert!(is_response(&msgs[2], 1));
    assert_eq!(raw.matches("id: ").count(), 3, "{raw}");
    assert_eq!(EventId::parse(recs[0].id()).unwrap().seq, 1);
    // close_sse_stream is a no-op there.
    let (recs, _) = read_all(t.call(&s, 2, "close_stream", json!({"delay_ms": 10})).await).await;
    let msgs = messages(&recs);
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[2]["result"]["closed"], false);
}

#[tokio::test]
async fn event_ids_can_be_turned_off_for_non_polling_sessions() {
    let t = start(
        config()
            .with_versions([ProtocolVersion::V2025_06_18])
            .with_event_ids(false),
    )
    .await;
    let s = t.init("2025-06-18").await;
    let (recs, raw) = read_all(t.call(&s, 1, "progress", json!({"n": 1})).await).await;
    assert_eq!(messages(&recs).len(), 2);
    assert!(!raw.contains("id:"), "{raw}");
}

#[tokio::test]
async fn json_response_mode_answers_json_until_the_handler_streams() {
    let t = start(config().with_json_response(true)).await;
    let s = t.init("2025-11-25").await;
    let resp = t.call(&s, 1, "echo", json!({"x": 1})).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let v: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(v["result"]["echo"]["x"], 1);
    // A related message before the result switches the answer to SSE.
    let resp = t
        .post_in(&s)
        .body(call_body_with_progress(2, "progress", json!({"n": 2}), "t"))
        .send()
        .await
        .unwrap();
    let (recs, _) = read_all(resp).await;
    assert!(recs[0].is_priming());
    let msgs = messages(&recs);
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[0]["method"], "notifications/progress");
    assert!(is_response(&msgs[2], 2));
}

#[tokio::test]
async fn progress_goes_on_the_requests_own_stream_before_the_response() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let a = t
        .post_in(&s)
        .body(call_body_with_progress(
            1,
            "progress",
            json!({"n": 3, "delay_ms": 10}),
            "A",
        ))
        .send()
        .await
        .unwrap();
    let b = t
        .post_in(&s)
        .body(call_body_with_progress(
            2,
            "progress",
            json!({"n": 3, "delay_ms": 10}),
            "B",
        ))
        .send()
        .await
        .unwrap();
    let ((ra, _), (rb, _)) = tokio::join!(read_all(a), read_all(b));
    for (recs, token, id) in [(ra, "A", 1), (rb, "B", 2)] {
        let msgs = messages(&recs);
        assert_eq!(msgs.len(), 4);
        for (i, m) in msgs[..3].iter().enumerate() {
            assert_eq!(m["method"], "notifications/progress");
            assert_eq!(m["params"]["progressToken"], token);
            assert_eq!(m["params"]["progress"], (i + 1) as f64);
        }
        assert!(is_response(&msgs[3], id));
    }
}

#[tokio::test]
async fn idle_streams_get_keepalive_comments() {
    let t = start(config().with_keepalive(Some(Duration::from_millis(30)))).await;
    let s = t.init("2025-11-25").await;
    let (recs, raw) = read_all(t.call(&s, 1, "slow", json!({"ms": 200})).await).await;
    assert!(raw.contains(": keep-alive\n"), "{raw}");
    assert!(is_response(messages(&recs).last().unwrap(), 1));
}

#[tokio::test]
async fn policy_never_keeps_one_connection() {
    let t = start(config().with_disconnect(DisconnectPolicy::Never)).await;
    let s = t.init("2025-11-25").await;
    let resp = t
        .call(&s, 1, "progress", json!({"n": 3, "delay_ms": 20}))
        .await;
    let conns = follow(&t, &s, resp, 1).await;
    assert_eq!(conns.len(), 1);
    assert_eq!(messages(&conns[0]).len(), 4);
}

#[tokio::test]
async fn policy_after_priming_closes_new_streams_after_priming_and_polls() {
    let t = start(config().with_disconnect(DisconnectPolicy::AfterPriming)).await;
    let s = t.init("2025-11-25").await;
    let resp = t
        .call(&s, 1, "progress", json!({"n": 3, "delay_ms": 30}))
        .await;
    let conns = follow(&t, &s, resp, 1).await;
    // The POST connection: priming, then retry, then the end.
    assert_eq!(conns[0].len(), 2, "{:?}", conns[0]);
    assert!(conns[0][0].is_priming());
    assert_eq!(conns[0][1], Rec::Retry(50));
    // Every resume that did not end the stream ended with a retry.
    for c in &conns[1..conns.len() - 1] {
        assert!(matches!(c.last(), Some(Rec::Retry(50))), "{c:?}");
    }
    assert!(!has_retry(conns.last().unwrap()));
    // Exactly the messages, once each, in order.
    let all: Vec<_> = conns.iter().flat_map(|c| messages(c)).collect();
    assert_eq!(all.len(), 4, "{all:?}");
    for (i, m) in all[..3].iter().enumerate() {
        assert_eq!(m["params"]["data"]["step"], i as u64 + 1);
    }
    assert!(is_response(&all[3], 1));
}

#[tokio::test]
async fn policy_after_priming_resume_delivers_what_is_ready_first() {
    let t = start(config().with_disconnect(DisconnectPolicy::AfterPriming)).await;
    let s = t.init("2025-11-25").await;
    let resp = t
        .call(&s, 1, "progress", json!({"n": 2, "delay_ms": 0}))
        .await;
    let (first, _) = read_all(resp).await;
    assert_eq!(messages(&first).len(), 0);
    // Wait until the request is done, then a single resume gets everything.
    eventually("the completion", || {
        t.handler
            .completions
            .load(std::sync::atomic::Ordering::SeqCst)
            == 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let (second, _) = read_all(t.resume(&s, first[0].id()).send().await.unwrap()).await;
    let msgs = messages(&second);
    assert_eq!(msgs.len(), 3, "{second:?}");
    assert!(is_response(&msgs[2], 1));
    assert!(!has_retry(&second));
}

#[tokio::test]
async fn policy_after_events_counts_message_events_per_connection() {
    let t = start(config().with_disconnect(DisconnectPolicy::AfterEvents(2))).await;
    let s = t.init("2025-11-25").await;
    let resp = t
        .call(&s, 1, "progress", json!({"n": 5, "delay_ms": 5}))
        .await;
    let conns = follow(&t, &s, resp, 1).await;
    // 6 messages: connections carry 2, 2, 2 (the last ends with the response).
    let counts: Vec<usize> = conns.iter().map(|c| messages(c).len()).collect();
    assert_eq!(counts, [2, 2, 2], "{conns:?}");
    assert!(conns[0][0].is_priming());
    assert!(matches!(conns[0].last(), Some(Rec::Retry(50))));
    assert!(matches!(conns[1].last(), Some(Rec::Retry(50))));
    assert!(!has_retry(&conns[2]));
    let all: Vec<_> = conns.iter().flat_map(|c| messages(c)).collect();
    for (i, m) in all[..5].iter().enumerate() {
        assert_eq!(m["params"]["data"]["step"], i as u64 + 1);
    }
    assert!(is_response(&all[5], 1));
}

#[tokio::test]
async fn policy_after_ms_closes_after_the_time() {
    let t = start(config().with_disconnect(DisconnectPolicy::AfterMs(60))).await;
    let s = t.init("2025-11-25").await;
    let resp = t
        .call(&s, 1, "progress", json!({"n": 4, "delay_ms": 50}))
        .await;
    let conns = follow(&t, &s, resp, 1).await;
    assert!(conns.len() >= 2, "{conns:?}");
    assert!(conns[0][0].is_priming());
    for c in &conns[..conns.len() - 1] {
        assert!(matches!(c.last(), Some(Rec::Retry(50))), "{c:?}");
    }
    let all: Vec<_> = conns.iter().flat_map(|c| messages(c)).collect();
    assert_eq!(all.len(), 5);
    assert!(is_response(&all[4], 1));
}

#[tokio::test]
async fn close_sse_stream_closes_the_connection_and_the_request_goes_on() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let resp = t.call(&s, 1, "close_stream", json!({"delay_ms": 50})).await;
    let conns = follow(&t, &s, resp, 1).await;
    assert!(conns.len() >= 2, "{conns:?}");
    let first = &conns[0];
    assert!(first[0].is_priming());
    assert_eq!(first.last(), Some(&Rec::Retry(50)));
    assert!(!messages(first).iter().any(|m| is_response(m, 1)));
    let all: Vec<_> = conns.iter().flat_map(|c| messages(c)).collect();
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(all[0]["params"]["data"]["phase"], "before");
    assert_eq!(all[1]["params"]["data"]["phase"], "after");
    assert_eq!(all[2]["result"]["closed"], true);
}
