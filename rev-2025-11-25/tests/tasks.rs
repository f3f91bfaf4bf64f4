//! 2025-11-25's experimental tasks (SEP-1686), our server end to end over
//! loopback with our session client speaking the methods directly: the
//! capability and `execution.taskSupport`, the `-32601` rules, every status
//! transition, `tasks/result` blocking (with input mid-task, status
//! notifications, and resumption after SEP-1699 cuts), `tasks/list`
//! cursors, `tasks/cancel` of a running and of a terminal task, TTL expiry,
//! and tasks scoped to their session.
//!
//! The handler's long work waits on a gate the test opens, so nothing
//! depends on how fast the machine is.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use mcp_rev_2025_11_25::{
    self as rev, LegacyClient, PollingExt, ServerConfig, TasksConfig, TasksExt,
};
use mcp_test_support::client::collect;
use mcp_test_support::server::TestServer;
use mcp_test_support::{ScriptedInput, WAIT, eventually};
use mcp_transport_core::handler::{
    Execution, Handler, InputRequest, InputRequired, Outcome, RequestContext, ServerDescription,
};
use mcp_transport_core::jsonrpc::{ErrorObject, Request, Response, to_raw};
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport, TransportError};
use serde_json::{Value, json};
use tokio::sync::watch;

const RELATED: &str = "io.modelcontextprotocol/related-task";

/// | tool | execution | behaviour |
/// | --- | --- | --- |
/// | `gate` | may be long | progress "waiting", waits for the gate, progress "opened", then answers text |
/// | `only_task` | task only | answers at once |
/// | `fail` | may be long | a `-32603` error |
/// | `tool_error` | may be long | `isError: true` |
/// | `ask` | may be long | asks `elicitation/create` (or `arguments.method`) once, answers with the reply |
/// | `quick` | immediate | answers at once |
struct Tasky {
    gate: watch::Receiver<bool>,
    cancelled: AtomicUsize,
    /// The names the transport handed to `tool_execution`.
    named: std::sync::Mutex<Vec<String>>,
}

fn text(s: &str) -> Outcome {
    Outcome::json(&json!({ "content": [{ "type": "text", "text": s }] }))
}

