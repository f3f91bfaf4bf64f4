//! Our client sending JSON-RPC batches (`LegacyClient::batch`): against our
//! server (SSE and JSON modes, notifications only, related notifications
//! and server requests, resumption), against a fake server that batches
//! its answers (arrays inside SSE events, a JSON array in another order),
//! and refused on 2025-06-18.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use mcp_rev_2025_03_26::mcp_transport_core;
use mcp_rev_2025_03_26::{BatchItem, LegacyClient, Profile};
use mcp_transport_core::jsonrpc::{Notification, RequestId};
use mcp_transport_core::transport::{StreamEvent, Transport, TransportError};
use serde_json::{Value, json};

fn echo(text: &str) -> BatchItem {
    BatchItem::request("tools/call", Some(tool("echo", json!({ "text": text }))))
}

fn note(method: &str) -> BatchItem {
    BatchItem::notification(Notification::new::<()>(method, None).unwrap())
}

async fn batch_of_requests(json_response: bool) {
    let config = test_config(Profile::V2025_03_26).with_json_response(json_response);
    let server = TestServer::start(config).await;
    let client = connect(&server.url, Profile::V2025_03_26).await;
    assert!(client.features().batches);
    let answer = client
        .batch(vec![
            echo("a"),
            note("notifications/custom/between"),
            echo("b"),
            BatchItem::request("ping", None),
            echo("c"),
        ])
        .await
        .unwrap();
    assert_eq!(answer.ids.len(), 4);
    assert_eq!(answer.responses.len(), 4);
    for (id, response) in answer.ids.iter().zip(&answer.responses) {
        assert_eq!(response.id.as_ref(), Some(id), "matched by id");
    }
    let texts: Vec<Value> = [0, 1, 3]
        .iter()
        .map(|&i| result_of(&answer.responses[i])["text"].clone())
        .collect();
    assert_eq!(texts, [json!("a"), json!("b"), json!("c")]);
    assert_eq!(result_of(&answer.responses[2]), json!({}));
    assert!(answer.unmatched.is_empty());
    assert_eq!(
        *server.handler.notifications.lock().unwrap(),
        ["notifications/custom/between"]
    );
    // One POST carried the whole batch.
    let posts: Vec<_> = server.hits().into_iter().filter(|h| h.batch).collect();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].rpc_methods.len(), 5);
    let expected = if json_response {
        "application/json"
    } else {
        "text/event-stream"
    };
    assert_eq!(posts[0].content_type.as_deref(), Some(expected));
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_batch_of_requests_is_answered_one_response_each_over_sse() {
    batch_of_requests(false).await;
}

#[tokio::test]
async fn a_batch_of_requests_is_answered_one_response_each_as_a_json_array() {
    batch_of_requests(true).await;
}

#[tokio::test]
async fn a_batch_of_notifications_only_is_accepted() {
    let server = TestServer::profile(Profile::V2025_03_26).await;
    let client = connect(&server.url, Profile::V2025_03_26).await;
    let answer = client
        .batch(vec![
            note("notifications/custom/1"),
            note("notifications/custom/2"),
        ])
        .await
        .unwrap();
    assert!(answer.ids.is_empty() && answer.responses.is_empty());
    assert_eq!(
        *server.handler.notifications.lock().unwrap(),
        ["notifications/custom/1", "notifications/custom/2"]
    );
    let post = server.hits().into_iter().find(|h| h.batch).unwrap();
    assert_eq!(post.status, 202);
}

