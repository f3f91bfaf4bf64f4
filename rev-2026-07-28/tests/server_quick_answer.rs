//! A handler that answers at once: the POST has its answer without waiting
//! for another task (`request::serve` polls the request once before
//! spawning it), as JSON and as a one-event SSE stream. Over a socket that
//! saves the spawn and a wake-up across threads per request
//! (docs/PERFORMANCE.md).
//!
//! Deterministic: tokio's current-thread runtime, and the POST's future
//! polled once with `now_or_never` — a spawned task cannot have run.
//!
//! The response's queue is made only when something needs it; a handler
//! that sends notifications before answering in its first poll has its
//! answer queued behind them, whether they fit the queue or not.

mod server_common;

use std::sync::Arc;

use futures::FutureExt;
use http::StatusCode;
use mcp_rev_2026_07_28::server::{ModernConfig, ModernServer};
use mcp_test_support::TestHandler;
use mcp_test_support::handler::{Call, tool_fn, tools};
use mcp_transport_core::handler::Outcome;
use serde_json::{Value, json};
use server_common::{body, memory_post as post, tool};
use tower::ServiceExt;

async fn quick(json_response: bool) -> (StatusCode, String, String) {
    let handler = TestHandler::builder("quick")
        .tool("echo", tools::echo())
        .build();
    let config = ModernConfig {
        json_response,
        ..ModernConfig::default()
    };
    let router = ModernServer::new(Arc::new(handler), config).router();
    let response = router
        .oneshot(post(&tool(1, "echo", json!({ "n": 5 }))))
        .now_or_never()
        .expect("a quick answer is there without another task running")
        .unwrap();
    let status = response.status();
    let media = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, media, String::from_utf8(bytes.to_vec()).unwrap())
}

#[tokio::test(flavor = "current_thread")]
async fn a_quick_json_answer_needs_no_other_task() {
    let (status, media, body) = quick(true).await;
    assert_eq!(status, StatusCode::OK);
    assert!(media.starts_with("application/json"), "{media}");
    assert!(body.contains(r#""n":5"#), "{body}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_quick_sse_answer_needs_no_other_task() {
    let (status, media, body) = quick(false).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(media, "text/event-stream");
    assert!(body.contains(r#""n":5"#), "{body}");
}

/// `burst {n}`: sends `n` progress notifications (nothing awaited but the
/// queue), then answers `{"sent": n}`.
fn burst() -> mcp_test_support::handler::Tool {
    tool_fn(|c: Call| async move {
        let n = c.arg("n", 2);
        for i in 1..=n {
            let _ = c.cx.progress(i as f64, Some(n as f64), None).await;
        }
        Outcome::json(&json!({ "sent": n }))
    })
}

/// Every notification, then the answer, in order: when they fit the queue
/// (the answer queued behind them at once), when they fill it exactly (the
/// answer sent by a task once there is room), when they do not fit (the
/// handler spawned, waiting for room), in both response modes.
#[tokio::test(flavor = "current_thread")]
async fn notifications_sent_in_the_first_poll_come_before_the_answer() {
    for json_response in [false, true] {
        for stream_queue in [1, 3, 8] {
            let handler = TestHandler::builder("burst").tool("burst", burst()).build();
            let config = ModernConfig {
                json_response,
                stream_queue,
                ..ModernConfig::default()
            };
            let router = ModernServer::new(Arc::new(handler), config).router();
            let call = body(
                1,
                "tools/call",
                json!({"name": "burst", "arguments": {"n": 3}, "_meta": {"progressToken": "p"}}),
                json!({}),
            );
            let response = router.oneshot(post(&call)).await.unwrap();
            let case = format!("json_response {json_response}, stream_queue {stream_queue}");
            assert_eq!(response.status(), StatusCode::OK, "{case}");
            assert_eq!(
                response.headers()["content-type"],
                "text/event-stream",
                "{case}"
            );
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
                .await
                .unwrap();
            let events: Vec<Value> = String::from_utf8(bytes.to_vec())
                .unwrap()
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| serde_json::from_str(d.trim()).unwrap())
                .collect();
            assert_eq!(events.len(), 4, "{case}: {events:?}");
            for (i, e) in events[..3].iter().enumerate() {
                assert_eq!(e["method"], "notifications/progress", "{case}");
                assert_eq!(e["params"]["progress"], (i + 1) as f64, "{case}");
            }
            assert_eq!(events[3]["result"]["sent"], 3, "{case}: {events:?}");
        }
    }
}

/// `handle_parsed`: the message a dispatcher in front read
/// (`jsonrpc::parse_single`, with its params' index) is served as the
/// POST's, and neither the body nor its params are read again (here the
/// two differ, so the answer shows which one was served).
#[tokio::test(flavor = "current_thread")]
async fn a_message_read_in_front_is_served_with_its_params_index() {
    let handler = TestHandler::builder("quick")
        .tool("echo", tools::echo())
        .build();
    let config = ModernConfig {
        json_response: true,
        ..ModernConfig::default()
    };
    let server = ModernServer::new(Arc::new(handler), config);
    let read_in_front = tool(1, "echo", json!({ "n": 42, "m": [1, {"k": "}"}] }));
    let parsed =
        mcp_transport_core::jsonrpc::parse_single(read_in_front.to_string().as_bytes()).unwrap();
    let response = server
        .handle_parsed(post(&tool(1, "echo", json!({ "n": 5 }))), Some(parsed))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    assert!(text.contains(r#""n":42"#), "{text}");
    assert!(!text.contains(r#""n":5"#), "{text}");
}
