//! Multi round-trip requests (*MRTR*; SEP-2322): `InputRequiredResult`
//! rounds answered through the input handler.

mod client_common;

use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use mcp_rev_2026_07_28::client::ModernClient;
use mcp_transport_core::transport::{
    Misbehaviour, RequestOptions, StreamEvent, Transport, TransportError,
};
use serde_json::{Value, json};

fn elicit(message: &str) -> Value {
    json!({"method": "elicitation/create", "params": {
        "mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
    }})
}

fn sample() -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
        "maxTokens": 100
    }})
}

/// Round 1 asks for a login (elicitation) and a sample, round 2 for a
/// confirmation (with new state), round 3 completes. Each round checks what
/// the previous one asked for; round 1 also answers on an SSE stream.
fn three_rounds(seen: &Seen) -> axum::response::Response {
    let p = seen.params();
    match p.get("requestState").and_then(Value::as_str) {
        None => {
            assert!(p.get("inputResponses").is_none());
            sse(&[
                notification(
                    "notifications/progress",
                    json!({"progressToken": "x", "progress": 1}),
                ),
                result(
                    &seen.id(),
                    json!({
                        "resultType": "input_required",
                        "inputRequests": {"github_login": elicit("login?"), "capital": sample()},
                        "requestState": "state-1 \u{1F512} opaque"
                    }),
                ),
            ])
        }
        Some("state-1 \u{1F512} opaque") => {
            let r = &p["inputResponses"];
            assert_eq!(r["github_login"]["content"]["name"], "octocat");
            assert_eq!(r["capital"]["role"], "assistant");
            json_ok(&result(
                &seen.id(),
                json!({
                    "resultType": "input_required",
                    "inputRequests": {"confirm": elicit("sure?")},
                    "requestState": "state-2"
                }),
            ))
        }
        Some("state-2") => {
            let r = p["inputResponses"].as_object().unwrap();
            assert_eq!(
                r.keys().collect::<Vec<_>>(),
                ["confirm"],
                "only this round's answers"
            );
            json_ok(&result(
                &seen.id(),
                json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]}),
            ))
        }
        Some(other) => panic!("unexpected state {other}"),
    }
}

fn answers() -> std::sync::Arc<ScriptedInput> {
    ScriptedInput::new(&[
        (
            "elicitation/create",
            json!({"action": "accept", "content": {"name": "octocat"}}),
        ),
        (
            "sampling/createMessage",
            json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m", "stopReason": "endTurn"}),
        ),
    ])
}

#[tokio::test]
async fn multi_round_exchange_retries_with_responses_and_state() {
    let fake = Fake::start(three_rounds).await;
    let input = answers();
    let client = ModernClient::new(
        fake.config()
            .with_capabilities(json!({"elicitation": {}, "sampling": {}}))
            .with_input_handler(input.clone()),
    )
    .unwrap();
    let original = json!({"name": "update_issue", "arguments": {"id": 7}});
    let stream = client
        .request(
            "tools/call",
            params(original.clone()),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    let events: Vec<StreamEvent> = stream.map(Result::unwrap).collect().await;
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            StreamEvent::Notification(n) => n.method.clone(),
            StreamEvent::ServerRequest(r) => format!("input {} {}", r.id, r.method),
            StreamEvent::Response(_) => "response".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "notifications/progress",
            "input \"capital\" sampling/createMessage",
            "input \"github_login\" elicitation/create",
            "input \"confirm\" elicitation/create",
            "response"
        ]
    );
    let StreamEvent::Response(r) = events.last().unwrap() else {
        panic!()
    };
    assert_eq!(result_of(r)["content"][0]["text"], "done");
    assert_eq!(input.asked().len(), 3);
    assert_eq!(input.asked()[1].1["message"], "login?");

    let calls = fake.rpc("tools/call");
    assert_eq!(calls.len(), 3);
    let ids: Vec<Value> = calls.iter().map(Seen::id).collect();
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2],
        "every retry has a new id: {ids:?}"
    );
    for c in &calls {
        assert_eq!(c.params()["name"], original["name"]);
        assert_eq!(c.params()["arguments"], original["arguments"]);
        assert_eq!(c.header("mcp-name"), Some("update_issue"));
        assert_eq!(c.version(), Some("2026-07-28"));
    }
    // requestState is echoed byte for byte.
    assert_eq!(
        calls[1].params()["requestState"],
        "state-1 \u{1F512} opaque"
    );
    assert_eq!(calls[2].params()["requestState"], "state-2");
}

