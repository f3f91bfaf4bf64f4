//! The client against fake servers: handshake, headers, JSON and SSE
//! answers, server requests, cancellation, close, limits.

mod client_common;

use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use http::StatusCode;
use mcp_session_engine::client::{ClientConfig, LegacyClient};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{Notification, to_raw};
use mcp_transport_core::transport::{
    ListenFilter, Misbehaviour, RequestOptions, StreamEvent, Transport, TransportError,
};
use serde_json::{Value, json};

fn config(fake: &Fake) -> ClientConfig {
    ClientConfig::new(&fake.url)
}

async fn call(client: &LegacyClient, method: &str) -> Result<Vec<StreamEvent>, TransportError> {
    let params = to_raw(&json!({"name": "t"})).unwrap();
    let mut stream = client
        .request(method, Some(params), RequestOptions::default())
        .await?;
    let mut events = Vec::new();
    while let Some(ev) = within("reading the response stream", stream.next()).await {
        events.push(ev?);
    }
    Ok(events)
}

fn result_of(events: &[StreamEvent]) -> Value {
    match events.last() {
        Some(StreamEvent::Response(r)) => {
            serde_json::from_str(r.payload.as_ref().unwrap().get()).unwrap()
        }
        other => panic!("the stream did not end with a response: {other:?}"),
    }
}

#[tokio::test]
async fn connects_over_json_and_sends_the_handshake_headers() {
    let fake = legacy_fake("2025-11-25", |_| None).await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    assert_eq!(client.session_id().as_deref(), Some("sess-1"));
    assert_eq!(client.revision(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.server_info()["name"], "fake");
    assert_eq!(
        client.initialize_result().capabilities,
        json!({"tools": {}})
    );

    let seen = fake.seen();
    let init = &seen[0];
    assert!(init.is_rpc("initialize"));
    let accept = init.header("accept").unwrap();
    assert!(
        accept.contains("application/json") && accept.contains("text/event-stream"),
        "{accept}"
    );
    assert_eq!(init.header("content-type"), Some("application/json"));
    assert_eq!(init.header("mcp-session-id"), None);
    assert_eq!(
        init.header("mcp-protocol-version"),
        None,
        "no version header before negotiation"
    );
    let params = &init.body.as_ref().unwrap()["params"];
    assert_eq!(params["protocolVersion"], "2025-11-25");
    assert_eq!(params["clientInfo"]["name"], "mcp-session-engine");
    assert!(init.rpc_id().unwrap().is_i64());

    let initialized = &seen[1];
    assert!(initialized.is_rpc("notifications/initialized"));
    assert_eq!(initialized.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(
        initialized.header("mcp-protocol-version"),
        Some("2025-11-25")
    );
    assert!(
        initialized
            .header("accept")
            .unwrap()
            .contains("text/event-stream")
    );
}

#[tokio::test]
async fn initialize_may_be_answered_over_sse() {
    let fake = legacy_fake("2025-11-25", |seen| {
        if !seen.is_rpc("initialize") {
            return None;
        }
        let id = seen.rpc_id().unwrap();
        let mut r = sse(
            vec![
                priming("i0", Some(100)),
                event(
                    Some("i1"),
                    None,
                    &notification(
                        "notifications/message",
                        json!({"level": "info", "data": "hello"}),
                    ),
                ),
                event(Some("i2"), None, &server_request("p1", "ping", json!({}))),
                event(Some("i3"), None, &init_result(id, "2025-11-25")),
            ],
            Ending::Eof,
            None,
        );
        r.headers_mut()
            .insert("mcp-session-id", "sse-session".parse().unwrap());
        Some(r)
    })
    .await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    assert_eq!(client.session_id().as_deref(), Some("sse-session"));
    // The ping on the initialize stream was answered by the transport.
    let answers = fake.seen_where(Seen::is_rpc_response);
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].body.as_ref().unwrap()["id"], "p1");
    assert_eq!(answers[0].body.as_ref().unwrap()["result"], json!({}));
    assert_eq!(answers[0].header("mcp-session-id"), Some("sse-session"));
}

