//! Sending a JSON-RPC batch and reading its answer (2025-03-26 only,
//! `Features::batches`).
//!
//! 2025-03-26 *Transports*, "Sending Messages to the Server" 3-6: the body
//! of a POST may be an array of requests and notifications; input with no
//! request is answered 202; input with requests is answered with one JSON
//! body or an SSE stream that "SHOULD eventually include one JSON-RPC
//! response per each JSON-RPC request", and "These responses MAY be
//! batched". So the answer is read as a JSON object, a JSON array, or an
//! SSE stream whose events each hold one message or an array of them, and
//! the responses are matched to the requests by id (JSON-RPC 2.0 §6: "The
//! Response objects being returned from a batch call MAY be returned in any
//! order"). A broken SSE connection is resumed by GET with `Last-Event-ID`
//! like any other stream (the `resume` module); related server requests
//! are answered through the input handler as they arrive.
//!
//! 2025-03-26 *Basic*, "Batching": implementations "MAY support sending
//! JSON-RPC batches, but MUST support receiving" them; later revisions have
//! no batches, and [`LegacyClient::batch`](super::LegacyClient::batch)
//! refuses with `TransportError::Unsupported` on their sessions.

use std::collections::HashMap;
use std::sync::Arc;

use mcp_transport_core::jsonrpc::{Message, Notification, Request, RequestId, Response, set_meta};
use mcp_transport_core::transport::{Misbehaviour, StreamEvent, TransportError};
use serde_json::value::RawValue;
use tokio::time::Instant;

use super::cancel::CancelGuard;
use super::exchange::Source;
use super::input;
use super::resume::Mode;
use super::session;
use super::shared::Shared;
use super::state::Session;
use super::wire::{self, Outgoing};
use mcp_http_edge::client::with_deadline;

/// One element of a batch sent by
/// [`LegacyClient::batch`](super::LegacyClient::batch).
#[derive(Clone, Debug)]
pub enum BatchItem {
    /// A request; the client assigns its id (an integer, like every
    /// request of this client).
    Request {
        /// The method, e.g. `tools/call`.
        method: String,
        /// The parameters (a JSON object), if any.
        params: Option<Box<RawValue>>,
        /// Ask for progress notifications: `_meta.progressToken` is set to
        /// the request's id.
        progress: bool,
    },
    /// A notification (no response).
    Notification(Notification),
}

impl BatchItem {
    /// A request of `method` with `params`, without a progress token.
    pub fn request(method: impl Into<String>, params: Option<Box<RawValue>>) -> Self {
        BatchItem::Request {
            method: method.into(),
            params,
            progress: false,
        }
    }

    /// A notification.
    pub fn notification(notification: Notification) -> Self {
        BatchItem::Notification(notification)
    }

    /// The same request asking for progress notifications (no effect on a
    /// notification).
    pub fn with_progress(mut self) -> Self {
        if let BatchItem::Request { progress, .. } = &mut self {
            *progress = true;
        }
        self
    }
}

/// The answer to a batch: one response per request, and what else came.
#[derive(Clone, Debug, Default)]
pub struct BatchResponses {
    /// The id given to each request, in the order of the batch's requests.
    pub ids: Vec<RequestId>,
    /// The response to each request, in the same order as
    /// [`ids`](Self::ids) (matched by id, whatever order they arrived in).
    pub responses: Vec<Response>,
    /// The related messages that came with the answer, in arrival order:
    /// notifications, and server requests (already answered through the
    /// input handler). Never a response.
    pub events: Vec<StreamEvent>,
    /// Responses that answer none of the batch's requests: error responses
    /// without an id (the server found an element invalid) or with an id
    /// that is not one of the batch's.
    pub unmatched: Vec<Response>,
}

impl BatchResponses {
    /// The response to the request with `id`.
    pub fn response(&self, id: &RequestId) -> Option<&Response> {
        self.ids
            .iter()
            .position(|i| i == id)
            .and_then(|n| self.responses.get(n))
    }

    /// The related notifications, in arrival order.
    pub fn notifications(&self) -> impl Iterator<Item = &Notification> {
        self.events.iter().filter_map(|e| match e {
            StreamEvent::Notification(n) => Some(n),
            _ => None,
        })
    }
}

