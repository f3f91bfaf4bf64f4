//! Endpoint mechanics of the stateless model (*Streamable HTTP*, "Sending
//! Messages", "Receiving Messages", "Backward Compatibility").

mod server_common;

use std::time::Duration;

use serde_json::{Value, json};
use server_common::*;

#[tokio::test]
async fn get_delete_and_others_are_405_with_allow_post() {
    let t = start(config()).await;
    for method in [
        reqwest::Method::GET,
        reqwest::Method::DELETE,
        reqwest::Method::PUT,
    ] {
        let resp = t
            .http
            .request(method.clone(), &t.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", "abc")
            .header("last-event-id", "x.1.2")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 405, "{method}");
        assert_eq!(resp.headers()["allow"], "POST");
        assert!(resp.headers().get("mcp-session-id").is_none());
        let v = error_json(resp).await;
        assert!(v["error"]["message"].as_str().unwrap().contains("POST"));
    }
}

#[tokio::test]
async fn session_id_and_last_event_id_are_ignored_never_echoed() {
    let t = start(config()).await;
    let b = tool(1, "echo", json!({"x": 1}));
    let resp = t
        .rpc(&b)
        .header("mcp-session-id", "1f3a4b5c-6d7e")
        .header("last-event-id", "abc.0.7")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("mcp-session-id").is_none());
    let a = read_answer(resp).await;
    assert_eq!(a.result()["structuredContent"], json!({"x": 1}));
    // Nothing minted on a request without one either.
    let resp = t
        .send(&body(2, "server/discover", json!({}), json!({})))
        .await;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("mcp-session-id").is_none());
}

