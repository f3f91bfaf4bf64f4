//! Checks of 2025-11-25's experimental tasks (SEP-1686; *Tasks* in
//! `basic/utilities`), for servers that declare `capabilities.tasks` in
//! `initialize` (otherwise each one is not applicable, and says what
//! `initialize` declared).
//!
//! In one session: the `execution.taskSupport` values of `tools/list`; a
//! task-augmented `tools/call` of a tool that allows tasks (a
//! `CreateTaskResult`), `tasks/get` of that task, `tasks/result` (which
//! must block until the task is terminal; JSON or SSE), the related-task
//! metadata on that result, `tasks/list` (pages followed), `tasks/cancel`
//! of the now terminal task (`-32602`), unknown task ids (`-32602`), and
//! the `-32601` rules of "Tool-Level Negotiation". A server that declares
//! `tasks` without `tasks.requests.tools.call` must serve a task-augmented
//! call normally instead.
//!
//! The checks call only the tools given to them ([`ToolCall`],
//! `--tool NAME=JSON`): a checker must not run arbitrary tools of someone
//! else's server. Which check uses which tool follows from the tool's
//! `taskSupport`; a check without a suitable tool is not applicable and
//! says which tools `tools/list` offered.

use std::time::Duration;

use chrono::DateTime;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{INVALID_PARAMS, METHOD_NOT_FOUND};
use mcp_transport_core::sse::SseItem;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::detect::{LegacySession, initialize_body};
use super::wire::{Capture, End, Wire, error_code, short};
use super::{Check, Ctx, Outcome, ToolCall, id, spec};
use mcp_http_edge::headers;

/// A task id no server issued.
const UNKNOWN_TASK: &str = "mcp-compat-check-no-such-task";
/// The TTL the task-augmented calls ask for (ms).
const ASKED_TTL: u64 = 60_000;
/// The most `tools/list` and `tasks/list` pages read.
const MAX_PAGES: usize = 20;
/// The most resumptions of one answer.
const MAX_RESUMES: usize = 50;
/// The longest `retry` waited for before a resumption.
const MAX_RETRY: Duration = Duration::from_secs(2);
/// The related-task `_meta` key.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The statuses a task may have.
const STATUSES: [&str; 5] = [
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
];
/// The terminal ones.
const TERMINAL: [&str; 3] = ["completed", "failed", "cancelled"];

const T_SUPPORT: &str =
    "every execution.taskSupport in tools/list is \"forbidden\", \"optional\" or \"required\"";
const T_CREATE: &str = "a task-augmented tools/call of a tool that allows tasks gets a CreateTaskResult (taskId, status, createdAt, lastUpdatedAt, ttl, pollInterval typed as the schema says)";
const T_GET: &str = "tasks/get of the task answers the task, ttl included";
const T_RESULT: &str =
    "tasks/result answers only once the task is terminal, with the tool's result or JSON-RPC error";
const T_RELATED: &str =
    "the tasks/result result carries _meta[\"io.modelcontextprotocol/related-task\"].taskId";
const T_LIST: &str = "tasks/list lists the task tasks/get finds";
const T_CANCEL: &str = "tasks/cancel of a terminal task gets -32602";
const T_UNKNOWN: &str = "tasks/get, tasks/result and tasks/cancel of an unknown task id get -32602";
const T_FORBIDDEN: &str =
    "a task-augmented call of a tool whose taskSupport is absent or \"forbidden\" gets -32601";
const T_REQUIRED: &str =
    "a call without a task of a tool whose taskSupport is \"required\" gets -32601";
const T_UNDECLARED: &str = "a server that declares tasks but not tasks.requests.tools.call serves a task-augmented tools/call normally";

/// Every check of this module, in the order it reports them.
fn all() -> [(&'static str, &'static str, spec::Spec); 11] {
    [
        (
            id::TASKS_SUPPORT_VALUES,
            T_SUPPORT,
            spec::TASK_SUPPORT_VALUES,
        ),
        (id::TASKS_CREATE, T_CREATE, spec::CREATE_TASK_RESULT),
        (id::TASKS_GET, T_GET, spec::GET_TTL),
        (id::TASKS_RESULT_BLOCKS, T_RESULT, spec::RESULT_BLOCKS),
        (id::TASKS_RELATED_TASK, T_RELATED, spec::RESULT_RELATED_TASK),
        (id::TASKS_LIST, T_LIST, spec::LIST_INCLUDES),
        (id::TASKS_CANCEL_TERMINAL, T_CANCEL, spec::CANCEL_TERMINAL),
        (
            id::TASKS_UNKNOWN_ID,
            T_UNKNOWN,
            spec::UNKNOWN_TASK_2025_11_25,
        ),
        (id::TASKS_FORBIDDEN_TOOL, T_FORBIDDEN, spec::FORBIDDEN_TOOL),
        (id::TASKS_REQUIRED_TOOL, T_REQUIRED, spec::REQUIRED_TOOL),
        (
            id::TASKS_UNDECLARED_IGNORED,
            T_UNDECLARED,
            spec::UNDECLARED_IGNORED,
        ),
    ]
}

