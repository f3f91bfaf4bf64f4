//! Polling and resumption (SEP-1699; *Transports*, "Resumability and
//! Redelivery") against fake servers that cut the connection at every
//! position, replay the `Last-Event-ID` event, or never send an id.

mod client_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use http::StatusCode;
use mcp_session_engine::client::{ClientConfig, LegacyClient};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::transport::{
    Misbehaviour, RequestOptions, ResumeFailure, StreamEvent, Transport, TransportError,
};
use serde_json::{Value, json};
use tokio::time::Instant;

/// How the scripted server cuts and resumes its `tools/call` stream.
#[derive(Clone, Debug)]
struct Plan {
    /// Connection k (0 = the POST, then each GET) ends before global event
    /// index `cuts[k]`; the connection after the last cut runs to the end.
    cuts: Vec<usize>,
    /// How a cut connection ends.
    ending: Ending,
    /// Replay the `Last-Event-ID` event itself (a known server bug).
    replay_inclusive: bool,
    /// Start with a priming event (2025-11-25) carrying this `retry`.
    priming: Option<Option<u64>>,
}

#[derive(Default)]
struct ScriptState {
    events: Vec<(String, String)>,
    connection: usize,
}

/// The `tools/call` events: [priming], progress 1, a sampling request,
/// progress 2, the response.
fn script_events(id: &Value, priming_retry: Option<Option<u64>>) -> Vec<(String, String)> {
    let mut events = Vec::new();
    if let Some(retry) = priming_retry {
        events.push(("ev-0".to_owned(), priming("ev-0", retry)));
    }
    let bodies = [
        notification(
            "notifications/progress",
            json!({"progressToken": "t", "progress": 1}),
        ),
        server_request(
            "srv-1",
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 5}),
        ),
        notification(
            "notifications/progress",
            json!({"progressToken": "t", "progress": 2}),
        ),
        result(id, json!({"content": [{"type": "text", "text": "done"}]})),
    ];
    for (i, body) in bodies.iter().enumerate() {
        let eid = format!("ev-{}", i + 1);
        events.push((eid.clone(), event(Some(&eid), None, body)));
    }
    events
}

async fn scripted(version: &str, plan: Plan) -> Fake {
    let state = Arc::new(Mutex::new(ScriptState::default()));
    legacy_fake(version, move |seen| {
        let mut st = state.lock().unwrap();
        let (start, connection) = if seen.is_rpc("tools/call") {
            st.events = script_events(seen.rpc_id().unwrap(), plan.priming);
            st.connection = 0;
            (0, 0)
        } else if seen.is_get() {
            let last = seen.header("last-event-id")?;
            let i = st
                .events
                .iter()
                .position(|(id, _)| id == last)
                .expect("known id");
            st.connection += 1;
            (if plan.replay_inclusive { i } else { i + 1 }, st.connection)
        } else {
            return None;
        };
        let len = st.events.len();
        let end = plan.cuts.get(connection).copied().unwrap_or(len).max(start);
        let chunks = st.events[start..end]
            .iter()
            .map(|(_, b)| b.clone())
            .collect();
        let ending = if end == len { Ending::Eof } else { plan.ending };
        Some(sse(chunks, ending, None))
    })
    .await
}

fn fast(fake: &Fake) -> ClientConfig {
    ClientConfig::new(&fake.url).with_reconnect_backoff(Duration::from_millis(5))
}

async fn collect(
    client: &LegacyClient,
) -> Result<Vec<StreamEvent>, (Vec<StreamEvent>, TransportError)> {
    let mut stream = client
        .request("tools/call", None, RequestOptions::default())
        .await
        .map_err(|e| (Vec::new(), e))?;
    let mut events = Vec::new();
    while let Some(ev) = within("reading the stream", stream.next()).await {
        match ev {
            Ok(ev) => events.push(ev),
            Err(e) => return Err((events, e)),
        }
    }
    Ok(events)
}

