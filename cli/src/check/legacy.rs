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
    use super::super::test_fake::{self, bare, session};
    use super::*;
    use http::{Method, StatusCode};
    use mcp_test_support::fake::{Fake, status};
    use mcp_test_support::server::Seen;

    /// A fake server answering `answer(seen)` as a bare status.
    async fn serving(answer: impl Fn(&Seen) -> u16 + Send + Sync + 'static) -> (Fake, Wire) {
        test_fake::serving(move |seen| bare(answer(seen))).await
    }

    fn reason(o: &Outcome) -> &str {
        o.reason().unwrap_or_default()
    }

    #[tokio::test]
    async fn a_request_without_the_session_id_must_get_400() {
        for (code, pass, says) in [
            (400, true, ""),
            (
                200,
                false,
                "served a ping without MCP-Session-Id (HTTP 200)",
            ),
            (404, false, "with HTTP 404, not 400"),
        ] {
            let (fake, wire) = serving(move |_| code).await;
            let o = without_session(&wire, &session(Some("s1"))).await;
            assert_eq!(o == Outcome::Pass, pass, "{code}: {o:?}");
            assert!(reason(&o).contains(says), "{o:?}");
            let seen = fake.seen();
            assert_eq!(seen.len(), 1);
            assert_eq!(seen[0].header(headers::SESSION_ID), None);
            assert_eq!(
                seen[0].header(headers::PROTOCOL_VERSION),
                Some("2025-11-25")
            );
        }
        let (fake, wire) = serving(|_| 400).await;
        let o = without_session(&wire, &session(None)).await;
        assert!(matches!(o, Outcome::NotApplicable(_)), "{o:?}");
        assert!(fake.seen().is_empty());
    }

    #[tokio::test]
    async fn a_malformed_version_header_must_get_400() {
        for (code, pass) in [(400, true), (200, false), (404, false)] {
            let (fake, wire) = serving(move |_| code).await;
            let o = malformed_version(&wire, &session(Some("s1"))).await;
            assert_eq!(o == Outcome::Pass, pass, "{code}: {o:?}");
            let seen = fake.seen();
            assert_eq!(
                seen[0].header(headers::PROTOCOL_VERSION),
                Some("not-a-version")
            );
            assert_eq!(seen[0].header(headers::SESSION_ID), Some("s1"));
        }
    }

    #[tokio::test]
    async fn a_post_without_accept_must_get_406() {
        for (code, pass, says) in [
            (406, true, ""),
            (
                200,
                false,
                "served a POST without an Accept header (HTTP 200)",
            ),
            (400, false, "with HTTP 400, not 406"),
        ] {
            let (fake, wire) = serving(move |_| code).await;
            let o = without_accept(&wire, &ProtocolVersion::V2025_11_25, &vec![]).await;
            assert_eq!(o == Outcome::Pass, pass, "{code}: {o:?}");
            assert!(reason(&o).contains(says), "{o:?}");
            let seen = fake.seen();
            assert_eq!(seen[0].header("accept"), None);
            assert_eq!(seen[0].rpc_method(), Some("ping"));
        }
        // On 2026-07-28 the request is a server/discover.
        let (fake, wire) = serving(|_| 406).await;
        let o = without_accept(&wire, &ProtocolVersion::V2026_07_28, &vec![]).await;
        assert_eq!(o, Outcome::Pass);
        assert_eq!(fake.seen()[0].rpc_method(), Some("server/discover"));
    }

    #[tokio::test]
    async fn after_delete_the_session_must_be_unknown() {
        let answer = |delete: u16, ping: u16| {
            move |s: &Seen| {
                if s.method == Method::DELETE {
                    delete
                } else {
                    ping
                }
            }
        };
        let (fake, wire) = serving(answer(200, 404)).await;
        assert_eq!(
            after_delete(&wire, &session(Some("s1"))).await,
            Outcome::Pass
        );
        let methods: Vec<Method> = fake.seen().into_iter().map(|s| s.method).collect();
        assert_eq!(methods, [Method::DELETE, Method::POST]);
        let (_fake, wire) = serving(answer(200, 200)).await;
        let o = after_delete(&wire, &session(Some("s1"))).await;
        assert!(
            reason(&o).contains("got HTTP 200, not 404") && o.is_fail(),
            "{o:?}"
        );
        let (_fake, wire) = serving(answer(405, 404)).await;
        let o = after_delete(&wire, &session(Some("s1"))).await;
        assert!(matches!(o, Outcome::NotApplicable(_)), "{o:?}");
        let (fake, wire) = serving(answer(500, 404)).await;
        let o = after_delete(&wire, &session(Some("s1"))).await;
        assert!(matches!(o, Outcome::Inconclusive(_)), "{o:?}");
        assert_eq!(fake.seen().len(), 1, "no ping after a failed DELETE");
        let (fake, wire) = serving(answer(200, 404)).await;
        let o = after_delete(&wire, &session(None)).await;
        assert!(matches!(o, Outcome::NotApplicable(_)), "{o:?}");
        assert!(fake.seen().is_empty());
    }

    #[tokio::test]
    async fn a_foreign_origin_must_be_refused_and_a_leaked_session_is_closed() {
        let v = ProtocolVersion::V2025_11_25;
        let (fake, wire) = serving(|_| 403).await;
        let c = origin(&wire, &v).await;
        assert_eq!(c.outcome, Outcome::Pass);
        let seen = fake.seen();
        assert_eq!(seen[0].header("origin"), Some(EVIL_ORIGIN));
        assert_eq!(seen[0].rpc_method(), Some("initialize"));
        // Served: a failure, and the session it opened is ended.
        let (fake, wire) = test_fake::serving(|s| {
            let mut r = status(StatusCode::OK, "");
            if s.method == Method::POST {
                r.headers_mut()
                    .insert(headers::SESSION_ID, http::HeaderValue::from_static("leak"));
            }
            r
        })
        .await;
        let c = origin(&wire, &v).await;
        assert!(c.outcome.is_fail(), "{c:?}");
        let seen = fake.seen();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[1].method, Method::DELETE);
        assert_eq!(seen[1].header(headers::SESSION_ID), Some("leak"));
    }

    #[test]
    fn origin_verdicts() {
        assert_eq!(origin_outcome(403, true), Outcome::Pass);
        assert_eq!(origin_outcome(400, false), Outcome::Pass);
        assert_eq!(origin_outcome(499, false), Outcome::Pass);
        assert!(origin_outcome(400, true).is_fail());
        assert!(origin_outcome(500, false).is_fail());
        assert!(reason(&origin_outcome(200, false)).contains("not validated"));
        assert!(reason(&origin_outcome(299, true)).contains("not validated"));
        assert!(reason(&origin_outcome(400, true)).contains("HTTP 400, not 403"));
    }

    #[test]
    fn each_revision_runs_the_session_checks_it_has() {
        let ids = |v: ProtocolVersion| -> Vec<&str> {
            session_checks(&v)
                .into_iter()
                .map(|(id, _, _)| id)
                .collect()
        };
        assert_eq!(
            ids(ProtocolVersion::V2025_03_26),
            [
                id::BAD_REQUEST_WITHOUT_SESSION,
                id::NOT_ACCEPTABLE_WITHOUT_ACCEPT,
                id::NO_PRIMING_FOR_OLDER,
                id::NOT_FOUND_AFTER_DELETE
            ]
        );
        assert_eq!(
            ids(ProtocolVersion::V2025_06_18),
            [
                id::BAD_REQUEST_WITHOUT_SESSION,
                id::BAD_REQUEST_MALFORMED_VERSION,
                id::NOT_ACCEPTABLE_WITHOUT_ACCEPT,
                id::NO_PRIMING_FOR_OLDER,
                id::NOT_FOUND_AFTER_DELETE
            ]
        );
        assert_eq!(
            ids(ProtocolVersion::V2025_11_25),
            [
                id::BAD_REQUEST_WITHOUT_SESSION,
                id::BAD_REQUEST_MALFORMED_VERSION,
                id::NOT_ACCEPTABLE_WITHOUT_ACCEPT,
                id::NOT_FOUND_AFTER_DELETE
            ]
        );
    }
}
