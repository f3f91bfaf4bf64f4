//! The `task` scenario's wire checks against lifecycles built by hand:
//! each names a client or server that gets the task rules wrong and must
//! not pass.

use http::StatusCode;
use mcp_transport_core::jsonrpc::{Notification, Response};
use mcp_transport_core::transport::StreamEvent;
use serde_json::{Value, json};

use super::super::test_wire::{failure, post, said, text_answer};
use super::*;

/// The `slow_ask` call's id on the wire.
const CALL_ID: i64 = 2;

/// The `slow_ask` call's POST, answered with `answer`.
fn call(answer: &Value) -> Exchange {
    post(
        json!({"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call",
        "params": {"name": "slow_ask", "arguments": {"ms": WORK_MS}}}),
    )
    .answered_json(StatusCode::OK, answer)
}

/// A 2026-07-28 `CreateTaskResult` for task `t1`.
fn created_modern() -> Value {
    json!({"jsonrpc": "2.0", "id": CALL_ID,
        "result": {"resultType": "task", "taskId": "t1", "status": "working"}})
}

/// A 2025-11-25 `CreateTaskResult` for task `t1`.
fn created_legacy() -> Value {
    json!({"jsonrpc": "2.0", "id": CALL_ID,
        "result": {"task": {"taskId": "t1", "status": "working"}}})
}

/// A `tasks/*` request about `t1` (with `Mcp-Name: t1`), answered `result`.
fn tasks(method: &str, params: Value, result: Value) -> Exchange {
    let mut params = params;
    params["taskId"] = json!("t1");
    post(json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}))
        .with_header("mcp-name", "t1")
        .answered_json(
            StatusCode::OK,
            &json!({"jsonrpc": "2.0", "id": 7, "result": result}),
        )
}

fn get_saw(status: &str) -> Exchange {
    tasks(
        "tasks/get",
        json!({}),
        json!({"taskId": "t1", "status": status}),
    )
}

fn update(responses: Value) -> Exchange {
    tasks(
        "tasks/update",
        json!({"inputResponses": responses}),
        json!({}),
    )
}

/// A 2026-07-28 lifecycle done right: created, polled, asked for input,
/// answered by `tasks/update`, completed.
fn modern_wire() -> Vec<Exchange> {
    vec![
        call(&created_modern()),
        get_saw("working"),
        get_saw("input_required"),
        update(json!({"e1": {"action": "accept", "content": {"name": "Ada"}}})),
        get_saw("completed"),
    ]
}

/// The client's stream event about task `t1` (2026-07-28's shape).
fn status_event(method: &str, params: &Value) -> StreamEvent {
    StreamEvent::Notification(Notification::new(method, Some(params)).unwrap())
}

/// What the client delivered: the stream named `t1`, the answer `text`.
fn delivered(text: &str) -> Delivered {
    let event = status_event(
        "notifications/tasks",
        &json!({"taskId": "t1", "status": "working"}),
    );
    (vec![event], Some(text_answer(CALL_ID, text)))
}

#[test]
fn task_events_of_both_eras_name_their_task() {
    let modern = status_event(
        "notifications/tasks",
        &json!({"taskId": "t1", "status": "working"}),
    );
    let legacy = status_event(
        "notifications/tasks/status",
        &json!({"task": {"taskId": "t2", "status": "completed"}}),
    );
    let progress = status_event("notifications/progress", &json!({"taskId": "t3"}));
    let no_id = status_event("notifications/tasks", &json!({"status": "working"}));
    let response = StreamEvent::Response(text_answer(1, "x"));
    assert_eq!(task_event(&modern), Some(("t1".into(), "working".into())));
    assert_eq!(task_event(&legacy), Some(("t2".into(), "completed".into())));
    assert_eq!(task_event(&progress), None);
    assert_eq!(task_event(&no_id), None);
    assert_eq!(task_event(&response), None);
}

#[test]
fn task_requests_are_the_tasks_requests_naming_the_task() {
    let mut wire = modern_wire();
    wire.push(post(
        json!({"jsonrpc": "2.0", "id": 8, "method": "tasks/get",
        "params": {"taskId": "t9"}}),
    ));
    wire.push(post(
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"taskId": "t1"}}),
    ));
    let methods: Vec<String> = task_requests(&wire, "t1")
        .iter()
        .filter_map(Exchange::rpc_method)
        .collect();
    assert_eq!(
        methods,
        ["tasks/get", "tasks/get", "tasks/update", "tasks/get"]
    );
}

#[test]
fn a_modern_lifecycle_done_right_passes() {
    assert_eq!(
        create_poll_input(delivered("hello, Ada"), &modern_wire(), true),
        Ok("t1".into())
    );
}

#[test]
fn a_wrong_answer_fails() {
    let m = failure(create_poll_input(
        delivered("hello, Bob"),
        &modern_wire(),
        true,
    ));
    assert_eq!(m, "the task answered \"hello, Bob\"");
}

