//! Where one request's messages go: the [`RequestSink`] of a request.
//!
//! An outlet starts either with an SSE stream already open (the default:
//! every request is answered with SSE) or, in `json_response` mode, with no
//! stream: then the final response goes back as `application/json`, unless
//! a related message (progress, log, a server-to-client request) comes
//! first, which opens the stream and switches the answer to SSE.
//!
//! After the response (or a cancellation) nothing more is sent.
//!
//! The requests of one JSON-RPC batch (2025-03-26) share one answer: their
//! outlets belong to a [`Group`], which owns the batch's one stream (or, in
//! `json_response` mode, collects the responses until the last one, or
//! opens the stream when a related message comes first) and ends it after
//! the last request has its response.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use bytes::Bytes;
use mcp_transport_core::admission::Admission;
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::event_id::EventId;
use mcp_transport_core::event_log::StoreError;
use mcp_transport_core::handler::{LogLevel, RequestSink, SendError};
use mcp_transport_core::jsonrpc::{Message, Notification, RequestId, Response};
use tokio::sync::oneshot;

use super::Shared;
use super::group::Group;
use super::open::open_request_stream;
use super::session::{Session, lock};
use super::stream::StreamState;

/// What the POST handler answers with, in `json_response` mode.
pub(crate) enum Answer {
    /// The response, as `application/json`.
    Json(Response),
    /// The stream opened for related messages; answer with SSE.
    Stream(Arc<StreamState>, EventId),
    /// Cancelled before anything was sent: nothing to answer with.
    Nothing,
}

/// The sink of one request.
pub(crate) struct Outlet {
    shared: Arc<Shared>,
    session: Arc<Session>,
    cancel: CancellationToken,
    stream: OnceLock<Arc<StreamState>>,
    /// Serialises opening the stream late with the response, for an outlet
    /// whose stream may open late (`json_response` mode, a batch's
    /// request); `None` when the stream is open from the start (every SSE
    /// request, pending ones between SEP-1699 polls among them): then only
    /// the request's task answers, once, and nothing opens a stream. Boxed
    /// for the same reason as `json`.
    open_lock: Option<Box<tokio::sync::Mutex<()>>>,
    done: AtomicBool,
    /// The batch this request belongs to: its stream and its answer are
    /// the group's.
    group: Option<Arc<Group>>,
    /// `json_response` mode only, so boxed: an outlet with its stream open
    /// from the start (every SSE request, pending ones between SEP-1699
    /// polls among them) does without it.
    json: Option<Box<JsonMode>>,
}

/// What an outlet in `json_response` mode has besides.
struct JsonMode {
    /// Where the POST handler waits for the answer.
    answer: Mutex<Option<oneshot::Sender<Answer>>>,
    /// The request whose stream this outlet opens late: the stream's lease
    /// names it (`lease`).
    request: RequestId,
}

impl Outlet {
    /// An outlet whose SSE stream is already open.
    pub fn with_stream(
        shared: &Arc<Shared>,
        session: &Arc<Session>,
        cancel: CancellationToken,
        stream: Arc<StreamState>,
    ) -> Arc<Self> {
        let o = Self::new(shared, session, cancel);
        let _ = o.stream.set(stream);
        Arc::new(o)
    }

    /// An outlet in `json_response` mode for request `id`; the POST
    /// handler waits on the returned receiver.
    pub fn json(
        shared: &Arc<Shared>,
        session: &Arc<Session>,
        cancel: CancellationToken,
        id: RequestId,
    ) -> (Arc<Self>, oneshot::Receiver<Answer>) {
        let (tx, rx) = oneshot::channel();
        let mut o = Self::new(shared, session, cancel);
        o.open_lock = Some(Box::default());
        o.json = Some(Box::new(JsonMode {
            answer: Mutex::new(Some(tx)),
            request: id,
        }));
        (Arc::new(o), rx)
    }

    /// An outlet of one request of a batch: related messages go to the
    /// group's stream (opening it if needed), the response to the group.
    pub fn in_group(
        shared: &Arc<Shared>,
        session: &Arc<Session>,
        cancel: CancellationToken,
        group: Arc<Group>,
    ) -> Arc<Self> {
        let mut o = Self::new(shared, session, cancel);
        o.open_lock = Some(Box::default());
        o.group = Some(group);
        Arc::new(o)
    }

    fn new(shared: &Arc<Shared>, session: &Arc<Session>, cancel: CancellationToken) -> Self {
        Outlet {
            shared: shared.clone(),
            session: session.clone(),
            cancel,
            stream: OnceLock::new(),
            open_lock: None,
            done: AtomicBool::new(false),
            group: None,
            json: None,
        }
    }

    /// The POST handler's channel for the answer (`json_response` mode),
    /// taken once.
    fn take_answer(&self) -> Option<oneshot::Sender<Answer>> {
        lock(&self.json.as_ref()?.answer).take()
    }

    /// Holds off opening the stream late (see `open_lock`).
    async fn lock_opening(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match &self.open_lock {
            Some(lock) => Some(lock.lock().await),
            None => None,
        }
    }

