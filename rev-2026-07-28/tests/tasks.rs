//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the
//! 2026-07-28 server, end to end over loopback: every status with its
//! fields, input inside a task, cancellation, the capability gates, the
//! task-id errors, `Mcp-Name: <taskId>`, a connection dropped right after
//! creation, and `notifications/tasks` on `subscriptions/listen`; then the
//! 2026-07-28 client against it (mod `client`): polling to the result,
//! input inside a task, failures, cancel on drop, and no task for a client
//! that does not declare the extension.
//!
//! The handler's long work waits on a gate the test opens, so nothing
//! depends on how fast the machine is.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use mcp_rev_2026_07_28::server::{ModernConfig, ModernServer, TasksConfig};
use mcp_test_support::server::TestServer;
use mcp_test_support::sse::SseReader;
use mcp_test_support::{WAIT, eventually};
use mcp_transport_core::handler::{
    Execution, Handler, InputRequest, InputRequired, Outcome, RequestContext, ServerDescription,
};
use mcp_transport_core::jsonrpc::{ErrorObject, Request, to_raw};
use mcp_transport_core::task_store::{MemoryTaskStore, MemoryTaskStoreConfig};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

const V: &str = "2026-07-28";
const EXT: &str = "io.modelcontextprotocol/tasks";

/// | tool | execution | behaviour |
/// | --- | --- | --- |
/// | `gate` | may be long | waits for the gate, then answers `{"content": [...]}` |
/// | `only_task` | task only | answers at once |
/// | `fail` | may be long | a `-32603` error |
/// | `tool_error` | may be long | `isError: true` |
/// | `ask` | may be long | asks key `x` twice (two rounds), then answers both |
/// | `quick` | immediate | answers at once |
/// | `progress` | may be long | sends progress with the message `halfway`, then waits for the gate |
/// | `indexed`, `indexed_task` | immediate, may be long | whether the context's params index describes the params the handler got |
struct Tasky {
    gate: watch::Receiver<bool>,
    cancelled: AtomicUsize,
    started: AtomicUsize,
}

fn text(s: &str) -> Outcome {
    Outcome::json(&json!({ "content": [{ "type": "text", "text": s }] }))
}

fn ask_x(round: u32) -> Outcome {
    let mut requests = BTreeMap::new();
    requests.insert(
        "x".to_owned(),
        InputRequest {
            method: "elicitation/create".into(),
            params: Some(
                to_raw(&json!({
                    "mode": "form",
                    "message": format!("round {round}"),
                    "requestedSchema": {"type": "object", "properties": {"v": {"type": "string"}}}
                }))
                .unwrap(),
            ),
        },
    );
    Outcome::InputRequired(InputRequired {
        requests,
        state: Some(format!("round-{round}")),
    })
}