#[tokio::test]
async fn no_request_state_in_the_result_means_none_in_the_retry() {
    let fake = Fake::start(|seen| {
        if seen.params().get("inputResponses").is_none() {
            json_ok(&result(
                &seen.id(),
                json!({"resultType": "input_required", "inputRequests": {"who": elicit("name?")}}),
            ))
        } else {
            assert!(seen.params().get("requestState").is_none());
            json_ok(&result(&seen.id(), json!({"resultType": "complete"})))
        }
    })
    .await;
    let client = ModernClient::new(fake.config().with_input_handler(answers())).unwrap();
    answer(
        &client,
        "prompts/get",
        // A stale requestState from the caller is not carried into the retry.
        params(json!({"name": "p", "requestState": "stale"})),
    )
    .await
    .unwrap();
    let calls = fake.rpc("prompts/get");
    assert_eq!(calls.len(), 2);
    assert!(calls[1].params().get("requestState").is_none());

    // State only (load shedding): retried at once, without inputResponses.
    let fake = Fake::start(|seen| {
        if seen.params().get("requestState").is_none() {
            json_ok(&result(
                &seen.id(),
                json!({"resultType": "input_required", "requestState": "resume-here"}),
            ))
        } else {
            assert!(seen.params().get("inputResponses").is_none());
            json_ok(&result(&seen.id(), json!({"resultType": "complete"})))
        }
    })
    .await;
    answer(
        &fake.client(),
        "resources/read",
        params(json!({"uri": "file:///x"})),
    )
    .await
    .unwrap();
    assert_eq!(fake.rpc("resources/read").len(), 2);
}

#[tokio::test]
async fn rounds_are_bounded() {
    let fake = Fake::start(|seen| {
        json_ok(&result(
            &seen.id(),
            json!({"resultType": "input_required", "requestState": "again"}),
        ))
    })
    .await;
    let client = ModernClient::new(fake.config().with_max_input_rounds(3)).unwrap();
    let err = answer(&client, "tools/call", params(json!({"name": "loop"})))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransportError::Limit(l) if l.setting.ends_with("max_input_rounds")),
        "{err}"
    );
    assert_eq!(fake.seen().len(), 4, "the original and 3 retries");
}

#[tokio::test]
async fn an_input_handler_error_abandons_the_request_without_retrying() {
    let fake = Fake::start(|seen| {
        json_ok(&result(
            &seen.id(),
            json!({
                "resultType": "input_required",
                "inputRequests": {"roots": {"method": "roots/list"}},
                "requestState": "s"
            }),
        ))
    })
    .await;
    // The default handler (NoInput) declines everything with -32601.
    let client = fake.client();
    let err = answer(&client, "tools/call", params(json!({"name": "t"})))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransportError::Unsupported { what, .. } if what.contains("input handler")),
        "{err}"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(fake.seen().len(), 1, "no retry after a handler error");
}

#[tokio::test]
async fn malformed_input_required_results_are_refused() {
    let fake =
        Fake::start(|seen| json_ok(&result(&seen.id(), json!({"resultType": "input_required"}))))
            .await;
    let err = answer(&fake.client(), "tools/call", params(json!({"name": "t"})))
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::MalformedResult { what, .. })
                if what == "InputRequiredResult"
        ),
        "{err}"
    );
    assert_eq!(fake.seen().len(), 1);
}

#[tokio::test]
async fn input_required_on_another_method_is_answered_with_a_warning() {
    let (logged, _guard) = mcp_test_support::trace::Logged::install();
    let fake = Fake::start(|seen| {
        if seen.params().get("requestState").is_none() {
            json_ok(&result(
                &seen.id(),
                json!({"resultType": "input_required", "requestState": "s"}),
            ))
        } else {
            json_ok(&result(&seen.id(), json!({"resultType": "complete"})))
        }
    })
    .await;
    let client = fake.client();
    let warned = |logged: &mcp_test_support::trace::Logged| {
        logged
            .take(tracing::Level::WARN)
            .into_iter()
            .filter(|w| w.contains("does not support it"))
            .collect::<Vec<_>>()
    };
    answer(&client, "tools/call", params(json!({"name": "t"})))
        .await
        .unwrap();
    assert_eq!(warned(&logged), Vec::<String>::new(), "tools/call has MRTR");
    // MRTR, "Supported Requests": tools/list is not among them; the round
    // is still answered, with a warning naming the method.
    answer(&client, "tools/list", None).await.unwrap();
    assert_eq!(fake.rpc("tools/list").len(), 2);
    let w = warned(&logged);
    assert!(
        w.len() == 1 && w[0].contains("tools/list"),
        "one warning naming the method: {w:?}"
    );
}
