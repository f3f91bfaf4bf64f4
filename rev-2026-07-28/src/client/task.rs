//! Following a task to its end (the Tasks extension,
//! `io.modelcontextprotocol/tasks`, SEP-2663), inside one [`Call`].
//!
//! When the request declared the extension in its client capabilities (in
//! its own `_meta` or in [`ModernClientConfig::capabilities`]) and the
//! server answers `tools/call` with a `CreateTaskResult`
//! (`resultType: "task"`), the call does not end: it polls `tasks/get`
//! every `pollIntervalMs` ("Clients SHOULD respect the `pollIntervalMs`"),
//! answers `inputRequests` through the same input handler as MRTR input
//! (each key once: "Clients SHOULD deduplicate `inputRequests` keys across
//! consecutive polls") with `tasks/update`, and ends with the task's
//! outcome as the call's response: `result` when completed, `error` when
//! failed, a `-32800` error when cancelled. Every status seen (the creation
//! included) is yielded as a `notifications/tasks` notification carrying
//! the `DetailedTask` — the shape a server sends on `subscriptions/listen` —
//! so a caller can record the `taskId`. Every task request carries the
//! creating request's capabilities and `Mcp-Name: <taskId>`.
//!
//! Dropping the response stream before the end cancels the task with
//! `tasks/cancel` (never `notifications/cancelled`), as dropping any other
//! request cancels it.
//!
//! A `CreateTaskResult` to a request that did not declare the extension, or
//! to another method than `tools/call`, is an invalid response ("A client
//! that receives `CreateTaskResult` in response to an unsupported request
//! type MUST interpret this as an invalid response").
//!
//! [`Call`]: super::request::Call
//! [`ModernClientConfig::capabilities`]: super::ModernClientConfig::capabilities

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use mcp_transport_core::jsonrpc::{ErrorObject, Notification, Response, to_raw};
use mcp_transport_core::transport::{InputHandler, Misbehaviour, StreamEvent, TransportError};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::mrtr;
use crate::headers::META_CLIENT_CAPABILITIES;

/// The extension's identifier.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The polling interval used when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The longest wait between polls, whatever the server suggests.
const MAX_POLL: Duration = Duration::from_secs(60);
/// Polls in a row that may break before the call fails.
const MAX_BROKEN_POLLS: u32 = 3;

/// The capabilities a request carries: its own `_meta` ones, else the
/// configured ones.
pub(crate) fn capabilities_of(params: &Map<String, Value>, configured: &Value) -> Value {
    params
        .get("_meta")
        .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .cloned()
        .unwrap_or_else(|| configured.clone())
}

/// Whether `capabilities` declare the extension.
pub(crate) fn declared(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(|v| !v.is_null())
}

/// What the next exchange of a followed task is.
#[derive(Debug)]
enum Next {
    /// `tasks/get`, after waiting `pollIntervalMs` when `wait`.
    Get { wait: bool },
    /// `tasks/update` with these `inputResponses`.
    Update(Map<String, Value>),
    /// `tasks/cancel`, whose answer ends the call.
    Cancel,
}

/// A task being followed.
#[derive(Debug)]
pub(crate) struct TaskPoll {
    /// The task id.
    pub id: String,
    status: String,
    interval: Duration,
    capabilities: Value,
    answered: HashSet<String>,
    next: Next,
    broken: u32,
    /// Whether the task reached a terminal status (or was given up).
    pub ended: bool,
}

fn malformed(what: &str, detail: impl std::fmt::Display) -> TransportError {
    TransportError::PeerMisbehaved(Misbehaviour::MalformedResult {
        what: what.into(),
        detail: detail.to_string(),
    })
}

fn object(raw: &RawValue, what: &str) -> Result<Map<String, Value>, TransportError> {
    match serde_json::from_str::<Value>(raw.get()) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(malformed(what, "not a JSON object")),
        Err(e) => Err(malformed(what, e)),
    }
}

/// The `notifications/tasks` event for a task state (without `resultType`
/// and `_meta`, which belong to the result that carried it).
fn status_event(mut task: Map<String, Value>) -> StreamEvent {
    task.remove("resultType");
    task.remove("_meta");
    StreamEvent::Notification(Notification {
        method: "notifications/tasks".into(),
        params: to_raw(&Value::Object(task)).ok(),
    })
}

impl TaskPoll {
    /// Starts following the task of a `CreateTaskResult`; pushes its first
    /// status event.
    pub(crate) fn start(
        result: &RawValue,
        capabilities: Value,
        events: &mut VecDeque<StreamEvent>,
    ) -> Result<TaskPoll, TransportError> {
        let m = object(result, "CreateTaskResult")?;
        let Some(id) = m.get("taskId").and_then(Value::as_str).map(str::to_owned) else {
            return Err(malformed("CreateTaskResult", "it has no string taskId"));
        };
        let mut poll = TaskPoll {
            id,
            status: String::new(),
            interval: DEFAULT_POLL,
            capabilities,
            answered: HashSet::new(),
            next: Next::Get { wait: true },
            broken: 0,
            ended: false,
        };
        poll.observe(&m);
        events.push_back(status_event(m));
        Ok(poll)
    }

    /// Follows a task known by its id (created earlier, maybe by another
    /// process): the first exchange is a `tasks/get` at once.
    pub(crate) fn resume(id: String, capabilities: Value) -> TaskPoll {
        TaskPoll {
            id,
            status: String::new(),
            interval: DEFAULT_POLL,
            capabilities,
            answered: HashSet::new(),
            next: Next::Get { wait: false },
            broken: 0,
            ended: false,
        }
    }

