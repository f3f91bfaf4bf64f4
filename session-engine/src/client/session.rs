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
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{Message, Notification, Request};
use mcp_transport_core::negotiation::legacy_client_accept;
use mcp_transport_core::transport::{Misbehaviour, StreamEvent, TransportError};
use mcp_transport_core::version::Features;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::request::Exchange;
use super::shared::Shared;
use super::wire;
use crate::headers;

/// What the server answered to `initialize` (*Lifecycle*, "Initialization").
#[derive(Clone, Debug)]
pub struct InitializeResult {
    /// The negotiated protocol version.
    pub protocol_version: ProtocolVersion,
    /// The server's capabilities.
    pub capabilities: serde_json::Value,
    /// The server's `serverInfo` (an `Implementation` object).
    pub server_info: serde_json::Value,
    /// The server's `instructions`, if any.
    pub instructions: Option<String>,
    /// The whole `result`, exactly as received.
    pub raw: Box<RawValue>,
}

/// One session: its id, its revision and whether the server has forgotten it.
#[derive(Debug)]
pub(crate) struct Session {
    /// `MCP-Session-Id`, when the server assigned one.
    pub(crate) id: Option<String>,
    /// The negotiated revision (the offered one while `initialize` runs).
    pub(crate) version: ProtocolVersion,
    /// The revision's feature row: every revision-dependent behaviour asks it.
    pub(crate) features: Features,
    /// Send `MCP-Protocol-Version` (2025-06-18 *Transports*, "Protocol
    /// Version Header": "on all subsequent requests"; never on `initialize`
    /// itself, before a version is negotiated).
    version_header: bool,
    /// Fired when a request carrying the id got 404.
    lost: CancellationToken,
}

impl Session {
    /// The session while `initialize` runs: no version header yet.
    fn provisional(id: Option<String>, offered: &ProtocolVersion) -> Result<Self, TransportError> {
        Ok(Session {
            id,
            version: offered.clone(),
            features: features_of(offered)?,
            version_header: false,
            lost: CancellationToken::new(),
        })
    }

    /// The session after a successful negotiation.
    fn established(id: Option<String>, version: ProtocolVersion) -> Result<Self, TransportError> {
        let features = features_of(&version)?;
        Ok(Session {
            id,
            version,
            version_header: features.version_header,
            features,
            lost: CancellationToken::new(),
        })
    }

    /// Adds this session's headers to an HTTP request.
    pub(crate) fn apply(&self, mut builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(id) = &self.id {
            builder = builder.header(headers::SESSION_ID, id);
        }
        if self.version_header {
            builder = builder.header(headers::PROTOCOL_VERSION, self.version.as_str());
        }
        builder
    }

    /// Marks the session lost after a 404 and returns the error for it;
    /// `None` when the session has no id (a 404 then is an ordinary error).
    pub(crate) fn mark_lost(&self) -> Option<TransportError> {
        let id = self.id.as_ref()?;
        self.lost.cancel();
        Some(TransportError::SessionExpired {
            session_id: id.clone(),
        })
    }

    /// Whether the server has forgotten this session.
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.is_cancelled()
    }

    /// Completes once the session is lost.
    pub(crate) fn lost(&self) -> &CancellationToken {
        &self.lost
    }

    /// The error in-flight streams of a lost session end with.
    pub(crate) fn expired_error(&self) -> TransportError {
        TransportError::SessionExpired {
            session_id: self.id.clone().unwrap_or_default(),
        }
    }
}

fn features_of(version: &ProtocolVersion) -> Result<Features, TransportError> {
    version.features().copied().ok_or_else(|| {
        TransportError::Internal(format!(
            "protocol version {version} has no known feature row"
        ))
    })
}

/// The session in use and what its `initialize` returned.
#[derive(Debug)]
pub(crate) struct Current {
    /// The session.
    pub(crate) session: Arc<Session>,
    /// The server's answer to `initialize`.
    pub(crate) init: Arc<InitializeResult>,
}

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
    let init = parse_result(result)?;
    let version =
        match legacy_client_accept(&offered, &init.protocol_version, &shared.config.versions) {
            Ok(v) => v,
            Err(e) => {
                // "If the client does not support the version in the server's
                // response, it SHOULD disconnect."
                if session_id.is_some() {
                    if let Ok(pre) = Session::provisional(session_id, &offered) {
                        let _ = wire::send(wire::delete(shared, &pre), "DELETE").await;
                    }
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

fn parse_result(raw: Box<RawValue>) -> Result<InitializeResult, TransportError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Wire {
        protocol_version: ProtocolVersion,
        #[serde(default)]
        capabilities: serde_json::Value,
        #[serde(default)]
        server_info: serde_json::Value,
        #[serde(default)]
        instructions: Option<String>,
    }
    let w: Wire = serde_json::from_str(raw.get()).map_err(|e| {
        TransportError::PeerMisbehaved(Misbehaviour::MalformedResult {
            what: "InitializeResult".into(),
            detail: e.to_string(),
        })
    })?;
    Ok(InitializeResult {
        protocol_version: w.protocol_version,
        capabilities: w.capabilities,
        server_info: w.server_info,
        instructions: w.instructions,
        raw,
    })
}

/// Whether an HTTP status is one a DELETE of the session may get for
/// "done" (200, 202, 204), "not allowed" (405) or "already gone" (404).
pub(crate) fn delete_ok(status: StatusCode) -> bool {
    matches!(status.as_u16(), 200 | 202 | 204 | 404 | 405)
}
