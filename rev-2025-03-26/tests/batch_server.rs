//! The server's answers to JSON-RPC batches, on the wire (raw reqwest).
//!
//! 2025-03-26 *Transports*, "Sending Messages to the Server" 3-6, with the
//! element rules of JSON-RPC 2.0 §6 ("Batch"); 2025-03-26 *Lifecycle*,
//! "Initialization" ("The initialize request MUST NOT be part of a JSON-RPC
//! batch"); 2025-06-18 changelog, "Major changes" 1 (batches removed).

mod common;

use std::sync::atomic::Ordering;

use common::*;
use mcp_rev_2025_03_26::{LegacyServer, ServerConfig, mcp_transport_core};
use mcp_transport_core::sse::SseItem;
use serde_json::{Value, json};

/// The responses among `messages`, by id (`null` for id-less errors).
fn responses(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m.get("result").is_some() || m.get("error").is_some())
        .collect()
}

fn find(messages: &[Value], id: Value) -> &Value {
    let found: Vec<&Value> = responses(messages)
        .into_iter()
        .filter(|m| m["id"] == id)
        .collect();
    assert_eq!(found.len(), 1, "one response with id {id} in {messages:?}");
    found[0]
}

async fn session_03_26(config: ServerConfig) -> (TestServer, Raw, RawSession) {
    let server = TestServer::start(config).await;
    let raw = server.raw();
    let s = raw.init("2025-03-26").await;
    assert_eq!(s.version, "2025-03-26");
    assert!(!s.header, "2025-03-26 defines no MCP-Protocol-Version");
    (server, raw, s)
}

