//! Every message of a request reaches the caller exactly once and in order,
//! then its response — under every [`DisconnectPolicy`] (SEP-1699: the
//! server "MAY close the connection before sending the JSON-RPC response
//! if it has sent an SSE event with an event ID"), with the handler's
//! on-demand `close_sse_stream`, in SSE and in JSON-response mode
//! (*Transports*, "Sending Messages to the Server" 5: "The client MUST
//! support both these cases"), with and without a progress token.
//!
//! Our client against our server over 127.0.0.1.

mod common;

use common::*;
use mcp_transport_core::transport::{StreamEvent, Transport};
use serde_json::json;

/// `countdown {n: 4}` with a progress token under the server's `policy`:
/// the 8 messages exactly once, in order, then `{"done": 4}`. Every policy
/// but `never` must really have closed connections (resumed by GET).
async fn countdown_under(policy: &str) {
    let server = TestServer::start(polling_config(policy)).await;
    let client = connect(&server.url).await;
    let stream = call(
        &client,
        "countdown",
        json!({"n": 4, "interval_ms": 15}),
        true,
    )
    .await
    .unwrap();
    let (events, response) = collect(stream).await.unwrap();
    assert_eq!(
        describe_all(&events),
        countdown_expected(4, true),
        "{policy}"
    );
    assert_eq!(result_of(&response), json!({"done": 4}));
    let resumes = server.resumes();
    if policy == "never" {
        assert_eq!(resumes, 0, "policy never must not close connections early");
    } else {
        assert!(resumes >= 1, "policy {policy} closed no connection");
    }
    assert_eq!(
        server
            .handler
            .cancellations
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    client.close().await.unwrap();
}

/// `close_stream` under the server's `policy`: the handler closes its
/// connection mid-call; its three log messages arrive exactly once, in
/// order, then `{"closed": true}`, through at least one resumption.
async fn close_stream_under(policy: &str) {
    let server = TestServer::start(polling_config(policy)).await;
    let client = connect(&server.url).await;
    let stream = call(&client, "close_stream", json!({}), false)
        .await
        .unwrap();
    let (events, response) = collect(stream).await.unwrap();
    assert_eq!(
        describe_all(&events),
        [r#"log "before""#, r#"log "after-1""#, r#"log "after-2""#],
        "{policy}"
    );
    assert_eq!(result_of(&response), json!({"closed": true}));
    assert!(
        server.resumes() >= 1,
        "close_sse_stream closed no connection"
    );
    client.close().await.unwrap();
}

macro_rules! under_each_policy {
    ($($policy_name:ident => $policy:literal),* $(,)?) => {
        mod countdown_exactly_once_in_order {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $policy_name() {
                    super::countdown_under($policy).await;
                }
            )*
        }
        mod close_sse_stream_exactly_once_in_order {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $policy_name() {
                    super::close_stream_under($policy).await;
                }
            )*
        }
    };
}

under_each_policy! {
    never => "never",
    after_priming => "after-priming",
    after_events_1 => "after-events:1",
    after_events_3 => "after-events:3",
    after_ms_30 => "after-ms:30",
}

/// Default mode: every handler request is answered with an SSE stream,
/// even one that sends nothing before its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_mode_answers_with_an_event_stream() {
    let server = TestServer::start(test_config()).await;
    let client = connect(&server.url).await;
    let (events, response) = collect(
        call(&client, "echo", json!({"text": "hi"}), false)
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert!(events.is_empty());
    assert_eq!(result_of(&response), json!({"text": "hi"}));
    let ct = server.tools_call_content_type(0).unwrap();
    assert!(ct.starts_with("text/event-stream"), "{ct}");
    client.close().await.unwrap();
}

