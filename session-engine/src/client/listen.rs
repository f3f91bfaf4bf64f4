//! The standalone GET stream (*Transports*, "Listening for Messages from
//! the Server").
//!
//! The client GETs the endpoint with `Accept: text/event-stream`; the server
//! "MUST either return `Content-Type: text/event-stream` ... or else return
//! HTTP 405 Method Not Allowed, indicating that the server does not offer an
//! SSE stream at this endpoint". 405 is an answer, not a failure of the
//! connection: [`TransportError::NotOffered`].
//!
//! On the stream the server "MAY send JSON-RPC _requests_ and
//! _notifications_"; requests are answered through the input handler before
//! they are yielded. When the connection ends the stream is resumed like a
//! request's ([`resume`](super::resume)): after `retry` or the backoff, by
//! GET with `Last-Event-ID` when an id was seen and a plain GET otherwise,
//! until the client is closed or the stream dropped. A 405 on reconnection
//! ends the stream; a 404 ends it with `SessionExpired` (call `listen`
//! again: it starts a new session).

use std::sync::Arc;

use futures_util::stream;
use mcp_transport_core::jsonrpc::Message;
use mcp_transport_core::transport::{ListenFilter, Misbehaviour, ServerMessages, TransportError};

use super::input;
use super::resume::{EventSource, Mode};
use super::session;
use super::shared::Shared;
use super::state::Session;
use super::wire::{self, MediaType};

/// What [`TransportError::NotOffered`] says the server does not offer.
pub(crate) const NOT_OFFERED: &str = "a standalone GET stream (405 Method Not Allowed)";

/// GETs the standalone stream of the current session (a 405 is
/// [`TransportError::NotOffered`]).
pub(crate) async fn open(
    shared: Arc<Shared>,
    filter: ListenFilter,
) -> Result<ServerMessages, TransportError> {
    let current = session::ensure(&shared).await?;
    let session = current.session.clone();
    if !session.features.get_stream {
        return Err(TransportError::Unsupported {
            revision: session.version.clone(),
            what: "the standalone GET stream",
        });
    }
    let what = "GET of the standalone stream";
    let response = wire::send(wire::get(&shared, &session, None), what).await?;
    if response.status() == http::StatusCode::METHOD_NOT_ALLOWED {
        return Err(TransportError::NotOffered { what: NOT_OFFERED });
    }
    if !response.status().is_success() {
        return Err(wire::status_error(response, &session, what).await);
    }
    if let other @ (MediaType::Json | MediaType::Other(_)) = wire::media_type(&response) {
        return Err(TransportError::PeerMisbehaved(
            Misbehaviour::WrongContentType {
                what: what.to_owned(),
                got: match other {
                    MediaType::Other(ct) => Some(ct).filter(|ct| !ct.is_empty()),
                    _ => Some("application/json".into()),
                },
                expected: "text/event-stream",
            },
        ));
    }
    let source = EventSource::new(shared.clone(), session.clone(), Mode::Listen, response);
    let state = ListenStream {
        shared,
        session,
        source: Box::new(source),
        filter,
        done: false,
    };
    Ok(ServerMessages::new(stream::unfold(
        state,
        |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        },
    )))
}

/// The state behind the [`ServerMessages`] of the standalone stream.
struct ListenStream {
    shared: Arc<Shared>,
    session: Arc<Session>,
    source: Box<EventSource>,
    filter: ListenFilter,
    done: bool,
}

impl ListenStream {
    async fn next(&mut self) -> Option<Result<Message, TransportError>> {
        while !self.done {
            let closed = self.shared.closed.clone();
            let lost = self.session.lost().clone();
            let next = tokio::select! {
                biased;
                () = closed.cancelled() => Ok(None),
                () = lost.cancelled() => Err(self.session.expired_error()),
                r = self.source.next() => r,
            };
            match next {
                Ok(None) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok(Some(Message::Request(request))) => {
                    if let Err(e) = input::answer(&self.shared, &self.session, &request).await {
                        self.done = true;
                        return Some(Err(e));
                    }
                    return Some(Ok(Message::Request(request)));
                }
                Ok(Some(Message::Notification(n))) => {
                    if self.filter.admits(&n) {
                        return Some(Ok(Message::Notification(n)));
                    }
                }
                // A response may arrive here only when resuming a request's
                // stream; pass it on.
                Ok(Some(response)) => return Some(Ok(response)),
            }
        }
        None
    }
}
