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

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Splits `host[:port]` (with `[v6]` literals) into lowercase host and port.
fn split_host_port(authority: &str) -> Option<(String, Option<&str>)> {
    let a = authority.trim();
    if a.is_empty() {
        return None;
    }
    let (host, port) = if a.starts_with('[') {
        let end = a.find(']')?;
        let rest = &a[end + 1..];
        let port = match rest {
            "" => None,
            r => Some(r.strip_prefix(':')?),
        };
        (&a[..=end], port)
    } else {
        match a.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (a, None),
        }
    };
    if let Some(p) = port
        && (p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    if host.is_empty() || host.contains(['/', '@', ' ']) {
        return None;
    }
    Some((host.to_ascii_lowercase(), port))
}

/// Whether a `Host` value is allowed: `allowed` entries are `host` (any
/// port) or `host:port`; `None` means the loopback names with any port.
pub(crate) fn host_allowed(host: &str, allowed: Option<&[String]>) -> bool {
    let Some((name, port)) = split_host_port(host) else {
        return false;
    };
    match allowed {
        None => LOOPBACK_HOSTS.contains(&name.as_str()),
        Some(list) => list.iter().any(|entry| match split_host_port(entry) {
            Some((n, None)) => n == name,
            Some((n, Some(p))) => n == name && Some(p) == port,
            None => false,
        }),
    }
}

/// Whether an `Origin` value is allowed: `allowed` entries are compared
/// case-insensitively as `scheme://host[:port]` (a trailing `/` ignored);
/// `None` means `http`/`https` with a loopback host and any port.
pub(crate) fn origin_allowed(origin: &str, allowed: Option<&[String]>) -> bool {
    let o = origin.trim().trim_end_matches('/');
    match allowed {
        Some(list) => list
            .iter()
            .any(|a| a.trim().trim_end_matches('/').eq_ignore_ascii_case(o)),
        None => {
            let lower = o.to_ascii_lowercase();
            let Some((scheme, authority)) = lower.split_once("://") else {
                return false;
            };
            (scheme == "http" || scheme == "https")
                && split_host_port(authority)
                    .is_some_and(|(h, _)| LOOPBACK_HOSTS.contains(&h.as_str()))
        }
    }
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

/// What an `Accept` header allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Accepts {
    /// `application/json` (or `application/*`, `*/*`).
    pub json: bool,
    /// `text/event-stream` (or `text/*`, `*/*`).
    pub sse: bool,
}

/// Reads every `Accept` header. Media ranges may carry parameters; a range
/// with `q=0` is "not acceptable" and ignored. Wildcards count: `*/*` as
/// both types, `application/*` as JSON, `text/*` as SSE.
pub(crate) fn accepts(headers: &HeaderMap) -> Accepts {
    let mut a = Accepts::default();
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for range in value.split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let refused = parts.any(|p| {
                let p = p.trim();
                p.len() > 2
                    && p[..2].eq_ignore_ascii_case("q=")
                    && p[2..].parse::<f32>().is_ok_and(|q| q <= 0.0)
            });
            if refused {
                continue;
            }
            match media.as_str() {
                "*/*" => {
                    a.json = true;
                    a.sse = true;
                }
                "application/json" | "application/*" => a.json = true,
                "text/event-stream" | "text/*" => a.sse = true,
                _ => {}
            }
        }
    }
    a
}

/// Whether `Content-Type` is `application/json` (parameters such as
/// `charset` allowed, case-insensitive).
pub(crate) fn is_json_content_type(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
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
        if session.features.version_header {
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

    #[test]
    fn hosts() {
        for ok in [
            "localhost",
            "localhost:8080",
            "LOCALHOST:1",
            "127.0.0.1",
            "127.0.0.1:3000",
            "[::1]",
            "[::1]:9",
        ] {
            assert!(host_allowed(ok, None), "{ok}");
        }
        for bad in [
            "evil.example.com",
            "localhost.evil.com",
            "127.0.0.2",
            "[::2]:1",
            "",
            "localhost:",
            "localhost:x",
            "user@localhost",
        ] {
            assert!(!host_allowed(bad, None), "{bad}");
        }
        let list = vec!["mcp.example.com".to_owned(), "10.0.0.1:8080".to_owned()];
        assert!(host_allowed("mcp.example.com:443", Some(&list)));
        assert!(host_allowed("10.0.0.1:8080", Some(&list)));
        assert!(!host_allowed("10.0.0.1:8081", Some(&list)));
        assert!(!host_allowed("localhost", Some(&list)));
    }

    #[test]
    fn origins() {
        for ok in [
            "http://localhost",
            "http://localhost:5173",
            "https://127.0.0.1:1",
            "http://[::1]:80",
        ] {
            assert!(origin_allowed(ok, None), "{ok}");
        }
        for bad in [
            "null",
            "http://evil.example.com",
            "file://localhost",
            "http://localhost.evil.com",
            "localhost",
        ] {
            assert!(!origin_allowed(bad, None), "{bad}");
        }
        let list = vec!["https://app.example.com".to_owned()];
        assert!(origin_allowed("https://APP.example.com/", Some(&list)));
        assert!(!origin_allowed("http://app.example.com", Some(&list)));
    }

    fn acc(v: &str) -> Accepts {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, v.parse().unwrap());
        accepts(&h)
    }

    #[test]
    fn accept_header() {
        assert_eq!(
            acc("application/json, text/event-stream"),
            Accepts {
                json: true,
                sse: true
            }
        );
        assert_eq!(
            acc("application/json;q=0.9,text/event-stream; charset=utf-8"),
            Accepts {
                json: true,
                sse: true
            }
        );
        assert_eq!(
            acc("*/*"),
            Accepts {
                json: true,
                sse: true
            }
        );
        assert_eq!(
            acc("application/json"),
            Accepts {
                json: true,
                sse: false
            }
        );
        assert_eq!(
            acc("application/json, text/event-stream;q=0"),
            Accepts {
                json: true,
                sse: false
            }
        );
        assert_eq!(acc("text/html"), Accepts::default());
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
