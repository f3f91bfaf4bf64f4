//! `mcp-compat check-client -- CMD ...`: a client program (the peer client
//! contract: URL, scenario, revision → one JSON outcome line) run against
//! our reference server at each revision, each scenario on a fresh server
//! behind the matrix's wire recorder, and checked on the wire: the
//! counterpart of `check-server`.
//!
//! Beyond each scenario's outcome: the version header, the 2025-11-25
//! resumption rules, re-initializing after a 404 (the server forgets the
//! session mid-run, `forget`), dropping a replayed event (the
//! server replays the `Last-Event-ID` event itself), failing as the
//! versioning page's matrix says against a server of the other era, and
//! with `--dual-era NAME` falling back to `initialize`. Every check has the
//! [`Level`] of the sentence it cites, for `--fail-on`.

use std::path::Path;
use std::time::Duration;

use mcp_http_edge::faults::{Fault, Faults};
use mcp_http_edge::headers;
use mcp_transport_core::ProtocolVersion as V;
use serde::Serialize;

use super::super::harness::{DISCONNECT_RETRY_MS, Observed};
use super::super::wire::Exchange;
use super::super::{ClientKind, ServerKind};
use super::outcome::PeerObserved;
use super::predict::{ClientModel, ServerMode, predict};
use super::process::run_contract_client;
use super::scenario::PeerScenario;
use crate::check::junit::{Case, CaseOutcome};
use crate::check::{FailOn, Level};

/// One check at one revision.
#[derive(Clone, Debug, Serialize)]
pub struct ClientCheck {
    /// The revision.
    pub revision: String,
    /// The check's name.
    pub check: String,
    /// `pass`, `fail` or `n/a`.
    pub result: String,
    /// The RFC 2119 keyword of the sentence it checks (or this project's
    /// policy).
    pub level: Level,
    /// What was seen.
    pub detail: String,
    /// The spec sentence it checks.
    pub spec: &'static str,
}

impl ClientCheck {
    /// Whether it failed at `fail_on`'s level or a stricter one.
    pub fn fails_at(&self, fail_on: FailOn) -> bool {
        self.result == "fail" && fail_on.counts(self.level)
    }
}

const VERSION_HEADER: &str = "2025-06-18 Transports, \"Protocol Version Header\": \"the client MUST include the MCP-Protocol-Version: <protocol-version> HTTP header on all subsequent requests to the MCP server\"";
const RESUME_GET: &str = "2025-11-25 Transports, \"Resumability and Redelivery\": \"the client SHOULD ... issue an HTTP GET to the MCP endpoint, and include the Last-Event-ID header to indicate the last event ID it received\"";
const RETRY: &str = "2025-11-25 Transports, \"Sending Messages to the Server\" 6 (SEP-1699): \"The client MUST respect the retry field, waiting the given number of milliseconds before attempting to reconnect\"";
const REINIT: &str = "2025-03-26 .. 2025-11-25 Transports, \"Session Management\" 4: \"When a client receives HTTP 404 in response to a request containing an Mcp-Session-Id, it MUST start a new session by sending a new InitializeRequest without a session ID attached\"";
const DEDUPE: &str = "2025-11-25 Transports, \"Resumability and Redelivery\": event IDs \"MUST be globally unique across all streams within that session\" and serve as a cursor; a server that replays the Last-Event-ID event itself must not make the client process a message twice (project policy: the spec has no client-side keyword)";
const ERA_MISMATCH: &str = "2026-07-28 Versioning, \"Compatibility Matrix\": Modern client, Legacy server: \"Fails ... the client then surfaces an actionable error to the user\"; Legacy client, Modern server: \"Fails ... Legacy clients have no fall-forward mechanism\" (project policy: no keyword; the client must report the failure, not a success or a hang)";
const FALL_BACK: &str = "2026-07-28 Streamable HTTP, \"Backward Compatibility\": \"On 400 Bad Request, the client SHOULD inspect the response body before falling back\"; \"If the body is empty or is not a recognized modern JSON-RPC error, fall back to initialize and continue with the legacy version\"";
const STAY_MODERN: &str = "2026-07-28 Versioning, \"Compatibility Matrix\": Dual-era client, Modern server: \"Works ... the first modern request succeeds or returns a modern error. The client stays modern.\"";
const NO_CANCEL: &str = "Transports, \"Resumability and Redelivery\": \"Disconnection SHOULD NOT be interpreted as the client cancelling its request\"; \"To cancel, the client SHOULD explicitly send an MCP CancelledNotification\" (so none is expected after a server-initiated close)";

fn server_for(rev: &V) -> ServerKind {
    match rev.as_str() {
        "2025-03-26" => ServerKind::S0326,
        "2025-06-18" => ServerKind::S0618,
        "2026-07-28" => ServerKind::S0728,
        _ => ServerKind::S1125,
    }
}

