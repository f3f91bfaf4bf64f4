//! HTTP 404 to a request carrying the session id: the session is gone
//! (*Transports*, "Session Management" 3-4).

mod client_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use http::StatusCode;
use mcp_session_engine::client::{ClientConfig, LegacyClient};
use mcp_test_support::client::answer;
use mcp_transport_core::jsonrpc::Notification;
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport, TransportError};
use serde_json::json;

/// A fake that forgets `sess-1` once `gone` is set; `tools/call` hangs
/// after a priming event and a progress notification.
async fn forgetful(gone: Arc<AtomicBool>) -> Fake {
    legacy_fake("2025-11-25", move |seen| {
        if seen.is_rpc("initialize") {
            return None;
        }
        if gone.load(Ordering::SeqCst) && seen.header("mcp-session-id") == Some("sess-1") {
            return Some(status_json(
                StatusCode::NOT_FOUND,
                &json!({"jsonrpc": "2.0", "error": {"code": -32001, "message": "Session not found"}}),
            ));
        }
        if seen.is_rpc("tools/call") {
            let progress = notification("notifications/progress", json!({"progressToken": "t", "progress": 1}));
            return Some(sse(vec![priming("s0", Some(50)), event(Some("s1"), None, &progress)], Ending::Hang, None));
        }
        None
    })
    .await
}

// (h) 404 → SessionExpired for the request that got it and for the
// in-flight ones; the next call starts a new session.
#[tokio::test]
async fn a_404_expires_the_session_and_the_next_call_starts_a_new_one() {
    let gone = Arc::new(AtomicBool::new(false));
    let fake = forgetful(gone.clone()).await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    assert_eq!(client.session_id().as_deref(), Some("sess-1"));

    let mut in_flight = client
        .request("tools/call", None, RequestOptions::default())
        .await
        .unwrap();
    assert!(matches!(
        within("first", in_flight.next()).await,
        Some(Ok(StreamEvent::Notification(_)))
    ));

    gone.store(true, Ordering::SeqCst);
    let err = client
        .request("tools/list", None, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransportError::SessionExpired { session_id } if session_id == "sess-1"),
        "{err:?}"
    );
    assert!(client.session_lost());
    let err = within("in-flight", in_flight.next())
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&err, TransportError::SessionExpired { session_id } if session_id == "sess-1"),
        "{err:?}"
    );
    assert!(within("end", in_flight.next()).await.is_none());
    drop(in_flight);

    // Nothing was re-sent and nothing was cancelled in the dead session.
    assert_eq!(fake.seen_where(|s| s.is_rpc("tools/list")).len(), 1);
    assert_eq!(fake.seen_where(|s| s.is_rpc("initialize")).len(), 1);

    let response = answer(&client, "tools/list", None).await.unwrap();
    assert!(!response.is_error());
    assert_eq!(client.session_id().as_deref(), Some("sess-2"));
    assert!(!client.session_lost());

    let inits = fake.seen_where(|s| s.is_rpc("initialize"));
    assert_eq!(inits.len(), 2);
    assert_eq!(
        inits[1].header("mcp-session-id"),
        None,
        "a new initialize carries no session id"
    );
    let lists = fake.seen_where(|s| s.is_rpc("tools/list"));
    assert_eq!(lists[1].header("mcp-session-id"), Some("sess-2"));
    let initialized = fake.seen_where(|s| s.is_rpc("notifications/initialized"));
    assert_eq!(initialized.len(), 2);
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert!(
        fake.seen_where(|s| s.is_rpc("notifications/cancelled"))
            .is_empty()
    );
}

#[tokio::test]
async fn a_404_on_the_resumption_get_is_session_expired() {
    let fake = legacy_fake("2025-11-25", |seen| {
        if seen.is_rpc("tools/call") {
            return Some(sse(vec![priming("q0", Some(5))], Ending::Eof, None));
        }
        seen.is_get().then(|| status(StatusCode::NOT_FOUND, ""))
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    let stream = client
        .request("tools/call", None, RequestOptions::default())
        .await
        .unwrap();
    let err = within("response", stream.response()).await.unwrap_err();
    assert!(
        matches!(err, TransportError::SessionExpired { .. }),
        "{err:?}"
    );
    assert!(client.session_lost());
}

#[tokio::test]
async fn a_404_on_a_notification_expires_the_session_too() {
    let gone = Arc::new(AtomicBool::new(false));
    let fake = forgetful(gone.clone()).await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    gone.store(true, Ordering::SeqCst);
    let note = || Notification::new::<()>("notifications/roots/list_changed", None).unwrap();
    let err = client.notify(note()).await.unwrap_err();
    assert!(
        matches!(err, TransportError::SessionExpired { .. }),
        "{err:?}"
    );
    client.notify(note()).await.unwrap();
    assert_eq!(client.session_id().as_deref(), Some("sess-2"));
}

#[tokio::test]
async fn a_404_without_a_session_is_an_ordinary_http_error() {
    let fake = legacy_fake("2025-11-25", |seen| {
        if seen.is_rpc("initialize") {
            // No MCP-Session-Id: a session-less server.
            return Some(json_ok(&init_result(seen.rpc_id().unwrap(), "2025-11-25")));
        }
        seen.is_rpc("tools/call")
            .then(|| status(StatusCode::NOT_FOUND, "no such endpoint"))
    })
    .await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    assert_eq!(client.session_id(), None);
    let err = client
        .request("tools/call", None, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransportError::Http { status: 404, message, .. } if message == "no such endpoint"),
        "{err:?}"
    );
    assert!(!client.session_lost());
    assert!(
        fake.seen()
            .iter()
            .all(|s| s.header("mcp-session-id").is_none())
    );
    // Closing a session-less client sends no DELETE.
    client.close().await.unwrap();
    assert!(
        fake.seen_where(|s| s.method == http::Method::DELETE)
            .is_empty()
    );
}