/// The outcomes, by check id, filled in as the session goes.
struct Found(Vec<(&'static str, Outcome)>);

impl Found {
    fn set(&mut self, check: &'static str, o: Outcome) {
        self.0.push((check, o));
    }

    fn into_checks(self, rev: &ProtocolVersion) -> Vec<Check> {
        all()
            .into_iter()
            .map(|(i, title, spec)| {
                let outcome = self
                    .0
                    .iter()
                    .find(|(c, _)| *c == i)
                    .map(|(_, o)| o.clone())
                    .unwrap_or_else(|| Outcome::Inconclusive("the check did not run".into()));
                Check::new(i, rev, title, spec, outcome)
            })
            .collect()
    }
}

fn every(rev: &ProtocolVersion, o: &Outcome) -> Vec<Check> {
    all()
        .into_iter()
        .map(|(i, t, s)| Check::new(i, rev, t, s, o.clone()))
        .collect()
}

/// One request of the session; the JSON-RPC answer (result or error).
/// An SSE answer the server closes early (SEP-1699 polling, as it may do
/// with a blocking `tasks/result`) is resumed by GET with `Last-Event-ID`,
/// after the `retry` it asked for, as a client would; all of it within
/// [`Wire::timeout`].
async fn rpc(wire: &Wire, s: &LegacySession, method: &str, params: Value) -> Result<Value, String> {
    let id = wire.id();
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
    let reply = wire.post(&s.headers(), &body).await?;
    if !reply.is_sse() {
        return reply.rpc_answer(id, wire.timeout).await;
    }
    let deadline = Instant::now() + wire.timeout;
    let left = || deadline.saturating_duration_since(Instant::now());
    let mut capture = Capture::read(reply.sse(), Some(id), left(), Duration::ZERO).await;
    let mut last: Option<String> = None;
    for _ in 0..MAX_RESUMES {
        if let Some(r) = capture.response {
            return Ok(r);
        }
        if capture.end == End::StillOpen {
            return Err(format!(
                "{method}: no answer within {} ms",
                wire.timeout.as_millis()
            ));
        }
        if let Some(id) = capture.ids().last() {
            last = Some(id.clone());
        }
        let Some(from) = &last else {
            return Err(format!(
                "{method}: the stream closed before the answer without an event id to resume from"
            ));
        };
        let retry = capture
            .items
            .iter()
            .rev()
            .find_map(|i| match i {
                SseItem::Retry(ms) => Some(Duration::from_millis(*ms)),
                _ => None,
            })
            .unwrap_or_default();
        tokio::time::sleep(retry.min(MAX_RETRY).min(left())).await;
        let mut extra = s.headers();
        extra.push((headers::LAST_EVENT_ID, from.clone()));
        let reply = wire.get(&extra).await?;
        if !reply.is_success() || !reply.is_sse() {
            return Err(format!(
                "{method}: resuming from {from:?} answered HTTP {} {:?}",
                reply.status,
                reply.media_type()
            ));
        }
        capture = Capture::read(reply.sse(), Some(id), left(), Duration::ZERO).await;
    }
    Err(format!(
        "{method}: no answer after {MAX_RESUMES} resumptions"
    ))
}

/// `initialize` offering `rev` and declaring nothing: the session and the
/// server's capabilities.
async fn open(wire: &Wire, rev: &ProtocolVersion) -> Result<(LegacySession, Value), String> {
    let id = wire.id();
    let reply = wire.post(&Vec::new(), &initialize_body(id, rev)).await?;
    let session_id = reply.header(headers::SESSION_ID);
    let answer = reply.rpc_answer(id, wire.timeout).await?;
    let result = answer
        .get("result")
        .ok_or_else(|| format!("initialize failed: {}", short(&answer.to_string())))?;
    let session = LegacySession {
        id: session_id,
        version: rev.clone(),
    };
    if result.get("protocolVersion").and_then(Value::as_str) != Some(rev.as_str()) {
        session.close(wire).await;
        return Err(format!(
            "initialize offering {rev} was answered with {}",
            result["protocolVersion"]
        ));
    }
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let _ = wire.post(&session.headers(), &note).await;
    Ok((
        session,
        result.get("capabilities").cloned().unwrap_or(Value::Null),
    ))
}

/// Every tool of `tools/list`, pages followed.
async fn list_tools(wire: &Wire, s: &LegacySession) -> Result<Vec<Value>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let answer = rpc(wire, s, "tools/list", params).await?;
        let result = answer
            .get("result")
            .ok_or_else(|| format!("tools/list failed: {}", short(&answer.to_string())))?;
        tools.extend(result["tools"].as_array().into_iter().flatten().cloned());
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => return Ok(tools),
        }
    }
    Ok(tools)
}

/// A tool's `execution.taskSupport` as listed (`None`: absent).
fn support_of(tool: &Value) -> Option<&Value> {
    tool.pointer("/execution/taskSupport")
}

fn support_values(tools: &[Value]) -> Outcome {
    let declared: Vec<(&str, &Value)> = tools
        .iter()
        .filter_map(|t| Some((t["name"].as_str().unwrap_or("?"), support_of(t)?)))
        .collect();
    if declared.is_empty() {
        return Outcome::NotApplicable(format!(
            "none of the {} tools of tools/list has execution.taskSupport (absent means \"forbidden\")",
            tools.len()
        ));
    }
    let bad: Vec<String> = declared
        .iter()
        .filter(|(_, v)| {
            !v.as_str()
                .is_some_and(|s| ["forbidden", "optional", "required"].contains(&s))
        })
        .map(|(n, v)| format!("{n}: {v}"))
        .collect();
    if bad.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "execution.taskSupport is not \"forbidden\", \"optional\" or \"required\": {}",
            bad.join("; ")
        ))
    }
}

/// What is wrong with a `Task` object, against the schema's `Task`.
pub(crate) fn task_problems(task: &Value) -> Vec<String> {
    let mut p = Vec::new();
    if !task.is_object() {
        return vec![format!(
            "the task is not an object: {}",
            short(&task.to_string())
        )];
    }
    match task.get("taskId") {
        Some(Value::String(s)) if !s.is_empty() => {}
        other => p.push(format!("taskId is not a non-empty string ({other:?})")),
    }
    match task.get("status").and_then(Value::as_str) {
        Some(s) if STATUSES.contains(&s) => {}
        _ => p.push(format!("status {} is not a task status", task["status"])),
    }
    for key in ["createdAt", "lastUpdatedAt"] {
        match task.get(key).and_then(Value::as_str) {
            Some(t) if DateTime::parse_from_rfc3339(t).is_ok() => {}
            Some(t) => p.push(format!(
                "{key} {t:?} is not an ISO 8601 (RFC 3339) timestamp"
            )),
            None => p.push(format!("{key} is missing")),
        }
    }
    match task.get("ttl") {
        Some(Value::Null) => {}
        Some(v) if v.as_f64().is_some_and(|n| n >= 0.0) => {}
        Some(v) => p.push(format!("ttl {v} is neither a duration in ms nor null")),
        None => p.push("ttl is missing (null means unlimited)".into()),
    }
    if let Some(v) = task.get("pollInterval")
        && !v.as_f64().is_some_and(|n| n >= 0.0)
    {
        p.push(format!("pollInterval {v} is not a duration in ms"));
    }
    if let Some(v) = task.get("statusMessage")
        && !v.is_string()
    {
        p.push(format!("statusMessage {v} is not a string"));
    }
    p
}

/// A `tools/call` of `tool`, with `params.task` when `task` is set.
async fn call(
    wire: &Wire,
    s: &LegacySession,
    tool: &ToolCall,
    task: bool,
) -> Result<Value, String> {
    let mut params = json!({ "name": tool.name, "arguments": tool.arguments });
    if task {
        params["task"] = json!({ "ttl": ASKED_TTL });
    }
    rpc(wire, s, "tools/call", params).await
}

