//! Per-request metadata, result fields, error mapping, and request-scoped
//! notifications (*Overview*, "`_meta`", "Error Codes"; *Versioning*;
//! *Logging*; *Progress*; *Caching*).

mod server_common;

use serde_json::{Value, json};
use server_common::*;

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CC: &str = "io.modelcontextprotocol/clientCapabilities";

/// A tools/call whose `_meta` is exactly `meta`, with a version header.
fn with_meta(meta: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
           "params": {"name": "echo", "arguments": {}, "_meta": meta}})
}

#[tokio::test]
async fn missing_metadata_is_400_invalid_params_naming_the_key() {
    let t = start(config()).await;
    for (meta, key) in [
        (None, "params._meta"),
        (Some(json!({CC: {}})), PV),
        (Some(json!({PV: V})), CC),
        (Some(json!({PV: V, CC: "none"})), CC),
    ] {
        let b = match &meta {
            Some(m) => with_meta(m.clone()),
            None => json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                            "params": {"name": "echo"}}),
        };
        let resp = t
            .rpc(&b)
            .header("mcp-protocol-version", V)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{meta:?}");
        let v = error_json(resp).await;
        assert_eq!(v["id"], 9);
        assert_eq!(v["error"]["code"], -32602, "{meta:?}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(key), "{msg}");
    }
    // clientInfo is optional.
    let resp = t
        .rpc(&with_meta(json!({PV: V, CC: {}})))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn unsupported_version_is_400_with_supported_and_requested() {
    let t = start(config()).await;
    for requested in ["1900-01-01", "2025-11-25", "2027-01-01", "garbage"] {
        let b = with_meta(json!({PV: requested, CC: {}}));
        let resp = t.rpc(&b).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{requested}");
        let v = error_json(resp).await;
        assert_eq!(v["id"], 9);
        assert_eq!(v["error"]["code"], -32022);
        assert_eq!(
            v["error"]["data"],
            json!({"supported": ["2026-07-28"], "requested": requested})
        );
    }
}

#[tokio::test]
async fn version_header_must_match_the_body() {
    let t = start(config()).await;
    let b = tool(1, "echo", json!({}));
    // Missing.
    let mut req = t.post().body(b.to_string());
    for (k, v) in std_headers(&b) {
        if k != "MCP-Protocol-Version" {
            req = req.header(k, v);
        }
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 400);
    let v = error_json(resp).await;
    assert_eq!(v["error"]["code"], -32020);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("MCP-Protocol-Version")
    );
    // Different from the body (even a supported one is a mismatch).
    let b2 = with_meta(json!({PV: "2027-01-01", CC: {}}));
    let resp = t
        .post()
        .body(b2.to_string())
        .header("mcp-protocol-version", V)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    assert_eq!(error_json(resp).await["error"]["code"], -32020);
}

#[tokio::test]
async fn results_carry_result_type_server_info_and_cache_hints() {
    let t = start(config()).await;
    let a = t.exchange(&tool(1, "echo", json!({}))).await;
    let r = a.result();
    assert_eq!(r["resultType"], "complete");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "test-server", "version": "0.0.1"})
    );
    assert!(r.get("ttlMs").is_none(), "tools/call is not cacheable");

    let a = t
        .exchange(&body(2, "tools/list", json!({}), json!({})))
        .await;
    let r = a.result();
    assert_eq!(r["ttlMs"], 0);
    assert_eq!(r["cacheScope"], "private");
    assert_eq!(r["resultType"], "complete");

    let a = t
        .exchange(&body(
            3,
            "resources/read",
            json!({"uri": "file:///x"}),
            json!({}),
        ))
        .await;
    assert_eq!(a.result()["cacheScope"], "private");
    assert_eq!(a.result()["contents"][0]["text"], "hello");

    // Configured off / other defaults.
    let t = start(
        config()
            .with_include_server_info(false)
            .with_result_cache(30_000, mcp_rev_2026_07_28::server::CacheScope::Public),
    )
    .await;
    let a = t
        .exchange(&body(4, "tools/list", json!({}), json!({})))
        .await;
    assert!(a.result().get("_meta").is_none());
    assert_eq!(a.result()["ttlMs"], 30_000);
    assert_eq!(a.result()["cacheScope"], "public");
}

#[tokio::test]
async fn unknown_and_removed_methods_are_404_method_not_found() {
    let t = start(config()).await;
    // A removed method's message says what replaces it; an unknown one's
    // does not claim a removal.
    for (method, replaced_by) in [
        ("foo/bar", None),
        ("completion/complete", None),
        ("initialize", Some("server/discover")),
        ("ping", Some("any request")),
        ("logging/setLevel", Some("io.modelcontextprotocol/logLevel")),
        ("resources/subscribe", Some("subscriptions/listen")),
        ("resources/unsubscribe", Some("subscriptions/listen")),
    ] {
        let resp = t.send(&body(5, method, json!({}), json!({}))).await;
        assert_eq!(resp.status(), 404, "{method}");
        let v = error_json(resp).await;
        assert_eq!(v["id"], 5);
        assert_eq!(v["error"]["code"], -32601, "{method}");
        let message = v["error"]["message"].as_str().unwrap();
        match replaced_by {
            Some(r) => {
                assert!(message.contains(" in 2026-07-28"), "{method}: {message}");
                assert!(message.contains(r), "{method}: {message}");
            }
            None => assert!(!message.contains("2026-07-28"), "{method}: {message}"),
        }
    }
    // Also in JSON mode.
    let t = start(config().with_json_response(true)).await;
    let resp = t.send(&body(6, "foo/bar", json!({}), json!({}))).await;
    assert_eq!(resp.status(), 404);
}