fn name_of(request: &Request) -> String {
    request
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
        .and_then(|p| p["name"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[async_trait]
impl Handler for Tasky {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({"name": "tasky", "version": "1"}),
            capabilities: json!({"tools": {}}),
            instructions: None,
        }
    }

    // Decided from the name the engine read (`execution` is left at its
    // default, `Immediate`): every task test below fails unless the engine
    // asks `tool_execution` with the call's name.
    fn tool_execution(&self, name: &str, _request: &Request) -> Execution {
        match name {
            "gate" | "fail" | "tool_error" | "ask" | "indexed_task" | "progress" => {
                Execution::MayBeLong
            }
            "only_task" => Execution::TaskOnly,
            _ => Execution::Immediate,
        }
    }

    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome {
        if request.method != "tools/call" {
            return Outcome::Error(ErrorObject::method_not_found(&request.method));
        }
        match name_of(&request).as_str() {
            "gate" => {
                self.started.fetch_add(1, Ordering::SeqCst);
                let mut gate = self.gate.clone();
                tokio::select! {
                    _ = gate.wait_for(|open| *open) => text(&format!("opened; task {:?}", cx.task_id())),
                    () = cx.cancelled() => {
                        self.cancelled.fetch_add(1, Ordering::SeqCst);
                        Outcome::Error(ErrorObject::new(-32800, "cancelled"))
                    }
                }
            }
            "only_task" | "quick" => text("done"),
            "progress" => {
                let _ = cx.progress(0.5, Some(1.0), Some("halfway")).await;
                let mut gate = self.gate.clone();
                let _ = gate.wait_for(|open| *open).await;
                text("done")
            }
            "indexed" | "indexed_task" => {
                let index = cx.params_index(request.params.as_deref());
                text(&format!(
                    "indexed {:?}",
                    index.map(|i| i.get("name").map(|n| n.text().to_owned()))
                ))
            }
            "fail" => Outcome::Error(ErrorObject::internal("exploded")),
            "tool_error" => Outcome::json(&json!({
                "content": [{"type": "text", "text": "bad input"}], "isError": true
            })),
            "ask" => {
                let answer = cx
                    .input_responses()
                    .and_then(|r| r.get("x"))
                    .map(|v| v.get().to_owned());
                match (cx.request_state(), answer) {
                    (None, _) => ask_x(1),
                    (Some("round-1"), Some(a)) => {
                        // Remember the first answer in the next round's state.
                        let mut out = ask_x(2);
                        if let Outcome::InputRequired(i) = &mut out {
                            i.state = Some(format!("round-2:{a}"));
                        }
                        out
                    }
                    (Some(s), Some(a)) if s.starts_with("round-2:") => {
                        text(&format!("{} then {a}", &s["round-2:".len()..]))
                    }
                    (s, a) => Outcome::Error(ErrorObject::invalid_params(format!(
                        "unexpected state {s:?} / answer {a:?}"
                    ))),
                }
            }
            other => Outcome::Error(ErrorObject::invalid_params(format!("no tool {other}"))),
        }
    }
}

struct Server {
    server: ModernServer,
    http: TestServer,
    url: String,
    client: reqwest::Client,
    handler: Arc<Tasky>,
    open: watch::Sender<bool>,
}

fn principal_from_header(parts: &http::request::Parts) -> Option<String> {
    parts
        .headers
        .get("x-user")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

async fn start(tasks: Option<TasksConfig>) -> Server {
    start_with(ModernConfig::default().with_tasks(tasks)).await
}

/// A server with `config`, its principal read from `x-user`.
async fn start_with(config: ModernConfig) -> Server {
    let (open, gate) = watch::channel(false);
    let handler = Arc::new(Tasky {
        gate,
        cancelled: AtomicUsize::new(0),
        started: AtomicUsize::new(0),
    });
    let config = config.with_principal(Some(Arc::new(principal_from_header)));
    let server = ModernServer::new(handler.clone(), config);
    let app = axum::Router::new().nest_service("/mcp", server.router());
    let http = TestServer::serve(app).await;
    Server {
        server,
        url: http.url(),
        http,
        client: reqwest::Client::new(),
        handler,
        open,
    }
}

async fn with_tasks() -> Server {
    start(Some(TasksConfig::default())).await
}

fn caps(declare: bool) -> Value {
    if declare {
        json!({"elicitation": {}, "extensions": {EXT: {}}})
    } else {
        json!({"elicitation": {}})
    }
}

fn body(method: &str, mut params: Value, declare: bool) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": caps(declare),
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

/// A `tools/call` of `gate` (a task when the caller `declare`s the
/// extension).
fn gate_call(declare: bool) -> Value {
    body(
        "tools/call",
        json!({"name": "gate", "arguments": {}}),
        declare,
    )
}

/// The `Mcp-Name` a conforming client sends for `body`.
fn name_header(body: &Value) -> Option<String> {
    let p = &body["params"];
    p["name"]
        .as_str()
        .or_else(|| p["taskId"].as_str())
        .map(str::to_owned)
}

impl Server {
    fn request(&self, body: &Value) -> reqwest::RequestBuilder {
        self.named(body, name_header(body).as_deref())
    }

    /// `body` with the standard headers, and `Mcp-Name: name` (none for
    /// `None`) whatever the body names.
    fn named(&self, body: &Value, name: Option<&str>) -> reqwest::RequestBuilder {
        let r = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", V)
            .header("mcp-method", body["method"].as_str().unwrap())
            .body(body.to_string());
        match name {
            Some(n) => r.header("mcp-name", n),
            None => r,
        }
    }

    /// Sends `body` (as user `user` when given); the status and the
    /// JSON-RPC response (from JSON or a one-event SSE answer).
    async fn call_as(&self, user: Option<&str>, body: &Value) -> (u16, Value) {
        let mut r = self.request(body);
        if let Some(u) = user {
            r = r.header("x-user", u);
        }
        let resp = r.send().await.unwrap();
        let status = resp.status().as_u16();
        let sse = resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream");
        let v = if sse {
            let mut reader = SseReader::without_ids(resp);
            let mut last = Value::Null;
            while let Some(m) = reader.next_json().await {
                last = m;
            }
            last
        } else {
            resp.json().await.unwrap()
        };
        (status, v)
    }

    async fn call(&self, body: &Value) -> (u16, Value) {
        self.call_as(None, body).await
    }

    async fn create(&self, tool: &str) -> Value {
        let (status, v) = self
            .call(&body(
                "tools/call",
                json!({"name": tool, "arguments": {}}),
                true,
            ))
            .await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["result"]["resultType"], "task", "{v}");
        v["result"].clone()
    }

    /// The id of a new task of `tool`.
    async fn create_id(&self, tool: &str) -> String {
        self.create(tool).await["taskId"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The id of a new `gate` task once its handler has started (it is the
    /// only one started so far).
    async fn started_gate(&self) -> String {
        let id = self.create_id("gate").await;
        eventually("the handler started", || {
            self.handler.started.load(Ordering::SeqCst) == 1
        })
        .await;
        id
    }

    async fn get(&self, id: &str) -> Value {
        let (status, v) = self
            .call(&body("tasks/get", json!({"taskId": id}), true))
            .await;
        assert_eq!(status, 200, "{v}");
        v["result"].clone()
    }

    /// Polls `tasks/get` until `status` (bounded by [`WAIT`]).
    async fn until(&self, id: &str, status: &str) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let t = self.get(id).await;
            if t["status"] == status {
                return t;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "task {id} never reached {status}: {t}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
}

fn is_rfc3339(v: &Value) -> bool {
    let s = v.as_str().unwrap_or("");
    s.len() >= 20 && s.as_bytes()[4] == b'-' && s.as_bytes()[10] == b'T' && s.ends_with('Z')
}

#[tokio::test]
async fn discover_advertises_the_extension_only_when_configured() {
    for (tasks, expected) in [(Some(TasksConfig::default()), true), (None, false)] {
        let s = start(tasks).await;
        let (_, v) = s.call(&body("server/discover", json!({}), false)).await;
        let ext = &v["result"]["capabilities"]["extensions"][EXT];
        assert_eq!(ext.is_object(), expected, "{v}");
        assert!(v["result"]["capabilities"].get("tasks").is_none());
    }
}

#[tokio::test]
async fn working_then_completed_with_every_field() {
    let s = with_tasks().await;
    let created = s.create("gate").await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    // 128 bits, URL-safe Base64; a second task gets another id.
    assert_eq!(id.len(), 22, "{id}");
    assert_ne!(s.create("gate").await["taskId"], created["taskId"]);
    assert_eq!(created["status"], "working");
    assert!(is_rfc3339(&created["createdAt"]) && is_rfc3339(&created["lastUpdatedAt"]));
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 500);
    for absent in ["result", "error", "inputRequests", "requestState"] {
        assert!(created.get(absent).is_none(), "{absent}: {created}");
    }

    // Stored before CreateTaskResult was sent: an immediate get resolves.
    let t = s.get(&id).await;
    assert_eq!(t["resultType"], "complete");
    assert_eq!(t["status"], "working");
    assert!(t.get("result").is_none());

    s.open.send(true).unwrap();
    let t = s.until(&id, "completed").await;
    assert_eq!(
        t["result"]["content"][0]["text"],
        format!("opened; task Some({id:?})")
    );
    assert_eq!(t["result"]["resultType"], "complete");
    assert!(t.get("error").is_none());
}

/// The engine hands the handler its index of the params (what
/// `mcp-tools` reads a call's `name` and `arguments` from instead of
/// walking the params again), in its POST and in a task alike.
#[tokio::test]
async fn the_handler_gets_the_engines_index_of_its_params() {
    let s = with_tasks().await;
    let (status, v) = s
        .call(&body(
            "tools/call",
            json!({"name": "indexed", "arguments": {"a": 1}}),
            true,
        ))
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v["result"]["content"][0]["text"],
        r#"indexed Some(Some("\"indexed\""))"#
    );
    let id = s.create_id("indexed_task").await;
    let t = s.until(&id, "completed").await;
    assert_eq!(
        t["result"]["content"][0]["text"],
        r#"indexed Some(Some("\"indexed_task\""))"#
    );
}

#[tokio::test]
async fn failed_carries_the_json_rpc_error_and_tool_errors_complete() {
    let s = with_tasks().await;
    let id = s.create_id("fail").await;
    let t = s.until(&id, "failed").await;
    assert_eq!(t["error"]["code"], -32603);
    assert!(t["error"]["message"].as_str().unwrap().contains("exploded"));
    assert!(t.get("result").is_none());

    let id = s.create_id("tool_error").await;
    let t = s.until(&id, "completed").await;
    assert_eq!(t["result"]["isError"], true);
}

#[tokio::test]
async fn input_mid_task_with_keys_unique_over_the_task_life() {
    let s = with_tasks().await;
    let id = s.create_id("ask").await;
    let t = s.until(&id, "input_required").await;
    let keys: Vec<&String> = t["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["x"]);
    assert_eq!(t["inputRequests"]["x"]["method"], "elicitation/create");

    let update = |responses: Value| {
        body(
            "tasks/update",
            json!({"taskId": id, "inputResponses": responses}),
            true,
        )
    };
    // An unknown key is ignored; the ack is empty.
    let (status, v) = s.call(&update(json!({"nope": {"action": "accept"}}))).await;
    assert_eq!(status, 200);
    assert_eq!(v["result"]["resultType"], "complete");
    assert!(v["result"].get("taskId").is_none() && v["result"].get("status").is_none());
    assert_eq!(s.get(&id).await["status"], "input_required");

    s.call(&update(json!({"x": "first"}))).await;
    // Round 2 asks the handler's key `x` again: on the wire it is a new key.
    let t = loop {
        let t = s.until(&id, "input_required").await;
        if t["inputRequests"].get("x").is_none() {
            break t;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    let second: Vec<String> = t["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(second.len(), 1);
    assert_ne!(second[0], "x");
    // Answering the old key again changes nothing.
    s.call(&update(json!({"x": "stale"}))).await;
    assert_eq!(s.get(&id).await["status"], "input_required");
    s.call(&update(json!({ second[0].clone(): "second" })))
        .await;
    let t = s.until(&id, "completed").await;
    assert_eq!(
        t["result"]["content"][0]["text"],
        "\"first\" then \"second\""
    );
}

#[tokio::test]
async fn cancel_is_cooperative_acknowledged_and_idempotent() {
    let s = with_tasks().await;
    let id = s.started_gate().await;
    let cancel = body("tasks/cancel", json!({"taskId": id}), true);
    let (status, v) = s.call(&cancel).await;
    assert_eq!(status, 200);
    assert_eq!(v["result"]["resultType"], "complete");
    for k in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(v["result"].get(k).is_none(), "{k}: {v}");
    }
    assert_eq!(s.get(&id).await["status"], "cancelled");
    eventually("the handler saw the cancellation", || {
        s.handler.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;
    // Opening the gate now changes nothing: the first terminal status won.
    s.open.send(true).unwrap();
    let (_, again) = s.call(&cancel).await;
    assert_eq!(again["result"]["resultType"], "complete");
    assert_eq!(s.get(&id).await["status"], "cancelled");
}

#[tokio::test]
async fn without_the_declaration_no_task_and_the_task_methods_are_refused() {
    let s = with_tasks().await;
    s.open.send(true).unwrap();
    // May be long: answered in the request itself.
    let (status, v) = s.call(&gate_call(false)).await;
    assert_eq!(status, 200);
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
    assert!(v["result"].get("taskId").is_none());
    // Task only: -32021 naming the extension.
    let (status, v) = s
        .call(&body(
            "tools/call",
            json!({"name": "only_task", "arguments": {}}),
            false,
        ))
        .await;
    assert_eq!(status, 400);
    assert_eq!(v["error"]["code"], -32021);
    assert!(v["error"]["data"]["requiredCapabilities"]["extensions"][EXT].is_object());
    for (method, params) in [
        ("tasks/get", json!({"taskId": "t"})),
        ("tasks/update", json!({"taskId": "t", "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": "t"})),
    ] {
        let (status, v) = s.call(&body(method, params, false)).await;
        assert_eq!(
            (status, v["error"]["code"].as_i64()),
            (400, Some(-32021)),
            "{method}"
        );
    }
    // Immediate tools never become tasks, even for declaring clients.
    let (_, v) = s
        .call(&body(
            "tools/call",
            json!({"name": "quick", "arguments": {}}),
            true,
        ))
        .await;
    assert_eq!(v["result"]["resultType"], "complete");
}

#[tokio::test]
async fn without_tasks_configured_task_methods_are_not_found() {
    let s = start(None).await;
    let (status, v) = s
        .call(&body("tasks/get", json!({"taskId": "t"}), true))
        .await;
    assert_eq!((status, v["error"]["code"].as_i64()), (404, Some(-32601)));
    // `Mcp-Name: <taskId>` is the extension's rule ("When `tasks/get`, …
    // is sent …, the client MUST set the `Mcp-Name` header"); a server
    // without the extension has no such method, whatever the header says.
    let get = body("tasks/get", json!({"taskId": "t"}), false);
    for name in [None, Some("another")] {
        let resp = s.named(&get, name).send().await.unwrap();
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["error"]["code"], -32601, "{name:?}: {v}");
    }
    s.open.send(true).unwrap();
    let (_, v) = s.call(&gate_call(true)).await;
    assert_eq!(v["result"]["resultType"], "complete");
}

#[tokio::test]
async fn unknown_foreign_and_expired_ids_are_invalid_params() {
    let s = start(Some(TasksConfig {
        ttl_ms: Some(1),
        ..TasksConfig::default()
    }))
    .await;
    let (status, v) = s
        .call(&body("tasks/get", json!({"taskId": "no-such-task"}), true))
        .await;
    assert_eq!(status, 200);
    assert_eq!(v["error"]["code"], -32602);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Task not found")
    );

    // A task of alice's, with a 1 ms TTL: gone for everyone soon after.
    let (_, v) = s.call_as(Some("alice"), &gate_call(true)).await;
    let id = v["result"]["taskId"].as_str().unwrap().to_owned();
    assert_eq!(v["result"]["ttlMs"], 1);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let (_, v) = s
        .call_as(
            Some("alice"),
            &body("tasks/get", json!({"taskId": id}), true),
        )
        .await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let m = v["error"]["message"].as_str().unwrap();
    assert!(m.contains("expired") || m.contains("not found"), "{m}");
}

/// A full task store is a load condition (DESIGN.md, "Limits"; it never
/// evicts a task before its TTL): the task-augmented call is answered 503
/// with `-32603` naming the limit, for the task count (after one task) and
/// for the total bytes (a total of 0 is reached at once).
#[tokio::test]
async fn a_full_task_store_answers_503_naming_the_limit() {
    let count = MemoryTaskStoreConfig {
        max_tasks: 1,
        ..Default::default()
    };
    let bytes = MemoryTaskStoreConfig {
        max_total_bytes: 0,
        ..Default::default()
    };
    for (limits, taken, says) in [
        (count, 1, "maximum of 1 tasks"),
        (bytes, 0, "maximum of 0 bytes"),
    ] {
        let s = start(Some(TasksConfig {
            store: Arc::new(MemoryTaskStore::new(limits)),
            ..TasksConfig::default()
        }))
        .await;
        for _ in 0..taken {
            s.create("gate").await;
        }
        let (status, v) = s.call(&gate_call(true)).await;
        assert_eq!(status, 503, "{v}");
        assert_eq!(v["error"]["code"], -32603, "{v}");
        let m = v["error"]["message"].as_str().unwrap();
        assert!(m.contains(says), "{m}");
    }
}

/// A task's worker keeps its place in `ModernConfig::running` while the
/// task runs, with no connection: a call over `max_running` is refused
/// (503, `-32603`) before any task is made for it, and once the running
/// task ends the next call becomes a task.
#[tokio::test]
async fn a_running_task_holds_its_place_in_max_running() {
    let s = start_with(
        ModernConfig::default()
            .with_tasks(Some(TasksConfig::default()))
            .with_max_running(1),
    )
    .await;
    let first = s.create("gate").await;
    let first_id = first["taskId"].as_str().unwrap().to_owned();
    eventually("the task's handler started", || {
        s.handler.started.load(Ordering::SeqCst) == 1
    })
    .await;

    let (status, v) = s.call(&gate_call(true)).await;
    assert_eq!(status, 503, "{v}");
    assert_eq!(v["error"]["code"], -32603, "{v}");
    let m = v["error"]["message"].as_str().unwrap();
    assert!(m.contains("maximum of 1 requests"), "{m}");
    // No task was made for it and its handler never ran.
    assert_eq!(s.handler.started.load(Ordering::SeqCst), 1);

    s.open.send(true).unwrap();
    s.until(&first_id, "completed").await;
    // The worker gives its place back when it ends, just after the store
    // says completed.
    let deadline = tokio::time::Instant::now() + WAIT;
    let second = loop {
        let (status, v) = s.call(&gate_call(true)).await;
        if status == 200 {
            break v;
        }
        assert_eq!(status, 503, "{v}");
        assert!(tokio::time::Instant::now() < deadline, "still refused: {v}");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    assert_eq!(second["result"]["resultType"], "task", "{second}");
}

#[tokio::test]
async fn tasks_are_visible_only_to_their_principal() {
    let s = with_tasks().await;
    let (_, v) = s.call_as(Some("alice"), &gate_call(true)).await;
    let id = v["result"]["taskId"].as_str().unwrap().to_owned();
    for who in [Some("bob"), None] {
        for (method, params) in [
            ("tasks/get", json!({"taskId": id})),
            ("tasks/cancel", json!({"taskId": id})),
            ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
        ] {
            let (_, v) = s.call_as(who, &body(method, params, true)).await;
            assert_eq!(v["error"]["code"], -32602, "{method} as {who:?}: {v}");
        }
    }
    let (_, v) = s
        .call_as(
            Some("alice"),
            &body("tasks/get", json!({"taskId": id}), true),
        )
        .await;
    assert_eq!(v["result"]["status"], "working");
}

#[tokio::test]
async fn mcp_name_must_carry_the_task_id() {
    let s = with_tasks().await;
    let id = s.create_id("gate").await;
    let get = body("tasks/get", json!({"taskId": id}), true);
    for name in [Some("some-other-task"), None] {
        let resp = s.named(&get, name).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{name:?}");
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["error"]["code"], -32020, "{name:?}: {v}");
    }
}

#[tokio::test]
async fn a_task_survives_the_connection_dropped_right_after_creation() {
    let s = with_tasks().await;
    let b = gate_call(true).to_string();
    let mut tcp = tokio::net::TcpStream::connect(s.http.addr()).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\nmcp-protocol-version: {V}\r\nmcp-method: tools/call\r\nmcp-name: gate\r\ncontent-length: {}\r\n\r\n{b}",
        b.len()
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let id = loop {
        let n = tokio::time::timeout(WAIT, tcp.read(&mut buf))
            .await
            .expect("an answer")
            .unwrap();
        assert!(n > 0, "closed before the answer");
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got);
        if let Some(body) = text.split("\r\n\r\n").nth(1)
            && let Ok(v) = serde_json::from_str::<Value>(body)
        {
            break v["result"]["taskId"].as_str().unwrap().to_owned();
        }
    };
    // The client goes away; the task does not.
    drop(tcp);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert_eq!(s.get(&id).await["status"], "working");
    assert_eq!(s.handler.cancelled.load(Ordering::SeqCst), 0);
    s.open.send(true).unwrap();
    s.until(&id, "completed").await;
}

#[tokio::test]
async fn notifications_tasks_on_listen_streams_that_asked() {
    let s = with_tasks().await;
    let id = s.create_id("gate").await;
    let listen = body(
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [id, "unknown-task"]}}),
        true,
    );
    let resp = s.request(&listen).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut reader = SseReader::without_ids(resp);
    let ack = reader.next_json().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));

    s.open.send(true).unwrap();
    let n = tokio::time::timeout(WAIT, reader.next_json())
        .await
        .expect("a notification")
        .unwrap();
    assert_eq!(n["method"], "notifications/tasks");
    assert_eq!(n["params"]["taskId"], id);
    assert_eq!(n["params"]["status"], "completed");
    assert!(n["params"]["result"]["content"].is_array());

    // Asking without declaring the extension is -32021.
    let (status, v) = s
        .call(&body(
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [id]}}),
            false,
        ))
        .await;
    assert_eq!((status, v["error"]["code"].as_i64()), (400, Some(-32021)));
}

