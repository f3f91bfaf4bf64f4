//! Creating a task and running its handler outside any HTTP exchange.
//!
//! The handler is driven as the engine drives a request, but its input
//! requests go into the task (`input_required`, keys unique for the task's
//! life) for a `tasks/result` to carry to the client; when every key is
//! answered the handler is called again with the answers and its `state`.
//! Bounded: at most [`TasksConfig::max_input_rounds`](super::TasksConfig)
//! rounds, and the run ends (the handler cancelled) when the task's TTL
//! passes.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::FutureExt;
use mcp_transport_core::admission::{self, RunPermit};
use mcp_transport_core::handler::{
    Handler, LogLevel, Outcome, RequestContext, RequestSink, SendError,
};
use mcp_transport_core::jsonrpc::{
    ErrorObject, INTERNAL_ERROR, MISSING_REQUIRED_CLIENT_CAPABILITY, Notification, Request, to_raw,
};
use mcp_transport_core::task_store::{
    Exit, InputEnd, InputRounds, NewTask, Supervision, TaskInput, TaskStoreError, Terminal,
    WorkEnd, liveness, supervise,
};
use serde_json::Value;

use super::handler::params_of;
use super::wire;
use super::{Event, Running, Tasks, now_ms};
use crate::VERSION;

/// Where a task's related notifications go: to whoever waits on the task
/// (`tasks/result`), with the related-task metadata; a progress message
/// also becomes the task's `statusMessage`.
struct TaskSink {
    tasks: Arc<Tasks>,
    id: String,
    running: Running,
}

#[async_trait]
impl RequestSink for TaskSink {
    async fn send(&self, n: Notification) -> Result<(), SendError> {
        if self.running.cancel.is_cancelled() {
            return Err(SendError::Finished);
        }
        let params = n
            .params
            .as_deref()
            .map(wire::parsed)
            .unwrap_or_else(|| serde_json::json!({}));
        if n.method == "notifications/progress"
            && let Some(m) = params.get("message").and_then(Value::as_str)
        {
            let store = &self.tasks.config.store;
            match store
                .set_message(&self.id, Some(m.to_owned()), now_ms())
                .await
            {
                Ok(_) => {}
                Err(TaskStoreError::Terminal { .. }) => return Err(SendError::Finished),
                Err(e) => return Err(SendError::Queue(e.to_string())),
            }
        }
        let params = wire::with_related(params, &self.id);
        let _ = self.running.events.send(Event::Notify(Notification {
            method: n.method,
            params: Some(wire::raw(&params)),
        }));
        Ok(())
    }

    fn log_level(&self) -> Option<LogLevel> {
        // The session's `logging/setLevel` is the engine's; a task's log
        // messages are not delivered.
        None
    }
}