fn check(rev: &V, name: &str, ok: Option<bool>, detail: String, spec: &'static str) -> ClientCheck {
    check_at(rev.as_str(), name, level_of(name), ok, detail, spec)
}

/// The level of each check, from the keyword of the sentence it cites.
fn level_of(name: &str) -> Level {
    match name {
        // "The client MUST support both these cases" (JSON and SSE).
        "call" | "version header" | "honours retry" | "re-initializes after 404" => Level::Must,
        "resumes by GET with Last-Event-ID"
        | "disconnect is not a cancel"
        | "disconnect"
        | "falls back to initialize" => Level::Should,
        // Elicitation is a capability a client MAY declare.
        "input" => Level::May,
        _ => Level::Policy,
    }
}

fn check_at(
    revision: &str,
    name: &str,
    level: Level,
    ok: Option<bool>,
    detail: String,
    spec: &'static str,
) -> ClientCheck {
    ClientCheck {
        level,
        revision: revision.to_owned(),
        check: name.to_owned(),
        result: match ok {
            Some(true) => "pass",
            Some(false) => "fail",
            None => "n/a",
        }
        .to_owned(),
        detail,
        spec,
    }
}

/// One run of the client program against one of our servers.
struct Run {
    negotiated: Option<V>,
    observed: PeerObserved,
    wire: Vec<Exchange>,
    /// The session the forgetting proxy terminated, if it was in front.
    forgotten: Option<String>,
}

/// Where a run goes.
#[derive(Clone, Copy)]
struct Target {
    server: ServerKind,
    faults: Faults,
    /// Put [`super::forget`] in front of the server.
    forget: bool,
}

impl Target {
    fn plain(server: ServerKind) -> Target {
        Target {
            server,
            faults: Faults::NONE,
            forget: false,
        }
    }
}

/// Runs the client program `argv` once: scenario `sc` with `{revision}`
/// set to `revision`, against a fresh server behind the wire recorder.
async fn run_one(
    argv: &[String],
    root: &Path,
    target: Target,
    sc: PeerScenario,
    revision: &str,
) -> Result<Run, String> {
    let harness = super::super::run::spawn_server(
        ClientKind::All,
        target.server,
        sc.scenario(),
        target.faults,
    )
    .await
    .map_err(|e| format!("cannot start our server: {e}"))?;
    let proxy = if target.forget {
        Some(
            super::forget::start(harness.addr)
                .await
                .map_err(|e| format!("cannot start the forgetting proxy: {e}"))?,
        )
    } else {
        None
    };
    let addr = proxy.as_ref().map_or(harness.addr, |p| p.addr);
    let url = format!("http://{addr}/mcp");
    let (negotiated, observed) = run_contract_client(argv, &url, sc.name(), revision, root).await;
    // Let a request still in flight reach the recorder.
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(Run {
        negotiated,
        observed,
        wire: harness.wire.exchanges(),
        forgotten: proxy.and_then(|p| p.forgotten()),
    })
}

fn revision_text(v: &Option<V>) -> &str {
    v.as_ref().map(V::as_str).unwrap_or("no revision")
}

/// A run's outcome against `model`'s prediction on `target`, as the check
/// `name` (n/a when the client said so).
fn predicted(
    label: &str,
    name: &str,
    model: &ClientModel,
    target: Target,
    sc: PeerScenario,
    run: &Run,
    spec: Option<&'static str>,
) -> ClientCheck {
    let prediction = predict(model, &target.server.revisions(), ServerMode::FULL, sc);
    let spec = spec.unwrap_or(prediction.spec);
    match &run.observed {
        PeerObserved::NotExpressible(why) => {
            check_at(label, name, level_of(name), None, why.clone(), spec)
        }
        PeerObserved::Ran(o) => check_at(
            label,
            name,
            level_of(name),
            Some(prediction.matches(&run.negotiated, o)),
            format!("{o:?} on {}", revision_text(&run.negotiated)),
            spec,
        ),
    }
}

