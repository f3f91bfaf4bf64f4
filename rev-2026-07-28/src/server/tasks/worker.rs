//! A task's worker: runs the handler outside any HTTP exchange and writes
//! what happens into the store.
//!
//! The handler is called as in the MRTR loop: when it answers
//! `InputRequired`, the requests go into the task (`input_required`, keys
//! unique over the task's life), the worker waits until `tasks/update`
//! has answered every one (or the task is cancelled or expires), and calls
//! the handler again with the answers under the handler's own keys and its
//! `state`. Everything is bounded: at most
//! [`max_input_rounds`](crate::server::ModernConfig::max_input_rounds)
//! rounds, and the whole run ends when the task's TTL passes (the handler
//! is cancelled).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::FutureExt;
use mcp_transport_core::admission::RunPermit;
use mcp_transport_core::handler::{
    ClientDescription, LogLevel, Outcome, RequestContext, RequestSink, SendError,
};
use mcp_transport_core::jsonrpc::{
    ErrorObject, INTERNAL_ERROR, MISSING_REQUIRED_CLIENT_CAPABILITY, Notification,
};
use mcp_transport_core::task_store::{
    Exit, InputEnd, InputRounds, Supervision, TaskInput, TaskRecord, TaskStore, TaskStoreError,
    Terminal, WorkEnd, supervise,
};
use serde_json::Value;

use super::super::Shared;
use super::super::mrtr::{self, now_ms};
use super::super::reply;
use super::super::request::Prepared;
use super::super::result::{self, Decoration};
use super::{Running, publish};

/// Where a task's related notifications go: a progress message becomes the
/// task's `statusMessage`; nothing else is delivered (*Tasks*:
/// "`notifications/progress` and `notifications/message` … are not
/// supported on tasks in general").
struct TaskSink {
    store: Arc<dyn TaskStore>,
    id: String,
    cancel: mcp_transport_core::cancel::CancellationToken,
}

#[async_trait]
impl RequestSink for TaskSink {
    async fn send(&self, n: Notification) -> Result<(), SendError> {
        if self.cancel.is_cancelled() {
            return Err(SendError::Finished);
        }
        if n.method == "notifications/progress" {
            let message = n
                .params
                .as_deref()
                .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                .and_then(|p| p.get("message").and_then(Value::as_str).map(str::to_owned));
            if let Some(m) = message {
                match self.store.set_message(&self.id, Some(m), now_ms()).await {
                    Ok(_) => {}
                    Err(TaskStoreError::Terminal { .. }) => return Err(SendError::Finished),
                    Err(e) => return Err(SendError::Queue(e.to_string())),
                }
            }
        }
        Ok(())
    }

    fn log_level(&self) -> Option<LogLevel> {
        None
    }
}

/// Runs the task to its end (spawned by [`super::start`]).
///
/// Not an `async fn`, nor is [`drive`]: the arguments are the future's
/// own fields, used in place (an `async fn` copies each into a local of its
/// own, and this future lives as long as the task runs).
#[expect(
    clippy::manual_async_fn,
    reason = "arguments used in place: an async fn copies each into a local of its future"
)]
pub(super) fn run(
    shared: Arc<Shared>,
    prepared: Prepared,
    record: TaskRecord,
    running: Running,
    permit: RunPermit,
) -> impl Future<Output = ()> + Send + 'static {
    async move {
        let _permit = permit;
        let Some(tasks) = shared.tasks.as_ref() else {
            return;
        };
        let id = record.id.clone();
        let work = drive(&shared, prepared, &record, &running);
        // Beside the work: `follow_store` (what another instance does to the
        // task) and, with leases, the lease's renewal (the work stops when it
        // was taken over), within the task's TTL. Self-test fault
        // `IgnoreTaskCancel`: the work is never told of a cancel, not even
        // through the store.
        let ignore_cancel = shared
            .config
            .http
            .faults
            .has(mcp_http_edge::faults::Fault::IgnoreTaskCancel);
        let supervision = Supervision {
            task: TaskInput {
                store: tasks.config.store.clone(),
                id: id.clone(),
                scope: record.scope.clone(),
                max_rounds: 0,
                wake: running.wake.clone(),
                cancel: running.cancel.clone(),
            },
            leases: tasks.config.leases.clone(),
            tick: Duration::from_millis(tasks.config.poll_interval_ms.max(10)),
            expires_at_ms: record.expires_at_ms(),
            follow_store: !ignore_cancel,
        };
        match supervise(&supervision, work, tokio::time::sleep).await {
            Exit::Finished(r) => publish(&shared, &r),
            Exit::Ended => {}
            Exit::Expired => {
                tracing::debug!(task = %id, "task expired while running; its handler is cancelled");
            }
            Exit::LeaseLost => {
                tracing::debug!(task = %id, "the task's lease was taken over; its handler was cancelled");
            }
            Exit::NotRecorded(TaskStoreError::Terminal { status, .. }) => {
                tracing::debug!(task = %id, %status, "the task had already ended; its outcome is dropped");
            }
            Exit::NotRecorded(e) => {
                tracing::warn!(task = %id, error = %e, "could not record the task's end");
            }
        }
        tasks.lock().remove(&id);
    }
}