/// 16 CSPRNG bytes as 32 hex digits (*Tasks*, "Security Considerations":
/// "receivers MUST generate cryptographically secure task IDs").
fn mint_id() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Answers a task-augmented request: stores the task, starts its worker,
/// and returns `CreateTaskResult`.
pub(crate) async fn start(
    tasks: &Arc<Tasks>,
    session: &Arc<str>,
    inner: &Arc<dyn Handler>,
    request: Request,
    task: Value,
    cx: &RequestContext,
) -> Outcome {
    let config = &tasks.config;
    let store = &config.store;
    let ttl_ms = match task.get("ttl") {
        Some(Value::Number(n)) => match n.as_u64() {
            Some(t) => Some(t),
            None => {
                return Outcome::Error(ErrorObject::invalid_params(
                    "params.task.ttl must be a non-negative integer (milliseconds)",
                ));
            }
        },
        None | Some(Value::Null) => config.ttl_ms,
        Some(_) => {
            return Outcome::Error(ErrorObject::invalid_params(
                "params.task.ttl must be a non-negative integer (milliseconds)",
            ));
        }
    };
    // The session's bound: forget what has expired first.
    let mine = tasks.session_tasks(session);
    if mine.len() >= config.max_tasks_per_session {
        let mut gone = Vec::new();
        for id in &mine {
            if store.get(id, Some(session), now_ms()).await.is_err() {
                gone.push(id.clone());
            }
        }
        tasks.forget(session, &gone);
        if mine.len() - gone.len() >= config.max_tasks_per_session {
            return Outcome::Error(ErrorObject::internal(format!(
                "this session already holds its maximum of {} tasks; wait for some to expire",
                config.max_tasks_per_session
            )));
        }
    }
    // The worker's place in the engine's bound on running work, taken
    // before the task is created: a refused call leaves nothing behind.
    // The worker takes over this request's place, which it gives back as
    // soon as it answers (`Admission::try_admit_successor`): a budget with
    // room for the call has room for its task.
    let permit = match cx
        .admission()
        .map(|a| a.try_admit_successor(admission::weight(&request)))
        .transpose()
    {
        Ok(p) => p,
        Err(why) => return Outcome::Error(why.to_error()),
    };
    let mut attempt = 0;
    let record = loop {
        let new = NewTask {
            id: mint_id(),
            scope: Some(session.to_string()),
            ttl_ms,
            poll_interval_ms: Some(config.poll_interval_ms),
            status_message: None,
        };
        match store.create(new, now_ms()).await {
            Ok(r) => break r,
            Err(TaskStoreError::Exists { .. }) if attempt < 3 => attempt += 1,
            Err(e) => return Outcome::Error(ErrorObject::internal(e)),
        }
    };
    tasks.add_to_session(session, record.id.clone());
    if let Some(l) = &config.leases
        && !liveness::start_worker_lease(l, &record.id).await
    {
        tracing::warn!(task = %record.id, "cannot take the task's lease; its worker runs without one");
    }
    let running = tasks.start_running(&record.id);
    // The handler sees the call without the task augmentation.
    let mut params = params_of(&request);
    params.remove("task");
    let call = Request {
        id: request.id.clone(),
        method: request.method.clone(),
        params: to_raw(&Value::Object(params)).ok(),
    };
    let sink = Arc::new(TaskSink {
        tasks: tasks.clone(),
        id: record.id.clone(),
        running: running.clone(),
    });
    let mut wcx = RequestContext::new(
        VERSION,
        request.id.clone(),
        cx.client.clone(),
        running.cancel.clone(),
        sink,
    );
    wcx.progress_token = cx.progress_token.clone();
    wcx.set_task_id(Some(record.id.clone()));
    tokio::spawn(run(
        tasks.clone(),
        session.clone(),
        inner.clone(),
        call,
        wcx,
        record.id.clone(),
        record.expires_at_ms(),
        running,
        permit,
    ));
    Outcome::json(&serde_json::json!({ "task": wire::task(&record) }))
}

#[allow(clippy::too_many_arguments)]
async fn run(
    tasks: Arc<Tasks>,
    session: Arc<str>,
    inner: Arc<dyn Handler>,
    request: Request,
    cx: RequestContext,
    id: String,
    expires_at_ms: Option<u64>,
    running: Running,
    permit: Option<RunPermit>,
) {
    let _permit = permit;
    let work = drive(&tasks, &session, &inner, request, cx, &id, &running);
    // Beside the work: `follow_store` (what another instance does to the
    // task) and, with leases, the lease's renewal (the work stops when it
    // was taken over), within the task's TTL.
    let supervision = Supervision {
        task: TaskInput {
            store: tasks.config.store.clone(),
            id: id.clone(),
            scope: Some(session.to_string()),
            max_rounds: 0,
            wake: running.wake.clone(),
            cancel: running.cancel.clone(),
        },
        leases: tasks.config.leases.clone(),
        tick: Duration::from_millis(tasks.config.poll_interval_ms.max(10)),
        expires_at_ms,
        follow_store: true,
    };
    match supervise(&supervision, work, tokio::time::sleep).await {
        Exit::Finished(_) | Exit::Ended | Exit::Expired => {}
        Exit::LeaseLost => {
            tracing::debug!(task = %id, "the task's lease was taken over; its handler was cancelled");
        }
        Exit::NotRecorded(e) => {
            tracing::debug!(task = %id, error = %e, "the task's outcome is dropped");
        }
    }
    tasks.publish(&id);
    tasks.stop_running(&id);
}