/// Runs every check of the client `argv` (with `{url}`, `{scenario}`,
/// `{revision}`) at each of `revisions`, then the dual-era checks when
/// `dual_era` names the `{revision}` value that makes it dual-era; the
/// checks, in order.
pub async fn run(
    argv: &[String],
    revisions: &[V],
    dual_era: Option<&str>,
    root: &Path,
) -> Vec<ClientCheck> {
    let mut out = Vec::new();
    for rev in revisions {
        let server = server_for(rev);
        let model = ClientModel {
            offers: vec![rev.clone()],
            accepts: vec![rev.clone()],
        };
        for sc in PeerScenario::ALL {
            let target = Target::plain(server);
            let run = match run_one(argv, root, target, sc, rev.as_str()).await {
                Ok(r) => r,
                Err(e) => {
                    out.push(check(rev, sc.name(), Some(false), e, ""));
                    continue;
                }
            };
            out.push(predicted(
                rev.as_str(),
                sc.name(),
                &model,
                target,
                sc,
                &run,
                None,
            ));
            if sc == PeerScenario::Call && rev.as_str() >= "2025-06-18" {
                out.push(match &run.observed {
                    PeerObserved::NotExpressible(why) => {
                        check(rev, "version header", None, why.clone(), VERSION_HEADER)
                    }
                    PeerObserved::Ran(_) => version_header(rev, &run.wire),
                });
            }
            if sc == PeerScenario::Disconnect && rev.has(|f| f.sse_polling) {
                if matches!(run.observed, PeerObserved::NotExpressible(_)) {
                    continue;
                }
                out.extend(resumption(rev, &run.wire));
            }
        }
        if rev.has(|f| f.sessions) {
            out.push(reinitializes(argv, root, rev, server).await);
        }
        if rev.has(|f| f.sse_polling) {
            out.push(dedupes(argv, root, rev, server).await);
        }
        out.push(era_mismatch(argv, root, rev, &model).await);
    }
    if let Some(name) = dual_era {
        out.extend(dual(argv, root, name).await);
    }
    out
}

/// On the wire: the server's 404 to a request naming the forgotten
/// session `old` (not the proxy's `DELETE` of it), and the first
/// `initialize` without a session id sent after it, if any.
fn reinit_after_404<'a>(
    wire: &'a [Exchange],
    old: &str,
) -> Option<(&'a Exchange, Option<&'a Exchange>)> {
    let not_found = wire.iter().find(|e| {
        e.method != http::Method::DELETE
            && e.header(headers::SESSION_ID) == Some(old)
            && e.status == Some(http::StatusCode::NOT_FOUND)
    })?;
    let reinit = wire.iter().find(|e| {
        e.started >= not_found.started
            && e.method == http::Method::POST
            && e.rpc_method().as_deref() == Some("initialize")
            && e.header(headers::SESSION_ID).is_none()
    });
    Some((not_found, reinit))
}

/// "call" against a server that forgets the session before the second
/// `tools/call`: the call must still be answered, by way of a new
/// `initialize` without a session id after the server's 404.
async fn reinitializes(argv: &[String], root: &Path, rev: &V, server: ServerKind) -> ClientCheck {
    const NAME: &str = "re-initializes after 404";
    let target = Target {
        forget: true,
        ..Target::plain(server)
    };
    let run = match run_one(argv, root, target, PeerScenario::Call, rev.as_str()).await {
        Ok(r) => r,
        Err(e) => return check(rev, NAME, Some(false), e, REINIT),
    };
    if let PeerObserved::NotExpressible(why) = &run.observed {
        return check(rev, NAME, None, why.clone(), REINIT);
    }
    let Some(old) = run.forgotten.clone() else {
        return check(
            rev,
            NAME,
            None,
            format!(
                "the client made no second tools/call on its session, so it was not forgotten ({:?})",
                run.observed
            ),
            REINIT,
        );
    };
    let (ok, detail) = reinit_verdict(&run.wire, &old, &run.observed);
    check(rev, NAME, Some(ok), detail, REINIT)
}

/// The verdict of "re-initializes after 404" on the wire of a run whose
/// session `old` was forgotten: a new session after the server's 404, and
/// the call answered.
fn reinit_verdict(wire: &[Exchange], old: &str, observed: &PeerObserved) -> (bool, String) {
    let Some((not_found, reinit)) = reinit_after_404(wire, old) else {
        return (
            false,
            "the server's 404 for the forgotten session is not on the wire".into(),
        );
    };
    let answered = matches!(observed, PeerObserved::Ran(Observed::Works(_)));
    let detail = match (reinit, answered) {
        (Some(_), true) => {
            "after the 404 a new initialize without Mcp-Session-Id, then the call answered"
                .to_owned()
        }
        (Some(_), false) => format!("re-initialized after the 404, but {observed:?}"),
        (None, _) => format!(
            "no initialize after the 404 ({} requests after it); the client reported {observed:?}",
            wire.iter()
                .filter(|e| e.started > not_found.started)
                .count(),
        ),
    };
    (reinit.is_some() && answered, detail)
}

