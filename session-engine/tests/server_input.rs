//! Server-to-client requests for `Outcome::InputRequired`.

mod server_common;

use std::time::Duration;

use mcp_transport_core::ProtocolVersion;
use serde_json::json;
use server_common::*;

#[tokio::test]
async fn elicitation_round_trip() {
    let t = start(config()).await;
    let s = t.init_with("2025-11-25", json!({"elicitation": {}})).await;
    let mut stream = SseReader::new(t.call(&s, 1, "ask", json!({})).await);
    let req = stream.next_message().await.unwrap().json();
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(req["id"], "s-1");
    assert_eq!(req["params"]["message"], "Proceed?");
    let answer = json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept", "content": {"ok": true}}});
    let resp = t.post_in(&s).body(answer.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    let rest = stream.rest().await;
    let msgs = messages(&rest);
    assert_eq!(msgs.len(), 1);
    assert!(is_response(&msgs[0], 1));
    assert_eq!(msgs[0]["result"]["answer"]["content"]["ok"], true);
    assert_eq!(msgs[0]["result"]["state"], "round-1");
    // The next server request gets a fresh id.
    let mut stream = SseReader::new(t.call(&s, 2, "ask", json!({})).await);
    let req = stream.next_message().await.unwrap().json();
    assert_eq!(req["id"], "s-2");
}

#[tokio::test]
async fn elicitation_in_json_mode_switches_to_sse() {
    let t = start(config().with_json_response(true)).await;
    let s = t.init_with("2025-11-25", json!({"elicitation": {}})).await;
    let mut stream = SseReader::new(t.call(&s, 1, "ask", json!({})).await);
    let req = stream.next_message().await.unwrap().json();
    let answer = json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "decline"}});
    t.post_in(&s).body(answer.to_string()).send().await.unwrap();
    let msgs = messages(&stream.rest().await);
    assert_eq!(msgs[0]["result"]["answer"]["action"], "decline");
}

#[tokio::test]
async fn a_missing_client_capability_is_an_error_response() {
    let t = start(config()).await;
    let s = t.init_with("2025-11-25", json!({"sampling": {}})).await;
    let (recs, _) = read_all(t.call(&s, 1, "ask", json!({})).await).await;
    let msgs = messages(&recs);
    assert_eq!(msgs.len(), 1, "no request is sent: {msgs:?}");
    assert!(is_response(&msgs[0], 1));
    let msg = msgs[0]["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("elicitation") && msg.contains("capability"),
        "{msg}"
    );
    // Sampling was declared: that one goes out.
    let mut stream = SseReader::new(t.call(&s, 2, "ask_sampling", json!({})).await);
    let req = stream.next_message().await.unwrap().json();
    assert_eq!(req["method"], "sampling/createMessage");
}

/// 2025-03-26 has no elicitation: a tool asking for it ends with a tool
/// execution error (*Tools*, "Error Handling": `isError: true`), and
/// nothing is sent to the client.
#[tokio::test]
async fn elicitation_does_not_exist_on_2025_03_26() {
    let t = start(config().with_versions([ProtocolVersion::V2025_03_26])).await;
    let s = t.init_with("2025-03-26", json!({"elicitation": {}})).await;
    let (recs, _) = read_all(t.call(&s, 1, "ask", json!({})).await).await;
    let msgs = messages(&recs);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(is_response(&msgs[0], 1));
    assert_eq!(msgs[0]["result"]["isError"], true, "{msgs:?}");
    let msg = msgs[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(msg.contains("2025-03-26"), "{msg}");
}

#[tokio::test]
async fn an_unanswered_request_times_out_and_is_cancelled() {
    let t = start(config().with_client_request_timeout(Duration::from_millis(100))).await;
    let s = t.init_with("2025-11-25", json!({"elicitation": {}})).await;
    let (recs, _) = read_all(t.call(&s, 1, "ask", json!({})).await).await;
    let msgs = messages(&recs);
    assert_eq!(msgs.len(), 3, "{msgs:?}");
    assert_eq!(msgs[0]["method"], "elicitation/create");
    assert_eq!(msgs[1]["method"], "notifications/cancelled");
    assert_eq!(msgs[1]["params"]["requestId"], msgs[0]["id"]);
    let err = msgs[2]["error"]["message"].as_str().unwrap();
    assert!(err.contains("did not answer"), "{err}");
    // A late answer is accepted and ignored.
    let late = json!({"jsonrpc": "2.0", "id": msgs[0]["id"], "result": {"action": "accept"}});
    let resp = t.post_in(&s).body(late.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 202);
}

#[tokio::test]
async fn a_client_error_answer_fails_the_request() {
    let t = start(config()).await;
    let s = t.init_with("2025-11-25", json!({"elicitation": {}})).await;
    let mut stream = SseReader::new(t.call(&s, 1, "ask", json!({})).await);
    let req = stream.next_message().await.unwrap().json();
    let answer = json!({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -1, "message": "user closed the dialog"}});
    t.post_in(&s).body(answer.to_string()).send().await.unwrap();
    let msgs = messages(&stream.rest().await);
    let err = msgs[0]["error"]["message"].as_str().unwrap();
    assert!(err.contains("user closed the dialog"), "{err}");
}

