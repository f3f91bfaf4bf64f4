//! The negotiating client's fallbacks and cache, and one handler serving
//! every era.

mod support;

use mcp_negotiate::client::{EraCache, NegotiateConfig, NegotiateError, connect, origin_of};
use mcp_test_support::client::answer;
use mcp_test_support::http_sse_server as old_server;
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::{RequestOptions, Transport};
use mcp_transport_core::{Era, ProtocolVersion as V};
use serde_json::{Value, json};

async fn call(conn: &impl Transport, tool: &str, args: Value) -> Result<String, String> {
    let params = to_raw(&json!({ "name": tool, "arguments": args })).unwrap();
    let resp = conn
        .request("tools/call", Some(params), RequestOptions::default())
        .await
        .map_err(|e| e.to_string())?
        .response()
        .await
        .map_err(|e| e.to_string())?;
    match resp.payload {
        Ok(r) => {
            let v: Value = serde_json::from_str(r.get()).unwrap();
            Ok(v["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// 2025-11-25 *Transports*, "Backwards Compatibility": Streamable HTTP fails
/// with 400/404/405, so the client GETs the URL and finds an `endpoint` event.
#[tokio::test]
async fn falls_back_to_http_sse_on_an_old_server() {
    let (addr, old) = old_server::spawn(old_server::Options::default()).await;
    let url = format!("http://{addr}/sse");
    let conn = connect(NegotiateConfig::new(url))
        .await
        .expect("negotiated");
    let n = conn.negotiated();
    assert_eq!(n.revision, V::V2024_11_05);
    assert_eq!(n.era, Era::Legacy);
    assert!(n.reason.contains("HTTP+SSE"), "{}", n.reason);
    // The modern probe and initialize were tried first, as POSTs the old
    // server refused; then the endpoint was found.
    assert!(n.reason.contains("server/discover"), "{}", n.reason);
    assert!(n.reason.contains("initialize"), "{}", n.reason);
    assert_eq!(
        call(&conn, "echo", json!({ "text": "old" })).await.unwrap(),
        "old"
    );
    assert!(old.received_methods().iter().any(|m| m == "tools/call"));
    conn.close().await.unwrap();
}

#[tokio::test]
async fn without_2024_11_05_an_old_server_is_no_match_listing_every_answer() {
    let (addr, _old) = old_server::spawn(old_server::Options::default()).await;
    let cfg = NegotiateConfig::new(format!("http://{addr}/sse"))
        .with_revisions(vec![V::V2026_07_28, V::V2025_11_25]);
    match connect(cfg).await {
        Err(NegotiateError::NoMatch {
            offered, answers, ..
        }) => {
            assert_eq!(offered, vec![V::V2026_07_28, V::V2025_11_25]);
            let text = answers.join("; ");
            assert!(
                text.contains("server/discover") && text.contains("initialize"),
                "{text}"
            );
            assert!(text.contains("405"), "{text}");
        }
        Err(e) => panic!("expected NoMatch, got {e}"),
        Ok(c) => panic!("expected NoMatch, negotiated {}", c.revision()),
    }
}

/// One handler, written once: the same answers in every era, including a
/// call that asks the client for input (server-to-client request on legacy
/// sessions, an InputRequiredResult round on 2026-07-28).
#[tokio::test]
async fn one_handler_answers_the_same_in_every_era() {
    let running = support::spawn(&V::STREAMABLE).await;
    let mut echoes = Vec::new();
    let mut asks = Vec::new();
    for rev in V::STREAMABLE {
        let cfg = NegotiateConfig::new(running.url.clone())
            .with_revisions(vec![rev.clone()])
            .with_capabilities(json!({ "elicitation": {} }))
            .with_input_handler(support::ada());
        let conn = connect(cfg).await.unwrap();
        assert_eq!(conn.revision(), rev);
        echoes.push(
            call(&conn, "echo", json!({ "text": "same" }))
                .await
                .unwrap(),
        );
        if rev.has(|f| f.elicitation) {
            asks.push(call(&conn, "ask", json!({})).await.unwrap());
        } else {
            // 2025-03-26 has no elicitation: the call ends with a tool
            // execution error naming it (isError: true), not a hang.
            let params = to_raw(&json!({ "name": "ask", "arguments": {} })).unwrap();
            let resp = answer(&conn, "tools/call", Some(params)).await.unwrap();
            let v: Value = serde_json::from_str(resp.payload.unwrap().get()).unwrap();
            assert_eq!(v["isError"], true, "{v}");
            assert!(v.to_string().contains("elicitation"), "{v}");
        }
        conn.close().await.unwrap();
    }
    assert_eq!(echoes, vec!["same"; 4]);
    assert_eq!(asks, vec!["hello, Ada"; 3]);
}

/// 2026-07-28 *Versioning*: clients SHOULD cache the era per origin and
/// re-probe "if the cached assumption later fails".
#[tokio::test]
async fn the_era_is_cached_per_origin_and_reprobed_when_it_stops_working() {
    let cache = EraCache::new();
    let all = support::spawn(&V::STREAMABLE).await;
    let cfg = |url: &str| NegotiateConfig::new(url.to_owned()).with_cache(cache.clone());
    let first = connect(cfg(&all.url)).await.unwrap();
    assert_eq!(first.revision(), V::V2026_07_28);
    let origin = origin_of(&all.url).unwrap();
    assert_eq!(cache.get(&origin), Some(V::V2026_07_28));
    let second = connect(cfg(&all.url)).await.unwrap();
    assert!(
        second.negotiated().reason.contains("era cache"),
        "{}",
        second.negotiated().reason
    );
    assert_eq!(
        call(&second, "echo", json!({ "text": "c" })).await.unwrap(),
        "c"
    );

    // A legacy-only server now answers at an origin cached as modern: the
    // first request fails, the entry is forgotten, the next connect re-probes.
    let legacy = support::spawn(&[V::V2025_11_25]).await;
    let legacy_origin = origin_of(&legacy.url).unwrap();
    cache.put(&legacy_origin, V::V2026_07_28);
    let stale = connect(cfg(&legacy.url)).await.unwrap();
    assert_eq!(stale.revision(), V::V2026_07_28);
    assert!(call(&stale, "echo", json!({ "text": "x" })).await.is_err());
    assert_eq!(
        cache.get(&legacy_origin),
        None,
        "the stale entry is forgotten"
    );
    let fresh = connect(cfg(&legacy.url)).await.unwrap();
    assert_eq!(fresh.revision(), V::V2025_11_25);
    assert_eq!(cache.get(&legacy_origin), Some(V::V2025_11_25));
    assert_eq!(
        call(&fresh, "echo", json!({ "text": "ok" })).await.unwrap(),
        "ok"
    );
    // A cached legacy revision is reached as Streamable HTTP, straight away.
    let cached = connect(cfg(&legacy.url)).await.unwrap();
    assert!(cached.negotiated().reason.contains("era cache"));
    assert_eq!(
        call(&cached, "echo", json!({ "text": "again" }))
            .await
            .unwrap(),
        "again"
    );

    // The cached legacy revision is offered first, the others after it: a
    // server that has since moved back to 2025-06-18 counter-offers it.
    let older = support::spawn(&[V::V2025_06_18]).await;
    let older_origin = origin_of(&older.url).unwrap();
    cache.put(&older_origin, V::V2025_11_25);
    let moved = connect(cfg(&older.url)).await.unwrap();
    assert_eq!(
        call(&moved, "echo", json!({ "text": "old" }))
            .await
            .unwrap(),
        "old"
    );
    assert_eq!(moved.revision(), V::V2025_06_18);
    assert!(
        moved.negotiated().reason.contains("era cache"),
        "through the cache, not a new probe: {}",
        moved.negotiated().reason
    );
    assert!(
        format!("{:?}", cfg(&older.url)).contains(&older.url),
        "the configuration's Debug shows its URL"
    );
}

/// A client that prefers a version the server lacks learns the server's
/// revision once (-32022, then a retry); later connections through the
/// cache offer the cached revision first.
#[tokio::test]
async fn a_cached_modern_revision_is_offered_first() {
    let cache = EraCache::new();
    let all = support::spawn(&V::STREAMABLE).await;
    let cfg = || {
        NegotiateConfig::new(all.url.clone())
            .with_revisions(vec![V::parse("2099-01-01"), V::V2026_07_28])
            .with_cache(cache.clone())
    };
    let first = connect(cfg()).await.unwrap();
    assert_eq!(first.revision(), V::V2026_07_28);
    let second = connect(cfg()).await.unwrap();
    assert_eq!(second.revision(), V::V2026_07_28, "before any request");
    assert_eq!(
        call(&second, "echo", json!({ "text": "c" })).await.unwrap(),
        "c"
    );
}

/// A negotiated connection's notifications go to the transport it chose:
/// after `close` they fail as that transport's do.
#[tokio::test]
async fn notifications_go_through_the_chosen_transport() {
    for versions in [&[V::V2025_11_25][..], &V::STREAMABLE[..]] {
        let server = support::spawn(versions).await;
        let conn = connect(NegotiateConfig::new(server.url.clone()))
            .await
            .unwrap();
        let note = || {
            mcp_transport_core::jsonrpc::Notification::new(
                "notifications/roots/list_changed",
                None::<&serde_json::Value>,
            )
            .unwrap()
        };
        if !conn.revision().is_modern() {
            conn.notify(note()).await.unwrap();
        }
        conn.close().await.unwrap();
        let err = conn.notify(note()).await.unwrap_err();
        assert!(
            matches!(err, mcp_transport_core::transport::TransportError::Closed),
            "{}: {err}",
            conn.revision()
        );
    }
}

/// The reason names how a legacy version was reached: the first one
/// offered accepted, or another one counter-offered
/// (*Lifecycle*, "Version Negotiation").
#[tokio::test]
async fn the_reason_says_whether_initialize_accepted_or_counter_offered() {
    for (served, how) in [
        (V::V2025_11_25, "(the server accepted the offered version)"),
        (
            V::V2025_06_18,
            "(the server counter-offered it to 2025-11-25)",
        ),
    ] {
        let server = support::spawn(std::slice::from_ref(&served)).await;
        let conn = connect(NegotiateConfig::new(server.url.clone()))
            .await
            .unwrap();
        let reason = conn.negotiated().reason;
        assert_eq!(conn.revision(), served);
        assert!(
            reason.contains(&format!("{served} via initialize {how}")),
            "{reason}"
        );
    }
}

/// A cached modern revision is offered first, and the client's other modern
/// revisions stay on its list after it: a server that has since moved on to
/// another one of them is reached by the `-32022` retry.
#[tokio::test]
async fn a_cached_modern_revision_keeps_the_others_after_it() {
    let cache = EraCache::new();
    let future = V::parse("2099-01-01");
    // The modern engine alone serves any modern version it is given.
    let engine = mcp_rev_2026_07_28::server::ModernServer::new(
        std::sync::Arc::new(support::test_handler()),
        mcp_rev_2026_07_28::server::ModernConfig {
            supported_versions: vec![future.clone()],
            ..Default::default()
        },
    );
    let server = mcp_test_support::TestServer::serve(
        axum::Router::new().nest_service("/mcp", engine.router()),
    )
    .await;
    cache.put(&origin_of(&server.url()).unwrap(), V::V2026_07_28);
    let conn = connect(
        NegotiateConfig::new(server.url())
            .with_revisions(vec![future.clone(), V::V2026_07_28])
            .with_cache(cache.clone()),
    )
    .await
    .unwrap();
    assert!(conn.negotiated().reason.contains("era cache"));
    assert_eq!(conn.revision(), V::V2026_07_28, "the cached one first");
    assert_eq!(
        call(&conn, "echo", json!({ "text": "moved" }))
            .await
            .unwrap(),
        "moved"
    );
    assert_eq!(conn.revision(), future);
}
