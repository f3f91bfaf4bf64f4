//! The Tasks extension's wire shapes (*Tasks*; `schema.ts` of
//! `io.modelcontextprotocol/tasks`), built from a [`TaskRecord`].
//!
//! * `CreateTaskResult` = `Result & Task` flat, `resultType: "task"`
//!   ("Servers MUST set `resultType` to `\"task\"` when returning a
//!   `CreateTaskResult`"); no `result`, `error`, `inputRequests` or
//!   `requestState`.
//! * `GetTaskResult` = `Result & DetailedTask`, `resultType: "complete"`:
//!   `result` only when completed, `error` only when failed,
//!   `inputRequests` only when input is required.
//! * `notifications/tasks` carries the same `DetailedTask` ("identical to
//!   what `tasks/get` would have returned at that moment").
//! * Timestamps are RFC 3339 (an ISO 8601 profile) in UTC; `ttlMs` is an
//!   integer or `null`, `pollIntervalMs` an integer.

use mcp_transport_core::jsonrpc::{Notification, to_raw};
use mcp_transport_core::task_store::{TaskRecord, TaskStatus};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::super::result::META_SERVER_INFO;

/// The extension's identifier (*Tasks*, "Extension Identifier").
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";

fn parsed(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// The `Task` members every shape carries.
fn task_members(r: &TaskRecord) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("taskId".into(), r.id.clone().into());
    m.insert("status".into(), r.status.as_str().into());
    if let Some(msg) = &r.status_message {
        m.insert("statusMessage".into(), msg.clone().into());
    }
    m.insert("createdAt".into(), r.created_at().into());
    m.insert("lastUpdatedAt".into(), r.last_updated_at().into());
    m.insert("ttlMs".into(), r.ttl_ms.map_or(Value::Null, Value::from));
    if let Some(p) = r.poll_interval_ms {
        m.insert("pollIntervalMs".into(), p.into());
    }
    m
}

/// `DetailedTask`: the status-specific member inlined.
pub(crate) fn detailed(r: &TaskRecord) -> Map<String, Value> {
    let mut m = task_members(r);
    match r.status {
        TaskStatus::Completed => {
            if let Some(res) = &r.result {
                m.insert("result".into(), parsed(res));
            }
        }
        TaskStatus::Failed => {
            if let Some(e) = &r.error {
                m.insert("error".into(), parsed(e));
            }
        }
        TaskStatus::InputRequired => {
            let reqs: Map<String, Value> = r
                .input_requests
                .iter()
                .map(|(k, v)| (k.clone(), parsed(v)))
                .collect();
            m.insert("inputRequests".into(), Value::Object(reqs));
        }
        TaskStatus::Working | TaskStatus::Cancelled => {}
    }
    m
}

fn finish(mut m: Map<String, Value>, result_type: &str, info: Option<&RawValue>) -> Box<RawValue> {
    m.insert("resultType".into(), result_type.into());
    if let Some(info) = info {
        let mut meta = Map::new();
        meta.insert(META_SERVER_INFO.into(), parsed(info));
        m.insert("_meta".into(), Value::Object(meta));
    }
    to_raw(&Value::Object(m)).unwrap_or_else(|_| unreachable!("plain JSON values serialize"))
}

/// `CreateTaskResult` for a freshly stored task.
pub(crate) fn create_result(r: &TaskRecord, info: Option<&RawValue>) -> Box<RawValue> {
    finish(task_members(r), "task", info)
}

/// `GetTaskResult`.
pub(crate) fn get_result(r: &TaskRecord, info: Option<&RawValue>) -> Box<RawValue> {
    finish(detailed(r), "complete", info)
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel`.
pub(crate) fn ack(info: Option<&RawValue>) -> Box<RawValue> {
    finish(Map::new(), "complete", info)
}

/// `notifications/tasks` for the task's current state.
pub(crate) fn status_notification(r: &TaskRecord) -> Notification {
    Notification {
        method: "notifications/tasks".to_owned(),
        params: to_raw(&Value::Object(detailed(r))).ok(),
    }
}

/// Whether `capabilities` (a request's client capabilities) declare the
/// extension.
pub(crate) fn declared(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(|v| !v.is_null())
}

/// `data` of a `-32021` naming the extension.
pub(crate) fn required_data() -> Value {
    serde_json::json!({ "requiredCapabilities": { "extensions": { EXTENSION: {} } } })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn record(status: TaskStatus) -> TaskRecord {
        TaskRecord {
            id: "t1".into(),
            scope: None,
            status,
            status_message: None,
            created_at_ms: 1_764_547_200_123,
            last_updated_at_ms: 1_764_547_201_000,
            ttl_ms: Some(60_000),
            poll_interval_ms: Some(500),
            input_requests: BTreeMap::from([(
                "k".to_owned(),
                RawValue::from_string(r#"{"method":"elicitation/create"}"#.into()).unwrap(),
            )]),
            input_responses: BTreeMap::new(),
            result: Some(RawValue::from_string(r#"{"content":[]}"#.into()).unwrap()),
            error: Some(RawValue::from_string(r#"{"code":-1,"message":"m"}"#.into()).unwrap()),
        }
    }

    #[test]
    fn each_status_inlines_only_its_member() {
        let keys = |s| {
            let m = detailed(&record(s));
            ["result", "error", "inputRequests"]
                .into_iter()
                .filter(|k| m.contains_key(*k))
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(TaskStatus::Completed), ["result"]);
        assert_eq!(keys(TaskStatus::Failed), ["error"]);
        assert_eq!(keys(TaskStatus::InputRequired), ["inputRequests"]);
        assert!(keys(TaskStatus::Working).is_empty());
        assert!(keys(TaskStatus::Cancelled).is_empty());
    }

    #[test]
    fn create_result_is_flat_with_result_type_task() {
        let v: Value =
            serde_json::from_str(create_result(&record(TaskStatus::Completed), None).get())
                .unwrap();
        assert_eq!(v["resultType"], "task");
        assert_eq!(v["taskId"], "t1");
        assert_eq!(v["ttlMs"], 60_000);
        assert_eq!(v["pollIntervalMs"], 500);
        for absent in [
            "result",
            "error",
            "inputRequests",
            "task",
            "requestState",
            "ttl",
        ] {
            assert!(v.get(absent).is_none(), "{absent}");
        }
        let unlimited = TaskRecord {
            ttl_ms: None,
            ..record(TaskStatus::Working)
        };
        let v: Value = serde_json::from_str(get_result(&unlimited, None).get()).unwrap();
        assert_eq!(v["resultType"], "complete");
        assert!(v["ttlMs"].is_null());
    }

    #[test]
    fn declared_needs_the_extension_key() {
        assert!(declared(
            &serde_json::json!({"extensions": {EXTENSION: {}}})
        ));
        assert!(!declared(&serde_json::json!({"extensions": {}})));
        assert!(!declared(&serde_json::json!({})));
    }
}
