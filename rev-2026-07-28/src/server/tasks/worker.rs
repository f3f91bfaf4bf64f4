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
use mcp_transport_core::handler::{
    ClientDescription, LogLevel, Outcome, RequestContext, RequestSink, SendError,
};
use mcp_transport_core::jsonrpc::{
    ErrorObject, INTERNAL_ERROR, MISSING_REQUIRED_CLIENT_CAPABILITY, Notification, to_raw,
};
use mcp_transport_core::task_store::{
    InputEnd, InputRounds, TaskInput, TaskRecord, TaskStore, TaskStoreError, Terminal,
    follow_store, liveness,
};
use serde_json::Value;

use super::super::Shared;
use super::super::mrtr::{self, now_ms};
use super::super::reply;
use super::super::request::{Busy, Prepared};
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

/// How the run ended.
enum End {
    /// End the task so.
    Finish(Terminal, Option<String>),
    /// The task already ended (cancelled by the client) or is gone.
    Already,
}

fn failed(error: ErrorObject) -> End {
    let message = error.message.clone();
    match to_raw(&error) {
        Ok(raw) => End::Finish(Terminal::Failed(raw), Some(message)),
        Err(_) => End::Already,
    }
}

/// Runs the task to its end (spawned by [`super::start`]).
pub(super) async fn run(
    shared: Arc<Shared>,
    prepared: Prepared,
    record: TaskRecord,
    running: Running,
) {
    let _busy = Busy::enter(&shared);
    let Some(tasks) = shared.tasks.as_ref() else {
        return;
    };
    let store = tasks.config.store.clone();
    let id = record.id.clone();
    let until_expiry = record
        .expires_at_ms()
        .map(|at| Duration::from_millis(at.saturating_sub(now_ms())));
    let work = drive(&shared, prepared, &record, &running);
    // Another instance may cancel the task or deliver its input through
    // the shared store: `follow_store` follows it (with or without leases).
    // With leases, the lease is renewed beside the work, which stops when
    // the lease was taken over (this instance was taken for dead).
    let follow_task = TaskInput {
        store: store.clone(),
        id: id.clone(),
        scope: record.scope.clone(),
        max_rounds: 0,
        wake: running.wake.clone(),
        cancel: running.cancel.clone(),
    };
    let tick = Duration::from_millis(tasks.config.poll_interval_ms.max(10));
    let leases = tasks.config.leases.clone();
    let watched = async {
        let mut work = std::pin::pin!(work);
        // Self-test fault `IgnoreTaskCancel`: the work is never told of a
        // cancel, not even through the store.
        let ignore_cancel = shared
            .config
            .http
            .faults
            .has(mcp_http_edge::faults::Fault::IgnoreTaskCancel);
        let follow = async {
            if ignore_cancel {
                std::future::pending().await
            } else {
                follow_store(&follow_task, || tokio::time::sleep(tick)).await
            }
        };
        let lease_lost = async {
            match &leases {
                Some(l) => liveness::watch_worker(l, &id, tokio::time::sleep).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            end = &mut work => end,
            () = follow => work.await,
            () = lease_lost => {
                tracing::debug!(task = %id, "the task's lease was taken over; its handler is cancelled");
                running.cancel.cancel();
                let _ = work.await;
                End::Already
            }
        }
    };
    let end = match until_expiry {
        Some(left) => match tokio::time::timeout(left, watched).await {
            Ok(end) => end,
            Err(_) => {
                tracing::debug!(task = %id, "task expired while running; its handler is cancelled");
                End::Already
            }
        },
        None => watched.await,
    };
    running.cancel.cancel();
    if let End::Finish(terminal, message) = end {
        match store.finish(&id, terminal, message, now_ms()).await {
            Ok(r) => publish(&shared, &r),
            Err(TaskStoreError::Terminal { status, .. }) => {
                tracing::debug!(task = %id, %status, "the task had already ended; its outcome is dropped");
            }
            Err(TaskStoreError::TooLarge { size, max }) => {
                let e = ErrorObject::internal(format!(
                    "the task's result of {size} bytes exceeds the task store's limit of {max}"
                ));
                if let End::Finish(t, m) = failed(e)
                    && let Ok(r) = store.finish(&id, t, m, now_ms()).await
                {
                    publish(&shared, &r);
                }
            }
            Err(e) => tracing::warn!(task = %id, error = %e, "could not record the task's end"),
        }
    }
    if let Some(l) = &leases {
        liveness::end_worker_lease(l, &id).await;
    }
    tasks.lock().remove(&id);
}

/// The handler loop (see the module docs).
async fn drive(
    shared: &Arc<Shared>,
    prepared: Prepared,
    record: &TaskRecord,
    running: &Running,
) -> End {
    let Some(tasks) = shared.tasks.as_ref() else {
        return End::Already;
    };
    let store = tasks.config.store.clone();
    let Prepared {
        request,
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
    cx.input_responses = input_responses;
    cx.request_state = opened.and_then(|o| o.state);
    cx.task_id = Some(record.id.clone());
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
            return End::Finish(Terminal::Cancelled, Some("cancelled".to_owned()));
        }
        let input = match outcome {
            Err(_) => {
                tracing::error!(task = %record.id, "the handler panicked");
                return failed(ErrorObject::new(
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
                    Ok(r) => End::Finish(Terminal::Completed(r), None),
                    Err(e) => failed(ErrorObject::internal(e)),
                };
            }
            Ok(Outcome::Error(e)) => return failed(reply::wire_error(e)),
            Ok(Outcome::InputRequired(input)) => input,
        };
        match mrtr::missing_capabilities(&input.requests, &capabilities) {
            Err(e) => return failed(ErrorObject::internal(e)),
            Ok(Some(missing)) => {
                return failed(
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
            Err(InputEnd::Fail(e)) => return failed(e),
            Err(InputEnd::Ended) => return End::Already,
        };
        cx.input_responses = Some(answers);
        cx.request_state = input.state;
    }
}