fn countdown(id: i64, extra_meta: Value) -> Value {
    body(
        id,
        "tools/call",
        json!({"name": "countdown", "arguments": {"n": 2}, "_meta": extra_meta}),
        json!({}),
    )
}

#[tokio::test]
async fn log_messages_only_with_a_log_level_and_at_or_above_it() {
    let t = start(config()).await;
    let a = t.exchange(&countdown(1, json!({}))).await;
    assert!(a.of("notifications/message").is_empty());

    let a = t
        .exchange(&countdown(
            2,
            json!({"io.modelcontextprotocol/logLevel": "info"}),
        ))
        .await;
    let logs = a.of("notifications/message");
    assert_eq!(logs.len(), 2, "{:?}", a.notifications);
    assert!(logs.iter().all(|l| l["params"]["level"] == "info"));

    let a = t
        .exchange(&countdown(
            3,
            json!({"io.modelcontextprotocol/logLevel": "debug"}),
        ))
        .await;
    assert_eq!(a.of("notifications/message").len(), 4);

    let a = t
        .exchange(&countdown(
            4,
            json!({"io.modelcontextprotocol/logLevel": "error"}),
        ))
        .await;
    assert!(a.of("notifications/message").is_empty());

    let resp = t
        .send(&countdown(
            5,
            json!({"io.modelcontextprotocol/logLevel": "loud"}),
        ))
        .await;
    assert_eq!(resp.status(), 400);
    let v = error_json(resp).await;
    assert_eq!(v["error"]["code"], -32602);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("log level")
    );
}

#[tokio::test]
async fn progress_only_with_a_progress_token() {
    let t = start(config()).await;
    let a = t.exchange(&countdown(1, json!({}))).await;
    assert!(a.of("notifications/progress").is_empty());
    let a = t
        .exchange(&countdown(2, json!({"progressToken": "tok"})))
        .await;
    let p = a.of("notifications/progress");
    assert_eq!(p.len(), 2);
    assert!(p.iter().all(|n| n["params"]["progressToken"] == "tok"));
}