#[tokio::test]
async fn requests_only_in_sse_mode_one_event_per_response_then_the_stream_ends() {
    let (_server, raw, s) =
        session_03_26(test_config(mcp_rev_2025_03_26::Profile::V2025_03_26)).await;
    let body = json!([
        call(1, "echo", json!({"text": "a"})),
        call("two", "echo", json!({"text": "b"})),
    ]);
    let resp = raw.post_in(&s).body(body.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let items = read_sse(resp).await;
    // Each message is its own event (never an array), each with an id
    // (event ids are on by default), and there is no priming event.
    let mut ids = Vec::new();
    for item in &items {
        match item {
            SseItem::Event(e) => {
                assert!(!e.data.is_empty(), "no priming event on 2025-03-26");
                assert!(e.data.starts_with('{'), "one message per event: {}", e.data);
                assert!(!e.last_event_id.is_empty(), "events carry ids");
                ids.push(e.last_event_id.clone());
            }
            SseItem::Retry(_) => panic!("no retry on 2025-03-26"),
            SseItem::LastEventId(_) => panic!("no id-only block on 2025-03-26"),
        }
    }
    let messages = sse_messages(&items);
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(find(&messages, json!(1))["result"]["text"], "a");
    assert_eq!(find(&messages, json!("two"))["result"]["text"], "b");
    ids.dedup();
    assert_eq!(ids.len(), 2, "each event has its own id");
}

#[tokio::test]
async fn requests_only_in_json_mode_one_json_array() {
    let config = test_config(mcp_rev_2025_03_26::Profile::V2025_03_26).with_json_response(true);
    let (_server, raw, s) = session_03_26(config).await;
    let body = json!([
        call(1, "echo", json!({"text": "a"})),
        call(2, "echo", json!({"text": "b"})),
        call(3, "echo", json!({"text": "c"})),
    ]);
    let resp = raw.post_in(&s).body(body.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(content_type(&resp), "application/json");
    let v: Value = resp.json().await.unwrap();
    let messages = v.as_array().expect("a JSON array").clone();
    assert_eq!(messages.len(), 3);
    for (id, text) in [(1, "a"), (2, "b"), (3, "c")] {
        assert_eq!(find(&messages, json!(id))["result"]["text"], text);
    }
}

#[tokio::test]
async fn notifications_only_are_202_without_body_and_are_processed_in_order() {
    let (server, raw, s) =
        session_03_26(test_config(mcp_rev_2025_03_26::Profile::V2025_03_26)).await;
    let body = json!([
        notification("notifications/roots/list_changed"),
        notification("notifications/custom/a"),
        notification("notifications/custom/b"),
    ]);
    let resp = raw.post_in(&s).body(body.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    assert!(resp.bytes().await.unwrap().is_empty(), "202 has no body");
    assert_eq!(
        *server.handler.notifications.lock().unwrap(),
        [
            "notifications/roots/list_changed",
            "notifications/custom/a",
            "notifications/custom/b"
        ]
    );
}

#[tokio::test]
async fn responses_only_are_202_and_answer_the_servers_requests() {
    let (server, raw, s) = {
        let server = TestServer::profile(mcp_rev_2025_03_26::Profile::V2025_03_26).await;
        let raw = server.raw();
        let s = raw.init_with("2025-03-26", json!({"sampling": {}})).await;
        (server, raw, s)
    };
    // A request whose handler asks the client for a sampling: the server's
    // request arrives on the POST's stream.
    let resp = raw
        .post_in(&s)
        .body(call(1, "sample", json!({})).to_string())
        .send()
        .await
        .unwrap();
    let mut body = resp;
    let mut decoder = mcp_transport_core::sse::Decoder::new();
    let mut items = Vec::new();
    let server_request = loop {
        let chunk = tokio::time::timeout(WAIT, body.chunk())
            .await
            .unwrap()
            .unwrap()
            .expect("the stream goes on");
        decoder.feed(&chunk, &mut items).unwrap();
        if let Some(m) = sse_messages(&items)
            .into_iter()
            .find(|m| m["method"] == "sampling/createMessage")
        {
            break m;
        }
    };
    // The answer goes back in a batch of responses, with one more response
    // nobody waits for: 202, no body.
    let answer = json!([
        {"jsonrpc": "2.0", "id": server_request["id"], "result": {
            "role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}},
        {"jsonrpc": "2.0", "id": "s-999", "error": {"code": -1, "message": "nobody asked"}},
    ]);
    let resp = raw
        .post_in(&s)
        .body(answer.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    assert!(resp.bytes().await.unwrap().is_empty());
    // The original request completes with what the client answered.
    let rest = async {
        while let Some(chunk) = body.chunk().await.unwrap() {
            decoder.feed(&chunk, &mut items).unwrap();
        }
        decoder.finish(&mut items).unwrap();
    };
    tokio::time::timeout(WAIT, rest).await.unwrap();
    let messages = sse_messages(&items);
    let r = find(&messages, json!(1));
    assert_eq!(r["result"]["answer"]["content"]["text"], "hello", "{r}");
    drop(server);
}

#[tokio::test]
async fn a_mixed_batch_answers_each_element_as_json_rpc_says() {
    let (server, raw, s) =
        session_03_26(test_config(mcp_rev_2025_03_26::Profile::V2025_03_26)).await;
    let body = json!([
        notification("notifications/custom/first"),
        {"jsonrpc": "2.0", "id": "p", "method": "ping"},
        call(10, "echo", json!({"text": "ten"})),
        {"foo": "bar"},
        1,
        {"jsonrpc": "1.0", "id": 11, "method": "x"},
        {"jsonrpc": "2.0", "id": "s-404", "result": {}},
        {"jsonrpc": "2.0", "id": 12, "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}},
        call(13, "countdown", json!({"n": 2, "interval_ms": 5})),
        {"jsonrpc": "2.0", "id": 14, "method": "logging/setLevel", "params": {"level": "info"}},
    ]);
    let resp = raw.post_in(&s).body(body.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let messages = sse_messages(&read_sse(resp).await);
    // Requests: ping, echo, initialize, countdown, setLevel; invalid: three.
    // The notification and the response get nothing.
    let rs = responses(&messages);
    assert_eq!(rs.len(), 8, "{messages:#?}");
    assert_eq!(find(&messages, json!("p"))["result"], json!({}));
    assert_eq!(find(&messages, json!(10))["result"]["text"], "ten");
    assert_eq!(find(&messages, json!(13))["result"]["done"], 2);
    assert_eq!(find(&messages, json!(14))["result"], json!({}));
    let init = find(&messages, json!(12));
    assert_eq!(init["error"]["code"], -32600);
    assert!(
        init["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize MUST NOT be part of a JSON-RPC batch")
    );
    // The invalid element with a readable id gets it back; the others none.
    assert_eq!(find(&messages, json!(11))["error"]["code"], -32600);
    let idless: Vec<&&Value> = rs.iter().filter(|m| m.get("id").is_none()).collect();
    assert_eq!(idless.len(), 2, "{messages:#?}");
    assert!(idless.iter().all(|m| m["error"]["code"] == -32600));
    // The countdown's related notifications came on the batch's stream.
    let logs = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .count();
    assert_eq!(logs, 2, "{messages:#?}");
    // The notification was processed; the session is still 2025-03-26.
    assert_eq!(
        *server.handler.notifications.lock().unwrap(),
        ["notifications/custom/first"]
    );
    assert_eq!(server.server.session_count(), 1);
}

#[tokio::test]
async fn a_batch_of_invalid_elements_or_transport_answers_is_one_json_array() {
    let (_server, raw, s) =
        session_03_26(test_config(mcp_rev_2025_03_26::Profile::V2025_03_26)).await;
    let resp = raw
        .post_in(&s)
        .body(r#"[1, {"jsonrpc":"2.0"}, {"jsonrpc":"2.0","id":"p","method":"ping"}]"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(content_type(&resp), "application/json");
    let v: Value = resp.json().await.unwrap();
    let messages = v.as_array().unwrap().clone();
    assert_eq!(messages.len(), 3, "{v}");
    assert_eq!(find(&messages, json!("p"))["result"], json!({}));
    let errors: Vec<&Value> = messages.iter().filter(|m| m.get("id").is_none()).collect();
    assert_eq!(errors.len(), 2);
    assert!(errors.iter().all(|m| m["error"]["code"] == -32600));
}

#[tokio::test]
async fn an_empty_batch_is_one_invalid_request_error() {
    let (_server, raw, s) =
        session_03_26(test_config(mcp_rev_2025_03_26::Profile::V2025_03_26)).await;
    for body in ["[]", " [ ] "] {
        let resp = raw.post_in(&s).body(body).send().await.unwrap();
        expect_error(resp, 400, -32600, "empty batch").await;
    }
}

#[tokio::test]
async fn an_over_long_batch_is_refused_and_nothing_runs() {
    let config = test_config(mcp_rev_2025_03_26::Profile::V2025_03_26).with_max_batch_len(3);
    let (server, raw, s) = session_03_26(config).await;
    let body: Vec<Value> = (0..4).map(|i| call(i, "echo", json!({}))).collect();
    let resp = raw
        .post_in(&s)
        .body(Value::Array(body).to_string())
        .send()
        .await
        .unwrap();
    expect_error(resp, 400, -32600, "at most 3").await;
    assert_eq!(server.handler.started.load(Ordering::SeqCst), 0);
    // Exactly the limit is fine.
    let body: Vec<Value> = (0..3).map(|i| call(i, "echo", json!({}))).collect();
    let resp = raw
        .post_in(&s)
        .body(Value::Array(body).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(responses(&sse_messages(&read_sse(resp).await)).len(), 3);
}

#[tokio::test]
async fn the_default_bound_is_64_elements() {
    assert_eq!(mcp_rev_2025_03_26::DEFAULT_MAX_BATCH_LEN, 64);
    let (_server, raw, s) =
        session_03_26(test_config(mcp_rev_2025_03_26::Profile::V2025_03_26)).await;
    let body: Vec<Value> = (0..65)
        .map(|_| notification("notifications/custom"))
        .collect();
    let resp = raw
        .post_in(&s)
        .body(Value::Array(body).to_string())
        .send()
        .await
        .unwrap();
    expect_error(resp, 400, -32600, "at most 64").await;
    let body: Vec<Value> = (0..64)
        .map(|_| notification("notifications/custom"))
        .collect();
    let resp = raw
        .post_in(&s)
        .body(Value::Array(body).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
}

#[tokio::test]
async fn a_batch_before_any_session_is_400() {
    let server = TestServer::profile(mcp_rev_2025_03_26::Profile::V2025_03_26).await;
    let raw = server.raw();
    let resp = raw
        .post()
        .body(json!([call(1, "echo", json!({}))]).to_string())
        .send()
        .await
        .unwrap();
    expect_error(resp, 400, -32600, "MCP-Session-Id header is required").await;
    // initialize inside a batch cannot start a session either.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}});
    let resp = raw
        .post()
        .body(json!([init, notification("notifications/initialized")]).to_string())
        .send()
        .await
        .unwrap();
    assert!(resp.headers().get("mcp-session-id").is_none());
    expect_error(
        resp,
        400,
        -32600,
        "initialize MUST NOT be part of a JSON-RPC batch",
    )
    .await;
    assert_eq!(server.server.session_count(), 0);
    // A batch naming a session that does not exist is 404.
    let resp = raw
        .post()
        .header("mcp-session-id", "no-such-session")
        .body(json!([call(1, "echo", json!({}))]).to_string())
        .send()
        .await
        .unwrap();
    expect_error(resp, 404, -32600, "does not exist").await;
}

#[tokio::test]
async fn json_mode_switches_to_sse_when_a_request_of_the_batch_streams() {
    let config = test_config(mcp_rev_2025_03_26::Profile::V2025_03_26).with_json_response(true);
    let (_server, raw, s) = session_03_26(config).await;
    let body = json!([
        call(1, "echo", json!({"text": "first"})),
        {"jsonrpc": "2.0", "id": "p", "method": "ping"},
        call(2, "countdown", json!({"n": 3, "interval_ms": 20})),
    ]);
    let resp = raw.post_in(&s).body(body.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let messages = sse_messages(&read_sse(resp).await);
    assert_eq!(responses(&messages).len(), 3, "{messages:#?}");
    assert_eq!(find(&messages, json!(1))["result"]["text"], "first");
    assert_eq!(find(&messages, json!("p"))["result"], json!({}));
    assert_eq!(find(&messages, json!(2))["result"]["done"], 3);
    let logs = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .count();
    assert_eq!(logs, 3);
    // The stream ends with the last response.
    assert!(messages.last().unwrap().get("result").is_some());
}

#[tokio::test]
async fn a_cancelled_request_of_a_batch_gets_no_response_and_the_rest_is_answered() {
    let (server, raw, s) =
        session_03_26(test_config(mcp_rev_2025_03_26::Profile::V2025_03_26)).await;
    let body = json!([
        call(5, "slow", json!({"ms": 5000})),
        call(6, "echo", json!({"text": "six"})),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "test"}},
    ]);
    let resp = raw.post_in(&s).body(body.to_string()).send().await.unwrap();
    let messages = sse_messages(&read_sse(resp).await);
    let rs = responses(&messages);
    assert_eq!(rs.len(), 1, "{messages:#?}");
    assert_eq!(rs[0]["id"], 6);
    eventually("the slow request saw its cancellation", || {
        server.handler.cancellations.load(Ordering::SeqCst) == 1
    })
    .await;
}

/// In `json_response` mode a batch whose every request was cancelled has
/// no response to send, and JSON-RPC 2.0 §6 says the server "MUST NOT
/// return an empty Array": the answer is an SSE stream that ends at once,
/// as for a single cancelled request.
#[tokio::test]
async fn a_json_mode_batch_with_every_request_cancelled_is_no_empty_array() {
    let config = test_config(mcp_rev_2025_03_26::Profile::V2025_03_26).with_json_response(true);
    let (server, raw, s) = session_03_26(config).await;
    let body = json!([
        call(5, "slow", json!({"ms": 5000})),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "test"}},
    ]);
    let resp = raw.post_in(&s).body(body.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(content_type(&resp), "text/event-stream");
    assert_eq!(resp.text().await.unwrap(), "");
    eventually("the slow request saw its cancellation", || {
        server.handler.cancellations.load(Ordering::SeqCst) == 1
    })
    .await;
}

#[tokio::test]
async fn a_request_id_used_twice_gets_an_error_for_the_second() {
    let (_server, raw, s) =
        session_03_26(test_config(mcp_rev_2025_03_26::Profile::V2025_03_26)).await;
    let body = json!([
        call(7, "slow", json!({"ms": 50})),
        call(7, "echo", json!({"text": "dup"})),
    ]);
    let resp = raw.post_in(&s).body(body.to_string()).send().await.unwrap();
    let messages = sse_messages(&read_sse(resp).await);
    let rs = responses(&messages);
    assert_eq!(rs.len(), 2, "{messages:#?}");
    assert!(rs.iter().any(|m| m["result"]["slept"] == 50));
    let err = rs.iter().find(|m| m.get("error").is_some()).unwrap();
    assert_eq!(err["id"], 7);
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already used")
    );
}

/// 2025-06-18 (changelog, "Major changes" 1: "Remove support for JSON-RPC
/// batching") and 2025-11-25 sessions refuse arrays, and say why.
#[tokio::test]
async fn later_revisions_reject_arrays_saying_batches_ended_with_2025_03_26() {
    let server = TestServer::profile(mcp_rev_2025_03_26::Profile::Both).await;
    let raw = server.raw();
    let s = raw.init("2025-06-18").await;
    assert_eq!(s.version, "2025-06-18");
    for body in [
        json!([call(1, "echo", json!({}))]),
        json!([notification("notifications/custom")]),
        json!([]),
    ] {
        let resp = raw.post_in(&s).body(body.to_string()).send().await.unwrap();
        expect_error(resp, 400, -32600, "batches ended with 2025-03-26").await;
    }
    assert_eq!(server.handler.started.load(Ordering::SeqCst), 0);
    assert!(server.handler.notifications.lock().unwrap().is_empty());

    // The same engine serving 2025-11-25.
    let handler = std::sync::Arc::new(test_handler());
    let newer = LegacyServer::new(handler.clone(), mcp_rev_2025_11_25::server_config());
    let newer = TestServer::serve(newer, handler).await;
    let raw = newer.raw();
    let s = raw.init("2025-11-25").await;
    let resp = raw
        .post_in(&s)
        .body(json!([call(1, "echo", json!({}))]).to_string())
        .send()
        .await
        .unwrap();
    expect_error(resp, 400, -32600, "batches ended with 2025-03-26").await;
}

/// On a server of both profiles, the session's revision decides: the same
/// array is a batch in a 2025-03-26 session and refused in a 2025-06-18 one.
#[tokio::test]
async fn the_sessions_revision_decides_on_a_server_of_both_profiles() {
    let server = TestServer::profile(mcp_rev_2025_03_26::Profile::Both).await;
    let raw = server.raw();
    let old = raw.init("2025-03-26").await;
    let new = raw.init("2025-06-18").await;
    let body = json!([call(1, "echo", json!({"text": "x"}))]).to_string();
    let resp = raw.post_in(&old).body(body.clone()).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(responses(&sse_messages(&read_sse(resp).await)).len(), 1);
    let resp = raw.post_in(&new).body(body).send().await.unwrap();
    expect_error(resp, 400, -32600, "batches ended with 2025-03-26").await;
}
