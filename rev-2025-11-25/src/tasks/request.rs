//! `tasks/get`, `tasks/list`, `tasks/cancel` and `tasks/result` (*Tasks*,
//! "Protocol Messages"), answered within the session's scope.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use mcp_transport_core::handler::{InputRequest, InputRequired, Outcome, RequestContext};
use mcp_transport_core::jsonrpc::{ErrorObject, INTERNAL_ERROR, Request};
use mcp_transport_core::task_store::{TaskRecord, TaskStatus, TaskStoreError, liveness};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use super::handler::params_of;
use super::wire;
use super::{Event, Tasks, now_ms};

/// `-32602` for an unknown, foreign or expired task, worded as the spec's
/// examples ("Failed to retrieve task: Task not found" / "Task has
/// expired"); `-32603` for a store failure.
fn store_error(e: TaskStoreError) -> ErrorObject {
    match e {
        TaskStoreError::NotFound { .. } => {
            ErrorObject::invalid_params("Failed to retrieve task: Task not found")
        }
        TaskStoreError::Expired { .. } => {
            ErrorObject::invalid_params("Failed to retrieve task: Task has expired")
        }
        e => ErrorObject::internal(e),
    }
}

/// `params.taskId`, or `-32602`.
fn task_id(request: &Request) -> Result<String, ErrorObject> {
    match params_of(request).get("taskId") {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(ErrorObject::invalid_params(
            "params.taskId (a string) is required",
        )),
    }
}

/// The task as the session sees it; with leases, a task whose worker's
/// instance died is failed first (`liveness::fail_if_worker_gone`).
async fn record(tasks: &Tasks, session: &str, id: &str) -> Result<TaskRecord, ErrorObject> {
    let store = &tasks.config.store;
    let r = store
        .get(id, Some(session), now_ms())
        .await
        .map_err(store_error)?;
    Ok(match &tasks.config.leases {
        Some(l) if tasks.running(id).is_none() => {
            liveness::fail_if_worker_gone(l, store.as_ref(), r).await
        }
        _ => r,
    })
}

/// `tasks/get`: the `Task`.
pub(crate) async fn get(tasks: &Tasks, session: &str, request: &Request) -> Outcome {
    let id = match task_id(request) {
        Ok(id) => id,
        Err(e) => return Outcome::Error(e),
    };
    match record(tasks, session, &id).await {
        Ok(r) => Outcome::json(&wire::task(&r)),
        Err(e) => Outcome::Error(e),
    }
}

/// `tasks/list`: the session's tasks, oldest first, a page at a time,
/// through the store's per-requestor index (`TaskStore::list`), so a task
/// created through another instance sharing the store is listed too; the
/// cursor is the last task id of the previous page ("Invalid or
/// nonexistent cursor in `tasks/list`: `-32602`").
pub(crate) async fn list(tasks: &Tasks, session: &str, request: &Request) -> Outcome {
    let cursor = match params_of(request).get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => {
            return Outcome::Error(ErrorObject::invalid_params(
                "params.cursor must be a string",
            ));
        }
    };
    let page = tasks.config.list_page.max(1);
    let listed = tasks
        .config
        .store
        .list(session, cursor.as_deref(), page, now_ms())
        .await;
    let page = match listed {
        Ok(p) => p,
        Err(TaskStoreError::UnknownCursor { .. }) => {
            return Outcome::Error(ErrorObject::invalid_params("unknown tasks/list cursor"));
        }
        Err(e) => return Outcome::Error(ErrorObject::internal(e)),
    };
    let out: Vec<Value> = page.tasks.iter().map(wire::task).collect();
    let mut result = serde_json::json!({ "tasks": out });
    if let Some(n) = page.next_cursor {
        result["nextCursor"] = n.into();
    }
    Outcome::json(&result)
}

fn terminal_refusal(r: &TaskRecord) -> Outcome {
    Outcome::Error(ErrorObject::invalid_params(format!(
        "Cannot cancel task: already in terminal status '{}'",
        r.status
    )))
}

/// `tasks/cancel`: `cancelled` before the answer, the worker's token
/// fired; `-32602` for a task that has already ended.
pub(crate) async fn cancel(tasks: &Tasks, session: &str, request: &Request) -> Outcome {
    let id = match task_id(request) {
        Ok(id) => id,
        Err(e) => return Outcome::Error(e),
    };
    let r = match record(tasks, session, &id).await {
        Ok(r) => r,
        Err(e) => return Outcome::Error(e),
    };
    if r.status.is_terminal() {
        return terminal_refusal(&r);
    }
    let r = match tasks
        .config
        .store
        .cancel(&id, Some(session), now_ms())
        .await
    {
        Ok(r) => r,
        Err(e) => return Outcome::Error(store_error(e)),
    };
    if r.status != TaskStatus::Cancelled {
        // It finished first ("the first terminal transition wins").
        return terminal_refusal(&r);
    }
    if let Some(running) = tasks.running(&id) {
        running.cancel.cancel();
    }
    tasks.publish(&id);
    Outcome::json(&wire::task(&r))
}

