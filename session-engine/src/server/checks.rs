//! Header checks of this engine: `MCP-Session-Id` and
//! `MCP-Protocol-Version`. `Origin`, `Host`, `Accept` and `Content-Type` are
//! checked at the edge ([`mcp_http_edge::config::OriginPolicy`],
//! [`mcp_http_edge::server::checks`]); each check returns a [`Reject`]
//! (status, JSON-RPC code, message) on failure.

use http::{HeaderMap, HeaderValue, StatusCode};
use mcp_http_edge::header_scan::{self, Seen};
use mcp_transport_core::ProtocolVersion;

use super::config::ServerConfig;
use super::reply::Reject;
use super::session::Session;

pub(crate) use mcp_http_edge::server::checks::{accepts, check_post_media};

// Every POST looks both headers up: by `HeaderName`, not `&str` (which
// parses the name on every call).
use mcp_http_edge::headers::name::{
    PROTOCOL_VERSION as PROTOCOL_VERSION_NAME, SESSION_ID as SESSION_ID_NAME,
};

/// `MCP-Session-Id` and `MCP-Protocol-Version` of one request, found in one
/// pass over its headers (two hashed lookups of custom names cost more than
/// comparing a request's few names: [`header_scan`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SessionHeaders<'a> {
    headers: &'a HeaderMap,
    id: Seen<'a>,
    version: Seen<'a>,
}

impl<'a> SessionHeaders<'a> {
    /// Both headers of `headers`.
    pub fn of(headers: &'a HeaderMap) -> Self {
        let [id, version] = header_scan::scan(headers, [&SESSION_ID_NAME, &PROTOCOL_VERSION_NAME]);
        SessionHeaders {
            headers,
            id,
            version,
        }
    }

    /// The `MCP-Session-Id` header (the first, when sent more than once):
    /// `Ok(None)` when absent, 400 when it is not visible ASCII.
    pub fn session_id(&self) -> Result<Option<&'a str>, Reject> {
        let value = match self.id {
            Seen::Absent => return Ok(None),
            Seen::Once(v) => v,
            Seen::Repeated => match self.headers.get(SESSION_ID_NAME) {
                Some(v) => v,
                None => return Ok(None),
            },
        };
        match value.to_str() {
            Ok(s) if !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b)) => Ok(Some(s)),
            _ => Err(Reject::invalid(
                StatusCode::BAD_REQUEST,
                "Bad Request: MCP-Session-Id must be visible ASCII (0x21-0x7E)",
            )),
        }
    }

    /// The `MCP-Protocol-Version` rule (*Transports*, "Protocol Version
    /// Header"): "If the server receives a request with an invalid or
    /// unsupported MCP-Protocol-Version, it MUST respond with 400 Bad
    /// Request." A request without the header is served at the session's
    /// version (negotiated at `initialize`; the spec's "relying on the
    /// protocol version negotiated during initialization"). The negotiated
    /// version is the only valid one on a session ("the protocol version
    /// negotiated during initialization" is what the client MUST send), so
    /// a header naming another version — even one this server serves — is
    /// 400, and so are two headers that differ (an ambiguous request).
    pub fn check_protocol_version(
        &self,
        session: &Session,
        config: &ServerConfig,
    ) -> Result<(), Reject> {
        let value = match self.version {
            Seen::Absent => {
                if session.revision.version_header() {
                    tracing::debug!(
                        session = %session.id,
                        version = %session.version,
                        "request without MCP-Protocol-Version; serving it at the session's version"
                    );
                }
                return Ok(());
            }
            Seen::Once(v) => v,
            Seen::Repeated => {
                let mut values = self.headers.get_all(PROTOCOL_VERSION_NAME).iter();
                let Some(value) = values.next() else {
                    return Ok(());
                };
                if values
                    .any(|other| other.as_bytes().trim_ascii() != value.as_bytes().trim_ascii())
                {
                    return Err(Reject::invalid(
                        StatusCode::BAD_REQUEST,
                        "Bad Request: the request carries MCP-Protocol-Version headers that differ",
                    ));
                }
                value
            }
        };
        check_version_value(value, session, config)
    }
}

/// One `MCP-Protocol-Version` value against the session (see
/// [`SessionHeaders::check_protocol_version`]).
fn check_version_value(
    value: &HeaderValue,
    session: &Session,
    config: &ServerConfig,
) -> Result<(), Reject> {
    let Ok(text) = value.to_str() else {
        return Err(Reject::invalid(
            StatusCode::BAD_REQUEST,
            "Bad Request: MCP-Protocol-Version is not visible ASCII",
        ));
    };
    let v = ProtocolVersion::parse(text.trim());
    // The session's own version (nearly every request): served, as it was
    // negotiated from the served ones; nothing to list.
    if v == session.version {
        return Ok(());
    }
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
        return Err(Reject::invalid(
            StatusCode::BAD_REQUEST,
            format!(
                "Bad Request: MCP-Protocol-Version {v} is not this session's protocol version ({}, negotiated at initialize)",
                session.version
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(ids: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.append("x-other", HeaderValue::from_static("o"));
        for id in ids {
            h.append(SESSION_ID_NAME, HeaderValue::from_str(id).unwrap());
        }
        h
    }

    #[test]
    fn the_session_id_is_read_from_the_one_pass() {
        let none = headers(&[]);
        assert_eq!(SessionHeaders::of(&none).session_id().unwrap(), None);
        let one = headers(&["abc"]);
        assert_eq!(SessionHeaders::of(&one).session_id().unwrap(), Some("abc"));
        // Sent twice: the first, as `HeaderMap::get` reads it.
        let two = headers(&["first", "second"]);
        assert_eq!(
            SessionHeaders::of(&two).session_id().unwrap(),
            Some("first")
        );
        let bad = headers(&["has space"]);
        let err = SessionHeaders::of(&bad).session_id().unwrap_err();
        assert_eq!(err.status, StatusCode::BAD_REQUEST);
    }
}