/// Related notifications (progress, logs) and a server request (sampling,
/// answered through the input handler) arrive with the batch's answer.
#[tokio::test]
async fn related_messages_and_server_requests_come_with_the_answer() {
    for json_response in [false, true] {
        let config = test_config(Profile::V2025_03_26).with_json_response(json_response);
        let server = TestServer::start(config).await;
        let input = test_input();
        let client = LegacyClient::connect(client_config(
            &server.url,
            Profile::V2025_03_26,
            input.clone(),
        ))
        .await
        .unwrap();
        let answer = client
            .batch(vec![
                BatchItem::request(
                    "tools/call",
                    Some(tool("countdown", json!({"n": 3, "interval_ms": 5}))),
                )
                .with_progress(),
                BatchItem::request("tools/call", Some(tool("sample", json!({})))),
            ])
            .await
            .unwrap();
        assert_eq!(result_of(&answer.responses[0]), json!({"done": 3}));
        assert_eq!(
            result_of(&answer.responses[1])["answer"]["content"]["text"],
            "hello"
        );
        let countdown: Vec<String> = answer.notifications().map(describe).collect();
        assert_eq!(
            countdown,
            countdown_expected(3, true),
            "json: {json_response}"
        );
        assert!(answer.events.iter().any(
            |e| matches!(e, StreamEvent::ServerRequest(r) if r.method == "sampling/createMessage")
        ));
        assert_eq!(input.methods(), ["sampling/createMessage"]);
        client.close().await.unwrap();
    }
}

