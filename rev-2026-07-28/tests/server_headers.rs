//! Header–body validation (*Streamable HTTP*, "Request Metadata", "Server
//! Validation"; SEP-2243): `Mcp-Method`, `Mcp-Name`, `Mcp-Param-{Name}`.

mod server_common;

use std::sync::atomic::Ordering;

use mcp_rev_2026_07_28::headers::encode_value;
use mcp_transport_core::jsonrpc::Notification;
use serde_json::{Value, json};
use server_common::*;

/// Sends `body` with exactly `headers` (plus Accept and Content-Type).
async fn send_with(t: &TestServer, body: &Value, headers: &[(&str, &[u8])]) -> reqwest::Response {
    let mut req = t.post().body(body.to_string());
    for (k, v) in headers {
        req = req.header(*k, reqwest::header::HeaderValue::from_bytes(v).unwrap());
    }
    req.send().await.unwrap()
}

async fn expect_mismatch(resp: reqwest::Response, needle: &str) {
    assert_eq!(resp.status(), 400);
    let v = error_json(resp).await;
    assert_eq!(v["error"]["code"], -32020, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
}

#[tokio::test]
async fn mcp_method_is_required_and_case_sensitive() {
    let t = start(config()).await;
    let b = body(1, "tools/list", json!({}), json!({}));
    let resp = send_with(&t, &b, &[("mcp-protocol-version", V.as_bytes())]).await;
    expect_mismatch(resp, "Mcp-Method").await;
    let resp = send_with(
        &t,
        &b,
        &[
            ("mcp-protocol-version", V.as_bytes()),
            ("mcp-method", b"TOOLS/LIST"),
        ],
    )
    .await;
    expect_mismatch(resp, "does not match").await;
    let resp = send_with(
        &t,
        &b,
        &[
            ("mcp-protocol-version", V.as_bytes()),
            ("mcp-method", b"prompts/list"),
        ],
    )
    .await;
    expect_mismatch(resp, "'prompts/list'").await;
    // Header names are case-insensitive.
    let resp = send_with(
        &t,
        &b,
        &[
            ("MCP-PROTOCOL-VERSION", V.as_bytes()),
            ("MCP-METHOD", b"tools/list"),
        ],
    )
    .await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn mcp_name_is_required_matched_and_decoded() {
    let t = start(config()).await;
    let base = [
        ("mcp-protocol-version", V.as_bytes()),
        ("mcp-method", &b"tools/call"[..]),
    ];
    let b = tool(1, "echo", json!({}));
    expect_mismatch(send_with(&t, &b, &base).await, "Mcp-Name").await;

    let mut h = base.to_vec();
    h.push(("mcp-name", b"foo"));
    expect_mismatch(
        send_with(&t, &b, &h).await,
        "Mcp-Name header value 'foo' does not match body value 'echo'",
    )
    .await;

    // Surrounding whitespace is HTTP framing.
    let mut h = base.to_vec();
    h.push(("mcp-name", b" echo "));
    assert_eq!(send_with(&t, &b, &h).await.status(), 200);

    // resources/read mirrors the URI; a non-ASCII one goes Base64.
    let uri = "file:///projects/café/naïve.txt";
    let b = body(2, "resources/read", json!({"uri": uri}), json!({}));
    let enc = encode_value(uri);
    let h = [
        ("mcp-protocol-version", V.as_bytes()),
        ("mcp-method", &b"resources/read"[..]),
        ("mcp-name", enc.as_bytes()),
    ];
    let resp = send_with(&t, &b, &h).await;
    assert_eq!(resp.status(), 200);
    // The same URI sent raw (UTF-8 bytes) has invalid characters.
    let h = [
        ("mcp-protocol-version", V.as_bytes()),
        ("mcp-method", &b"resources/read"[..]),
        ("mcp-name", uri.as_bytes()),
    ];
    expect_mismatch(send_with(&t, &b, &h).await, "invalid characters").await;
    // Broken Base64.
    let h = [
        ("mcp-protocol-version", V.as_bytes()),
        ("mcp-method", &b"resources/read"[..]),
        ("mcp-name", &b"=?base64?SGVsbG8?="[..]),
    ];
    expect_mismatch(send_with(&t, &b, &h).await, "Base64").await;

    // prompts/get mirrors params.name.
    let b = body(3, "prompts/get", json!({"name": "review"}), json!({}));
    let h = [
        ("mcp-protocol-version", V.as_bytes()),
        ("mcp-method", &b"prompts/get"[..]),
        ("mcp-name", &b"review"[..]),
    ];
    assert_eq!(send_with(&t, &b, &h).await.status(), 200);
}

fn route(id: i64, args: Value) -> Value {
    tool(id, "route", args)
}

/// Standard headers of `b` plus `extra`.
async fn route_with(t: &TestServer, b: &Value, extra: &[(&str, &[u8])]) -> reqwest::Response {
    let mut req = t.rpc(b);
    for (k, v) in extra {
        req = req.header(*k, reqwest::header::HeaderValue::from_bytes(v).unwrap());
    }
    req.send().await.unwrap()
}

#[tokio::test]
async fn param_headers_follow_the_tool_schema() {
    let t = start(config()).await;
    let args = json!({"region": "us-west1", "count": 42, "dry_run": true,
                      "target": {"zone": "b"}, "query": "SELECT 1"});
    let all: [(&str, &[u8]); 4] = [
        ("Mcp-Param-Region", b"us-west1"),
        ("mcp-param-count", b"42.0"),
        ("MCP-PARAM-DRYRUN", b"true"),
        ("mcp-param-zone", b"b"),
    ];
    let resp = route_with(&t, &route(1, args.clone()), &all).await;
    assert_eq!(resp.status(), 200);

    // Each one missing while its value is in the body.
    for skip in 0..all.len() {
        let h: Vec<_> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .map(|(_, p)| *p)
            .collect();
        expect_mismatch(route_with(&t, &route(2, args.clone()), &h).await, "missing").await;
    }
    // Mismatched values, per type.
    for (k, v) in [
        ("mcp-param-region", &b"us-east1"[..]),
        ("mcp-param-count", b"43"),
        ("mcp-param-dryrun", b"True"),
        ("mcp-param-zone", b"c"),
    ] {
        let mut h = all.to_vec();
        h.retain(|(name, _)| !name.eq_ignore_ascii_case(k));
        h.push((k, v));
        expect_mismatch(
            route_with(&t, &route(3, args.clone()), &h).await,
            "does not match",
        )
        .await;
    }
    // Null and absent values: no header expected.
    let resp = route_with(&t, &route(4, json!({"region": null, "query": "q"})), &[]).await;
    assert_eq!(resp.status(), 200);
    // A header for an absent value does not match the body.
    let resp = route_with(&t, &route(5, json!({})), &[("mcp-param-region", b"x")]).await;
    expect_mismatch(resp, "no value").await;
    // Invalid characters in a recognized header.
    let resp = route_with(
        &t,
        &route(6, json!({"region": "us-west1"})),
        &[("mcp-param-region", b"us-w\xe9st1")],
    )
    .await;
    expect_mismatch(resp, "invalid characters").await;
    // Unrecognized Mcp-Param headers are ignored, whatever they hold.
    let resp = route_with(
        &t,
        &route(7, json!({})),
        &[
            ("mcp-param-other", b"\xff\xfe"),
            ("mcp-param-query", b"nope"),
        ],
    )
    .await;
    assert_eq!(resp.status(), 200);
    // Base64 values with non-ASCII and significant whitespace.
    let region = " Zürich\n";
    let enc = encode_value(region);
    let resp = route_with(
        &t,
        &route(8, json!({"region": region})),
        &[("mcp-param-region", enc.as_bytes())],
    )
    .await;
    assert_eq!(resp.status(), 200);
    // A literal value that looks like the sentinel must be encoded.
    let literal = "=?base64?aGk=?=";
    let resp = route_with(
        &t,
        &route(9, json!({"region": literal})),
        &[("mcp-param-region", literal.as_bytes())],
    )
    .await;
    expect_mismatch(resp, "does not match").await;
    let enc = encode_value(literal);
    let resp = route_with(
        &t,
        &route(10, json!({"region": literal})),
        &[("mcp-param-region", enc.as_bytes())],
    )
    .await;
    assert_eq!(resp.status(), 200);
    // A tool whose annotation is invalid expects nothing.
    let resp = t.send(&tool(11, "bad_schema", json!({"ratio": 0.5}))).await;
    assert_eq!(resp.status(), 200);
    // Tools without annotations expect nothing.
    let resp = t.send(&tool(12, "echo", json!({"region": "x"}))).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn tool_schemas_are_cached_until_tools_list_changed_is_published() {
    let t = start(config()).await;
    let args = json!({"region": "eu"});
    let resp = route_with(&t, &route(1, args.clone()), &[("mcp-param-region", b"eu")]).await;
    assert_eq!(resp.status(), 200);
    // Two pages were listed once; more calls use the cache.
    assert_eq!(t.handler.tools_list_calls.load(Ordering::SeqCst), 2);
    for id in 2..6 {
        let resp = route_with(&t, &route(id, args.clone()), &[("mcp-param-region", b"eu")]).await;
        assert_eq!(resp.status(), 200);
    }
    assert_eq!(t.handler.tools_list_calls.load(Ordering::SeqCst), 2);

    // The schema changes (the header is now Mcp-Param-Area); until the
    // server hears of it, the old header is what it checks.
    // The second version of the `route` tool's schema.
    t.handler.switch.store(true, Ordering::SeqCst);
    let resp = route_with(&t, &route(6, args.clone()), &[("mcp-param-region", b"eu")]).await;
    assert_eq!(resp.status(), 200);

    t.server.publish(Notification {
        method: "notifications/tools/list_changed".into(),
        params: None,
    });
    let resp = route_with(&t, &route(7, args.clone()), &[("mcp-param-region", b"eu")]).await;
    expect_mismatch(resp, "Mcp-Param-Area").await;
    let resp = route_with(&t, &route(8, args.clone()), &[("mcp-param-area", b"eu")]).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(t.handler.tools_list_calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn unknown_tool_names_refresh_the_cache_at_most_once_a_second() {
    let t = start(config()).await;
    for id in 0..5 {
        let resp = t.send(&tool(id, &format!("nope{id}"), json!({}))).await;
        assert_eq!(resp.status(), 200);
    }
    assert_eq!(t.handler.tools_list_calls.load(Ordering::SeqCst), 2);
}
