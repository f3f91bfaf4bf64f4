//! Sessions, negotiation, the protocol version header, Origin/Host checks,
//! idle expiry and the session cap.

mod server_common;

use std::time::Duration;

use axum::body::Body;
use mcp_session_engine::server::LegacyServer;
use mcp_transport_core::ProtocolVersion;
use serde_json::{Value, json};
use server_common::*;

fn init_body(version: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
           "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
    .to_string()
}

#[tokio::test]
async fn initialize_answers_json_with_a_strong_session_id() {
    let t = start(config()).await;
    let resp = t.post().body(init_body("2025-11-25")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(sid.len(), 32);
    assert!(sid.bytes().all(|b| b.is_ascii_hexdigit()));
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["id"], 1);
    let r = &v["result"];
    assert_eq!(r["protocolVersion"], "2025-11-25");
    assert_eq!(r["serverInfo"]["name"], "test-server");
    assert_eq!(r["capabilities"]["tools"], json!({}));
    assert_eq!(r["instructions"], "for tests");
    // Every session gets its own id.
    let other = t.init("2025-11-25").await;
    assert_ne!(other.id, sid);
    assert_eq!(t.server.session_count(), 2);
}

#[tokio::test]
async fn negotiation_answers_the_requested_or_the_latest_version() {
    let t = start(config().with_versions([
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ]))
    .await;
    for (asked, got) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2025-11-25", "2025-11-25"),
        ("2024-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let s = t.init(asked).await;
        assert_eq!(s.version, got, "asked {asked}");
    }
    // Missing params: an error response for the request, no session.
    let resp = t
        .post()
        .body(r#"{"jsonrpc":"2.0","id":7,"method":"initialize"}"#)
        .send()
        .await
        .unwrap();
    assert!(!resp.headers().contains_key("mcp-session-id"));
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["id"], 7);
    assert_eq!(v["error"]["code"], -32602);
}

