//! Sessions shared between instances (`cluster.rs`): two servers, A and B,
//! over one set of in-memory stores (`server_common::cluster::Stores`).
//! Each test sends each exchange to the instance it names. Here: the
//! session record — adoption, what a record B cannot serve gets, the
//! session store out of reach or full, expiry on the shared clock, and
//! each case of the sweep. Requests and streams across instances are in
//! `server_cluster_requests.rs`.
//!
//! The same behaviours over a real Redis, through a balancer, are in
//! `integration-tests`' `cluster*.rs`; these run in this package so that
//! the mutation runs of `cluster.rs` see them (`scripts/mutants.sh`).

mod server_common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::event_id::SessionTag;
use mcp_transport_core::handler::PrincipalFn;
use mcp_transport_core::session_store::{MemorySessionStoreConfig, SessionStore};
use serde_json::{Value, json};
use server_common::cluster::Stores;
use server_common::*;

/// A valid session tag (the event log's key of a session) no test
/// session has.
fn a_tag() -> String {
    SessionTag::from_u64(7).to_string()
}

/// A `ping` in `s` on `t`: the HTTP status.
async fn ping(t: &TestServer, s: &Session) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "ping"});
    t.post_in(s)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The one JSON-RPC response of `resp` (JSON or SSE).
async fn answer(resp: reqwest::Response) -> Value {
    if content_type(&resp) == "application/json" {
        return resp.json().await.unwrap();
    }
    let (recs, _) = read_all(resp).await;
    messages(&recs)
        .into_iter()
        .find(|m| m.get("result").is_some() || m.get("error").is_some())
        .expect("a response")
}

/// The `client` tool's answer in `s` on `t`.
async fn client_seen(t: &TestServer, s: &Session) -> Value {
    let resp = t.call(s, 5, "client", json!({})).await;
    assert_eq!(resp.status(), 200);
    answer(resp).await["result"].clone()
}

