//! Sessions bound to the principal that created them
//! (`ServerConfig::principal`): any request naming the session from another
//! principal, or from none, is answered 404 as if the session did not
//! exist, and the session goes on for its own principal.

mod server_common;

use std::sync::Arc;

use mcp_transport_core::handler::PrincipalFn;
use serde_json::{Value, json};
use server_common::*;

/// The principal is the `x-user` header (what an auth layer would have
/// put in the request's extensions).
fn by_header() -> PrincipalFn {
    Arc::new(|parts: &http::request::Parts| {
        parts
            .headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    })
}

/// `initialize` as `user`; the session id.
async fn init_as(t: &TestServer, user: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    let resp = t
        .post()
        .header("x-user", user)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

fn with_user(r: reqwest::RequestBuilder, sid: &str, user: Option<&str>) -> reqwest::RequestBuilder {
    let r = r
        .header("mcp-session-id", sid)
        .header("mcp-protocol-version", "2025-11-25");
    match user {
        Some(u) => r.header("x-user", u),
        None => r,
    }
}

/// A `ping` in session `sid` as `user`: the HTTP status.
async fn ping_as(t: &TestServer, sid: &str, user: Option<&str>) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"});
    with_user(t.post(), sid, user)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn another_principal_gets_404_for_every_kind_of_request() {
    let t = start(config().with_principal(by_header())).await;
    let sid = init_as(&t, "alice").await;
    assert_eq!(ping_as(&t, &sid, Some("alice")).await, 200);
    // POST, from another principal and from none.
    assert_eq!(ping_as(&t, &sid, Some("bob")).await, 404);
    assert_eq!(ping_as(&t, &sid, None).await, 404);
    let resp = with_user(t.post(), &sid, Some("bob"))
        .body(json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}).to_string())
        .send()
        .await
        .unwrap();
    let v: Value = resp.json().await.unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not exist"),
        "{v}"
    );
    // GET (the standalone stream) and a resume.
    let get = |u| {
        with_user(t.http.get(&t.url), &sid, u)
            .header("accept", "text/event-stream")
            .send()
    };
    assert_eq!(get(Some("bob")).await.unwrap().status(), 404);
    // DELETE from bob does not end alice's session.
    let delete = with_user(t.http.delete(&t.url), &sid, Some("bob"))
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 404);
    assert_eq!(ping_as(&t, &sid, Some("alice")).await, 200);
    let delete = with_user(t.http.delete(&t.url), &sid, Some("alice"))
        .send()
        .await
        .unwrap();
    assert!(delete.status().is_success(), "{}", delete.status());
    assert_eq!(ping_as(&t, &sid, Some("alice")).await, 404);
}

#[tokio::test]
async fn an_anonymous_session_is_not_anyone_elses_either() {
    let t = start(config().with_principal(by_header())).await;
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"}}});
    let resp = t.post().body(body.to_string()).send().await.unwrap();
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(ping_as(&t, &sid, None).await, 200);
    assert_eq!(ping_as(&t, &sid, Some("mallory")).await, 404);
}

#[tokio::test]
async fn without_a_principal_function_sessions_are_not_bound() {
    let t = start(config()).await;
    let sid = init_as(&t, "alice").await;
    assert_eq!(ping_as(&t, &sid, Some("bob")).await, 200);
}