fn name_of(request: &Request) -> String {
    request
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
        .and_then(|p| p["name"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn execution_of(name: &str) -> Execution {
    match name {
        "gate" | "fail" | "tool_error" | "ask" => Execution::MayBeLong,
        "only_task" => Execution::TaskOnly,
        _ => Execution::Immediate,
    }
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

    fn execution(&self, request: &Request) -> Execution {
        execution_of(&name_of(request))
    }

    fn tool_execution(&self, name: &str, _request: &Request) -> Execution {
        self.named.lock().unwrap().push(name.to_owned());
        execution_of(name)
    }

    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome {
        match request.method.as_str() {
            "tools/list" => {
                return Outcome::json(&json!({ "tools": [
                    {"name": "gate", "inputSchema": {"type": "object"}},
                    {"name": "only_task", "inputSchema": {"type": "object"}},
                    {"name": "quick", "inputSchema": {"type": "object"}},
                ]}));
            }
            "tools/call" => {}
            m => return Outcome::Error(ErrorObject::method_not_found(m)),
        }
        match name_of(&request).as_str() {
            "gate" => {
                let _ = cx.progress(0.0, None, Some("waiting")).await;
                let mut gate = self.gate.clone();
                tokio::select! {
                    () = async { let _ = gate.wait_for(|open| *open).await; } => {
                        let _ = cx.progress(1.0, Some(1.0), Some("opened")).await;
                        text(&format!("opened; task {}", cx.task_id().unwrap_or("-")))
                    }
                    () = cx.cancelled() => {
                        self.cancelled.fetch_add(1, Ordering::SeqCst);
                        Outcome::Error(ErrorObject::new(-32800, "cancelled"))
                    }
                }
            }
            "only_task" | "quick" => text("done"),
            "fail" => Outcome::Error(ErrorObject::internal("exploded")),
            "tool_error" => Outcome::json(&json!({
                "content": [{"type": "text", "text": "bad input"}], "isError": true
            })),
            "ask" => match cx.input_responses().and_then(|r| r.get("name")) {
                Some(a) => text(&format!("got {}", a.get())),
                None => {
                    let method =
                        serde_json::from_str::<Value>(request.params.as_ref().unwrap().get())
                            .ok()
                            .and_then(|p| p["arguments"]["method"].as_str().map(str::to_owned))
                            .unwrap_or_else(|| "elicitation/create".into());
                    let mut requests = std::collections::BTreeMap::new();
                    requests.insert(
                        "name".to_owned(),
                        InputRequest {
                            method,
                            params: Some(
                                to_raw(&json!({
                                    "message": "What is your name?",
                                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
                                }))
                                .unwrap(),
                            ),
                        },
                    );
                    Outcome::InputRequired(InputRequired {
                        requests,
                        state: None,
                    })
                }
            },
            other => Outcome::Error(ErrorObject::invalid_params(format!("no tool {other}"))),
        }
    }
}

struct Fixture {
    server: TestServer,
    /// The engine, for its count of running handlers.
    legacy: rev::LegacyServer,
    handler: Arc<Tasky>,
    open: watch::Sender<bool>,
    resumes: Arc<AtomicUsize>,
}

fn tasks_config() -> TasksConfig {
    TasksConfig {
        poll_interval_ms: 20,
        list_page: 2,
        ..TasksConfig::default()
    }
}

async fn start(config: ServerConfig) -> Fixture {
    let (open, gate) = watch::channel(false);
    let handler = Arc::new(Tasky {
        gate,
        cancelled: AtomicUsize::new(0),
        named: std::sync::Mutex::default(),
    });
    let server = rev::server(handler.clone(), config);
    let legacy = server.clone();
    let resumes = Arc::new(AtomicUsize::new(0));
    let counted = resumes.clone();
    let app = server.route("/mcp").layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let counted = counted.clone();
            async move {
                if req.method() == http::Method::GET && req.headers().contains_key("last-event-id")
                {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
                next.run(req).await
            }
        },
    ));
    Fixture {
        server: TestServer::serve(app).await,
        legacy,
        handler,
        open,
        resumes,
    }
}

async fn with_tasks() -> Fixture {
    start(
        rev::server_config()
            .with_retry_ms(20)
            .with_tasks(tasks_config()),
    )
    .await
}

async fn client(url: &str) -> LegacyClient {
    client_with(url, ScriptedInput::ada()).await
}

async fn client_with(url: &str, input: Arc<ScriptedInput>) -> LegacyClient {
    LegacyClient::connect(
        rev::client_config(url)
            .with_capabilities(json!({ "elicitation": {}, "tasks": {} }))
            .with_input_handler(input)
            .with_reconnect_backoff(Duration::from_millis(20))
            .with_request_timeout(Some(WAIT)),
    )
    .await
    .expect("connect")
}

/// Sends `method` with `params`; the events before the response and the
/// response.
async fn rpc(client: &LegacyClient, method: &str, params: Value) -> (Vec<StreamEvent>, Response) {
    let stream = client
        .request(
            method,
            Some(to_raw(&params).unwrap()),
            RequestOptions::default(),
        )
        .await
        .expect("request");
    collect(stream).await.expect("response")
}

async fn ok(client: &LegacyClient, method: &str, params: Value) -> Value {
    let (_, r) = rpc(client, method, params).await;
    match r.payload {
        Ok(raw) => serde_json::from_str(raw.get()).unwrap(),
        Err(e) => panic!("{method}: error {e}"),
    }
}

async fn err(client: &LegacyClient, method: &str, params: Value) -> ErrorObject {
    let (_, r) = rpc(client, method, params).await;
    match r.payload {
        Ok(raw) => panic!("{method}: expected an error, got {}", raw.get()),
        Err(e) => e,
    }
}

/// Sends `tool` with `task` and reads the first event, which our client
/// yields for a `CreateTaskResult`: `notifications/tasks/status` with the
/// created task; the stream is detached (the task keeps running) and the
/// task returned.
async fn create_with(client: &LegacyClient, tool: &str, task: Value) -> Value {
    let mut stream = client
        .request(
            "tools/call",
            Some(to_raw(&json!({"name": tool, "arguments": {}, "task": task, "_meta": {"progressToken": "p"}})).unwrap()),
            RequestOptions::default(),
        )
        .await
        .expect("request");
    let first = tokio::time::timeout(WAIT, stream.next())
        .await
        .expect("an event")
        .expect("an event")
        .expect("no error");
    let StreamEvent::Notification(n) = &first else {
        panic!("expected the task's status first, got {first:?}")
    };
    assert_eq!(n.method, "notifications/tasks/status");
    let task: Value = serde_json::from_str(n.params.as_ref().unwrap().get()).unwrap();
    let id = stream.detach_task().expect("a task to detach");
    assert_eq!(task["taskId"], id.as_str());
    task
}

/// Starts `tool` as a task; its id.
async fn create(client: &LegacyClient, tool: &str) -> String {
    let task = create_with(client, tool, json!({"ttl": 60_000})).await;
    assert_eq!(task["status"], "working", "{task}");
    assert_eq!(task["ttl"], 60_000);
    assert_eq!(task["pollInterval"], 20);
    assert!(
        task["createdAt"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{task}"
    );
    assert!(task["lastUpdatedAt"].is_string());
    task["taskId"].as_str().unwrap().to_owned()
}

async fn status(client: &LegacyClient, id: &str) -> Value {
    ok(client, "tasks/get", json!({"taskId": id})).await
}

async fn wait_status(client: &LegacyClient, id: &str, want: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let t = status(client, id).await;
        if t["status"] == want {
            return t;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {id} never {want}: {t}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn capability_and_task_support_only_with_a_store() {
    let f = with_tasks().await;
    let c = client(&f.server.url()).await;
    let caps = &c.initialize_result().capabilities;
    assert_eq!(
        caps["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    assert_eq!(
        caps["tools"],
        json!({}),
        "the handler's own capabilities stay"
    );
    let tools = ok(&c, "tools/list", json!({})).await;
    let support: Vec<Value> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["execution"]["taskSupport"].clone())
        .collect();
    assert_eq!(support, [json!("optional"), json!("required"), Value::Null]);

    let plain = start(rev::server_config()).await;
    let c = client(&plain.server.url()).await;
    assert!(c.initialize_result().capabilities.get("tasks").is_none());
    let tools = ok(&c, "tools/list", json!({})).await;
    assert!(tools["tools"][0].get("execution").is_none());
    // Without tasks a task-augmented call is served normally ("MUST
    // process requests of that type normally, ignoring any
    // task-augmentation metadata") and tasks/* are the handler's.
    let r = ok(&c, "tools/call", json!({"name": "quick", "task": {}})).await;
    assert_eq!(r["content"][0]["text"], "done");
    assert_eq!(
        err(&c, "tasks/get", json!({"taskId": "x"})).await.code,
        -32601
    );
}

#[tokio::test]
async fn task_support_rules_are_method_not_found() {
    let f = with_tasks().await;
    let c = client(&f.server.url()).await;
    let e = err(&c, "tools/call", json!({"name": "quick", "task": {}})).await;
    assert_eq!(e.code, -32601, "a task on a forbidden tool: {e}");
    let e = err(&c, "tools/call", json!({"name": "only_task"})).await;
    assert_eq!(e.code, -32601, "a required tool without a task: {e}");
    // Decided by the name the tasks layer read with `params.task`, in one
    // walk of the params (`Handler::tool_execution`).
    assert_eq!(*f.handler.named.lock().unwrap(), ["quick", "only_task"]);
    // Optional without a task: an ordinary call.
    f.open.send(true).unwrap();
    let r = ok(&c, "tools/call", json!({"name": "gate"})).await;
    assert_eq!(r["content"][0]["text"], "opened; task -");
    let id = create(&c, "only_task").await;
    let t = wait_status(&c, &id, "completed").await;
    assert!(
        t.get("result").is_none(),
        "tasks/get carries no result: {t}"
    );
}

#[tokio::test]
async fn working_then_completed_and_result_blocks_until_then() {
    let f = with_tasks().await;
    let c = client(&f.server.url()).await;
    let id = create(&c, "gate").await;
    let t = wait_status(&c, &id, "working").await;
    assert_eq!(t["taskId"], id.as_str());
    let waiting = wait_status_message(&c, &id, "waiting").await;
    assert_eq!(waiting["status"], "working");
    // tasks/result blocks until the gate opens. Its first event, the
    // current status, is sent once it follows the task, so what the task
    // does after that reaches this stream.
    let mut stream = c
        .request(
            "tasks/result",
            Some(to_raw(&json!({"taskId": id})).unwrap()),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    let pending = tokio::spawn(collect(stream));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        !pending.is_finished(),
        "tasks/result answered before the task ended"
    );
    f.open.send(true).unwrap();
    let (mut events, response) = pending.await.unwrap().unwrap();
    events.insert(0, first);
    let result: Value = serde_json::from_str(response.payload.unwrap().get()).unwrap();
    assert_eq!(result["content"][0]["text"], format!("opened; task {id}"));
    assert_eq!(result["_meta"][RELATED], json!({"taskId": id}));
    let statuses: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Notification(n) if n.method == "notifications/tasks/status" => {
                let p: Value = serde_json::from_str(n.params.as_ref().unwrap().get()).unwrap();
                assert!(
                    p["_meta"].get(RELATED).is_none(),
                    "no related-task on a status notification"
                );
                Some(p["status"].as_str().unwrap().to_owned())
            }
            _ => None,
        })
        .collect();
    // Progress sent while tasks/result waits is relayed on its stream, with
    // the creating request's token ("remains valid throughout the task
    // lifetime") and the related-task metadata.
    let progress: Vec<Value> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Notification(n) if n.method == "notifications/progress" => {
                serde_json::from_str(n.params.as_ref().unwrap().get()).ok()
            }
            _ => None,
        })
        .collect();
    assert_eq!(progress.len(), 1, "{progress:?}");
    assert_eq!(progress[0]["progressToken"], "p");
    assert_eq!(progress[0]["message"], "opened");
    assert_eq!(progress[0]["_meta"][RELATED], json!({"taskId": id}));
    assert_eq!(
        statuses.first().map(String::as_str),
        Some("working"),
        "{statuses:?}"
    );
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("completed"),
        "{statuses:?}"
    );
    let t = status(&c, &id).await;
    assert_eq!(t["status"], "completed");
    // tasks/result again: the same result.
    let again = ok(&c, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(again, result);
}

