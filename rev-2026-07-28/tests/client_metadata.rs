//! Per-request metadata: `_meta` in params and the headers that mirror it
//! (2026-07-28 *Streamable HTTP*, "Sending Messages" and "Request Metadata").

mod client_common;

use client_common::*;
use mcp_rev_2026_07_28::client::ModernClient;
use mcp_transport_core::handler::LogLevel;
use mcp_transport_core::transport::{RequestOptions, Transport};
use serde_json::{Value, json};

/// Answers every request with an empty complete result (JSON).
fn ok_server(seen: &Seen) -> axum::response::Response {
    if seen.rpc_method() == Some("tools/list") {
        return json_ok(&result(
            &seen.id(),
            json!({"resultType": "complete", "tools": [{
                "name": "execute_sql",
                "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "count": {"type": "integer", "x-mcp-header": "Count"},
                    "dry": {"type": "boolean", "x-mcp-header": "Dry"},
                    "note": {"type": ["string", "null"], "x-mcp-header": "Note"},
                    "target": {"type": "object", "properties": {
                        "tenant": {"type": "string", "x-mcp-header": "Tenant"}
                    }},
                    "query": {"type": "string"}
                }}
            }]}),
        ));
    }
    json_ok(&result(&seen.id(), json!({"resultType": "complete"})))
}

async fn call(client: &ModernClient, method: &str, p: Value) {
    answer(client, method, params(p)).await.unwrap();
}

