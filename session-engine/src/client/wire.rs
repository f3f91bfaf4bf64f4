//! The HTTP requests the client sends and how it reads the answers' status,
//! media type and JSON bodies.
//!
//! Every request carries the headers of its session
//! ([`Session::apply`](super::state::Session::apply)): `MCP-Session-Id`
//! when the server gave one, `MCP-Protocol-Version` when the revision has
//! that header. Every POST and GET carries `Accept` (*Transports*, "Sending
//! Messages to the Server" 2 and "Listening for Messages from the Server" 2).

use http::StatusCode;
use http::header::{ACCEPT, CONTENT_TYPE};
use mcp_http_edge::client::{BodyError, body_excerpt, read_limited, rpc_error};
use mcp_http_edge::headers::{self, ACCEPT_POST};
use mcp_transport_core::jsonrpc::{Body, Message, parse_body};
use mcp_transport_core::transport::{Misbehaviour, TransportError};
use mcp_transport_core::version::Features;

use super::shared::Shared;
use super::state::Session;

pub(crate) use mcp_http_edge::client::{MAX_ERROR_BODY, MediaType, media_type, send};

/// What the client POSTs: one message, or (2025-03-26 only, `Features::batches`)
/// a JSON-RPC batch (sent by `LegacyClient::batch`).
#[derive(Debug)]
pub(crate) enum Outgoing<'a> {
    /// One JSON-RPC message.
    Single(&'a Message),
    /// A JSON-RPC batch (2025-03-26 *Transports*, "Sending Messages to the
    /// Server" 3).
    Batch(&'a [Message]),
}

impl Outgoing<'_> {
    /// The POST body; a batch is refused on revisions without batches.
    pub(crate) fn to_body(&self, features: &Features) -> Result<String, TransportError> {
        match self {
            Outgoing::Single(m) => Ok(m.to_json()),
            Outgoing::Batch(items) => {
                if !features.batches {
                    return Err(TransportError::Internal(
                        "a JSON-RPC batch was about to be sent on a revision without batches"
                            .into(),
                    ));
                }
                let parts: Vec<String> = items.iter().map(Message::to_json).collect();
                Ok(format!("[{}]", parts.join(",")))
            }
        }
    }
}

/// A POST of `body` to the endpoint, with the session's headers.
pub(crate) fn post(shared: &Shared, session: &Session, body: String) -> reqwest::RequestBuilder {
    let builder = shared
        .http
        .post(shared.url.clone())
        .header(ACCEPT, ACCEPT_POST)
        .header(CONTENT_TYPE, headers::JSON)
        .body(body);
    session.apply(builder)
}

/// A GET of the endpoint (`Accept: text/event-stream`), resuming after
/// `last_event_id` when given (*Transports*, "Resumability and Redelivery" 2).
pub(crate) fn get(
    shared: &Shared,
    session: &Session,
    last_event_id: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut builder = shared
        .http
        .get(shared.url.clone())
        .header(ACCEPT, headers::EVENT_STREAM);
    if let Some(id) = last_event_id {
        builder = builder.header(headers::LAST_EVENT_ID, id);
    }
    session.apply(builder)
}

/// A DELETE of the session (*Transports*, "Session Management" 5).
pub(crate) fn delete(shared: &Shared, session: &Session) -> reqwest::RequestBuilder {
    session.apply(shared.http.delete(shared.url.clone()))
}

/// The error for an answer whose status the client cannot use.
///
/// HTTP 404 on a request that carried a session id means the server no
/// longer knows the session (*Transports*, "Session Management" 3): the
/// session is marked lost (every in-flight stream of it fails, and the next
/// call starts a new one) and the error is `SessionExpired`. Any other
/// status is `Http`, with the JSON-RPC error message of the body when it
/// held one.
pub(crate) async fn status_error(
    response: reqwest::Response,
    session: &Session,
    what: &str,
) -> TransportError {
    let status = response.status();
    if status == StatusCode::NOT_FOUND
        && let Some(expired) = session.mark_lost()
    {
        tracing::info!(
            what,
            "HTTP 404 for a request carrying the session id: the session is gone"
        );
        return expired;
    }
    let body = read_limited(response, MAX_ERROR_BODY).await;
    let rpc = rpc_error(&body);
    let message = match &rpc {
        Some(e) => e.message.clone(),
        None => body_excerpt(&body, status),
    };
    tracing::debug!(what, %status, message, "unusable HTTP status");
    TransportError::Http {
        status: status.as_u16(),
        message,
        rpc,
    }
}

/// Reads a whole body ([`mcp_http_edge::client::read_body`]), failing with
/// `Limit` past `limit` bytes and `Connection` when the body breaks.
pub(crate) async fn read_body(
    response: reqwest::Response,
    limit: usize,
    what: &str,
) -> Result<Vec<u8>, TransportError> {
    mcp_http_edge::client::read_body(response, limit, what)
        .await
        .map_err(|e| match e {
            BodyError::Limit(e) => e,
            BodyError::Broken(chain) => {
                TransportError::Connection(format!("{what}: reading the answer body: {chain}"))
            }
        })
}

/// Parses JSON-RPC text from the server: one message, or on revisions with
/// batches (`Features::batches`, 2025-03-26) a batch of them.
pub(crate) fn parse_messages(
    bytes: &[u8],
    features: &Features,
    what: &str,
) -> Result<Vec<Message>, TransportError> {
    let bad = |e: &dyn std::fmt::Display| {
        TransportError::PeerMisbehaved(Misbehaviour::InvalidJsonRpc {
            what: what.to_owned(),
            detail: e.to_string(),
        })
    };
    match parse_body(bytes, features.batches).map_err(|e| bad(&e))? {
        Body::Single(m) => Ok(vec![m]),
        Body::Batch(items) => items
            .into_iter()
            .map(|item| item.map_err(|e| bad(&e.error)))
            .collect(),
    }
}

/// POSTs a notification or a response, which the server accepts with 202
/// (*Transports*, "Sending Messages to the Server" 4; any 2xx is taken).
pub(crate) async fn post_accepted(
    shared: &Shared,
    session: &Session,
    message: &Message,
    what: &str,
) -> Result<(), TransportError> {
    let body = Outgoing::Single(message).to_body(&session.features)?;
    let response = send(post(shared, session, body), what).await?;
    if response.status().is_success() {
        Ok(())
    } else {
        Err(status_error(response, session, what).await)
    }
}

#[cfg(test)]
mod tests {
    use mcp_transport_core::ProtocolVersion;
    use mcp_transport_core::jsonrpc::Notification;

    use super::*;

    #[test]
    fn batches_are_written_only_where_the_revision_has_them() {
        let n = Message::Notification(Notification::new::<()>("notifications/x", None).unwrap());
        let items = [n.clone(), n.clone()];
        let old = ProtocolVersion::V2025_03_26.features().unwrap();
        let new = ProtocolVersion::V2025_11_25.features().unwrap();
        let body = Outgoing::Batch(&items).to_body(old).unwrap();
        assert_eq!(body, format!("[{},{}]", n.to_json(), n.to_json()));
        assert!(Outgoing::Batch(&items).to_body(new).is_err());
        assert_eq!(Outgoing::Single(&n).to_body(new).unwrap(), n.to_json());
    }
}
