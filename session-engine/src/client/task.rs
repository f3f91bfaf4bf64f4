//! Following a task the server made of a request (the experimental tasks
//! of the session revisions that define them, SEP-1686).
//!
//! A request the caller sent with `params.task` may be answered with a
//! `CreateTaskResult` (`{"task": {"taskId": …, "status": …}}`) instead of
//! its result. The stream does not end there: it yields the task as a
//! `notifications/tasks/status` event (the shape the server's own status
//! notifications have, so a caller records the `taskId` from either), then
//! sends `tasks/result`, which "MUST block the response until the task
//! reaches a terminal status" — an ordinary request, so its SSE stream is
//! resumed across SEP-1699 cuts and the input requests on it are answered
//! through the input handler — and ends with its answer, under the original
//! request's id. A `tasks/result` that breaks (timeout, resumption given
//! up) is sent again, up to [`MAX_BROKEN`] times in a row.
//!
//! A `tasks/get` or `tasks/result` POST that gets no answer at all — the
//! connection cut while it was sent or before the status line came back,
//! or the server briefly unavailable (HTTP 408, 429, 5xx) — is sent again
//! too, after the reconnection backoff and within the client's resumption
//! budget (`ClientConfig::max_resume_attempts` and `max_resume_time`, the
//! bounds a broken stream's reconnections have): the task lives on the
//! server whatever happens to one of its polls (2025-11-25 *Tasks*,
//! "Task Polling" and "Result Retrieval": the requestor polls, and
//! `tasks/result` may be retried; *Transports*, "Sending Messages to the
//! Server" 6: "Disconnection SHOULD NOT be interpreted as the client
//! cancelling its request"). Only when the budget is spent does the stream
//! end with `ResumeFailed`, naming the last failure.
//!
//! Dropping the stream before the end cancels the task with `tasks/cancel`
//! (the request itself has already been answered), unless the caller
//! [detached](mcp_transport_core::transport::ResponseStream::detach_task)
//! it. [`LegacyClient::resume_task`](super::LegacyClient::resume_task)
//! follows a task by id: `tasks/get` first (its status as the first
//! event), then the same.

use std::sync::Arc;

use futures_util::stream;
use mcp_transport_core::jsonrpc::{Notification, RequestId, Response, to_raw};
use mcp_transport_core::transport::{
    RequestOptions, ResponseStream, StreamEvent, TaskLink, TransportError,
};
use serde_json::Value;

use super::request;
use super::resume::Resumer;
use super::shared::Shared;
use super::sse_reader::End;

/// `tasks/result` attempts in a row that may break before the stream ends
/// with the error.
pub(crate) const MAX_BROKEN: u32 = 3;

/// Whether request params carry a task augmentation (`params.task`).
pub(crate) fn augmented(params: Option<&serde_json::value::RawValue>) -> bool {
    params
        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
        .is_some_and(|p| p.get("task").is_some_and(Value::is_object))
}

/// The task of a `CreateTaskResult`, if the response is one.
fn created_task(response: &Response) -> Option<Value> {
    let raw = response.payload.as_ref().ok()?;
    let v: Value = serde_json::from_str(raw.get()).ok()?;
    let task = v.get("task")?;
    task.get("taskId")?.as_str()?;
    Some(task.clone())
}

fn status_event(task: &Value) -> StreamEvent {
    StreamEvent::Notification(Notification {
        method: "notifications/tasks/status".into(),
        params: to_raw(task).ok(),
    })
}

enum Phase {
    /// Reading the creating request's stream.
    Creating(ResponseStream),
    /// `tasks/get` (resume by id), then `Waiting`.
    Get,
    /// `tasks/result` to send.
    Waiting,
    /// Reading `tasks/result`.
    Result(ResponseStream),
    Done,
}