    /// Only cancels the task `id` (what dropping a followed call sends);
    /// counts as ended, so dropping this one sends nothing more.
    pub(crate) fn cancelling(id: String, capabilities: Value) -> TaskPoll {
        TaskPoll {
            next: Next::Cancel,
            ended: true,
            ..TaskPoll::resume(id, capabilities)
        }
    }

    /// Takes `status` and `pollIntervalMs` from a task state.
    fn observe(&mut self, m: &Map<String, Value>) {
        if let Some(s) = m.get("status").and_then(Value::as_str) {
            self.status = s.to_owned();
        }
        if let Some(ms) = m.get("pollIntervalMs").and_then(Value::as_u64) {
            self.interval = Duration::from_millis(ms).min(MAX_POLL);
        }
    }

    /// How long to wait before the next exchange.
    pub(crate) fn wait(&self) -> Option<Duration> {
        match self.next {
            Next::Get { wait: true } => Some(self.interval),
            _ => None,
        }
    }

    /// The method and params of the next exchange (before `_meta`).
    pub(crate) fn request(&self) -> (String, Map<String, Value>) {
        let mut params = Map::new();
        params.insert("taskId".into(), Value::String(self.id.clone()));
        let mut meta = Map::new();
        meta.insert(META_CLIENT_CAPABILITIES.into(), self.capabilities.clone());
        params.insert("_meta".into(), Value::Object(meta));
        match &self.next {
            Next::Get { .. } => ("tasks/get".into(), params),
            Next::Update(responses) => {
                params.insert("inputResponses".into(), Value::Object(responses.clone()));
                ("tasks/update".into(), params)
            }
            Next::Cancel => ("tasks/cancel".into(), params),
        }
    }

    /// A poll broke before its answer: poll again, a few times.
    pub(crate) fn on_broken(&mut self, why: &str) -> Result<(), TransportError> {
        self.broken += 1;
        if self.broken > MAX_BROKEN_POLLS {
            self.ended = true;
            return Err(TransportError::Connection(format!(
                "following task {}: {MAX_BROKEN_POLLS} polls in a row broke (last: {why})",
                self.id
            )));
        }
        if !matches!(self.next, Next::Cancel) {
            self.next = Next::Get { wait: true };
        }
        Ok(())
    }

    /// Handles the answer to the last exchange: `Some` is the call's final
    /// response, `None` means another exchange is due.
    pub(crate) async fn on_response(
        &mut self,
        response: Response,
        handler: &dyn InputHandler,
        events: &mut VecDeque<StreamEvent>,
    ) -> Result<Option<Response>, TransportError> {
        self.broken = 0;
        if let Next::Cancel = self.next {
            self.ended = true;
            return Ok(Some(response));
        }
        let raw = match response.payload {
            Ok(raw) => raw,
            Err(error) => {
                // Task not found or expired, refused: the call ends with it.
                self.ended = true;
                return Ok(Some(Response {
                    id: response.id,
                    payload: Err(error),
                }));
            }
        };
        if let Next::Update(_) = self.next {
            // The acknowledgment; the task's state is seen on the next poll.
            self.next = Next::Get { wait: false };
            return Ok(None);
        }
        let m = object(&raw, "tasks/get result")?;
        let before = std::mem::take(&mut self.status);
        self.observe(&m);
        let status = self.status.clone();
        if status != before || status == "input_required" {
            events.push_back(status_event(m.clone()));
        }
        let done = |payload| {
            Ok(Some(Response {
                id: response.id.clone(),
                payload,
            }))
        };
        match status.as_str() {
            "completed" => {
                self.ended = true;
                let Some(result) = m.get("result") else {
                    return Err(malformed("completed task", "it has no result"));
                };
                let raw = to_raw(result).map_err(|e| malformed("task result", e))?;
                done(Ok(raw))
            }
            "failed" => {
                self.ended = true;
                let error = m
                    .get("error")
                    .and_then(|e| serde_json::from_value::<ErrorObject>(e.clone()).ok())
                    .unwrap_or_else(|| ErrorObject::internal("the task failed without an error"));
                done(Err(error))
            }
            "cancelled" => {
                self.ended = true;
                let message = m
                    .get("statusMessage")
                    .and_then(Value::as_str)
                    .unwrap_or("the task was cancelled");
                done(Err(ErrorObject::new(-32800, message.to_owned())))
            }
            "input_required" => {
                let mut fresh = m.clone();
                if let Some(Value::Object(reqs)) = fresh.get_mut("inputRequests") {
                    reqs.retain(|k, _| !self.answered.contains(k));
                }
                fresh.remove("requestState");
                let pending = fresh
                    .get("inputRequests")
                    .and_then(Value::as_object)
                    .is_some_and(|r| !r.is_empty());
                if !pending {
                    self.next = Next::Get { wait: true };
                    return Ok(None);
                }
                let raw = to_raw(&Value::Object(fresh)).map_err(|e| malformed("task", e))?;
                let input = mrtr::parse(&raw)?;
                let retry = mrtr::answer(handler, input, events).await?;
                let mut params = Map::new();
                retry.apply(&mut params);
                let responses = match params.remove("inputResponses") {
                    Some(Value::Object(r)) => r,
                    _ => Map::new(),
                };
                self.answered.extend(responses.keys().cloned());
                self.next = Next::Update(responses);
                Ok(None)
            }
            _ => {
                self.next = Next::Get { wait: true };
                Ok(None)
            }
        }
    }
}