/// "disconnect" against a server that replays the `Last-Event-ID` event
/// itself ([`Fault::ReplayInclusive`]): the client must still see each
/// progress once.
async fn dedupes(argv: &[String], root: &Path, rev: &V, server: ServerKind) -> ClientCheck {
    const NAME: &str = "drops a replayed event";
    let target = Target {
        faults: Faults::only(Fault::ReplayInclusive),
        ..Target::plain(server)
    };
    let run = match run_one(argv, root, target, PeerScenario::Disconnect, rev.as_str()).await {
        Ok(r) => r,
        Err(e) => return check(rev, NAME, Some(false), e, DEDUPE),
    };
    if let PeerObserved::NotExpressible(why) = &run.observed {
        return check(rev, NAME, None, why.clone(), DEDUPE);
    }
    if !replayed(&run.wire) {
        return check(
            rev,
            NAME,
            None,
            format!(
                "no resume on the wire got a replayed message, so there was nothing to drop ({:?})",
                run.observed
            ),
            DEDUPE,
        );
    }
    let ok = matches!(&run.observed, PeerObserved::Ran(Observed::Works(_)));
    check(
        rev,
        NAME,
        Some(ok),
        format!(
            "the server replayed the Last-Event-ID event; the client reported {:?}",
            run.observed
        ),
        DEDUPE,
    )
}

/// Whether a resume on the wire got its cursor's message again: a GET
/// with `Last-Event-ID` whose stream carries a message under that id.
fn replayed(wire: &[Exchange]) -> bool {
    wire.iter().any(|e| {
        e.method == http::Method::GET
            && e.header(headers::LAST_EVENT_ID).is_some_and(|last| {
                e.sse_ids()
                    .iter()
                    .any(|(id, data)| id == last && !data.trim().is_empty())
            })
    })
}

/// "call" at `rev` against a server of the other era only: it must fail
/// with no mutual revision, as the versioning page's matrix says.
async fn era_mismatch(argv: &[String], root: &Path, rev: &V, model: &ClientModel) -> ClientCheck {
    const NAME: &str = "fails against the other era";
    let other = if rev.is_modern() {
        ServerKind::S1125
    } else {
        ServerKind::S0728
    };
    let target = Target::plain(other);
    match run_one(argv, root, target, PeerScenario::Call, rev.as_str()).await {
        Ok(run) => {
            let mut c = predicted(
                rev.as_str(),
                NAME,
                model,
                target,
                PeerScenario::Call,
                &run,
                Some(ERA_MISMATCH),
            );
            c.detail = format!("against a {} server: {}", other, c.detail);
            c
        }
        Err(e) => check(rev, NAME, Some(false), e, ERA_MISMATCH),
    }
}

/// With `{revision}` = `name` the client is dual-era: against a legacy-only
/// server it falls back to `initialize` (after its modern request got a
/// 4xx), against a modern one it stays modern.
/// A passed "falls back to initialize" fails unless the client's first
/// request was a modern one, refused with 4xx: falling back means trying
/// the modern request first.
fn modern_first(mut c: ClientCheck, wire: &[Exchange]) -> ClientCheck {
    if c.result != "pass" {
        return c;
    }
    let first = wire.iter().find(|e| e.method == http::Method::POST);
    let tried_modern = first.is_some_and(|e| {
        e.rpc_method().as_deref() != Some("initialize")
            && e.status.is_some_and(|s| s.is_client_error())
    });
    if !tried_modern {
        c.result = "fail".into();
        c.detail = format!(
            "{}; but its first request was {:?}, not a modern request refused with 4xx",
            c.detail,
            first.and_then(Exchange::rpc_method)
        );
    }
    c
}

async fn dual(argv: &[String], root: &Path, name: &str) -> Vec<ClientCheck> {
    let label = format!("dual-era ({name})");
    let model = ClientModel {
        offers: vec![V::V2026_07_28, V::V2025_11_25],
        accepts: vec![V::V2025_03_26, V::V2025_06_18, V::V2025_11_25],
    };
    let mut out = Vec::new();
    for (check_name, server, spec) in [
        ("falls back to initialize", ServerKind::S1125, FALL_BACK),
        ("stays modern", ServerKind::S0728, STAY_MODERN),
    ] {
        let target = Target::plain(server);
        let run = match run_one(argv, root, target, PeerScenario::Call, name).await {
            Ok(r) => r,
            Err(e) => {
                out.push(check_at(
                    &label,
                    check_name,
                    level_of(check_name),
                    Some(false),
                    e,
                    spec,
                ));
                continue;
            }
        };
        let mut c = predicted(
            &label,
            check_name,
            &model,
            target,
            PeerScenario::Call,
            &run,
            Some(spec),
        );
        if server == ServerKind::S1125 {
            c = modern_first(c, &run.wire);
        }
        c.detail = format!("against a {server} server: {}", c.detail);
        out.push(c);
    }
    out
}