/// The handler loop (see the module docs).
#[expect(
    clippy::manual_async_fn,
    reason = "arguments used in place: an async fn copies each into a local of its future"
)]
fn drive<'a>(
    shared: &'a Arc<Shared>,
    prepared: Prepared,
    record: &'a TaskRecord,
    running: &'a Running,
) -> impl Future<Output = WorkEnd> + Send + 'a {
    async move {
        let Some(tasks) = shared.tasks.as_ref() else {
            return WorkEnd::Already;
        };
        let store = tasks.config.store.clone();
        let Prepared {
            request,
            params,
            version,
            meta,
            opened,
            input_responses,
            ..
        } = prepared;
        let capabilities = meta.capabilities.clone();
        let sink = Arc::new(TaskSink {
            store: store.clone(),
            id: record.id.clone(),
            cancel: running.cancel.clone(),
        });
        let mut cx = RequestContext::new(
            version,
            request.id.clone(),
            Arc::new(ClientDescription {
                info: meta.info,
                capabilities: meta.capabilities,
            }),
            running.cancel.clone(),
            sink,
        );
        cx.progress_token = meta.progress_token;
        cx.set_input(input_responses, opened.and_then(|o| o.state));
        cx.set_task_id(Some(record.id.clone()));
        cx.set_params_index(Some(params.into_index()));
        let mut rounds = InputRounds::new(TaskInput {
            store: store.clone(),
            id: record.id.clone(),
            scope: record.scope.clone(),
            max_rounds: shared.config.max_input_rounds,
            wake: running.wake.clone(),
            cancel: running.cancel.clone(),
        });
        loop {
            let outcome = AssertUnwindSafe(shared.handler.handle(request.clone(), cx.clone()))
                .catch_unwind()
                .await;
            if running.cancel.is_cancelled() {
                return WorkEnd::Finish(Terminal::Cancelled, Some("cancelled".to_owned()));
            }
            let input = match outcome {
                Err(_) => {
                    tracing::error!(task = %record.id, "the handler panicked");
                    return WorkEnd::failed(ErrorObject::new(
                        INTERNAL_ERROR,
                        "Internal error: the handler failed",
                    ));
                }
                Ok(Outcome::Result(raw)) => {
                    let deco = Decoration {
                        server_info: None,
                        ttl_ms: shared.config.result_ttl_ms,
                        scope: shared.config.result_cache_scope,
                    };
                    return match result::complete(&raw, &request.method, &deco) {
                        Ok(r) => WorkEnd::Finish(Terminal::Completed(r), None),
                        Err(e) => WorkEnd::failed(ErrorObject::internal(e)),
                    };
                }
                Ok(Outcome::Error(e)) => return WorkEnd::failed(reply::wire_error(e)),
                Ok(Outcome::InputRequired(input)) => input,
            };
            match mrtr::missing_capabilities(&input.requests, &capabilities) {
                Err(e) => return WorkEnd::failed(ErrorObject::internal(e)),
                Ok(Some(missing)) => {
                    return WorkEnd::failed(
                        ErrorObject::new(
                            MISSING_REQUIRED_CLIENT_CAPABILITY,
                            format!("Missing required client capability: the task needs {missing}, which the creating request did not declare"),
                        )
                        .with_data(&serde_json::json!({ "requiredCapabilities": missing })),
                    );
                }
                Ok(None) => {}
            }
            let answers = rounds.exchange(&input, |r| publish(shared, r)).await;
            let answers = match answers {
                Ok(a) => a,
                Err(InputEnd::Fail(e)) => return WorkEnd::failed(e),
                Err(InputEnd::Ended) => return WorkEnd::Already,
            };
            cx.set_input(Some(answers), input.state);
        }
    }
}
