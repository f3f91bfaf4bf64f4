//! `server/discover` (*Discovery*; schema `DiscoverResult`; *Caching*).

mod server_common;

use std::collections::BTreeSet;

use mcp_rev_2026_07_28::server::CacheScope;
use mcp_transport_core::ProtocolVersion;
use serde_json::json;
use server_common::*;

#[tokio::test]
async fn discover_follows_the_schema() {
    // SSE mode: the transport's own answer is JSON anyway.
    let t = start(config()).await;
    let a = t
        .exchange(&body("d-1", "server/discover", json!({}), json!({})))
        .await;
    assert!(!a.sse);
    assert_eq!(a.status, 200);
    assert_eq!(a.response["id"], "d-1");
    let r = a.result();
    let keys: BTreeSet<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        BTreeSet::from([
            "resultType",
            "supportedVersions",
            "capabilities",
            "instructions",
            "ttlMs",
            "cacheScope",
            "_meta"
        ])
    );
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(r["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(r["instructions"], "for tests");
    assert_eq!(r["ttlMs"], 60_000);
    assert_eq!(r["cacheScope"], "public");
    assert_eq!(
        r["_meta"],
        json!({"io.modelcontextprotocol/serverInfo": {"name": "test-server", "version": "0.0.1"}})
    );
    // The handler never sees it.
    assert_eq!(
        t.handler
            .tools_list_calls
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[tokio::test]
async fn discover_is_version_checked_and_configurable() {
    let t = start(
        config()
            .with_advertised_versions(Some(vec![
                ProtocolVersion::V2026_07_28,
                ProtocolVersion::V2025_11_25,
            ]))
            .with_discover_cache(0, CacheScope::Private),
    )
    .await;
    let a = t
        .exchange(&body(1, "server/discover", json!({}), json!({})))
        .await;
    assert_eq!(
        a.result()["supportedVersions"],
        json!(["2026-07-28", "2025-11-25"])
    );
    assert_eq!(a.result()["ttlMs"], 0);
    assert_eq!(a.result()["cacheScope"], "private");

    // A probe with a version this engine does not serve: -32022 naming
    // the advertised versions (a legacy one included).
    let mut b = body(2, "server/discover", json!({}), json!({}));
    b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let resp = t.send(&b).await;
    assert_eq!(resp.status(), 400);
    let v = error_json(resp).await;
    assert_eq!(v["error"]["code"], -32022);
    assert_eq!(
        v["error"]["data"]["supported"],
        json!(["2026-07-28", "2025-11-25"])
    );
    assert_eq!(v["error"]["data"]["requested"], "2025-11-25");
}
