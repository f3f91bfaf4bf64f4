//! Test support: the multi-revision server with the test handler, on
//! 127.0.0.1:0 (the generic pieces come from `mcp-test-support`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_test_support::handler::{Call, method_fn, tool_fn};
use mcp_test_support::{ScriptedInput, TestHandler};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::{InputRequest, InputRequired, Outcome};
use mcp_transport_core::jsonrpc::to_raw;
use serde_json::{Value, json};

/// Tools: `echo {text}` and `ask {}` (asks the client for a name by
/// elicitation, then says hello); results are text content.
pub fn test_handler() -> TestHandler {
    TestHandler::builder("negotiate-test")
        .version("1.0.0")
        .capabilities(json!({ "tools": {} }))
        .method(
            "tools/list",
            method_fn(|_, _, _| async {
                Outcome::json(&json!({ "tools": [
                    { "name": "echo", "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } } },
                    { "name": "ask", "inputSchema": { "type": "object" } }
                ]}))
            }),
        )
        .tool(
            "echo",
            tool_fn(|c: Call| async move { text(c.args["text"].as_str().unwrap_or_default()) }),
        )
        .tool("ask", tool_fn(ask))
        .build()
}

fn text(s: &str) -> Outcome {
    Outcome::json(&json!({ "content": [{ "type": "text", "text": s }] }))
}

async fn ask(c: Call) -> Outcome {
    if let Some(answer) = c.cx.input_responses().and_then(|r| r.get("name")) {
        let v: Value = serde_json::from_str(answer.get()).unwrap_or(Value::Null);
        let name = v["content"]["name"].as_str().unwrap_or("?");
        return text(&format!("hello, {name}"));
    }
    let mut requests = BTreeMap::new();
    requests.insert(
        "name".to_owned(),
        InputRequest {
            method: "elicitation/create".into(),
            params: to_raw(&json!({
                "message": "name?",
                "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } }
            }))
            .ok(),
        },
    );
    Outcome::InputRequired(InputRequired {
        requests,
        state: Some("asked-once".into()),
    })
}

/// Answers every elicitation with the name "Ada".
pub fn ada() -> Arc<ScriptedInput> {
    ScriptedInput::ada()
}

/// A running server; stopped on drop.
pub struct Running {
    pub url: String,
    pub addr: SocketAddr,
    pub server: MultiServer,
    _http: mcp_test_support::TestServer,
}

/// Spawns a multi-revision server with [`test_handler`] on 127.0.0.1:0.
pub async fn spawn(revisions: &[ProtocolVersion]) -> Running {
    let server = MultiServer::new(
        Arc::new(test_handler()),
        MultiConfig::revisions(revisions.to_vec()),
    );
    let http = mcp_test_support::TestServer::serve(server.route("/mcp")).await;
    Running {
        url: http.url(),
        addr: http.addr(),
        server,
        _http: http,
    }
}