async fn wait_status_message(c: &LegacyClient, id: &str, want: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let t = status(c, id).await;
        if t["statusMessage"] == want {
            return t;
        }
        assert!(tokio::time::Instant::now() < deadline, "never {want}: {t}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn failures_end_failed_and_result_returns_what_the_call_would_have() {
    let f = with_tasks().await;
    let c = client(&f.server.url()).await;
    let id = create(&c, "fail").await;
    let t = wait_status(&c, &id, "failed").await;
    assert!(
        t["statusMessage"].as_str().unwrap().contains("exploded"),
        "{t}"
    );
    let e = err(&c, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(
        (e.code, e.message.contains("exploded")),
        (-32603, true),
        "{e}"
    );

    let id = create(&c, "tool_error").await;
    wait_status(&c, &id, "failed").await;
    let r = ok(&c, "tasks/result", json!({"taskId": id})).await;
    assert_eq!(r["isError"], true);
    assert_eq!(r["_meta"][RELATED]["taskId"], id.as_str());
}

#[tokio::test]
async fn cancel_a_running_task_then_a_terminal_one_is_invalid_params() {
    let f = with_tasks().await;
    let c = client(&f.server.url()).await;
    let id = create(&c, "gate").await;
    wait_status_message(&c, &id, "waiting").await;
    let t = ok(&c, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(t["status"], "cancelled");
    eventually("the handler saw the cancellation", || {
        f.handler.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;
    f.open.send(true).unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(
        status(&c, &id).await["status"],
        "cancelled",
        "cancelled stays cancelled"
    );
    let e = err(&c, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("'cancelled'"), "{e}");
    let done = create(&c, "only_task").await;
    wait_status(&c, &done, "completed").await;
    let e = err(&c, "tasks/cancel", json!({"taskId": done})).await;
    assert_eq!(e.code, -32602, "{e}");
    assert!(e.message.contains("'completed'"), "{e}");
    let e = err(&c, "tasks/result", json!({"taskId": id})).await;
    assert!(e.message.contains("cancelled"), "{e}");
}

/// A task's worker takes over its creating request's place in the
/// engine's bound on running work (`ServerConfig::running`, given to the
/// handler as `RequestContext::admission`) and keeps it, with no
/// connection, until the task ends: with room for two requests, two tasks
/// run (a second place for the worker beside its creating request's, as
/// until session 19, left room for one), and then every request is
/// refused at admission (`503`, a `-32603` naming the limit) until they
/// end.
#[tokio::test]
async fn a_running_task_holds_its_place_in_max_running() {
    let f = start(
        rev::server_config()
            .with_retry_ms(20)
            .with_tasks(tasks_config())
            .with_max_running(2),
    )
    .await;
    let c = client(&f.server.url()).await;
    let first = create(&c, "gate").await;
    let second = create(&c, "gate").await;
    // Only the workers run once the creating requests have answered.
    eventually("the creating requests ended", || {
        f.legacy.running_requests() == 2
    })
    .await;

    let call = json!({"name": "gate", "arguments": {}, "task": {"ttl": 60_000}});
    let refused = c
        .request(
            "tools/call",
            Some(to_raw(&call).unwrap()),
            RequestOptions::default(),
        )
        .await
        .map(|_| ())
        .expect_err("refused at admission");
    let TransportError::Http {
        status: 503,
        rpc: Some(e),
        ..
    } = &refused
    else {
        panic!("expected a 503 with a JSON-RPC error, got {refused:?}");
    };
    assert_eq!(e.code, -32603, "{e:?}");
    assert!(e.message.contains("maximum of 2 requests"), "{e:?}");

    f.open.send(true).unwrap();
    eventually("the workers ended", || f.legacy.running_requests() == 0).await;
    wait_status(&c, &first, "completed").await;
    wait_status(&c, &second, "completed").await;
    let listed = ok(&c, "tasks/list", json!({})).await;
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 2, "{listed}");
}

#[tokio::test]
async fn another_session_cannot_see_the_task() {
    let f = with_tasks().await;
    let mine = client(&f.server.url()).await;
    let theirs = client(&f.server.url()).await;
    let id = create(&mine, "gate").await;
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let e = err(&theirs, method, json!({"taskId": id})).await;
        assert_eq!(e.code, -32602, "{method}: {e}");
        assert!(e.message.contains("Task not found"), "{method}: {e}");
    }
    assert_eq!(
        ok(&theirs, "tasks/list", json!({})).await["tasks"],
        json!([])
    );
    assert_eq!(status(&mine, &id).await["status"], "working");
    let e = err(&mine, "tasks/get", json!({"taskId": "no-such-task"})).await;
    assert_eq!(e.code, -32602);
    let e = err(&mine, "tasks/get", json!({})).await;
    assert_eq!(e.code, -32602);
    f.open.send(true).unwrap();
}

#[tokio::test]
async fn list_pages_with_cursors() {
    let f = with_tasks().await;
    f.open.send(true).unwrap();
    let c = client(&f.server.url()).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(create(&c, "only_task").await);
    }
    let first = ok(&c, "tasks/list", json!({})).await;
    let page: Vec<&str> = first["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(page, [ids[0].as_str(), ids[1].as_str()]);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next cursor")
        .to_owned();
    let second = ok(&c, "tasks/list", json!({"cursor": cursor})).await;
    assert_eq!(second["tasks"][0]["taskId"], ids[2].as_str());
    assert_eq!(second["tasks"].as_array().unwrap().len(), 1);
    assert!(second.get("nextCursor").is_none(), "{second}");
    let e = err(&c, "tasks/list", json!({"cursor": "bogus"})).await;
    assert_eq!(e.code, -32602);
}

#[tokio::test]
async fn input_mid_task_goes_over_tasks_result_with_related_task() {
    let f = with_tasks().await;
    let input = ScriptedInput::ada();
    let c = client_with(&f.server.url(), input.clone()).await;
    let id = create(&c, "ask").await;
    wait_status(&c, &id, "input_required").await;
    let (events, response) = rpc(&c, "tasks/result", json!({"taskId": id})).await;
    let result: Value = serde_json::from_str(response.payload.unwrap().get()).unwrap();
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Ada"),
        "{result}"
    );
    let asked = input.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].0, "elicitation/create");
    assert_eq!(asked[0].1["_meta"][RELATED], json!({"taskId": id}));
    assert!(
        events.iter().any(
            |e| matches!(e, StreamEvent::ServerRequest(r) if r.method == "elicitation/create")
        ),
        "the input request came on the tasks/result stream"
    );
    assert_eq!(status(&c, &id).await["status"], "completed");
}