/// The message of an HTTP error response.
async fn error_message(resp: reqwest::Response) -> String {
    error_body(resp).await["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// An `echo` call in `s` on `t`, refused with `status`: the error's
/// message.
async fn refused(t: &TestServer, s: &Session, status: u16) -> String {
    let resp = t.call(s, 1, "echo", json!({})).await;
    assert_eq!(resp.status(), status);
    error_message(resp).await
}

/// An `initialize` of 2025-11-25 from client `name` on `t`, refused with
/// `status`: the error's message.
async fn init_refused(t: &TestServer, name: &str, status: u16) -> String {
    let resp = t
        .post()
        .body(init_body(name).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), status);
    error_message(resp).await
}

/// An `initialize` body of 2025-11-25 from client `name`.
fn init_body(name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": name, "version": "1"}}})
}

/// Session `id` of 2025-11-25 as a test names it.
fn named(id: &str) -> Session {
    Session {
        id: id.to_owned(),
        version: "2025-11-25".into(),
        result: Value::Null,
    }
}

/// A session created on A serves on B: B adopts the stored record with
/// the client's description and capabilities and the negotiated version,
/// which B then enforces (*Transports*, "Protocol Version Header": a
/// version other than the negotiated one is 400).
#[tokio::test]
async fn a_session_created_on_a_serves_on_b_as_negotiated() {
    let stores = Stores::new();
    let (a, b) = stores.pair().await;
    let s = a.init_with("2025-06-18", json!({"roots": {}})).await;
    let seen = client_seen(&b, &s).await;
    assert_eq!(seen["info"]["name"], "test-client", "{seen}");
    assert_eq!(seen["capabilities"], json!({"roots": {}}), "{seen}");
    let other = Session {
        version: "2025-11-25".into(),
        ..s.clone()
    };
    assert_eq!(ping(&b, &other).await, 400);
    assert_eq!(ping(&b, &s).await, 200);
}

/// The creator's principal is stored with the session: on B another
/// principal's request naming it is 404 like on A, and the creator's goes
/// through.
#[tokio::test]
async fn b_binds_an_adopted_session_to_its_creators_principal() {
    let by_header: PrincipalFn = Arc::new(|parts: &http::request::Parts| {
        parts
            .headers
            .get("x-user")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    let stores = Stores::new();
    let a = start(stores.config().with_principal(by_header.clone())).await;
    let b = start(stores.config().with_principal(by_header)).await;
    let resp = a
        .post()
        .header("x-user", "alice")
        .body(init_body("c").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let s = named(resp.headers()["mcp-session-id"].to_str().unwrap());
    let ping_as = |user: &'static str| {
        b.post_in(&s)
            .header("x-user", user)
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .send()
    };
    assert_eq!(ping_as("mallory").await.unwrap().status(), 404);
    assert_eq!(ping_as("alice").await.unwrap().status(), 200);
}

/// A record B cannot serve is a 500 naming why, and B goes on serving: a
/// version B does not serve, a malformed event-log tag.
#[tokio::test]
async fn a_record_b_cannot_serve_is_a_500_naming_why() {
    let stores = Stores::new();
    let a = start(stores.config()).await;
    let b = start(
        stores
            .config()
            .with_versions([ProtocolVersion::V2025_11_25]),
    )
    .await;
    let old = a.init("2025-06-18").await;
    let message = refused(&b, &old, 500).await;
    assert!(
        message.contains("2025-06-18") && message.contains("does not serve"),
        "{message}"
    );
    stores.put("bad-tag", "2025-11-25", "not a tag", "{}").await;
    let message = refused(&b, &named("bad-tag"), 500).await;
    assert!(message.contains("malformed tag"), "{message}");
    let fine = a.init("2025-11-25").await;
    assert_eq!(ping(&b, &fine).await, 200);
}

/// A stored record whose capabilities are not an object (written by
/// something else) is adopted with none: the client declared nothing.
#[tokio::test]
async fn stored_capabilities_that_are_not_an_object_count_as_none() {
    let stores = Stores::new();
    let b = start(stores.config()).await;
    stores
        .put("odd-caps", "2025-11-25", &a_tag(), "[1,2]")
        .await;
    let seen = client_seen(&b, &named("odd-caps")).await;
    assert_eq!(seen["capabilities"], json!({}), "{seen}");
    assert_eq!(seen["info"]["name"], "elsewhere", "{seen}");
}

/// B's own cap on sessions counts the ones it adopts: past it, a request
/// naming a session B does not hold yet is 503 with the reason (the
/// session lives on, on A).
#[tokio::test]
async fn adopting_past_b_s_own_cap_is_a_503() {
    let stores = Stores::new();
    let a = start(stores.config()).await;
    let b = start(stores.config().with_max_sessions(1)).await;
    let first = a.init("2025-11-25").await;
    let second = a.init("2025-11-25").await;
    assert_eq!(ping(&b, &first).await, 200);
    let message = refused(&b, &second, 503).await;
    assert!(message.contains("this instance's limit of 1"), "{message}");
    assert_eq!(ping(&a, &second).await, 200);
}

/// A session deleted through A is 404 on B at its next request
/// (*Transports*, "Session Management"), and B's copy ends with it: the
/// GET stream B held open for it ends.
#[tokio::test]
async fn a_session_deleted_through_a_is_404_on_b_and_b_s_copy_ends() {
    let stores = Stores::new();
    let (a, b) = stores.pair().await;
    let s = a.init("2025-06-18").await;
    let get = b.get_in(&s).send().await.unwrap();
    assert_eq!(get.status(), 200);
    let delete = a
        .http
        .delete(&a.url)
        .header("mcp-session-id", &s.id)
        .header("mcp-protocol-version", &s.version)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), 204);
    assert_eq!(ping(&b, &s).await, 404);
    let (recs, _) = within("B's GET stream's end", read_all(get)).await;
    assert!(messages(&recs).is_empty(), "{recs:?}");
}

/// With the session store out of reach, `initialize` and every request of
/// a session are 503 naming the cause (the client may retry); once it is
/// back, the same session serves again.
#[tokio::test]
async fn a_session_store_out_of_reach_is_a_503_until_it_is_back() {
    let stores = Stores::new();
    let (a, b) = stores.pair().await;
    let s = a.init("2025-11-25").await;
    stores.sessions.down.store(true, Ordering::SeqCst);
    let message = init_refused(&a, "c", 503).await;
    assert!(
        message.contains("session store is unavailable") && message.contains("connection refused"),
        "{message}"
    );
    for t in [&a, &b] {
        let message = refused(t, &s, 503).await;
        assert!(message.contains("connection refused"), "{message}");
    }
    stores.sessions.down.store(false, Ordering::SeqCst);
    assert_eq!(ping(&b, &s).await, 200);
    assert_eq!(ping(&a, &s).await, 200);
}

/// The store's own limits: past its cap on sessions `initialize` is 503
/// with the limit; a record larger than it keeps is 500 (nothing a retry
/// fixes).
#[tokio::test]
async fn the_session_store_s_limits_are_a_503_and_a_500() {
    let stores = Stores::limited(MemorySessionStoreConfig {
        max_sessions: 1,
        max_record_bytes: 512,
    });
    let a = start(stores.config()).await;
    let message = init_refused(&a, &"x".repeat(1024), 500).await;
    assert!(message.contains("cannot store the session"), "{message}");
    a.init("2025-11-25").await;
    let message = init_refused(&a, "c", 503).await;
    assert!(message.contains("limit of 1 sessions"), "{message}");
}

/// Expiry is the store's, on the wall clock every instance shares: a
/// session nobody used for longer than its idle timeout is 404 on an
/// instance that never held it too (*Transports*, "Session Management").
#[tokio::test]
async fn a_session_idle_past_its_timeout_is_404_everywhere() {
    let stores = Stores::new();
    let a = stores.start_idle(200).await;
    let b = start(stores.config()).await;
    let s = a.init("2025-06-18").await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(ping(&b, &s).await, 404);
    assert_eq!(b.server.session_count(), 0);
}

/// B's idle copy of a session still alive in the store goes at B's sweep
/// without ending the session: A still serves it, and B adopts it again.
#[tokio::test]
async fn b_s_idle_copy_goes_without_ending_the_session() {
    let stores = Stores::new();
    let a = start(stores.config()).await;
    let b = stores.start_idle(200).await;
    let s = a.init("2025-06-18").await;
    assert_eq!(ping(&b, &s).await, 200);
    assert_eq!(b.server.session_count(), 1);
    eventually("B's sweep of its idle copy", || {
        b.server.session_count() == 0
    })
    .await;
    assert_eq!(ping(&a, &s).await, 200);
    assert_eq!(ping(&b, &s).await, 200);
    assert_eq!(b.server.session_count(), 1);
}

/// A session gone from the store (expired there, or deleted by an
/// instance that did not hold it) ends B's idle copy at B's sweep, with no
/// request to B.
#[tokio::test]
async fn a_session_gone_from_the_store_ends_b_s_copy_at_the_sweep() {
    let stores = Stores::new();
    let b = stores.start_idle(200).await;
    let a = start(stores.config()).await;
    let s = a.init("2025-06-18").await;
    assert_eq!(ping(&b, &s).await, 200);
    assert!(stores.sessions.inner.remove(&s.id).await.unwrap());
    eventually("B's sweep of the gone session", || {
        b.server.session_count() == 0
    })
    .await;
    assert_eq!(ping(&b, &s).await, 404);
}

/// A request running on B keeps the stored session alive past its idle
/// timeout (B's sweep touches the record of a busy session): after it,
/// the session still serves on A.
#[tokio::test]
async fn a_long_request_on_b_keeps_the_session_alive_in_the_store() {
    let stores = Stores::new();
    let (a, b) = (stores.start_idle(400).await, stores.start_idle(400).await);
    let s = a.init("2025-06-18").await;
    let resp = b.call(&s, 1, "slow", json!({"ms": 1500})).await;
    assert_eq!(answer(resp).await["result"]["slept"], 1500);
    assert_eq!(ping(&a, &s).await, 200);
}

/// A request running on B ends when its session leaves the store: B's
/// sweep finds the busy session gone, ends its copy, and the request is
/// cancelled there.
#[tokio::test]
async fn a_request_running_on_b_ends_when_its_session_leaves_the_store() {
    let stores = Stores::new();
    let a = start(stores.config()).await;
    let b = stores.start_idle(200).await;
    let s = a.init("2025-06-18").await;
    let mut running = SseReader::new(b.call(&s, 1, "slow", json!({"ms": 60_000})).await);
    eventually("the request running on B", || {
        b.handler.stats().started.load(Ordering::SeqCst) == 1
    })
    .await;
    assert!(stores.sessions.inner.remove(&s.id).await.unwrap());
    let rest = within("the request's stream's end", running.rest()).await;
    assert!(messages(&rest).is_empty(), "{rest:?}");
    eventually("the request's cancellation on B", || {
        b.handler.stats().cancellations.load(Ordering::SeqCst) == 1
    })
    .await;
}
