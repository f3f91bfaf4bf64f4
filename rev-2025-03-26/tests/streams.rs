//! Streams without SEP-1699 on both profiles, resumption, and the
//! revision-specific server requests.
//!
//! *Transports* (2025-03-26 and 2025-06-18), "Sending Messages to the
//! Server" 6: "The server SHOULD NOT close the SSE stream before sending a
//! JSON-RPC response per each received JSON-RPC request"; "Disconnection MAY
//! occur at any time (e.g., due to network conditions)" and "SHOULD NOT be
//! interpreted as the client cancelling its request". "Resumability and
//! Redelivery" 1-2: "Servers MAY attach an id field to their SSE events";
//! the client resumes "with an HTTP GET ... and include the Last-Event-ID
//! header". These revisions have no priming event and no `retry`.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;
use futures::StreamExt;
use mcp_rev_2025_03_26::mcp_transport_core;
use mcp_rev_2025_03_26::{LegacyClient, Profile};
use mcp_transport_core::jsonrpc::Notification;
use mcp_transport_core::sse::SseItem;
use mcp_transport_core::transport::{
    ListenFilter, RequestOptions, ResumeFailure, Transport, TransportError,
};
use serde_json::{Value, json};

const PROFILES: [(Profile, &str); 2] = [
    (Profile::V2025_03_26, "2025-03-26"),
    (Profile::V2025_06_18, "2025-06-18"),
];

/// Sends `n` to every standalone stream once the session's is open (it
/// opens with the client's GET; before that, nothing is sent).
async fn notify_once_open(server: &TestServer, n: &Notification) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while server.server.notify_all(n).await != 1 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no standalone stream opened"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Asserts SSE items hold no priming event, no `retry`, no id-only block,
/// and (when `ids`) an id on every event, or (else) none.
fn assert_plain_events(items: &[SseItem], ids: bool) {
    assert!(!items.is_empty());
    for item in items {
        match item {
            SseItem::Event(e) => {
                assert!(!e.data.is_empty(), "a priming event (empty data)");
                assert_eq!(!e.last_event_id.is_empty(), ids, "{e:?}");
            }
            SseItem::Retry(ms) => panic!("retry: {ms} sent"),
            SseItem::LastEventId(id) => panic!("an id-only block {id:?}"),
        }
    }
}

#[tokio::test]
async fn no_priming_event_on_either_profile() {
    for (profile, version) in PROFILES {
        for policy in ["never", "after-priming", "after-events:1", "after-ms:0"] {
            // The disconnect policy is a 2025-11-25 (SEP-1699) setting: on
            // a server that also serves 2025-11-25 with it, it must change
            // nothing for these revisions' sessions (SEP-1699, "Backward
            // Compatibility": old client, new server).
            use mcp_rev_2025_11_25::PollingExt;
            let mut config = mcp_rev_2025_11_25::register(test_config(profile))
                .with_disconnect(policy.parse().unwrap());
            config.versions.push(mcp_rev_2025_11_25::VERSION);
            let handler = std::sync::Arc::new(test_handler());
            let engine = mcp_rev_2025_03_26::LegacyServer::new(handler.clone(), config);
            let server = TestServer::serve(engine, handler).await;
            let raw = server.raw();
            let s = raw.init(version).await;
            let resp = raw
                .post_in(&s)
                .body(call(1, "countdown", json!({"n": 3, "interval_ms": 5})).to_string())
                .send()
                .await
                .unwrap();
            let items = read_sse(resp).await;
            assert_plain_events(&items, true);
            let messages = sse_messages(&items);
            // The whole countdown and its response on the one connection.
            assert_eq!(messages.len(), 4, "{version} {policy}: {messages:?}");
            assert_eq!(messages[3]["result"]["done"], 3);
            assert_eq!(server.resumes(), 0);
        }
    }
}

#[tokio::test]
async fn the_standalone_stream_has_no_priming_event_either() {
    for (profile, version) in PROFILES {
        let server = TestServer::profile(profile).await;
        let raw = server.raw();
        let s = raw.init(version).await;
        let mut resp = raw.get_in(&s).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(content_type(&resp), "text/event-stream");
        let n = Notification::new("notifications/custom", Some(&json!({"i": 1}))).unwrap();
        notify_once_open(&server, &n).await;
        let mut decoder = mcp_transport_core::sse::Decoder::new();
        let mut items = Vec::new();
        while items.is_empty() {
            let chunk = tokio::time::timeout(WAIT, resp.chunk())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            decoder.feed(&chunk, &mut items).unwrap();
        }
        assert_plain_events(&items, true);
        assert_eq!(sse_messages(&items)[0]["params"]["i"], 1);
    }
}

