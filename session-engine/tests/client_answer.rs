//! Which message of a request's SSE answer is its response (`Exchange`):
//! a response to another request on the stream is passed over; an error
//! without an id is this request's (JSON-RPC 2.0 §5: the id is null when
//! it could not be read); and once the response is in, the connection is
//! released even while the caller still holds the stream.

mod client_common;

use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use mcp_session_engine::client::{ClientConfig, LegacyClient};
use mcp_test_support::fake::{DropFlag, SseBody};
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::{RequestOptions, ResponseStream, StreamEvent, Transport};
use serde_json::{Value, json};

/// A client of a fake whose `tools/call` answer is `messages` on an SSE
/// stream (after a priming event) that then stays open; `flag` reports
/// when the client lets go of that stream.
async fn answering(
    messages: impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static,
    flag: &DropFlag,
) -> (Fake, LegacyClient) {
    let f = flag.clone();
    let fake = legacy_fake("2025-11-25", move |seen| {
        if !seen.is_rpc("tools/call") {
            return None;
        }
        let mut chunks = vec![priming("e0", None)];
        for (i, m) in messages(seen.rpc_id().unwrap()).iter().enumerate() {
            chunks.push(event(Some(&format!("e{}", i + 1)), None, m));
        }
        Some(
            SseBody::new(chunks)
                .ending(Ending::Hang)
                .guard(Some(f.guard()))
                .response(),
        )
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    (fake, client)
}

async fn call(client: &LegacyClient) -> ResponseStream {
    let params = to_raw(&json!({"name": "t"})).unwrap();
    client
        .request("tools/call", Some(params), RequestOptions::default())
        .await
        .unwrap()
}

/// The payload of the next event, which must be a response: the result,
/// or the error as `{"error": …}`.
async fn response_of(stream: &mut ResponseStream) -> Value {
    match within("the response", stream.next()).await {
        Some(Ok(StreamEvent::Response(r))) => match &r.payload {
            Ok(raw) => serde_json::from_str(raw.get()).unwrap(),
            Err(e) => json!({"error": {"code": e.code, "message": e.message}, "id": r.id}),
        },
        other => panic!("not a response: {other:?}"),
    }
}

#[tokio::test]
async fn responses_to_other_requests_are_passed_over() {
    let flag = DropFlag::default();
    let (_fake, client) = answering(
        |id| {
            let other = json!(id.as_i64().unwrap() + 100);
            vec![
                result(&other, json!({"whose": "another's"})),
                json!({"jsonrpc": "2.0", "id": other, "error": {"code": -32603, "message": "another's"}}),
                result(id, json!({"whose": "mine"})),
            ]
        },
        &flag,
    )
    .await;
    let mut stream = call(&client).await;
    assert_eq!(response_of(&mut stream).await, json!({"whose": "mine"}));
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn an_error_without_an_id_on_the_stream_is_this_requests() {
    let flag = DropFlag::default();
    let (_fake, client) = answering(
        |id| {
            vec![
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": "failed"}}),
                result(id, json!({"whose": "never read"})),
            ]
        },
        &flag,
    )
    .await;
    let mut stream = call(&client).await;
    assert_eq!(
        response_of(&mut stream).await,
        json!({"error": {"code": -32603, "message": "failed"}, "id": null})
    );
}

#[tokio::test]
async fn the_connection_is_released_at_the_response_while_the_stream_is_held() {
    let flag = DropFlag::default();
    let (_fake, client) = answering(|id| vec![result(id, json!({}))], &flag).await;
    let mut stream = call(&client).await;
    assert_eq!(response_of(&mut stream).await, json!({}));
    assert!(
        flag.wait(Duration::from_secs(5)).await,
        "the server's stream still held after the response"
    );
    assert!(stream.next().await.is_none());
    drop(stream);
}
