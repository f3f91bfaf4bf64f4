//! The HTTP requests the client sends and how it reads the answers' status,
//! media type and JSON bodies.
//!
//! Every request carries the headers of its session
//! ([`Session::apply`](super::session::Session::apply)): `MCP-Session-Id`
//! when the server gave one, `MCP-Protocol-Version` when the revision has
//! that header. Every POST and GET carries `Accept` (*Transports*, "Sending
//! Messages to the Server" 2 and "Listening for Messages from the Server" 2).

use std::error::Error as _;

use http::StatusCode;
use http::header::{ACCEPT, CONTENT_TYPE};
use mcp_transport_core::jsonrpc::{Body, ErrorObject, Message, parse_body};
use mcp_transport_core::transport::TransportError;
use mcp_transport_core::version::Features;
use serde::Deserialize;

use super::session::Session;
use super::shared::Shared;
use crate::headers;

/// `Accept` of every POST: both media types a server may answer with.
pub(crate) const ACCEPT_POST: &str = "application/json, text/event-stream";

/// The most bytes of an error body that are read to find its message.
const MAX_ERROR_BODY: usize = 64 * 1024;

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
                    return Err(TransportError::PeerMisbehaved(
                        "internal: a JSON-RPC batch was about to be sent on a revision without batches".into(),
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

/// Sends a request; a failure to get an answer is a `Connection` error.
pub(crate) async fn send(
    builder: reqwest::RequestBuilder,
    what: &str,
) -> Result<reqwest::Response, TransportError> {
    builder
        .send()
        .await
        .map_err(|e| TransportError::Connection(format!("{what}: {}", error_chain(&e))))
}

/// A reqwest error with its sources (reqwest's own text is terse).
pub(crate) fn error_chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
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
    if status == StatusCode::NOT_FOUND {
        if let Some(expired) = session.mark_lost() {
            tracing::info!(
                what,
                "HTTP 404 for a request carrying the session id: the session is gone"
            );
            return expired;
        }
    }
    let body = read_limited(response, MAX_ERROR_BODY)
        .await
        .unwrap_or_default();
    let rpc = rpc_error(&body);
    let message = match &rpc {
        Some(e) => e.message.clone(),
        None => {
            let text = String::from_utf8_lossy(&body);
            let text = text.trim();
            if text.is_empty() {
                status
                    .canonical_reason()
                    .unwrap_or("no reason given")
                    .to_owned()
            } else {
                text.chars().take(500).collect()
            }
        }
    };
    tracing::debug!(what, %status, message, "unusable HTTP status");
    TransportError::Http {
        status: status.as_u16(),
        message,
        rpc,
    }
}

/// The JSON-RPC error in an error body, if it holds one (a response with no
/// `id`, as the *Transports* page allows, or with one).
fn rpc_error(body: &[u8]) -> Option<ErrorObject> {
    #[derive(Deserialize)]
    struct ErrorBody {
        error: ErrorObject,
    }
    serde_json::from_slice::<ErrorBody>(body)
        .ok()
        .map(|b| b.error)
}

/// The media type of an answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum MediaType {
    /// `application/json`.
    Json,
    /// `text/event-stream`.
    EventStream,
    /// Anything else (or none), as sent.
    Other(String),
}

/// Reads the media type of an answer (parameters such as `charset` ignored).
pub(crate) fn media_type(response: &reqwest::Response) -> MediaType {
    let raw = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = raw.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case(headers::JSON) {
        MediaType::Json
    } else if essence.eq_ignore_ascii_case(headers::EVENT_STREAM) {
        MediaType::EventStream
    } else {
        MediaType::Other(raw.to_owned())
    }
}

/// Reads a whole body, failing with `Limit` past `limit` bytes.
pub(crate) async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
    what: &str,
) -> Result<Vec<u8>, TransportError> {
    let too_large = || {
        TransportError::Limit(format!(
            "{what}: the JSON answer body exceeds max_body_bytes ({limit} bytes)"
        ))
    };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        TransportError::Connection(format!(
            "{what}: reading the answer body: {}",
            error_chain(&e)
        ))
    })? {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reads at most `limit` bytes of a body (for error bodies).
async fn read_limited(mut response: reqwest::Response, limit: usize) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = limit.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= limit {
            break;
        }
    }
    Some(body)
}

/// Parses JSON-RPC text from the server: one message, or on revisions with
/// batches (`Features::batches`, 2025-03-26) a batch of them.
pub(crate) fn parse_messages(
    bytes: &[u8],
    features: &Features,
    what: &str,
) -> Result<Vec<Message>, TransportError> {
    let bad = |e: &dyn std::fmt::Display| {
        TransportError::PeerMisbehaved(format!("{what}: not a valid JSON-RPC message: {e}"))
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
