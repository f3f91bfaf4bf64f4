//! `x-mcp-header` tool validation in `tools/list` results and the
//! `HeaderMismatch` (-32020) recovery (*Streamable HTTP*, "Schema Extension"
//! and "Client Behavior").

mod client_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use client_common::*;
use http::StatusCode;

use serde_json::{Value, json};

fn tool(name: &str, properties: Value) -> Value {
    json!({"name": name, "inputSchema": {"type": "object", "properties": properties}})
}

fn mixed_tools() -> Value {
    json!([
        tool("ok", json!({"region": {"type": "string", "x-mcp-header": "Region"}})),
        tool("number_type", json!({"v": {"type": "number", "x-mcp-header": "V"}})),
        tool("object_type", json!({"v": {"type": "object", "x-mcp-header": "V"}})),
        tool("bad_name", json!({"v": {"type": "string", "x-mcp-header": "My Region"}})),
        tool("colon", json!({"v": {"type": "string", "x-mcp-header": "Region:Primary"}})),
        tool("empty", json!({"v": {"type": "string", "x-mcp-header": ""}})),
        tool("dup", json!({
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "REGION"}
        })),
        tool("in_items", json!({"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "V"}}})),
        tool("in_oneof", json!({"v": {"oneOf": [{"type": "string", "x-mcp-header": "V"}]}})),
        tool("nested_ok", json!({"o": {"type": "object", "properties": {"t": {"type": "string", "x-mcp-header": "Tenant"}}}})),
        {"name": "no_schema_headers", "inputSchema": {"type": "object"}}
    ])
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn invalid_tools_are_dropped_from_tools_list_results() {
    let fake = Fake::start(|seen| {
        json_ok(&result(
            &seen.id(),
            json!({"resultType": "complete", "tools": mixed_tools()}),
        ))
    })
    .await;
    let client = fake.client();
    // Through the Transport trait.
    let response = answer(&client, "tools/list", None).await.unwrap();
    let value = result_of(&response);
    let listed = value["tools"].as_array().unwrap();
    assert_eq!(names(listed), ["ok", "nested_ok", "no_schema_headers"]);
    // Through list_tools.
    let tools = client.list_tools().await.unwrap();
    assert_eq!(names(&tools), ["ok", "nested_ok", "no_schema_headers"]);
    assert!(client.tool_header_params("ok").is_some());
    assert!(client.tool_header_params("number_type").is_none());
}

#[tokio::test]
async fn list_tools_follows_cursors_and_replaces_the_cache() {
    let generation = Arc::new(AtomicUsize::new(0));
    let g = generation.clone();
    let fake = Fake::start(move |seen| {
        let page = seen.params().get("cursor").and_then(Value::as_str);
        let body = match (g.load(Ordering::SeqCst), page) {
            (0, None) => json!({"tools": [tool("a", json!({"r": {"type": "string", "x-mcp-header": "R"}}))], "nextCursor": "p2"}),
            (0, Some("p2")) => json!({"tools": [tool("b", json!({}))]}),
            _ => json!({"tools": [tool("b", json!({}))]}),
        };
        json_ok(&result(&seen.id(), body))
    })
    .await;
    let client = fake.client();
    assert_eq!(names(&client.list_tools().await.unwrap()), ["a", "b"]);
    assert!(client.tool_header_params("a").is_some());
    generation.store(1, Ordering::SeqCst);
    assert_eq!(names(&client.list_tools().await.unwrap()), ["b"]);
    assert!(
        client.tool_header_params("a").is_none(),
        "a full refresh forgets vanished tools"
    );
}

#[tokio::test]
async fn header_mismatch_refreshes_tools_and_retries_once() {
    // The server requires Mcp-Param-Region; the client has never listed tools.
    let fake = Fake::start(|seen| match seen.rpc_method() {
        Some("tools/list") => json_ok(&result(
            &seen.id(),
            json!({"tools": [tool("execute_sql", json!({"region": {"type": "string", "x-mcp-header": "Region"}}))]}),
        )),
        Some("tools/call") => {
            if seen.header("mcp-param-region") == Some("us-west1") {
                json_ok(&result(&seen.id(), json!({"resultType": "complete", "content": []})))
            } else {
                status_json(
                    StatusCode::BAD_REQUEST,
                    &rpc_error(&seen.id(), -32020, "Header mismatch: Mcp-Param-Region missing", None),
                )
            }
        }
        _ => status(StatusCode::NOT_FOUND, ""),
    })
    .await;
    let client = fake.client();
    let response = answer(&client, "tools/call",
            params(json!({"name": "execute_sql", "arguments": {"region": "us-west1", "query": "SELECT 1"}}))).await
        .unwrap();
    assert!(response.payload.is_ok(), "{response:?}");
    let seen = fake.seen();
    let methods: Vec<&str> = seen.iter().map(|s| s.rpc_method().unwrap()).collect();
    assert_eq!(methods, ["tools/call", "tools/list", "tools/call"]);
    assert_ne!(seen[0].id(), seen[2].id(), "the retry has a new id");
    assert_eq!(seen[0].params()["arguments"], seen[2].params()["arguments"]);
    assert_eq!(seen[2].header("mcp-param-region"), Some("us-west1"));
}

#[tokio::test]
async fn a_second_header_mismatch_is_returned_not_retried_forever() {
    let fake = Fake::start(|seen| match seen.rpc_method() {
        Some("tools/list") => json_ok(&result(&seen.id(), json!({"tools": []}))),
        _ => status_json(
            StatusCode::BAD_REQUEST,
            &rpc_error(&seen.id(), -32020, "Header mismatch", None),
        ),
    })
    .await;
    let client = fake.client();
    let response = answer(&client, "tools/call", params(json!({"name": "x"})))
        .await
        .unwrap();
    assert_eq!(response.payload.unwrap_err().code, -32020);
    assert_eq!(fake.rpc("tools/call").len(), 2);
    assert_eq!(fake.rpc("tools/list").len(), 1);
}

#[tokio::test]
async fn header_mismatch_on_other_methods_is_returned_as_is() {
    let fake = Fake::start(|seen| {
        status_json(
            StatusCode::BAD_REQUEST,
            &rpc_error(&seen.id(), -32020, "Header mismatch: Mcp-Name", None),
        )
    })
    .await;
    let client = fake.client();
    let response = answer(&client, "prompts/get", params(json!({"name": "p"})))
        .await
        .unwrap();
    assert_eq!(response.payload.unwrap_err().code, -32020);
    assert_eq!(fake.seen().len(), 1);
}