struct Follow {
    shared: Arc<Shared>,
    phase: Phase,
    link: TaskLink,
    /// The id the final response carries (the creating request's).
    id: Option<RequestId>,
    task_id: Option<String>,
    timeout: Option<std::time::Duration>,
    broken: u32,
    /// The budget for `tasks/get` and `tasks/result` POSTs that got no
    /// answer (see the module documentation).
    resend: Resumer,
}

/// Follows the creating request's stream, and the task if it became one.
pub(crate) fn follow(
    shared: Arc<Shared>,
    first: ResponseStream,
    options: &RequestOptions,
) -> ResponseStream {
    let link = TaskLink::new();
    start(Follow {
        phase: Phase::Creating(first),
        link: link.clone(),
        id: None,
        task_id: None,
        timeout: options.timeout,
        broken: 0,
        resend: Resumer::new(&shared.config),
        shared,
    })
    .with_task_link(link)
}

/// Follows the existing task `task_id`.
pub(crate) fn resume(shared: Arc<Shared>, task_id: &str) -> ResponseStream {
    let link = TaskLink::new();
    link.set_id(task_id);
    start(Follow {
        phase: Phase::Get,
        link: link.clone(),
        id: None,
        task_id: Some(task_id.to_owned()),
        timeout: None,
        broken: 0,
        resend: Resumer::new(&shared.config),
        shared,
    })
    .with_task_link(link)
}

fn start(f: Follow) -> ResponseStream {
    ResponseStream::new(stream::unfold(f, |mut f| async move {
        let item = f.next().await?;
        Some((item, f))
    }))
}

impl Follow {
    fn params(&self) -> Option<Box<serde_json::value::RawValue>> {
        to_raw(&serde_json::json!({ "taskId": self.task_id })).ok()
    }

    fn options(&self) -> RequestOptions {
        RequestOptions {
            timeout: self.timeout,
            ..RequestOptions::default()
        }
    }

    /// A `method` POST got no answer (`error`): waits the backoff when the
    /// failure is transient and the budget allows another attempt (the
    /// caller then sends it again), else returns the error to end with.
    async fn unanswered(
        &mut self,
        method: &str,
        error: TransportError,
    ) -> Result<(), TransportError> {
        if !transient(&error) {
            return Err(error);
        }
        let what = format!(
            "{method} of task {}",
            self.task_id.as_deref().unwrap_or("?")
        );
        let wait = self.resend.next_wait(
            tokio::time::Instant::now(),
            None,
            &what,
            &End::Broken(error.to_string()),
        )?;
        tracing::debug!(task = ?self.task_id, %error, ?wait, "{method} got no answer; sending it again");
        tokio::select! {
            () = tokio::time::sleep(wait) => Ok(()),
            () = self.shared.closed.cancelled() => Err(TransportError::Closed),
        }
    }

    fn end(&mut self, payload: Response) -> StreamEvent {
        self.phase = Phase::Done;
        StreamEvent::Response(Response {
            id: self.id.clone().or(payload.id),
            payload: payload.payload,
        })
    }

