//! The requests of one JSON-RPC batch (2025-03-26) as a group: their one
//! SSE stream, or in `json_response` mode their collected responses until a
//! related message makes the answer a stream. Used by `batch` (which forms
//! groups) and `outlet` (whose sinks report to their group).

use std::sync::Arc;

use bytes::Bytes;
use mcp_transport_core::event_id::EventId;
use mcp_transport_core::handler::SendError;
use mcp_transport_core::jsonrpc::{Message, RequestId, Response};
use tokio::sync::{Mutex, oneshot};

use super::Shared;
use super::open::open_request_stream;
use super::session::Session;
use super::stream::StreamState;

/// What a batch in `json_response` mode is answered with.
pub(crate) enum GroupAnswer {
    /// Every response, as one JSON array (empty when all were cancelled).
    Json(Vec<Response>),
    /// The stream opened for a related message; answer with SSE.
    Stream(Arc<StreamState>, EventId),
}

/// The requests of one batch: their shared stream, or (in `json_response`
/// mode, until a related message comes) their collected responses, and how
/// many still owe a response.
pub(crate) struct Group {
    shared: Arc<Shared>,
    session: Arc<Session>,
    /// The ids of the batch's handler requests: the data of the lease a
    /// stream opened late is held with (`lease::hold_stream`).
    ids: Vec<RequestId>,
    state: Mutex<GroupState>,
}

struct GroupState {
    /// The batch's stream, once open.
    stream: Option<Arc<StreamState>>,
    /// Responses ready while no stream is open.
    collected: Vec<Response>,
    /// Requests not yet answered (or abandoned).
    remaining: usize,
    /// Where the `json_response` answer goes.
    answer: Option<oneshot::Sender<GroupAnswer>>,
}

impl Group {
    /// A group of the requests `ids` answering on `stream` (already open,
    /// and leased by the caller).
    pub(crate) fn streaming(
        shared: &Arc<Shared>,
        session: &Arc<Session>,
        ids: Vec<RequestId>,
        stream: Arc<StreamState>,
    ) -> Arc<Self> {
        Arc::new(Group {
            shared: shared.clone(),
            session: session.clone(),
            state: Mutex::new(GroupState {
                stream: Some(stream),
                collected: Vec::new(),
                remaining: ids.len(),
                answer: None,
            }),
            ids,
        })
    }

    /// A group of the requests `ids` collecting responses (starting with
    /// `answers`) for one JSON answer; the POST waits on the receiver.
    pub(crate) fn collecting(
        shared: &Arc<Shared>,
        session: &Arc<Session>,
        ids: Vec<RequestId>,
        answers: Vec<Response>,
    ) -> (Arc<Self>, oneshot::Receiver<GroupAnswer>) {
        let (tx, rx) = oneshot::channel();
        let group = Arc::new(Group {
            shared: shared.clone(),
            session: session.clone(),
            state: Mutex::new(GroupState {
                stream: None,
                collected: answers,
                remaining: ids.len(),
                answer: Some(tx),
            }),
            ids,
        });
        (group, rx)
    }

    /// The batch's stream, opening it (with the responses collected so far
    /// as its first events, and switching the answer to SSE) if needed.
    pub(crate) async fn stream(&self) -> Result<Arc<StreamState>, SendError> {
        let mut st = self.state.lock().await;
        if let Some(s) = &st.stream {
            return Ok(s.clone());
        }
        if st.remaining == 0 {
            return Err(SendError::Finished);
        }
        let (state, priming) = open_request_stream(&self.shared, &self.session)
            .await
            .map_err(|e| SendError::Queue(e.to_string()))?;
        super::lease::hold_stream(&self.shared, &self.session, &state, &self.ids).await;
        for response in std::mem::take(&mut st.collected) {
            self.append(&state, response).await;
        }
        st.stream = Some(state.clone());
        if let Some(tx) = st.answer.take() {
            let _ = tx.send(GroupAnswer::Stream(state.clone(), priming));
        }
        Ok(state)
    }

    /// One request's response; the stream ends (or the JSON answer goes
    /// out) after the last one.
    pub(crate) async fn respond(&self, response: Response) {
        let mut st = self.state.lock().await;
        match st.stream.clone() {
            Some(stream) => self.append(&stream, response).await,
            None => st.collected.push(response),
        }
        self.one_done(&mut st).await;
    }

    /// One request ends without a response (cancelled, or the session
    /// ended).
    pub(crate) async fn abandon(&self) {
        let mut st = self.state.lock().await;
        self.one_done(&mut st).await;
    }

    async fn one_done(&self, st: &mut GroupState) {
        st.remaining = st.remaining.saturating_sub(1);
        if st.remaining > 0 {
            return;
        }
        match st.stream.clone() {
            Some(stream) => {
                stream
                    .finish(self.shared.config.event_store.as_ref(), &self.session.tag)
                    .await;
                self.session.reap(&stream);
            }
            None => {
                if let Some(tx) = st.answer.take() {
                    let _ = tx.send(GroupAnswer::Json(std::mem::take(&mut st.collected)));
                }
            }
        }
    }

    /// Appends one response to the batch's stream (its own event).
    pub(crate) async fn append(&self, stream: &StreamState, response: Response) {
        let json = Message::Response(response).to_json();
        if let Err(e) = stream
            .append(
                self.shared.config.event_store.as_ref(),
                &self.session.tag,
                Bytes::from(json),
            )
            .await
        {
            tracing::warn!(session = %self.session.id, error = %e, "could not log a response of a batch");
        }
    }
}