#[tokio::test]
async fn input_requests_need_the_client_capability() {
    let t = start(config()).await;
    // No elicitation capability.
    let resp = t.send(&tool(1, "ask", json!({}))).await;
    assert_eq!(resp.status(), 400);
    let v = error_json(resp).await;
    assert_eq!(v["id"], 1);
    assert_eq!(v["error"]["code"], -32021);
    assert_eq!(
        v["error"]["data"],
        json!({"requiredCapabilities": {"elicitation": {}}})
    );
    // With it, an InputRequiredResult.
    let b = body(
        2,
        "tools/call",
        json!({"name": "ask"}),
        json!({"elicitation": {}}),
    );
    let a = t.exchange(&b).await;
    assert_eq!(a.result()["resultType"], "input_required");
    // Sampling needs sampling, not elicitation.
    let b = body(
        3,
        "tools/call",
        json!({"name": "ask_sampling"}),
        json!({"elicitation": {}}),
    );
    let resp = t.send(&b).await;
    assert_eq!(resp.status(), 400);
    let v = error_json(resp).await;
    assert_eq!(
        v["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[tokio::test]
async fn change_notifications_cannot_go_on_a_request_stream() {
    let t = start(config()).await;
    let a = t.exchange(&tool(1, "push_list_changed", json!({}))).await;
    assert!(a.notifications.is_empty());
    assert_eq!(a.result()["structuredContent"]["refused"], true);
    let refusals = t.handler.refusals.lock().unwrap().clone();
    assert!(refusals[0].contains("subscriptions/listen"), "{refusals:?}");
}

#[tokio::test]
async fn handler_errors_without_their_own_status_are_200() {
    let t = start(config().with_json_response(true)).await;
    let resp = t.send(&tool(1, "no_such_tool", json!({}))).await;
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32602);
    assert_eq!(v["id"], 1);
}

#[tokio::test]
async fn retired_error_codes_are_not_emitted() {
    let t = start(config()).await;
    let a = t
        .exchange(&body(
            1,
            "resources/read",
            json!({"uri": "file:///missing"}),
            json!({}),
        ))
        .await;
    assert_eq!(a.status, 200);
    assert_eq!(
        a.error()["code"],
        -32602,
        "-32002 is replaced by -32602 in 2026-07-28"
    );
    assert_eq!(a.error()["message"], "Resource not found");
}

/// Each `_meta` member the engine reads is checked for its type and
/// parsed only as far as it is kept; a value that is valid JSON but not
/// Unicode text (a lone surrogate escape, which JSON's grammar allows) is
/// 400 `-32602` naming the field, like a value of the wrong type.
#[tokio::test]
async fn mistyped_or_unreadable_meta_values_are_400_naming_the_field() {
    let t = start(config()).await;
    let info = "io.modelcontextprotocol/clientInfo";
    for (meta, key, says) in [
        (
            format!(r#"{{"{PV}":7,"{CC}":{{}}}}"#),
            PV,
            "must be a string, got 7",
        ),
        (
            format!(r#"{{"{PV}":"\uD800","{CC}":{{}}}}"#),
            PV,
            "cannot be read",
        ),
        (
            format!(r#"{{"{PV}":"{V}","{CC}":[1]}}"#),
            CC,
            "must be an object, got [1]",
        ),
        (
            format!(r#"{{"{PV}":"{V}","{CC}":{{"x":"\uDC00"}}}}"#),
            CC,
            "cannot be read",
        ),
        (
            format!(r#"{{"{PV}":"{V}","{CC}":{{}},"{info}":"me"}}"#),
            info,
            "Implementation object, got \"me\"",
        ),
        (
            format!(r#"{{"{PV}":"{V}","{CC}":{{}},"{info}":{{"name":"\uD800"}}}}"#),
            info,
            "cannot be read",
        ),
        (
            format!(r#"{{"{PV}":"{V}","{CC}":{{}},"progressToken":"\uD800"}}"#),
            "progressToken",
            "cannot be read",
        ),
    ] {
        let resp = call_echo_with_meta(&t, &meta).await;
        assert_eq!(resp.status(), 400, "{meta}");
        let v = error_json(resp).await;
        assert_eq!(v["error"]["code"], -32602, "{meta}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(key) && msg.contains(says), "{meta}: {msg}");
    }
    // A string sent with escapes is read decoded; a `null` clientInfo is
    // none.
    let meta = format!(r#"{{"{PV}":"2026-07-2\u0038","{CC}":{{}}}}"#);
    assert_eq!(call_echo_with_meta(&t, &meta).await.status(), 200);
    let meta = format!(r#"{{"{PV}":"{V}","{CC}":{{}},"{info}":null}}"#);
    assert_eq!(call_echo_with_meta(&t, &meta).await.status(), 200);
}

/// A `tools/call` of `echo` whose `_meta` is the JSON text `meta` (sent
/// as written: escapes JSON allows and `serde_json` will not build).
async fn call_echo_with_meta(t: &TestServer, meta: &str) -> reqwest::Response {
    let text = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"echo","arguments":{{}},"_meta":{meta}}}}}"#
    );
    t.post()
        .header("mcp-protocol-version", V)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .body(text)
        .send()
        .await
        .unwrap()
}

/// The request's own rules on its stream, applied by the engine to what a
/// handler sends through `notify` (the context's `log` and `progress`
/// helpers check the same first, so only a raw send tests the engine):
/// *Logging*, "The server MUST NOT emit `notifications/message` for a
/// request that does not include this field", and only at or above its
/// level; *Progress*, notifications "MUST only reference tokens that: Were
/// provided in an active request"; change notifications and
/// `notifications/cancelled` are refused, not sent.
#[tokio::test]
async fn a_raw_send_is_held_to_the_requests_log_level_and_progress_token() {
    let t = start(config()).await;
    let call = |id: i64, meta: Value| {
        body(
            id,
            "tools/call",
            json!({"name": "raw_notify", "arguments": {}, "_meta": meta}),
            json!({}),
        )
    };
    let outcomes = json!([
        "ok",
        "ok",
        "ok",
        "ok",
        "ok",
        "unsupported",
        "unsupported",
        "ok"
    ]);

    let a = t
        .exchange(&call(
            1,
            json!({"io.modelcontextprotocol/logLevel": "info", "progressToken": "mine"}),
        ))
        .await;
    assert_eq!(
        a.result()["structuredContent"]["outcomes"],
        outcomes,
        "{a:?}"
    );
    let levels: Vec<_> = a
        .of("notifications/message")
        .iter()
        .map(|n| n["params"]["level"].clone())
        .collect();
    assert_eq!(levels, [json!("error")], "{a:?}");
    let tokens: Vec<_> = a
        .of("notifications/progress")
        .iter()
        .map(|n| n["params"]["progressToken"].clone())
        .collect();
    assert_eq!(tokens, [json!("mine")], "{a:?}");
    assert_eq!(a.of("com.example/custom").len(), 1, "{a:?}");
    assert_eq!(a.notifications.len(), 3, "{a:?}");

    // Neither field: no log message and no progress at all.
    let a = t.exchange(&call(2, json!({}))).await;
    assert_eq!(
        a.result()["structuredContent"]["outcomes"],
        outcomes,
        "{a:?}"
    );
    let methods: Vec<_> = a
        .notifications
        .iter()
        .map(|n| n["method"].clone())
        .collect();
    assert_eq!(methods, [json!("com.example/custom")], "{a:?}");
}
