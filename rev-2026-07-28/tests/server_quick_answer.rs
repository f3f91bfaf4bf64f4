//! A handler that answers at once: the POST has its answer without waiting
//! for another task (`request::serve` polls the request once before
//! spawning it), as JSON and as a one-event SSE stream. Over a socket that
//! saves the spawn and a wake-up across threads per request
//! (docs/PERFORMANCE.md).
//!
//! Deterministic: tokio's current-thread runtime, and the POST's future
//! polled once with `now_or_never` — a spawned task cannot have run.

mod server_common;

use std::sync::Arc;

use axum::body::Body;
use futures::FutureExt;
use http::{Request, StatusCode};
use mcp_rev_2026_07_28::server::{ModernConfig, ModernServer};
use mcp_test_support::TestHandler;
use mcp_test_support::handler::tools;
use serde_json::json;
use server_common::{std_headers, tool};
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
    let body = tool(1, "echo", json!({ "n": 5 }));
    let mut req = Request::post("/")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in std_headers(&body) {
        req = req.header(name, value);
    }
    let req = req.body(Body::from(body.to_string())).unwrap();
    let response = router
        .oneshot(req)
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
