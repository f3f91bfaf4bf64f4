//! A session's state: its id, its revision, whether the server has
//! forgotten it, and the headers every request of it carries; the session
//! in use with what its `initialize` returned. Data only: the handshake that
//! makes one is in `session`.

use std::sync::Arc;

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::transport::{Misbehaviour, TransportError};
use mcp_transport_core::version::Features;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

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

impl InitializeResult {
    /// Reads an `InitializeResult` from the `result` of `initialize`,
    /// keeping it whole in [`raw`](Self::raw); a result that is not one is
    /// the server's misbehaviour (`MalformedResult`).
    pub fn from_raw(raw: Box<RawValue>) -> Result<InitializeResult, TransportError> {
        #[derive(serde::Deserialize)]
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
    pub(crate) fn provisional(
        id: Option<String>,
        offered: &ProtocolVersion,
    ) -> Result<Self, TransportError> {
        Ok(Session {
            id,
            version: offered.clone(),
            features: features_of(offered)?,
            version_header: false,
            lost: CancellationToken::new(),
        })
    }

    /// The session after a successful negotiation.
    pub(crate) fn established(
        id: Option<String>,
        version: ProtocolVersion,
    ) -> Result<Self, TransportError> {
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
