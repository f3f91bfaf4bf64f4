//! The conformance client against a mock server of our own, its requests
//! read off the wire ([`Wire`]): what the official suite's mock servers
//! judge (`scripts/conformance.sh client`), shown under `cargo test` too.
//! The mock plays the suite's part: a tool list in two pages, a slow tool,
//! a tool that reports `isError`, one that asks for input (an elicitation
//! with a default), a resource, a prompt with a required argument, and the
//! JSON Schema tools of `json-schema-2020-12-preservation`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use http::Method;
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_test_support::TestServer;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::{
    Handler, InputRequest, InputRequired, Outcome, RequestContext, ServerDescription,
};
use mcp_transport_core::jsonrpc::{ErrorObject, Request, to_raw};
use serde_json::{Value, json};

use super::schema::{ECHO_TOOL, FOCAL_TOOL};
use super::{Options, run_with};
use crate::matrix::wire::{Exchange, Wire};

/// How long the mock's `slow` tool takes: long enough that a standalone
/// stream the client dropped at once has visibly ended before it answers.
const SLOW: Duration = Duration::from_millis(300);

fn tool(name: &str, input_schema: Value) -> Value {
    json!({ "name": name, "inputSchema": input_schema })
}

fn focal_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": { "id": { "type": "string" } },
        "properties": { "id": { "$ref": "#/$defs/id" } }
    })
}

/// The suite's part, played by hand.
struct Mock;

#[async_trait]
impl Handler for Mock {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "mock", "version": "1" }),
            capabilities: json!({ "tools": {}, "resources": {}, "prompts": {} }),
            instructions: None,
        }
    }

    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome {
        let params: Value = request
            .params
            .as_deref()
            .map_or(Value::Null, |p| serde_json::from_str(p.get()).unwrap());
        let result = match request.method.as_str() {
            "tools/list" => match params.get("cursor").and_then(Value::as_str) {
                None => json!({
                    "tools": [tool("slow", json!({
                        "type": "object",
                        "properties": { "n": { "type": "integer", "minimum": 4 } },
                        "required": ["n"]
                    }))],
                    "nextCursor": "page-2"
                }),
                Some("page-2") => json!({ "tools": [
                    tool("broken", json!({ "type": "object" })),
                    tool("ask", json!({ "type": "object" })),
                    tool(FOCAL_TOOL, focal_schema()),
                    tool(ECHO_TOOL, json!({ "type": "object" })),
                ]}),
                Some(other) => {
                    return Outcome::Error(ErrorObject::invalid_params(format!("no page {other}")));
                }
            },
            "tools/call" => {
                let name = params["name"].as_str().unwrap_or_default();
                if name == "slow" {
                    tokio::time::sleep(SLOW).await;
                }
                if name == "ask" {
                    return ask(&cx);
                }
                let text = params["arguments"].to_string();
                json!({ "content": [{ "type": "text", "text": text }], "isError": name == "broken" })
            }
            "resources/list" => json!({ "resources": [{ "uri": "file:///one", "name": "one" }] }),
            "resources/read" => json!({ "contents": [{ "uri": params["uri"], "text": "1" }] }),
            "prompts/list" => json!({ "prompts": [{ "name": "p", "arguments": [
                { "name": "topic", "required": true },
                { "name": "style" }
            ]}]}),
            "prompts/get" => json!({ "messages": [] }),
            other => return Outcome::Error(ErrorObject::method_not_found(other)),
        };
        Outcome::json(&result)
    }
}

/// The `ask` tool: an elicitation whose schema has a default, then the
/// answer's `name` said back.
fn ask(cx: &RequestContext) -> Outcome {
    let Some(answer) = cx.input_responses().and_then(|r| r.get("who")) else {
        let params = json!({
            "message": "Who is there?",
            "requestedSchema": {
                "type": "object",
                "properties": { "name": { "type": "string", "default": "Ada" } }
            }
        });
        let mut asked = InputRequired::default();
        asked.requests.insert(
            "who".into(),
            InputRequest {
                method: "elicitation/create".into(),
                params: Some(to_raw(&params).unwrap()),
            },
        );
        return Outcome::InputRequired(asked);
    };
    let answer: Value = serde_json::from_str(answer.get()).unwrap();
    let text = format!(
        "hello {}",
        answer["content"]["name"].as_str().unwrap_or("?")
    );
    Outcome::json(&json!({ "content": [{ "type": "text", "text": text }] }))
}