/// Describes a JSON-RPC answer in a few words.
fn answered(answer: &Value) -> String {
    match (answer.get("error"), answer.get("result")) {
        (Some(e), _) => format!("JSON-RPC error {}", short(&e.to_string())),
        (None, Some(r)) => format!("a result {}", short(&r.to_string())),
        _ => short(&answer.to_string()),
    }
}

/// The tools named with `--tool`, with what `tools/list` says of each.
struct Named<'a> {
    listed: &'a [Value],
    given: &'a [ToolCall],
}

impl Named<'_> {
    /// The first named tool whose listed `taskSupport` satisfies `want`.
    fn first(&self, want: impl Fn(Option<&str>) -> bool) -> Option<(&ToolCall, Option<&str>)> {
        self.given.iter().find_map(|g| {
            let tool = self.listed.iter().find(|t| t["name"] == g.name.as_str())?;
            let support = support_of(tool).and_then(Value::as_str);
            want(support).then_some((g, support))
        })
    }

    /// Why no named tool fits: which listed tools would.
    fn none_fits(&self, what: &str, want: impl Fn(Option<&str>) -> bool) -> Outcome {
        let fitting: Vec<&str> = self
            .listed
            .iter()
            .filter(|t| want(support_of(t).and_then(Value::as_str)))
            .filter_map(|t| t["name"].as_str())
            .collect();
        if fitting.is_empty() {
            Outcome::NotApplicable(format!("no tool of tools/list {what}"))
        } else {
            Outcome::NotApplicable(format!(
                "no tool that {what} was given with --tool (the checks call only the tools they are given; tools/list offers {})",
                fitting.join(", ")
            ))
        }
    }
}

fn allows(s: Option<&str>) -> bool {
    matches!(s, Some("optional" | "required"))
}

fn forbids(s: Option<&str>) -> bool {
    matches!(s, None | Some("forbidden"))
}

fn requires(s: Option<&str>) -> bool {
    s == Some("required")
}

/// The 2025-11-25 task checks.
pub(crate) async fn run(cx: &Ctx<'_>, rev: &ProtocolVersion) -> Vec<Check> {
    let wire = cx.wire;
    let (session, caps) = match open(wire, rev).await {
        Ok(x) => x,
        Err(e) => {
            return every(
                rev,
                &Outcome::Inconclusive(format!("no session could be opened: {e}")),
            );
        }
    };
    let checks = match caps.get("tasks").filter(|t| t.is_object()) {
        None => every(
            rev,
            &Outcome::NotApplicable(format!(
                "no tasks capability in initialize (capabilities: {})",
                short(&caps.to_string())
            )),
        ),
        Some(tasks) => {
            let mut found = Found(Vec::new());
            in_session(cx, &session, tasks, &mut found).await;
            found.into_checks(rev)
        }
    };
    session.close(wire).await;
    checks
}

async fn in_session(cx: &Ctx<'_>, s: &LegacySession, caps: &Value, found: &mut Found) {
    let wire = cx.wire;
    let tools_call = caps.pointer("/requests/tools/call").is_some();
    let can_list = caps.get("list").is_some();
    let can_cancel = caps.get("cancel").is_some();
    found.set(id::TASKS_UNKNOWN_ID, unknown_id(wire, s, can_cancel).await);
    let listed = match list_tools(wire, s).await {
        Ok(t) => t,
        Err(e) => {
            let why = Outcome::Inconclusive(format!("tools/list failed: {e}"));
            for (i, _, _) in all() {
                if i != id::TASKS_UNKNOWN_ID {
                    found.set(i, why.clone());
                }
            }
            return;
        }
    };
    found.set(id::TASKS_SUPPORT_VALUES, support_values(&listed));
    let named = Named {
        listed: &listed,
        given: &cx.opts.tools,
    };
    if !tools_call {
        let why = Outcome::NotApplicable(
            "the server declares tasks but not tasks.requests.tools.call, so tools/call is never task-augmented"
                .into(),
        );
        for i in [
            id::TASKS_CREATE,
            id::TASKS_GET,
            id::TASKS_RESULT_BLOCKS,
            id::TASKS_RELATED_TASK,
            id::TASKS_LIST,
            id::TASKS_CANCEL_TERMINAL,
            id::TASKS_FORBIDDEN_TOOL,
            id::TASKS_REQUIRED_TOOL,
        ] {
            found.set(i, why.clone());
        }
        found.set(
            id::TASKS_UNDECLARED_IGNORED,
            undeclared(wire, s, &named).await,
        );
        return;
    }
    found.set(
        id::TASKS_UNDECLARED_IGNORED,
        Outcome::NotApplicable(format!(
            "the server declares tasks.requests.tools.call ({})",
            short(&caps.to_string())
        )),
    );
    found.set(id::TASKS_FORBIDDEN_TOOL, forbidden(wire, s, &named).await);
    found.set(id::TASKS_REQUIRED_TOOL, required(wire, s, &named).await);
    lifecycle(wire, s, &named, can_list, can_cancel, found).await;
}

/// Create, get, result, related-task, list and cancel of one task.
async fn lifecycle(
    wire: &Wire,
    s: &LegacySession,
    named: &Named<'_>,
    can_list: bool,
    can_cancel: bool,
    found: &mut Found,
) {
    let rest = [
        id::TASKS_GET,
        id::TASKS_RESULT_BLOCKS,
        id::TASKS_RELATED_TASK,
        id::TASKS_LIST,
        id::TASKS_CANCEL_TERMINAL,
    ];
    let Some((tool, support)) = named.first(allows) else {
        let why = named.none_fits(
            "allows tasks (taskSupport \"optional\" or \"required\")",
            allows,
        );
        found.set(id::TASKS_CREATE, why.clone());
        for i in rest {
            found.set(i, why.clone());
        }
        return;
    };
    let what = format!(
        "a task-augmented tools/call of {} (taskSupport {:?})",
        tool.name,
        support.unwrap_or_default()
    );
    let (create, task_id) = match call(wire, s, tool, true).await {
        Err(e) => (Outcome::Inconclusive(format!("{what} failed: {e}")), None),
        Ok(a) => match a.pointer("/result/task") {
            None => (
                Outcome::Fail(format!(
                    "{what} was answered with {}, not a CreateTaskResult",
                    answered(&a)
                )),
                None,
            ),
            Some(task) => {
                let problems = task_problems(task);
                let id = task["taskId"].as_str().map(str::to_owned);
                if problems.is_empty() {
                    (Outcome::Pass, id)
                } else {
                    (
                        Outcome::Fail(format!(
                            "the CreateTaskResult's task: {}",
                            problems.join("; ")
                        )),
                        id,
                    )
                }
            }
        },
    };
    found.set(id::TASKS_CREATE, create);
    let Some(task_id) = task_id else {
        let why = Outcome::Inconclusive(format!("{what} created no task with a taskId"));
        for i in rest {
            found.set(i, why.clone());
        }
        return;
    };
    found.set(id::TASKS_GET, get(wire, s, &task_id).await);
    let (blocks, related, status) = result(wire, s, &task_id).await;
    found.set(id::TASKS_RESULT_BLOCKS, blocks);
    found.set(id::TASKS_RELATED_TASK, related);
    found.set(
        id::TASKS_LIST,
        if can_list {
            listed(wire, s, &task_id).await
        } else {
            Outcome::NotApplicable("the server does not declare tasks.list".into())
        },
    );
    found.set(
        id::TASKS_CANCEL_TERMINAL,
        match (can_cancel, status) {
            (false, _) => Outcome::NotApplicable("the server does not declare tasks.cancel".into()),
            (true, Ok(st)) if TERMINAL.contains(&st.as_str()) => {
                cancel_terminal(wire, s, &task_id, &st).await
            }
            (true, Ok(st)) => Outcome::Inconclusive(format!(
                "the task never became terminal (tasks/get says {st:?}), so there was no terminal task to cancel"
            )),
            (true, Err(e)) => Outcome::Inconclusive(format!("the task's status is unknown: {e}")),
        },
    );
}

