//! `subscriptions/listen` (*Subscriptions*): the filter, the acknowledgment
//! checks, notification filtering, keep-alives, graceful and abrupt ends,
//! and cancellation by dropping.

mod client_common;

use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use http::StatusCode;
use mcp_transport_core::jsonrpc::Message;
use mcp_transport_core::transport::{
    ListenFilter, Misbehaviour, ResumeFailure, Transport, TransportError,
};
use serde_json::{Value, json};

fn ack(id: &Value, notifications: Value) -> Value {
    notification(
        "notifications/subscriptions/acknowledged",
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": id}, "notifications": notifications}),
    )
}

fn tagged(id: &Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": id});
    notification(method, params)
}

fn method_of(m: &Message) -> String {
    match m {
        Message::Notification(n) => n.method.clone(),
        Message::Response(_) => "response".into(),
        Message::Request(r) => format!("request {}", r.method),
    }
}

/// The methods of everything a subscription with [`filter`] delivers, to
/// its end.
async fn heard(fake: &Fake) -> Vec<String> {
    fake.client()
        .listen(filter())
        .await
        .unwrap()
        .map(|m| method_of(&m.unwrap()))
        .collect()
        .await
}

fn filter() -> ListenFilter {
    ListenFilter {
        tools_list_changed: true,
        prompts_list_changed: true,
        resource_uris: vec!["file:///project/config.json".into()],
        ..Default::default()
    }
}

