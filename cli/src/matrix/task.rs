//! `task`: the task lifecycle where both sides declare tasks — create,
//! poll, input mid-way, cancel — checked on the wire; elsewhere the call
//! must be answered directly, with no task anywhere on the wire.

use std::time::Duration;

use futures_util::StreamExt;
use mcp_negotiate::client::{Connection, Underlying};
use mcp_transport_core::jsonrpc::Notification;
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport};
use serde_json::{Value, json};

use super::declared::{self, created_task};
use super::harness::{Harness, Observed};
use super::long_running::{Delivered, call_params, run_call};
use super::outcome::*;
use super::seen::Seen;
use super::wire::Exchange;
use mcp_http_edge::headers;

/// How long `slow_ask` works before and after its question.
const WORK_MS: u64 = 100;

/// Whether the matrix client asks for a task itself (2025-11-25, where
/// tasks are "requestor-driven"): when the server declared
/// `tasks.requests.tools.call` and lists `tool` with `execution.taskSupport`
/// `optional` or `required` (*Tasks*, "Tool-Level Negotiation": without
/// them "clients MUST NOT attempt to invoke the tool as a task"). On
/// 2026-07-28 the declaration in the request's capabilities is the ask.
pub(crate) async fn augment(conn: &Connection, harness: &Harness, tool: &str) -> bool {
    let rev = conn.revision();
    if !may_augment(
        &rev,
        declared::on_wire(&harness.wire.exchanges(), &rev).server,
    ) {
        return false;
    }
    let Ok(stream) = conn
        .request("tools/list", None, RequestOptions::default())
        .await
    else {
        return false;
    };
    let Ok(Ok(list)) = stream.response().await.map(|r| result_value(&r)) else {
        return false;
    };
    allows_task(&list, tool)
}

/// Whether a client on `rev` may ask for a task at all: on 2025-11-25,
/// when the server declared `tasks.requests.tools.call`.
fn may_augment(rev: &mcp_transport_core::ProtocolVersion, server_declared: bool) -> bool {
    *rev == mcp_transport_core::ProtocolVersion::V2025_11_25 && server_declared
}

/// Whether the `tools/list` result `list` lists `tool` with
/// `execution.taskSupport` `optional` or `required`.
fn allows_task(list: &Value, tool: &str) -> bool {
    list["tools"].as_array().is_some_and(|tools| {
        tools.iter().any(|t| {
            t["name"] == tool
                && matches!(
                    t["execution"]["taskSupport"].as_str(),
                    Some("optional" | "required")
                )
        })
    })
}

/// The `tasks/*` requests naming task `id`, in order.
pub(crate) fn task_requests(wire: &[Exchange], id: &str) -> Vec<Exchange> {
    wire.iter()
        .filter(|e| {
            e.rpc_method().is_some_and(|m| m.starts_with("tasks/"))
                && e.json()["params"]["taskId"] == id
        })
        .cloned()
        .collect()
}

/// The task id and status of a client stream event about a task
/// (2026-07-28 `notifications/tasks`, 2025-11-25
/// `notifications/tasks/status`).
fn task_event(event: &StreamEvent) -> Option<(String, String)> {
    let StreamEvent::Notification(Notification { method, params }) = event else {
        return None;
    };
    if !method.starts_with("notifications/tasks") {
        return None;
    }
    let p: Value = serde_json::from_str(params.as_deref()?.get()).ok()?;
    let p = if p["task"].is_object() {
        &p["task"]
    } else {
        &p
    };
    Some((
        p["taskId"].as_str()?.to_owned(),
        p["status"].as_str().unwrap_or_default().to_owned(),
    ))
}

/// The scenario (see the module docs).
pub(crate) async fn task(conn: &Connection, harness: &Harness) -> Outcome {
    // The call first: on 2026-07-28 the client declares tasks on the
    // request itself.
    let augment = augment(conn, harness, "slow_ask").await;
    let delivered = run_call(conn.clone(), "slow_ask", json!({ "ms": WORK_MS }), augment)
        .await
        .map_err(|e| from_error(&e))?;
    let rev = conn.revision();
    let wire = harness.wire.exchanges();
    if !(declared::revision_has_tasks(&rev) && declared::on_wire(&wire, &rev).both()) {
        return no_task(delivered, &wire);
    }
    let id = create_poll_input(delivered, &wire, rev.is_modern())?;
    let cancelled = cancel(conn, harness, augment).await?;
    Ok(works(format!(
        "task {id}: created, polled, input_required answered mid-way, completed; {cancelled}"
    )))
}