async fn get(wire: &Wire, s: &LegacySession, task_id: &str) -> Outcome {
    let a = match rpc(wire, s, "tasks/get", json!({ "taskId": task_id })).await {
        Ok(a) => a,
        Err(e) => return Outcome::Inconclusive(format!("tasks/get failed: {e}")),
    };
    let Some(task) = a.get("result") else {
        return Outcome::Fail(format!(
            "tasks/get of task {task_id:?}, just created, was answered with {}",
            answered(&a)
        ));
    };
    let mut problems = task_problems(task);
    if task["taskId"] != task_id {
        problems.push(format!("taskId {} is not {task_id:?}", task["taskId"]));
    }
    if problems.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(format!("tasks/get: {}", problems.join("; ")))
    }
}

/// The task's status by `tasks/get`.
async fn status(wire: &Wire, s: &LegacySession, task_id: &str) -> Result<String, String> {
    let a = rpc(wire, s, "tasks/get", json!({ "taskId": task_id })).await?;
    a.pointer("/result/status")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("tasks/get answered {}", answered(&a)))
}

/// `tasks/result`, then `tasks/get`: the blocking verdict, the
/// related-task verdict, and the status after.
async fn result(
    wire: &Wire,
    s: &LegacySession,
    task_id: &str,
) -> (Outcome, Outcome, Result<String, String>) {
    let a = match rpc(wire, s, "tasks/result", json!({ "taskId": task_id })).await {
        Ok(a) => a,
        Err(e) => {
            let why = Outcome::Inconclusive(format!(
                "tasks/result gave no answer within {} ms (a task that waits for input, or one longer than --timeout-ms?): {e}",
                wire.timeout.as_millis()
            ));
            let st = status(wire, s, task_id).await;
            return (why.clone(), why, st);
        }
    };
    let after = status(wire, s, task_id).await;
    let blocks = match (&after, a.get("result"), a.get("error")) {
        (Err(e), _, _) => Outcome::Inconclusive(format!(
            "tasks/result answered, but the task's status could not be read after: {e}"
        )),
        (Ok(st), _, _) if !TERMINAL.contains(&st.as_str()) => Outcome::Fail(format!(
            "tasks/result answered ({}) while tasks/get right after still says {st:?}: it did not block until the task was terminal",
            answered(&a)
        )),
        (Ok(_), Some(_), _) | (Ok(_), None, Some(_)) => Outcome::Pass,
        (Ok(_), None, None) => Outcome::Fail(format!(
            "tasks/result answered neither a result nor an error: {}",
            short(&a.to_string())
        )),
    };
    let related = match a.get("result") {
        None => Outcome::NotApplicable(format!(
            "tasks/result answered the task's JSON-RPC error ({}), and an error object has no _meta",
            answered(&a)
        )),
        Some(r) => match r.pointer(&format!("/_meta/{}", RELATED_TASK.replace('/', "~1"))) {
            Some(m) if m["taskId"] == task_id => Outcome::Pass,
            Some(m) => Outcome::Fail(format!(
                "_meta[{RELATED_TASK:?}] is {m}, not {{\"taskId\": {task_id:?}}}"
            )),
            None => Outcome::Fail(format!(
                "the tasks/result result has no _meta[{RELATED_TASK:?}]: {}",
                short(&r.to_string())
            )),
        },
    };
    (blocks, related, after)
}

async fn listed(wire: &Wire, s: &LegacySession, task_id: &str) -> Outcome {
    let mut cursor: Option<String> = None;
    let mut seen = 0;
    for page in 1..=MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let a = match rpc(wire, s, "tasks/list", params).await {
            Ok(a) => a,
            Err(e) => return Outcome::Inconclusive(format!("tasks/list failed: {e}")),
        };
        let Some(r) = a.get("result") else {
            return Outcome::Fail(format!("tasks/list was answered with {}", answered(&a)));
        };
        let tasks = r["tasks"].as_array().cloned().unwrap_or_default();
        seen += tasks.len();
        if tasks.iter().any(|t| t["taskId"] == task_id) {
            return Outcome::Pass;
        }
        match r.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => {
                return Outcome::Fail(format!(
                    "tasks/list ({page} page(s), {seen} task(s)) does not list task {task_id:?}, which tasks/get finds"
                ));
            }
        }
    }
    Outcome::Inconclusive(format!(
        "task {task_id:?} was not in the first {MAX_PAGES} pages of tasks/list ({seen} tasks)"
    ))
}

async fn cancel_terminal(wire: &Wire, s: &LegacySession, task_id: &str, st: &str) -> Outcome {
    match rpc(wire, s, "tasks/cancel", json!({ "taskId": task_id })).await {
        Err(e) => Outcome::Inconclusive(format!("tasks/cancel failed: {e}")),
        Ok(a) => match error_code(&a) {
            Some(INVALID_PARAMS) => Outcome::Pass,
            Some(c) => Outcome::Fail(format!(
                "tasks/cancel of a task already {st:?} got error {c}, not {INVALID_PARAMS}"
            )),
            None => Outcome::Fail(format!(
                "tasks/cancel of a task already {st:?} was answered with {}, not error {INVALID_PARAMS}",
                answered(&a)
            )),
        },
    }
}