#[tokio::test]
async fn sse_answers_have_no_ids_no_priming_and_the_right_headers() {
    let t = start(config()).await;
    let b = body(
        7,
        "tools/call",
        json!({"name": "countdown", "arguments": {"n": 3}, "_meta": {"progressToken": "p"}}),
        json!({}),
    );
    let resp = t.send(&b).await;
    assert_eq!(resp.status(), 200);
    let h = resp.headers().clone();
    assert!(
        h["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert_eq!(h["cache-control"], "no-cache");
    assert_eq!(h["x-accel-buffering"], "no");
    let mut r = SseReader::without_ids(resp);
    let mut events = Vec::new();
    while let Some(e) = r.next_event().await {
        assert_eq!(e.id, "");
        assert!(!e.data.is_empty(), "a priming (empty) event was sent");
        events.push(serde_json::from_str::<Value>(&e.data).unwrap());
    }
    assert!(!r.raw.lines().any(|l| l.starts_with("id")), "{}", r.raw);
    assert_eq!(events.len(), 4, "3 progress then the response: {events:?}");
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(events[3]["id"], 7);
    assert_eq!(events[3]["result"]["structuredContent"]["done"], 3);
}

#[tokio::test]
async fn sse_mode_sends_even_a_plain_result_as_one_event() {
    let t = start(config()).await;
    let a = t.exchange(&tool(1, "echo", json!({}))).await;
    assert!(a.sse);
    assert_eq!(a.status, 200);
    assert!(a.notifications.is_empty());
    assert_eq!(a.response["id"], 1);
}

#[tokio::test]
async fn json_mode_answers_json_until_a_notification_comes_first() {
    let t = start(config().with_json_response(true)).await;
    let a = t.exchange(&tool(1, "echo", json!({"a": 1}))).await;
    assert!(!a.sse);
    assert_eq!(a.result()["resultType"], "complete");

    // Progress before the result switches this answer to SSE.
    let b = body(
        2,
        "tools/call",
        json!({"name": "countdown", "arguments": {"n": 2}, "_meta": {"progressToken": 5}}),
        json!({}),
    );
    let a = t.exchange(&b).await;
    assert!(a.sse);
    assert_eq!(a.of("notifications/progress").len(), 2);
    assert_eq!(a.response["id"], 2);

    // Without a progress token (and no log level) nothing is sent first: JSON.
    let a = t.exchange(&tool(3, "countdown", json!({"n": 2}))).await;
    assert!(!a.sse);
}

#[tokio::test]
async fn initialize_is_refused_naming_the_supported_versions() {
    let t = start(config()).await;
    // A legacy client: no MCP-Protocol-Version, no _meta.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}});
    let resp = t.post().body(init.to_string()).send().await.unwrap();
    assert_eq!(resp.status(), 400);
    assert!(resp.headers().get("mcp-session-id").is_none());
    let v = error_json(resp).await;
    assert_eq!(v["id"], 0);
    assert_eq!(v["error"]["code"], -32022);
    assert_eq!(v["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_eq!(v["error"]["data"]["requested"], "2025-11-25");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("2026-07-28") && msg.contains("initialize"),
        "{msg}"
    );

    // A dual-era deployment advertises its legacy versions too.
    let t = start(config().with_advertised_versions(Some(vec![
        mcp_transport_core::ProtocolVersion::V2026_07_28,
        mcp_transport_core::ProtocolVersion::V2025_11_25,
    ])))
    .await;
    let v = error_json(t.post().body(init.to_string()).send().await.unwrap()).await;
    assert_eq!(
        v["error"]["data"]["supported"],
        json!(["2026-07-28", "2025-11-25"])
    );
}

#[tokio::test]
async fn accept_content_type_and_size() {
    let t = start(config().with_max_body_bytes(1024)).await;
    let b = tool(1, "echo", json!({}));
    for accept in ["application/json", "text/event-stream", "text/html"] {
        let mut req = t
            .http
            .post(&t.url)
            .header("content-type", "application/json")
            .header("accept", accept)
            .body(b.to_string());
        for (k, v) in std_headers(&b) {
            req = req.header(k, v);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 406, "{accept}");
        let v = error_json(resp).await;
        assert!(v.get("id").is_none());
    }
    for ct in [None, Some("text/plain")] {
        let mut req = t
            .http
            .post(&t.url)
            .header("accept", "application/json, text/event-stream")
            .body(b.to_string());
        if let Some(ct) = ct {
            req = req.header("content-type", ct);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 415, "{ct:?}");
        error_json(resp).await;
    }
    let big = tool(1, "echo", json!({"pad": "x".repeat(2000)}));
    let resp = t.send(&big).await;
    assert_eq!(resp.status(), 413);
    error_json(resp).await;
}

#[tokio::test]
async fn unparsable_and_nonconforming_bodies() {
    let t = start(config()).await;
    for (text, code) in [
        ("{", -32700),
        ("not json", -32700),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
            -32600,
        ),
        (r#"{"id":1,"method":"x"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, -32600),
        ("42", -32600),
    ] {
        let resp = t.post().body(text).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{text}");
        let v = error_json(resp).await;
        assert_eq!(v["error"]["code"], code, "{text}");
        assert!(v.get("id").is_none());
    }
    // A JSON-RPC response: this revision has no server-to-client requests.
    let resp = t
        .post()
        .body(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert_eq!(error_json(resp).await["error"]["code"], -32600);
}

#[tokio::test]
async fn notifications_are_accepted_with_202() {
    let t = start(config()).await;
    for n in [
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "com.example/ping", "params": {}}),
    ] {
        let resp = t.post().body(n.to_string()).send().await.unwrap();
        assert_eq!(resp.status(), 202, "{n}");
        assert!(resp.bytes().await.unwrap().is_empty());
    }
    // Only the extension notification reaches the handler.
    assert_eq!(
        *t.handler.notifications.lock().unwrap(),
        ["com.example/ping"]
    );
}

#[tokio::test]
async fn origin_and_host_are_checked() {
    let t = start(config()).await;
    let b = tool(1, "echo", json!({}));
    let resp = t
        .rpc(&b)
        .header("origin", "http://evil.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    error_json(resp).await;
    let resp = t
        .rpc(&b)
        .header("origin", "http://localhost:5173")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let resp = t
        .rpc(&b)
        .header("host", "evil.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);

    let t = start(
        config()
            .with_allowed_hosts(Some(vec!["mcp.example.com".into()]))
            .with_allowed_origins(Some(vec!["https://app.example.com".into()])),
    )
    .await;
    let resp = t.rpc(&b).send().await.unwrap();
    assert_eq!(resp.status(), 403, "127.0.0.1 is not in the allowed hosts");
    let resp = t
        .rpc(&b)
        .header("host", "mcp.example.com")
        .header("origin", "https://app.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn handler_panic_is_an_internal_error_and_the_server_goes_on() {
    let t = start(config()).await;
    let a = t.exchange(&tool(1, "panic", json!({}))).await;
    assert_eq!(a.error()["code"], -32603);
    let a = t.exchange(&tool(2, "echo", json!({}))).await;
    assert_eq!(a.response["id"], 2);
    eventually("no request in flight", || {
        t.server.in_flight_requests() == 0
    })
    .await;
}

#[tokio::test]
async fn a_silent_handler_gets_its_stream_opened_by_the_keepalive() {
    let t = start(config().with_keepalive(Some(Duration::from_millis(50)))).await;
    // `slow` without a progress token sends nothing before its result.
    let started = std::time::Instant::now();
    let resp = t.send(&tool(1, "slow", json!({"ms": 400}))).await;
    let head_after = started.elapsed();
    assert!(
        head_after < Duration::from_millis(300),
        "head after {head_after:?}"
    );
    let mut r = SseReader::without_ids(resp);
    let v = r.next_json().await.unwrap();
    assert_eq!(v["id"], 1);
    assert!(r.raw.starts_with(":\n"), "{:?}", r.raw);
}

#[tokio::test]
async fn initialize_with_modern_meta_is_a_removed_method() {
    // A modern request (metadata and headers) for `initialize`: the method
    // was removed, so 404 with -32601 (*Streamable HTTP*, "If the server does
    // not implement the requested RPC method, it MUST respond with 404").
    let t = start(config()).await;
    let b = body(7, "initialize", json!({}), json!({}));
    let resp = t.send(&b).await;
    assert_eq!(resp.status(), 404);
    let v = error_json(resp).await;
    assert_eq!(v["id"], 7);
    assert_eq!(v["error"]["code"], -32601);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize")
    );
}