/// Tasks not on both sides: the long-running call is answered directly.
fn no_task((_, response): Delivered, wire: &[Exchange]) -> Outcome {
    let response = response.ok_or_else(|| failed("the stream ended without a response"))?;
    let v = result_value(&response).map_err(failed)?;
    if let Some(id) = wire
        .iter()
        .flat_map(Exchange::messages)
        .find_map(|m| created_task(&m))
    {
        return Err(failed(format!(
            "a CreateTaskResult (task {id}) came back although not both sides declare tasks"
        )));
    }
    if let Some(e) = wire
        .iter()
        .find(|e| e.rpc_method().is_some_and(|m| m.starts_with("tasks/")))
    {
        return Err(failed(format!(
            "the client sent {} although no task exists",
            e.rpc_method().unwrap_or_default()
        )));
    }
    let how = if v["isError"] == true {
        "a tool error (no input on this revision)"
    } else {
        "its result"
    };
    Ok(absent(format!(
        "no CreateTaskResult and no tasks/* request: the long-running call was answered directly with {how}"
    )))
}

/// Create, poll, input mid-way: `slow_ask` as a task; the task id.
fn create_poll_input(
    (events, response): Delivered,
    wire: &[Exchange],
    modern: bool,
) -> Result<String, Observed> {
    let response = response.ok_or_else(|| failed("the stream ended without a response"))?;
    let text = result_text(&response).map_err(failed)?;
    ensure(text == "hello, Ada", || {
        format!("the task answered {text:?}")
    })?;
    let post = super::checks::call_post(wire, "slow_ask", None)
        .ok_or_else(|| failed("no tools/call on the wire"))?;
    let id = post
        .messages()
        .iter()
        .find_map(created_task)
        .ok_or_else(|| failed("both sides declare tasks, yet no CreateTaskResult came back"))?;
    let requests = task_requests(wire, &id);
    let polls = requests
        .iter()
        .filter(|e| {
            matches!(
                e.rpc_method().as_deref(),
                Some("tasks/get" | "tasks/result")
            )
        })
        .count();
    ensure(polls > 0, || format!("task {id} was never polled"))?;
    if modern {
        // "the client MUST set the Mcp-Name header to the value of
        // params.taskId"
        if let Some(bad) = requests
            .iter()
            .find(|e| e.header(headers::NAME) != Some(id.as_str()))
        {
            return Err(failed(format!(
                "{} for task {id} carried Mcp-Name {:?}",
                bad.rpc_method().unwrap_or_default(),
                bad.header(headers::NAME)
            )));
        }
    }
    input_mid_way(wire, &requests, &id, modern)?;
    let named = events.iter().filter_map(task_event).any(|(t, _)| t == id);
    ensure(named, || {
        format!("the client's stream never named task {id} (a caller cannot record it)")
    })?;
    Ok(id)
}

/// The task asked for input mid-way and got the answer.
fn input_mid_way(
    wire: &[Exchange],
    requests: &[Exchange],
    id: &str,
    modern: bool,
) -> Result<(), Observed> {
    if modern {
        // Tasks extension: "The tasks/get response will include outstanding
        // requests in the inputRequests field, and the client should provide
        // responses via the inputResponses field in subsequent tasks/update
        // requests."
        let statuses: Vec<String> = requests
            .iter()
            .filter(|e| e.rpc_method().as_deref() == Some("tasks/get"))
            .flat_map(Exchange::messages)
            .filter_map(|m| m["result"]["status"].as_str().map(str::to_owned))
            .collect();
        let asked = statuses.iter().position(|s| s == "input_required");
        let done = statuses.iter().rposition(|s| s == "completed");
        ensure(matches!((asked, done), (Some(a), Some(d)) if a < d), || {
            format!("task {id}'s polls saw {statuses:?}: no input_required before completed")
        })?;
        let update = requests.iter().any(|e| {
            e.rpc_method().as_deref() == Some("tasks/update")
                && e.json()["params"]["inputResponses"]
                    .as_object()
                    .is_some_and(|r| !r.is_empty())
        });
        return ensure(update, || {
            format!("no tasks/update carried inputResponses for task {id}")
        });
    }
    // 2025-11-25: the elicitation goes to the client as a request related
    // to the task, and its answer comes back.
    let asked = wire
        .iter()
        .flat_map(Exchange::messages)
        .any(|m| m["method"] == "elicitation/create");
    ensure(asked, || {
        format!("task {id} never sent its elicitation/create")
    })
}