/// 2025-06-18 has no batches: the client refuses before sending anything.
#[tokio::test]
async fn a_batch_on_2025_06_18_is_unsupported_and_nothing_is_sent() {
    let server = TestServer::profile(Profile::Both).await;
    let client = connect(&server.url, Profile::V2025_06_18).await;
    let before = server.hits().len();
    let err = client.batch(vec![echo("x")]).await.unwrap_err();
    match &err {
        TransportError::Unsupported { revision, what } => {
            assert_eq!(revision.as_str(), "2025-06-18");
            assert!(what.contains("batches"), "{what}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    assert_eq!(server.hits().len(), before, "nothing was sent");
    // A client of both profiles negotiates 2025-06-18 with this server.
    let both = connect(&server.url, Profile::Both).await;
    assert!(matches!(
        both.batch(vec![echo("x")]).await,
        Err(TransportError::Unsupported { .. })
    ));
}

#[tokio::test]
async fn an_empty_batch_is_invalid_input() {
    let server = TestServer::profile(Profile::V2025_03_26).await;
    let client = connect(&server.url, Profile::V2025_03_26).await;
    assert!(matches!(
        client.batch(Vec::new()).await,
        Err(TransportError::InvalidInput(_))
    ));
}

#[tokio::test]
async fn an_over_long_batch_fails_with_the_servers_message() {
    let server = TestServer::start(test_config(Profile::V2025_03_26).with_max_batch_len(2)).await;
    let client = connect(&server.url, Profile::V2025_03_26).await;
    let err = client
        .batch(vec![echo("1"), echo("2"), echo("3")])
        .await
        .unwrap_err();
    match err {
        TransportError::Http {
            status: 400,
            message,
            rpc: Some(rpc),
        } => {
            assert_eq!(rpc.code, -32600);
            assert!(message.contains("at most 2"), "{message}");
        }
        other => panic!("expected HTTP 400, got {other:?}"),
    }
    assert_eq!(server.handler.started.load(Ordering::SeqCst), 0);
}

/// A network drop in the middle of a batch's SSE answer: the client resumes
/// by GET with `Last-Event-ID` (after its backoff; these revisions send no
/// `retry`) and every message arrives exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_drop_during_a_batch_is_resumed() {
    let server = TestServer::profile(Profile::V2025_03_26).await;
    let proxy = Proxy::start(server.addr).await.expect("proxy");
    let client = connect(&proxy.url(), Profile::V2025_03_26).await;
    let batch = {
        let client = client.clone();
        tokio::spawn(async move {
            client
                .batch(vec![
                    BatchItem::request(
                        "tools/call",
                        Some(tool("countdown", json!({"n": 8, "interval_ms": 25}))),
                    ),
                    echo("quick"),
                ])
                .await
        })
    };
    eventually("two ticks sent", || {
        server.handler.ticks.load(Ordering::SeqCst) >= 2
    })
    .await;
    assert!(
        proxy.cut_and_wait().await >= 1,
        "the batch's connection was live"
    );
    let answer = tokio::time::timeout(WAIT, batch)
        .await
        .expect("the batch finished in time")
        .unwrap()
        .unwrap();
    assert_eq!(result_of(&answer.responses[0]), json!({"done": 8}));
    assert_eq!(result_of(&answer.responses[1]), json!({"text": "quick"}));
    let events: Vec<String> = answer.notifications().map(describe).collect();
    assert_eq!(events, countdown_expected(8, false));
    assert!(server.resumes() >= 1, "the client resumed");
    assert_eq!(server.handler.cancellations.load(Ordering::SeqCst), 0);
    client.close().await.unwrap();
}

// ---------------------------------------------------------------------------
// A fake 2025-03-26 server that batches its answers
// ---------------------------------------------------------------------------

mod fake {

    use axum::body::Body;
    use axum::extract::Request;
    use axum::http::Response;
    use serde_json::{Value, json};

    /// How the fake answers a batch of requests.
    #[derive(Clone, Copy)]
    pub enum Answer {
        /// SSE: a notification and the responses as one array in one event,
        /// then the rest in another event.
        SseArrays,
        /// One JSON array, responses in reverse order.
        JsonReversed,
        /// A batch of notifications only: this status, media type and
        /// body.
        Notes(u16, &'static str, &'static str),
        /// One JSON array: a second, different response to the first
        /// request, then the responses in order.
        JsonDuplicate,
        /// One JSON array holding only the first response.
        JsonTruncated,
    }

    pub async fn start(answer: Answer) -> String {
        let app = axum::Router::new().route(
            "/mcp",
            axum::routing::post(move |req: Request| async move {
                let bytes = axum::body::to_bytes(req.into_body(), 1 << 20)
                    .await
                    .unwrap();
                let v: Value = serde_json::from_slice(&bytes).unwrap();
                respond(answer, v)
            }),
        );
        mcp_test_support::TestServer::serve(app).await.detach()
    }

    fn respond(answer: Answer, v: Value) -> Response<Body> {
        if v["method"] == "initialize" {
            let body = json!({"jsonrpc": "2.0", "id": v["id"], "result": {
                "protocolVersion": "2025-03-26", "capabilities": {},
                "serverInfo": {"name": "fake", "version": "0"}}});
            return Response::builder()
                .header("content-type", "application/json")
                .header("mcp-session-id", "fake-session")
                .body(Body::from(body.to_string()))
                .unwrap();
        }
        let Some(items) = v.as_array() else {
            return Response::builder().status(202).body(Body::empty()).unwrap();
        };
        if let Answer::Notes(status, content_type, body) = answer {
            return Response::builder()
                .status(status)
                .header("content-type", content_type)
                .body(Body::from(body))
                .unwrap();
        }
        let responses: Vec<Value> = items
            .iter()
            .filter(|m| m.get("id").is_some())
            .map(|m| json!({"jsonrpc": "2.0", "id": m["id"], "result": {"method": m["method"]}}))
            .collect();
        match answer {
            Answer::SseArrays => {
                let progress = json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "batched"}});
                let (first, rest) = responses.split_at(1);
                let mut one = vec![progress];
                one.extend(first.iter().cloned());
                let body = format!(
                    "id: e1\ndata: {}\n\nid: e2\ndata: {}\n\n",
                    Value::Array(one),
                    Value::Array(rest.to_vec())
                );
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(Body::from(body))
                    .unwrap()
            }
            Answer::Notes(..) => unreachable!("answered above"),
            Answer::JsonDuplicate => {
                let again =
                    json!({"jsonrpc": "2.0", "id": items[0]["id"], "result": {"method": "again"}});
                let mut all = vec![responses[0].clone(), again];
                all.extend(responses[1..].iter().cloned());
                Response::builder()
                    .header("content-type", "application/json")
                    .body(Body::from(Value::Array(all).to_string()))
                    .unwrap()
            }
            Answer::JsonTruncated => Response::builder()
                .header("content-type", "application/json")
                .body(Body::from(
                    Value::Array(responses[..1].to_vec()).to_string(),
                ))
                .unwrap(),
            Answer::JsonReversed => {
                let mut reversed = responses;
                reversed.reverse();
                Response::builder()
                    .header("content-type", "application/json")
                    .body(Body::from(Value::Array(reversed).to_string()))
                    .unwrap()
            }
        }
    }
}

async fn fake_batch(answer: fake::Answer) -> mcp_rev_2025_03_26::BatchResponses {
    let url = fake::start(answer).await;
    let client = connect(&url, Profile::V2025_03_26).await;
    client
        .batch(vec![
            BatchItem::request("a", None),
            BatchItem::request("b", None),
            note("notifications/x"),
            BatchItem::request("c", None),
        ])
        .await
        .unwrap()
}