#[tokio::test]
async fn every_request_carries_meta_and_mirroring_headers() {
    let fake = Fake::start(ok_server).await;
    let client = ModernClient::new(
        fake.config()
            .with_client_info(Some(json!({"name": "ExampleClient", "version": "1.0.0"})))
            .with_capabilities(json!({"elicitation": {}}))
            .with_log_level(Some(LogLevel::Info)),
    )
    .unwrap();
    call(
        &client,
        "tools/call",
        json!({"name": "get_weather", "arguments": {}}),
    )
    .await;
    call(&client, "prompts/get", json!({"name": "code_review"})).await;
    call(
        &client,
        "resources/read",
        json!({"uri": "file:///projects/myapp/config.json"}),
    )
    .await;
    call(&client, "server/discover", json!({})).await;
    let seen = fake.seen();
    assert_eq!(seen.len(), 4);
    let names = [
        Some("get_weather"),
        Some("code_review"),
        Some("file:///projects/myapp/config.json"),
        None,
    ];
    for (s, name) in seen.iter().zip(names) {
        assert_eq!(s.method, http::Method::POST);
        let accept = s.header("accept").unwrap();
        assert!(accept.contains("application/json") && accept.contains("text/event-stream"));
        assert_eq!(s.header("content-type"), Some("application/json"));
        assert_eq!(s.header("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(s.version(), Some("2026-07-28"), "header = _meta version");
        assert_eq!(s.header("mcp-method"), s.rpc_method());
        assert_eq!(s.header("mcp-name"), name);
        assert_eq!(
            s.meta("io.modelcontextprotocol/clientCapabilities"),
            Some(&json!({"elicitation": {}}))
        );
        assert_eq!(
            s.meta("io.modelcontextprotocol/clientInfo"),
            Some(&json!({"name": "ExampleClient", "version": "1.0.0"}))
        );
        assert_eq!(
            s.meta("io.modelcontextprotocol/logLevel"),
            Some(&json!("info"))
        );
        assert!(s.header("mcp-session-id").is_none());
        assert!(s.header("last-event-id").is_none());
    }
    // Fresh integer ids.
    let ids: Vec<Value> = seen.iter().map(Seen::id).collect();
    assert_eq!(ids, [json!(1), json!(2), json!(3), json!(4)]);
}

#[tokio::test]
async fn client_info_and_log_level_are_omitted_when_not_configured() {
    let fake = Fake::start(ok_server).await;
    let client = ModernClient::new(fake.config().with_client_info(None)).unwrap();
    call(&client, "tools/list", json!({})).await;
    let s = &fake.seen()[0];
    assert!(s.meta("io.modelcontextprotocol/clientInfo").is_none());
    assert!(s.meta("io.modelcontextprotocol/logLevel").is_none());
    // clientCapabilities is required: {} declares none.
    assert_eq!(
        s.meta("io.modelcontextprotocol/clientCapabilities"),
        Some(&json!({}))
    );
}

#[tokio::test]
async fn caller_meta_is_kept_and_progress_token_attached() {
    let fake = Fake::start(ok_server).await;
    let client = fake.client();
    client
        .request(
            "tools/call",
            params(json!({"name": "t", "_meta": {"traceparent": "00-abc-def-01"}})),
            RequestOptions {
                progress: true,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .response()
        .await
        .unwrap();
    let s = &fake.seen()[0];
    assert_eq!(s.meta("traceparent"), Some(&json!("00-abc-def-01")));
    assert!(s.meta("progressToken").is_some_and(Value::is_string));
    assert_eq!(s.version(), Some("2026-07-28"));
}

#[tokio::test]
async fn name_header_is_encoded_when_not_plain_safe() {
    let fake = Fake::start(ok_server).await;
    let client = fake.client();
    call(&client, "tools/call", json!({"name": "météo"})).await;
    call(&client, "resources/read", json!({"uri": "=?base64?x?="})).await;
    call(&client, "prompts/get", json!({"name": " padded "})).await;
    let seen = fake.seen();
    assert_eq!(seen[0].header("mcp-name"), Some("=?base64?bcOpdMOpbw==?="));
    assert_eq!(
        seen[1].header("mcp-name"),
        Some("=?base64?PT9iYXNlNjQ/eD89?=")
    );
    assert_eq!(seen[2].header("mcp-name"), Some("=?base64?IHBhZGRlZCA=?="));
    for s in &seen {
        let raw = s.headers.get("mcp-name").unwrap().as_bytes();
        let decoded = mcp_rev_2026_07_28::headers::decode_value(raw).unwrap();
        let body = s.params().get("name").or(s.params().get("uri")).unwrap();
        assert_eq!(body.as_str(), Some(decoded.as_str()));
    }
}

#[tokio::test]
async fn param_headers_come_from_the_cached_schema() {
    let fake = Fake::start(ok_server).await;
    let client = fake.client();
    // Before tools/list: no schema known, no Mcp-Param headers.
    call(
        &client,
        "tools/call",
        json!({"name": "execute_sql", "arguments": {"region": "us-west1"}}),
    )
    .await;
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    call(
        &client,
        "tools/call",
        json!({"name": "execute_sql", "arguments": {
            "region": "Hello, 世界", "count": 42, "dry": true, "note": null,
            "target": {"tenant": "acme-corp"}, "query": "SELECT 1"
        }}),
    )
    .await;
    call(
        &client,
        "tools/call",
        json!({"name": "execute_sql", "arguments": {"region": " padded ", "count": -7, "dry": false}}),
    )
    .await;
    let calls = fake.rpc("tools/call");
    assert!(
        calls[0]
            .headers
            .keys()
            .all(|k| !k.as_str().starts_with("mcp-param-"))
    );
    let h = |i: usize, n: &str| calls[i].header(n).map(str::to_owned);
    assert_eq!(
        h(1, "mcp-param-region").as_deref(),
        Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
    );
    assert_eq!(h(1, "mcp-param-count").as_deref(), Some("42"));
    assert_eq!(h(1, "mcp-param-dry").as_deref(), Some("true"));
    assert_eq!(h(1, "mcp-param-note"), None, "null omits the header");
    assert_eq!(h(1, "mcp-param-tenant").as_deref(), Some("acme-corp"));
    assert_eq!(
        h(2, "mcp-param-region").as_deref(),
        Some("=?base64?IHBhZGRlZCA=?=")
    );
    assert_eq!(h(2, "mcp-param-count").as_deref(), Some("-7"));
    assert_eq!(h(2, "mcp-param-dry").as_deref(), Some("false"));
    assert_eq!(h(2, "mcp-param-tenant"), None, "absent omits the header");
}

#[tokio::test]
async fn notifications_are_posted_with_headers_and_cancelled_is_refused() {
    let fake = Fake::start(|_| status(http::StatusCode::ACCEPTED, "")).await;
    let client = fake.client();
    let n =
        mcp_transport_core::jsonrpc::Notification::new("notifications/custom", Some(&json!({})))
            .unwrap();
    client.notify(n).await.unwrap();
    let s = &fake.seen()[0];
    assert_eq!(s.header("mcp-method"), Some("notifications/custom"));
    assert_eq!(s.header("mcp-protocol-version"), Some("2026-07-28"));
    let cancel = mcp_transport_core::jsonrpc::Notification::new(
        "notifications/cancelled",
        Some(&json!({"requestId": 1})),
    )
    .unwrap();
    let err = client.notify(cancel).await.unwrap_err();
    assert!(
        matches!(
            err,
            mcp_transport_core::transport::TransportError::Unsupported { .. }
        ),
        "{err}"
    );
    assert_eq!(
        fake.seen().len(),
        1,
        "nothing posted for notifications/cancelled"
    );
    client.close().await.unwrap();
    let n =
        mcp_transport_core::jsonrpc::Notification::new("notifications/custom", Some(&json!({})))
            .unwrap();
    let err = client.notify(n).await.unwrap_err();
    assert!(
        matches!(err, mcp_transport_core::transport::TransportError::Closed),
        "{err}"
    );
    assert_eq!(fake.seen().len(), 1, "nothing posted after close");
}

#[tokio::test]
async fn session_ids_from_the_server_are_never_echoed() {
    let fake = Fake::start(|seen| {
        let mut r = json_ok(&result(&seen.id(), json!({})));
        r.headers_mut()
            .insert("mcp-session-id", "sess-1".parse().unwrap());
        r
    })
    .await;
    let client = fake.client();
    call(&client, "tools/list", json!({})).await;
    call(&client, "tools/list", json!({})).await;
    assert!(
        fake.seen()
            .iter()
            .all(|s| s.header("mcp-session-id").is_none())
    );
}

#[tokio::test]
async fn legacy_versions_are_refused_by_the_configuration() {
    let config = mcp_rev_2026_07_28::client::ModernClientConfig::new("http://127.0.0.1:1/mcp")
        .with_versions(vec![mcp_transport_core::ProtocolVersion::V2025_11_25]);
    let err = ModernClient::new(config).unwrap_err();
    assert!(err.to_string().contains("2025-11-25"), "{err}");
}

#[tokio::test]
async fn a_method_that_cannot_be_a_header_value_is_refused_before_sending() {
    let fake = Fake::start(|seen| json_ok(&result(&seen.id(), json!({})))).await;
    let client = fake.client();
    let err = client
        .request(
            "tools/\u{7f}list",
            None,
            mcp_transport_core::transport::RequestOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            mcp_transport_core::transport::TransportError::Unsupported { what, .. }
                if what.contains("Mcp-Method")
        ),
        "the error says which header could not carry it: {err}"
    );
    assert!(fake.seen().is_empty());
}