/// Sends `items` as one batch and reads the answer (see
/// [`LegacyClient::batch`](super::LegacyClient::batch)).
pub(crate) async fn send(
    shared: Arc<Shared>,
    items: Vec<BatchItem>,
) -> Result<BatchResponses, TransportError> {
    if items.is_empty() {
        return Err(TransportError::InvalidInput(
            "a JSON-RPC batch needs at least one element (JSON-RPC 2.0 §6: an empty array is an invalid request)".into(),
        ));
    }
    let current = session::ensure(&shared).await?;
    let session = current.session.clone();
    if !session.features.batches {
        return Err(TransportError::Unsupported {
            revision: session.version.clone(),
            what: "JSON-RPC batches (only 2025-03-26 has them; they ended with 2025-06-18)",
        });
    }
    let mut ids = Vec::new();
    let mut messages = Vec::with_capacity(items.len());
    for item in items {
        match item {
            BatchItem::Request {
                method,
                params,
                progress,
            } => {
                let id = shared.next_id();
                let params = if progress {
                    let token = serde_json::to_value(&id).unwrap_or_default();
                    Some(set_meta(params, "progressToken", token).map_err(|e| {
                        TransportError::InvalidInput(format!(
                            "cannot attach a progress token to {method}: {e}"
                        ))
                    })?)
                } else {
                    params
                };
                ids.push(id.clone());
                messages.push(Message::Request(Request { id, method, params }));
            }
            BatchItem::Notification(n) => messages.push(Message::Notification(n)),
        }
    }
    let body = Outgoing::Batch(&messages).to_body(&session.features)?;
    drop(messages);
    // Armed from here: giving up on the batch (dropping the future, a
    // timeout) cancels the requests still unanswered.
    let mut guards: HashMap<RequestId, CancelGuard> = ids
        .iter()
        .map(|id| {
            let guard = CancelGuard::new(shared.clone(), session.clone(), id.clone());
            (id.clone(), guard)
        })
        .collect();
    let timeout = shared.config.http.request_timeout;
    let deadline = timeout.map(|t| Instant::now() + t);
    let what = describe(&ids);
    let mut reading = Reading {
        shared: shared.clone(),
        session: session.clone(),
        answer: BatchResponses {
            ids: ids.clone(),
            ..BatchResponses::default()
        },
        slots: vec![None; ids.len()],
        missing: ids.len(),
    };
    let work = async {
        let response = wire::send(wire::post(&shared, &session, body), &what).await?;
        if !response.status().is_success() {
            return Err(wire::status_error(response, &session, &what).await);
        }
        if ids.is_empty() {
            // Only notifications: 202 (any 2xx is taken). A body, if the
            // server sent one, can only hold error responses.
            if response.status() != http::StatusCode::ACCEPTED
                && matches!(wire::media_type(&response), wire::MediaType::Json)
            {
                let body = wire::read_body(response, shared.config.max_body_bytes, &what).await?;
                if !body.iter().all(u8::is_ascii_whitespace) {
                    for message in wire::parse_messages(&body, &session.features, &what)? {
                        reading.take(message, &mut guards).await?;
                    }
                }
            }
            return Ok(());
        }
        if response.status() == http::StatusCode::ACCEPTED {
            return Err(TransportError::PeerMisbehaved(
                Misbehaviour::AcceptedWithoutAnswer {
                    what: format!("the answer to {what}"),
                },
            ));
        }
        let mode = Mode::Batch(ids.clone());
        let mut source = Source::open(&shared, &session, mode, response, &what).await?;
        while reading.missing > 0 {
            let Some(message) = source.next().await? else {
                return Err(TransportError::PeerMisbehaved(Misbehaviour::EndedWithout {
                    what: format!("the answer to {what}"),
                    missing: format!("the responses to requests {}", reading.unanswered()),
                }));
            };
            reading.take(message, &mut guards).await?;
        }
        Ok(())
    };
    let closed = shared.closed.clone();
    let lost = session.lost().clone();
    let result = tokio::select! {
        biased;
        () = closed.cancelled() => Err(TransportError::Closed),
        () = lost.cancelled() => Err(session.expired_error()),
        r = with_deadline(deadline, timeout, work) => r,
    };
    match result {
        Ok(()) => {
            let Reading {
                mut answer, slots, ..
            } = reading;
            answer.responses = slots.into_iter().flatten().collect();
            Ok(answer)
        }
        Err(e) => {
            for (_, mut guard) in guards {
                match &e {
                    // Refused, or the session is gone: nothing is in progress.
                    TransportError::Http { .. }
                    | TransportError::SessionExpired { .. }
                    | TransportError::Closed => guard.disarm(),
                    other => guard.fire(&format!("the client stopped waiting: {other}")),
                }
            }
            Err(e)
        }
    }
}

/// What has been read of a batch's answer so far.
struct Reading {
    shared: Arc<Shared>,
    session: Arc<Session>,
    answer: BatchResponses,
    /// The response of each request, by position in `answer.ids`.
    slots: Vec<Option<Response>>,
    /// How many requests still await their response.
    missing: usize,
}

impl Reading {
    /// Files one message of the answer.
    async fn take(
        &mut self,
        message: Message,
        guards: &mut HashMap<RequestId, CancelGuard>,
    ) -> Result<(), TransportError> {
        match message {
            Message::Response(r) => {
                let slot =
                    r.id.as_ref()
                        .and_then(|id| self.answer.ids.iter().position(|i| i == id));
                match slot {
                    Some(n) if self.slots[n].is_none() => {
                        if let Some(mut guard) = r.id.as_ref().and_then(|id| guards.remove(id)) {
                            guard.disarm();
                        }
                        self.slots[n] = Some(r);
                        self.missing -= 1;
                    }
                    Some(_) => {
                        tracing::warn!(id = ?r.id, "ignoring a second response to the same request of a batch");
                    }
                    None => {
                        tracing::debug!(id = ?r.id, "a response in a batch's answer that answers none of its requests");
                        self.answer.unmatched.push(r);
                    }
                }
            }
            Message::Notification(n) => self.answer.events.push(StreamEvent::Notification(n)),
            Message::Request(r) => {
                input::answer(&self.shared, &self.session, &r).await?;
                self.answer.events.push(StreamEvent::ServerRequest(r));
            }
        }
        Ok(())
    }

    /// The ids still without a response, for errors.
    fn unanswered(&self) -> String {
        let ids: Vec<String> = self
            .answer
            .ids
            .iter()
            .zip(&self.slots)
            .filter(|(_, slot)| slot.is_none())
            .map(|(id, _)| id.to_string())
            .collect();
        ids.join(", ")
    }
}

/// "POST of a batch (requests 1, 2)" for messages.
fn describe(ids: &[RequestId]) -> String {
    if ids.is_empty() {
        return "POST of a batch of notifications".to_owned();
    }
    let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
    format!("POST of a batch (requests {})", ids.join(", "))
}