#[tokio::test]
async fn input_rounds_are_bounded() {
    let t = start(config().with_max_input_rounds(2)).await;
    let s = t.init_with("2025-11-25", json!({"roots": {}})).await;
    let mut stream = SseReader::new(t.call(&s, 1, "ask_forever", json!({})).await);
    for round in 1..=2 {
        let req = stream.next_message().await.unwrap().json();
        assert_eq!(req["method"], "roots/list", "round {round}");
        let answer = json!({"jsonrpc": "2.0", "id": req["id"], "result": {"roots": []}});
        t.post_in(&s).body(answer.to_string()).send().await.unwrap();
    }
    let msgs = messages(&stream.rest().await);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(is_response(&msgs[0], 1));
    let err = msgs[0]["error"]["message"].as_str().unwrap();
    assert!(err.contains("more than 2 times"), "{err}");
}

/// Each server-to-client method needs its client capability declared at
/// `initialize` (*Elicitation*, *Sampling*, *Roots*: clients that support
/// them "MUST declare" the capability): a client that declared none gets
/// an error response naming the method and the capability, and nothing
/// is sent to it.
#[tokio::test]
async fn every_server_to_client_method_needs_its_capability() {
    let t = start(config()).await;
    let s = t.init_with("2025-11-25", json!({})).await;
    let cases = [
        ("ask", "elicitation/create", "elicitation"),
        ("ask_sampling", "sampling/createMessage", "sampling"),
        ("ask_forever", "roots/list", "roots"),
    ];
    for (id, (tool, method, capability)) in (1..).zip(cases) {
        let (recs, _) = read_all(t.call(&s, id, tool, json!({})).await).await;
        let msgs = messages(&recs);
        assert_eq!(msgs.len(), 1, "no request is sent: {msgs:?}");
        assert!(is_response(&msgs[0], id));
        let err = msgs[0]["error"]["message"].as_str().unwrap();
        assert!(
            err.contains(method) && err.contains(&format!("`{capability}` capability")),
            "{err}"
        );
    }
}

/// A session holds at most `max_pending_client_requests` server-to-client
/// requests awaiting an answer; a round that ends without its answers
/// (here its request cancelled) gives its places back.
#[tokio::test]
async fn pending_client_requests_are_bounded_and_given_back() {
    let mut c = config();
    c.max_pending_client_requests = 1;
    let t = start(c).await;
    let s = t.init_with("2025-11-25", json!({"elicitation": {}})).await;
    let mut first = SseReader::new(t.call(&s, 1, "ask", json!({})).await);
    assert_eq!(
        first.next_message().await.unwrap().json()["method"],
        "elicitation/create"
    );
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1}});
    let resp = t.post_in(&s).body(cancel.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 202);
    let rest = within("the cancelled request's stream", first.rest()).await;
    assert!(messages(&rest).is_empty(), "{rest:?}");
    let mut second = SseReader::new(t.call(&s, 2, "ask", json!({})).await);
    let asked = second.next_message().await.unwrap().json();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let (recs, _) = read_all(t.call(&s, 3, "ask", json!({})).await).await;
    let msgs = messages(&recs);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(is_response(&msgs[0], 3));
    let err = msgs[0]["error"]["message"].as_str().unwrap();
    assert!(err.contains("at most 1"), "{err}");
}
