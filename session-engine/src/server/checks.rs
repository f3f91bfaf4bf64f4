//! Header checks shared by POST, GET and DELETE: `Origin`, `Host`,
//! `Accept`, `Content-Type`, `MCP-Session-Id`, `MCP-Protocol-Version`.
//!
//! The parsing here is pure and unit-tested; each check returns a [`Reject`]
//! (status, JSON-RPC code, message) on failure.

use http::header::{ACCEPT, CONTENT_TYPE, HOST, ORIGIN};
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use mcp_transport_core::ProtocolVersion;

use super::config::ServerConfig;
use super::reply::Reject;
use super::session::Session;
use crate::headers::{PROTOCOL_VERSION, SESSION_ID};

pub(crate) use mcp_transport_core::endpoint::{Accepts, host_allowed, origin_allowed};

/// Reads every `Accept` header ([`mcp_transport_core::endpoint::accepts`]).
pub(crate) fn accepts(headers: &HeaderMap) -> Accepts {
    mcp_transport_core::endpoint::accepts(
        headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    )
}

/// Whether `Content-Type` is `application/json` (parameters such as
/// `charset` allowed, case-insensitive).
pub(crate) fn is_json_content_type(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(mcp_transport_core::endpoint::is_json_media_type)
}

/// `Origin` then `Host` (*Transports*, "Security Warning": "If the Origin
/// header is present and invalid, servers MUST respond with HTTP 403
/// Forbidden"; the `Host` check is the other half of DNS-rebinding
/// protection).
pub(crate) fn check_origin_and_host(parts: &Parts, config: &ServerConfig) -> Result<(), Reject> {
    if let Some(origin) = parts.headers.get(ORIGIN) {
        let ok = origin
            .to_str()
            .is_ok_and(|o| origin_allowed(o, config.allowed_origins.as_deref()));
        if !ok {
            return Err(Reject::invalid(
                StatusCode::FORBIDDEN,
                format!(
                    "Forbidden: Origin {:?} is not allowed",
                    String::from_utf8_lossy(origin.as_bytes())
                ),
            ));
        }
    }
    let host = match parts.headers.get(HOST) {
        Some(h) => h.to_str().ok().map(str::to_owned),
        None => parts.uri.authority().map(|a| a.as_str().to_owned()),
    };
    match host {
        Some(h) if host_allowed(&h, config.allowed_hosts.as_deref()) => Ok(()),
        Some(h) => Err(Reject::invalid(
            StatusCode::FORBIDDEN,
            format!("Forbidden: Host {h:?} is not allowed (DNS rebinding protection)"),
        )),
        None => Err(Reject::invalid(
            StatusCode::FORBIDDEN,
            "Forbidden: the request names no Host (DNS rebinding protection)",
        )),
    }
}

/// The `MCP-Session-Id` header: `Ok(None)` when absent, 400 when it is not
/// visible ASCII.
pub(crate) fn session_id(headers: &HeaderMap) -> Result<Option<&str>, Reject> {
    match headers.get(SESSION_ID) {
        None => Ok(None),
        Some(v) => match v.to_str() {
            Ok(s) if !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b)) => Ok(Some(s)),
            _ => Err(Reject::invalid(
                StatusCode::BAD_REQUEST,
                "Bad Request: MCP-Session-Id must be visible ASCII (0x21-0x7E)",
            )),
        },
    }
}

/// The `MCP-Protocol-Version` rule (*Transports*, "Protocol Version
/// Header"): "If the server receives a request with an invalid or
/// unsupported MCP-Protocol-Version, it MUST respond with 400 Bad Request."
/// A request without the header, or naming another supported version, is
/// served at the session's version (negotiated at `initialize`; the spec's
/// "relying on the protocol version negotiated during initialization") and
/// the difference is logged.
pub(crate) fn check_protocol_version(
    headers: &HeaderMap,
    session: &Session,
    config: &ServerConfig,
) -> Result<(), Reject> {
    let Some(value) = headers.get(PROTOCOL_VERSION) else {
        if session.revision.version_header() {
            tracing::debug!(
                session = %session.id,
                version = %session.version,
                "request without MCP-Protocol-Version; serving it at the session's version"
            );
        }
        return Ok(());
    };
    let Ok(text) = value.to_str() else {
        return Err(Reject::invalid(
            StatusCode::BAD_REQUEST,
            "Bad Request: MCP-Protocol-Version is not visible ASCII",
        ));
    };
    let v = ProtocolVersion::parse(text.trim());
    if !v.is_well_formed() {
        return Err(Reject::invalid(
            StatusCode::BAD_REQUEST,
            format!("Bad Request: malformed MCP-Protocol-Version {text:?} (expected YYYY-MM-DD)"),
        ));
    }
    let served = config.served_versions();
    if !served.contains(&v) {
        return Err(Reject::invalid(
            StatusCode::BAD_REQUEST,
            format!(
                "Bad Request: unsupported MCP-Protocol-Version {v} (supported: {})",
                mcp_transport_core::version::list(&served)
            ),
        ));
    }
    if v != session.version {
        tracing::debug!(
            session = %session.id,
            header = %v,
            version = %session.version,
            "MCP-Protocol-Version differs from the session's version; serving the session's"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(v: &str) -> Accepts {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, v.parse().unwrap());
        accepts(&h)
    }

    #[test]
    fn accept_headers_are_read() {
        assert!(acc("application/json, text/event-stream").sse);
        assert!(!acc("application/json").sse);
    }

    #[test]
    fn content_type() {
        let mut h = HeaderMap::new();
        assert!(!is_json_content_type(&h));
        h.insert(
            CONTENT_TYPE,
            "Application/JSON; charset=utf-8".parse().unwrap(),
        );
        assert!(is_json_content_type(&h));
        h.insert(CONTENT_TYPE, "text/plain".parse().unwrap());
        assert!(!is_json_content_type(&h));
    }
}
