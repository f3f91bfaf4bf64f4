//! The typed layer per revision: generated schemas in each revision's
//! dialect, structured results where the revision has them, and argument
//! errors as each revision's *Tools* "Error Handling" says.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use mcp_tools::{CallToolResult, Elicitation, Json, NoArgs, Tool, ToolContext, ToolError, Tools};
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::handler::{
    ClientDescription, Execution, Handler, LogLevel, Outcome, RequestContext, RequestSink,
    SendError, ServerDescription,
};
use mcp_transport_core::jsonrpc::{Notification, Request, RequestId};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
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

fn cx_with(rev: V, cancel: CancellationToken) -> RequestContext {
    let client = Arc::new(ClientDescription {
        info: None,
        capabilities: json!({ "elicitation": {} }),
    });
    RequestContext::new(rev, RequestId::Number(1), client, cancel, Arc::new(Sink))
}

fn cx(rev: V) -> RequestContext {
    cx_with(rev, CancellationToken::new())
}

/// Two numbers.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first.
    a: f64,
    /// The second.
    b: f64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: f64,
}

#[derive(Deserialize, JsonSchema)]
struct Range {
    n: u64,
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

fn tools() -> Tools {
    Tools::new()
        .tool("add", "Adds two numbers", |a: AddArgs, _cx| async move {
            Json(Sum { sum: a.a + a.b })
        })
        .tool("digits", "The digits of n", |r: Range, _cx| async move {
            if r.n > 1000 {
                return Err(ToolError::invalid_arguments("n must be <= 1000"));
            }
            let digits: Vec<u32> =
                r.n.to_string()
                    .chars()
                    .filter_map(|c| c.to_digit(10))
                    .collect();
            Ok(Json(digits))
        })
        .tool("hello", "Greets", |_: NoArgs, _cx| async move { "hello" })
        .tool("broken", "Fails", |_: NoArgs, _cx| async move {
            Err::<String, _>(ToolError::failed("it broke"))
        })
        .tool(
            "ask",
            "Asks a name",
            |_: NoArgs, cx: ToolContext| async move {
                match cx.elicit::<Name>("name", "Your name?")? {
                    Elicitation::Accept(n) => Ok(format!("hello, {}", n.name)),
                    Elicitation::Refused(action) => Ok(format!("no name ({action})")),
                }
            },
        )
        .register(
            Tool::new("nap", "Sleeps", |r: Range, cx: ToolContext| async move {
                cx.sleep(Duration::from_millis(r.n)).await?;
                Ok::<_, ToolError>(CallToolResult::text("rested"))
            })
            .execution(Execution::MayBeLong)
            .title("Nap"),
        )
}

async fn call(tools: &Tools, rev: V, name: &str, args: Value) -> Outcome {
    let req = Request::new(
        1,
        "tools/call",
        Some(&json!({ "name": name, "arguments": args })),
    )
    .unwrap();
    tools.handle(req, cx(rev)).await
}

fn result(o: Outcome) -> Value {
    match o {
        Outcome::Result(r) => serde_json::from_str(r.get()).unwrap(),
        other => panic!("expected a result, got {other:?}"),
    }
}

fn error(o: Outcome) -> (i64, String) {
    match o {
        Outcome::Error(e) => (e.code, e.message),
        other => panic!("expected an error, got {other:?}"),
    }
}

async fn list(tools: &Tools, rev: V) -> BTreeMap<String, Value> {
    let req = Request::new(1, "tools/list", Some(&json!({}))).unwrap();
    let v = result(tools.handle(req, cx(rev)).await);
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()))
        .collect()
}

#[tokio::test]
async fn schemas_are_generated_in_each_revisions_dialect() {
    let t = tools();
    for rev in V::STREAMABLE {
        let l = list(&t, rev.clone()).await;
        let add = &l["add"];
        assert_eq!(add["description"], "Adds two numbers");
        let input = &add["inputSchema"];
        assert_eq!(input["type"], "object", "{rev}");
        assert_eq!(input["required"], json!(["a", "b"]), "{rev}");
        assert_eq!(
            input["properties"]["a"]["description"], "The first.",
            "{rev}"
        );
        let dialect = if rev >= V::V2025_11_25 {
            "https://json-schema.org/draft/2020-12/schema"
        } else {
            "http://json-schema.org/draft-07/schema#"
        };
        assert_eq!(input["$schema"], dialect, "{rev}");
        // outputSchema exists from 2025-06-18; an array output only where
        // any schema is allowed (2026-07-28).
        let has_output = rev >= V::V2025_06_18;
        assert_eq!(add.get("outputSchema").is_some(), has_output, "{rev}");
        if has_output {
            assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "number");
            assert_eq!(add["outputSchema"]["$schema"], dialect);
        }
        assert_eq!(
            l["digits"].get("outputSchema").is_some(),
            rev >= V::V2026_07_28,
            "{rev}"
        );
        assert_eq!(l["hello"]["inputSchema"]["type"], "object");
        assert!(l["hello"].get("outputSchema").is_none());
        assert_eq!(l["nap"]["title"], "Nap");
    }
    let names: Vec<_> = t.names().collect();
    assert_eq!(names, ["add", "digits", "hello", "broken", "ask", "nap"]);
}