    /// The stream, opening it (and switching the answer to SSE) if needed.
    async fn ensure_stream(&self) -> Result<Arc<StreamState>, SendError> {
        if let Some(s) = self.stream.get() {
            return Ok(s.clone());
        }
        let _guard = self.lock_opening().await;
        if let Some(s) = self.stream.get() {
            return Ok(s.clone());
        }
        if self.done.load(Ordering::Acquire) {
            return Err(SendError::Finished);
        }
        if let Some(group) = &self.group {
            let state = group.stream().await?;
            let _ = self.stream.set(state.clone());
            return Ok(state);
        }
        let (state, priming) = open_request_stream(&self.shared, &self.session)
            .await
            .map_err(|e| SendError::Queue(e.to_string()))?;
        if let Some(json) = &self.json {
            super::lease::hold_stream(
                &self.shared,
                &self.session,
                &state,
                std::slice::from_ref(&json.request),
            )
            .await;
        }
        let _ = self.stream.set(state.clone());
        if let Some(tx) = self.take_answer() {
            let _ = tx.send(Answer::Stream(state.clone(), priming));
        }
        Ok(state)
    }

    /// Sends one message related to the request (waits for room first).
    pub async fn push(&self, message: &Message) -> Result<(), SendError> {
        if self.done.load(Ordering::Acquire) || self.cancel.is_cancelled() {
            return Err(SendError::Finished);
        }
        let stream = self.ensure_stream().await?;
        tokio::select! {
            () = stream.wait_for_room(self.shared.config.stream_queue, self.shared.config.sse_write_timeout) => {}
            () = self.cancel.cancelled() => return Err(SendError::Finished),
            () = self.session.shutdown.cancelled() => return Err(SendError::Finished),
        }
        if self.done.load(Ordering::Acquire) || self.cancel.is_cancelled() {
            return Err(SendError::Finished);
        }
        stream
            .append(
                self.shared.config.event_store.as_ref(),
                &self.session.tag,
                Bytes::from(message.to_json()),
            )
            .await
            .map(|_| ())
            .map_err(|e| match e {
                StoreError::StreamFinished { .. }
                | StoreError::UnknownSession { .. }
                | StoreError::UnknownStream { .. } => SendError::Finished,
                other => SendError::Queue(other.to_string()),
            })
    }

    /// Sends the final response and ends the stream. Does nothing after a
    /// cancellation: a cancelled request gets no response.
    pub async fn respond(&self, response: Response) {
        if self.cancel.is_cancelled() {
            return self.abandon().await;
        }
        let _guard = self.lock_opening().await;
        if self.done.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(group) = &self.group {
            return group.respond(response).await;
        }
        match self.stream.get() {
            Some(stream) => {
                let store = self.shared.config.event_store.as_ref();
                let json = Bytes::from(Message::Response(response).to_json());
                if let Err(e) = stream.append_final(store, &self.session.tag, json).await {
                    // The event store is out of reach (Redis down): the
                    // attached connection still delivers it, without an id.
                    tracing::warn!(session = %self.session.id, error = %e, "could not log a response; delivering it directly");
                }
                self.session.reap(stream);
            }
            None => {
                if let Some(tx) = self.take_answer() {
                    let _ = tx.send(Answer::Json(response));
                }
            }
        }
    }

    /// Ends the stream without a response (the request was cancelled or
    /// the session ended).
    pub async fn abandon(&self) {
        let _guard = self.lock_opening().await;
        if self.done.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(group) = &self.group {
            return group.abandon().await;
        }
        match self.stream.get() {
            Some(stream) => {
                stream
                    .finish(self.shared.config.event_store.as_ref(), &self.session.tag)
                    .await;
                self.session.reap(stream);
            }
            None => {
                if let Some(tx) = self.take_answer() {
                    let _ = tx.send(Answer::Nothing);
                }
            }
        }
    }
}

#[async_trait]
impl RequestSink for Outlet {
    async fn send(&self, notification: Notification) -> Result<(), SendError> {
        self.push(&Message::Notification(notification)).await
    }

    /// The server's bound on running work: work the handler starts that
    /// outlives the request (a 2025-11-25 task's worker) takes a place in
    /// it.
    fn admission(&self) -> Option<&Arc<Admission>> {
        Some(&self.shared.admission)
    }

    /// SEP-1699 (2025-11-25): closes the current connection of this
    /// request's stream after a `retry`; the request goes on and its events
    /// wait in the log for the client's resume. `false` on sessions without
    /// SEP-1699 polling, where nothing happens.
    fn close_sse_stream(&self) -> bool {
        if self.session.revision.polling().is_none() {
            return false;
        }
        if let Some(s) = self.stream.get() {
            s.request_close();
        }
        true
    }

    /// The level from `logging/setLevel`, `Debug` until the client sets one.
    fn log_level(&self) -> Option<LogLevel> {
        Some(self.session.log_level())
    }
}
