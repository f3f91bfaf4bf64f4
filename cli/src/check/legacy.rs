//! Checks of every legacy (session-based) revision: session ids, the
//! version header, `Origin` and `Accept`.

use mcp_transport_core::ProtocolVersion;
use serde_json::{Value, json};

use super::detect::{LegacySession, initialize_body};
use super::wire::{Headers, Wire};
use super::{Check, Ctx, Outcome, id, polling, spec};
use mcp_http_edge::headers;

/// The `Origin` a DNS-rebinding page would send.
pub(crate) const EVIL_ORIGIN: &str = "http://evil.example";

fn ping(wire: &Wire) -> Value {
    json!({ "jsonrpc": "2.0", "id": wire.id(), "method": "ping" })
}

/// The session-based checks that apply at `rev`, in the order they run.
fn session_checks(rev: &ProtocolVersion) -> Vec<(&'static str, &'static str, spec::Spec)> {
    let mut v = vec![(
        id::BAD_REQUEST_WITHOUT_SESSION,
        T_NO_SESSION,
        spec::session_400(rev),
    )];
    if rev.has(|f| f.version_header) {
        v.push((
            id::BAD_REQUEST_MALFORMED_VERSION,
            T_VERSION,
            spec::version_400(rev),
        ));
    }
    v.push((
        id::NOT_ACCEPTABLE_WITHOUT_ACCEPT,
        T_ACCEPT,
        spec::accept(rev),
    ));
    if !rev.has(|f| f.sse_polling) {
        v.push((
            id::NO_PRIMING_FOR_OLDER,
            polling::T_NO_PRIMING,
            spec::before_response(rev),
        ));
    }
    v.push((id::NOT_FOUND_AFTER_DELETE, T_DELETE, spec::session_404(rev)));
    v
}

/// The legacy checks at `rev`.
pub(crate) async fn run(cx: &Ctx<'_>, rev: &ProtocolVersion) -> Vec<Check> {
    let wire = cx.wire;
    let mut out = vec![origin(wire, rev).await];
    let session = match LegacySession::open(wire, rev).await {
        Ok(s) => s,
        Err(e) => {
            let why = Outcome::Inconclusive(format!("no session could be opened: {e}"));
            for (check_id, title, spec) in session_checks(rev) {
                out.push(Check::new(check_id, rev, title, spec, why.clone()));
            }
            return out;
        }
    };
    for (check_id, title, spec) in session_checks(rev) {
        let outcome = match check_id {
            id::BAD_REQUEST_WITHOUT_SESSION => without_session(wire, &session).await,
            id::BAD_REQUEST_MALFORMED_VERSION => malformed_version(wire, &session).await,
            id::NOT_ACCEPTABLE_WITHOUT_ACCEPT => {
                without_accept(wire, rev, &session.headers()).await
            }
            id::NO_PRIMING_FOR_OLDER => polling::no_priming_for_older(wire, &session).await,
            _ => after_delete(wire, &session).await,
        };
        out.push(Check::new(check_id, rev, title, spec, outcome));
    }
    out
}

const T_ORIGIN: &str =
    "a request with a foreign Origin is refused (with 403 where the revision says so)";
const T_NO_SESSION: &str = "a request without MCP-Session-Id (other than initialize) gets 400";
const T_VERSION: &str = "a malformed MCP-Protocol-Version gets 400";
const T_ACCEPT: &str = "a POST without an Accept header gets 406 Not Acceptable";
const T_DELETE: &str = "after DELETE, a request naming the session gets 404";

async fn origin(wire: &Wire, rev: &ProtocolVersion) -> Check {
    let (spec, needs_403) = spec::origin(rev);
    let extra: Headers = vec![("origin", EVIL_ORIGIN.to_owned())];
    let outcome = match wire.post(&extra, &initialize_body(wire.id(), rev)).await {
        Err(e) => Outcome::Inconclusive(e),
        Ok(reply) => {
            let status = reply.status;
            if reply.is_success() {
                let leaked = LegacySession {
                    id: reply.header(headers::SESSION_ID),
                    version: rev.clone(),
                };
                drop(reply);
                leaked.close(wire).await;
            }
            origin_outcome(status, needs_403)
        }
    };
    Check::new(id::FORBIDDEN_BAD_ORIGIN, rev, T_ORIGIN, spec, outcome)
}