#[test]
fn a_task_never_polled_fails() {
    let wire = vec![
        call(&created_modern()),
        update(json!({"e1": {"action": "accept"}})),
    ];
    let m = failure(create_poll_input(delivered("hello, Ada"), &wire, true));
    assert_eq!(m, "task t1 was never polled");
}

#[test]
fn a_modern_poll_without_mcp_name_fails() {
    let mut wire = modern_wire();
    wire.insert(
        2,
        post(json!({"jsonrpc": "2.0", "id": 5, "method": "tasks/get",
            "params": {"taskId": "t1"}})),
    );
    let m = failure(create_poll_input(delivered("hello, Ada"), &wire, true));
    assert_eq!(m, "tasks/get for task t1 carried Mcp-Name None");
}

#[test]
fn a_stream_that_never_names_the_task_fails() {
    let (_, response) = delivered("hello, Ada");
    let m = failure(create_poll_input(
        (Vec::new(), response),
        &modern_wire(),
        true,
    ));
    assert!(m.contains("never named task t1"), "{m}");
}

#[test]
fn input_required_must_come_before_completed() {
    let wire = vec![
        call(&created_modern()),
        get_saw("completed"),
        get_saw("input_required"),
        update(json!({"e1": {"action": "accept"}})),
    ];
    let m = failure(create_poll_input(delivered("hello, Ada"), &wire, true));
    assert!(m.contains("no input_required before completed"), "{m}");
    let never_asked = vec![call(&created_modern()), get_saw("completed")];
    let m = failure(create_poll_input(
        delivered("hello, Ada"),
        &never_asked,
        true,
    ));
    assert!(m.contains("saw [\"completed\"]"), "{m}");
    let working_then_done = vec![
        call(&created_modern()),
        get_saw("working"),
        get_saw("completed"),
        update(json!({"e1": {"action": "accept"}})),
    ];
    let m = failure(create_poll_input(
        delivered("hello, Ada"),
        &working_then_done,
        true,
    ));
    assert!(m.contains("saw [\"working\", \"completed\"]"), "{m}");
}

#[test]
fn the_input_must_come_back_by_tasks_update() {
    let mut wire = modern_wire();
    wire.remove(3);
    let m = failure(create_poll_input(delivered("hello, Ada"), &wire, true));
    assert_eq!(m, "no tasks/update carried inputResponses for task t1");
    wire.insert(3, update(json!({})));
    let m = failure(create_poll_input(delivered("hello, Ada"), &wire, true));
    assert_eq!(m, "no tasks/update carried inputResponses for task t1");
}

/// A 2025-11-25 lifecycle: created, polled by `tasks/result` (no
/// `Mcp-Name`, which that revision does not have), the elicitation on
/// the wire when `asked`.
fn legacy_wire(asked: bool) -> Vec<Exchange> {
    let mut result_poll = post(json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/result",
        "params": {"taskId": "t1"}}));
    let elicit = json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
        "params": {"message": "name?"}});
    let answer = json!({"jsonrpc": "2.0", "id": 7,
        "result": {"content": [{"type": "text", "text": "hello, Ada"}]}});
    result_poll = if asked {
        result_poll.answered_sse(&format!("data: {elicit}\n\ndata: {answer}\n\n"))
    } else {
        result_poll.answered_sse(&format!("data: {answer}\n\n"))
    };
    vec![call(&created_legacy()), result_poll]
}

#[test]
fn a_legacy_lifecycle_asks_by_elicitation_and_needs_no_mcp_name() {
    assert_eq!(
        create_poll_input(delivered("hello, Ada"), &legacy_wire(true), false),
        Ok("t1".into())
    );
    let m = failure(create_poll_input(
        delivered("hello, Ada"),
        &legacy_wire(false),
        false,
    ));
    assert_eq!(m, "task t1 never sent its elicitation/create");
}

#[test]
fn without_tasks_the_call_is_answered_directly() {
    let answer = json!({"jsonrpc": "2.0", "id": CALL_ID,
        "result": {"content": [{"type": "text", "text": "hello, Ada"}]}});
    let wire = vec![call(&answer)];
    let out = no_task(
        (Vec::new(), Some(text_answer(CALL_ID, "hello, Ada"))),
        &wire,
    );
    assert!(matches!(out, Ok(Observed::Absent(_))), "{out:?}");
    assert!(said(&out).ends_with("answered directly with its result"));

    let tool_error = Response::result(
        mcp_transport_core::jsonrpc::RequestId::Number(CALL_ID),
        mcp_transport_core::jsonrpc::to_raw(&json!({"content": [], "isError": true})).unwrap(),
    );
    let out = no_task((Vec::new(), Some(tool_error)), &wire);
    assert!(said(&out).ends_with("with a tool error (no input on this revision)"));

    let out = no_task((Vec::new(), None), &wire);
    assert_eq!(said(&out), "the stream ended without a response");
}

