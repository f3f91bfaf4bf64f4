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
    post_as("2025-11-25", body, session)
}

/// A POST of `body` with `MCP-Protocol-Version: version` (in `session`
/// when given).
pub fn post_as(version: &str, body: &Value, session: Option<&str>) -> Request<Body> {
    let mut b = Request::post("/")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", version);
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    b.body(Body::from(body.to_string())).unwrap()
}

/// `initialize` and `notifications/initialized` on `server` (2025-11-25):
/// the session id.
pub async fn initialized(server: &LegacyServer) -> String {
    initialized_as(server, "2025-11-25").await
}

/// `initialize` with `version` and `notifications/initialized` on
/// `server`: the session id (the server is checked to have agreed to
/// `version`).
pub async fn initialized_as(server: &LegacyServer, version: &str) -> String {
    let init = json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": { "name": "in-memory", "version": "1" }
        }
    });
    let response = server
        .clone()
        .oneshot(post_as(version, &init, None))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    let result: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(result["result"]["protocolVersion"], version, "{result}");
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let response = server
        .clone()
        .oneshot(post_as(version, &note, Some(&id)))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    id
}

/// A `GET` of `session` (`MCP-Protocol-Version: version`) resuming after
/// `last_event_id`.
pub fn resume_as(version: &str, session: &str, last_event_id: &str) -> Request<Body> {
    Request::get("/")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", version)
        .header("mcp-session-id", session)
        .header("last-event-id", last_event_id)
        .body(Body::empty())
        .unwrap()
}

/// A response body as its frames.
pub fn frames(body: Body) -> BoxStream<'static, Bytes> {
    body.into_data_stream().map(|r| r.unwrap()).boxed()
}