#[tokio::test]
async fn tasks_result_survives_polling_cuts() {
    let f = start(
        rev::server_config()
            .with_retry_ms(20)
            .with_resume_hold(Duration::ZERO)
            .with_disconnect("after-priming".parse().unwrap())
            .with_tasks(tasks_config()),
    )
    .await;
    let c = client(&f.server.url()).await;
    let id = create(&c, "gate").await;
    let stream = c
        .request(
            "tasks/result",
            Some(to_raw(&json!({"taskId": id})).unwrap()),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    let pending = tokio::spawn(collect(stream));
    eventually("the client resumed tasks/result at least twice", || {
        f.resumes.load(Ordering::SeqCst) >= 2
    })
    .await;
    f.open.send(true).unwrap();
    let (_, response) = pending.await.unwrap().unwrap();
    let result: Value = serde_json::from_str(response.payload.unwrap().get()).unwrap();
    assert_eq!(result["content"][0]["text"], format!("opened; task {id}"));
}

#[tokio::test]
async fn an_expired_task_is_invalid_params() {
    let f = with_tasks().await;
    let c = client(&f.server.url()).await;
    let task = create_with(&c, "gate", json!({"ttl": 30})).await;
    let id = task["taskId"].as_str().unwrap().to_owned();
    assert_eq!(task["ttl"], 30);
    tokio::time::sleep(Duration::from_millis(60)).await;
    let e = err(&c, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(e.code, -32602);
    assert!(
        e.message.contains("expired") || e.message.contains("not found"),
        "{e}"
    );
}

/// The one handler API: the same `MayBeLong` tool, called without
/// `params.task`, is served by SEP-1699 polling (priming, cut, `retry`,
/// resumption) when the server polls, and on one held connection when it
/// does not; progress arrives either way.
#[tokio::test]
async fn may_be_long_without_a_task_is_polled_or_held() {
    for (policy, polled) in [("after-priming", true), ("never", false)] {
        let f = start(
            rev::server_config()
                .with_retry_ms(20)
                .with_resume_hold(Duration::ZERO)
                .with_disconnect(policy.parse().unwrap())
                .with_tasks(tasks_config()),
        )
        .await;
        let c = client(&f.server.url()).await;
        let stream = c
            .request(
                "tools/call",
                Some(to_raw(&json!({"name": "gate", "arguments": {}})).unwrap()),
                RequestOptions {
                    progress: true,
                    ..RequestOptions::default()
                },
            )
            .await
            .unwrap();
        let pending = tokio::spawn(collect(stream));
        if polled {
            eventually("the client resumed the call", || {
                f.resumes.load(Ordering::SeqCst) >= 2
            })
            .await;
        } else {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        f.open.send(true).unwrap();
        let (events, response) = pending.await.unwrap().unwrap();
        let result: Value = serde_json::from_str(response.payload.unwrap().get()).unwrap();
        assert_eq!(result["content"][0]["text"], "opened; task -", "{policy}");
        assert!(
            result.get("task").is_none(),
            "{policy}: no task without params.task"
        );
        assert!(
            events.iter().any(|e| matches!(e, StreamEvent::Notification(n) if n.method == "notifications/progress")),
            "{policy}: progress delivered"
        );
        if !polled {
            assert_eq!(f.resumes.load(Ordering::SeqCst), 0, "held: never resumed");
        }
    }
}

// ---------------------------------------------------------------------------
// Our client following the tasks it creates
// ---------------------------------------------------------------------------

/// `tools/call` of `tool` as a task, through our client.
async fn call_as_task(
    c: &LegacyClient,
    tool: &str,
) -> mcp_transport_core::transport::ResponseStream {
    c.request(
        "tools/call",
        Some(to_raw(&json!({"name": tool, "arguments": {}, "task": {}})).unwrap()),
        RequestOptions::default(),
    )
    .await
    .unwrap()
}

fn task_statuses(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Notification(n) if n.method == "notifications/tasks/status" => {
                let p: Value = serde_json::from_str(n.params.as_ref()?.get()).ok()?;
                Some(p["status"].as_str()?.to_owned())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_client_waits_on_tasks_result_for_the_call() {
    let f = with_tasks().await;
    let c = client(&f.server.url()).await;
    let mut stream = call_as_task(&c, "gate").await;
    let first = stream.next().await.unwrap().unwrap();
    let id = stream
        .task_id()
        .expect("the task id is known after the first event");
    assert_eq!(task_statuses(&[first]), ["working"]);
    f.open.send(true).unwrap();
    let mut rest = Vec::new();
    while let Some(e) = stream.next().await {
        rest.push(e.unwrap());
    }
    let StreamEvent::Response(r) = rest.last().unwrap() else {
        panic!("{rest:?}")
    };
    let v: Value = serde_json::from_str(r.payload.as_ref().unwrap().get()).unwrap();
    assert_eq!(v["content"][0]["text"], format!("opened; task {id}"));
    assert_eq!(
        task_statuses(&rest).last().map(String::as_str),
        Some("completed")
    );
    // The final response answers the tools/call (its id), not tasks/result.
    assert!(matches!(
        r.id,
        Some(mcp_transport_core::jsonrpc::RequestId::Number(_))
    ));
    // Failures come back as the call would have answered.
    let r = call_as_task(&c, "fail").await.response().await.unwrap();
    assert_eq!(r.payload.unwrap_err().code, -32603);
    let r = call_as_task(&c, "tool_error")
        .await
        .response()
        .await
        .unwrap();
    let v: Value = serde_json::from_str(r.payload.unwrap().get()).unwrap();
    assert_eq!(v["isError"], true);
}

#[tokio::test]
async fn the_client_answers_input_inside_a_task() {
    let f = with_tasks().await;
    let input = ScriptedInput::ada();
    let c = client_with(&f.server.url(), input.clone()).await;
    let r = call_as_task(&c, "ask").await.response().await.unwrap();
    let v: Value = serde_json::from_str(r.payload.unwrap().get()).unwrap();
    assert!(
        v["content"][0]["text"].as_str().unwrap().contains("Ada"),
        "{v}"
    );
    assert_eq!(input.methods(), ["elicitation/create"]);
}

#[tokio::test]
async fn the_client_follows_a_task_across_polling_cuts() {
    let f = start(
        rev::server_config()
            .with_retry_ms(20)
            .with_resume_hold(Duration::ZERO)
            .with_disconnect("after-priming".parse().unwrap())
            .with_tasks(tasks_config()),
    )
    .await;
    let c = client(&f.server.url()).await;
    let pending = tokio::spawn({
        let stream = call_as_task(&c, "gate").await;
        stream.response()
    });
    eventually("tasks/result was resumed", || {
        f.resumes.load(Ordering::SeqCst) >= 3
    })
    .await;
    f.open.send(true).unwrap();
    let r = pending.await.unwrap().unwrap();
    let v: Value = serde_json::from_str(r.payload.unwrap().get()).unwrap();
    assert!(
        v["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("opened; task ")
    );
}

#[tokio::test]
async fn dropping_the_followed_call_cancels_the_task() {
    let f = with_tasks().await;
    let c = client(&f.server.url()).await;
    let mut stream = call_as_task(&c, "gate").await;
    stream.next().await.unwrap().unwrap();
    let id = stream.task_id().unwrap();
    drop(stream);
    eventually("the handler saw the cancellation", || {
        f.handler.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(status(&c, &id).await["status"], "cancelled");
}

#[tokio::test]
async fn a_detached_task_outlives_the_stream_and_is_resumed_by_id() {
    let f = with_tasks().await;
    let c = client(&f.server.url()).await;
    let stream = call_as_task(&c, "gate").await;
    // Nothing read yet: no task to detach.
    let mut stream = stream.detach_task().expect_err("no task known yet");
    stream.next().await.unwrap().unwrap();
    let id = stream.detach_task().expect("a task");
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(status(&c, &id).await["status"], "working");
    assert_eq!(f.handler.cancelled.load(Ordering::SeqCst), 0);
    let mut resumed = c.resume_task(&id).await.unwrap();
    let first = resumed.next().await.unwrap().unwrap();
    assert_eq!(task_statuses(&[first]), ["working"]);
    f.open.send(true).unwrap();
    let r = resumed.response().await.unwrap();
    let v: Value = serde_json::from_str(r.payload.unwrap().get()).unwrap();
    assert_eq!(v["content"][0]["text"], format!("opened; task {id}"));
    // An unknown id ends with the server's -32602.
    let r = c
        .resume_task("nope")
        .await
        .unwrap()
        .response()
        .await
        .unwrap();
    assert_eq!(r.payload.unwrap_err().code, -32602);
}

#[tokio::test]
async fn ending_the_session_cancels_its_running_tasks() {
    let f = with_tasks().await;
    let c = client(&f.server.url()).await;
    let id = create(&c, "gate").await;
    wait_status_message(&c, &id, "waiting").await;
    c.close().await.unwrap();
    eventually("the session's task was cancelled with it", || {
        f.handler.cancelled.load(Ordering::SeqCst) == 1
    })
    .await;
}

/// Instance A created a task for this session and died: its worker's
/// lease lapsed. Instance B (this server, sharing A's task and lease
/// stores) fails the task at the next `tasks/get`, so the client is not
/// left polling a task nobody runs; a task whose worker runs on B is not.
#[tokio::test]
async fn a_task_is_failed_only_when_its_worker_is_gone() {
    use mcp_test_support::orphan::Orphans;
    use mcp_transport_core::task_store::liveness::WORKER_GONE;

    let shared = Orphans::new();
    let f = start(rev::server_config().with_tasks(TasksConfig {
        store: shared.store.clone(),
        leases: Some(shared.leases_for("instance-b")),
        ..tasks_config()
    }))
    .await;
    let c = client(&f.server.url()).await;
    shared.task("task-of-a", c.session_id()).await;
    // While A's lease is live, the task is A's and stays as it is.
    assert_eq!(status(&c, "task-of-a").await["status"], "working");
    assert_eq!(shared.die(), 1, "A dies");
    let t = status(&c, "task-of-a").await;
    assert_eq!(t["status"], "failed", "{t}");
    assert_eq!(t["statusMessage"], WORKER_GONE);
    let e = err(&c, "tasks/result", json!({"taskId": "task-of-a"})).await;
    assert_eq!(e.code, -32603, "{e:?}");

    // A task whose worker runs here is alive whatever its lease says (a
    // lease store that lost this instance's renewals must not fail work
    // still running): B's own lease lapsing changes nothing for B.
    let (logged, guard) = mcp_test_support::trace::Logged::install();
    let id = create(&c, "gate").await;
    drop(guard);
    let warned = logged.take(tracing::Level::WARN);
    assert!(
        !warned.iter().any(|w| w.contains("lease")),
        "the worker took its lease: {warned:?}"
    );
    assert_eq!(shared.leases.lapse_holder("instance-b"), 1);
    assert_eq!(status(&c, &id).await["status"], "working");
    f.open.send(true).unwrap();
    wait_status(&c, &id, "completed").await;
}

/// `TasksConfig::max_tasks_per_session`: a session at its bound is
/// refused (`-32603` naming it) unless some of its tasks have expired,
/// which are forgotten first.
#[tokio::test]
async fn a_session_holds_at_most_its_maximum_of_tasks() {
    let f = start(
        rev::server_config()
            .with_retry_ms(20)
            .with_tasks(TasksConfig {
                max_tasks_per_session: 2,
                ..tasks_config()
            }),
    )
    .await;
    let task_call = |ttl: u64| json!({"name": "gate", "arguments": {}, "task": {"ttl": ttl}});
    let c = client(&f.server.url()).await;
    create_with(&c, "gate", json!({"ttl": 60_000})).await;
    create_with(&c, "gate", json!({"ttl": 60_000})).await;
    let e = err(&c, "tools/call", task_call(60_000)).await;
    assert_eq!(e.code, -32603, "{e:?}");
    assert!(e.message.contains("maximum of 2 tasks"), "{}", e.message);
    // Another session has its own bound; once its tasks expire, they no
    // longer count.
    let c2 = client(&f.server.url()).await;
    create_with(&c2, "gate", json!({"ttl": 1})).await;
    create_with(&c2, "gate", json!({"ttl": 1})).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    create_with(&c2, "gate", json!({"ttl": 60_000})).await;
    f.open.send(true).unwrap();
}

/// A minted id already taken is minted again, three times at most (four
/// tries); then the call fails (`-32603`) and no task exists.
#[tokio::test]
async fn a_taken_task_id_is_minted_again_three_times() {
    for (collisions, made) in [(3, true), (4, false)] {
        let store = Arc::new(mcp_test_support::colliding::Colliding::new(collisions));
        let f = start(rev::server_config().with_tasks(TasksConfig {
            store: store.clone(),
            ..tasks_config()
        }))
        .await;
        let c = client(&f.server.url()).await;
        if made {
            create_with(&c, "gate", json!({"ttl": 60_000})).await;
        } else {
            let call = json!({"name": "gate", "arguments": {}, "task": {"ttl": 60_000}});
            let e = err(&c, "tools/call", call).await;
            assert_eq!(e.code, -32603, "{e:?}");
            assert_eq!(ok(&c, "tasks/list", json!({})).await["tasks"], json!([]));
        }
        assert_eq!(store.left(), 0, "every collision was met: four tries");
        f.open.send(true).unwrap();
    }
}

/// Input a task asks of a client that did not declare the capability it
/// needs fails the task with `-32021` (`MissingRequiredClientCapability`)
/// naming it; nothing is asked.
#[tokio::test]
async fn input_the_client_cannot_give_fails_the_task() {
    let f = with_tasks().await;
    let input = ScriptedInput::ada();
    let c = LegacyClient::connect(
        rev::client_config(f.server.url())
            .with_capabilities(json!({ "tasks": {} }))
            .with_input_handler(input.clone()),
    )
    .await
    .expect("connect");
    for (method, cap) in [
        ("elicitation/create", "elicitation"),
        ("sampling/createMessage", "sampling"),
        ("roots/list", "roots"),
    ] {
        let mut stream = c
            .request(
                "tools/call",
                Some(to_raw(&json!({"name": "ask", "arguments": {"method": method}, "task": {"ttl": 60_000}})).unwrap()),
                RequestOptions::default(),
            )
            .await
            .expect("request");
        let first = stream.next().await.unwrap().unwrap();
        let StreamEvent::Notification(n) = &first else {
            panic!("{first:?}")
        };
        let task: Value = serde_json::from_str(n.params.as_ref().unwrap().get()).unwrap();
        let id = stream.detach_task().expect("a task");
        assert_eq!(task["taskId"], id.as_str());
        wait_status(&c, &id, "failed").await;
        let e = err(&c, "tasks/result", json!({"taskId": id})).await;
        assert_eq!(e.code, -32021, "{method}: {e:?}");
        let data: Value = serde_json::from_str(e.data.expect("data").get()).unwrap();
        assert!(
            data["requiredCapabilities"][cap].is_object(),
            "{method}: {data}"
        );
    }
    assert_eq!(input.calls(), 0, "nothing was asked");
}
