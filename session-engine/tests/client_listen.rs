//! The standalone GET stream (*Transports*, "Listening for Messages from
//! the Server").

mod client_common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use http::StatusCode;
use mcp_session_engine::client::{ClientConfig, LegacyClient};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::Message;
use mcp_transport_core::transport::{
    ListenFilter, Misbehaviour, RequestOptions, ServerMessages, Transport, TransportError,
};
use serde_json::json;

fn method_of(m: &Message) -> String {
    match m {
        Message::Request(r) => format!("request {}", r.method),
        Message::Notification(n) => n.method.clone(),
        Message::Response(r) => format!("response {:?}", r.id),
    }
}

async fn take(messages: &mut ServerMessages, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..n {
        let m = within("a listen message", messages.next())
            .await
            .expect("stream ended")
            .unwrap();
        out.push(method_of(&m));
    }
    out
}

#[tokio::test]
async fn a_405_means_the_server_offers_no_stream() {
    let fake = legacy_fake("2025-11-25", |_| None).await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    assert!(matches!(
        client.listen(ListenFilter::default()).await,
        Err(TransportError::NotOffered { .. })
    ));
}

/// A GET answered 200 with anything but `text/event-stream` is the
/// server's fault, and the error names what came: the media type, or
/// none when the answer had no `Content-Type`.
#[tokio::test]
async fn a_get_answered_with_another_media_type_names_it() {
    for (given, named) in [
        (
            Some("text/plain; charset=utf-8"),
            Some("text/plain; charset=utf-8"),
        ),
        (Some("application/json"), Some("application/json")),
        (None, None),
    ] {
        let fake = legacy_fake("2025-11-25", move |seen| {
            (seen.method == http::Method::GET).then(|| {
                let mut r = http::Response::builder();
                if let Some(ct) = given {
                    r = r.header("content-type", ct);
                }
                r.body(axum::body::Body::from("{}")).unwrap()
            })
        })
        .await;
        let client = LegacyClient::connect(ClientConfig::new(&fake.url))
            .await
            .unwrap();
        match client.listen(ListenFilter::default()).await {
            Err(TransportError::PeerMisbehaved(Misbehaviour::WrongContentType {
                got,
                expected,
                ..
            })) => {
                assert_eq!(got.as_deref(), named, "{given:?}");
                assert_eq!(expected, "text/event-stream");
            }
            other => panic!("{given:?}: {:?}", other.map(|_| ())),
        }
    }
}

#[tokio::test]
async fn messages_are_yielded_requests_answered_and_the_stream_resumed_until_close() {
    let fake = legacy_fake("2025-11-25", |seen| {
        if !seen.is_get() {
            return None;
        }
        Some(match seen.header("last-event-id") {
            None => sse(
                vec![
                    priming("g0", Some(10)),
                    event(
                        Some("g1"),
                        None,
                        &notification("notifications/tools/list_changed", json!({})),
                    ),
                    event(
                        Some("g2"),
                        None,
                        &server_request("srv-9", "sampling/createMessage", json!({"messages": []})),
                    ),
                ],
                Ending::Eof,
                None,
            ),
            Some("g2") => sse(
                vec![
                    priming("g3", None),
                    event(
                        Some("g4"),
                        None,
                        &notification(
                            "notifications/resources/updated",
                            json!({"uri": "file:///x"}),
                        ),
                    ),
                ],
                Ending::Hang,
                None,
            ),
            Some(other) => panic!("unexpected Last-Event-ID {other}"),
        })
    })
    .await;
    let sampler = sampler();
    let client =
        LegacyClient::connect(ClientConfig::new(&fake.url).with_input_handler(sampler.clone()))
            .await
            .unwrap();
    let mut messages = client.listen(ListenFilter::default()).await.unwrap();
    assert_eq!(
        take(&mut messages, 3).await,
        [
            "notifications/tools/list_changed",
            "request sampling/createMessage",
            "notifications/resources/updated"
        ]
    );
    assert_eq!(sampler.calls(), 1);
    let answers = fake.seen_where(Seen::is_rpc_response);
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].body.as_ref().unwrap()["id"], "srv-9");

    let gets = fake.seen_where(Seen::is_get);
    assert_eq!(gets.len(), 2);
    for get in &gets {
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        assert_eq!(get.header("mcp-session-id"), Some("sess-1"));
        assert_eq!(get.header("mcp-protocol-version"), Some("2025-11-25"));
    }
    assert_eq!(gets[0].header("last-event-id"), None);
    assert_eq!(gets[1].header("last-event-id"), Some("g2"));

    client.close().await.unwrap();
    assert!(within("end after close", messages.next()).await.is_none());
}

