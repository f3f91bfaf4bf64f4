//! One request: registered with the reader, POSTed to the endpoint, and
//! read back as a [`ResponseStream`] of its progress notifications and then
//! its response (both arrive on the shared SSE stream).
//!
//! 2024-11-05 *Transports*, "HTTP with SSE": client messages are POSTed to
//! the endpoint and "Server messages are sent as SSE `message` events"; the
//! POST's own answer (202 in the common servers) carries nothing.

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream;
use mcp_transport_core::jsonrpc::{Message, Notification, Request, RequestId, Response, set_meta};
use mcp_transport_core::transport::{RequestOptions, ResponseStream, StreamEvent, TransportError};
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::shared::{Lifeline, Pending, Shared};
use mcp_http_edge::client::with_deadline;

/// Whether dropping the stream early sends `notifications/cancelled`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cancel {
    /// Yes (every request but `initialize`).
    OnDrop,
    /// No: 2024-11-05 *Cancellation*, "Behavior Requirements": "The
    /// `initialize` request MUST NOT be cancelled by clients".
    Never,
}

/// Sends a request and returns its stream.
///
/// The request is registered with the reader *before* the POST (its
/// response may come down the SSE stream before the POST is answered), and
/// the POST's status is checked before this returns. The overall deadline
/// (`options.timeout`, else `HttpSseConfig::request_timeout`) covers the
/// POST and the whole stream. With `options.progress`, the request's id is
/// attached as its `_meta.progressToken` (2024-11-05 *Progress*) and the
/// `notifications/progress` carrying it are yielded on this stream.
pub(crate) async fn start(
    shared: Arc<Shared>,
    lifeline: Arc<Lifeline>,
    method: &str,
    params: Option<Box<RawValue>>,
    options: RequestOptions,
    cancel: Cancel,
) -> Result<ResponseStream, TransportError> {
    shared.check_open()?;
    let id = shared.next_id();
    let params = if options.progress {
        let token = serde_json::to_value(&id).unwrap_or_default();
        Some(set_meta(params, "progressToken", token).map_err(|e| {
            TransportError::InvalidInput(format!("cannot attach a progress token: {e}"))
        })?)
    } else {
        params
    };
    let timeout = options.timeout.or(shared.config.http.request_timeout);
    let deadline = timeout.map(|t| Instant::now() + t);
    let (notes_tx, notes) = mpsc::channel(shared.config.channel_capacity);
    let (outcome_tx, outcome) = oneshot::channel();
    shared.register(
        id.clone(),
        Pending {
            notes: notes_tx,
            outcome: outcome_tx,
            progress: options.progress,
        },
    )?;
    // Armed from here: dropping the `request()` future after the POST may
    // have reached the server cancels the request too.
    let mut guard = Guard {
        shared: shared.clone(),
        id: id.clone(),
        armed: cancel == Cancel::OnDrop,
    };
    let what = format!("POST {method} (request {id}) to the HTTP+SSE endpoint");
    let message = Message::Request(Request {
        id: id.clone(),
        method: method.to_owned(),
        params,
    });
    if let Err(e) = with_deadline(deadline, timeout, shared.post(&message, &what)).await {
        match &e {
            // The server refused the message: nothing is in progress.
            TransportError::Http { .. } => guard.disarm(),
            other => guard.fire(&format!("the client stopped waiting: {other}")),
        }
        return Err(e);
    }
    let state = RequestStream {
        _lifeline: lifeline,
        shared,
        notes,
        notes_open: true,
        outcome,
        finished: None,
        guard,
        deadline,
        timeout,
        done: false,
    };
    Ok(ResponseStream::new(stream::unfold(
        state,
        |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        },
    )))
}

/// The state behind a [`ResponseStream`].
struct RequestStream {
    /// Keeps the connection open while the stream is held.
    _lifeline: Arc<Lifeline>,
    shared: Arc<Shared>,
    notes: mpsc::Receiver<Notification>,
    notes_open: bool,
    outcome: oneshot::Receiver<Result<Response, TransportError>>,
    /// The outcome, once it arrived, held back until the notifications
    /// delivered before it have been yielded.
    finished: Option<Result<Response, TransportError>>,
    guard: Guard,
    deadline: Option<Instant>,
    timeout: Option<Duration>,
    done: bool,
}

impl RequestStream {
    async fn next(&mut self) -> Option<Result<StreamEvent, TransportError>> {
        if self.done {
            return None;
        }
        if self.finished.is_none() {
            let waiting = async {
                loop {
                    tokio::select! {
                        biased;
                        note = self.notes.recv(), if self.notes_open => match note {
                            Some(n) => return Ok(Next::Note(n)),
                            None => self.notes_open = false,
                        },
                        outcome = &mut self.outcome => return Ok(Next::Outcome(outcome.ok())),
                    }
                }
            };
            match with_deadline(self.deadline, self.timeout, waiting).await {
                Ok(Next::Note(note)) => return Some(Ok(StreamEvent::Notification(note))),
                Ok(Next::Outcome(Some(outcome))) => self.finished = Some(outcome),
                // The sender is only dropped unused when the shared state
                // goes, which this stream keeps alive; be defensive anyway.
                Ok(Next::Outcome(None)) => {
                    self.finished = Some(Err(self.shared.end_reason().unwrap_or_else(|| {
                        TransportError::Connection("the response was lost".into())
                    })))
                }
                Err(e) => self.finished = Some(Err(e)),
            }
        }
        // The reader delivers a request's notifications before its response:
        // whatever is still queued came first.
        if let Ok(note) = self.notes.try_recv() {
            return Some(Ok(StreamEvent::Notification(note)));
        }
        self.done = true;
        let outcome = self.finished.take()?;
        match &outcome {
            Ok(_) => self.guard.disarm(),
            // *Lifecycle*, "Timeouts": the sender "SHOULD issue a
            // cancellation notification for that request and stop waiting".
            Err(e @ TransportError::Timeout(_)) => {
                self.guard.fire(&format!("the client stopped waiting: {e}"))
            }
            // The connection is over: there is nobody left to tell.
            Err(_) => self.guard.disarm(),
        }
        Some(outcome.map(StreamEvent::Response))
    }
}

/// What waiting on a request's stream produced.
enum Next {
    /// A progress notification.
    Note(Notification),
    /// The outcome (`None`: its sender vanished).
    Outcome(Option<Result<Response, TransportError>>),
}

/// Unregisters its request when dropped and, while armed, cancels it with
/// `notifications/cancelled` (2024-11-05 *Cancellation*: "either side can
/// send a cancellation notification to indicate that a previously-issued
/// request should be terminated").
struct Guard {
    shared: Arc<Shared>,
    id: RequestId,
    armed: bool,
}

impl Guard {
    /// No cancellation will be sent.
    fn disarm(&mut self) {
        self.armed = false;
    }

    /// Sends the cancellation now (once), fire-and-forget, with `reason`.
    fn fire(&mut self, reason: &str) {
        self.shared.unregister(&self.id);
        if !std::mem::replace(&mut self.armed, false) || self.shared.end_reason().is_some() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(id = %self.id, "no tokio runtime to send notifications/cancelled from");
            return;
        };
        let message = Message::Notification(Notification::cancelled(&self.id, reason));
        let shared = self.shared.clone();
        let id = self.id.clone();
        runtime.spawn(async move {
            let what = format!("POST notifications/cancelled for request {id}");
            if let Err(e) = shared.post(&message, &what).await {
                tracing::debug!(%id, error = %e, "notifications/cancelled was not accepted");
            }
        });
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.fire("the client dropped the request's response stream");
    }
}
