//! Where one request's messages go: the [`RequestSink`] of a request.
//!
//! A request's outlet starts with no stream. A related message (progress,
//! log, a server-to-client request) opens one, which then carries the
//! answer. Otherwise the final response goes back to the POST
//! ([`Answer::Json`]), which sends it as `application/json` in
//! `json_response` mode, or else (the default, SSE) opens the stream with
//! the answer already in it, in one store call. An SSE request still
//! running after its first poll has its stream opened by the POST
//! ([`Outlet::open_now`]). The eager alternative, a stream opened before the
//! handler runs, cost a quick answer two more store calls and a lease
//! (docs/PERFORMANCE.md, session 31).
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

/// What the POST handler answers with.
pub(crate) enum Answer {
    /// The response, before any stream was opened (`application/json` in
    /// `json_response` mode; otherwise the answer of a stream opened with it).
    Json(Response),
    /// The stream opened for related messages, its priming id, and the
    /// generation of the POST's connection, attached as it opened; answer
    /// with SSE.
    Stream(Arc<StreamState>, EventId, u64),
    /// Cancelled before anything was sent: nothing to answer with.
    Nothing,
}

/// The sink of one request.
pub(crate) struct Outlet {
    shared: Arc<Shared>,
    session: Arc<Session>,
    cancel: CancellationToken,
    stream: OnceLock<Arc<StreamState>>,
    /// Serialises opening the stream late with the response (every
    /// outlet's stream opens late). In place, not boxed: every request
    /// has one (two allocations a request fewer than boxed).
    open_lock: tokio::sync::Mutex<()>,
    done: AtomicBool,
    /// The handler asked to close the stream's connection
    /// (`close_sse_stream`) before the stream was opened: asked of the
    /// stream as it opens (an SSE request whose stream opens late, after
    /// the handler's first poll: `request::serve`).
    close_pending: AtomicBool,
    /// The batch this request belongs to: its stream and its answer are
    /// the group's.
    group: Option<Arc<Group>>,
    /// What a single request's outlet has besides (a batch's request has
    /// its group instead).
    json: Option<JsonMode>,
}

/// What a single request's outlet has besides.
struct JsonMode {
    /// Where the POST handler waits for the answer.
    answer: Mutex<Option<oneshot::Sender<Answer>>>,
    /// The request whose stream this outlet opens late: the stream's lease
    /// names it (`lease`).
    request: RequestId,
}

impl Outlet {
    /// An outlet for request `id`, its stream opened late; the POST
    /// handler waits on the returned receiver.
    pub fn json(
        shared: &Arc<Shared>,
        session: &Arc<Session>,
        cancel: CancellationToken,
        id: RequestId,
    ) -> (Arc<Self>, oneshot::Receiver<Answer>) {
        let (tx, rx) = oneshot::channel();
        let mut o = Self::new(shared, session, cancel);
        o.json = Some(JsonMode {
            answer: Mutex::new(Some(tx)),
            request: id,
        });
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
        o.group = Some(group);
        Arc::new(o)
    }

    fn new(shared: &Arc<Shared>, session: &Arc<Session>, cancel: CancellationToken) -> Self {
        Outlet {
            shared: shared.clone(),
            session: session.clone(),
            cancel,
            stream: OnceLock::new(),
            open_lock: tokio::sync::Mutex::new(()),
            done: AtomicBool::new(false),
            close_pending: AtomicBool::new(false),
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
    async fn lock_opening(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.open_lock.lock().await
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
        // The POST's connection is attached before anything is appended:
        // the producer then waits for it (`stream_queue`), so live
        // delivery never outruns the log's retention.
        let answer = self.take_answer();
        let generation = answer.as_ref().map(|_| state.attach(0));
        let _ = self.stream.set(state.clone());
        if self.close_pending() {
            state.request_close();
        }
        if let (Some(tx), Some(generation)) = (answer, generation)
            && tx
                .send(Answer::Stream(state.clone(), priming, generation))
                .is_err()
        {
            // The POST is gone: nobody will read this connection.
            state.detach(generation);
        }
        Ok(state)
    }

    /// Opens the stream now (switching the answer to SSE) unless it is
    /// open, or the request has answered or been cancelled first: for an
    /// SSE request still running after its first poll, whose priming event
    /// must not wait for the handler (`request::serve`). A failure to open
    /// it (the event store out of reach) leaves the answer to come as
    /// JSON.
    pub async fn open_now(&self) {
        if let Err(SendError::Queue(e)) = self.ensure_stream().await {
            tracing::warn!(session = %self.session.id, error = %e, "cannot open a stream for a running request; its answer will come as JSON");
        }
    }

    /// Whether the handler asked to close the stream's connection before
    /// the stream opened (see `close_pending`).
    pub fn close_pending(&self) -> bool {
        self.close_pending.load(Ordering::SeqCst)
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
        // Also asked of the stream when it opens, if it has not yet
        // (`ensure_stream`, or the stream of an answer given at once:
        // `request::serve`).
        self.close_pending.store(true, Ordering::SeqCst);
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