/// Every message once, in order, and the response; one answer POSTed.
fn assert_exactly_once(fake: &Fake, sampler: &ScriptedInput, events: &[StreamEvent]) {
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            StreamEvent::Notification(n) => {
                let p: Value = serde_json::from_str(n.params.as_ref().unwrap().get()).unwrap();
                format!("progress {}", p["progress"])
            }
            StreamEvent::ServerRequest(r) => format!("request {}", r.id),
            StreamEvent::Response(r) => {
                let v: Value = serde_json::from_str(r.payload.as_ref().unwrap().get()).unwrap();
                format!("response {}", v["content"][0]["text"])
            }
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "progress 1",
            "request \"srv-1\"",
            "progress 2",
            "response \"done\""
        ]
    );
    assert_eq!(sampler.calls(), 1);
    let answers = fake.seen_where(Seen::is_rpc_response);
    assert_eq!(
        answers.len(),
        1,
        "the server request is answered exactly once"
    );
    assert_eq!(answers[0].body.as_ref().unwrap()["id"], "srv-1");
}

async fn run_plan(version: &str, plan: Plan) {
    let fake = scripted(version, plan.clone()).await;
    let sampler = sampler();
    let client = LegacyClient::connect(
        fast(&fake)
            .with_versions(vec![ProtocolVersion::parse(version)])
            .with_input_handler(sampler.clone()),
    )
    .await
    .unwrap();
    let events = collect(&client)
        .await
        .unwrap_or_else(|(ev, e)| panic!("{plan:?}: {e} after {ev:?}"));
    assert_exactly_once(&fake, &sampler, &events);

    let gets = fake.seen_where(Seen::is_get);
    assert_eq!(gets.len(), plan.cuts.len(), "{plan:?}");
    let first_event = if plan.priming.is_some() { 0 } else { 1 };
    for (get, cut) in gets.iter().zip(&plan.cuts) {
        // The last event the client received before the cut.
        let expected = format!("ev-{}", cut - 1 + first_event);
        assert_eq!(
            get.header("last-event-id"),
            Some(expected.as_str()),
            "{plan:?}"
        );
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        assert_eq!(get.header("mcp-session-id"), Some("sess-1"));
        assert_eq!(get.header("mcp-protocol-version"), Some(version));
    }
}

fn plan(cuts: &[usize], ending: Ending) -> Plan {
    Plan {
        cuts: cuts.to_vec(),
        ending,
        replay_inclusive: false,
        priming: Some(Some(10)),
    }
}

// (a) right after the priming event, (b) between any two events, (c) just
// before the response; each with a clean close (server-initiated, polling)
// and an aborted connection (a network failure).
macro_rules! cut_tests {
    ($($name:ident: $cuts:expr, $ending:expr;)*) => {$(
        #[tokio::test]
        async fn $name() {
            run_plan("2025-11-25", plan(&$cuts, $ending)).await;
        }
    )*};
}

cut_tests! {
    cut_after_priming_eof: [1], Ending::Eof;
    cut_after_priming_abort: [1], Ending::Abort;
    cut_after_first_notification_eof: [2], Ending::Eof;
    cut_after_first_notification_abort: [2], Ending::Abort;
    cut_after_server_request_eof: [3], Ending::Eof;
    cut_after_server_request_abort: [3], Ending::Abort;
    cut_just_before_response_eof: [4], Ending::Eof;
    cut_just_before_response_abort: [4], Ending::Abort;
    cut_after_every_event_eof: [1, 2, 3, 4], Ending::Eof;
    cut_after_every_event_abort: [1, 2, 3, 4], Ending::Abort;
    cut_twice_eof: [2, 4], Ending::Eof;
}

// (e) a server that replays the Last-Event-ID event itself.
#[tokio::test]
async fn a_replayed_last_event_id_event_is_delivered_once_at_every_position() {
    for cuts in [vec![1], vec![2], vec![3], vec![4], vec![1, 2, 3, 4]] {
        for ending in [Ending::Eof, Ending::Abort] {
            run_plan(
                "2025-11-25",
                Plan {
                    replay_inclusive: true,
                    ..plan(&cuts, ending)
                },
            )
            .await;
        }
    }
}

