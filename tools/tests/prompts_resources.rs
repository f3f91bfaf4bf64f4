//! Typed prompts and fixed resources: listed with generated arguments,
//! answered as every revision's *Prompts* and *Resources* say, errors
//! included.

use std::sync::Arc;

use async_trait::async_trait;
use mcp_tools::{NoArgs, PromptMessage, Resource, Tools};
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::handler::{
    ClientDescription, Handler, LogLevel, Outcome, RequestContext, RequestSink, SendError,
};
use mcp_transport_core::jsonrpc::{
    ErrorObject, INVALID_PARAMS, Notification, RESOURCE_NOT_FOUND, Request, RequestId, to_raw,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

struct Sink;

#[async_trait]
impl RequestSink for Sink {
    async fn send(&self, _: Notification) -> Result<(), SendError> {
        Ok(())
    }
    fn log_level(&self) -> Option<LogLevel> {
        None
    }
}

fn cx(rev: V) -> RequestContext {
    let client = Arc::new(ClientDescription {
        info: None,
        capabilities: json!({}),
    });
    RequestContext::new(
        rev,
        RequestId::Number(1),
        client,
        CancellationToken::new(),
        Arc::new(Sink),
    )
}

async fn ask(h: &Tools, rev: V, method: &str, params: Value) -> Outcome {
    let request = Request {
        id: RequestId::Number(1),
        method: method.into(),
        params: Some(to_raw(&params).unwrap()),
    };
    h.handle(request, cx(rev)).await
}

fn result(o: Outcome) -> Value {
    match o {
        Outcome::Result(r) => serde_json::from_str(r.get()).unwrap(),
        other => panic!("expected a result, got {other:?}"),
    }
}

fn error(o: Outcome) -> ErrorObject {
    match o {
        Outcome::Error(e) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Arguments of the greeting prompt.
#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Whom to greet.
    name: String,
    /// How (optional).
    style: Option<String>,
}

fn server() -> Tools {
    Tools::new()
        .prompt("greet", "Greets someone", |a: GreetArgs, _cx| async move {
            let style = a.style.unwrap_or_else(|| "warmly".into());
            vec![
                PromptMessage::user(format!("Greet {} {style}.", a.name)),
                PromptMessage::assistant("Hello!"),
            ]
        })
        .prompt("plain", "Takes nothing", |_: NoArgs, _cx| async {
            "Say hi."
        })
        .prompt("broken", "Always fails", |_: NoArgs, _cx| async {
            Err::<String, _>(ErrorObject::internal("the prompt store is down"))
        })
        .resource(
            Resource::text("test://note", "note", |_cx| async {
                Ok("a note".to_owned())
            })
            .mime_type("text/plain")
            .title("A note"),
        )
}

#[tokio::test]
async fn prompts_are_listed_with_arguments_from_the_type() {
    let list = result(ask(&server(), V::V2025_11_25, "prompts/list", json!({})).await);
    assert_eq!(
        list["prompts"][0],
        json!({
            "name": "greet",
            "description": "Greets someone",
            "arguments": [
                { "name": "name", "description": "Whom to greet.", "required": true },
                { "name": "style", "description": "How (optional)." }
            ]
        })
    );
    // No arguments: no `arguments` member.
    assert_eq!(
        list["prompts"][1],
        json!({ "name": "plain", "description": "Takes nothing" })
    );
    let caps = server().describe().capabilities;
    assert!(
        caps["prompts"].is_object() && caps["resources"].is_object(),
        "{caps}"
    );
}

#[tokio::test]
async fn prompts_get_builds_the_messages_and_refuses_bad_calls_with_invalid_params() {
    let s = server();
    for rev in [V::V2025_03_26, V::V2025_11_25, V::V2026_07_28] {
        let got = result(
            ask(
                &s,
                rev.clone(),
                "prompts/get",
                json!({ "name": "greet", "arguments": { "name": "Ada" } }),
            )
            .await,
        );
        assert_eq!(
            got,
            json!({ "messages": [
                { "role": "user", "content": { "type": "text", "text": "Greet Ada warmly." } },
                { "role": "assistant", "content": { "type": "text", "text": "Hello!" } }
            ] })
        );
        let plain = result(ask(&s, rev.clone(), "prompts/get", json!({ "name": "plain" })).await);
        assert_eq!(plain["messages"][0]["content"]["text"], "Say hi.");
        // *Prompts*, "Error Handling": invalid name, missing required
        // arguments: -32602 in every revision; internal errors as given.
        let unknown = error(ask(&s, rev.clone(), "prompts/get", json!({ "name": "nope" })).await);
        assert_eq!(unknown.code, INVALID_PARAMS);
        assert!(unknown.message.contains("nope"), "{unknown:?}");
        let missing = error(
            ask(
                &s,
                rev.clone(),
                "prompts/get",
                json!({ "name": "greet", "arguments": {} }),
            )
            .await,
        );
        assert_eq!(missing.code, INVALID_PARAMS);
        assert!(missing.message.contains("name"), "{missing:?}");
        let not_string = error(
            ask(
                &s,
                rev.clone(),
                "prompts/get",
                json!({ "name": "greet", "arguments": { "name": 7 } }),
            )
            .await,
        );
        assert_eq!(not_string.code, INVALID_PARAMS);
        let not_object = error(
            ask(
                &s,
                rev.clone(),
                "prompts/get",
                json!({ "name": "greet", "arguments": ["Ada"] }),
            )
            .await,
        );
        assert_eq!(not_object.code, INVALID_PARAMS);
        let broken = error(ask(&s, rev, "prompts/get", json!({ "name": "broken" })).await);
        assert_eq!(broken.code, -32603);
    }
}

#[tokio::test]
async fn resources_are_listed_and_read_and_not_found_follows_the_revision() {
    let s = server();
    let list = result(ask(&s, V::V2025_06_18, "resources/list", json!({})).await);
    assert_eq!(
        list,
        json!({ "resources": [
            { "uri": "test://note", "name": "note", "title": "A note", "mimeType": "text/plain" }
        ] })
    );
    let read = result(
        ask(
            &s,
            V::V2026_07_28,
            "resources/read",
            json!({ "uri": "test://note" }),
        )
        .await,
    );
    assert_eq!(
        read,
        json!({ "contents": [{ "uri": "test://note", "mimeType": "text/plain", "text": "a note" }] })
    );
    // 2025-03-26 .. 2025-11-25: -32002; 2026-07-28: -32602 (SEP-2164);
    // both with the URI in `data`.
    for (rev, code) in [
        (V::V2025_03_26, RESOURCE_NOT_FOUND),
        (V::V2025_11_25, RESOURCE_NOT_FOUND),
        (V::V2026_07_28, INVALID_PARAMS),
    ] {
        let e = error(
            ask(
                &s,
                rev.clone(),
                "resources/read",
                json!({ "uri": "test://gone" }),
            )
            .await,
        );
        assert_eq!(e.code, code, "{rev}");
        let data: Value = serde_json::from_str(e.data.as_ref().unwrap().get()).unwrap();
        assert_eq!(data, json!({ "uri": "test://gone" }), "{rev}");
    }
}

#[tokio::test]
async fn without_prompts_or_resources_those_methods_go_to_the_fallback() {
    let tools = Tools::new();
    assert!(tools.describe().capabilities.get("prompts").is_none());
    for method in [
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/read",
    ] {
        let e = error(ask(&tools, V::V2025_11_25, method, json!({})).await);
        assert_eq!(e.code, -32601, "{method}");
    }
}