#[tokio::test]
async fn structured_results_follow_the_revision() {
    let t = tools();
    let r = result(call(&t, V::V2025_03_26, "add", json!({ "a": 2, "b": 3 })).await);
    assert_eq!(
        r,
        json!({ "content": [{ "type": "text", "text": "{\"sum\":5.0}" }] })
    );
    for rev in [V::V2025_06_18, V::V2025_11_25, V::V2026_07_28] {
        let r = result(call(&t, rev.clone(), "add", json!({ "a": 2, "b": 3 })).await);
        assert_eq!(r["structuredContent"], json!({ "sum": 5.0 }), "{rev}");
        assert_eq!(r["content"][0]["text"], "{\"sum\":5.0}", "{rev}");
    }
    let r = result(call(&t, V::V2025_11_25, "digits", json!({ "n": 42 })).await);
    assert!(r.get("structuredContent").is_none(), "{r}");
    assert_eq!(r["content"][0]["text"], "[4,2]");
    let r = result(call(&t, V::V2026_07_28, "digits", json!({ "n": 42 })).await);
    assert_eq!(r["structuredContent"], json!([4, 2]));
}

#[tokio::test]
async fn invalid_arguments_are_protocol_errors_before_2025_11_25_and_tool_errors_after() {
    let t = tools();
    let bad = [
        ("add", json!({ "a": "two", "b": 3 })),
        ("add", json!({ "a": 1 })),
        ("digits", json!({ "n": -1 })),
        ("digits", json!({ "n": 5000 })),
    ];
    for (name, args) in bad {
        for rev in [V::V2025_03_26, V::V2025_06_18] {
            let (code, msg) = error(call(&t, rev.clone(), name, args.clone()).await);
            assert_eq!(code, -32602, "{rev} {name} {args}");
            assert!(msg.starts_with("Invalid params"), "{msg}");
        }
        for rev in [V::V2025_11_25, V::V2026_07_28] {
            let r = result(call(&t, rev.clone(), name, args.clone()).await);
            assert_eq!(r["isError"], true, "{rev} {name} {args}");
            assert!(r["content"][0]["text"].as_str().unwrap().len() > 5);
        }
    }
}

