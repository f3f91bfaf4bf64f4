//! Test support: a small handler and a server spawner.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use async_trait::async_trait;
use axum::serve::ListenerExt;
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::{
    Handler, InputRequest, InputRequired, Outcome, RequestContext, ServerDescription,
};
use mcp_transport_core::jsonrpc::{ErrorObject, Request, to_raw};
use mcp_transport_core::transport::InputHandler;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// Tools: `echo {text}` and `ask {}` (asks the client for a name by elicitation).
pub struct TestHandler;

fn text(s: &str) -> Outcome {
    Outcome::json(&json!({ "content": [{ "type": "text", "text": s }] }))
}

#[async_trait]
impl Handler for TestHandler {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "negotiate-test", "version": "1.0.0" }),
            capabilities: json!({ "tools": {} }),
            instructions: None,
        }
    }

    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome {
        let params: Value = request
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        match (request.method.as_str(), params["name"].as_str()) {
            ("tools/list", _) => Outcome::json(&json!({ "tools": [
                { "name": "echo", "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } } },
                { "name": "ask", "inputSchema": { "type": "object" } }
            ]})),
            ("tools/call", Some("echo")) => {
                text(params["arguments"]["text"].as_str().unwrap_or_default())
            }
            ("tools/call", Some("ask")) => {
                if let Some(answer) = cx.input_responses.as_ref().and_then(|r| r.get("name")) {
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
            (m, _) => Outcome::Error(ErrorObject::method_not_found(m)),
        }
    }
}

/// Answers every elicitation with the name "Ada".
pub struct Ada;

#[async_trait]
impl InputHandler for Ada {
    async fn handle(
        &self,
        method: &str,
        _: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match method {
            "elicitation/create" => {
                Ok(to_raw(&json!({ "action": "accept", "content": { "name": "Ada" } })).unwrap())
            }
            m => Err(ErrorObject::method_not_found(m)),
        }
    }
}

/// A running server; aborted on drop.
pub struct Running {
    pub url: String,
    pub addr: SocketAddr,
    pub server: MultiServer,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Spawns a multi-revision server with `TestHandler` on 127.0.0.1:0.
pub async fn spawn(revisions: &[ProtocolVersion]) -> Running {
    let server = MultiServer::new(
        Arc::new(TestHandler),
        MultiConfig::revisions(revisions.to_vec()),
    );
    let app = server.route("/mcp");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = listener.tap_io(|t| {
        let _ = t.set_nodelay(true);
    });
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Running {
        url: format!("http://{addr}/mcp"),
        addr,
        server,
        task,
    }
}
