//! Resumption after network failures and the `retry` field, our client
//! against our server.
//!
//! *Transports* (2025-11-25), "Sending Messages to the Server" 6:
//! "Disconnection MAY occur at any time (e.g., due to network conditions)"
//! and "SHOULD NOT be interpreted as the client cancelling its request";
//! "Resumability and Redelivery" 2: the client resumes "with an HTTP GET to
//! the MCP endpoint" carrying `Last-Event-ID`, and the server replays what
//! followed "on the stream that was disconnected". SEP-1699: "Clients MUST
//! respect the `retry` field".
//!
//! The network failures come from a TCP proxy between client and server
//! that drops every live connection on request.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;
use futures::StreamExt;
use mcp_rev_2025_11_25::{LegacyClient, PollingExt};
use mcp_transport_core::jsonrpc::{Message, Notification};
use mcp_transport_core::transport::{ListenFilter, Transport, TransportError};
use serde_json::{Value, json};

/// Cuts the network after every `every` events of `countdown {n}` under the
/// server's `policy`; everything must still arrive exactly once, in order.
async fn cut_during_countdown(policy: &str, n: u64, every: usize) {
    let server = TestServer::start(polling_config(policy)).await;
    let proxy = Proxy::start(server.addr).await.expect("proxy");
    let client = connect(&proxy.url()).await;
    let mut stream = call(
        &client,
        "countdown",
        json!({"n": n, "interval_ms": 15}),
        true,
    )
    .await
    .unwrap();
    let total = 2 * n as usize;
    let mut events = Vec::new();
    let mut cuts = 0;
    let mut target = every;
    while target < total {
        read_events(&mut stream, &mut events, target).await;
        proxy.cut_and_wait().await;
        cuts += 1;
        target += every;
    }
    let (rest, response) = collect(stream).await.unwrap();
    events.extend(rest);
    assert_eq!(describe_all(&events), countdown_expected(n, true));
    assert_eq!(result_of(&response), json!({"done": n}));
    assert!(cuts >= 1);
    assert!(server.resumes() >= 1, "the client never resumed");
    assert!(proxy.accepted() >= 2, "no new connection after the cut");
    // A broken connection is not a cancellation.
    assert_eq!(server.handler.cancellations.load(Ordering::SeqCst), 0);
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_drop_mid_request_resumes_exactly_once() {
    cut_during_countdown("never", 8, 5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_network_drops_resume_exactly_once() {
    cut_during_countdown("never", 8, 3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_drop_while_polling_resumes_exactly_once() {
    cut_during_countdown("after-events:2", 8, 3).await;
}

/// The resumption GET names the last event the client received: the
/// server's first resumption replays from there, so the event right after
/// the cut is neither lost nor doubled (checked above) and the GET carries
/// an id of this session's stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumption_get_carries_last_event_id() {
    let server = TestServer::start(test_config()).await;
    let proxy = Proxy::start(server.addr).await.expect("proxy");
    let client = connect(&proxy.url()).await;
    let mut stream = call(
        &client,
        "countdown",
        json!({"n": 6, "interval_ms": 15}),
        false,
    )
    .await
    .unwrap();
    let mut events = Vec::new();
    read_events(&mut stream, &mut events, 2).await;
    assert!(
        proxy.cut_and_wait().await >= 1,
        "the request's connection was live"
    );
    let (rest, _) = collect(stream).await.unwrap();
    events.extend(rest);
    assert_eq!(describe_all(&events), countdown_expected(6, false));
    let resume = server
        .hits()
        .into_iter()
        .find(|h| h.is_resume())
        .expect("a resumption GET");
    assert_eq!(resume.status, 200);
    let id = resume.last_event_id.unwrap();
    assert!(!id.is_empty() && id.is_ascii(), "{id:?}");
    client.close().await.unwrap();
}

/// The standalone stream is resumed too: notifications sent while the
/// network is down are replayed after `Last-Event-ID`, each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_drop_on_the_standalone_stream_replays_what_was_missed() {
    let server = TestServer::start(test_config()).await;
    let proxy = Proxy::start(server.addr).await.expect("proxy");
    let client = connect(&proxy.url()).await;
    let mut messages = client.listen(ListenFilter::default()).await.unwrap();
    let note = |i: u64| {
        Notification::new(
            "notifications/message",
            Some(&json!({"level": "info", "data": i})),
        )
        .unwrap()
    };
    let mut received = Vec::new();
    let mut next = async || {
        let m = tokio::time::timeout(WAIT, messages.next())
            .await
            .expect("a message in time")
            .expect("the stream goes on")
            .expect("no error");
        let Message::Notification(n) = m else {
            panic!("{m:?}")
        };
        let p: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
        p["data"].as_u64().unwrap()
    };
    for i in 0..2 {
        assert_eq!(server.server.notify_all(&note(i)).await, 1);
    }
    received.push(next().await);
    received.push(next().await);
    assert!(proxy.cut_and_wait().await >= 1);
    for i in 2..5 {
        server.server.notify_all(&note(i)).await;
    }
    for _ in 2..5 {
        received.push(next().await);
    }
    assert_eq!(received, [0, 1, 2, 3, 4]);
    assert!(server.resumes() >= 1);
    client.close().await.unwrap();
}

/// SEP-1699: "Clients MUST respect the `retry` field, waiting the given
/// number of milliseconds before attempting to reconnect". With a client
/// backoff of 1 ms, every reconnection still comes at least `retry` after
/// the previous connection of the stream started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_is_waited_before_each_reconnection() {
    let retry = 120;
    let server = TestServer::start(polling_config("after-priming").with_retry_ms(retry)).await;
    let config =
        client_config(&server.url, test_input()).with_reconnect_backoff(Duration::from_millis(1));
    let client = LegacyClient::connect(config).await.unwrap();
    let (events, response) = collect(
        call(
            &client,
            "countdown",
            json!({"n": 2, "interval_ms": 150}),
            false,
        )
        .await
        .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(describe_all(&events), countdown_expected(2, false));
    assert_eq!(result_of(&response), json!({"done": 2}));
    let hits = server.hits();
    let mut starts: Vec<_> = hits
        .iter()
        .filter(|h| h.rpc_method.as_deref() == Some("tools/call"))
        .map(|h| h.at)
        .collect();
    assert_eq!(starts.len(), 1);
    starts.extend(hits.iter().filter(|h| h.is_resume()).map(|h| h.at));
    assert!(
        starts.len() >= 3,
        "expected several polls, got {}",
        starts.len() - 1
    );
    for pair in starts.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= Duration::from_millis(retry),
            "reconnected after {gap:?}, before retry ({retry} ms)"
        );
    }
    client.close().await.unwrap();
}

/// The server's `retry` replaces the client's own backoff (here 30 s, which
/// would blow the test's 5 s bound).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_replaces_a_longer_client_backoff() {
    let server = TestServer::start(polling_config("after-priming")).await;
    let config =
        client_config(&server.url, test_input()).with_reconnect_backoff(Duration::from_secs(30));
    let client = LegacyClient::connect(config).await.unwrap();
    let (events, response) = collect(
        call(
            &client,
            "countdown",
            json!({"n": 3, "interval_ms": 10}),
            true,
        )
        .await
        .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(describe_all(&events), countdown_expected(3, true));
    assert_eq!(result_of(&response), json!({"done": 3}));
    assert!(server.resumes() >= 1);
    client.close().await.unwrap();
}

/// A stream that broke before any event id arrived cannot be resumed: the
/// JSON answer mode has no ids, so a dropped JSON POST is an error, not a
/// hang (and not a GET without `Last-Event-ID`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_json_answer_fails_clearly() {
    let server = TestServer::start(test_config().with_json_response(true)).await;
    let proxy = Proxy::start(server.addr).await.expect("proxy");
    let client = connect(&proxy.url()).await;
    let pending = tokio::spawn({
        let client = client.clone();
        async move { call(&client, "slow", json!({"ms": 2000}), false).await }
    });
    eventually("the handler started", || {
        server.handler.started.load(Ordering::SeqCst) == 1
    })
    .await;
    proxy.cut_and_wait().await;
    let err = tokio::time::timeout(WAIT, pending)
        .await
        .expect("the call ends in time")
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, TransportError::Connection(_)), "{err:?}");
    assert_eq!(server.resumes(), 0);
}
