//! Sessions and the standalone stream, our client against our server.
//!
//! *Transports*, "Session Management": the server "MAY terminate the session
//! at any time, after which it MUST respond to requests containing that
//! session ID with HTTP 404 Not Found" (3); the client then "MUST start a new
//! session by sending a new `InitializeRequest` without a session ID
//! attached" (4); a client that no longer needs its session "SHOULD send an
//! HTTP DELETE" (5). "Listening for Messages from the Server": the
//! standalone GET stream carries server-initiated messages.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;
use futures::StreamExt;
use mcp_rev_2025_11_25::{PollingExt, ProtocolVersion, VERSION};
use mcp_transport_core::jsonrpc::{Message, Notification};
use mcp_transport_core::transport::{ListenFilter, Transport, TransportError};
use serde_json::{Value, json};

/// A raw POST of `tools/list` with `session_id`, as a client that kept the
/// id would send it.
async fn raw_post(url: &str, session_id: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", session_id)
        .header("mcp-protocol-version", VERSION.as_str())
        .body(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_negotiates_this_revision_and_sends_its_header() {
    let server = TestServer::start(test_config()).await;
    let client = connect(&server.url).await;
    assert_eq!(client.revision(), VERSION);
    assert_eq!(client.initialize_result().protocol_version, VERSION);
    let (_, response) = collect(
        call(&client, "echo", json!({"text": "v"}), false)
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(result_of(&response), json!({"text": "v"}));
    assert_eq!(server.server.session_count(), 1);
    client.close().await.unwrap();
    // "MCP-Protocol-Version: 2025-11-25" on every request after initialize.
    let hits = server.hits();
    assert!(hits.len() >= 4, "{hits:?}");
    for h in &hits {
        let expected = (h.rpc_method.as_deref() != Some("initialize")).then_some(VERSION.as_str());
        assert_eq!(h.protocol_version.as_deref(), expected, "{h:?}");
    }
}

/// `rev::connect` offers 2025-11-25 only: a server that answers with
/// another revision is refused with a negotiation error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_refuses_a_server_of_another_revision() {
    let old = mcp_rev_2025_03_26::register(mcp_rev_2025_11_25::server_config())
        .with_versions([ProtocolVersion::V2025_06_18]);
    // `rev::server` would force 2025-11-25: build the engine directly.
    let server = mcp_rev_2025_11_25::LegacyServer::new(std::sync::Arc::new(test_handler()), old);
    let app = axum::Router::new().nest_service("/mcp", server.router());
    let running = mcp_test_support::TestServer::serve(app).await;
    let url = running.url();
    let err = mcp_rev_2025_11_25::connect(&url).await.unwrap_err();
    assert!(matches!(err, TransportError::Negotiation(_)), "{err:?}");
    assert!(err.to_string().contains("2025-06-18"), "{err}");
    drop(running);
}

/// `rev::server` serves 2025-11-25 only, whatever the config says, and
/// answers an offer of another version with 2025-11-25 (which a client of
/// 2025-06-18 only then refuses).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_answers_other_offers_with_this_revision() {
    let server =
        TestServer::start(test_config().with_versions([ProtocolVersion::V2025_06_18])).await;
    let client = connect(&server.url).await;
    assert_eq!(client.revision(), VERSION);
    client.close().await.unwrap();
    let old_client = mcp_rev_2025_11_25::ClientConfig::new(&server.url)
        .with_versions(vec![ProtocolVersion::V2025_06_18]);
    let err = mcp_rev_2025_11_25::LegacyClient::connect(old_client)
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Negotiation(_)), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_sends_delete_and_the_old_session_id_gets_404() {
    let server = TestServer::start(test_config()).await;
    let client = connect(&server.url).await;
    let id = client
        .session_id()
        .expect("the server assigns a session id");
    assert_eq!(server.server.session_count(), 1);
    // The id works before the close.
    assert_eq!(raw_post(&server.url, &id).await.status(), 200);

    client.close().await.unwrap();
    assert_eq!(server.server.session_count(), 0);
    let delete = server
        .hits()
        .into_iter()
        .find(|h| h.method == "DELETE")
        .expect("close() sent DELETE");
    assert_eq!(delete.session_id.as_deref(), Some(id.as_str()));
    assert_eq!(delete.status, 204);
    assert_eq!(raw_post(&server.url, &id).await.status(), 404);
    // The closed client refuses further work.
    let after = call(&client, "echo", json!({"text": "x"}), false).await;
    assert!(matches!(after, Err(TransportError::Closed)), "{after:?}");
    // Closing twice is a no-op.
    client.close().await.unwrap();
}

/// `terminate_session` while a request runs: the running request fails
/// with `SessionExpired` (its resumption GET gets 404), and the next call
/// starts a new session with a fresh `initialize` and succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminated_session_fails_in_flight_and_the_next_call_reinitializes() {
    let server = TestServer::start(test_config()).await;
    let client = connect(&server.url).await;
    let old = client.session_id().unwrap();
    let stream = call(
        &client,
        "countdown",
        json!({"n": 200, "interval_ms": 10}),
        false,
    )
    .await
    .unwrap();
    let in_flight = tokio::spawn(collect(stream));
    eventually("the countdown started", || {
        server.handler.started.load(Ordering::SeqCst) == 1
    })
    .await;

    assert!(server.server.terminate_session(&old).await);
    assert_eq!(server.server.session_count(), 0);

    let err = in_flight.await.unwrap().unwrap_err();
    match &err {
        TransportError::SessionExpired { session_id } => assert_eq!(session_id, &old),
        other => panic!("expected SessionExpired, got {other:?}"),
    }
    assert!(client.session_lost());
    // The handler's request was cancelled with the session.
    eventually("the handler saw the end of the session", || {
        server.handler.cancellations.load(Ordering::SeqCst) == 1
    })
    .await;

    let (_, response) = collect(
        call(&client, "echo", json!({"text": "again"}), false)
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(result_of(&response), json!({"text": "again"}));
    let new = client.session_id().unwrap();
    assert_ne!(new, old);
    assert!(!client.session_lost());
    assert_eq!(server.server.session_ids(), std::slice::from_ref(&new));
    // The second initialize carried no session id.
    let inits: Vec<_> = server
        .hits()
        .into_iter()
        .filter(|h| h.rpc_method.as_deref() == Some("initialize"))
        .collect();
    assert_eq!(inits.len(), 2);
    assert!(inits.iter().all(|h| h.session_id.is_none()), "{inits:?}");
    client.close().await.unwrap();
}

/// A session terminated while the client is idle: the next request's POST
/// gets 404 and fails with `SessionExpired` (it is not re-sent: not every
/// request is idempotent); the one after re-initializes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminated_idle_session_fails_one_call_then_reinitializes() {
    let server = TestServer::start(test_config()).await;
    let client = connect(&server.url).await;
    let old = client.session_id().unwrap();
    assert_eq!(server.server.terminate_all().await, 1);
    let err = call(&client, "echo", json!({"text": "lost"}), false)
        .await
        .unwrap_err();
    assert!(
        matches!(err, TransportError::SessionExpired { .. }),
        "{err:?}"
    );
    let (_, response) = collect(
        call(&client, "echo", json!({"text": "new"}), false)
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(result_of(&response), json!({"text": "new"}));
    assert_ne!(client.session_id().unwrap(), old);
    assert_eq!(server.handler.started.load(Ordering::SeqCst), 1);
    client.close().await.unwrap();
}

fn notification(i: usize) -> Notification {
    Notification::new(
        "notifications/message",
        Some(&json!({"level": "info", "data": {"n": i}})),
    )
    .unwrap()
}

async fn listen_under(policy: &str, idle: Duration) {
    // No resume hold: idle polls come every `retry`, which is what the
    // client's resume bounds are tested against.
    let server = TestServer::start(polling_config(policy).with_resume_hold(Duration::ZERO)).await;
    let client = connect(&server.url).await;
    let mut messages = client.listen(ListenFilter::default()).await.unwrap();
    // The stream is read all along, as an application would, so that a
    // polling server's closes are followed by reconnections meanwhile.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let reader = tokio::spawn(async move {
        while let Some(item) = messages.next().await {
            if tx.send(item).is_err() {
                return;
            }
        }
    });
    // Idle first: a polling server closes the connection again and again
    // while nothing happens; the client must keep polling.
    tokio::time::sleep(idle).await;
    if !idle.is_zero() {
        // On a loaded machine a poll takes longer than `retry`: wait for
        // the 21st poll (bounded by `WAIT`), not for a fixed time.
        let deadline = tokio::time::Instant::now() + WAIT;
        while server.resumes() <= 20 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(RETRY_MS)).await;
        }
    }
    let polls_while_idle = server.resumes();
    for i in 0..5 {
        assert_eq!(server.server.notify_all(&notification(i)).await, 1);
        if i % 2 == 0 {
            tokio::time::sleep(Duration::from_millis(RETRY_MS / 2)).await;
        }
    }
    let mut received = Vec::new();
    while received.len() < 5 {
        let next = tokio::time::timeout(WAIT, rx.recv())
            .await
            .expect("a notification in time")
            .expect("the stream goes on")
            .expect("no error");
        let Message::Notification(n) = next else {
            panic!("only notifications were sent: {next:?}")
        };
        assert_eq!(n.method, "notifications/message");
        let p: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
        received.push(p["data"]["n"].as_u64().unwrap());
    }
    assert_eq!(received, [0, 1, 2, 3, 4]);
    // Nothing more arrives.
    let more = tokio::time::timeout(Duration::from_millis(3 * RETRY_MS), rx.recv()).await;
    assert!(more.is_err(), "unexpected: {more:?}");
    if !idle.is_zero() {
        assert!(
            polls_while_idle > 20,
            "only {polls_while_idle} polls while idle"
        );
    }
    client.close().await.unwrap();
    reader.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_receives_notify_all() {
    listen_under("never", Duration::ZERO).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_receives_notify_all_while_polling() {
    listen_under("after-events:1", Duration::ZERO).await;
}

/// A standalone stream on a polling server stays open through more idle
/// polls than `max_resume_attempts` (20): each poll was answered, so the
/// server is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_survives_many_idle_polls() {
    listen_under("after-priming", Duration::from_millis(25 * RETRY_MS)).await;
}

/// A request that runs through more idle polls than `max_resume_attempts`
/// (20) still gets its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_request_survives_many_idle_polls() {
    // No resume hold: every idle poll closes at once (see `listen_under`).
    let server =
        TestServer::start(polling_config("after-priming").with_resume_hold(Duration::ZERO)).await;
    let client = connect(&server.url).await;
    // 25 `retry`s of work; on a loaded machine a poll takes longer than
    // `retry`, so a request that saw too few polls is run again, longer.
    let mut ms = 25 * RETRY_MS;
    loop {
        let before = server.resumes();
        let (_, response) = collect(
            call(&client, "slow", json!({"ms": ms}), false)
                .await
                .unwrap(),
        )
        .await
        .unwrap();
        assert_eq!(result_of(&response), json!({"slept": ms}));
        let polls = server.resumes() - before;
        if polls > 20 {
            break;
        }
        assert!(ms < 200 * RETRY_MS, "only {polls} polls in {ms} ms");
        ms *= 2;
    }
    client.close().await.unwrap();
}