/// Runs `scenario` pinned to `version` against the mock; what the client
/// said and what went over the wire.
async fn run(
    scenario: &str,
    version: &str,
    context: Option<Value>,
) -> (Result<(), String>, Vec<Exchange>) {
    let wire = Wire::default();
    let config = MultiConfig {
        revisions: ProtocolVersion::STREAMABLE.to_vec(),
        legacy: mcp_negotiate::server::legacy_config().with_keepalive(None),
        modern: Default::default(),
        running: Default::default(),
    };
    let server = MultiServer::new(Arc::new(Mock), config);
    let served = TestServer::serve(wire.wrap(server.route("/mcp"))).await;
    let options = Options {
        protocol_version: Some(version.to_owned()),
        context,
        request_timeout: Duration::from_secs(10),
    };
    let outcome = run_with(&served.url(), scenario, options).await;
    (outcome, wire.exchanges())
}

/// The client's JSON-RPC requests on the wire, as `(method, params)` (not
/// its notifications, nor its responses to the server's requests).
fn requests(wire: &[Exchange]) -> Vec<(String, Value)> {
    wire.iter()
        .filter(|e| e.method == Method::POST)
        .map(Exchange::json)
        .filter(|m| m.get("method").is_some() && m.get("id").is_some())
        .map(|m| {
            (
                m["method"].as_str().unwrap_or_default().to_owned(),
                m["params"].clone(),
            )
        })
        .collect()
}

/// The tool calls on the wire, as `(name, arguments)`.
fn calls(wire: &[Exchange]) -> Vec<(String, Value)> {
    requests(wire)
        .into_iter()
        .filter(|(m, _)| m == "tools/call")
        .map(|(_, p)| {
            (
                p["name"].as_str().unwrap_or_default().to_owned(),
                p["arguments"].clone(),
            )
        })
        .collect()
}

/// The tools called, in order, a retried call (2026-07-28's MRTR) once.
fn tools_called(wire: &[Exchange]) -> Vec<String> {
    let mut names: Vec<String> = calls(wire).into_iter().map(|(n, _)| n).collect();
    names.dedup();
    names
}

/// Every tool the mock lists, in its order.
const EVERY_TOOL: [&str; 5] = ["slow", "broken", "ask", FOCAL_TOOL, ECHO_TOOL];

/// The methods of the client's requests, in order.
fn methods(wire: &[Exchange]) -> Vec<String> {
    requests(wire).into_iter().map(|(m, _)| m).collect()
}

#[tokio::test]
async fn the_default_follows_the_pages_and_calls_the_first_tool_with_made_up_arguments() {
    for version in ["2025-11-25", "2026-07-28"] {
        let (outcome, wire) = run("", version, None).await;
        outcome.unwrap_or_else(|e| panic!("{version}: {e}"));
        let lists: Vec<Value> = requests(&wire)
            .into_iter()
            .filter(|(m, _)| m == "tools/list")
            .map(|(_, p)| p)
            .collect();
        assert_eq!(lists.len(), 2, "{version}: both pages: {lists:?}");
        assert_eq!(lists[1]["cursor"], "page-2", "{version}");
        assert_eq!(
            calls(&wire),
            [("slow".to_owned(), json!({ "n": 4 }))],
            "{version}"
        );
    }
}

#[tokio::test]
async fn a_legacy_session_names_the_client_holds_its_get_stream_and_ends_with_delete() {
    let (outcome, wire) = run("", "2025-11-25", None).await;
    outcome.unwrap();
    let initialize = &requests(&wire)[0];
    assert_eq!(initialize.0, "initialize");
    assert_eq!(
        initialize.1["clientInfo"]["name"],
        "mcp-compat-conformance-client"
    );
    assert_eq!(initialize.1["capabilities"], json!({ "elicitation": {} }));
    let get = wire
        .iter()
        .find(|e| e.method == Method::GET)
        .expect("the standalone GET stream is opened");
    let call = wire
        .iter()
        .find(|e| e.is_call_of("slow"))
        .expect("the call");
    let answered = call.ended.expect("the call was answered");
    // Read to its end, the stream is open still when the slow call answers
    // (it ends with the session); a client that dropped it at once would
    // have closed it ~300 ms before.
    assert!(
        get.ended.is_none_or(|ended| ended >= answered),
        "the standalone stream ended {:?} before the call answered",
        answered - get.ended.unwrap()
    );
    let last = wire.last().unwrap();
    assert_eq!(
        last.method,
        Method::DELETE,
        "the session is deleted at the end"
    );
}

