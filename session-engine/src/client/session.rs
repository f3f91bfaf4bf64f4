//! The session: the `initialize` handshake, the headers every later request
//! carries, and starting over after the server forgot the session.
//!
//! *Lifecycle*, "Initialization": the client sends `initialize`, the server
//! answers with its version, capabilities and info, and the client sends
//! `notifications/initialized`. *Transports*, "Session Management": an
//! `MCP-Session-Id` returned with the `InitializeResult` "MUST" be sent on
//! "all of their subsequent HTTP requests"; HTTP 404 to a request carrying
//! it means the session is gone, and the client "MUST start a new session by
//! sending a new `InitializeRequest` without a session ID attached".

use std::sync::Arc;

use http::StatusCode;
use mcp_transport_core::jsonrpc::{Message, Notification, Request};
use mcp_transport_core::negotiation::legacy_client_accept;
use mcp_transport_core::transport::{Misbehaviour, StreamEvent, TransportError};

use super::exchange::Exchange;
use super::shared::Shared;
use super::state::{Current, InitializeResult, Session};
use super::wire;
use crate::headers;

/// The session to use now: the current one, or a new one when there is none
/// yet or the server forgot it (a fresh `initialize`, without a session id).
pub(crate) async fn ensure(shared: &Arc<Shared>) -> Result<Arc<Current>, TransportError> {
    shared.check_open()?;
    if let Some(current) = shared.current().filter(|c| !c.session.is_lost()) {
        return Ok(current);
    }
    let _one_at_a_time = shared.handshake.lock().await;
    shared.check_open()?;
    if let Some(current) = shared.current().filter(|c| !c.session.is_lost()) {
        return Ok(current);
    }
    if let Some(old) = shared.current() {
        tracing::info!(old = ?old.session.id, "starting a new session after the server forgot the old one");
    }
    let fresh = Arc::new(handshake(shared).await?);
    shared.set_current(fresh.clone());
    Ok(fresh)
}

/// `initialize`, version check, `notifications/initialized`.
async fn handshake(shared: &Arc<Shared>) -> Result<Current, TransportError> {
    let offered = shared.config.versions[0].clone();
    let id = shared.next_id();
    let params = serde_json::json!({
        "protocolVersion": offered,
        "capabilities": shared.config.capabilities,
        "clientInfo": shared.config.client_info,
    });
    let request = Request::new(id.clone(), "initialize", Some(&params))
        .map_err(|e| TransportError::Internal(format!("serializing initialize: {e}")))?;
    let work = async {
        let pre = Session::provisional(None, &offered)?;
        let body = Message::Request(request).to_json();
        let response = wire::send(wire::post(shared, &pre, body), "POST initialize").await?;
        let status = response.status();
        if !status.is_success() {
            return Err(wire::status_error(response, &pre, "POST initialize").await);
        }
        let session_id = session_id_of(&response)?;
        let pre = Arc::new(Session::provisional(session_id.clone(), &offered)?);
        // The answer may be JSON or an SSE stream (which may be resumed like
        // any other); server requests on it (pings) are answered.
        let mut exchange = Exchange::open(shared.clone(), pre, id, response).await?;
        loop {
            if let StreamEvent::Response(r) = exchange.next_event().await? {
                return Ok((session_id, status, r));
            }
        }
    };
    let (session_id, status, response) = match shared.config.http.request_timeout {
        Some(limit) => tokio::time::timeout(limit, work)
            .await
            .map_err(|_| TransportError::Timeout(limit))??,
        None => work.await?,
    };
    let result = match response.payload {
        Ok(result) => result,
        Err(error) => {
            return Err(TransportError::Http {
                status: status.as_u16(),
                message: format!("the server refused initialize: {}", error.message),
                rpc: Some(error),
            });
        }
    };
    let init = InitializeResult::from_raw(result)?;
    let version =
        match legacy_client_accept(&offered, &init.protocol_version, &shared.config.versions) {
            Ok(v) => v,
            Err(e) => {
                // "If the client does not support the version in the server's
                // response, it SHOULD disconnect."
                if session_id.is_some()
                    && let Ok(pre) = Session::provisional(session_id, &offered)
                {
                    let _ = wire::send(wire::delete(shared, &pre), "DELETE").await;
                }
                return Err(e.into());
            }
        };
    let session = Arc::new(Session::established(session_id, version)?);
    let initialized = Message::Notification(Notification {
        method: "notifications/initialized".into(),
        params: None,
    });
    let answer = wire::send(
        wire::post(shared, &session, initialized.to_json()),
        "POST notifications/initialized",
    )
    .await?;
    if !answer.status().is_success() {
        return Err(wire::status_error(answer, &session, "POST notifications/initialized").await);
    }
    tracing::debug!(version = %session.version, id = ?session.id, "session established");
    Ok(Current {
        session,
        init: Arc::new(init),
    })
}

/// The `MCP-Session-Id` of the `initialize` answer; it "MUST only contain
/// visible ASCII characters (ranging from 0x21 to 0x7E)".
fn session_id_of(response: &reqwest::Response) -> Result<Option<String>, TransportError> {
    let Some(value) = response.headers().get(headers::SESSION_ID) else {
        return Ok(None);
    };
    let bytes = value.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(|b| (0x21..=0x7e).contains(b)) {
        return Err(TransportError::PeerMisbehaved(
            Misbehaviour::InvalidSessionId {
                value: String::from_utf8_lossy(bytes).into_owned(),
            },
        ));
    }
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

/// Whether an HTTP status is one a DELETE of the session may get for
/// "done" (200, 202, 204), "not allowed" (405) or "already gone" (404).
pub(crate) fn delete_ok(status: StatusCode) -> bool {
    matches!(status.as_u16(), 200 | 202 | 204 | 404 | 405)
}