/// The capability an input request needs (*Elicitation*, *Sampling*,
/// *Roots*).
fn capability_for(method: &str) -> Option<&'static str> {
    match method {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

async fn drive(
    tasks: &Arc<Tasks>,
    session: &str,
    inner: &Arc<dyn Handler>,
    request: Request,
    mut cx: RequestContext,
    id: &str,
    running: &Running,
) -> WorkEnd {
    let mut rounds = InputRounds::new(TaskInput {
        store: tasks.config.store.clone(),
        id: id.to_owned(),
        scope: Some(session.to_owned()),
        max_rounds: tasks.config.max_input_rounds,
        wake: running.wake.clone(),
        cancel: running.cancel.clone(),
    });
    loop {
        let outcome = AssertUnwindSafe(inner.handle(request.clone(), cx.clone()))
            .catch_unwind()
            .await;
        if running.cancel.is_cancelled() {
            return WorkEnd::Finish(Terminal::Cancelled, Some("cancelled".to_owned()));
        }
        let input = match outcome {
            Err(_) => {
                tracing::error!(task = %id, "the handler panicked");
                return WorkEnd::failed(ErrorObject::new(
                    INTERNAL_ERROR,
                    "Internal error: the handler failed",
                ));
            }
            Ok(Outcome::Result(raw)) => {
                // *Tasks*, "Task Execution Errors": "when the tool result
                // has `isError` set to `true`, the task should reach
                // `failed` status"; `tasks/result` still returns the result.
                let is_error = wire::parsed(&raw).get("isError") == Some(&Value::Bool(true));
                return if is_error {
                    WorkEnd::Finish(
                        Terminal::Failed(raw),
                        Some("the tool reported an error (isError)".to_owned()),
                    )
                } else {
                    WorkEnd::Finish(Terminal::Completed(raw), None)
                };
            }
            Ok(Outcome::Error(e)) => return WorkEnd::failed(e),
            Ok(Outcome::InputRequired(input)) => input,
        };
        for req in input.requests.values() {
            if let Some(cap) = capability_for(&req.method)
                && !cx.client.has_capability(cap)
            {
                return WorkEnd::failed(
                    ErrorObject::new(
                        MISSING_REQUIRED_CLIENT_CAPABILITY,
                        format!("Missing required client capability: the task needs {cap}, which the client did not declare in initialize"),
                    )
                    .with_data(&serde_json::json!({ "requiredCapabilities": { cap: {} } })),
                );
            }
        }
        let answers = rounds.exchange(&input, |_| tasks.publish(id)).await;
        let answers = match answers {
            Ok(a) => a,
            Err(InputEnd::Fail(e)) => return WorkEnd::failed(e),
            Err(InputEnd::Ended) => return WorkEnd::Already,
        };
        cx.set_input(Some(answers), input.state);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use async_trait::async_trait;
    use mcp_test_support::TestHandler;
    use mcp_transport_core::admission::{Admission, RunLimits};
    use mcp_transport_core::cancel::CancellationToken;
    use mcp_transport_core::handler::{
        ClientDescription, Handler, LogLevel, Outcome, RequestContext, RequestSink, SendError,
    };
    use mcp_transport_core::jsonrpc::{INTERNAL_ERROR, Notification, Request, RequestId, to_raw};
    use mcp_transport_core::version::ProtocolVersion;
    use serde_json::json;

    use super::super::{Tasks, TasksConfig};

    /// A sink that only carries an admission.
    struct Admitted(Arc<Admission>);

    #[async_trait]
    impl RequestSink for Admitted {
        async fn send(&self, _: Notification) -> Result<(), SendError> {
            Ok(())
        }
        fn log_level(&self) -> Option<LogLevel> {
            None
        }
        fn admission(&self) -> Option<&Arc<Admission>> {
            Some(&self.0)
        }
    }

    /// A hand-over refused (the budget is already one over: another
    /// hand-over has not finished) is the call's `-32603` naming the
    /// limit, and no task is made; with room, the task is made and its
    /// worker holds the place it took.
    #[tokio::test]
    async fn a_refused_hand_over_makes_no_task() {
        let admission = Admission::new(RunLimits::default().with_max_running(1));
        let caller = admission.try_admit(10).unwrap();
        let other = admission.try_admit_successor(10).unwrap();
        let tasks = Arc::new(Tasks::new(TasksConfig::default()));
        let session: Arc<str> = Arc::from("s1");
        let inner: Arc<dyn Handler> = Arc::new(TestHandler::builder("tasks-unit").build());
        let request = Request {
            id: RequestId::Number(1),
            method: "tools/call".into(),
            params: Some(to_raw(&json!({"name": "quick", "task": {}})).unwrap()),
        };
        let cx = || {
            RequestContext::new(
                ProtocolVersion::V2025_11_25,
                RequestId::Number(1),
                Arc::new(ClientDescription::default()),
                CancellationToken::new(),
                Arc::new(Admitted(admission.clone())),
            )
        };
        let refused =
            super::start(&tasks, &session, &inner, request.clone(), json!({}), &cx()).await;
        let Outcome::Error(e) = refused else {
            panic!("expected a refusal, got {refused:?}");
        };
        assert_eq!(e.code, INTERNAL_ERROR);
        assert!(e.message.contains("maximum of 1 requests"), "{e:?}");
        assert!(tasks.session_tasks(&session).is_empty(), "no task made");
        assert_eq!(admission.running(), 2, "the refusal took nothing");

        // The other hand-over finished: this one goes through.
        drop(other);
        let made = super::start(&tasks, &session, &inner, request, json!({}), &cx()).await;
        assert!(matches!(made, Outcome::Result(_)), "{made:?}");
        assert_eq!(tasks.session_tasks(&session).len(), 1);
        drop(caller);
    }
}
