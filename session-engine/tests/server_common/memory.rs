//! A server driven in memory as a `tower::Service` (`oneshot`), for tests
//! on tokio's paused clock: the requests and an initialized session.

use axum::body::{Body, Bytes};
use futures::StreamExt;
use futures::stream::BoxStream;
use http::{Request, StatusCode};
use mcp_session_engine::server::LegacyServer;
use serde_json::{Value, json};
use tower::ServiceExt;

/// A 2025-11-25 POST of `body` (in `session` when given).
pub fn post(body: &Value, session: Option<&str>) -> Request<Body> {
    let mut b = Request::post("/")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    b.body(Body::from(body.to_string())).unwrap()
}

/// `initialize` and `notifications/initialized` on `server`: the session id.
pub async fn initialized(server: &LegacyServer) -> String {
    let init = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "in-memory", "version": "1" }
        }
    });
    let response = server.clone().oneshot(post(&init, None)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let response = server
        .clone()
        .oneshot(post(&note, Some(&id)))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    id
}

/// A response body as its frames.
pub fn frames(body: Body) -> BoxStream<'static, Bytes> {
    body.into_data_stream().map(|r| r.unwrap()).boxed()
}
