//! Answers and their streams: JSON and SSE, related notifications,
//! protocol violations, cancellation by closing, broken streams (not
//! resumable), bounds and `close()`.

mod client_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use mcp_rev_2026_07_28::client::ModernClient;
use mcp_transport_core::transport::{
    Misbehaviour, RequestOptions, ResumeFailure, StreamEvent, Transport, TransportError,
};
use serde_json::{Value, json};

fn progress(token: &Value, n: u32) -> Value {
    notification(
        "notifications/progress",
        json!({"progressToken": token, "progress": n}),
    )
}

#[tokio::test]
async fn json_and_sse_answers_are_both_accepted() {
    let fake = Fake::start(|seen| {
        if seen.params()["as"] == "json" {
            json_ok(&result(
                &seen.id(),
                json!({"resultType": "complete", "via": "json"}),
            ))
        } else {
            let token = seen.meta("progressToken").cloned().unwrap_or(Value::Null);
            sse_raw(
                vec![
                    ": keep-alive\n\n".into(),
                    event(&progress(&token, 1)),
                    ":\n\n".into(),
                    // An event of another type is not a message: skipped.
                    format!(
                        "event: custom\ndata: {}\n\n",
                        notification("notifications/custom", json!({}))
                    ),
                    event(&notification(
                        "notifications/message",
                        json!({"level": "info", "data": "hi"}),
                    )),
                    event(&progress(&token, 2)),
                    event(&result(
                        &seen.id(),
                        json!({"resultType": "complete", "via": "sse"}),
                    )),
                ],
                Ending::Eof,
                None,
            )
        }
    })
    .await;
    let client = fake.client();
    let r = answer(
        &client,
        "tools/call",
        params(json!({"name": "t", "as": "json"})),
    )
    .await
    .unwrap();
    assert_eq!(result_of(&r)["via"], "json");

    let stream = client
        .request(
            "tools/call",
            params(json!({"name": "t", "as": "sse"})),
            RequestOptions {
                progress: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let events: Vec<StreamEvent> = stream.map(Result::unwrap).collect().await;
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            StreamEvent::Notification(n) => n.method.clone(),
            StreamEvent::Response(_) => "response".into(),
            StreamEvent::ServerRequest(_) => "request".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "response"
        ]
    );
    let StreamEvent::Response(r) = events.last().unwrap() else {
        panic!()
    };
    assert_eq!(result_of(r)["via"], "sse");
}

#[tokio::test]
async fn result_without_result_type_is_complete_and_unknown_types_are_invalid() {
    let fake = Fake::start(|seen| {
        let body = match seen.params()["kind"].as_str() {
            Some("none") => json!({"content": []}),
            _ => json!({"resultType": "teleported"}),
        };
        json_ok(&result(&seen.id(), body))
    })
    .await;
    let client = fake.client();
    let r = answer(
        &client,
        "tools/call",
        params(json!({"name": "t", "kind": "none"})),
    )
    .await
    .unwrap();
    assert_eq!(result_of(&r), json!({"content": []}));
    let err = answer(
        &client,
        "tools/call",
        params(json!({"name": "t", "kind": "odd"})),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::UnknownResultType { result_type, .. })
                if result_type == "teleported"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_server_request_on_the_stream_is_a_protocol_violation() {
    let fake = Fake::start(|seen| {
        sse(&[
            json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}}),
            result(&seen.id(), json!({})),
        ])
    })
    .await;
    let err = answer(&fake.client(), "tools/call", params(json!({"name": "t"})))
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::UnexpectedMessage { got, .. })
                if got.contains("sampling/createMessage")
        ),
        "{err}"
    );
    // The client answered nothing.
    assert_eq!(fake.seen().len(), 1);
}

