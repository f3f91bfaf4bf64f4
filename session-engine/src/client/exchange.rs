//! Reading the answer to one POST: JSON or SSE (resumed as needed), message
//! by message, with server requests answered through the input handler.

use std::collections::VecDeque;
use std::sync::Arc;

use mcp_transport_core::jsonrpc::{Message, RequestId};
use mcp_transport_core::transport::{Misbehaviour, StreamEvent, TransportError};

use super::input;
use super::resume::{EventSource, Mode};
use super::shared::Shared;
use super::state::Session;
use super::wire::{self, MediaType};

/// Where the messages of an answer come from.
pub(crate) enum Source {
    /// An `application/json` answer, already read.
    Json(VecDeque<Message>),
    /// A `text/event-stream` answer, resumed as needed.
    Sse(Box<EventSource>),
}

impl Source {
    /// Starts reading a successful answer (JSON or SSE; any other media
    /// type is an error). `mode` names the logical stream, `what` the
    /// answer in errors.
    pub(crate) async fn open(
        shared: &Arc<Shared>,
        session: &Arc<Session>,
        mode: Mode,
        response: reqwest::Response,
        what: &str,
    ) -> Result<Self, TransportError> {
        Ok(match wire::media_type(&response) {
            MediaType::Json => {
                let body = wire::read_body(response, shared.config.max_body_bytes, what).await?;
                let messages = wire::parse_messages(&body, &session.features, what)?;
                Source::Json(messages.into())
            }
            MediaType::EventStream => Source::Sse(Box::new(EventSource::new(
                shared.clone(),
                session.clone(),
                mode,
                response,
            ))),
            MediaType::Other(ct) => {
                return Err(TransportError::PeerMisbehaved(
                    Misbehaviour::WrongContentType {
                        what: what.to_owned(),
                        got: Some(ct).filter(|ct| !ct.is_empty()),
                        expected: "application/json or text/event-stream",
                    },
                ));
            }
        })
    }

    /// The next message; `None` when a JSON answer has no more.
    pub(crate) async fn next(&mut self) -> Result<Option<Message>, TransportError> {
        match self {
            Source::Json(queue) => Ok(queue.pop_front()),
            Source::Sse(source) => source.next().await,
        }
    }
}

/// The answer to one POSTed request, read message by message.
pub(crate) struct Exchange {
    pub(crate) shared: Arc<Shared>,
    pub(crate) session: Arc<Session>,
    pub(crate) id: RequestId,
    source: Source,
}

impl Exchange {
    /// Starts reading the (successful) answer to the POST of request `id`.
    pub(crate) async fn open(
        shared: Arc<Shared>,
        session: Arc<Session>,
        id: RequestId,
        response: reqwest::Response,
    ) -> Result<Self, TransportError> {
        let what = format!("the answer to request {id}");
        if response.status() == http::StatusCode::ACCEPTED {
            return Err(TransportError::PeerMisbehaved(
                Misbehaviour::AcceptedWithoutAnswer { what },
            ));
        }
        let source = Source::open(
            &shared,
            &session,
            Mode::Request(id.clone()),
            response,
            &what,
        )
        .await?;
        Ok(Exchange {
            shared,
            session,
            id,
            source,
        })
    }

    /// Stops reading: the connection, if any, is released.
    pub(crate) fn finish(&mut self) {
        self.source = Source::Json(VecDeque::new());
    }

    /// The next event: a related notification, a server request (answered
    /// through the input handler before it is returned), or the response.
    pub(crate) async fn next_event(&mut self) -> Result<StreamEvent, TransportError> {
        loop {
            let Some(message) = self.source.next().await? else {
                return Err(TransportError::PeerMisbehaved(Misbehaviour::EndedWithout {
                    what: format!("the answer to request {}", self.id),
                    missing: "its response".into(),
                }));
            };
            match message {
                Message::Response(r) if r.id.as_ref() == Some(&self.id) => {
                    return Ok(StreamEvent::Response(r));
                }
                // An error without an id on this request's own stream can
                // only be about this request.
                Message::Response(r) if r.id.is_none() && r.is_error() => {
                    return Ok(StreamEvent::Response(r));
                }
                Message::Response(r) => {
                    tracing::warn!(expected = %self.id, got = ?r.id, "ignoring a response to another request");
                }
                Message::Notification(n) => return Ok(StreamEvent::Notification(n)),
                Message::Request(r) => {
                    input::answer(&self.shared, &self.session, &r).await?;
                    return Ok(StreamEvent::ServerRequest(r));
                }
            }
        }
    }
}