/// Every POST after `initialize` names the negotiated revision.
fn version_header(rev: &V, wire: &[Exchange]) -> ClientCheck {
    let posts: Vec<&Exchange> = wire
        .iter()
        .filter(|e| {
            e.method == http::Method::POST && e.rpc_method().as_deref() != Some("initialize")
        })
        .collect();
    let bad: Vec<String> = posts
        .iter()
        .filter(|e| e.header(headers::PROTOCOL_VERSION) != Some(rev.as_str()))
        .map(|e| {
            format!(
                "{:?}: {:?}",
                e.rpc_method(),
                e.header(headers::PROTOCOL_VERSION)
            )
        })
        .collect();
    let ok = !posts.is_empty() && bad.is_empty();
    let detail = if posts.is_empty() {
        "no request after initialize reached the server".to_owned()
    } else if bad.is_empty() {
        format!(
            "{} requests, each with MCP-Protocol-Version: {rev}",
            posts.len()
        )
    } else {
        format!("without the negotiated version: {}", bad.join(", "))
    };
    check(rev, "version header", Some(ok), detail, VERSION_HEADER)
}

/// After the server closed the call's stream: a GET with `Last-Event-ID`
/// (not a POST), no sooner than `retry`, and no `notifications/cancelled`.
fn resumption(rev: &V, wire: &[Exchange]) -> Vec<ClientCheck> {
    let closed = wire
        .iter()
        .find(|e| e.is_call_of("countdown"))
        .and_then(|e| e.ended.map(|t| (e, t)));
    let Some((call, closed_at)) = closed else {
        let none = || "no countdown call on the wire".to_owned();
        return vec![
            check(
                rev,
                "resumes by GET with Last-Event-ID",
                Some(false),
                none(),
                RESUME_GET,
            ),
            check(rev, "honours retry", None, none(), RETRY),
        ];
    };
    let last_id = call.sse_ids().last().map(|(id, _)| id.clone());
    let resume = wire
        .iter()
        .find(|e| e.method == http::Method::GET && e.header(headers::LAST_EVENT_ID).is_some());
    let cancelled = wire
        .iter()
        .any(|e| e.rpc_method().as_deref() == Some("notifications/cancelled"));
    let mut out = Vec::new();
    match resume {
        Some(get) => {
            let sent = get.header(headers::LAST_EVENT_ID).unwrap_or_default();
            out.push(check(
                rev,
                "resumes by GET with Last-Event-ID",
                Some(last_id.as_deref() == Some(sent)),
                format!(
                    "GET with Last-Event-ID {sent:?}; the last id on the closed stream {last_id:?}"
                ),
                RESUME_GET,
            ));
            let waited = get.started.saturating_duration_since(closed_at);
            out.push(check(
                rev,
                "honours retry",
                Some(waited >= Duration::from_millis(DISCONNECT_RETRY_MS)),
                format!(
                    "reconnected {} ms after the close; retry {DISCONNECT_RETRY_MS} ms",
                    waited.as_millis()
                ),
                RETRY,
            ));
        }
        None => {
            let posts_after = wire
                .iter()
                .filter(|e| e.method == http::Method::POST && e.started > closed_at)
                .count();
            out.push(check(
                rev,
                "resumes by GET with Last-Event-ID",
                Some(false),
                format!("no GET with Last-Event-ID after the close ({posts_after} POSTs after it)"),
                RESUME_GET,
            ));
            out.push(check(
                rev,
                "honours retry",
                None,
                "no resumption to time".into(),
                RETRY,
            ));
        }
    }
    out.push(check(
        rev,
        "disconnect is not a cancel",
        Some(!cancelled),
        if cancelled {
            "notifications/cancelled was sent after the server closed the stream".into()
        } else {
            "no notifications/cancelled".into()
        },
        NO_CANCEL,
    ));
    out
}

/// The checks as a table (or JSON); the summary counts failures by level.
pub fn render(checks: &[ClientCheck], json: bool) -> String {
    if json {
        return serde_json::to_string_pretty(checks).unwrap_or_default() + "\n";
    }
    let rows: Vec<Vec<String>> = checks
        .iter()
        .map(|c| {
            let mark = match c.result.as_str() {
                "pass" => "✓",
                "fail" => "✗",
                _ => "n/a",
            };
            vec![
                c.revision.clone(),
                c.check.clone(),
                c.level.to_string(),
                mark.to_owned(),
                c.detail.clone(),
            ]
        })
        .collect();
    let mut s = crate::table::render(
        &["revision", "check", "level", "", "what was seen"],
        &rows,
        crate::table::Style::Plain,
    );
    for c in checks
        .iter()
        .filter(|c| c.result == "fail" && !c.spec.is_empty())
    {
        s.push_str(&format!(
            "\n✗ {} {} ({}): {}\n",
            c.revision, c.check, c.level, c.spec
        ));
    }
    let n = |r: &str| checks.iter().filter(|c| c.result == r).count();
    let by_level: Vec<String> = [Level::Must, Level::Should, Level::May, Level::Policy]
        .into_iter()
        .map(|l| {
            let k = checks
                .iter()
                .filter(|c| c.result == "fail" && c.level == l)
                .count();
            format!("{l} {k}")
        })
        .collect();
    s.push_str(&format!(
        "\n{} passed, {} failed ({}), {} n/a\n",
        n("pass"),
        n("fail"),
        by_level.join(", "),
        n("n/a")
    ));
    s
}