/// `RequestContext::close_sse_stream` is SEP-1699: it does nothing here.
#[tokio::test]
async fn close_sse_stream_does_nothing_on_these_revisions() {
    for (profile, _) in PROFILES {
        let server = TestServer::profile(profile).await;
        let client = connect(&server.url, profile).await;
        let (events, response) = collect(
            client
                .request(
                    "tools/call",
                    Some(tool("close_stream", json!({}))),
                    RequestOptions::default(),
                )
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(result_of(&response), json!({"closed": false}));
        assert_eq!(describe_all(&events), [r#"log "after""#]);
        assert_eq!(server.resumes(), 0);
    }
}

/// A network drop mid-request: the client waits its backoff, resumes by
/// GET with `Last-Event-ID`, and every message arrives exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_drop_is_resumed_with_last_event_id_after_the_backoff() {
    const BACKOFF: Duration = Duration::from_millis(150);
    for (profile, _) in PROFILES {
        let server = TestServer::profile(profile).await;
        let proxy = Proxy::start(server.addr).await.expect("proxy");
        let config =
            client_config(&proxy.url(), profile, test_input()).with_reconnect_backoff(BACKOFF);
        let client = LegacyClient::connect(config).await.unwrap();
        let mut stream = client
            .request(
                "tools/call",
                Some(tool("countdown", json!({"n": 8, "interval_ms": 20}))),
                RequestOptions {
                    progress: true,
                    ..RequestOptions::default()
                },
            )
            .await
            .unwrap();
        let mut events = Vec::new();
        read_events(&mut stream, &mut events, 4).await;
        let cut_at = tokio::time::Instant::now();
        assert!(
            proxy.cut_and_wait().await >= 1,
            "the request's connection was live"
        );
        let (rest, response) = collect(stream).await.unwrap();
        events.extend(rest);
        assert_eq!(describe_all(&events), countdown_expected(8, true));
        assert_eq!(result_of(&response), json!({"done": 8}));
        let resumes: Vec<Hit> = server.hits().into_iter().filter(Hit::is_resume).collect();
        assert!(!resumes.is_empty(), "{profile:?}: the client resumed");
        assert_eq!(resumes[0].status, 200);
        assert!(
            resumes[0].at.duration_since(cut_at) >= BACKOFF,
            "the client waited its backoff ({:?})",
            resumes[0].at.duration_since(cut_at)
        );
        // A broken connection is not a cancellation.
        assert_eq!(server.handler.cancellations.load(Ordering::SeqCst), 0);
        client.close().await.unwrap();
    }
}

/// The standalone stream is resumed too, replaying what was missed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_drop_on_the_standalone_stream_replays_what_was_missed() {
    for (profile, _) in PROFILES {
        let server = TestServer::profile(profile).await;
        let proxy = Proxy::start(server.addr).await.expect("proxy");
        let client = connect(&proxy.url(), profile).await;
        let mut messages = client.listen(ListenFilter::default()).await.unwrap();
        let note =
            |i: u64| Notification::new("notifications/custom", Some(&json!({ "i": i }))).unwrap();
        notify_once_open(&server, &note(1)).await;
        let first = tokio::time::timeout(WAIT, messages.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(params_i(&first), 1);
        proxy.cut_and_wait().await;
        for i in 2..=4 {
            assert_eq!(server.server.notify_all(&note(i)).await, 1);
        }
        let mut got = Vec::new();
        while got.len() < 3 {
            let m = tokio::time::timeout(WAIT, messages.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            got.push(params_i(&m));
        }
        assert_eq!(got, [2, 3, 4]);
        assert!(server.resumes() >= 1);
    }
}

fn params_i(m: &mcp_transport_core::jsonrpc::Message) -> u64 {
    match m {
        mcp_transport_core::jsonrpc::Message::Notification(n) => {
            let p: Value = serde_json::from_str(n.params.as_deref().unwrap().get()).unwrap();
            p["i"].as_u64().unwrap()
        }
        other => panic!("not a notification: {other:?}"),
    }
}

/// With `event_ids: false` the server's events carry no id, so a broken
/// stream cannot be resumed: the client says so at once instead of hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_event_ids_a_drop_is_a_clear_error() {
    for (profile, version) in PROFILES {
        let server = TestServer::start(test_config(profile).with_event_ids(false)).await;
        // On the wire: no ids.
        let raw = server.raw();
        let s = raw.init(version).await;
        let resp = raw
            .post_in(&s)
            .body(call(1, "countdown", json!({"n": 2, "interval_ms": 5})).to_string())
            .send()
            .await
            .unwrap();
        assert_plain_events(&read_sse(resp).await, false);

        let proxy = Proxy::start(server.addr).await.expect("proxy");
        let client = connect(&proxy.url(), profile).await;
        let mut stream = client
            .request(
                "tools/call",
                Some(tool("countdown", json!({"n": 8, "interval_ms": 20}))),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        let mut events = Vec::new();
        read_events(&mut stream, &mut events, 2).await;
        proxy.cut_and_wait().await;
        let started = tokio::time::Instant::now();
        let err = collect(stream).await.unwrap_err();
        match &err {
            TransportError::ResumeFailed(ResumeFailure::NoEventId { what, .. }) => {
                assert!(what.contains("request"), "{what}");
                assert!(
                    err.to_string().contains("no Last-Event-ID to resume from"),
                    "{err}"
                );
            }
            other => panic!("{version}: expected ResumeFailed, got {other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(1), "failed at once");
        assert_eq!(server.resumes(), 0, "no GET without an id to resume from");
    }
}

/// 2025-03-26's `schema.ts` has no `elicitation/create` (its
/// `ServerRequest` is ping, sampling, roots): a tool whose handler asks for
/// it ends with a tool execution error (`isError: true`, *Tools*, "Error
/// Handling"), and nothing is asked. 2025-06-18 added it.
#[tokio::test]
async fn elicitation_is_refused_on_2025_03_26_and_works_on_2025_06_18() {
    for (profile, _) in PROFILES {
        let server = TestServer::profile(profile).await;
        let input = test_input();
        let client = LegacyClient::connect(client_config(&server.url, profile, input.clone()))
            .await
            .unwrap();
        let result = collect(
            client
                .request(
                    "tools/call",
                    Some(tool("ask", json!({}))),
                    RequestOptions::default(),
                )
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        let (_, response) = result;
        match profile {
            Profile::V2025_03_26 => {
                let r = result_of(&response);
                assert_eq!(r["isError"], true, "{r}");
                let text = r["content"][0]["text"].as_str().unwrap_or_default();
                assert!(
                    text.contains("does not exist in protocol revision 2025-03-26"),
                    "{text}"
                );
                assert!(input.methods().is_empty(), "nothing was asked");
            }
            _ => {
                assert_eq!(result_of(&response)["answer"]["content"]["name"], "Ada");
                assert_eq!(input.methods(), ["elicitation/create"]);
            }
        }
        // Sampling exists in both.
        let (events, response) = collect(
            client
                .request(
                    "tools/call",
                    Some(tool("sample", json!({}))),
                    RequestOptions::default(),
                )
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(result_of(&response)["answer"]["model"], "test");
        assert_eq!(describe_all(&events), ["request sampling/createMessage"]);
    }
}

/// Dropping a request's stream cancels it with `notifications/cancelled`
/// (a disconnection alone would not).
#[tokio::test]
async fn dropping_the_stream_cancels_the_request() {
    for (profile, _) in PROFILES {
        let server = TestServer::profile(profile).await;
        let client = connect(&server.url, profile).await;
        let stream = client
            .request(
                "tools/call",
                Some(tool("slow", json!({"ms": 5000}))),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        eventually("the request started", || {
            server.handler.started.load(Ordering::SeqCst) == 1
        })
        .await;
        drop(stream);
        eventually("the request saw its cancellation", || {
            server.handler.cancellations.load(Ordering::SeqCst) == 1
        })
        .await;
    }
}

/// Sessions as in every legacy revision: DELETE ends one, its id then gets
/// 404, and the client starts over with a fresh `initialize`.
#[tokio::test]
async fn sessions_end_with_delete_and_404() {
    for (profile, version) in PROFILES {
        let server = TestServer::profile(profile).await;
        let client = connect(&server.url, profile).await;
        let old = client.session_id().unwrap();
        assert_eq!(server.server.session_count(), 1);
        server
            .server
            .session_ids()
            .iter()
            .for_each(|id| assert_eq!(id, &old));
        // The server ends the session: the next call gets 404 and the one
        // after starts a new session.
        let raw = server.raw();
        let resp = raw
            .http
            .delete(&raw.url)
            .header("mcp-session-id", &old)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 204, "{version}");
        let err = client
            .request(
                "tools/call",
                Some(tool("echo", json!({}))),
                RequestOptions::default(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, TransportError::SessionExpired { .. }),
            "{err:?}"
        );
        let r = collect(
            client
                .request(
                    "tools/call",
                    Some(tool("echo", json!({"text": "again"}))),
                    RequestOptions::default(),
                )
                .await
                .unwrap(),
        )
        .await
        .unwrap()
        .1;
        assert_eq!(result_of(&r), json!({"text": "again"}));
        assert_ne!(client.session_id().unwrap(), old);
        assert_eq!(client.revision().as_str(), version);
        client.close().await.unwrap();
        assert_eq!(server.server.session_count(), 0);
    }
}
