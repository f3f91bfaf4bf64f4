//! The `MCP-Protocol-Version` header on each profile.
//!
//! 2025-03-26 defines no such header. 2025-06-18 *Transports*, "Protocol
//! Version Header": the client "MUST include the `MCP-Protocol-Version:
//! <protocol-version>` HTTP header on all subsequent requests"; "If the
//! server receives a request with an invalid or unsupported
//! MCP-Protocol-Version, it MUST respond with 400 Bad Request"; without the
//! header, a server that has "other way to identify the version - for
//! example, by relying on the protocol version negotiated during
//! initialization" uses that (the session's version, here).

mod common;

use common::*;
use mcp_rev_2025_03_26::Profile;
use mcp_rev_2025_03_26::mcp_transport_core::transport::Transport;
use serde_json::json;

#[tokio::test]
async fn our_2025_03_26_client_sends_no_version_header() {
    let server = TestServer::profile(Profile::V2025_03_26).await;
    let client = connect(&server.url, Profile::V2025_03_26).await;
    assert_eq!(client.revision().as_str(), "2025-03-26");
    let r = client
        .request(
            "tools/call",
            Some(tool("echo", json!({"text": "x"}))),
            Default::default(),
        )
        .await
        .unwrap()
        .response()
        .await
        .unwrap();
    assert_eq!(result_of(&r), json!({"text": "x"}));
    client.close().await.unwrap();
    let hits = server.hits();
    assert!(hits.len() >= 4, "initialize, initialized, call, DELETE");
    assert!(
        hits.iter().all(|h| h.protocol_version.is_none()),
        "{hits:#?}"
    );
}

#[tokio::test]
async fn our_2025_06_18_client_sends_the_header_after_initialize() {
    let server = TestServer::profile(Profile::V2025_06_18).await;
    let client = connect(&server.url, Profile::V2025_06_18).await;
    assert_eq!(client.revision().as_str(), "2025-06-18");
    client
        .request(
            "tools/call",
            Some(tool("echo", json!({}))),
            Default::default(),
        )
        .await
        .unwrap()
        .response()
        .await
        .unwrap();
    client.close().await.unwrap();
    let hits = server.hits();
    let (init, later) = hits.split_first().unwrap();
    assert_eq!(init.rpc_methods, ["initialize"]);
    assert_eq!(init.protocol_version, None, "not on initialize itself");
    assert!(later.len() >= 3);
    for h in later {
        assert_eq!(h.protocol_version.as_deref(), Some("2025-06-18"), "{h:?}");
    }
}

