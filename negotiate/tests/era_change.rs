//! A server that changes era, or restarts, under a live connection that
//! came through the era cache: the connection's first failing request
//! makes the cache forget the origin (2026-07-28 *Versioning*: re-probe
//! "if the cached assumption later fails").

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::Request;
use axum::routing::{get, post};
use http::StatusCode;
use mcp_negotiate::client::{EraCache, NegotiateConfig, connect, origin_of};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_test_support::TestServer;
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::{RequestOptions, Transport, TransportError};
use serde_json::json;
use tower::ServiceExt;

/// One URL in front of several servers; every request goes to the one
/// [`Switch::to`] chose last (a redeploy behind a fixed address).
struct Switch {
    now: Arc<AtomicUsize>,
    http: TestServer,
}

impl Switch {
    async fn start(servers: Vec<Router>) -> Switch {
        let routers = Arc::new(servers);
        let now = Arc::new(AtomicUsize::new(0));
        let pick = now.clone();
        let app = Router::new().fallback(move |req: Request| {
            let router = routers[pick.load(Ordering::SeqCst)].clone();
            async move {
                match router.oneshot(req).await {
                    Ok(resp) => resp,
                    Err(never) => match never {},
                }
            }
        });
        Switch {
            now,
            http: TestServer::serve(app).await,
        }
    }

    fn to(&self, index: usize) {
        self.now.store(index, Ordering::SeqCst);
    }
}

/// A whole multi-revision server of its own, serving `revisions`.
fn multi(revisions: &[V]) -> Router {
    MultiServer::new(
        Arc::new(support::test_handler()),
        MultiConfig::revisions(revisions.to_vec()),
    )
    .route("/mcp")
}

async fn echo(conn: &impl Transport) -> Result<(), TransportError> {
    let params = to_raw(&json!({ "name": "echo", "arguments": { "text": "x" } })).unwrap();
    let resp = conn
        .request("tools/call", Some(params), RequestOptions::default())
        .await?
        .response()
        .await?;
    resp.payload
        .map(|_| ())
        .map_err(|e| TransportError::Internal(e.to_string()))
}

/// Connects through `cache` (the origin's era cached by a first connect),
/// checks one call works, moves the switch to `then`, and returns the
/// second call's error and whether the era is still cached.
async fn cached_then_moved(
    switch: &Switch,
    cache: &EraCache,
    then: usize,
) -> (TransportError, bool) {
    let cfg = || NegotiateConfig::new(switch.http.url()).with_cache(cache.clone());
    drop(connect(cfg()).await.unwrap());
    let origin = origin_of(&switch.http.url()).unwrap();
    assert_eq!(cache.get(&origin), Some(V::V2025_11_25));
    let conn = connect(cfg()).await.unwrap();
    assert!(conn.negotiated().reason.contains("era cache"));
    echo(&conn).await.unwrap();
    switch.to(then);
    let err = echo(&conn).await.unwrap_err();
    (err, cache.get(&origin).is_some())
}

/// A modern server that validates headers before `_meta`: a legacy
/// request lacks `Mcp-Method`, so every POST is `400` `-32020`
/// (*Streamable HTTP*, "Server Validation": "A required standard header
/// … is missing"). Which check comes first is the implementation's choice;
/// ours reads `_meta` first (below).
fn headers_first() -> Router {
    Router::new().route(
        "/mcp",
        post(|| async {
            let body = json!({"jsonrpc": "2.0", "id": null, "error": {
                "code": -32020, "message": "Header mismatch: the required Mcp-Method header is missing"}});
            (StatusCode::BAD_REQUEST, axum::Json(body))
        }),
    )
}

/// A cached 2025-11-25 connection whose server now answers with a modern
/// error: the era is stale (*Versioning*: "a recognized modern JSON-RPC
/// error … identifies a modern server").
#[tokio::test]
async fn a_legacy_connection_meeting_a_modern_error_forgets_the_era() {
    let switch = Switch::start(vec![multi(&[V::V2025_11_25]), headers_first()]).await;
    let (err, cached) = cached_then_moved(&switch, &EraCache::new(), 1).await;
    assert!(!cached, "forgotten after: {err}");
    assert!(
        matches!(&err, TransportError::Http { status: 400, rpc: Some(e), .. } if e.code == -32020),
        "a modern refusal: {err:?}"
    );
}

/// Our own modern-only server answers a legacy session's request with
/// `-32602` (*Overview*: "A request missing any required field is
/// malformed; the server MUST reject it with JSON-RPC error code
/// `-32602`"), which a legacy server could send too: the era stays cached
/// until the next connect, whose cached `initialize` is refused with
/// `-32022` and which then probes again and finds the modern server.
#[tokio::test]
async fn a_legacy_connection_meeting_our_modern_server_recovers_at_the_next_connect() {
    let switch = Switch::start(vec![multi(&[V::V2025_11_25]), multi(&[V::V2026_07_28])]).await;
    let cache = EraCache::new();
    let (err, cached) = cached_then_moved(&switch, &cache, 1).await;
    assert!(
        matches!(&err, TransportError::Http { status: 400, rpc: Some(e), .. } if e.code == -32602),
        "invalid params: {err:?}"
    );
    assert!(cached, "-32602 says nothing about the era");
    let again = connect(NegotiateConfig::new(switch.http.url()).with_cache(cache.clone()))
        .await
        .unwrap();
    assert_eq!(
        again.revision(),
        V::V2026_07_28,
        "{}",
        again.negotiated().reason
    );
    echo(&again).await.unwrap();
    let origin = origin_of(&switch.http.url()).unwrap();
    assert_eq!(cache.get(&origin), Some(V::V2026_07_28));
}

/// A cached 2025-11-25 connection whose URL no longer takes a POST (405:
/// an HTTP+SSE server's stream URL, say): the era is stale.
#[tokio::test]
async fn a_legacy_connection_refused_its_post_forgets_the_era() {
    let sse_only = Router::new().route("/mcp", get(|| async { "an HTTP+SSE stream URL" }));
    let switch = Switch::start(vec![multi(&[V::V2025_11_25]), sse_only]).await;
    let (err, cached) = cached_then_moved(&switch, &EraCache::new(), 1).await;
    assert!(!cached, "forgotten after: {err}");
    assert!(
        matches!(err, TransportError::Http { status: 405, .. }),
        "method not allowed: {err:?}"
    );
}

/// A cached 2025-11-25 connection whose server restarted in the same era:
/// the session is gone (404, `SessionExpired`), but the era still holds,
/// so it stays cached and the next connect through the cache works.
#[tokio::test]
async fn a_legacy_connection_whose_session_is_gone_keeps_the_era() {
    let switch = Switch::start(vec![multi(&[V::V2025_11_25]), multi(&[V::V2025_11_25])]).await;
    let cache = EraCache::new();
    let (err, cached) = cached_then_moved(&switch, &cache, 1).await;
    assert!(
        matches!(err, TransportError::SessionExpired { .. }),
        "session not found: {err:?}"
    );
    assert!(cached, "the era is kept");
    let again = connect(NegotiateConfig::new(switch.http.url()).with_cache(cache))
        .await
        .unwrap();
    assert!(again.negotiated().reason.contains("era cache"));
    echo(&again).await.unwrap();
}
