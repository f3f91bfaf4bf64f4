//! `initialize`: version negotiation and session creation.
//!
//! *Lifecycle*, "Version Negotiation": "If the server supports the requested
//! protocol version, it MUST respond with the same version. Otherwise, the
//! server MUST respond with another protocol version it supports. This
//! SHOULD be the latest version supported by the server."
//! (`negotiation::legacy_server_select`).
//!
//! *Transports*, "Session Management" 1: the session id goes in an
//! `MCP-Session-Id` header of the response carrying the `InitializeResult`;
//! it "SHOULD be globally unique and cryptographically secure" and "MUST only
//! contain visible ASCII characters". Ours is 128 bits from the thread-local
//! CSPRNG (`rand::rng()`, ChaCha12 seeded from the OS), written as 32
//! lowercase hex digits.

use std::sync::Arc;

use http::{HeaderValue, StatusCode};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::event_id::SessionTag;
use mcp_transport_core::event_log::StoreError;
use mcp_transport_core::handler::ClientDescription;
use mcp_transport_core::jsonrpc::{self, ErrorObject, Request, Response};
use mcp_transport_core::negotiation::{UnsupportedVersionData, legacy_server_select};
use serde::Deserialize;

use super::Shared;
use super::reply::{self, HttpResponse};
use super::session::Session;
use crate::headers::SESSION_ID;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
    #[serde(default)]
    capabilities: Option<serde_json::Value>,
    #[serde(default)]
    client_info: Option<serde_json::Value>,
}

/// A new session id: 128 CSPRNG bits as 32 hex digits.
fn mint_session_id() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Answers `initialize` (always `application/json`).
pub(crate) async fn initialize(
    shared: &Arc<Shared>,
    request: Request,
    principal: Option<String>,
) -> HttpResponse {
    let id = request.id.clone();
    let params = request
        .params
        .as_deref()
        .ok_or_else(|| "initialize needs params".to_owned())
        .and_then(|p| serde_json::from_str::<InitializeParams>(p.get()).map_err(|e| e.to_string()));
    let params = match params {
        Ok(p) => p,
        Err(e) => {
            return reply::json_response(Response::error(Some(id), ErrorObject::invalid_params(e)));
        }
    };
    let requested = ProtocolVersion::parse(&params.protocol_version);
    let served = shared.config.served_versions();
    let Ok(version) = legacy_server_select(&requested, &served) else {
        let data = UnsupportedVersionData {
            supported: served,
            requested,
        };
        let error = ErrorObject::new(
            jsonrpc::INVALID_PARAMS,
            format!(
                "Unsupported protocol version {} (this server supports no legacy version; supported: {})",
                data.requested,
                mcp_transport_core::version::list(&data.supported)
            ),
        )
        .with_data(&data);
        return reply::json_response(Response::error(Some(id), error));
    };
    // `served_versions` lists only versions with an implementation.
    let Some(revision) = shared.config.revision(&version).cloned() else {
        return reply::internal(
            StatusCode::INTERNAL_SERVER_ERROR,
            "negotiated a version without an implementation",
        );
    };
    let max = shared.config.max_sessions;
    if shared.sessions.len() >= max {
        return session_limit(max);
    }

    let store = &shared.config.event_store;
    let mut tag = SessionTag::from_random_bytes(rand::random());
    let mut attempts = 0;
    loop {
        match store.open_session(&tag).await {
            Ok(()) => break,
            Err(StoreError::SessionExists { .. }) if attempts < 3 => {
                attempts += 1;
                tag = SessionTag::from_random_bytes(rand::random());
            }
            Err(StoreError::TooManySessions { max }) => return session_limit(max),
            // A store out of reach (Redis down): 503, the client may retry.
            Err(e @ StoreError::Backend(_)) => {
                return reply::internal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "the session's event log is unavailable: {e}: {}",
                        source_of(&e)
                    ),
                );
            }
            Err(e) => {
                return reply::internal(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("cannot open the session's event log: {e}"),
                );
            }
        }
    }

    let client = ClientDescription {
        info: params.client_info,
        capabilities: params
            .capabilities
            .filter(serde_json::Value::is_object)
            .unwrap_or_else(|| serde_json::json!({})),
    };
    let session_id = mint_session_id();
    let session = Arc::new(
        Session::new(
            session_id.clone().into(),
            tag,
            version.clone(),
            revision,
            shared.sessions.client(&client),
            shared.handler.clone(),
            shared.now_ms(),
        )
        .with_principal(principal),
    );
    let describe = session.handler.describe();
    if let Some(shared_store) = &shared.config.session_store
        && let Err(r) = super::cluster::create(shared, shared_store.as_ref(), &session).await
    {
        let _ = store.remove_session(&tag).await;
        return r.response();
    }
    if let Err(full) = shared.sessions.insert(session, max) {
        let _ = store.remove_session(&tag).await;
        if let Some(shared_store) = &shared.config.session_store {
            let _ = shared_store.remove(&session_id).await;
        }
        return session_limit(full.max);
    }
    shared.ensure_sweeper();
    super::cluster::ensure_listener(shared);
    tracing::debug!(session = %session_id, %version, requested = %params.protocol_version, "session started");

    let mut result = serde_json::json!({
        "protocolVersion": version,
        "capabilities": describe.capabilities,
        "serverInfo": describe.info,
    });
    if let Some(instructions) = describe.instructions {
        result["instructions"] = instructions.into();
    }
    let result = match jsonrpc::to_raw(&result) {
        Ok(r) => r,
        Err(e) => {
            return reply::internal(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot serialize the InitializeResult: {e}"),
            );
        }
    };
    let mut response = reply::json_response(Response::result(id, result));
    if let Ok(v) = HeaderValue::from_str(&session_id) {
        response.headers_mut().insert(SESSION_ID, v);
    }
    response
}

/// 503: the session cap is reached.
fn session_limit(max: usize) -> HttpResponse {
    reply::internal(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "Service Unavailable: the server's limit of {max} sessions is reached; try again later"
        ),
    )
}

/// The first cause under a store error, for the client's message.
fn source_of(e: &dyn std::error::Error) -> String {
    e.source().map_or_else(String::new, ToString::to_string)
}