#[tokio::test(start_paused = true)]
async fn without_ids_the_stream_reopens_with_a_plain_get_after_the_backoff() {
    let ended = Arc::new(Mutex::new(Vec::new()));
    let marks = ended.clone();
    let gets = Arc::new(AtomicUsize::new(0));
    let fake = legacy_fake("2025-06-18", move |seen| {
        if !seen.is_get() {
            return None;
        }
        assert_eq!(seen.header("last-event-id"), None);
        let n = gets.fetch_add(1, Ordering::SeqCst);
        let note = notification("notifications/message", json!({"level": "info", "data": n}));
        let ending = if n == 0 { Ending::Eof } else { Ending::Hang };
        Some(sse(
            vec![event(None, None, &note)],
            ending,
            Some(marks.clone()),
        ))
    })
    .await;
    let client = LegacyClient::connect(
        ClientConfig::new(&fake.url)
            .with_versions(vec![ProtocolVersion::V2025_06_18])
            .with_reconnect_backoff(Duration::from_millis(1500)),
    )
    .await
    .unwrap();
    let mut messages = client.listen(ListenFilter::default()).await.unwrap();
    assert_eq!(
        take(&mut messages, 2).await,
        ["notifications/message", "notifications/message"]
    );
    let gets = fake.seen_where(Seen::is_get);
    assert_eq!(
        gets[1].at - ended.lock().unwrap()[0],
        Duration::from_millis(1500)
    );
}

#[tokio::test]
async fn a_filter_drops_unselected_change_notifications() {
    let fake = legacy_fake("2025-11-25", |seen| {
        seen.is_get().then(|| {
            sse(
                vec![
                    event(
                        Some("f1"),
                        None,
                        &notification("notifications/prompts/list_changed", json!({})),
                    ),
                    event(
                        Some("f2"),
                        None,
                        &notification("notifications/tools/list_changed", json!({})),
                    ),
                    event(
                        Some("f3"),
                        None,
                        &notification("notifications/message", json!({"level": "info", "data": 1})),
                    ),
                ],
                Ending::Hang,
                None,
            )
        })
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    let filter = ListenFilter {
        tools_list_changed: true,
        ..Default::default()
    };
    let mut messages = client.listen(filter).await.unwrap();
    assert_eq!(
        take(&mut messages, 2).await,
        ["notifications/tools/list_changed", "notifications/message"]
    );
}

#[tokio::test]
async fn a_405_on_reconnection_ends_the_stream() {
    let opened = Arc::new(AtomicBool::new(false));
    let fake = legacy_fake("2025-11-25", move |seen| {
        if !seen.is_get() {
            return None;
        }
        if opened.swap(true, Ordering::SeqCst) {
            return Some(status(StatusCode::METHOD_NOT_ALLOWED, ""));
        }
        Some(sse(
            vec![
                priming("o0", Some(5)),
                event(
                    Some("o1"),
                    None,
                    &notification("notifications/message", json!({})),
                ),
            ],
            Ending::Eof,
            None,
        ))
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    let mut messages = client.listen(ListenFilter::default()).await.unwrap();
    assert_eq!(take(&mut messages, 1).await, ["notifications/message"]);
    assert!(within("end", messages.next()).await.is_none());
}

#[tokio::test]
async fn the_stream_ends_with_session_expired_when_the_session_is_lost() {
    let gone = Arc::new(AtomicBool::new(false));
    let flag = gone.clone();
    let fake = legacy_fake("2025-11-25", move |seen| {
        if flag.load(Ordering::SeqCst) && seen.header("mcp-session-id") == Some("sess-1") {
            return Some(status(StatusCode::NOT_FOUND, ""));
        }
        seen.is_get()
            .then(|| sse(vec![priming("k0", None)], Ending::Hang, None))
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    let mut messages = client.listen(ListenFilter::default()).await.unwrap();
    gone.store(true, Ordering::SeqCst);
    let err = client
        .request("ping", None, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::SessionExpired { .. }));
    let err = within("listen error", messages.next())
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(err, TransportError::SessionExpired { .. }),
        "{err:?}"
    );
    assert!(messages.next().await.is_none());
    // listen() again starts a new session.
    let _again = client.listen(ListenFilter::default()).await.unwrap();
    assert_eq!(client.session_id().as_deref(), Some("sess-2"));
}
