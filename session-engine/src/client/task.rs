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
use super::shared::Shared;

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
}

/// Follows the creating request's stream, and the task if it became one.
pub(crate) fn follow(
    shared: Arc<Shared>,
    first: ResponseStream,
    options: &RequestOptions,
) -> ResponseStream {
    let link = TaskLink::new();
    start(Follow {
        shared,
        phase: Phase::Creating(first),
        link: link.clone(),
        id: None,
        task_id: None,
        timeout: options.timeout,
        broken: 0,
    })
    .with_task_link(link)
}

/// Follows the existing task `task_id`.
pub(crate) fn resume(shared: Arc<Shared>, task_id: &str) -> ResponseStream {
    let link = TaskLink::new();
    link.set_id(task_id);
    start(Follow {
        shared,
        phase: Phase::Get,
        link: link.clone(),
        id: None,
        task_id: Some(task_id.to_owned()),
        timeout: None,
        broken: 0,
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
                            self.phase = Phase::Done;
                            return Some(Err(e));
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
                        Ok(s) => self.phase = Phase::Result(s),
                        Err(e) => {
                            self.phase = Phase::Done;
                            return Some(Err(e));
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
