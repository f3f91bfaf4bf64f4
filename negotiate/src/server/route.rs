//! The routing decision, as a pure function: which era's engine serves one
//! HTTP request.
//!
//! 2026-07-28 *Versioning*, "Compatibility Matrix": "A dual-era server
//! selects its behavior from how the client opens: A request carrying modern
//! per-request `_meta` is served statelessly according to this revision. An
//! `initialize` request selects legacy semantics, scoped to … the session
//! (HTTP), as specified by the negotiated legacy protocol version."
//!
//! | request | engine |
//! | --- | --- |
//! | POST whose `params._meta` names `io.modelcontextprotocol/protocolVersion` | modern, even with a stray `Mcp-Session-Id` (a modern request is "served statelessly"; the 2026-07-28 engine ignores the header, and a 404 for an unknown session would send a dual-era client to the HTTP+SSE fallback) |
//! | carries `Mcp-Session-Id` | legacy (the session's own revision decides everything after) |
//! | POST whose body is a JSON array (a 2025-03-26 batch) | legacy |
//! | POST `initialize` without modern `_meta` | legacy |
//! | any other request whose `MCP-Protocol-Version` header names a modern version | modern |
//! | anything else | legacy (it answers as a legacy server would: 400 without a session) |
//!
//! When only one era is configured, everything goes to it: a legacy-only
//! endpoint answers a modern request "the way a legacy server of its newest
//! revision would", and a modern-only one answers `initialize` with an error
//! naming its versions.

use http::Method;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::Message;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The era engine chosen for a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The session-based engine (2025-03-26, 2025-06-18, 2025-11-25).
    Legacy,
    /// The stateless engine (2026-07-28).
    Modern,
}

/// What routing looks at.
#[derive(Clone, Copy, Debug)]
pub struct Probe<'a> {
    /// The HTTP method.
    pub method: &'a Method,
    /// Whether an `Mcp-Session-Id` header is present.
    pub has_session: bool,
    /// The `MCP-Protocol-Version` header, if any.
    pub version_header: Option<&'a str>,
    /// The POST body, if any.
    pub body: Option<&'a [u8]>,
}

/// The part of a body routing reads: `method` and whether `_meta` carries
/// the modern protocol-version key. Payloads stay unparsed.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<Meta<'a>>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default, borrow)]
    version: Option<&'a RawValue>,
}

/// What the body says about its era.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BodyKind {
    Batch,
    Initialize,
    ModernMeta,
    Other,
}

fn body_kind(body: &[u8]) -> BodyKind {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return BodyKind::Batch;
    }
    let Ok(env) = serde_json::from_slice::<Envelope<'_>>(body) else {
        return BodyKind::Other;
    };
    kind_of(env.method.as_deref(), env.params)
}

/// The same read from a message already parsed (a request or a
/// notification: the members routing reads are the ones the lenient
/// envelope reads); `None` for a response, which routing reads from the
/// body.
fn message_kind(message: &Message) -> Option<BodyKind> {
    match message {
        Message::Request(r) => Some(kind_of(Some(&r.method), r.params.as_deref())),
        Message::Notification(n) => Some(kind_of(Some(&n.method), n.params.as_deref())),
        Message::Response(_) => None,
    }
}