// (i) a 2025-06-18 server: ids but no priming and no retry; the client
// resumes after its reconnect backoff.
#[tokio::test]
async fn a_2025_06_18_server_with_ids_is_resumed_at_every_position() {
    for cuts in [vec![1], vec![2], vec![3], vec![1, 2, 3]] {
        run_plan(
            "2025-06-18",
            Plan {
                priming: None,
                ..plan(&cuts, Ending::Abort)
            },
        )
        .await;
    }
}

#[tokio::test(start_paused = true)]
async fn without_retry_the_reconnect_backoff_is_waited() {
    let ended = Arc::new(Mutex::new(Vec::new()));
    let marks = ended.clone();
    let fake = legacy_fake("2025-06-18", move |seen| {
        if seen.is_rpc("tools/call") {
            let progress = notification(
                "notifications/progress",
                json!({"progressToken": "t", "progress": 1}),
            );
            return Some(sse(
                vec![event(Some("a1"), None, &progress)],
                Ending::Eof,
                Some(marks.clone()),
            ));
        }
        if seen.is_get() {
            assert_eq!(seen.header("last-event-id"), Some("a1"));
            return Some(sse(
                vec![event(Some("a2"), None, &result(&json!(2), json!({})))],
                Ending::Eof,
                None,
            ));
        }
        None
    })
    .await;
    let client = LegacyClient::connect(
        ClientConfig::new(&fake.url)
            .with_versions(vec![ProtocolVersion::V2025_06_18])
            .with_reconnect_backoff(Duration::from_millis(3000)),
    )
    .await
    .unwrap();
    let events = collect(&client).await.unwrap();
    assert_eq!(events.len(), 2);
    let get = &fake.seen_where(Seen::is_get)[0];
    let waited = get.at - ended.lock().unwrap()[0];
    assert_eq!(waited, Duration::from_millis(3000));
}