#[tokio::test]
async fn listen_sends_the_filter_checks_the_ack_and_filters_notifications() {
    let fake = Fake::start(|seen| {
        let id = seen.id();
        sse_raw(
            vec![
                ":\n\n".into(),
                // Acknowledges less than asked (no prompts) plus one URI not asked for.
                event(&ack(&id, json!({
                    "toolsListChanged": true,
                    "resourceSubscriptions": ["file:///project/config.json", "file:///other"]
                }))),
                ": keep-alive\n\n".into(),
                event(&tagged(&id, "notifications/tools/list_changed", json!({}))),
                // Not requested: skipped.
                event(&tagged(&id, "notifications/resources/list_changed", json!({}))),
                // Requested but not acknowledged: skipped.
                event(&tagged(&id, "notifications/prompts/list_changed", json!({}))),
                event(&tagged(&id, "notifications/progress", json!({"progressToken": 1, "progress": 1}))),
                ":\n\n".into(),
                event(&tagged(&id, "notifications/resources/updated", json!({"uri": "file:///project/config.json"}))),
                // Graceful closure.
                event(&result(&id, json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": id}}))),
            ],
            Ending::KeepAlive,
            None,
        )
    })
    .await;
    let client = fake.client();
    let sub = client.subscribe(filter()).await.unwrap();
    let s = &fake.seen()[0];
    assert_eq!(s.rpc_method(), Some("subscriptions/listen"));
    assert_eq!(s.header("mcp-method"), Some("subscriptions/listen"));
    assert_eq!(
        s.params()["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": ["file:///project/config.json"]})
    );
    assert_eq!(s.version(), Some("2026-07-28"));
    assert_eq!(serde_json::to_value(&sub.id).unwrap(), s.id());
    assert!(sub.acknowledged.tools_list_changed);
    assert!(!sub.acknowledged.prompts_list_changed);
    assert_eq!(
        sub.acknowledged.resource_uris,
        ["file:///project/config.json"]
    );

    let got: Vec<String> = sub.messages.map(|m| method_of(&m.unwrap())).collect().await;
    assert_eq!(
        got,
        [
            "notifications/subscriptions/acknowledged",
            "notifications/tools/list_changed",
            "notifications/resources/updated",
            "response"
        ],
        "the final result ends the stream cleanly (even though the server keeps the connection)"
    );
}

#[tokio::test]
async fn the_first_message_must_be_the_acknowledgment() {
    let fake = Fake::start(|seen| {
        let id = seen.id();
        sse_raw(
            vec![event(&tagged(
                &id,
                "notifications/tools/list_changed",
                json!({}),
            ))],
            Ending::KeepAlive,
            None,
        )
    })
    .await;
    let err = fake.client().listen(filter()).await.unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::UnexpectedMessage { got, .. })
                if got == "notifications/tools/list_changed"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_refused_subscribe_is_an_http_error_with_the_rpc_error() {
    let fake = Fake::start(|seen| {
        status_json(
            StatusCode::NOT_FOUND,
            &rpc_error(&seen.id(), -32601, "Method not found", None),
        )
    })
    .await;
    let err = fake.client().subscribe(filter()).await.unwrap_err();
    assert!(
        matches!(&err, TransportError::Http { status: 404, rpc: Some(e), .. } if e.code == -32601),
        "{err}"
    );
}

#[tokio::test]
async fn listen_on_a_server_without_subscriptions_is_not_offered() {
    let fake = Fake::start(|seen| {
        status_json(
            StatusCode::NOT_FOUND,
            &rpc_error(&seen.id(), -32601, "Method not found", None),
        )
    })
    .await;
    let err = fake.client().listen(filter()).await.unwrap_err();
    assert!(matches!(&err, TransportError::NotOffered { .. }), "{err}");
    // Any other refusal stays what it is.
    let fake = Fake::start(|seen| {
        status_json(
            StatusCode::BAD_REQUEST,
            &rpc_error(&seen.id(), -32602, "Invalid params", None),
        )
    })
    .await;
    let err = fake.client().listen(filter()).await.unwrap_err();
    assert!(
        matches!(&err, TransportError::Http { status: 400, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn dropping_the_messages_closes_the_stream() {
    let flag = DropFlag::default();
    let f = flag.clone();
    let fake = Fake::start(move |seen| {
        let id = seen.id();
        sse_raw(
            vec![event(&ack(&id, json!({"toolsListChanged": true})))],
            Ending::KeepAlive,
            Some(f.guard()),
        )
    })
    .await;
    // A short request timeout: it bounds the wait for the acknowledgment
    // only, never the stream after it.
    let client = mcp_rev_2026_07_28::client::ModernClient::new(
        fake.config()
            .with_request_timeout(Some(Duration::from_millis(200))),
    )
    .unwrap();
    let mut messages = client
        .listen(ListenFilter {
            tools_list_changed: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let first = messages.next().await.unwrap().unwrap();
    assert_eq!(
        method_of(&first),
        "notifications/subscriptions/acknowledged"
    );
    // Keep-alives do not end or fail the stream, and no timeout applies
    // after the acknowledgment.
    let waited = tokio::time::timeout(Duration::from_millis(800), messages.next()).await;
    assert!(
        waited.is_err(),
        "nothing but keep-alives arrived, and the request timeout did not end the stream: {waited:?}"
    );
    assert!(!flag.is_set());
    drop(messages);
    assert!(
        flag.wait(Duration::from_secs(5)).await,
        "the server saw the stream close"
    );
    assert_eq!(fake.seen().len(), 1);
}

#[tokio::test]
async fn an_abrupt_end_is_reported_and_a_server_cancel_ends_cleanly() {
    let fake = Fake::start(|seen| {
        let id = seen.id();
        sse_raw(
            vec![event(&ack(&id, json!({"toolsListChanged": true})))],
            Ending::Eof,
            None,
        )
    })
    .await;
    let mut messages = fake.client().listen(filter()).await.unwrap();
    assert!(messages.next().await.unwrap().is_ok());
    let err = messages.next().await.unwrap().unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::ResumeFailed(ResumeFailure::SubscriptionEnded { cause, .. })
                if matches!(**cause, ResumeFailure::NotResumable { .. })
        ),
        "{err}"
    );
    assert!(messages.next().await.is_none());

    let fake = Fake::start(|seen| {
        let id = seen.id();
        sse_raw(
            vec![
                event(&ack(&id, json!({"toolsListChanged": true}))),
                event(&notification(
                    "notifications/cancelled",
                    json!({"requestId": id, "reason": "shutdown"}),
                )),
            ],
            Ending::KeepAlive,
            None,
        )
    })
    .await;
    let got = heard(&fake).await;
    assert_eq!(
        got,
        [
            "notifications/subscriptions/acknowledged",
            "notifications/cancelled"
        ]
    );
}

#[tokio::test]
async fn the_ack_wait_is_bounded_by_the_request_timeout() {
    let fake = Fake::start(|_| sse_raw(vec![], Ending::KeepAlive, None)).await;
    let client = mcp_rev_2026_07_28::client::ModernClient::new(
        fake.config()
            .with_request_timeout(Some(Duration::from_millis(200))),
    )
    .unwrap();
    let err = client.listen(filter()).await.unwrap_err();
    assert!(matches!(err, TransportError::Timeout(_)), "{err}");
}

#[tokio::test]
async fn a_cancel_of_another_request_does_not_end_the_subscription() {
    let fake = Fake::start(|seen| {
        let id = seen.id();
        sse_raw(
            vec![
                event(&ack(&id, json!({"toolsListChanged": true}))),
                event(&notification(
                    "notifications/cancelled",
                    json!({"requestId": "someone-else"}),
                )),
                event(&tagged(&id, "notifications/tools/list_changed", json!({}))),
                event(&result(&id, json!({"resultType": "complete"}))),
            ],
            Ending::KeepAlive,
            None,
        )
    })
    .await;
    let got = heard(&fake).await;
    assert_eq!(
        got,
        [
            "notifications/subscriptions/acknowledged",
            "notifications/tools/list_changed",
            "response"
        ],
        "the stray cancel is skipped like any notification not acknowledged"
    );
}

#[tokio::test]
async fn an_ack_naming_another_subscription_id_is_warned_about() {
    for (stated, warned) in [(None, false), (Some(json!("sub-9")), true)] {
        let stated2 = stated.clone();
        let fake = Fake::start(move |seen| {
            let id = stated2.clone().unwrap_or_else(|| seen.id());
            sse_raw(
                vec![event(&ack(&id, json!({"toolsListChanged": true})))],
                Ending::KeepAlive,
                None,
            )
        })
        .await;
        let (logged, _guard) = mcp_test_support::trace::Logged::install();
        let sub = fake.client().subscribe(filter()).await.unwrap();
        assert_eq!(
            serde_json::to_value(&sub.id).unwrap(),
            fake.seen()[0].id(),
            "the subscription is the request's, whatever the ack says"
        );
        let warnings: Vec<String> = logged
            .take(tracing::Level::WARN)
            .into_iter()
            .filter(|w| w.contains("subscriptionId"))
            .collect();
        assert_eq!(
            warnings.len(),
            usize::from(warned),
            "{stated:?}: {warnings:?}"
        );
    }
}