    async fn next(&mut self) -> Option<Result<StreamEvent, TransportError>> {
        loop {
            match &mut self.phase {
                Phase::Done => return None,
                Phase::Creating(s) => {
                    let item = futures_util::StreamExt::next(s).await;
                    match item {
                        Some(Ok(StreamEvent::Response(r))) => {
                            let Some(task) = created_task(&r) else {
                                self.phase = Phase::Done;
                                return Some(Ok(StreamEvent::Response(r)));
                            };
                            let id = task["taskId"].as_str().unwrap_or_default().to_owned();
                            self.link.set_id(&id);
                            self.task_id = Some(id);
                            self.id = r.id;
                            self.phase = Phase::Waiting;
                            return Some(Ok(status_event(&task)));
                        }
                        None => {
                            self.phase = Phase::Done;
                            return None;
                        }
                        Some(Err(e)) => {
                            self.phase = Phase::Done;
                            return Some(Err(e));
                        }
                        other => return other,
                    }
                }
                Phase::Get => {
                    let params = self.params();
                    let got = match request::start(
                        self.shared.clone(),
                        "tasks/get",
                        params,
                        self.options(),
                    )
                    .await
                    {
                        Ok(s) => s.response().await,
                        Err(e) => Err(e),
                    };
                    if got.is_ok() {
                        self.resend.progress();
                    }
                    match got {
                        Ok(r) => match &r.payload {
                            Ok(raw) => {
                                let task: Value =
                                    serde_json::from_str(raw.get()).unwrap_or_default();
                                self.phase = Phase::Waiting;
                                return Some(Ok(status_event(&task)));
                            }
                            Err(_) => return Some(Ok(self.end(r))),
                        },
                        Err(e) => {
                            if let Err(e) = self.unanswered("tasks/get", e).await {
                                self.phase = Phase::Done;
                                return Some(Err(e));
                            }
                        }
                    }
                }
                Phase::Waiting => {
                    let params = self.params();
                    match request::start(
                        self.shared.clone(),
                        "tasks/result",
                        params,
                        self.options(),
                    )
                    .await
                    {
                        Ok(s) => {
                            self.resend.progress();
                            self.phase = Phase::Result(s);
                        }
                        Err(e) => {
                            if let Err(e) = self.unanswered("tasks/result", e).await {
                                self.phase = Phase::Done;
                                return Some(Err(e));
                            }
                        }
                    }
                }
                Phase::Result(s) => {
                    let item = futures_util::StreamExt::next(s).await;
                    match item {
                        Some(Ok(StreamEvent::Response(r))) => return Some(Ok(self.end(r))),
                        Some(Ok(ev)) => {
                            self.broken = 0;
                            return Some(Ok(ev));
                        }
                        Some(Err(
                            e @ (TransportError::Closed | TransportError::SessionExpired { .. }),
                        )) => {
                            self.phase = Phase::Done;
                            return Some(Err(e));
                        }
                        Some(Err(e)) => {
                            self.broken += 1;
                            if self.broken >= MAX_BROKEN {
                                self.phase = Phase::Done;
                                return Some(Err(e));
                            }
                            tracing::debug!(task = ?self.task_id, error = %e, "tasks/result broke; sending it again");
                            self.phase = Phase::Waiting;
                        }
                        None => {
                            self.broken += 1;
                            self.phase = if self.broken >= MAX_BROKEN {
                                Phase::Done
                            } else {
                                Phase::Waiting
                            };
                        }
                    }
                }
            }
        }
    }
}

/// Whether a poll that failed with `error` may be sent again: the network
/// failed, or the server (or a proxy in front of it) was briefly
/// unavailable. Not a timeout (the caller's deadline), a lost session (its
/// tasks are gone with it) or anything the server said about the request.
fn transient(error: &TransportError) -> bool {
    match error {
        TransportError::Connection(_) => true,
        TransportError::Http { status, .. } => matches!(status, 408 | 429 | 500..=599),
        _ => false,
    }
}

/// Dropping the stream while the task runs cancels it (`tasks/cancel`, in
/// the background when a runtime is there), unless it was detached.
impl Drop for Follow {
    fn drop(&mut self) {
        if !matches!(self.phase, Phase::Waiting | Phase::Result(_) | Phase::Get) {
            return;
        }
        if self.link.is_detached() || self.shared.closed.is_cancelled() {
            return;
        }
        let Some(id) = self.task_id.clone() else {
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let shared = self.shared.clone();
        let params = self.params();
        rt.spawn(async move {
            let outcome = match request::start(
                shared,
                "tasks/cancel",
                params,
                RequestOptions::default(),
            )
            .await
            {
                Ok(s) => s.response().await,
                Err(e) => Err(e),
            };
            match outcome {
                Ok(r) if r.payload.is_ok() => {}
                Ok(r) => tracing::debug!(task = %id, answer = ?r.payload, "tasks/cancel after the response was dropped was refused"),
                Err(e) => tracing::debug!(task = %id, error = %e, "tasks/cancel after the response was dropped failed"),
            }
        });
    }
}