#[tokio::test]
async fn every_tool_is_called_in_order_and_an_is_error_result_is_not_a_failure() {
    let (outcome, wire) = run("tools_call", "2025-11-25", None).await;
    outcome.unwrap();
    assert_eq!(tools_called(&wire), EVERY_TOOL);
}

#[tokio::test]
async fn standard_headers_reads_each_resource_and_gets_each_prompt_with_its_required_arguments() {
    let (outcome, wire) = run("http-standard-headers", "2026-07-28", None).await;
    outcome.unwrap();
    let asked = requests(&wire);
    let read = asked
        .iter()
        .find(|(m, _)| m == "resources/read")
        .expect("resources/read");
    assert_eq!(read.1["uri"], "file:///one");
    let got = asked
        .iter()
        .find(|(m, _)| m == "prompts/get")
        .expect("prompts/get");
    assert_eq!(got.1["name"], "p");
    assert_eq!(got.1["arguments"], json!({ "topic": "conformance" }));
    assert_eq!(tools_called(&wire), EVERY_TOOL, "every tool too");
}

#[tokio::test]
async fn custom_headers_makes_the_context_s_calls_verbatim_else_calls_every_tool() {
    let context = json!({ "toolCalls": [
        { "name": "broken", "arguments": { "region": "us-west1", "v": null } },
        { "name": "slow", "arguments": { "n": 9 } }
    ]});
    let (outcome, wire) = run("http-custom-headers", "2026-07-28", Some(context)).await;
    outcome.unwrap();
    assert_eq!(
        methods(&wire)[..2],
        ["server/discover", "tools/list"],
        "the tools are listed first"
    );
    assert_eq!(
        calls(&wire),
        [
            (
                "broken".to_owned(),
                json!({ "region": "us-west1", "v": null })
            ),
            ("slow".to_owned(), json!({ "n": 9 })),
        ]
    );
    let (outcome, wire) = run("http-custom-headers", "2026-07-28", None).await;
    outcome.unwrap();
    assert_eq!(tools_called(&wire), EVERY_TOOL, "no context: every tool");
}

#[tokio::test]
async fn list_only_calls_nothing_and_echo_sends_the_focal_schema_back_verbatim() {
    let (outcome, wire) = run("json-schema-ref-no-deref", "2026-07-28", None).await;
    outcome.unwrap();
    assert_eq!(
        methods(&wire),
        ["server/discover", "tools/list", "tools/list"]
    );
    let (outcome, wire) = run("json-schema-2020-12-preservation", "2025-11-25", None).await;
    outcome.unwrap();
    assert_eq!(
        calls(&wire),
        [(ECHO_TOOL.to_owned(), json!({ "schema": focal_schema() }))]
    );
}

/// An elicitation is answered with the schema's default: on a legacy
/// session as the response to the server's `elicitation/create`, on
/// 2026-07-28 in the retried call's `inputResponses`.
#[tokio::test]
async fn an_elicitation_is_accepted_with_its_defaults_in_both_eras() {
    let accepted = json!({ "action": "accept", "content": { "name": "Ada" } });
    let (outcome, wire) = run("tools_call", "2025-11-25", None).await;
    outcome.unwrap();
    let answers: Vec<Value> = wire
        .iter()
        .filter(|e| e.method == Method::POST)
        .map(Exchange::json)
        .filter(|m| m.get("result").is_some())
        .map(|m| m["result"].clone())
        .collect();
    assert_eq!(
        answers,
        std::slice::from_ref(&accepted),
        "the client's responses"
    );
    let (outcome, wire) = run("tools_call", "2026-07-28", None).await;
    outcome.unwrap();
    let retried: Vec<Value> = requests(&wire)
        .into_iter()
        .filter(|(m, p)| m == "tools/call" && p["name"] == "ask")
        .map(|(_, p)| p["inputResponses"]["who"].clone())
        .collect();
    assert_eq!(
        retried,
        [Value::Null, accepted],
        "asked, then retried with the answer"
    );
    let said = wire.iter().any(|e| {
        e.is_call_of("ask") && String::from_utf8_lossy(&e.response_body).contains("hello Ada")
    });
    assert!(said, "the tool got the answer");
}