async fn unknown_id(wire: &Wire, s: &LegacySession, can_cancel: bool) -> Outcome {
    let mut methods = vec!["tasks/get", "tasks/result"];
    if can_cancel {
        methods.push("tasks/cancel");
    }
    let mut wrong = Vec::new();
    for m in &methods {
        match rpc(wire, s, m, json!({ "taskId": UNKNOWN_TASK })).await {
            Err(e) => return Outcome::Inconclusive(format!("{m} failed: {e}")),
            Ok(a) if error_code(&a) == Some(INVALID_PARAMS) => {}
            Ok(a) => wrong.push(format!("{m}: {}", answered(&a))),
        }
    }
    if wrong.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "task id {UNKNOWN_TASK:?}, never issued, was answered without {INVALID_PARAMS}: {}",
            wrong.join("; ")
        ))
    }
}

/// Expects `-32601` for `tool` called with a task (`task`) or without.
async fn expect_method_not_found(
    wire: &Wire,
    s: &LegacySession,
    tool: &ToolCall,
    support: Option<&str>,
    task: bool,
) -> Outcome {
    let what = format!(
        "tools/call of {} (taskSupport {}) {} a task",
        tool.name,
        support.map_or("absent".to_owned(), |v| format!("{v:?}")),
        if task { "with" } else { "without" }
    );
    let a = match call(wire, s, tool, task).await {
        Ok(a) => a,
        Err(e) => return Outcome::Inconclusive(format!("{what} failed: {e}")),
    };
    if error_code(&a) == Some(METHOD_NOT_FOUND) {
        return Outcome::Pass;
    }
    if let Some(created) = a.pointer("/result/task/taskId").and_then(Value::as_str) {
        // Do not leave it running.
        let _ = rpc(wire, s, "tasks/cancel", json!({ "taskId": created })).await;
    }
    Outcome::Fail(format!(
        "{what} was answered with {}, not error {METHOD_NOT_FOUND}",
        answered(&a)
    ))
}

async fn forbidden(wire: &Wire, s: &LegacySession, named: &Named<'_>) -> Outcome {
    match named.first(forbids) {
        Some((tool, support)) => expect_method_not_found(wire, s, tool, support, true).await,
        None => named.none_fits(
            "forbids tasks (taskSupport absent or \"forbidden\")",
            forbids,
        ),
    }
}

async fn required(wire: &Wire, s: &LegacySession, named: &Named<'_>) -> Outcome {
    match named.first(requires) {
        Some((tool, support)) => expect_method_not_found(wire, s, tool, support, false).await,
        None => named.none_fits("requires tasks (taskSupport \"required\")", requires),
    }
}