/// `notifications.taskIds` names at most `max_listen_task_ids` tasks: that
/// many are taken, one more is `-32602`.
#[tokio::test]
async fn a_subscription_names_at_most_its_maximum_of_task_ids() {
    let s = start(Some(TasksConfig {
        max_listen_task_ids: 2,
        ..TasksConfig::default()
    }))
    .await;
    let listen = |ids: &[&str]| {
        body(
            "subscriptions/listen",
            json!({"notifications": {"taskIds": ids}}),
            true,
        )
    };
    let resp = s.request(&listen(&["a", "b"])).send().await.unwrap();
    assert_eq!(resp.status(), 200, "exactly the maximum");
    let ack = SseReader::without_ids(resp).next_json().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let (status, v) = s.call(&listen(&["a", "b", "c"])).await;
    assert_eq!((status, v["error"]["code"].as_i64()), (400, Some(-32602)));
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("names 3 tasks; at most 2"), "{msg}");
}

/// A minted id already taken is minted again, three times at most (four
/// tries); then the call fails (`-32603`) and no worker runs.
#[tokio::test]
async fn a_taken_task_id_is_minted_again_three_times() {
    for (collisions, made) in [(3, true), (4, false)] {
        let store = Arc::new(mcp_test_support::colliding::Colliding::new(collisions));
        let s = start(Some(TasksConfig {
            store: store.clone(),
            ..TasksConfig::default()
        }))
        .await;
        if made {
            s.create("only_task").await;
        } else {
            let call = body(
                "tools/call",
                json!({"name": "only_task", "arguments": {}}),
                true,
            );
            let (status, v) = s.call(&call).await;
            assert_eq!(
                (status, v["error"]["code"].as_i64()),
                (200, Some(-32603)),
                "{v}"
            );
            assert_eq!(s.server.running_tasks(), 0);
        }
        assert_eq!(store.left(), 0, "every collision was met: four tries");
    }
}