#[tokio::test]
async fn a_counter_offer_in_the_clients_list_is_accepted() {
    let fake = legacy_fake("2025-06-18", |_| None).await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    assert_eq!(client.revision(), ProtocolVersion::V2025_06_18);
    assert!(client.features().version_header && !client.features().sse_polling);
}

#[tokio::test]
async fn an_unsupported_answer_fails_naming_both_sides_and_disconnects() {
    let fake = legacy_fake("2025-03-26", |_| None).await;
    let err = LegacyClient::connect(config(&fake).with_versions(vec![
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
    ]))
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, TransportError::Negotiation(_)), "{err:?}");
    assert!(
        text.contains("2025-03-26") && text.contains("2025-11-25") && text.contains("2025-06-18"),
        "{text}"
    );
    let deletes = fake.seen_where(|s| s.method == http::Method::DELETE);
    assert_eq!(
        deletes.len(),
        1,
        "the client disconnects (DELETE) after a failed negotiation"
    );
    assert_eq!(deletes[0].header("mcp-session-id"), Some("sess-1"));
}

#[tokio::test]
async fn initialize_refused_with_an_error_is_a_clear_error() {
    let fake = legacy_fake("2025-11-25", |seen| {
        seen.is_rpc("initialize").then(|| {
            status_json(
                StatusCode::BAD_REQUEST,
                &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32602, "message": "Unsupported protocol version"}}),
            )
        })
    })
    .await;
    let err = LegacyClient::connect(config(&fake)).await.unwrap_err();
    match err {
        TransportError::Http {
            status,
            message,
            rpc,
        } => {
            assert_eq!(status, 400);
            assert_eq!(message, "Unsupported protocol version");
            assert_eq!(rpc.unwrap().code, -32602);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_json_answer_gives_the_response() {
    let fake = legacy_fake("2025-11-25", |_| None).await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    let events = call(&client, "tools/call").await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(result_of(&events), json!({"ok": true}));
    let posts = fake.seen_where(|s| s.is_rpc("tools/call"));
    assert_eq!(posts[0].header("mcp-session-id"), Some("sess-1"));
    assert_eq!(posts[0].header("content-type"), Some("application/json"));
    let accept = posts[0].header("accept").unwrap();
    assert!(accept.contains("application/json") && accept.contains("text/event-stream"));
    // Ids are integers counting up.
    let init_id = fake.seen()[0].rpc_id().unwrap().as_i64().unwrap();
    assert_eq!(posts[0].rpc_id().unwrap().as_i64().unwrap(), init_id + 1);
}

#[tokio::test]
async fn an_sse_answer_yields_related_messages_answers_server_requests_and_stops_at_the_response() {
    let fake = legacy_fake("2025-11-25", |seen| {
        if !seen.is_rpc("tools/call") {
            return None;
        }
        let id = seen.rpc_id().unwrap();
        Some(sse(
            vec![
                priming("e0", None),
                event(
                    Some("e1"),
                    None,
                    &notification(
                        "notifications/progress",
                        json!({"progressToken": 1, "progress": 1}),
                    ),
                ),
                event(
                    Some("e2"),
                    None,
                    &server_request(
                        "srv-1",
                        "sampling/createMessage",
                        json!({"messages": [], "maxTokens": 5}),
                    ),
                ),
                event(
                    Some("e3"),
                    None,
                    &server_request("srv-2", "roots/list", json!({})),
                ),
                event(Some("e4"), None, &result(id, json!({"content": []}))),
                // After the response: never read.
                event(
                    Some("e5"),
                    None,
                    &notification(
                        "notifications/progress",
                        json!({"progressToken": 1, "progress": 9}),
                    ),
                ),
            ],
            Ending::Hang,
            None,
        ))
    })
    .await;
    let sampler = sampler();
    let client = LegacyClient::connect(config(&fake).with_input_handler(sampler.clone()))
        .await
        .unwrap();
    let events = call(&client, "tools/call").await.unwrap();
    assert_eq!(events.len(), 4, "{events:?}");
    assert!(
        matches!(&events[0], StreamEvent::Notification(n) if n.method == "notifications/progress")
    );
    assert!(
        matches!(&events[1], StreamEvent::ServerRequest(r) if r.method == "sampling/createMessage")
    );
    assert!(matches!(&events[2], StreamEvent::ServerRequest(r) if r.method == "roots/list"));
    assert_eq!(result_of(&events), json!({"content": []}));
    assert_eq!(sampler.calls(), 2);

    let answers = fake.seen_where(Seen::is_rpc_response);
    assert_eq!(answers.len(), 2);
    let a = answers[0].body.as_ref().unwrap();
    assert_eq!(a["id"], "srv-1");
    assert_eq!(a["result"]["model"], "fake-model");
    let b = answers[1].body.as_ref().unwrap();
    assert_eq!(b["id"], "srv-2");
    assert_eq!(b["error"]["code"], -32601);
    for answer in &answers {
        assert_eq!(answer.header("mcp-session-id"), Some("sess-1"));
        assert_eq!(answer.header("mcp-protocol-version"), Some("2025-11-25"));
    }
}

macro_rules! version_header_test {
    ($name:ident, $version:literal, $expect:expr) => {
        #[tokio::test]
        async fn $name() {
            let fake = legacy_fake($version, |_| None).await;
            let client = LegacyClient::connect(
                config(&fake).with_versions(vec![ProtocolVersion::parse($version)]),
            )
            .await
            .unwrap();
            call(&client, "tools/list").await.unwrap();
            client
                .notify(Notification::new::<()>("notifications/roots/list_changed", None).unwrap())
                .await
                .unwrap();
            // The default fake answers GET with 405: the server offers no stream.
            assert!(matches!(
                client.listen(ListenFilter::default()).await,
                Err(TransportError::NotOffered { .. })
            ));
            client.close().await.unwrap();

            let seen = fake.seen();
            assert_eq!(seen.len(), 6, "{seen:?}");
            let expect: Option<&str> = $expect;
            assert_eq!(seen[0].header("mcp-protocol-version"), None);
            for s in &seen[1..] {
                assert_eq!(
                    s.header("mcp-protocol-version"),
                    expect,
                    "{} {:?}",
                    s.method,
                    s.rpc_method()
                );
                assert_eq!(s.header("mcp-session-id"), Some("sess-1"));
            }
            let get = seen.iter().find(|s| s.is_get()).unwrap();
            assert_eq!(get.header("accept"), Some("text/event-stream"));
        }
    };
}

version_header_test!(
    version_header_is_sent_on_2025_11_25_sessions,
    "2025-11-25",
    Some("2025-11-25")
);
version_header_test!(
    version_header_is_sent_on_2025_06_18_sessions,
    "2025-06-18",
    Some("2025-06-18")
);
version_header_test!(
    version_header_is_not_sent_on_2025_03_26_sessions,
    "2025-03-26",
    None
);

#[tokio::test]
async fn close_sends_delete_and_later_calls_fail_with_closed() {
    let fake = legacy_fake("2025-11-25", |_| None).await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    client.close().await.unwrap();
    let deletes = fake.seen_where(|s| s.method == http::Method::DELETE);
    assert_eq!(deletes.len(), 1);
    assert_eq!(deletes[0].header("mcp-session-id"), Some("sess-1"));
    assert!(matches!(
        call(&client, "tools/list").await,
        Err(TransportError::Closed)
    ));
    let n = Notification::new::<()>("notifications/x", None).unwrap();
    assert!(matches!(
        client.notify(n).await,
        Err(TransportError::Closed)
    ));
    assert!(matches!(
        client.listen(ListenFilter::default()).await,
        Err(TransportError::Closed)
    ));
    client.close().await.unwrap();
    assert_eq!(
        fake.seen_where(|s| s.method == http::Method::DELETE).len(),
        1
    );
}

#[tokio::test]
async fn delete_answered_202_204_or_405_is_fine() {
    for code in [
        StatusCode::ACCEPTED,
        StatusCode::NO_CONTENT,
        StatusCode::METHOD_NOT_ALLOWED,
    ] {
        let fake = legacy_fake("2025-11-25", move |s| {
            (s.method == http::Method::DELETE).then(|| status(code, ""))
        })
        .await;
        let client = LegacyClient::connect(config(&fake)).await.unwrap();
        client
            .close()
            .await
            .unwrap_or_else(|e| panic!("{code}: {e}"));
    }
    let fake = legacy_fake("2025-11-25", |s| {
        (s.method == http::Method::DELETE)
            .then(|| status(StatusCode::INTERNAL_SERVER_ERROR, "boom"))
    })
    .await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    assert!(matches!(
        client.close().await,
        Err(TransportError::Http { status: 500, .. })
    ));
}

/// A fake whose `tools/call` stream sends a priming event and then hangs.
async fn hanging_fake() -> Fake {
    legacy_fake("2025-11-25", |seen| {
        seen.is_rpc("tools/call").then(|| {
            sse(
                vec![
                    priming("h0", None),
                    event(
                        Some("h1"),
                        None,
                        &notification(
                            "notifications/progress",
                            json!({"progressToken": 1, "progress": 1}),
                        ),
                    ),
                ],
                Ending::Hang,
                None,
            )
        })
    })
    .await
}

async fn wait_for_cancel(fake: &Fake) -> Seen {
    within("waiting for notifications/cancelled", async {
        loop {
            if let Some(s) = fake
                .seen_where(|s| s.is_rpc("notifications/cancelled"))
                .pop()
            {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
}

#[tokio::test]
async fn dropping_the_stream_sends_notifications_cancelled() {
    let fake = hanging_fake().await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    let mut stream = client
        .request("tools/call", None, RequestOptions::default())
        .await
        .unwrap();
    let first = within("first event", stream.next()).await.unwrap().unwrap();
    assert!(matches!(first, StreamEvent::Notification(_)));
    drop(stream);
    let cancel = wait_for_cancel(&fake).await;
    let id = fake.seen_where(|s| s.is_rpc("tools/call"))[0]
        .rpc_id()
        .unwrap()
        .clone();
    let params = &cancel.body.as_ref().unwrap()["params"];
    assert_eq!(params["requestId"], id);
    assert!(params["reason"].as_str().unwrap().contains("dropped"));
    assert_eq!(cancel.header("mcp-session-id"), Some("sess-1"));
    assert_eq!(cancel.header("mcp-protocol-version"), Some("2025-11-25"));
}

#[tokio::test]
async fn a_request_that_completes_sends_no_cancellation() {
    let fake = legacy_fake("2025-11-25", |_| None).await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    call(&client, "tools/list").await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        fake.seen_where(|s| s.is_rpc("notifications/cancelled"))
            .is_empty()
    );
}

#[tokio::test]
async fn the_request_timeout_ends_the_stream_and_cancels() {
    let fake = hanging_fake().await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    let options = RequestOptions {
        timeout: Some(Duration::from_millis(200)),
        ..Default::default()
    };
    let stream = client.request("tools/call", None, options).await.unwrap();
    let err = within("timeout", stream.response()).await.unwrap_err();
    assert!(
        matches!(err, TransportError::Timeout(d) if d == Duration::from_millis(200)),
        "{err:?}"
    );
    let cancel = wait_for_cancel(&fake).await;
    assert!(
        cancel.body.unwrap()["params"]["reason"]
            .as_str()
            .unwrap()
            .contains("timed out")
    );
}

#[tokio::test]
async fn a_json_body_over_the_limit_is_a_limit_error() {
    let fake = legacy_fake("2025-11-25", |seen| {
        seen.is_rpc("tools/call").then(|| {
            json_ok(&result(
                seen.rpc_id().unwrap(),
                json!({"big": "x".repeat(5000)}),
            ))
        })
    })
    .await;
    let client = LegacyClient::connect(config(&fake).with_max_body_bytes(1000))
        .await
        .unwrap();
    let err = call(&client, "tools/call").await.unwrap_err();
    assert!(
        matches!(&err, TransportError::Limit(l) if l.setting.ends_with("max_body_bytes")),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_sse_event_over_the_limit_is_a_limit_error() {
    let fake = legacy_fake("2025-11-25", |seen| {
        seen.is_rpc("tools/call").then(|| {
            sse(
                vec![
                    priming("l0", None),
                    event(
                        Some("l1"),
                        None,
                        &result(seen.rpc_id().unwrap(), json!({"big": "x".repeat(5000)})),
                    ),
                ],
                Ending::Hang,
                None,
            )
        })
    })
    .await;
    let client = LegacyClient::connect(config(&fake).with_max_event_bytes(1000))
        .await
        .unwrap();
    let err = call(&client, "tools/call").await.unwrap_err();
    assert!(
        matches!(&err, TransportError::Limit(l) if l.setting.ends_with("max_event_bytes")),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_http_error_carries_status_and_json_rpc_message() {
    let fake = legacy_fake("2025-11-25", |seen| {
        seen.is_rpc("tools/call").then(|| {
            status_json(
                StatusCode::BAD_REQUEST,
                &json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Bad tool call"}}),
            )
        })
    })
    .await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    match call(&client, "tools/call").await.unwrap_err() {
        TransportError::Http {
            status,
            message,
            rpc,
        } => {
            assert_eq!((status, message.as_str()), (400, "Bad tool call"));
            assert_eq!(rpc.unwrap().code, -32600);
        }
        other => panic!("{other:?}"),
    }
}

/// An error body is read up to 64 KiB for its JSON-RPC message: a long
/// message within that is given whole; a body past it is not read to its
/// end, and the error carries no JSON-RPC error.
#[tokio::test]
async fn an_http_errors_body_is_read_up_to_64_kib() {
    let fake = legacy_fake("2025-11-25", |seen| {
        let long = |n: usize| {
            status_json(
                StatusCode::BAD_REQUEST,
                &json!({"jsonrpc": "2.0", "error": {"code": -32600, "message": "x".repeat(n)}}),
            )
        };
        if seen.is_rpc("tools/call") {
            Some(long(60_000))
        } else if seen.is_rpc("tools/list") {
            Some(long(70_000))
        } else {
            None
        }
    })
    .await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    match call(&client, "tools/call").await.unwrap_err() {
        TransportError::Http { message, rpc, .. } => {
            assert_eq!(message.len(), 60_000);
            assert_eq!(rpc.unwrap().code, -32600);
        }
        other => panic!("{other:?}"),
    }
    match call(&client, "tools/list").await.unwrap_err() {
        TransportError::Http { status, rpc, .. } => {
            assert_eq!(status, 400);
            assert!(rpc.is_none(), "read past the limit: {rpc:?}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_202_to_a_request_or_an_odd_content_type_is_peer_misbehaviour() {
    let fake = legacy_fake("2025-11-25", |seen| {
        if seen.is_rpc("tools/call") {
            Some(status(StatusCode::ACCEPTED, ""))
        } else if seen.is_rpc("tools/list") {
            Some(
                http::Response::builder()
                    .header("content-type", "text/plain")
                    .body(axum::body::Body::from("hello"))
                    .unwrap(),
            )
        } else {
            None
        }
    })
    .await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    let err = call(&client, "tools/call").await.unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::AcceptedWithoutAnswer { .. })
        ),
        "{err:?}"
    );
    let err = call(&client, "tools/list").await.unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::WrongContentType { got: Some(ct), .. })
                if ct == "text/plain"
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn close_ends_in_flight_streams_with_closed() {
    let fake = hanging_fake().await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    let mut stream = client
        .request("tools/call", None, RequestOptions::default())
        .await
        .unwrap();
    assert!(matches!(
        within("first", stream.next()).await,
        Some(Ok(StreamEvent::Notification(_)))
    ));
    client.close().await.unwrap();
    assert!(matches!(
        within("closed", stream.next()).await,
        Some(Err(TransportError::Closed))
    ));
    assert!(stream.next().await.is_none());
}

/// Nothing to cancel where nothing can hear it: a request's stream
/// dropped after the client closed, or after the server forgot the
/// session (404 to another request), posts no `notifications/cancelled`.
#[tokio::test]
async fn no_cancellation_after_close_or_in_a_lost_session() {
    for lose_session in [false, true] {
        let fake = legacy_fake("2025-11-25", |seen| {
            if seen.is_rpc("tools/list") {
                return Some(status(StatusCode::NOT_FOUND, ""));
            }
            seen.is_rpc("tools/call")
                .then(|| sse(vec![priming("h0", None)], Ending::Hang, None))
        })
        .await;
        let client = LegacyClient::connect(config(&fake)).await.unwrap();
        let stream = client
            .request("tools/call", None, RequestOptions::default())
            .await
            .unwrap();
        if lose_session {
            let err = call(&client, "tools/list").await.unwrap_err();
            assert!(
                matches!(err, TransportError::SessionExpired { .. }),
                "{err:?}"
            );
        } else {
            client.close().await.unwrap();
        }
        drop(stream);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let cancels = fake.seen_where(|s| s.is_rpc("notifications/cancelled"));
        assert!(cancels.is_empty(), "lost: {lose_session}: {cancels:?}");
    }
}

/// A client's `Debug` says where it talks, at which revision, in which
/// session, and whether it is closed: what a log line of it needs.
#[tokio::test]
async fn a_clients_debug_names_its_endpoint_revision_and_session() {
    let fake = legacy_fake("2025-11-25", |_| None).await;
    let client = LegacyClient::connect(config(&fake)).await.unwrap();
    let shown = format!("{client:?}");
    for part in [
        "LegacyClient",
        fake.url.as_str(),
        "2025-11-25",
        "sess-1",
        "closed: false",
    ] {
        assert!(shown.contains(part), "{part} in {shown}");
    }
}

/// *Session Management*: the session id "MUST only contain visible ASCII
/// characters (ranging from 0x21 to 0x7E)". An `initialize` answer with an
/// empty one, or one with a space or a byte above 0x7E, is refused
/// naming the value; the whole visible range is taken as it is.
#[tokio::test]
async fn a_session_id_outside_visible_ascii_is_refused() {
    async fn connect_with(id: &'static [u8]) -> Result<LegacyClient, TransportError> {
        let fake = legacy_fake("2025-11-25", move |seen| {
            seen.is_rpc("initialize").then(|| {
                let mut r = json_ok(&init_result(seen.rpc_id().unwrap(), "2025-11-25"));
                r.headers_mut()
                    .insert("mcp-session-id", http::HeaderValue::from_bytes(id).unwrap());
                r
            })
        })
        .await;
        LegacyClient::connect(config(&fake)).await
    }
    for (id, shown) in [(&b""[..], ""), (b"a b", "a b"), (b"caf\xe9", "caf\u{fffd}")] {
        match connect_with(id).await {
            Err(TransportError::PeerMisbehaved(Misbehaviour::InvalidSessionId { value })) => {
                assert_eq!(value, shown);
            }
            other => panic!("{id:?}: {other:?}"),
        }
    }
    let visible: String = (0x21u8..=0x7e).map(char::from).collect();
    let visible: &'static [u8] = Box::leak(visible.into_bytes().into_boxed_slice());
    let client = connect_with(visible).await.unwrap();
    assert_eq!(
        client.session_id().as_deref().map(str::as_bytes),
        Some(visible)
    );
}