#[tokio::test]
async fn session_id_rules() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    // initialize must not carry a session id.
    let resp = t
        .post()
        .header("mcp-session-id", &s.id)
        .body(init_body("2025-11-25"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert!(
        error_body(resp).await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize")
    );
    // Other messages need one.
    let resp = t
        .post()
        .body(call_body(1, "echo", json!({})))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert!(
        error_body(resp).await["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MCP-Session-Id")
    );
    let resp = t
        .http
        .get(&t.url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    // Unknown: 404.
    let ghost = Session {
        id: "0123456789abcdef0123456789abcdef".into(),
        ..s.clone()
    };
    let resp = t.call(&ghost, 1, "echo", json!({})).await;
    assert_eq!(resp.status(), 404);
    error_body(resp).await;
    let resp = t.get_in(&ghost).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    // The real session still works.
    assert_eq!(t.call(&s, 2, "echo", json!({})).await.status(), 200);
}

#[tokio::test]
async fn delete_ends_the_session_then_404() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let resp = t
        .http
        .delete(&t.url)
        .header("mcp-session-id", &s.id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    assert_eq!(t.server.session_count(), 0);
    assert_eq!(t.call(&s, 1, "echo", json!({})).await.status(), 404);
    let resp = t
        .http
        .delete(&t.url)
        .header("mcp-session-id", &s.id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn delete_can_be_refused_with_405() {
    let t = start(config().with_allow_delete(false)).await;
    let s = t.init("2025-11-25").await;
    let resp = t
        .http
        .delete(&t.url)
        .header("mcp-session-id", &s.id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    assert!(resp.headers().contains_key("allow"));
    assert_eq!(t.call(&s, 1, "echo", json!({})).await.status(), 200);
}

#[tokio::test]
async fn a_delete_ends_open_streams_and_running_requests() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let mut running = SseReader::new(t.call(&s, 1, "slow", json!({"ms": 3000})).await);
    assert!(running.next().await.unwrap().is_priming());
    // A standalone stream, which no request's end would close.
    let mut get = SseReader::new(t.get_in(&s).send().await.unwrap());
    assert!(get.next().await.unwrap().is_priming());
    t.http
        .delete(&t.url)
        .header("mcp-session-id", &s.id)
        .send()
        .await
        .unwrap();
    let rest = running.rest().await;
    assert!(messages(&rest).is_empty(), "{rest:?}");
    let rest = within("the GET stream's end", get.rest()).await;
    assert!(messages(&rest).is_empty(), "{rest:?}");
    eventually("the cancellation", || {
        t.handler
            .cancellations
            .load(std::sync::atomic::Ordering::SeqCst)
            == 1
    })
    .await;
}

#[tokio::test]
async fn idle_sessions_expire() {
    let t = start(config().with_session_idle_timeout(Duration::from_millis(100))).await;
    let idle = t.init("2025-11-25").await;
    let busy = t.init("2025-11-25").await;
    // A running request keeps its session alive past the timeout.
    let running = t.call(&busy, 1, "slow", json!({"ms": 400})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(t.call(&idle, 1, "echo", json!({})).await.status(), 404);
    let (recs, _) = read_all(running).await;
    assert!(is_response(messages(&recs).last().unwrap(), 1));
    assert_eq!(t.call(&busy, 2, "echo", json!({})).await.status(), 200);
    // The sweeper removes idle sessions without any request touching them.
    eventually("no session left", || t.server.session_count() == 0).await;
}

#[tokio::test]
async fn the_session_cap_is_503_with_the_reason() {
    let t = start(config().with_max_sessions(2)).await;
    t.init("2025-11-25").await;
    let s2 = t.init("2025-11-25").await;
    let resp = t.post().body(init_body("2025-11-25")).send().await.unwrap();
    assert_eq!(resp.status(), 503);
    let v = error_body(resp).await;
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit of 2 sessions")
    );
    // Ending one makes room.
    assert!(t.server.terminate_session(&s2.id).await);
    t.init("2025-11-25").await;
    assert_eq!(t.server.terminate_all().await, 2);
    assert_eq!(t.server.session_count(), 0);
}

/// A server over a [`server_common::store::WatchedStore`], to make the
/// opening of a session's event log clash or fail.
async fn start_watched() -> (
    TestServer,
    std::sync::Arc<server_common::store::WatchedStore>,
) {
    let store = std::sync::Arc::new(server_common::store::WatchedStore::default());
    (start(config().with_event_store(store.clone())).await, store)
}

/// A session's event-log tag is random; one already in the store (a
/// collision) is replaced by a fresh one, up to three times, and then the
/// `initialize` fails with a 500 naming the cause instead of trying
/// forever.
#[tokio::test]
async fn a_tag_collision_is_retried_three_times() {
    let (t, store) = start_watched().await;
    store.clash_tags(3);
    t.init("2025-11-25").await;
    store.clash_tags(4);
    let resp = t.post().body(init_body("2025-11-25")).send().await.unwrap();
    assert_eq!(resp.status(), 500);
    let message = error_body(resp).await["error"]["message"].to_string();
    assert!(
        message.contains("cannot open the session's event log") && message.contains("already open"),
        "{message}"
    );
    assert_eq!(t.server.session_count(), 1);
}

/// The event store out of reach at `initialize` is a 503 (the client may
/// retry) whose message names the cause under the store's error.
#[tokio::test]
async fn an_event_store_out_of_reach_at_initialize_is_a_503_naming_the_cause() {
    let (t, store) = start_watched().await;
    store.fail_sessions();
    let resp = t.post().body(init_body("2025-11-25")).send().await.unwrap();
    assert_eq!(resp.status(), 503);
    let message = error_body(resp).await["error"]["message"].to_string();
    assert!(
        message.contains("event log is unavailable") && message.contains("connection refused"),
        "{message}"
    );
    assert_eq!(t.server.session_count(), 0);
}

#[tokio::test]
async fn protocol_version_header_rules() {
    let t =
        start(config().with_versions([ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25]))
            .await;
    let s = t.init("2025-11-25").await;
    let with = |v: &str| {
        t.post()
            .header("mcp-session-id", &s.id)
            .header("mcp-protocol-version", v)
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
    };
    for (v, says) in [
        ("banana", "malformed"),
        ("2025-3-26", "malformed"),
        ("2025-03-26", "unsupported"),
        ("2099-01-01", "unsupported"),
    ] {
        let resp = with(v).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{v}");
        let body = error_body(resp).await;
        let msg = body["error"]["message"].as_str().unwrap();
        assert!(msg.contains(says) && msg.contains(v), "{v}: {msg}");
    }
    // Another served version is not this session's: 400 (issue 13, item 5).
    let resp = with("2025-06-18").send().await.unwrap();
    assert_eq!(resp.status(), 400);
    let msg = error_body(resp).await["error"]["message"].to_string();
    assert!(msg.contains("not this session's"), "{msg}");
    assert_eq!(with("2025-11-25").send().await.unwrap().status(), 200);
    // Two headers that differ: 400; the same value twice is served.
    let twice = |a: &str, b: &str| {
        t.post()
            .header("mcp-session-id", &s.id)
            .header("mcp-protocol-version", a)
            .header("mcp-protocol-version", b)
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
    };
    let resp = twice("2025-11-25", "2025-06-18").send().await.unwrap();
    assert_eq!(resp.status(), 400);
    let msg = error_body(resp).await["error"]["message"].to_string();
    assert!(msg.contains("differ"), "{msg}");
    let same = twice("2025-11-25", "2025-11-25").send().await.unwrap();
    assert_eq!(same.status(), 200);
    // None: served at the session's version.
    let resp = t
        .post()
        .header("mcp-session-id", &s.id)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    // GET and DELETE check it too.
    let resp = t
        .http
        .get(&t.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &s.id)
        .header("mcp-protocol-version", "nope")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
}

#[tokio::test]
async fn origin_must_be_allowed() {
    let t = start(config()).await;
    for origin in [
        "http://evil.example.com",
        "null",
        "http://localhost.evil.com",
    ] {
        let resp = t
            .post()
            .header("origin", origin)
            .body(init_body("2025-11-25"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 403, "{origin}");
        let v = error_body(resp).await;
        assert!(v["error"]["message"].as_str().unwrap().contains("Origin"));
    }
    for origin in [
        "http://localhost:5173",
        "http://127.0.0.1",
        "https://[::1]:8443",
    ] {
        let resp = t
            .post()
            .header("origin", origin)
            .body(init_body("2025-11-25"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{origin}");
    }
    let t =
        start(config().with_allowed_origins(Some(vec!["https://app.example.com".into()]))).await;
    let ok = t
        .post()
        .header("origin", "https://app.example.com")
        .body(init_body("2025-11-25"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let bad = t
        .post()
        .header("origin", "http://localhost")
        .body(init_body("2025-11-25"))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 403);
}

#[tokio::test]
async fn host_must_be_allowed() {
    let t = start(config()).await;
    let resp = t
        .post()
        .header("host", "evil.example.com")
        .body(init_body("2025-11-25"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    let v = error_body(resp).await;
    assert!(v["error"]["message"].as_str().unwrap().contains("Host"));
    let resp = t
        .post()
        .header("host", format!("localhost:{}", t.port))
        .body(init_body("2025-11-25"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    // A configured list replaces the loopback default.
    let t = start(config().with_allowed_hosts(Some(vec!["mcp.example.com".into()]))).await;
    let ok = t
        .post()
        .header("host", "mcp.example.com")
        .body(init_body("2025-11-25"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let bad = t.post().body(init_body("2025-11-25")).send().await.unwrap();
    assert_eq!(bad.status(), 403, "127.0.0.1 is not in the configured list");
}

#[tokio::test]
async fn set_level_filters_log_messages() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    // Before setLevel: everything (Debug and up).
    let (recs, _) = read_all(t.call(&s, 1, "logs", json!({})).await).await;
    let levels: Vec<Value> = messages(&recs)
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].clone())
        .collect();
    assert_eq!(levels, [json!("debug"), json!("info"), json!("error")]);
    let resp = t
        .post_in(&s)
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}"#)
        .send()
        .await
        .unwrap();
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["result"], json!({}));
    let (recs, _) = read_all(t.call(&s, 3, "logs", json!({})).await).await;
    let levels: Vec<Value> = messages(&recs)
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].clone())
        .collect();
    assert_eq!(levels, [json!("error")]);
    // A bad level is an error response, and the level is unchanged.
    let resp = t
        .post_in(&s)
        .body(r#"{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"loud"}}"#)
        .send()
        .await
        .unwrap();
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32602);
}

#[tokio::test]
async fn handle_serves_requests_directly_and_checks_missing_accept() {
    let server = LegacyServer::new(std::sync::Arc::new(test_handler()), config());
    let req = http::Request::post("/")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Body::from(init_body("2025-11-25")))
        .unwrap();
    let resp = server.handle(req).await;
    assert_eq!(resp.status(), 406, "no Accept header at all");
    let req = http::Request::post("/")
        .header("host", "localhost")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(Body::from(init_body("2025-11-25")))
        .unwrap();
    let resp = server.handle(req).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(server.session_count(), 1);
    // No Host at all is refused too.
    let req = http::Request::post("/")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(Body::from(init_body("2025-11-25")))
        .unwrap();
    assert_eq!(server.handle(req).await.status(), 403);
}

#[tokio::test]
async fn route_mounts_at_any_path() {
    let server = LegacyServer::new(std::sync::Arc::new(test_handler()), config());
    let app = server.route("/custom/endpoint");
    let running = mcp_test_support::TestServer::serve(app).await;
    let http = reqwest::Client::new();
    let resp = http
        .post(format!("http://{}/custom/endpoint", running.addr()))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(init_body("2025-11-25"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

/// Issue 13 (2): DELETE gives what the session retained back to the
/// store's byte budget, by the store's own accounting.
#[tokio::test]
async fn delete_releases_the_sessions_retained_bytes() {
    use mcp_transport_core::event_log::MemoryEventStore;
    let store = std::sync::Arc::new(MemoryEventStore::default());
    let t = start(config().with_event_store(store.clone())).await;
    let s = t.init("2025-11-25").await;
    let other = t.init("2025-11-25").await;
    for (session, n) in [(&s, 5), (&other, 3)] {
        let (recs, _) = read_all(t.call(session, 1, "progress", json!({"n": n})).await).await;
        assert!(messages(&recs).len() > n, "{recs:?}");
    }
    let both = store.retained_bytes();
    assert!(both > 0);
    let resp = t
        .http
        .delete(&t.url)
        .header("mcp-session-id", &s.id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    let left = store.retained_bytes();
    assert!(left > 0 && left < both, "{left} of {both}");
    let resp = t
        .http
        .delete(&t.url)
        .header("mcp-session-id", &other.id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
    assert_eq!(store.retained_bytes(), 0);
    assert_eq!(store.retained_events(), 0);
}