// (g) the client waits exactly the last `retry` the server sent.
#[tokio::test(start_paused = true)]
async fn the_last_retry_sent_is_waited_exactly() {
    let ended = Arc::new(Mutex::new(Vec::new()));
    let marks = ended.clone();
    let fake = legacy_fake("2025-11-25", move |seen| {
        let id = json!(2);
        let progress = |n: u32| {
            notification(
                "notifications/progress",
                json!({"progressToken": "t", "progress": n}),
            )
        };
        if seen.is_rpc("tools/call") {
            return Some(sse(
                vec![priming("r0", Some(2500))],
                Ending::Eof,
                Some(marks.clone()),
            ));
        }
        match seen.header("last-event-id") {
            // A retry block of its own, then an event: the later value wins.
            Some("r0") => Some(sse(
                vec![
                    "retry: 700\n\n".to_owned(),
                    event(Some("r1"), None, &progress(1)),
                ],
                Ending::Abort,
                Some(marks.clone()),
            )),
            // Rust-SDK order: data, id, retry in one event.
            Some("r1") => Some(sse(
                vec![format!("data: {} \nid: r2\nretry: 1234\n\n", progress(2))],
                Ending::Eof,
                Some(marks.clone()),
            )),
            Some("r2") => Some(sse(
                vec![event(Some("r3"), None, &result(&id, json!({})))],
                Ending::Eof,
                None,
            )),
            _ => None,
        }
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    let start = Instant::now();
    let events = collect(&client).await.unwrap();
    assert_eq!(events.len(), 3, "{events:?}");
    let gets = fake.seen_where(Seen::is_get);
    let ended = ended.lock().unwrap().clone();
    assert_eq!(gets.len(), 3);
    let waits: Vec<Duration> = gets.iter().zip(&ended).map(|(g, e)| g.at - *e).collect();
    assert_eq!(
        waits,
        [
            Duration::from_millis(2500),
            Duration::from_millis(700),
            Duration::from_millis(1234)
        ]
    );
    // Plus the 20 ms the fake takes to abort its second connection.
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(2500 + 700 + 1234 + 20)
    );
}

// (d) the connection ends before any event id: nothing to resume from.
#[tokio::test(start_paused = true)]
async fn a_stream_cut_before_any_event_id_fails_at_once() {
    for ending in [Ending::Eof, Ending::Abort] {
        let ended = Arc::new(Mutex::new(Vec::new()));
        let marks = ended.clone();
        let fake = legacy_fake("2025-11-25", move |seen| {
            seen.is_rpc("tools/call").then(|| {
                let progress = notification(
                    "notifications/progress",
                    json!({"progressToken": "t", "progress": 1}),
                );
                sse(
                    vec![event(None, Some(10), &progress)],
                    ending,
                    Some(marks.clone()),
                )
            })
        })
        .await;
        let client = LegacyClient::connect(ClientConfig::new(&fake.url))
            .await
            .unwrap();
        let (events, err) = collect(&client).await.unwrap_err();
        assert_eq!(
            Instant::now(),
            ended.lock().unwrap()[0],
            "no waiting after the cut"
        );
        assert_eq!(events.len(), 1, "the message before the cut was delivered");
        assert!(
            matches!(
                &err,
                TransportError::ResumeFailed(ResumeFailure::NoEventId { .. })
            ),
            "{err:?}"
        );
        assert!(fake.seen_where(Seen::is_get).is_empty());
        // The client stopped waiting for a request that may still run: cancel it.
        within("cancel", async {
            while fake
                .seen_where(|s| s.is_rpc("notifications/cancelled"))
                .is_empty()
            {
                tokio::task::yield_now().await;
            }
        })
        .await;
    }
}

#[tokio::test(start_paused = true)]
async fn an_empty_stream_fails_at_once() {
    let fake = legacy_fake("2025-11-25", |seen| {
        seen.is_rpc("tools/call")
            .then(|| sse(vec![], Ending::Eof, None))
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    let (_, err) = collect(&client).await.unwrap_err();
    assert!(matches!(err, TransportError::ResumeFailed(_)), "{err:?}");
}

#[tokio::test]
async fn an_http_error_on_the_resumption_get_is_a_clear_error() {
    for (code, expect) in [
        (StatusCode::BAD_REQUEST, 400u16),
        (StatusCode::INTERNAL_SERVER_ERROR, 500),
    ] {
        let fake = legacy_fake("2025-11-25", move |seen| {
            if seen.is_rpc("tools/call") {
                return Some(sse(vec![priming("x0", Some(1))], Ending::Eof, None));
            }
            seen.is_get().then(|| {
                status_json(code, &json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Unknown Last-Event-ID x0"}}))
            })
        })
        .await;
        let client = LegacyClient::connect(ClientConfig::new(&fake.url))
            .await
            .unwrap();
        let (_, err) = collect(&client).await.unwrap_err();
        match err {
            TransportError::Http {
                status, message, ..
            } => {
                assert_eq!(status, expect);
                assert_eq!(message, "Unknown Last-Event-ID x0");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn reconnections_that_bring_nothing_are_bounded_by_attempts() {
    let fake = legacy_fake("2025-11-25", |seen| {
        if seen.is_rpc("tools/call") {
            return Some(sse(vec![priming("z0", Some(100))], Ending::Eof, None));
        }
        // A failed resume answered with 200 and an empty stream (a known bug).
        seen.is_get().then(|| sse(vec![], Ending::Eof, None))
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url).with_max_resume_attempts(3))
        .await
        .unwrap();
    let (_, err) = collect(&client).await.unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            &err,
            TransportError::ResumeFailed(ResumeFailure::AttemptsExhausted {
                attempts: 3,
                max_attempts: 3,
                ..
            })
        ),
        "{err:?}"
    );
    assert!(text.contains("300ms"), "{text}");
    assert_eq!(fake.seen_where(Seen::is_get).len(), 3);
}

/// A server that answers every poll with the id the client already has
/// brings nothing new: those reconnections count against the bound, or a
/// server stuck on one id would be polled forever.
#[tokio::test(start_paused = true)]
async fn an_id_the_client_already_has_is_not_progress() {
    let fake = legacy_fake("2025-11-25", |seen| {
        if seen.is_rpc("tools/call") {
            return Some(sse(vec![priming("z0", Some(100))], Ending::Eof, None));
        }
        seen.is_get()
            .then(|| sse(vec![priming("z0", None)], Ending::Eof, None))
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url).with_max_resume_attempts(3))
        .await
        .unwrap();
    let (_, err) = collect(&client).await.unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::ResumeFailed(ResumeFailure::AttemptsExhausted { attempts: 3, .. })
        ),
        "{err:?}"
    );
    let gets = fake.seen_where(Seen::is_get);
    assert_eq!(gets.len(), 3);
    assert!(gets.iter().all(|g| g.header("last-event-id") == Some("z0")));
}

#[tokio::test(start_paused = true)]
async fn reconnections_are_bounded_by_time() {
    let fake = legacy_fake("2025-11-25", |seen| {
        if seen.is_rpc("tools/call") {
            return Some(sse(vec![priming("z0", Some(60_000))], Ending::Eof, None));
        }
        seen.is_get().then(|| sse(vec![], Ending::Abort, None))
    })
    .await;
    let client = LegacyClient::connect(
        ClientConfig::new(&fake.url)
            .with_max_resume_time(Duration::from_secs(150))
            .with_request_timeout(None),
    )
    .await
    .unwrap();
    let (_, err) = collect(&client).await.unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::ResumeFailed(ResumeFailure::TimeExhausted {
                attempts: 2,
                max_time,
                ..
            }) if *max_time == Duration::from_secs(150)
        ),
        "{err:?}"
    );
    assert_eq!(fake.seen_where(Seen::is_get).len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_long_poll_that_primes_each_connection_is_not_cut_short() {
    let polls = 30;
    let fake = legacy_fake("2025-11-25", move |seen| {
        if seen.is_rpc("tools/call") {
            return Some(sse(vec![priming("p0", Some(1000))], Ending::Eof, None));
        }
        let last = seen.header("last-event-id")?;
        let n: usize = last.trim_start_matches('p').parse().unwrap();
        if n < polls {
            Some(sse(
                vec![priming(&format!("p{}", n + 1), None)],
                Ending::Eof,
                None,
            ))
        } else {
            Some(sse(
                vec![event(Some("done"), None, &result(&json!(2), json!({})))],
                Ending::Eof,
                None,
            ))
        }
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url).with_max_resume_attempts(3))
        .await
        .unwrap();
    let events = collect(&client).await.unwrap();
    assert!(matches!(events.as_slice(), [StreamEvent::Response(_)]));
    assert_eq!(fake.seen_where(Seen::is_get).len(), polls + 1);
}

/// A resumption GET answered 200 with something other than an event
/// stream: the error names the stream being resumed, the media type
/// received (none when the answer has no `Content-Type`) and the one
/// expected.
#[tokio::test(start_paused = true)]
async fn a_resumption_answered_with_another_media_type_names_both() {
    for content_type in [Some("text/plain"), None] {
        let fake = legacy_fake("2025-11-25", move |seen| {
            if seen.is_rpc("tools/call") {
                return Some(sse(vec![priming("m0", Some(1))], Ending::Eof, None));
            }
            seen.is_get().then(|| {
                let mut answer = http::Response::builder();
                if let Some(ct) = content_type {
                    answer = answer.header("content-type", ct);
                }
                answer.body(axum::body::Body::from("hello")).unwrap()
            })
        })
        .await;
        let client = LegacyClient::connect(ClientConfig::new(&fake.url))
            .await
            .unwrap();
        let (_, err) = collect(&client).await.unwrap_err();
        let call = &fake.seen_where(|s| s.is_rpc("tools/call"))[0];
        let id = call.rpc_id().unwrap().clone();
        match err {
            TransportError::PeerMisbehaved(Misbehaviour::WrongContentType {
                what,
                got,
                expected,
            }) => {
                assert_eq!(what, format!("GET resuming the stream of request {id}"));
                assert_eq!(got.as_deref(), content_type);
                assert_eq!(expected, "text/event-stream");
            }
            other => panic!("{other:?}"),
        }
    }
}