#[tokio::test]
async fn a_2025_03_26_session_is_served_without_the_header() {
    let server = TestServer::profile(Profile::V2025_03_26).await;
    let raw = server.raw();
    let s = raw.init("2025-03-26").await;
    let resp = raw
        .post_in(&s)
        .body(call(1, "echo", json!({"text": "ok"})).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let messages = sse_messages(&read_sse(resp).await);
    assert_eq!(messages.last().unwrap()["result"]["text"], "ok");
    // The GET stream and DELETE too.
    let resp = raw.get_in(&s).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    drop(resp);
    let resp = raw
        .http
        .delete(&raw.url)
        .header("mcp-session-id", &s.id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 204);
}

#[tokio::test]
async fn a_2025_06_18_session_without_the_header_is_served_at_its_version() {
    let server = TestServer::profile(Profile::Both).await;
    let raw = server.raw();
    let mut s = raw.init("2025-06-18").await;
    s.header = false;
    let resp = raw
        .post_in(&s)
        .body(call(1, "echo", json!({"text": "ok"})).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        sse_messages(&read_sse(resp).await).last().unwrap()["result"]["text"],
        "ok"
    );
    // Served at 2025-06-18, not at 2025-03-26 (the spec's fallback for a
    // server with no other way to know): an array is still refused.
    let resp = raw
        .post_in(&s)
        .body(json!([call(2, "echo", json!({}))]).to_string())
        .send()
        .await
        .unwrap();
    expect_error(resp, 400, -32600, "batches ended with 2025-03-26").await;
}

#[tokio::test]
async fn a_malformed_or_unsupported_header_is_400() {
    for profile in [Profile::V2025_06_18, Profile::Both] {
        let server = TestServer::profile(profile).await;
        let raw = server.raw();
        let s = raw.init("2025-06-18").await;
        for (value, says) in [
            ("June 18th", "malformed MCP-Protocol-Version"),
            ("2025-6-18", "malformed MCP-Protocol-Version"),
            ("", "malformed MCP-Protocol-Version"),
            ("2024-11-05", "unsupported MCP-Protocol-Version"),
            ("2025-11-25", "unsupported MCP-Protocol-Version"),
            ("2099-01-01", "unsupported MCP-Protocol-Version"),
        ] {
            let resp = raw
                .post()
                .header("mcp-session-id", &s.id)
                .header("mcp-protocol-version", value)
                .body(call(1, "echo", json!({})).to_string())
                .send()
                .await
                .unwrap();
            expect_error(resp, 400, -32600, says).await;
            let resp = raw
                .http
                .get(&raw.url)
                .header("accept", "text/event-stream")
                .header("mcp-session-id", &s.id)
                .header("mcp-protocol-version", value)
                .send()
                .await
                .unwrap();
            expect_error(resp, 400, -32600, says).await;
        }
        assert_eq!(
            server
                .handler
                .started
                .load(std::sync::atomic::Ordering::SeqCst),
            0
        );
    }
}

/// Naming another version the server supports is 400: the negotiated
/// version is the only valid one on a session (issue 13, item 5), so a
/// session never changes profile by its header.
#[tokio::test]
async fn another_supported_version_in_the_header_is_refused() {
    let server = TestServer::profile(Profile::Both).await;
    let raw = server.raw();
    // A 2025-06-18 session naming 2025-03-26.
    let new = raw.init("2025-06-18").await;
    let resp = raw
        .post()
        .header("mcp-session-id", &new.id)
        .header("mcp-protocol-version", "2025-03-26")
        .body(call(1, "echo", json!({})).to_string())
        .send()
        .await
        .unwrap();
    expect_error(resp, 400, -32600, "not this session's protocol version").await;
    // A 2025-03-26 session naming 2025-06-18.
    let old = raw.init("2025-03-26").await;
    let resp = raw
        .post()
        .header("mcp-session-id", &old.id)
        .header("mcp-protocol-version", "2025-06-18")
        .body(json!([call(1, "echo", json!({"text": "b"}))]).to_string())
        .send()
        .await
        .unwrap();
    expect_error(resp, 400, -32600, "not this session's protocol version").await;
    // Its own version, or none: served (batches on 2025-03-26).
    let resp = raw
        .post()
        .header("mcp-session-id", &old.id)
        .body(json!([call(1, "echo", json!({"text": "b"}))]).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let messages = sse_messages(&read_sse(resp).await);
    assert_eq!(messages.last().unwrap()["result"]["text"], "b");
}

/// A server of one profile does not support the other: 400 when named.
#[tokio::test]
async fn the_other_profile_is_unsupported_on_a_single_profile_server() {
    let server = TestServer::profile(Profile::V2025_03_26).await;
    let raw = server.raw();
    let s = raw.init("2025-03-26").await;
    let resp = raw
        .post()
        .header("mcp-session-id", &s.id)
        .header("mcp-protocol-version", "2025-06-18")
        .body(call(1, "echo", json!({})).to_string())
        .send()
        .await
        .unwrap();
    expect_error(
        resp,
        400,
        -32600,
        "unsupported MCP-Protocol-Version 2025-06-18",
    )
    .await;
    // An initialize offering 2025-06-18 is answered with 2025-03-26.
    let other = raw.init("2025-06-18").await;
    assert_eq!(other.version, "2025-03-26");
}