#[tokio::test]
async fn dropping_the_stream_closes_it_and_sends_no_cancel_notification() {
    let flag = DropFlag::default();
    let f = flag.clone();
    let fake = Fake::start(move |_| {
        sse_raw(
            vec![event(&notification(
                "notifications/progress",
                json!({"progressToken": "p", "progress": 1}),
            ))],
            Ending::KeepAlive,
            Some(f.guard()),
        )
    })
    .await;
    let client = fake.client();
    let mut stream = client
        .request(
            "tools/call",
            params(json!({"name": "slow"})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert!(matches!(first, StreamEvent::Notification(_)));
    assert!(!flag.is_set());
    drop(stream);
    assert!(
        flag.wait(Duration::from_secs(5)).await,
        "the server saw the stream close"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(fake.seen().len(), 1, "no notifications/cancelled POST");
}

#[tokio::test]
async fn a_broken_stream_is_not_resumed() {
    for tail in [Ending::Eof, Ending::Abort, Ending::AbortNow] {
        let fake = Fake::start(move |_| {
            sse_raw(
                vec![
                    "id: 7\nretry: 10\n".to_owned()
                        + &event(&notification(
                            "notifications/progress",
                            json!({"progressToken": "p", "progress": 1}),
                        )),
                ],
                tail,
                None,
            )
        })
        .await;
        let err = answer(&fake.client(), "tools/call", params(json!({"name": "t"})))
            .await
            .unwrap_err();
        assert!(
            matches!(
                &err,
                TransportError::ResumeFailed(ResumeFailure::NotResumable { revision, .. })
                    if revision.as_str() == "2026-07-28"
            ),
            "{tail:?}: {err}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
        let seen = fake.seen();
        assert_eq!(seen.len(), 1, "{tail:?}: no GET, no re-send");
        assert!(seen.iter().all(|s| s.method == http::Method::POST));
        assert!(seen.iter().all(|s| s.header("last-event-id").is_none()));
    }
}

#[tokio::test]
async fn safe_to_retry_reissues_once_with_a_new_id() {
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    let fake = Fake::start(move |seen| {
        if c.fetch_add(1, Ordering::SeqCst) == 0 {
            sse_raw(vec!["id: 1\n\n".into()], Ending::Abort, None)
        } else {
            sse(&[result(&seen.id(), json!({"ok": true}))])
        }
    })
    .await;
    let r = fake
        .client()
        .request(
            "resources/read",
            params(json!({"uri": "file:///a"})),
            RequestOptions {
                safe_to_retry: true,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .response()
        .await
        .unwrap();
    assert_eq!(result_of(&r)["ok"], true);
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    assert_ne!(seen[0].id(), seen[1].id());
    assert_eq!(seen[0].params()["uri"], seen[1].params()["uri"]);
    assert!(seen[1].header("last-event-id").is_none());

    // Only once: a second break fails.
    let fake = Fake::start(|_| sse_raw(vec![], Ending::AbortNow, None)).await;
    let err = fake
        .client()
        .request(
            "resources/read",
            params(json!({"uri": "file:///a"})),
            RequestOptions {
                safe_to_retry: true,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .response()
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            TransportError::ResumeFailed(ResumeFailure::NotResumable { .. })
        ),
        "{err}"
    );
    assert_eq!(fake.seen().len(), 2);
}

#[tokio::test]
async fn a_timeout_closes_the_stream() {
    let flag = DropFlag::default();
    let f = flag.clone();
    let fake = Fake::start(move |_| sse_raw(vec![], Ending::KeepAlive, Some(f.guard()))).await;
    let err = fake
        .client()
        .request(
            "tools/call",
            params(json!({"name": "t"})),
            RequestOptions {
                timeout: Some(Duration::from_millis(300)),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .response()
        .await
        .unwrap_err();
    assert!(
        matches!(err, TransportError::Timeout(d) if d == Duration::from_millis(300)),
        "{err}"
    );
    assert!(flag.wait(Duration::from_secs(5)).await);
}

#[tokio::test]
async fn event_and_body_sizes_are_bounded() {
    let fake = Fake::start(|seen| {
        let big = "x".repeat(10_000);
        if seen.params()["as"] == "sse" {
            sse(&[result(&seen.id(), json!({"big": big}))])
        } else {
            json_ok(&result(&seen.id(), json!({"big": big})))
        }
    })
    .await;
    let client = ModernClient::new(
        fake.config()
            .with_max_event_bytes(4096)
            .with_max_body_bytes(4096),
    )
    .unwrap();
    let err = answer(
        &client,
        "tools/call",
        params(json!({"name": "t", "as": "sse"})),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, TransportError::Limit(l) if l.setting.ends_with("max_event_bytes")),
        "{err}"
    );
    let err = client
        .request(
            "tools/call",
            params(json!({"name": "t", "as": "json"})),
            RequestOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransportError::Limit(l) if l.setting.ends_with("max_body_bytes")),
        "{err}"
    );
}

#[tokio::test]
async fn close_fails_later_calls_and_ends_streams_in_flight() {
    let flag = DropFlag::default();
    let f = flag.clone();
    let fake = Fake::start(move |_| sse_raw(vec![], Ending::KeepAlive, Some(f.guard()))).await;
    let client = fake.client();
    let mut stream = client
        .request(
            "tools/call",
            params(json!({"name": "t"})),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    let c = client.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        c.close().await.unwrap();
    });
    let err = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(err, TransportError::Closed), "{err}");
    assert!(stream.next().await.is_none());
    assert!(flag.wait(Duration::from_secs(5)).await);
    let err = client
        .request("tools/list", None, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Closed));
    assert!(matches!(
        client.list_tools().await.unwrap_err(),
        TransportError::Closed
    ));
    assert_eq!(fake.seen().len(), 1);
}

#[tokio::test]
async fn non_object_params_and_202_answers_are_refused() {
    let fake = Fake::start(|_| status(http::StatusCode::ACCEPTED, "")).await;
    let client = fake.client();
    let err = client
        .request(
            "tools/call",
            params(json!([1, 2])),
            RequestOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Unsupported { .. }), "{err}");
    let err = client
        .request("tools/list", None, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::AcceptedWithoutAnswer { .. })
        ),
        "{err}"
    );
}