/// The server counts the task workers running in this process until their
/// tasks end.
#[tokio::test]
async fn running_tasks_counts_the_workers_until_their_tasks_end() {
    let s = with_tasks().await;
    assert_eq!(s.server.running_tasks(), 0);
    let mut ids = Vec::new();
    for _ in 0..2 {
        ids.push(s.create_id("gate").await);
    }
    assert_eq!(s.server.running_tasks(), 2);
    s.open.send(true).unwrap();
    for id in &ids {
        s.until(id, "completed").await;
    }
    eventually("the workers are gone", || s.server.running_tasks() == 0).await;
}

/// Input delivered to a task waiting for it moves it back to `working`: a
/// listen stream that asked for the task hears that status change.
#[tokio::test]
async fn delivered_input_is_heard_as_a_status_change() {
    let s = with_tasks().await;
    let id = s.create_id("ask").await;
    s.until(&id, "input_required").await;
    let listen = body(
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [id]}}),
        true,
    );
    let resp = s.request(&listen).send().await.unwrap();
    let mut reader = SseReader::without_ids(resp);
    let ack = reader.next_json().await.unwrap();
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    let update = body(
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"x": "first"}}),
        true,
    );
    assert_eq!(s.call(&update).await.0, 200);
    let n = reader.next_json().await.unwrap();
    assert_eq!(n["method"], "notifications/tasks");
    assert_eq!(n["params"]["status"], "working", "{n}");
}