/// `json_response`: a request that sends nothing first is answered with
/// `application/json`; one that streams switches to SSE, and its messages
/// and response still arrive exactly once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_response_mode_answers_json_and_switches_to_sse_when_streaming() {
    let server = TestServer::start(test_config().with_json_response(true)).await;
    let client = connect(&server.url).await;

    let (events, response) = collect(
        call(&client, "echo", json!({"text": "json"}), false)
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert!(events.is_empty());
    assert_eq!(result_of(&response), json!({"text": "json"}));
    let ct = server.tools_call_content_type(0).unwrap();
    assert!(ct.starts_with("application/json"), "{ct}");

    let stream = call(
        &client,
        "countdown",
        json!({"n": 3, "interval_ms": 5}),
        true,
    )
    .await
    .unwrap();
    let (events, response) = collect(stream).await.unwrap();
    assert_eq!(describe_all(&events), countdown_expected(3, true));
    assert_eq!(result_of(&response), json!({"done": 3}));
    let ct = server.tools_call_content_type(1).unwrap();
    assert!(ct.starts_with("text/event-stream"), "{ct}");
    client.close().await.unwrap();
}

/// `json_response` with polling: the switched-to SSE stream is primed and
/// closed early like any other, and still delivers everything once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_response_mode_with_polling_delivers_exactly_once() {
    let server = TestServer::start(polling_config("after-events:1").with_json_response(true)).await;
    let client = connect(&server.url).await;
    let stream = call(
        &client,
        "countdown",
        json!({"n": 3, "interval_ms": 5}),
        true,
    )
    .await
    .unwrap();
    let (events, response) = collect(stream).await.unwrap();
    assert_eq!(describe_all(&events), countdown_expected(3, true));
    assert_eq!(result_of(&response), json!({"done": 3}));
    assert!(server.resumes() >= 1);
    client.close().await.unwrap();
}

/// `RequestOptions::progress` attaches `_meta.progressToken`; the handler's
/// progress notifications then arrive, all naming that one token, counting
/// 1..n of n. Without it the handler's `progress` sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_token_brings_progress_notifications() {
    let server = TestServer::start(test_config()).await;
    let client = connect(&server.url).await;

    let stream = call(
        &client,
        "countdown",
        json!({"n": 3, "interval_ms": 1}),
        true,
    )
    .await
    .unwrap();
    let (events, _) = collect(stream).await.unwrap();
    let progress: Vec<serde_json::Value> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Notification(n) if n.method == "notifications/progress" => {
                Some(serde_json::from_str(n.params.as_ref().unwrap().get()).unwrap())
            }
            _ => None,
        })
        .collect();
    assert_eq!(progress.len(), 3, "{progress:?}");
    let token = &progress[0]["progressToken"];
    assert!(token.is_string() || token.is_number(), "{token}");
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(&p["progressToken"], token);
        assert_eq!(p["progress"], json!((i + 1) as f64));
        assert_eq!(p["total"], json!(3.0));
    }

    let stream = call(
        &client,
        "countdown",
        json!({"n": 3, "interval_ms": 1}),
        false,
    )
    .await
    .unwrap();
    let (events, _) = collect(stream).await.unwrap();
    assert_eq!(describe_all(&events), countdown_expected(3, false));
    client.close().await.unwrap();
}

/// Several requests at once on one session, each under polling: every
/// stream gets its own messages only, each exactly once ("The server MUST
/// NOT replay messages that would have been delivered on a different
/// stream").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_keep_their_own_streams() {
    let server = TestServer::start(polling_config("after-events:2")).await;
    let client = connect(&server.url).await;
    let mut calls = Vec::new();
    for n in 2..=4u64 {
        let client = client.clone();
        calls.push(tokio::spawn(async move {
            let stream = call(
                &client,
                "countdown",
                json!({"n": n, "interval_ms": 10}),
                true,
            )
            .await
            .unwrap();
            (n, collect(stream).await.unwrap())
        }));
    }
    for c in calls {
        let (n, (events, response)) = c.await.unwrap();
        assert_eq!(describe_all(&events), countdown_expected(n, true));
        assert_eq!(result_of(&response), json!({"done": n}));
    }
    client.close().await.unwrap();
}