/// The checks as JUnit XML (the writer `check-server --junit` uses): one
/// suite per revision, a failure's type its level, n/a skipped.
pub fn junit(checks: &[ClientCheck], client: &str) -> Result<String, String> {
    let cases: Vec<Case> = checks
        .iter()
        .map(|c| Case {
            name: c.check.clone(),
            suite: format!("check-client {}", c.revision),
            class: format!("check-client.{}", c.revision),
            level: c.level,
            outcome: match c.result.as_str() {
                "pass" => CaseOutcome::Pass { warning: None },
                "fail" => CaseOutcome::Fail {
                    reason: c.detail.clone(),
                    description: c.spec.to_owned(),
                },
                other => CaseOutcome::Skipped {
                    label: other.to_owned(),
                    reason: c.detail.clone(),
                },
            },
            properties: vec![("spec".into(), c.spec.to_owned())],
        })
        .collect();
    crate::check::junit::render_cases(&format!("check-client {client}"), &cases)
}

#[cfg(test)]
mod tests {
    use super::super::super::test_wire::post;
    use super::*;
    use http::{Method, StatusCode};
    use serde_json::json;

    /// (check, result) pairs.
    fn results(checks: &[ClientCheck]) -> Vec<(&str, &str)> {
        checks
            .iter()
            .map(|c| (c.check.as_str(), c.result.as_str()))
            .collect()
    }

    #[test]
    fn every_request_after_initialize_names_the_version() {
        let v = V::V2025_11_25;
        let init = post(json!({"method": "initialize"}));
        let call = || {
            post(json!({"method": "tools/call"})).with_header("mcp-protocol-version", "2025-11-25")
        };
        let c = version_header(&v, &[init.clone(), call(), call()]);
        assert_eq!(
            (c.result.as_str(), c.detail.as_str()),
            (
                "pass",
                "2 requests, each with MCP-Protocol-Version: 2025-11-25"
            )
        );
        // A GET is not a POST; initialize alone is nothing to judge.
        let c = version_header(&v, &[init.clone(), super::super::super::test_wire::get()]);
        assert_eq!(c.result, "fail");
        assert_eq!(c.detail, "no request after initialize reached the server");
        let stale =
            post(json!({"method": "ping"})).with_header("mcp-protocol-version", "2025-06-18");
        let bare = post(json!({"method": "tools/list"}));
        let c = version_header(&v, &[init, call(), stale, bare]);
        assert_eq!(c.result, "fail");
        assert_eq!(
            c.detail,
            "without the negotiated version: Some(\"ping\"): Some(\"2025-06-18\"), Some(\"tools/list\"): None"
        );
    }

    #[test]
    fn a_resumption_names_the_last_id_after_retry_and_cancels_nothing() {
        let v = V::V2025_11_25;
        let base = tokio::time::Instant::now();
        let mut call = post(json!({"method": "tools/call", "params": {"name": "countdown"}}))
            .answered_sse("id: a\ndata:\n\nid: b\ndata: {}\n\nretry: 150\n\n");
        call.started = base;
        call.ended = Some(base + Duration::from_millis(10));
        let resume = |id: &str, after_close_ms: u64| {
            let mut g = super::super::super::test_wire::get().with_header("last-event-id", id);
            g.started = base + Duration::from_millis(10 + after_close_ms);
            g
        };
        let got = resumption(&v, &[call.clone(), resume("b", DISCONNECT_RETRY_MS)]);
        assert_eq!(
            results(&got),
            [
                ("resumes by GET with Last-Event-ID", "pass"),
                ("honours retry", "pass"),
                ("disconnect is not a cancel", "pass")
            ]
        );
        // An older id, too soon, and a cancellation.
        let mut cancel = post(json!({"method": "notifications/cancelled"}));
        cancel.started = base + Duration::from_millis(20);
        let got = resumption(
            &v,
            &[call.clone(), cancel, resume("a", DISCONNECT_RETRY_MS - 1)],
        );
        assert_eq!(
            results(&got),
            [
                ("resumes by GET with Last-Event-ID", "fail"),
                ("honours retry", "fail"),
                ("disconnect is not a cancel", "fail")
            ]
        );
        // No GET: no resumption (a POST after the close is counted).
        let mut again = post(json!({"method": "tools/call"}));
        again.started = base + Duration::from_millis(50);
        let mut at_close = post(json!({"method": "ping"}));
        at_close.started = base + Duration::from_millis(10);
        let got = resumption(&v, &[call.clone(), at_close, again.clone(), again]);
        assert_eq!(
            results(&got),
            [
                ("resumes by GET with Last-Event-ID", "fail"),
                ("honours retry", "n/a"),
                ("disconnect is not a cancel", "pass")
            ]
        );
        assert_eq!(
            got[0].detail,
            "no GET with Last-Event-ID after the close (2 POSTs after it)"
        );
        // A GET without Last-Event-ID is no resumption either.
        let plain = super::super::super::test_wire::get();
        assert_eq!(resumption(&v, &[call.clone(), plain])[1].result, "n/a");
        // A countdown whose stream never ended, or none: nothing to time.
        let mut open = call;
        open.ended = None;
        let got = resumption(&v, &[open, resume("b", 500)]);
        assert_eq!(
            results(&got),
            [
                ("resumes by GET with Last-Event-ID", "fail"),
                ("honours retry", "n/a")
            ]
        );
        assert_eq!(got[0].detail, "no countdown call on the wire");
    }

