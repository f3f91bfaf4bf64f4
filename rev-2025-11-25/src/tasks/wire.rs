//! 2025-11-25's task wire shapes (`schema.ts`: `Task`, `CreateTaskResult`,
//! `ListTasksResult`, `TaskStatusNotification`), built from a
//! [`TaskRecord`].
//!
//! * `Task`: `taskId`, `status`, `statusMessage?`, `createdAt` and
//!   `lastUpdatedAt` (ISO 8601; RFC 3339 in UTC here), `ttl` (ms, `null`
//!   for unlimited: "Receivers MUST include the actual `ttl` duration (or
//!   `null` for unlimited)"), `pollInterval?`.
//! * `CreateTaskResult` = `{ task: Task }`; `tasks/get` and `tasks/cancel`
//!   answer the `Task` flat; `notifications/tasks/status` carries it as its
//!   params, without `related-task` metadata ("SHOULD NOT include the
//!   `io.modelcontextprotocol/related-task` metadata").

use mcp_transport_core::jsonrpc::{Notification, to_raw};
use mcp_transport_core::task_store::TaskRecord;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The `_meta` key tying a message to its task (*Tasks*, "Related Task
/// Metadata").
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The `Task` object.
pub(crate) fn task(r: &TaskRecord) -> Value {
    let mut m = Map::new();
    m.insert("taskId".into(), r.id.clone().into());
    m.insert("status".into(), r.status.as_str().into());
    if let Some(msg) = &r.status_message {
        m.insert("statusMessage".into(), msg.clone().into());
    }
    m.insert("createdAt".into(), r.created_at().into());
    m.insert("lastUpdatedAt".into(), r.last_updated_at().into());
    m.insert("ttl".into(), r.ttl_ms.map_or(Value::Null, Value::from));
    if let Some(p) = r.poll_interval_ms {
        m.insert("pollInterval".into(), p.into());
    }
    Value::Object(m)
}

/// `{ "taskId": id }`, the value of the related-task `_meta` key.
pub(crate) fn related(id: &str) -> Value {
    serde_json::json!({ "taskId": id })
}

/// Adds the related-task key to `value`'s `_meta` (an object; anything
/// else is returned unchanged).
pub(crate) fn with_related(mut value: Value, id: &str) -> Value {
    if let Some(obj) = value.as_object_mut() {
        let meta = obj
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(RELATED_TASK.into(), related(id));
        }
    }
    value
}

/// Serializes a plain JSON value.
pub(crate) fn raw(value: &Value) -> Box<RawValue> {
    to_raw(value).unwrap_or_else(|_| unreachable!("plain JSON values serialize"))
}

/// Parses stored raw JSON (always valid: the store keeps what we wrote).
pub(crate) fn parsed(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// `notifications/tasks/status` for the task's current state.
pub(crate) fn status_notification(r: &TaskRecord) -> Notification {
    Notification {
        method: "notifications/tasks/status".to_owned(),
        params: Some(raw(&task(r))),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use mcp_transport_core::task_store::TaskStatus;

    use super::*;

    fn record(ttl: Option<u64>) -> TaskRecord {
        TaskRecord {
            id: "t1".into(),
            scope: Some("session".into()),
            status: TaskStatus::InputRequired,
            status_message: None,
            created_at_ms: 1_764_066_600_000,
            last_updated_at_ms: 1_764_066_600_250,
            ttl_ms: ttl,
            poll_interval_ms: Some(500),
            input_requests: BTreeMap::new(),
            input_responses: BTreeMap::new(),
            result: None,
            error: None,
        }
    }

    #[test]
    fn task_has_the_2025_11_25_fields_and_a_null_ttl_when_unlimited() {
        let t = task(&record(Some(60_000)));
        assert_eq!(
            t,
            serde_json::json!({
                "taskId": "t1",
                "status": "input_required",
                "createdAt": "2025-11-25T10:30:00Z",
                "lastUpdatedAt": "2025-11-25T10:30:00.25Z",
                "ttl": 60_000,
                "pollInterval": 500,
            })
        );
        assert_eq!(task(&record(None))["ttl"], Value::Null);
        assert!(
            task(&record(None)).get("scope").is_none(),
            "the scope stays private"
        );
    }

    #[test]
    fn related_task_meta_is_added_and_keeps_other_meta() {
        let v = with_related(serde_json::json!({"a": 1, "_meta": {"k": "v"}}), "t1");
        assert_eq!(v["_meta"]["k"], "v");
        assert_eq!(
            v["_meta"][RELATED_TASK],
            serde_json::json!({"taskId": "t1"})
        );
        assert_eq!(with_related(Value::Null, "t1"), Value::Null);
        let n = status_notification(&record(None));
        assert_eq!(n.method, "notifications/tasks/status");
        let p: Value = serde_json::from_str(n.params.unwrap().get()).unwrap();
        assert!(p.get("_meta").is_none());
    }
}