/// Cancel: a long task, dropped by the caller once its id is known.
async fn cancel(conn: &Connection, harness: &Harness, augment: bool) -> Result<String, Observed> {
    let before = harness.handler.cancelled_count();
    let mut stream = conn
        .request(
            "tools/call",
            call_params("slow", json!({ "ms": 10_000 }), augment),
            RequestOptions::default(),
        )
        .await
        .map_err(|e| from_error(&e))?;
    let id = loop {
        match tokio::time::timeout(Duration::from_secs(3), stream.next()).await {
            Ok(Some(Ok(event))) => {
                if let Some((id, _)) = task_event(&event) {
                    break id;
                }
            }
            Ok(Some(Err(e))) => return Err(from_error(&e)),
            Ok(None) => return Err(failed("the long call ended before it was cancelled")),
            Err(_) => return Err(failed("no task status event for the long call")),
        }
    };
    // Dropping the response cancels the task (tasks/cancel).
    drop(stream);
    ensure(Seen::since(harness, before).saw_cancel().await, || {
        format!("the handler of task {id} never saw the cancellation")
    })?;
    cancelled_by_request(&harness.wire.exchanges(), &id)?;
    if let Underlying::Modern(client) = conn.underlying() {
        let status = ended_as(client, &id).await?;
        return Ok(format!(
            "task {id} cancelled by tasks/cancel (no notifications/cancelled), the handler saw it, tasks/get then reports it {status}"
        ));
    }
    Ok(format!(
        "task {id} cancelled by tasks/cancel (no notifications/cancelled), the handler saw it"
    ))
}

/// Task `id` was cancelled on the wire by `tasks/cancel`, and not by
/// `notifications/cancelled`: "The notifications/cancelled notification
/// MUST NOT be used for task cancellation."
fn cancelled_by_request(wire: &[Exchange], id: &str) -> Result<(), Observed> {
    let cancels = task_requests(wire, id)
        .into_iter()
        .filter(|e| e.rpc_method().as_deref() == Some("tasks/cancel"))
        .count();
    ensure(cancels > 0, || format!("no tasks/cancel named task {id}"))?;
    ensure(
        !wire
            .iter()
            .any(|e| e.rpc_method().as_deref() == Some("notifications/cancelled")),
        || "notifications/cancelled was sent to cancel a task".into(),
    )
}

/// How a task ended, by following it anew (`resume_task`): a cancelled
/// task ends with `-32800`.
async fn ended_as(
    client: &mcp_rev_2026_07_28::client::ModernClient,
    id: &str,
) -> Result<&'static str, Observed> {
    let stream = client.resume_task(id).await.map_err(|e| from_error(&e))?;
    let response = tokio::time::timeout(Duration::from_secs(3), stream.response())
        .await
        .map_err(|_| failed(format!("task {id} did not end after tasks/cancel")))?
        .map_err(|e| from_error(&e))?;
    ended_cancelled(response.payload, id)
}

/// A cancelled task's result is the `-32800` error.
fn ended_cancelled(
    payload: Result<Box<serde_json::value::RawValue>, mcp_transport_core::jsonrpc::ErrorObject>,
    id: &str,
) -> Result<&'static str, Observed> {
    match payload {
        Err(e) if e.code == -32800 => Ok("cancelled"),
        other => Err(failed(format!(
            "task {id} after tasks/cancel ended with {other:?}, not cancelled"
        ))),
    }
}

#[cfg(test)]
mod tests;