/// The `method` each response of the fake echoes, in the batch's order.
fn methods_of(answer: &mcp_rev_2025_03_26::BatchResponses) -> Vec<Value> {
    answer
        .responses
        .iter()
        .map(|r| result_of(r)["method"].clone())
        .collect()
}

#[tokio::test]
async fn responses_batched_inside_sse_events_are_read() {
    let answer = fake_batch(fake::Answer::SseArrays).await;
    assert_eq!(methods_of(&answer), ["a", "b", "c"]);
    let notes: Vec<String> = answer.notifications().map(describe).collect();
    assert_eq!(notes, [r#"log "batched""#]);
}

#[tokio::test]
async fn a_json_array_in_another_order_is_matched_by_id() {
    let answer = fake_batch(fake::Answer::JsonReversed).await;
    assert_eq!(methods_of(&answer), ["a", "b", "c"]);
    for (id, r) in answer.ids.iter().zip(&answer.responses) {
        assert_eq!(r.id.as_ref(), Some(id));
    }
    assert!(answer.response(&RequestId::Number(-1)).is_none());
    assert!(answer.response(&answer.ids[1]).is_some());
}

/// 2025-03-26 *Transports*, "Sending Messages to the Server" 4: a POST of
/// notifications only is answered 202 with no body, or an HTTP error.
/// Another 2xx is taken, and a JSON body with it can only hold error
/// responses (an element the server found invalid): they are reported as
/// `unmatched`. A 202's body, an empty or blank JSON body, and a body of
/// another media type are not read.
#[tokio::test]
async fn a_batch_of_notifications_answered_with_errors_reports_them() {
    const ERRORS: &str =
        r#"[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}]"#;
    for (answer, errors) in [
        (fake::Answer::Notes(200, "application/json", ERRORS), 1),
        (fake::Answer::Notes(202, "application/json", ERRORS), 0),
        (fake::Answer::Notes(200, "application/json", ""), 0),
        (fake::Answer::Notes(200, "application/json", " \r\n"), 0),
        (fake::Answer::Notes(200, "text/plain", "OK"), 0),
    ] {
        let url = fake::start(answer).await;
        let client = connect(&url, Profile::V2025_03_26).await;
        let got = client
            .batch(vec![note("notifications/x"), note("notifications/y")])
            .await
            .unwrap();
        assert!(got.ids.is_empty() && got.responses.is_empty());
        assert_eq!(got.unmatched.len(), errors, "{:?}", got.unmatched);
        if let Some(e) = got.unmatched.first() {
            assert_eq!(e.payload.as_ref().unwrap_err().code, -32600);
        }
    }
}

/// JSON-RPC 2.0 §6 gives one response per request: a second response to a
/// request of the batch is ignored, the first kept, and the others still
/// awaited.
#[tokio::test]
async fn a_second_response_to_a_request_of_a_batch_is_ignored() {
    let answer = fake_batch(fake::Answer::JsonDuplicate).await;
    assert_eq!(methods_of(&answer), ["a", "b", "c"]);
    assert!(answer.unmatched.is_empty());
}

/// An answer that ends before every request has its response fails,
/// naming the batch and the requests still unanswered.
#[tokio::test]
async fn an_answer_ending_early_names_the_requests_left_unanswered() {
    let url = fake::start(fake::Answer::JsonTruncated).await;
    let client = connect(&url, Profile::V2025_03_26).await;
    let err = client
        .batch(vec![
            BatchItem::request("a", None),
            note("notifications/x"),
            BatchItem::request("b", None),
            BatchItem::request("c", None),
        ])
        .await
        .unwrap_err();
    let TransportError::PeerMisbehaved(mcp_transport_core::transport::Misbehaviour::EndedWithout {
        what,
        missing,
    }) = &err
    else {
        panic!("{err:?}");
    };
    // Ids count up after the initialize's: a, b and c are 2, 3 and 4.
    assert_eq!(what, "the answer to POST of a batch (requests 2, 3, 4)");
    assert_eq!(missing, "the responses to requests 3, 4");
}