async fn undeclared(wire: &Wire, s: &LegacySession, named: &Named<'_>) -> Outcome {
    let Some((tool, _)) = named.first(|_| true) else {
        return named.none_fits("is listed", |_| true);
    };
    let a = match call(wire, s, tool, true).await {
        Ok(a) => a,
        Err(e) => return Outcome::Inconclusive(format!("tools/call of {} failed: {e}", tool.name)),
    };
    if let Some(created) = a.pointer("/result/task/taskId").and_then(Value::as_str) {
        let _ = rpc(wire, s, "tasks/cancel", json!({ "taskId": created })).await;
        return Outcome::Fail(format!(
            "a task-augmented tools/call of {} created task {created:?} although the server does not declare tasks.requests.tools.call",
            tool.name
        ));
    }
    match error_code(&a) {
        None if a.get("result").is_some() => Outcome::Pass,
        Some(METHOD_NOT_FOUND) => Outcome::Fail(format!(
            "a task-augmented tools/call of {} got {METHOD_NOT_FOUND} instead of being served with params.task ignored",
            tool.name
        )),
        _ => Outcome::Inconclusive(format!(
            "a task-augmented tools/call of {} was answered with {}; whether that is the tool's own answer cannot be told",
            tool.name,
            answered(&a)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_fake::session;
    use super::*;

    fn task() -> Value {
        json!({
            "taskId": "t1", "status": "working",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:40:00.123+01:00",
            "ttl": 60000, "pollInterval": 500
        })
    }

    #[test]
    fn a_task_as_the_schema_says() {
        assert!(task_problems(&task()).is_empty());
        let mut t = task();
        t["ttl"] = Value::Null;
        assert!(task_problems(&t).is_empty(), "null is unlimited");
        for (key, value) in [
            ("taskId", json!(5)),
            ("status", json!("running")),
            ("createdAt", json!("yesterday")),
            ("ttl", json!("60s")),
            ("pollInterval", json!(-1)),
            ("statusMessage", json!(3)),
        ] {
            let mut t = task();
            t[key] = value;
            assert_eq!(task_problems(&t).len(), 1, "{key}: {t}");
        }
        let mut t = task();
        t.as_object_mut().unwrap().remove("ttl");
        assert!(task_problems(&t)[0].contains("ttl is missing"));
    }

    #[test]
    fn task_support_values() {
        let tools = |v: Value| {
            vec![
                json!({"name": "a"}),
                json!({"name": "b", "execution": {"taskSupport": v}}),
            ]
        };
        assert_eq!(support_values(&tools(json!("optional"))), Outcome::Pass);
        assert!(support_values(&tools(json!("sometimes"))).is_fail());
        assert!(support_values(&tools(json!(true))).is_fail());
        assert!(matches!(
            support_values(&[json!({"name": "a"})]),
            Outcome::NotApplicable(_)
        ));
    }

    #[test]
    fn more_ways_a_task_breaks_the_schema() {
        assert!(task_problems(&json!("t1"))[0].contains("not an object"));
        for (key, value, says) in [
            ("taskId", json!(""), "taskId is not a non-empty string"),
            ("lastUpdatedAt", json!("2025-11-25"), "lastUpdatedAt"),
            ("ttl", json!(-1), "ttl -1"),
            ("pollInterval", json!("500"), "pollInterval"),
        ] {
            let mut t = task();
            t[key] = value;
            let p = task_problems(&t);
            assert_eq!(p.len(), 1, "{key}: {p:?}");
            assert!(p[0].contains(says), "{key}: {p:?}");
        }
        for key in ["createdAt", "lastUpdatedAt", "taskId", "status"] {
            let mut t = task();
            t.as_object_mut().unwrap().remove(key);
            assert_eq!(task_problems(&t).len(), 1, "{key} missing");
        }
        // Zero is a duration; a status message may be any string; every
        // status of the schema is one.
        let mut t = task();
        t["ttl"] = json!(0);
        t["pollInterval"] = json!(0);
        t["statusMessage"] = json!("halfway");
        assert!(task_problems(&t).is_empty());
        for status in STATUSES {
            t["status"] = json!(status);
            assert!(task_problems(&t).is_empty(), "{status}");
        }
    }

    #[test]
    fn answers_described_and_task_support_read() {
        assert!(answered(&json!({ "error": { "code": 1 } })).starts_with("JSON-RPC error"));
        assert!(answered(&json!({ "result": {} })).starts_with("a result"));
        assert_eq!(answered(&json!({ "id": 1 })), short(r#"{"id":1}"#));
        assert!(allows(Some("optional")) && allows(Some("required")));
        assert!(!allows(None) && !allows(Some("forbidden")));
        assert!(forbids(None) && forbids(Some("forbidden")));
        assert!(!forbids(Some("optional")) && !forbids(Some("required")));
        assert!(requires(Some("required")));
        assert!(!requires(Some("optional")) && !requires(None));
    }

    #[test]
    fn named_tools_are_matched_to_what_tools_list_says() {
        let listed = vec![
            json!({ "name": "a" }),
            json!({ "name": "b", "execution": { "taskSupport": "optional" } }),
            json!({ "name": "c", "execution": { "taskSupport": "required" } }),
        ];
        let given: Vec<ToolCall> = ["x", "c", "b"].iter().map(|n| n.parse().unwrap()).collect();
        let named = Named {
            listed: &listed,
            given: &given,
        };
        // In the order given; a tool not listed is skipped.
        let (tool, support) = named.first(allows).unwrap();
        assert_eq!((tool.name.as_str(), support), ("c", Some("required")));
        assert!(named.first(forbids).is_none(), "a is listed but not given");
        let why = named.none_fits("forbids tasks", forbids);
        assert!(
            matches!(&why, Outcome::NotApplicable(r) if r.contains("--tool") && r.ends_with("offers a)")),
            "{why:?}"
        );
        let none = Named {
            listed: &listed[1..],
            given: &given,
        };
        let why = none.none_fits("forbids tasks", forbids);
        assert_eq!(
            why,
            Outcome::NotApplicable("no tool of tools/list forbids tasks".into())
        );
    }

    /// A server answering each POST with `post(id)` and each GET (a
    /// resume) with `get(id, Last-Event-ID)`, `id` being the last POST's.
    async fn resuming(
        post: impl Fn(&Value) -> axum::response::Response + Send + Sync + 'static,
        get: impl Fn(&Value, &str) -> axum::response::Response + Send + Sync + 'static,
        timeout: Duration,
    ) -> (mcp_test_support::fake::Fake, Wire) {
        let last = std::sync::Mutex::new(Value::Null);
        let fake = mcp_test_support::fake::Fake::start(move |seen| {
            if seen.method == http::Method::GET {
                let from = seen.headers["last-event-id"].to_str().unwrap_or_default();
                get(&last.lock().unwrap(), from)
            } else {
                let id = seen.body.as_ref().map_or(Value::Null, |b| b["id"].clone());
                *last.lock().unwrap() = id.clone();
                post(&id)
            }
        })
        .await;
        let wire = Wire::new(&fake.url, timeout, None).unwrap();
        (fake, wire)
    }

    fn sse(chunks: &[String], ending: mcp_test_support::fake::Ending) -> axum::response::Response {
        mcp_test_support::fake::SseBody::new(chunks.to_vec())
            .ending(ending)
            .response()
    }

    fn answer(id: &Value) -> String {
        format!(
            "id: r1\ndata: {}\n\n",
            json!({ "jsonrpc": "2.0", "id": id, "result": { "ok": true } })
        )
    }

    #[tokio::test]
    async fn a_stream_closed_before_the_answer_is_resumed_after_its_retry() {
        use mcp_test_support::fake::Ending::Eof;
        let (fake, wire) = resuming(
            |_| sse(&["id: r0\ndata:\n\nretry: 20\n\n".into()], Eof),
            |id, from| {
                assert_eq!(from, "r0");
                sse(&[answer(id)], Eof)
            },
            Duration::from_secs(5),
        )
        .await;
        let got = rpc(
            &wire,
            &session(Some("s")),
            "tasks/result",
            json!({ "taskId": "t" }),
        )
        .await
        .unwrap();
        assert_eq!(got["result"], json!({ "ok": true }));
        let seen = fake.seen();
        assert_eq!(seen.len(), 2);
        assert_eq!(
            seen[0].body.as_ref().unwrap()["params"],
            json!({ "taskId": "t" })
        );
        assert_eq!(seen[1].headers["mcp-session-id"], "s");
        // The resume waited for the `retry` (20 ms), no longer than that
        // matters here.
        assert!(seen[1].at - seen[0].at >= Duration::from_millis(20));
    }

    #[tokio::test]
    async fn a_resume_keeps_the_last_id_it_was_given() {
        use mcp_test_support::fake::Ending::Eof;
        // The first resume closes again with nothing new; the second must
        // still name r0.
        let resumes = std::sync::atomic::AtomicU64::new(0);
        let (fake, wire) = resuming(
            |_| sse(&["id: r0\ndata:\n\n".into()], Eof),
            move |id, from| {
                assert_eq!(from, "r0");
                match resumes.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
                    0 => sse(&["retry: 1\n\n".into()], Eof),
                    _ => sse(&[answer(id)], Eof),
                }
            },
            Duration::from_secs(5),
        )
        .await;
        let got = rpc(&wire, &session(Some("s")), "ping", json!({}))
            .await
            .unwrap();
        assert_eq!(got["result"]["ok"], true);
        assert_eq!(fake.seen().len(), 3);
    }

    #[tokio::test]
    async fn a_stream_that_cannot_be_resumed_is_an_error() {
        use mcp_test_support::fake::Ending::{Eof, Hang};
        let t = Duration::from_secs(5);
        // Closed without any id.
        let (_f, wire) = resuming(|_| sse(&[], Eof), |id, _| sse(&[answer(id)], Eof), t).await;
        let e = rpc(&wire, &session(Some("s")), "ping", json!({}))
            .await
            .unwrap_err();
        assert!(e.contains("without an event id"), "{e}");
        // The resume refused.
        let (_f, wire) = resuming(
            |_| sse(&["id: r0\ndata:\n\n".into()], Eof),
            |_, _| super::super::test_fake::bare(404),
            t,
        )
        .await;
        let e = rpc(&wire, &session(Some("s")), "ping", json!({}))
            .await
            .unwrap_err();
        assert!(e.contains("resuming from \"r0\" answered HTTP 404"), "{e}");
        // The resume answered as JSON.
        let (_f, wire) = resuming(
            |_| sse(&["id: r0\ndata:\n\n".into()], Eof),
            |_, _| mcp_test_support::fake::json_ok(&json!({})),
            t,
        )
        .await;
        let e = rpc(&wire, &session(Some("s")), "ping", json!({}))
            .await
            .unwrap_err();
        assert!(e.contains("answered HTTP 200"), "{e}");
        // Closed early for ever.
        let (fake, wire) = resuming(
            |_| sse(&["id: r0\ndata:\n\n".into()], Eof),
            |_, _| sse(&["id: r0\ndata:\n\n".into()], Eof),
            t,
        )
        .await;
        let e = rpc(&wire, &session(Some("s")), "ping", json!({}))
            .await
            .unwrap_err();
        assert!(e.contains("no answer after 50 resumptions"), "{e}");
        assert_eq!(fake.seen().len(), 1 + MAX_RESUMES);
        // Held open without the answer: the wire's timeout.
        let (_f, wire) = resuming(
            |_| sse(&["id: r0\ndata:\n\n".into()], Hang),
            |id, _| sse(&[answer(id)], Eof),
            Duration::from_millis(300),
        )
        .await;
        let e = rpc(&wire, &session(Some("s")), "ping", json!({}))
            .await
            .unwrap_err();
        assert!(e.contains("no answer within 300 ms"), "{e}");
        // A JSON answer is returned as it is.
        let (_f, wire) = resuming(
            |id| {
                mcp_test_support::fake::json_ok(&json!({ "jsonrpc": "2.0", "id": id, "result": 7 }))
            },
            |id, _| sse(&[answer(id)], Eof),
            t,
        )
        .await;
        assert_eq!(
            rpc(&wire, &session(Some("s")), "ping", json!({}))
                .await
                .unwrap()["result"],
            7
        );
    }

    /// A 2025-11-25 server declaring `tasks` (`caps`) whose `tools/list`
    /// fails and which answers every `tasks/*` with `-32602`.
    async fn tools_list_failing(caps: Value) -> (mcp_test_support::fake::Fake, Wire) {
        use mcp_test_support::fake::{json_ok, rpc_error};
        super::super::test_fake::serving(move |seen| {
            let Some(body) = seen.body.clone() else {
                return super::super::test_fake::bare(200);
            };
            let id = &body["id"];
            match body["method"].as_str().unwrap_or_default() {
                "initialize" => {
                    let mut r = json_ok(&json!({ "jsonrpc": "2.0", "id": id, "result": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": { "tasks": caps },
                        "serverInfo": { "name": "fake", "version": "0" }
                    } }));
                    r.headers_mut()
                        .insert("mcp-session-id", http::HeaderValue::from_static("s1"));
                    r
                }
                "tools/list" => super::super::test_fake::bare(500),
                m if m.starts_with("tasks/") => {
                    json_ok(&rpc_error(id, INVALID_PARAMS, "no such task", None))
                }
                _ => super::super::test_fake::bare(202),
            }
        })
        .await
    }

    #[tokio::test]
    async fn a_failed_tools_list_leaves_every_check_but_the_unknown_id_inconclusive() {
        let caps = json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
        let (fake, wire) = tools_list_failing(caps).await;
        let opts = super::super::CheckOptions::default();
        let cx = Ctx {
            wire: &wire,
            opts: &opts,
            speaks: &[ProtocolVersion::V2025_11_25],
        };
        let checks = run(&cx, &ProtocolVersion::V2025_11_25).await;
        assert_eq!(checks.len(), all().len());
        for c in &checks {
            if c.id == id::TASKS_UNKNOWN_ID {
                assert_eq!(c.outcome, Outcome::Pass, "{c:?}");
            } else {
                assert!(
                    matches!(&c.outcome, Outcome::Inconclusive(r) if r.contains("tools/list failed")),
                    "{c:?}"
                );
            }
        }
        // tasks/cancel too (declared), in the session, which is closed.
        let cancels = fake.rpc("tasks/cancel");
        assert_eq!(cancels.len(), 1);
        assert_eq!(cancels[0].headers["mcp-session-id"], "s1");
        assert_eq!(
            fake.seen_where(|s| s.method == http::Method::DELETE).len(),
            1
        );
    }

    /// A server answering each JSON-RPC request with `answer(method,
    /// params)` as its result or, for `Err`, error `-32602`.
    async fn answering(
        answer: impl Fn(&str, &Value) -> Result<Value, ()> + Send + Sync + 'static,
    ) -> (mcp_test_support::fake::Fake, Wire) {
        use mcp_test_support::fake::{json_ok, rpc_error};
        super::super::test_fake::serving(move |seen| {
            let body = seen.body.clone().unwrap_or_default();
            let id = &body["id"];
            json_ok(
                &match answer(body["method"].as_str().unwrap_or_default(), &body["params"]) {
                    Ok(r) => json!({ "jsonrpc": "2.0", "id": id, "result": r }),
                    Err(()) => rpc_error(id, INVALID_PARAMS, "no", None),
                },
            )
        })
        .await
    }

    fn with_status(status: &str) -> Value {
        let mut t = task();
        t["status"] = json!(status);
        t
    }

    #[tokio::test]
    async fn tasks_result_must_block_and_name_its_task() {
        let related =
            |id: &str| json!({ "content": [], "_meta": { RELATED_TASK: { "taskId": id } } });
        let cases = [
            // (tasks/result's answer, tasks/get's status, blocks, related)
            (Ok(related("t1")), "completed", "pass", "pass"),
            (Ok(related("t2")), "completed", "pass", "FAIL"),
            (Ok(json!({ "content": [] })), "failed", "pass", "FAIL"),
            (Err(()), "cancelled", "pass", "n/a"),
            (Ok(related("t1")), "working", "FAIL", "pass"),
        ];
        for (answer, st, blocks, related) in cases {
            let (fake, wire) = answering(move |m, p| {
                assert_eq!(p["taskId"], "t1");
                match m {
                    "tasks/result" => answer.clone(),
                    _ => Ok(with_status(st)),
                }
            })
            .await;
            let (b, r, after) = result(&wire, &session(Some("s")), "t1").await;
            assert_eq!((b.label(), r.label()), (blocks, related), "{b:?} {r:?}");
            assert_eq!(after, Ok(st.to_owned()));
            let methods: Vec<_> = fake
                .seen()
                .iter()
                .filter_map(|s| s.rpc_method().map(str::to_owned))
                .collect();
            assert_eq!(methods, ["tasks/result", "tasks/get"]);
        }
    }

    #[tokio::test]
    async fn tasks_get_must_answer_the_task_it_was_asked_for() {
        let (_f, wire) = answering(|_, _| Ok(task())).await;
        assert_eq!(get(&wire, &session(Some("s")), "t1").await, Outcome::Pass);
        let o = get(&wire, &session(Some("s")), "t9").await;
        assert!(
            o.is_fail() && o.reason().unwrap().contains("is not \"t9\""),
            "{o:?}"
        );
        let (_f, wire) = answering(|_, _| Ok(json!({ "taskId": "t1" }))).await;
        assert!(get(&wire, &session(Some("s")), "t1").await.is_fail());
        let (_f, wire) = answering(|_, _| Err(())).await;
        let o = get(&wire, &session(Some("s")), "t1").await;
        assert!(
            o.is_fail() && o.reason().unwrap().contains("JSON-RPC error"),
            "{o:?}"
        );
        assert!(
            status(&wire, &session(Some("s")), "t1")
                .await
                .unwrap_err()
                .contains("JSON-RPC error")
        );
    }

    #[tokio::test]
    async fn tasks_list_is_followed_page_by_page() {
        let pages = |p: &Value| match p.get("cursor").and_then(Value::as_str) {
            None => json!({ "tasks": [with_status("working")], "nextCursor": "c2" }),
            Some("c2") => json!({ "tasks": [{ "taskId": "t7" }] }),
            Some(c) => panic!("cursor {c}"),
        };
        let (fake, wire) = answering(move |_, p| Ok(pages(p))).await;
        assert_eq!(
            listed(&wire, &session(Some("s")), "t7").await,
            Outcome::Pass
        );
        assert_eq!(fake.rpc("tasks/list").len(), 2);
        let o = listed(&wire, &session(Some("s")), "t8").await;
        assert!(
            o.is_fail() && o.reason().unwrap().contains("2 page(s), 2 task(s)"),
            "{o:?}"
        );
        let (_f, wire) = answering(|_, _| Err(())).await;
        assert!(listed(&wire, &session(Some("s")), "t7").await.is_fail());
        // A cursor for ever: inconclusive after `MAX_PAGES`.
        let (fake, wire) = answering(|_, _| Ok(json!({ "tasks": [], "nextCursor": "c" }))).await;
        assert!(matches!(
            listed(&wire, &session(Some("s")), "t7").await,
            Outcome::Inconclusive(_)
        ));
        assert_eq!(fake.rpc("tasks/list").len(), MAX_PAGES);
    }

    #[tokio::test]
    async fn cancelling_a_terminal_task_must_get_invalid_params() {
        let (_f, wire) = answering(|_, _| Err(())).await;
        assert_eq!(
            cancel_terminal(&wire, &session(Some("s")), "t1", "completed").await,
            Outcome::Pass
        );
        let (_f, wire) = answering(|_, _| Ok(with_status("cancelled"))).await;
        let o = cancel_terminal(&wire, &session(Some("s")), "t1", "completed").await;
        assert!(
            o.is_fail() && o.reason().unwrap().contains("a result"),
            "{o:?}"
        );
    }

    #[tokio::test]
    async fn without_tasks_requests_a_task_augmented_call_is_served_as_usual() {
        use mcp_test_support::fake::json_ok;
        let listed = vec![json!({ "name": "echo" })];
        let given: Vec<ToolCall> = vec!["echo".parse().unwrap()];
        let named = Named {
            listed: &listed,
            given: &given,
        };
        let cases = [
            (json!({ "result": { "content": [] } }), "pass", ""),
            (
                json!({ "result": { "task": with_status("working") } }),
                "FAIL",
                "created task \"t1\"",
            ),
            (
                json!({ "error": { "code": METHOD_NOT_FOUND, "message": "no" } }),
                "FAIL",
                "got -32601",
            ),
            (
                json!({ "error": { "code": INVALID_PARAMS, "message": "no" } }),
                "inconclusive",
                "JSON-RPC error",
            ),
            // An error without a code is no result.
            (
                json!({ "error": { "message": "no" } }),
                "inconclusive",
                "JSON-RPC error",
            ),
        ];
        for (answer, want, says) in cases {
            let creates = answer.pointer("/result/task").is_some();
            let (fake, wire) = super::super::test_fake::serving(move |seen| {
                let body = seen.body.clone().unwrap_or_default();
                let mut a = answer.clone();
                a["jsonrpc"] = json!("2.0");
                a["id"] = body["id"].clone();
                if body["method"] == "tasks/cancel" {
                    a = json!({ "jsonrpc": "2.0", "id": body["id"], "result": {} });
                }
                json_ok(&a)
            })
            .await;
            let o = undeclared(&wire, &session(Some("s")), &named).await;
            assert_eq!(o.label(), want, "{o:?}");
            assert!(o.reason().unwrap_or_default().contains(says), "{o:?}");
            let call = &fake.rpc("tools/call")[0];
            assert_eq!(
                call.body.as_ref().unwrap()["params"]["task"],
                json!({ "ttl": ASKED_TTL })
            );
            let cancels = fake.rpc("tasks/cancel");
            assert_eq!(cancels.len(), usize::from(creates), "{want} {says}");
            if creates {
                assert_eq!(cancels[0].body.as_ref().unwrap()["params"]["taskId"], "t1");
            }
        }
        // Nothing named: not applicable.
        let none = Named {
            listed: &listed,
            given: &[],
        };
        let (_f, wire) =
            super::super::test_fake::serving(|_| super::super::test_fake::bare(500)).await;
        assert!(matches!(
            undeclared(&wire, &session(Some("s")), &none).await,
            Outcome::NotApplicable(_)
        ));
    }

    #[test]
    fn tool_arguments_parse() {
        let t: ToolCall = "slow={\"ms\":5}".parse().unwrap();
        assert_eq!((t.name.as_str(), &t.arguments), ("slow", &json!({"ms": 5})));
        let t: ToolCall = "echo".parse().unwrap();
        assert_eq!(t.arguments, json!({}));
        assert!("x=[1]".parse::<ToolCall>().is_err());
        assert!("=".parse::<ToolCall>().is_err());
    }
}