fn kind_of(method: Option<&str>, params: Option<&RawValue>) -> BodyKind {
    let modern = params
        // Parsed only when the text may name `_meta`: it appears in it, or
        // an escape does (`"\u005fmeta"`). A legacy request carries none
        // mostly, and the parse would scan all its params.
        .filter(|p| p.get().contains("_meta") || p.get().contains('\\'))
        .and_then(|p| serde_json::from_str::<Params<'_>>(p.get()).ok())
        .and_then(|p| p.meta)
        .and_then(|m| m.version)
        .is_some();
    // Modern `_meta` wins, even on `initialize`: such a request is a modern
    // request for a method 2026-07-28 removed, and gets its 404.
    if modern {
        BodyKind::ModernMeta
    } else if method == Some("initialize") {
        BodyKind::Initialize
    } else {
        BodyKind::Other
    }
}

/// Chooses the engine for one request, given which eras are configured.
/// At least one of `has_legacy` / `has_modern` must be true.
pub fn route(probe: &Probe<'_>, has_legacy: bool, has_modern: bool) -> Target {
    route_parsed(probe, None, has_legacy, has_modern)
}

/// [`route()`], reading the body's era from `message` when the body has
/// already been parsed into it (the same decision: see `message_kind`).
pub fn route_parsed(
    probe: &Probe<'_>,
    message: Option<&Message>,
    has_legacy: bool,
    has_modern: bool,
) -> Target {
    match (has_legacy, has_modern) {
        (true, false) => return Target::Legacy,
        (false, true) => return Target::Modern,
        _ => {}
    }
    let modern_header = probe
        .version_header
        .is_some_and(|v| ProtocolVersion::parse(v.trim()).is_modern());
    // A parsed request (or notification) other than `initialize`, with a
    // modern version header and no session, ends at the modern engine
    // whatever its `_meta` says (every branch below does): `_meta` is not
    // read. The stateless request's common case; reading it was 4 % of
    // the request's instructions (docs/PERFORMANCE.md, session 10).
    let parsed_method = match message {
        Some(Message::Request(r)) => Some(r.method.as_str()),
        Some(Message::Notification(n)) => Some(n.method.as_str()),
        _ => None,
    };
    if modern_header
        && !probe.has_session
        && *probe.method == Method::POST
        && parsed_method.is_some_and(|m| m != "initialize")
    {
        return Target::Modern;
    }
    let kind = (*probe.method == Method::POST)
        .then(|| match message.and_then(message_kind) {
            Some(kind) => Some(kind),
            None => probe.body.map(body_kind),
        })
        .flatten();
    if kind == Some(BodyKind::ModernMeta) {
        return Target::Modern;
    }
    if probe.has_session || matches!(kind, Some(BodyKind::Batch | BodyKind::Initialize)) {
        return Target::Legacy;
    }
    if modern_header {
        Target::Modern
    } else {
        Target::Legacy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post<'a>(body: &'a str, header: Option<&'a str>, session: bool) -> Probe<'a> {
        Probe {
            method: &Method::POST,
            has_session: session,
            version_header: header,
            body: Some(body.as_bytes()),
        }
    }

    const MODERN: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;

    #[test]
    fn dual_era_routes_by_how_the_client_opens() {
        assert_eq!(
            route(&post(MODERN, Some("2026-07-28"), false), true, true),
            Target::Modern
        );
        assert_eq!(
            route(&post(MODERN, None, false), true, true),
            Target::Modern
        );
        assert_eq!(route(&post(INIT, None, false), true, true), Target::Legacy);
        // `_meta` spelled with an escape is still `_meta`.
        let escaped = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"\u005fmeta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(
            route(&post(escaped, None, false), true, true),
            Target::Modern
        );
        // initialize carrying modern _meta is a modern request (for a removed method).
        let modern_init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(
            route(&post(modern_init, Some("2026-07-28"), false), true, true),
            Target::Modern
        );
        // A modern request with a stray session id is still modern
        // (issue 13, item 5); without modern `_meta` a session is legacy.
        assert_eq!(route(&post(MODERN, None, true), true, true), Target::Modern);
        let bare_call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert_eq!(
            route(&post(bare_call, Some("2026-07-28"), true), true, true),
            Target::Legacy
        );
        assert_eq!(route(&post("[]", None, false), true, true), Target::Legacy);
        // No _meta, but a modern header: the modern engine explains what is missing.
        let bare = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert_eq!(
            route(&post(bare, Some("2026-07-28"), false), true, true),
            Target::Modern
        );
        assert_eq!(
            route(&post(bare, Some("2025-06-18"), false), true, true),
            Target::Legacy
        );
        assert_eq!(
            route(&post("{not json", None, false), true, true),
            Target::Legacy
        );
        // An unknown future version is modern too: the modern engine answers -32022.
        assert_eq!(
            route(&post(bare, Some("2030-01-01"), false), true, true),
            Target::Modern
        );
    }

    #[test]
    fn get_and_delete() {
        for m in [Method::GET, Method::DELETE] {
            let p = |session, header| Probe {
                method: &m,
                has_session: session,
                version_header: header,
                body: None,
            };
            assert_eq!(route(&p(true, None), true, true), Target::Legacy);
            assert_eq!(
                route(&p(false, Some("2026-07-28")), true, true),
                Target::Modern
            );
            assert_eq!(route(&p(false, None), true, true), Target::Legacy);
        }
    }

    #[test]
    fn a_parsed_message_routes_as_its_body() {
        let bodies = [
            MODERN,
            INIT,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"other":1}}}"#,
        ];
        for body in bodies {
            let message = match mcp_transport_core::jsonrpc::parse_body(body.as_bytes(), false) {
                Ok(mcp_transport_core::jsonrpc::Body::Single(m)) => m,
                other => panic!("{body}: {other:?}"),
            };
            for (header, session) in [
                (None, false),
                (Some("2026-07-28"), false),
                (Some("2026-07-28"), true),
                (Some("2025-11-25"), false),
                (None, true),
            ] {
                let probe = post(body, header, session);
                assert_eq!(
                    route_parsed(&probe, Some(&message), true, true),
                    route(&probe, true, true),
                    "{body} {header:?} {session}"
                );
            }
        }
    }

    /// `route_parsed` reads the era from the parsed message, not from the
    /// body: a probe that carries no body still routes by its message.
    #[test]
    fn a_parsed_message_is_read_without_the_body() {
        let no_body = Probe {
            method: &Method::POST,
            has_session: false,
            version_header: None,
            body: None,
        };
        for (body, target) in [(MODERN, Target::Modern), (INIT, Target::Legacy)] {
            let Ok(mcp_transport_core::jsonrpc::Body::Single(message)) =
                mcp_transport_core::jsonrpc::parse_body(body.as_bytes(), false)
            else {
                panic!("{body}");
            };
            assert_eq!(
                route_parsed(&no_body, Some(&message), true, true),
                target,
                "{body}"
            );
        }
        // With a session, only modern `_meta` in the message overrides it.
        let with_session = Probe {
            has_session: true,
            ..no_body
        };
        let Ok(mcp_transport_core::jsonrpc::Body::Single(modern)) =
            mcp_transport_core::jsonrpc::parse_body(MODERN.as_bytes(), false)
        else {
            panic!("{MODERN}");
        };
        assert_eq!(
            route_parsed(&with_session, Some(&modern), true, true),
            Target::Modern
        );
    }

    #[test]
    fn single_era_takes_everything() {
        assert_eq!(
            route(&post(MODERN, None, false), true, false),
            Target::Legacy
        );
        assert_eq!(route(&post(INIT, None, false), false, true), Target::Modern);
    }

    /// A JSON array is a batch, legacy whatever the version header says
    /// (2026-07-28 has no batches), with or without whitespace before it.
    #[test]
    fn a_batch_is_legacy_even_with_a_modern_header() {
        let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#;
        let spaced = " \r\n\t[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}]";
        for body in [batch, spaced] {
            assert_eq!(
                route(&post(body, Some("2026-07-28"), false), true, true),
                Target::Legacy,
                "{body:?}"
            );
        }
    }
}