#[tokio::test]
async fn unknown_tools_and_malformed_calls_are_invalid_params_everywhere() {
    let t = tools();
    for rev in V::STREAMABLE {
        let (code, msg) = error(call(&t, rev.clone(), "nope", json!({})).await);
        assert_eq!(
            (code, msg.as_str()),
            (-32602, "Unknown tool: nope"),
            "{rev}"
        );
        let (code, _) = error(call(&t, rev.clone(), "hello", json!([1])).await);
        assert_eq!(code, -32602, "{rev}");
        let req = Request::new(1, "tools/call", Some(&json!({ "arguments": {} }))).unwrap();
        assert_eq!(
            error(t.handle(req, cx(rev.clone())).await),
            (
                -32602,
                "Invalid params: tools/call params have no `name`".into()
            )
        );
        // `name` not a string, or a member sent twice (JSON leaves a
        // repeated name to the reader; `CallToolRequest` has one of each).
        for (params, why) in [
            (
                r#"{"name":{"x":"hello"}}"#,
                "the tools/call `name` must be a string",
            ),
            (r#"{"name":null}"#, "the tools/call `name` must be a string"),
            (
                r#"{"name":"hello","n\u0061me":"hello"}"#,
                "tools/call params name `name` twice",
            ),
            (
                r#"{"arguments":{},"name":"hello","arguments":null}"#,
                "tools/call params name `arguments` twice",
            ),
        ] {
            let mut req = Request::new(1, "tools/call", Some(&json!({}))).unwrap();
            req.params = Some(serde_json::value::RawValue::from_string(params.into()).unwrap());
            assert_eq!(
                error(t.handle(req, cx(rev.clone())).await),
                (-32602, format!("Invalid params: {why}")),
                "{params}"
            );
        }
        // No arguments at all: an empty object.
        let req = Request::new(1, "tools/call", Some(&json!({ "name": "hello" }))).unwrap();
        let r = result(t.handle(req, cx(rev.clone())).await);
        assert_eq!(r["content"][0]["text"], "hello");
        // `arguments: null` is an empty object too; a name sent with
        // escapes is the name it decodes to.
        let req = Request::new(
            1,
            "tools/call",
            Some(&json!({ "name": "hello", "arguments": null })),
        )
        .unwrap();
        let r = result(t.handle(req, cx(rev.clone())).await);
        assert_eq!(r["content"][0]["text"], "hello");
        let mut req = Request::new(1, "tools/call", Some(&json!({}))).unwrap();
        req.params = Some(
            serde_json::value::RawValue::from_string(
                r#"{"name":"h\u0065llo","arguments": {} }"#.into(),
            )
            .unwrap(),
        );
        let r = result(t.handle(req, cx(rev.clone())).await);
        assert_eq!(r["content"][0]["text"], "hello");
        for args in [json!("x"), json!(3), json!(true)] {
            let (code, msg) = error(call(&t, rev.clone(), "hello", args).await);
            assert_eq!(code, -32602, "{rev}");
            assert!(msg.contains("must be an object"), "{msg}");
        }
        let r = result(call(&t, rev.clone(), "broken", json!({ "extra": 1 })).await);
        assert_eq!(
            r,
            json!({ "content": [{ "type": "text", "text": "it broke" }], "isError": true })
        );
    }
}

#[tokio::test]
async fn elicitation_is_asked_then_answered() {
    let t = tools();
    let out = call(&t, V::V2025_11_25, "ask", json!({})).await;
    let Outcome::InputRequired(ir) = out else {
        panic!("expected input required, got {out:?}");
    };
    let req = &ir.requests["name"];
    assert_eq!(req.method, "elicitation/create");
    let p: Value = serde_json::from_str(req.params.as_ref().unwrap().get()).unwrap();
    assert_eq!(
        p,
        json!({ "message": "Your name?", "requestedSchema": {
            "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] } })
    );
    for (answer, expected) in [
        (
            json!({ "action": "accept", "content": { "name": "Ada" } }),
            "hello, Ada",
        ),
        (json!({ "action": "decline" }), "no name (decline)"),
    ] {
        let mut c = cx(V::V2026_07_28);
        c.set_input(
            Some(BTreeMap::from([(
                "name".to_owned(),
                serde_json::value::to_raw_value(&answer).unwrap(),
            )])),
            None,
        );
        let req = Request::new(1, "tools/call", Some(&json!({ "name": "ask" }))).unwrap();
        let r = result(t.handle(req, c).await);
        assert_eq!(r["content"][0]["text"], expected);
    }
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_sleep_ends_the_tool_with_request_cancelled() {
    let t = tools();
    let cancel = CancellationToken::new();
    let req = Request::new(
        1,
        "tools/call",
        Some(&json!({ "name": "nap", "arguments": { "n": 60000 } })),
    )
    .unwrap();
    let c = cx_with(V::V2025_11_25, cancel.clone());
    let run = tokio::spawn(async move { t.handle(req, c).await });
    tokio::time::sleep(Duration::from_millis(10)).await;
    cancel.cancel();
    assert_eq!(error(run.await.unwrap()).0, -32800);
    let r = result(call(&tools(), V::V2025_11_25, "nap", json!({ "n": 5 })).await);
    assert_eq!(r["content"][0]["text"], "rested");
}

struct Other;

#[async_trait]
impl Handler for Other {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "other", "version": "1" }),
            capabilities: json!({ "prompts": {} }),
            instructions: None,
        }
    }
    async fn handle(&self, request: Request, _cx: RequestContext) -> Outcome {
        Outcome::json(&json!({ "handled": request.method }))
    }
}

#[tokio::test]
async fn other_methods_go_to_the_fallback_and_execution_follows_the_tool() {
    let t = tools().fallback(Arc::new(Other));
    let d = t.describe();
    assert_eq!(d.info["name"], "other");
    assert!(d.capabilities["prompts"].is_object() && d.capabilities["tools"].is_object());
    let req = Request::new(1, "prompts/list", Some(&json!({}))).unwrap();
    assert_eq!(
        result(t.handle(req, cx(V::V2026_07_28)).await)["handled"],
        "prompts/list"
    );
    let nap = Request::new(1, "tools/call", Some(&json!({ "name": "nap" }))).unwrap();
    assert_eq!(t.execution(&nap), Execution::MayBeLong);
    let add = Request::new(1, "tools/call", Some(&json!({ "name": "add" }))).unwrap();
    assert_eq!(t.execution(&add), Execution::Immediate);
    let alone = tools();
    let req = Request::new(1, "prompts/list", None::<&Value>).unwrap();
    assert_eq!(error(alone.handle(req, cx(V::V2025_06_18)).await).0, -32601);
    assert!(alone.describe().capabilities["tools"].is_object());
}

#[test]
#[should_panic(expected = "must be an object schema")]
fn non_object_arguments_are_refused_at_registration() {
    let _ = Tools::new().tool("n", "takes a number", |_: u32, _cx| async move { "x" });
}

#[tokio::test]
async fn try_call_runs_a_known_tool_and_hands_back_anything_else() {
    let t = tools();
    let raw = |text: &str| serde_json::value::RawValue::from_string(text.to_owned()).unwrap();
    let add = raw(r#"{"name":"add","arguments":{"a":2,"b":3}}"#);
    let call = t
        .try_call(Some(&add), cx(V::V2026_07_28))
        .expect("add is known");
    assert_eq!(result(call.await)["structuredContent"]["sum"], 5.0);
    for params in [
        Some(r#"{"name":"nope","arguments":{}}"#),
        Some(r#"{"arguments":{}}"#),
        Some(r#"{"name":7}"#),
        Some(r#"{"name":"add","name":"add"}"#),
        Some(r#"{"name":"add","n\u0061me":"add"}"#),
        Some(r#"{"name":"add","arguments":{},"arguments":{}}"#),
        Some(r#"[{"name":"add"}]"#),
        None,
    ] {
        let raw = params.map(raw);
        let back = t
            .try_call(
                raw.as_deref(),
                cx_with(V::V2025_11_25, CancellationToken::new()),
            )
            .err()
            .unwrap_or_else(|| panic!("{params:?} is no call of these tools"));
        assert_eq!(
            back.revision,
            V::V2025_11_25,
            "the context comes back as it was"
        );
    }
}

/// A `tools/call` reads `name` and `arguments` from the index the
/// transport left in the context when it describes the very params the
/// call got, with the same answers as a walk of them (escapes, repeats,
/// missing members), and never from an index of other params: a layer
/// that rewrote the params (here: the same length, another argument)
/// gets its own params read.
#[tokio::test]
async fn calls_use_the_transports_index_of_these_params_only() {
    use mcp_transport_core::json_members::ObjectIndex;
    let t = tools();
    let raw = |text: &str| serde_json::value::RawValue::from_string(text.to_owned()).unwrap();
    let indexed = |params: Option<&serde_json::value::RawValue>| {
        let mut cx = cx(V::V2026_07_28);
        cx.set_params_index(Some(Arc::new(ObjectIndex::of_params(params))));
        cx
    };
    let answer = |o: Outcome| match o {
        Outcome::Result(r) => r.get().to_owned(),
        Outcome::Error(e) => format!("{} {}", e.code, e.message),
        other => panic!("unexpected {other:?}"),
    };
    for params in [
        Some(r#"{"name":"add","arguments":{"a":2,"b":3},"_meta":{"k":[1]}}"#),
        Some(r#"{"n\u0061me":"add","arguments":{"a":2,"b":3}}"#),
        Some(r#"{"name":"add"}"#),
        Some(r#"{"name":"nope","arguments":{}}"#),
        Some(r#"{"arguments":{}}"#),
        Some(r#"{"name":7}"#),
        Some(r#"{"name":"add","n\u0061me":"add"}"#),
        Some(r#"{"name":"add","arguments":{},"arguments":{}}"#),
        Some(r#"{"name":"add","arguments":[1]}"#),
        Some(r#"[{"name":"add"}]"#),
        None,
    ] {
        let p = params.map(raw);
        let walked = answer(t.call(p.as_deref(), cx(V::V2026_07_28)).await);
        let read = answer(t.call(p.as_deref(), indexed(p.as_deref())).await);
        assert_eq!(read, walked, "{params:?}");
        let tried = t.try_call(p.as_deref(), indexed(p.as_deref()));
        assert_eq!(
            tried.is_ok(),
            t.try_call(p.as_deref(), cx(V::V2026_07_28)).is_ok(),
            "{params:?}"
        );
    }
    let sent = raw(r#"{"name":"add","arguments":{"a":1,"b":1}}"#);
    let given = raw(r#"{"name":"add","arguments":{"a":2,"b":3}}"#);
    let stale = || indexed(Some(&sent));
    let sum = |o: Outcome| result(o)["structuredContent"]["sum"].clone();
    assert_eq!(sum(t.call(Some(&given), stale()).await), 5.0);
    let call = t.try_call(Some(&given), stale()).expect("add is known");
    assert_eq!(sum(call.await), 5.0);
    assert_eq!(sum(t.call(Some(&sent), stale()).await), 2.0);
}

/// A fallback that runs everything long and records the notifications it
/// is handed.
#[derive(Default)]
struct Recorder {
    notified: std::sync::Mutex<Vec<String>>,
}

#[async_trait]
impl Handler for Recorder {
    fn describe(&self) -> ServerDescription {
        Other.describe()
    }
    async fn handle(&self, request: Request, _cx: RequestContext) -> Outcome {
        Outcome::json(&json!({ "handled": request.method }))
    }
    fn execution(&self, _: &Request) -> Execution {
        Execution::MayBeLong
    }
    async fn notification(&self, n: Notification) {
        self.notified.lock().unwrap().push(n.method);
    }
}

/// How a tool runs is read by name as well as from a request: a
/// registered tool's own, else the fallback's, else immediate.
#[tokio::test]
async fn execution_by_name_follows_the_tool_then_the_fallback() {
    let t = tools();
    assert_eq!(t.execution_of("nap"), Some(Execution::MayBeLong));
    assert_eq!(t.execution_of("add"), Some(Execution::Immediate));
    assert_eq!(t.execution_of("missing"), None);
    let req = Request::new(1, "tools/call", Some(&json!({ "name": "nap" }))).unwrap();
    assert_eq!(t.tool_execution("nap", &req), Execution::MayBeLong);
    assert_eq!(t.tool_execution("missing", &req), Execution::Immediate);
    let with = tools().fallback(Arc::new(Recorder::default()));
    assert_eq!(with.tool_execution("add", &req), Execution::Immediate);
    assert_eq!(with.tool_execution("missing", &req), Execution::MayBeLong);
    assert_eq!(t.get("nap").map(Tool::name), Some("nap"));
}

/// Notifications go to the fallback (and nowhere without one).
#[tokio::test]
async fn notifications_go_to_the_fallback() {
    let recorder = Arc::new(Recorder::default());
    let t = tools().fallback(recorder.clone());
    let n = Notification::new("notifications/roots/list_changed", None::<&Value>).unwrap();
    t.notification(n.clone()).await;
    assert_eq!(
        *recorder.notified.lock().unwrap(),
        ["notifications/roots/list_changed"]
    );
    tools().notification(n).await;
}

/// `describe_as` is what `initialize` and `server/discover` say, with the
/// `tools` capability added.
#[test]
fn the_description_given_is_used() {
    let d = tools()
        .fallback(Arc::new(Other))
        .describe_as(ServerDescription {
            info: json!({ "name": "mine", "version": "2" }),
            capabilities: json!({ "logging": {} }),
            instructions: Some("read me".into()),
        })
        .describe();
    assert_eq!(d.info["name"], "mine");
    assert_eq!(d.instructions.as_deref(), Some("read me"));
    assert!(d.capabilities["logging"].is_object() && d.capabilities["tools"].is_object());
    assert!(d.capabilities.get("prompts").is_none());
}

/// `Debug` names what a registry holds (its closures are not printable).
#[test]
fn registries_show_their_names_in_debug() {
    let t = tools().fallback(Arc::new(Other));
    let text = format!("{t:?}");
    assert!(text.starts_with("Tools {"), "{text}");
    assert!(
        text.contains(r#"Tool { name: "nap", execution: MayBeLong"#),
        "{text}"
    );
    assert!(text.contains("fallback: true"), "{text}");
    let prompt = mcp_tools::Prompt::new("greet", "Greets", |_: NoArgs, _cx| async { "hi" });
    assert!(format!("{prompt:?}").contains(r#"Prompt { name: "greet""#));
    let note = mcp_tools::Resource::text("test://note", "note", |_cx| async { Ok(String::new()) });
    assert!(format!("{note:?}").contains(r#"Resource { uri: "test://note""#));
}