/// A task's progress message becomes its `statusMessage` (*Tasks*: progress
/// notifications are not delivered on tasks).
#[tokio::test]
async fn a_progress_message_becomes_the_tasks_status_message() {
    let s = with_tasks().await;
    // Progress is sent only for a request that carries a token.
    let mut call = body(
        "tools/call",
        json!({"name": "progress", "arguments": {}}),
        true,
    );
    call["params"]["_meta"]["progressToken"] = json!("p");
    let (status, v) = s.call(&call).await;
    assert_eq!(
        (status, &v["result"]["resultType"]),
        (200, &json!("task")),
        "{v}"
    );
    let id = v["result"]["taskId"].as_str().unwrap().to_owned();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let t = s.get(&id).await;
        if t["statusMessage"] == "halfway" {
            assert_eq!(t["status"], "working");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no status message: {t}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    s.open.send(true).unwrap();
    s.until(&id, "completed").await;
}

/// A cancel recorded in the shared store by another instance reaches the
/// work running here: the worker follows the store.
#[tokio::test]
async fn a_cancel_recorded_by_another_instance_reaches_the_work() {
    use mcp_transport_core::task_store::TaskStore;
    let store = Arc::new(MemoryTaskStore::default());
    let s = start(Some(TasksConfig {
        store: store.clone(),
        ..TasksConfig::default()
    }))
    .await;
    let id = s.started_gate().await;
    store
        .cancel(&id, None, mcp_transport_core::task_store::now_ms())
        .await
        .unwrap();
    eventually("the handler saw the cancellation", || {
        s.handler.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;
}

// ---------------------------------------------------------------------------
// The 2026-07-28 client following tasks against this server.

mod client {
    use futures::StreamExt;
    use mcp_rev_2026_07_28::client::{ModernClient, ModernClientConfig};
    use mcp_test_support::ScriptedInput;
    use mcp_test_support::client::{answer, params, result_of};
    use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport};

    use super::*;

    fn client(s: &Server, declare: bool, input: Arc<ScriptedInput>) -> ModernClient {
        ModernClient::new(
            ModernClientConfig::new(s.url.clone())
                .with_capabilities(caps(declare))
                .with_input_handler(input),
        )
        .unwrap()
    }

    fn answers() -> Arc<ScriptedInput> {
        ScriptedInput::new(&[(
            "elicitation/create",
            json!({"action": "accept", "content": {"v": "yes"}}),
        )])
    }

    fn call(tool: &str) -> Option<Box<serde_json::value::RawValue>> {
        params(json!({"name": tool, "arguments": {}}))
    }

    fn task_events(events: &[StreamEvent]) -> Vec<(String, String)> {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Notification(n) if n.method == "notifications/tasks" => {
                    let p: Value = serde_json::from_str(n.params.as_deref()?.get()).ok()?;
                    Some((
                        p["taskId"].as_str()?.to_owned(),
                        p["status"].as_str()?.to_owned(),
                    ))
                }
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn the_client_polls_a_task_to_its_result() {
        let s = start(Some(TasksConfig {
            poll_interval_ms: 10,
            ..TasksConfig::default()
        }))
        .await;
        let c = client(&s, true, answers());
        let mut stream = c
            .request("tools/call", call("gate"), RequestOptions::default())
            .await
            .unwrap();
        // The creation is reported first, with the task id.
        let first = stream.next().await.unwrap().unwrap();
        let seen = task_events(std::slice::from_ref(&first));
        assert_eq!(seen.len(), 1, "{first:?}");
        assert_eq!(seen[0].1, "working");
        s.open.send(true).unwrap();
        let mut rest = Vec::new();
        while let Some(e) = stream.next().await {
            rest.push(e.unwrap());
        }
        let StreamEvent::Response(r) = rest.last().unwrap() else {
            panic!("{rest:?}")
        };
        let text = result_of(r)["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(text.contains(&seen[0].0), "{text}");
        assert_eq!(task_events(&rest).last().unwrap().1, "completed");
    }

    #[tokio::test]
    async fn input_inside_a_task_goes_through_the_input_handler() {
        let s = with_tasks().await;
        let input = answers();
        let c = client(&s, true, input.clone());
        let r = answer(&c, "tools/call", call("ask")).await.unwrap();
        let v = result_of(&r);
        assert_eq!(
            v["content"][0]["text"],
            r#"{"action":"accept","content":{"v":"yes"}} then {"action":"accept","content":{"v":"yes"}}"#
        );
        // Asked once per round: keys are not answered twice.
        assert_eq!(input.asked().len(), 2);
    }

    #[tokio::test]
    async fn failed_and_tool_error_tasks_end_the_call_as_the_server_said() {
        let s = with_tasks().await;
        let c = client(&s, true, answers());
        let r = answer(&c, "tools/call", call("fail")).await.unwrap();
        let e = r.payload.unwrap_err();
        assert_eq!(e.code, -32603);
        let r = answer(&c, "tools/call", call("tool_error")).await.unwrap();
        assert_eq!(result_of(&r)["isError"], true);
    }

    #[tokio::test]
    async fn dropping_the_response_cancels_the_task() {
        let s = with_tasks().await;
        let c = client(&s, true, answers());
        let mut stream = c
            .request("tools/call", call("gate"), RequestOptions::default())
            .await
            .unwrap();
        let first = stream.next().await.unwrap().unwrap();
        let id = task_events(&[first])[0].0.clone();
        drop(stream);
        eventually("the handler saw the cancellation", || {
            s.handler.cancelled.load(Ordering::SeqCst) == 1
        })
        .await;
        assert_eq!(s.get(&id).await["status"], "cancelled");
    }

    #[tokio::test]
    async fn a_detached_task_outlives_the_dropped_response_and_is_resumed() {
        let s = start(Some(TasksConfig {
            poll_interval_ms: 10,
            ..TasksConfig::default()
        }))
        .await;
        let c = client(&s, true, answers());
        let mut stream = c
            .request("tools/call", call("gate"), RequestOptions::default())
            .await
            .unwrap();
        assert_eq!(
            stream.task_id(),
            None,
            "no task before the creation is read"
        );
        let first = stream.next().await.unwrap().unwrap();
        let id = task_events(&[first])[0].0.clone();
        assert_eq!(stream.task_id().as_deref(), Some(id.as_str()));
        let detached = stream.detach_task().expect("a task to detach");
        assert_eq!(detached, id);
        // Not cancelled: the task is still working after a round trip.
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        assert_eq!(s.get(&id).await["status"], "working");
        assert_eq!(s.handler.cancelled.load(Ordering::SeqCst), 0);
        s.open.send(true).unwrap();
        let r = client(&s, true, answers())
            .resume_task(&id)
            .await
            .unwrap()
            .response()
            .await
            .unwrap();
        assert!(
            result_of(&r)["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(&id)
        );
    }

    #[tokio::test]
    async fn a_plain_request_has_no_task_to_detach() {
        let s = with_tasks().await;
        let c = client(&s, true, answers());
        let stream = c
            .request("tools/call", call("quick"), RequestOptions::default())
            .await
            .unwrap();
        let stream = stream.detach_task().expect_err("no task");
        let r = stream.response().await.unwrap();
        assert_eq!(result_of(&r)["content"][0]["text"], "done");
    }

    #[tokio::test]
    async fn a_new_client_resumes_a_task_by_id() {
        let s = start(Some(TasksConfig {
            poll_interval_ms: 10,
            ..TasksConfig::default()
        }))
        .await;
        // Created by someone else (raw HTTP); only the id is known.
        let id = s.create_id("gate").await;
        let c = client(&s, true, answers());
        let mut stream = c.resume_task(&id).await.unwrap();
        let first = stream.next().await.unwrap().unwrap();
        assert_eq!(task_events(&[first]), [(id.clone(), "working".to_owned())]);
        s.open.send(true).unwrap();
        let mut rest = Vec::new();
        while let Some(e) = stream.next().await {
            rest.push(e.unwrap());
        }
        let StreamEvent::Response(r) = rest.last().unwrap() else {
            panic!("{rest:?}")
        };
        assert!(
            result_of(r)["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(&id)
        );
        // An unknown id ends with the server's -32602.
        let r = c
            .resume_task("no-such-task")
            .await
            .unwrap()
            .response()
            .await
            .unwrap();
        assert_eq!(r.payload.unwrap_err().code, -32602);
    }

    #[tokio::test]
    async fn a_client_without_the_extension_gets_the_result_on_its_stream() {
        let s = with_tasks().await;
        let c = client(&s, false, answers());
        // (`request` returns once the answer has started: open the gate
        // first.)
        s.open.send(true).unwrap();
        let mut stream = c
            .request("tools/call", call("gate"), RequestOptions::default())
            .await
            .unwrap();
        let mut events = Vec::new();
        while let Some(e) = stream.next().await {
            events.push(e.unwrap());
        }
        assert!(task_events(&events).is_empty());
        let StreamEvent::Response(r) = events.last().unwrap() else {
            panic!()
        };
        assert!(
            result_of(r)["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("None")
        );
    }
}

/// Instance A created a task and died: its worker's lease lapsed. This
/// server (B, sharing A's task and lease stores) fails the task at the next
/// `tasks/get`, so no client polls a task nobody runs; a task whose worker
/// runs here is not failed for its own lapsed lease.
#[tokio::test]
async fn a_task_is_failed_only_when_its_worker_is_gone() {
    use mcp_test_support::orphan::Orphans;
    use mcp_transport_core::task_store::liveness::WORKER_GONE;

    let shared = Orphans::new();
    let s = start(Some(TasksConfig {
        store: shared.store.clone(),
        leases: Some(shared.leases_for("instance-b")),
        ..TasksConfig::default()
    }))
    .await;
    shared.task("task-of-a", None).await;
    assert_eq!(s.get("task-of-a").await["status"], "working");
    assert_eq!(shared.die(), 1, "A dies");
    let t = s.get("task-of-a").await;
    assert_eq!(t["status"], "failed", "{t}");
    assert_eq!(t["statusMessage"], WORKER_GONE);
    assert_eq!(t["error"]["code"], -32603, "{t}");

    let id = s.create_id("gate").await;
    assert_eq!(shared.leases.lapse_holder("instance-b"), 1);
    assert_eq!(s.get(&id).await["status"], "working");
    s.open.send(true).unwrap();
    s.until(&id, "completed").await;
}