/// The verdict on the status a foreign `Origin` got.
pub(crate) fn origin_outcome(status: u16, needs_403: bool) -> Outcome {
    match status {
        403 => Outcome::Pass,
        200..=299 => Outcome::Fail(format!(
            "served a request with Origin: {EVIL_ORIGIN} (HTTP {status}): the Origin header is not validated"
        )),
        400..=499 if !needs_403 => Outcome::Pass,
        _ => Outcome::Fail(format!(
            "refused Origin: {EVIL_ORIGIN} with HTTP {status}, not 403 Forbidden"
        )),
    }
}

async fn without_session(wire: &Wire, s: &LegacySession) -> Outcome {
    if s.id.is_none() {
        return Outcome::NotApplicable(
            "the server assigned no session id, so it does not require one".into(),
        );
    }
    let extra: Headers = s
        .headers()
        .into_iter()
        .filter(|(n, _)| *n != headers::SESSION_ID)
        .collect();
    match wire.post(&extra, &ping(wire)).await {
        Err(e) => Outcome::Inconclusive(e),
        Ok(r) if r.status == 400 => Outcome::Pass,
        Ok(r) if r.is_success() => Outcome::Fail(format!(
            "served a ping without MCP-Session-Id (HTTP {}) although it assigns sessions",
            r.status
        )),
        Ok(r) => Outcome::Fail(format!(
            "answered a ping without MCP-Session-Id with HTTP {}, not 400",
            r.status
        )),
    }
}

async fn malformed_version(wire: &Wire, s: &LegacySession) -> Outcome {
    let mut extra: Headers = s
        .headers()
        .into_iter()
        .filter(|(n, _)| *n != headers::PROTOCOL_VERSION)
        .collect();
    extra.push((headers::PROTOCOL_VERSION, "not-a-version".to_owned()));
    match wire.post(&extra, &ping(wire)).await {
        Err(e) => Outcome::Inconclusive(e),
        Ok(r) if r.status == 400 => Outcome::Pass,
        Ok(r) => Outcome::Fail(format!(
            "answered a ping with MCP-Protocol-Version: not-a-version with HTTP {}, not 400",
            r.status
        )),
    }
}

/// POSTs a request without `Accept` (by hand: reqwest always adds one): a
/// `ping` with the session's headers on legacy revisions, a
/// `server/discover` with its metadata on 2026-07-28.
pub(crate) async fn without_accept(
    wire: &Wire,
    rev: &ProtocolVersion,
    session: &Headers,
) -> Outcome {
    let (mut headers, body) = if rev.is_modern() {
        super::detect::modern_request(wire.id(), "server/discover", json!({}), rev.as_str())
    } else {
        (session.clone(), ping(wire))
    };
    headers.push(("content-type", "application/json".to_owned()));
    match wire.raw_status(&headers, &body).await {
        Err(e) => Outcome::Inconclusive(format!("could not send a request without Accept: {e}")),
        Ok(406) => Outcome::Pass,
        Ok(status @ 200..=299) => Outcome::Fail(format!(
            "served a POST without an Accept header (HTTP {status}); the client MUST list both types, and a server enforces it with 406"
        )),
        Ok(status) => Outcome::Fail(format!(
            "refused a POST without an Accept header with HTTP {status}, not 406 Not Acceptable"
        )),
    }
}

/// The title of the `Accept` check.
pub(crate) const T_ACCEPT_CHECK: &str = T_ACCEPT;

async fn after_delete(wire: &Wire, s: &LegacySession) -> Outcome {
    if s.id.is_none() {
        return Outcome::NotApplicable(
            "the server assigned no session id: there is no session to end".into(),
        );
    }
    match wire.delete(&s.headers()).await {
        Err(e) => Outcome::Inconclusive(e),
        Ok(r) if r.status == 405 => Outcome::NotApplicable(
            "DELETE answered 405: the server does not let clients end sessions (the spec allows this)"
                .into(),
        ),
        Ok(r) if !r.is_success() => Outcome::Inconclusive(format!(
            "DELETE of a live session answered HTTP {}, so the session may not have ended",
            r.status
        )),
        Ok(_) => match wire.post(&s.headers(), &ping(wire)).await {
            Err(e) => Outcome::Inconclusive(e),
            Ok(r) if r.status == 404 => Outcome::Pass,
            Ok(r) => Outcome::Fail(format!(
                "after a successful DELETE, a ping naming the session got HTTP {}, not 404",
                r.status
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_verdicts() {
        assert_eq!(origin_outcome(403, true), Outcome::Pass);
        assert_eq!(origin_outcome(400, false), Outcome::Pass);
        assert!(origin_outcome(400, true).is_fail());
        assert!(origin_outcome(200, false).is_fail());
    }
}