#[test]
fn without_tasks_a_task_on_the_wire_fails() {
    let direct = (Vec::new(), Some(text_answer(CALL_ID, "hello, Ada")));
    let out = no_task(direct.clone(), &[call(&created_legacy())]);
    assert!(out.is_err());
    assert!(said(&out).contains("CreateTaskResult (task t1) came back"));

    let answer = json!({"jsonrpc": "2.0", "id": CALL_ID, "result": {"content": []}});
    let out = no_task(direct, &[call(&answer), get_saw("working")]);
    assert!(out.is_err());
    assert_eq!(
        said(&out),
        "the client sent tasks/get although no task exists"
    );
}

/// A `c-2025-11-25` (or `client`) connection to a fresh `server` of the
/// task scenario, declaring what the matrix client declares there.
async fn connected(
    client: super::super::ClientKind,
    server: super::super::ServerKind,
) -> (Connection, Harness) {
    use mcp_http_edge::faults::Faults;
    let harness = super::super::run::spawn_server(
        client,
        server,
        super::super::Scenario::Task,
        Faults::default(),
    )
    .await
    .expect("server");
    let cfg = super::super::harness::client_config(client, harness.addr, Faults::default())
        .with_capabilities(declared::client_capabilities());
    let conn = mcp_negotiate::client::connect(cfg).await.expect("connect");
    (conn, harness)
}

#[tokio::test]
async fn the_client_asks_for_a_task_only_where_2025_11_25_lets_it() {
    use super::super::{ClientKind as C, ServerKind as S};
    // s-all declares tasks.requests.tools.call; slow_ask allows a task,
    // echo does not.
    let (conn, harness) = connected(C::C1125, S::All).await;
    assert!(augment(&conn, &harness, "slow_ask").await);
    assert!(!augment(&conn, &harness, "echo").await);
    // s-2025-11-25 declares no tasks: "clients MUST NOT attempt to invoke
    // the tool as a task".
    let (conn, harness) = connected(C::C1125, S::S1125).await;
    assert!(!augment(&conn, &harness, "slow_ask").await);
    // 2026-07-28: the declaration in the request's capabilities is the ask.
    let (conn, harness) = connected(C::Modern, S::All).await;
    assert!(!augment(&conn, &harness, "slow_ask").await);
}

#[test]
fn only_a_2025_11_25_server_that_declared_tasks_may_be_asked() {
    use mcp_transport_core::ProtocolVersion as V;
    assert!(may_augment(&V::V2025_11_25, true));
    assert!(!may_augment(&V::V2025_11_25, false));
    assert!(!may_augment(&V::V2026_07_28, true));
    assert!(!may_augment(&V::V2025_06_18, true));
}

#[test]
fn a_tool_allows_a_task_when_it_says_optional_or_required() {
    let list = json!({"tools": [
        {"name": "a", "execution": {"taskSupport": "optional"}},
        {"name": "b", "execution": {"taskSupport": "required"}},
        {"name": "c", "execution": {"taskSupport": "forbidden"}},
        {"name": "d"},
    ]});
    assert!(allows_task(&list, "a"));
    assert!(allows_task(&list, "b"));
    assert!(!allows_task(&list, "c"));
    assert!(!allows_task(&list, "d"));
    assert!(!allows_task(&list, "e"));
    assert!(!allows_task(&json!({}), "a"));
}

#[test]
fn a_task_is_cancelled_by_tasks_cancel_alone() {
    let cancel = tasks("tasks/cancel", json!({}), json!({}));
    assert_eq!(
        cancelled_by_request(std::slice::from_ref(&cancel), "t1"),
        Ok(())
    );
    assert_eq!(
        failure(cancelled_by_request(&[get_saw("working")], "t1")),
        "no tasks/cancel named task t1"
    );
    assert_eq!(
        failure(cancelled_by_request(std::slice::from_ref(&cancel), "t2")),
        "no tasks/cancel named task t2"
    );
    let note = post(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": CALL_ID}}),
    );
    assert_eq!(
        failure(cancelled_by_request(&[cancel, note], "t1")),
        "notifications/cancelled was sent to cancel a task"
    );
}

#[test]
fn a_cancelled_task_ends_with_32800() {
    use mcp_transport_core::jsonrpc::ErrorObject;
    assert_eq!(
        ended_cancelled(Err(ErrorObject::new(-32800, "cancelled")), "t1"),
        Ok("cancelled")
    );
    let m = failure(ended_cancelled(Err(ErrorObject::new(-32603, "boom")), "t1"));
    assert!(
        m.starts_with("task t1 after tasks/cancel ended with Err("),
        "{m}"
    );
    let done = mcp_transport_core::jsonrpc::to_raw(&json!({"content": []})).unwrap();
    assert!(failure(ended_cancelled(Ok(done), "t1")).ends_with("not cancelled"));
}

#[tokio::test]
async fn the_task_scenario_says_what_it_saw_of_the_cancel() {
    use super::super::{ClientKind as C, Scenario, ServerKind as S};
    let r = super::super::run::run_one(C::Modern, S::All, Scenario::Task).await;
    let Observed::Works(text) = &r.observed else {
        panic!("{}", r.explain());
    };
    assert!(
        text.ends_with("cancelled by tasks/cancel (no notifications/cancelled), the handler saw it, tasks/get then reports it cancelled"),
        "{text}"
    );
}
