//! Multi round-trip requests (*Multi Round-Trip Requests*; SEP-2322): the
//! server answers `InputRequiredResult` with a sealed `requestState`, and a
//! retry carrying `inputResponses` and that state reaches the handler.

mod server_common;

use std::sync::Arc;
use std::time::Duration;

use mcp_rev_2026_07_28::server::{ModernConfig, PrincipalFn};
use serde_json::{Value, json};
use server_common::*;

fn caps() -> Value {
    json!({"elicitation": {}})
}

fn ask(id: i64, extra: Value) -> Value {
    let mut params = json!({"name": "ask", "arguments": {"topic": "x"}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    body(id, "tools/call", params, caps())
}

fn retry(id: i64, state: &str, responses: Value) -> Value {
    ask(
        id,
        json!({"inputResponses": responses, "requestState": state}),
    )
}

async fn expect_invalid_params(t: &TestServer, b: &Value, needle: &str) {
    let resp = t.send(b).await;
    assert_eq!(resp.status(), 400);
    let v = error_json(resp).await;
    assert_eq!(v["id"], b["id"]);
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
}

#[tokio::test]
async fn two_rounds_of_input_then_the_result() {
    let t = start(config()).await;
    // Round 1.
    let a = t.exchange(&ask(1, json!({}))).await;
    let r = a.result();
    assert_eq!(a.response["id"], 1);
    assert_eq!(r["resultType"], "input_required");
    assert_eq!(r["inputRequests"]["name"]["method"], "elicitation/create");
    assert_eq!(
        r["inputRequests"]["name"]["params"]["message"],
        "Your name?"
    );
    assert!(
        r.get("ttlMs").is_none(),
        "interim results carry no caching hints"
    );
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test-server"
    );
    let state1 = r["requestState"].as_str().unwrap().to_owned();
    // The server's state is sealed, not the handler's text as is.
    assert_ne!(state1, "want-name");

    // Round 2: a new id, the original params, the answers and the state.
    let a = t
        .exchange(&retry(
            2,
            &state1,
            json!({"name": {"action": "accept", "content": {"name": "ada"}}}),
        ))
        .await;
    let r = a.result();
    assert_eq!(r["resultType"], "input_required");
    assert_eq!(
        r["inputRequests"]["confirm"]["params"]["message"],
        "Really ada?"
    );
    let state2 = r["requestState"].as_str().unwrap().to_owned();

    // Round 3: done; the handler got its own state back.
    let a = t
        .exchange(&retry(
            3,
            &state2,
            json!({"confirm": {"action": "accept", "content": {"ok": "yes"}}}),
        ))
        .await;
    let r = a.result();
    assert_eq!(r["resultType"], "complete");
    assert_eq!(
        r["structuredContent"],
        json!({"name": "ada", "confirmed": "yes", "state": "want-confirm:ada"})
    );
    eventually("no request in flight", || {
        t.server.in_flight_requests() == 0
    })
    .await;
}

#[tokio::test]
async fn tampered_forged_or_mismatched_state_is_rejected() {
    let t = start(config()).await;
    let a = t.exchange(&ask(1, json!({}))).await;
    let state = a.result()["requestState"].as_str().unwrap().to_owned();
    let answers = json!({"name": {"action": "accept", "content": {"name": "x"}}});

    // One character changed in the payload.
    let mut chars: Vec<char> = state.chars().collect();
    let i = 10;
    chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
    let tampered: String = chars.into_iter().collect();
    expect_invalid_params(&t, &retry(2, &tampered, answers.clone()), "requestState").await;

    // Not even the format.
    expect_invalid_params(&t, &retry(3, "want-name", answers.clone()), "malformed").await;

    // The state of another request (other arguments).
    let mut b = retry(4, &state, answers.clone());
    b["params"]["arguments"] = json!({"topic": "y"});
    expect_invalid_params(&t, &b, "different request").await;

    // The state on another method.
    let b = body(
        5,
        "prompts/get",
        json!({"name": "ask", "arguments": {"topic": "x"}, "requestState": state}),
        caps(),
    );
    expect_invalid_params(&t, &b, "different request").await;

    // On a method that never gets InputRequiredResult.
    let b = body(6, "tools/list", json!({"requestState": state}), caps());
    expect_invalid_params(&t, &b, "never receives").await;

    // inputResponses without a requestState reach the handler unverified,
    // with no state: this handler trusts nothing it did not seal and asks
    // again from the start.
    let b = ask(7, json!({"inputResponses": answers}));
    let a = t.exchange(&b).await;
    assert_eq!(a.result()["resultType"], "input_required");
    assert!(a.result()["inputRequests"].get("name").is_some());

    // Another server key (another instance without a shared key).
    let other = start(config()).await;
    let resp = other.send(&retry(8, &state, answers.clone())).await;
    assert_eq!(resp.status(), 400);
    assert!(
        error_json(resp).await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("verification")
    );

    // And the untouched state still works.
    let a = t.exchange(&retry(9, &state, answers)).await;
    assert_eq!(a.result()["resultType"], "input_required");
}

#[tokio::test]
async fn state_expires() {
    let t = start(config().with_state_ttl(Duration::from_millis(50))).await;
    let a = t.exchange(&ask(1, json!({}))).await;
    let state = a.result()["requestState"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(120)).await;
    let b = retry(
        2,
        &state,
        json!({"name": {"action": "accept", "content": {"name": "x"}}}),
    );
    expect_invalid_params(&t, &b, "expired").await;
}

#[tokio::test]
async fn instances_sharing_a_key_accept_each_others_state() {
    let key = [9u8; 32];
    let a_srv = start(config().with_state_key(Some(key))).await;
    let b_srv = start(config().with_state_key(Some(key))).await;
    let a = a_srv.exchange(&ask(1, json!({}))).await;
    let state = a.result()["requestState"].as_str().unwrap().to_owned();
    let a = b_srv
        .exchange(&retry(
            2,
            &state,
            json!({"name": {"action": "accept", "content": {"name": "bo"}}}),
        ))
        .await;
    assert_eq!(
        a.result()["inputRequests"]["confirm"]["params"]["message"],
        "Really bo?"
    );
}

#[tokio::test]
async fn rounds_are_bounded() {
    let t = start(config().with_max_input_rounds(1)).await;
    let a = t.exchange(&ask(1, json!({}))).await;
    let state = a.result()["requestState"].as_str().unwrap().to_owned();
    // The handler asks again: that would be round 2 of at most 1.
    let a = t
        .exchange(&retry(
            2,
            &state,
            json!({"name": {"action": "accept", "content": {"name": "x"}}}),
        ))
        .await;
    let e = a.error();
    assert_eq!(e["code"], -32603);
    assert!(e["message"].as_str().unwrap().contains("more than 1"));
}

#[tokio::test]
async fn state_is_bound_to_the_principal_when_configured() {
    let principal: PrincipalFn = Arc::new(|parts: &http::request::Parts| {
        parts
            .headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    let t = start(ModernConfig::default().with_principal(Some(principal))).await;
    let resp = t
        .rpc(&ask(1, json!({})))
        .header("x-user", "alice")
        .send()
        .await
        .unwrap();
    let a = read_answer(resp).await;
    let state = a.result()["requestState"].as_str().unwrap().to_owned();
    let answers = json!({"name": {"action": "accept", "content": {"name": "x"}}});
    let resp = t
        .rpc(&retry(2, &state, answers.clone()))
        .header("x-user", "mallory")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert!(
        error_json(resp).await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("principal")
    );
    let resp = t
        .rpc(&retry(3, &state, answers))
        .header("x-user", "alice")
        .send()
        .await
        .unwrap();
    assert_eq!(
        read_answer(resp).await.result()["resultType"],
        "input_required"
    );
}

#[tokio::test]
async fn input_required_in_json_mode() {
    let t = start(config().with_json_response(true)).await;
    let a = t.exchange(&ask(1, json!({}))).await;
    assert!(!a.sse);
    assert_eq!(a.result()["resultType"], "input_required");
}

/// Only `tools/call`, `prompts/get` and `resources/read` may answer with an
/// `InputRequiredResult` (*Multi Round-Trip Requests*, "Supported
/// Requests": "Servers MUST NOT send `InputRequiredResult` responses on any
/// other client requests"): a handler that asks for input on another method
/// gets its request answered with an internal error instead.
#[tokio::test]
async fn input_on_a_method_that_may_not_ask_is_an_internal_error() {
    use mcp_test_support::handler::method_fn;
    use mcp_transport_core::handler::{InputRequest, InputRequired, Outcome};

    let handler = TestHandler::builder("asks-everywhere")
        .method(
            "completion/complete",
            method_fn(|_, _, _| async {
                let mut requests = std::collections::BTreeMap::new();
                requests.insert(
                    "name".to_owned(),
                    InputRequest {
                        method: "elicitation/create".into(),
                        params: mcp_transport_core::jsonrpc::to_raw(&json!({"message": "?"})).ok(),
                    },
                );
                Outcome::InputRequired(InputRequired {
                    requests,
                    state: None,
                })
            }),
        )
        .build();
    let t = start_with(Arc::new(handler), config()).await;
    let b = body(
        1,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "v"}}),
        caps(),
    );
    let a = t.exchange(&b).await;
    assert_eq!(a.response["id"], 1);
    assert!(a.response.get("result").is_none(), "{}", a.response);
    assert_eq!(a.response["error"]["code"], -32603, "{}", a.response);
    let msg = a.response["error"]["message"].as_str().unwrap();
    assert!(msg.contains("completion/complete cannot ask for"), "{msg}");
}