    #[test]
    fn a_reinitialization_counts_only_after_the_404() {
        let base = tokio::time::Instant::now();
        let init = || post(json!({"method": "initialize"}));
        let call = || post(json!({"method": "tools/call"})).with_header("mcp-session-id", "s1");
        let mut delete = call();
        delete.method = Method::DELETE;
        let answered = |e: Exchange, code: StatusCode| Exchange {
            status: Some(code),
            ..e
        };
        let mut wire = vec![
            answered(init(), StatusCode::OK),
            answered(call(), StatusCode::OK),
            // The proxy's DELETE, even if it were answered 404.
            answered(delete, StatusCode::NOT_FOUND),
            answered(call(), StatusCode::NOT_FOUND),
        ];
        for (i, e) in wire.iter_mut().enumerate() {
            e.started = base + Duration::from_millis(i as u64);
        }
        // The first initialize came before the 404: no re-initialization.
        let (not_found, reinit) = reinit_after_404(&wire, "s1").expect("the 404");
        assert_eq!(not_found.method, Method::POST);
        assert_eq!(not_found.started, base + Duration::from_millis(3));
        assert!(reinit.is_none());
        // One with a session id is not a new session either.
        let mut stale = init().with_header("mcp-session-id", "s1");
        stale.started = base + Duration::from_millis(4);
        wire.push(stale);
        assert!(reinit_after_404(&wire, "s1").expect("the 404").1.is_none());
        let mut fresh = init();
        fresh.started = base + Duration::from_millis(5);
        wire.push(fresh);
        let (_, reinit) = reinit_after_404(&wire, "s1").expect("the 404");
        assert_eq!(
            reinit.map(|e| e.started),
            Some(base + Duration::from_millis(5))
        );
        // Another session's 404, or none: nothing to judge.
        assert!(reinit_after_404(&wire, "s2").is_none());
        assert!(reinit_after_404(&wire[..3], "s1").is_none());
    }

    #[test]
    fn a_reinitialization_passes_only_with_the_call_answered() {
        let base = tokio::time::Instant::now();
        let mut lost = post(json!({"method": "tools/call"})).with_header("mcp-session-id", "s1");
        lost.status = Some(StatusCode::NOT_FOUND);
        lost.started = base;
        let mut fresh = post(json!({"method": "initialize"}));
        fresh.started = base + Duration::from_millis(1);
        let works = PeerObserved::Ran(Observed::Works("ok".into()));
        let failed = PeerObserved::Ran(Observed::Failed {
            kind: None,
            message: "gone".into(),
        });
        let both = [lost.clone(), fresh];
        assert_eq!(
            reinit_verdict(&both, "s1", &works),
            (
                true,
                "after the 404 a new initialize without Mcp-Session-Id, then the call answered"
                    .into()
            )
        );
        let (ok, detail) = reinit_verdict(&both, "s1", &failed);
        assert!(
            !ok && detail.starts_with("re-initialized after the 404, but "),
            "{detail}"
        );
        let (ok, detail) = reinit_verdict(std::slice::from_ref(&lost), "s1", &works);
        assert!(
            !ok && detail.starts_with("no initialize after the 404 (0 requests"),
            "{detail}"
        );
        let (ok, detail) = reinit_verdict(&both, "s2", &works);
        assert!(!ok && detail.contains("not on the wire"), "{detail}");
    }