/// The answer of `tasks/result` for an ended task: "exactly what the
/// underlying request would have returned", with the related-task
/// metadata on a result.
fn final_outcome(r: &TaskRecord) -> Outcome {
    let payload = match r.status {
        TaskStatus::Completed => r.result.as_deref(),
        TaskStatus::Failed => r.error.as_deref(),
        _ => None,
    };
    match (r.status, payload.map(wire::parsed)) {
        // A failed task holds either the JSON-RPC error (it has `code`) or
        // the tool result that ended with `isError`.
        (TaskStatus::Failed, Some(v)) if v.get("code").is_some() => {
            match serde_json::from_value::<ErrorObject>(v) {
                Ok(e) => Outcome::Error(e),
                Err(e) => Outcome::Error(ErrorObject::internal(e)),
            }
        }
        (TaskStatus::Completed | TaskStatus::Failed, Some(v)) => {
            Outcome::json(&wire::with_related(v, &r.id))
        }
        _ => Outcome::Error(ErrorObject::new(
            INTERNAL_ERROR,
            format!("Task {} was cancelled before it produced a result", r.id),
        )),
    }
}

/// `tasks/result`: blocks until the task ends ("it MUST block the response
/// until the task reaches a terminal status"), carrying the task's input
/// requests, its related notifications and `notifications/tasks/status`
/// meanwhile. Input answered by the client (the engine calls again with
/// them) is delivered into the task first.
pub(crate) async fn result(
    tasks: &Tasks,
    session: &str,
    request: &Request,
    cx: &RequestContext,
) -> Outcome {
    let id = match task_id(request) {
        Ok(id) => id,
        Err(e) => return Outcome::Error(e),
    };
    let store = &tasks.config.store;
    if let Some(answers) = cx.input_responses().cloned() {
        if let Err(e) = store
            .deliver_input(&id, Some(session), answers, now_ms())
            .await
        {
            return Outcome::Error(store_error(e));
        }
        if let Some(running) = tasks.running(&id) {
            running.wake.notify();
        }
        tasks.publish(&id);
    }
    let asked: HashSet<String> = cx
        .input_responses()
        .map(|a| a.keys().cloned().collect())
        .unwrap_or_default();
    let poll = Duration::from_millis(tasks.config.poll_interval_ms.max(10));
    let mut events = tasks.running(&id).map(|r| r.events.subscribe());
    let mut last_status = None;
    loop {
        let r = match record(tasks, session, &id).await {
            Ok(r) => r,
            Err(e) => return Outcome::Error(e),
        };
        if last_status != Some(r.status) {
            last_status = Some(r.status);
            let _ = cx.notify(wire::status_notification(&r)).await;
        }
        if r.status.is_terminal() {
            return final_outcome(&r);
        }
        let outstanding: BTreeMap<String, InputRequest> = r
            .input_requests
            .iter()
            .filter(|(k, _)| !asked.contains(*k))
            .filter_map(|(k, v)| {
                let v = wire::parsed(v);
                let method = v.get("method")?.as_str()?.to_owned();
                let params = v
                    .get("params")
                    .filter(|p| p.is_object())
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({}));
                let params = wire::with_related(params, &id);
                Some((
                    k.clone(),
                    InputRequest {
                        method,
                        params: Some(wire::raw(&params)),
                    },
                ))
            })
            .collect();
        if r.status == TaskStatus::InputRequired && !outstanding.is_empty() {
            return Outcome::InputRequired(InputRequired {
                requests: outstanding,
                state: None,
            });
        }
        match events.as_mut() {
            Some(rx) => tokio::select! {
                ev = rx.recv() => match ev {
                    Ok(Event::Notify(n)) => { let _ = cx.notify(n).await; }
                    Ok(Event::Changed) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => events = None,
                },
                () = tokio::time::sleep(poll) => {}
                () = cx.cancelled() => return Outcome::Error(ErrorObject::internal("cancelled")),
            },
            None => tokio::select! {
                () = tokio::time::sleep(poll) => {}
                () = cx.cancelled() => return Outcome::Error(ErrorObject::internal("cancelled")),
            },
        }
    }
}
