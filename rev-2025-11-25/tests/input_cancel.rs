//! Server-to-client input and cancellation, our client against our server.
//!
//! * A handler's `Outcome::InputRequired` becomes an `elicitation/create`
//!   request on the originating request's stream (*Transports*, "Sending
//!   Messages to the Server" 6: "The server MAY send JSON-RPC requests and
//!   notifications before sending the JSON-RPC response"); the client
//!   answers it through its `InputHandler` by POST and the handler is called
//!   again with the answer.
//! * Dropping a `ResponseStream` before the response cancels the request
//!   with `notifications/cancelled` (*Transports*, 6: "To cancel, the client
//!   SHOULD explicitly send an MCP `CancelledNotification`"), which the
//!   handler sees through `RequestContext::cancelled`.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use futures::StreamExt;
use mcp_rev_2025_11_25::LegacyClient;
use mcp_transport_core::transport::{StreamEvent, Transport};
use serde_json::json;

async fn elicitation_round_trip(policy: &str) {
    let server = TestServer::start(polling_config(policy)).await;
    let input = test_input();
    let client = LegacyClient::connect(client_config(&server.url, input.clone()))
        .await
        .unwrap();
    let (events, response) = collect(call(&client, "ask", json!({}), false).await.unwrap())
        .await
        .unwrap();
    assert_eq!(describe_all(&events), ["request elicitation/create"]);
    let StreamEvent::ServerRequest(request) = &events[0] else {
        unreachable!()
    };
    assert_eq!(request.method, "elicitation/create");
    let asked = input.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "the input handler answers once: {asked:?}");
    assert_eq!(asked[0].0, "elicitation/create");
    assert_eq!(asked[0].1["message"], "What is your name?");
    assert_eq!(
        result_of(&response),
        json!({
            "answer": {"action": "accept", "content": {"name": "Ada"}},
            "state": "round-1",
        })
    );
    assert_eq!(server.handler.ask_rounds.load(Ordering::SeqCst), 2);
    // The answer went back by POST (a JSON-RPC response, so no method) and
    // was accepted with 202.
    assert!(
        server
            .hits()
            .iter()
            .any(|h| h.method == "POST" && h.rpc_method.is_none() && h.status == 202),
        "{:?}",
        server.hits()
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_round_trip_through_the_input_handler() {
    elicitation_round_trip("never").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_round_trip_while_polling() {
    elicitation_round_trip("after-events:1").await;
}

/// Without the `elicitation` capability the server refuses to ask, and the
/// call is answered with an error instead of hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_without_the_capability_is_an_error() {
    let server = TestServer::start(test_config()).await;
    let input = test_input();
    let config = client_config(&server.url, input.clone()).with_capabilities(json!({}));
    let client = LegacyClient::connect(config).await.unwrap();
    let (_, response) = collect(call(&client, "ask", json!({}), false).await.unwrap())
        .await
        .unwrap();
    let error = response.payload.unwrap_err();
    assert_eq!(error.code, -32021, "{error:?}");
    assert!(error.message.contains("elicitation"), "{error:?}");
    assert!(input.asked.lock().unwrap().is_empty());
    client.close().await.unwrap();
}

async fn dropping_the_stream_cancels(policy: &str) {
    let server = TestServer::start(polling_config(policy)).await;
    let client = connect(&server.url).await;
    let mut stream = call(&client, "slow", json!({"ms": 30_000}), false)
        .await
        .unwrap();
    eventually("the handler started", || {
        server.handler.started.load(Ordering::SeqCst) == 1
    })
    .await;
    // Read nothing (there is nothing to read yet) and give up.
    let nothing = tokio::time::timeout(std::time::Duration::from_millis(20), stream.next()).await;
    assert!(nothing.is_err(), "slow answered early: {nothing:?}");
    drop(stream);
    eventually("the handler saw the cancellation", || {
        server.handler.cancellations.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(server.handler.completions.load(Ordering::SeqCst), 0);
    assert!(
        server
            .hits()
            .iter()
            .any(|h| h.rpc_method.as_deref() == Some("notifications/cancelled") && h.status == 202)
    );
    // The session goes on.
    let (_, response) = collect(
        call(&client, "echo", json!({"text": "after"}), false)
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(result_of(&response), json!({"text": "after"}));
    assert_eq!(server.handler.cancellations.load(Ordering::SeqCst), 1);
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_response_stream_cancels_the_request() {
    dropping_the_stream_cancels("never").await;
}

/// Under polling the connection is already gone when the stream is dropped:
/// only the explicit `notifications/cancelled` can cancel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_response_stream_cancels_while_polling() {
    dropping_the_stream_cancels("after-priming").await;
}

/// A connection the server closed (polling) is not a cancellation: the
/// handler runs to its end and the client gets the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_closed_connection_does_not_cancel() {
    let server = TestServer::start(polling_config("after-priming")).await;
    let client = connect(&server.url).await;
    let (_, response) = collect(
        call(&client, "slow", json!({"ms": 150}), false)
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(result_of(&response), json!({"slept": 150}));
    assert_eq!(server.handler.cancellations.load(Ordering::SeqCst), 0);
    assert!(server.resumes() >= 1);
    client.close().await.unwrap();
}