    #[test]
    fn falling_back_means_a_refused_modern_request_first() {
        let passed = || at(Level::Should, "pass");
        let discover = post(json!({"method": "server/discover"}))
            .answered_json(StatusCode::BAD_REQUEST, &json!({}));
        let init = post(json!({"method": "initialize"})).answered_json(StatusCode::OK, &json!({}));
        let get = super::super::super::test_wire::get();
        let c = modern_first(passed(), &[get.clone(), discover.clone(), init.clone()]);
        assert_eq!((c.result.as_str(), c.detail.as_str()), ("pass", "seen"));
        let c = modern_first(passed(), &[init.clone(), discover.clone()]);
        assert_eq!(c.result, "fail");
        assert_eq!(
            c.detail,
            "seen; but its first request was Some(\"initialize\"), not a modern request refused with 4xx"
        );
        // A modern request that was served is no fallback either.
        let served =
            post(json!({"method": "server/discover"})).answered_json(StatusCode::OK, &json!({}));
        assert_eq!(
            modern_first(passed(), &[served, init.clone()]).result,
            "fail"
        );
        assert_eq!(modern_first(passed(), &[]).result, "fail");
        // A failed check stays as it was.
        let c = modern_first(at(Level::Should, "fail"), &[init]);
        assert_eq!((c.result.as_str(), c.detail.as_str()), ("fail", "seen"));
    }

    #[test]
    fn a_replay_is_a_resume_that_carries_its_cursor_s_message() {
        let resume = |last: &str, body: &str| {
            super::super::super::test_wire::get()
                .with_header("last-event-id", last)
                .answered_sse(body)
        };
        assert!(replayed(&[resume(
            "b",
            "id: b\ndata: {}\n\nid: c\ndata: {}\n\n"
        )]));
        assert!(!replayed(&[resume("b", "id: c\ndata: {}\n\n")]));
        // A fresh priming event under the same id is not a message.
        assert!(!replayed(&[resume("b", "id: b\ndata:\n\n")]));
        // Not a resume: a POST, or a GET without Last-Event-ID.
        let mut as_post = resume("b", "id: b\ndata: {}\n\n");
        as_post.method = Method::POST;
        assert!(!replayed(&[as_post]));
        let plain = super::super::super::test_wire::get().answered_sse("id: b\ndata: {}\n\n");
        assert!(!replayed(&[plain]));
    }

    fn at(level: Level, result: &str) -> ClientCheck {
        ClientCheck {
            revision: "2025-11-25".into(),
            check: "c".into(),
            result: result.into(),
            level,
            detail: "seen".into(),
            spec: "the sentence",
        }
    }

    #[test]
    fn a_failure_counts_from_its_level_on() {
        let should = at(Level::Should, "fail");
        assert!(!should.fails_at(FailOn::Must));
        assert!(should.fails_at(FailOn::Should));
        assert!(should.fails_at(FailOn::Policy));
        assert!(!at(Level::Must, "n/a").fails_at(FailOn::Policy));
        assert!(at(Level::Must, "fail").fails_at(FailOn::Must));
    }

    #[test]
    fn the_summary_and_junit_name_the_level() {
        let checks = [at(Level::Must, "pass"), at(Level::Should, "fail")];
        let text = render(&checks, false);
        assert!(
            text.contains("1 passed, 1 failed (MUST 0, SHOULD 1, MAY 0, POLICY 0), 0 n/a"),
            "{text}"
        );
        assert!(text.contains("the sentence"), "{text}");
        // Each result's mark; the cited sentence only under a failure that
        // cites one.
        let mut bare = at(Level::May, "fail");
        bare.spec = "";
        let text = render(
            &[
                at(Level::Must, "pass"),
                at(Level::Should, "fail"),
                at(Level::Policy, "n/a"),
                bare,
            ],
            false,
        );
        let marks: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(" 2025-11-25"))
            .map(|l| {
                ["✓", "✗", "n/a"]
                    .into_iter()
                    .find(|m| l.contains(m))
                    .unwrap_or("?")
            })
            .collect();
        assert_eq!(marks, ["✓", "✗", "n/a", "✗"], "{text}");
        assert_eq!(text.matches("\n✗ 2025-11-25 c ").count(), 1, "{text}");
        assert!(
            text.contains("\n✗ 2025-11-25 c (SHOULD): the sentence\n"),
            "{text}"
        );
        assert!(
            text.contains("1 passed, 2 failed (MUST 0, SHOULD 1, MAY 1, POLICY 0), 1 n/a"),
            "{text}"
        );
        let xml = junit(&checks, "client").expect("junit");
        assert!(xml.contains("type=\"SHOULD\""), "{xml}");
    }
}
