//! `mcp-compat check-client -- CMD ...`: a client program (the peer client
//! contract: URL, scenario, revision → one JSON outcome line) run against
//! our reference server at each revision, each scenario on a fresh server
//! behind the matrix's wire recorder, and checked on the wire: the
//! counterpart of `check-server`.

use std::path::Path;
use std::time::Duration;

use mcp_http_edge::faults::Faults;
use mcp_http_edge::headers;
use mcp_transport_core::ProtocolVersion as V;
use serde::Serialize;

use super::super::harness::{DISCONNECT_RETRY_MS, Observed};
use super::super::wire::Exchange;
use super::super::{ClientKind, ServerKind};
use super::manifest::fill;
use super::outcome::{PeerObserved, from_client_line, matches};
use super::predict::{ClientModel, predict};
use super::process::run_client;
use super::scenario::PeerScenario;

/// One check at one revision.
#[derive(Clone, Debug, Serialize)]
pub struct ClientCheck {
    /// The revision.
    pub revision: String,
    /// The check's name.
    pub check: String,
    /// `pass`, `fail` or `n/a`.
    pub result: String,
    /// What was seen.
    pub detail: String,
    /// The spec sentence it checks.
    pub spec: &'static str,
}

const VERSION_HEADER: &str = "2025-06-18 Transports, \"Protocol Version Header\": \"the client MUST include the MCP-Protocol-Version: <protocol-version> HTTP header on all subsequent requests to the MCP server\"";
const RESUME_GET: &str = "2025-11-25 Transports, \"Resumability and Redelivery\": \"the client SHOULD ... issue an HTTP GET to the MCP endpoint, and include the Last-Event-ID header to indicate the last event ID it received\"";
const RETRY: &str = "2025-11-25 Transports, \"Sending Messages to the Server\" 6 (SEP-1699): \"The client MUST respect the retry field, waiting the given number of milliseconds before attempting to reconnect\"";
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
    ClientCheck {
        revision: rev.as_str().to_owned(),
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

/// Runs every scenario of the client `argv` (with `{url}`, `{scenario}`,
/// `{revision}`) at each of `revisions`; the checks, in order.
pub async fn run(argv: &[String], revisions: &[V], root: &Path) -> Vec<ClientCheck> {
    let mut out = Vec::new();
    for rev in revisions {
        let server = server_for(rev);
        let model = ClientModel {
            offers: vec![rev.clone()],
            accepts: vec![rev.clone()],
        };
        for sc in PeerScenario::ALL {
            let harness = match super::super::run::spawn_server(
                ClientKind::All,
                server,
                sc.scenario(),
                Faults::NONE,
            )
            .await
            {
                Ok(h) => h,
                Err(e) => {
                    out.push(check(
                        rev,
                        sc.name(),
                        Some(false),
                        format!("cannot start our server: {e}"),
                        "",
                    ));
                    continue;
                }
            };
            let url = format!("http://{}/mcp", harness.addr);
            let filled = fill(
                argv,
                &[
                    ("url", &url),
                    ("scenario", sc.name()),
                    ("revision", rev.as_str()),
                ],
            );
            let (negotiated, observed) = match run_client(&filled, root).await {
                Ok(line) => from_client_line(&line),
                Err(why) => (
                    None,
                    PeerObserved::Ran(Observed::Failed {
                        kind: None,
                        message: why,
                    }),
                ),
            };
            // Let a request still in flight reach the recorder.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let wire = harness.wire.exchanges();
            let prediction = predict(&model, &server.revisions(), false, sc);
            out.push(match &observed {
                PeerObserved::NotExpressible(why) => {
                    check(rev, sc.name(), None, why.clone(), prediction.spec)
                }
                PeerObserved::Ran(o) => check(
                    rev,
                    sc.name(),
                    Some(matches(&prediction, &negotiated, o)),
                    format!(
                        "{o:?} on {}",
                        negotiated.as_ref().map(V::as_str).unwrap_or("no revision")
                    ),
                    prediction.spec,
                ),
            });
            if sc == PeerScenario::Call && rev.as_str() >= "2025-06-18" {
                out.push(version_header(rev, &wire));
            }
            if sc == PeerScenario::Disconnect && rev.has(|f| f.sse_polling) {
                if matches!(observed, PeerObserved::NotExpressible(_)) {
                    continue;
                }
                out.extend(resumption(rev, &wire));
            }
        }
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

/// The checks as a table (or JSON).
pub fn render(checks: &[ClientCheck], json: bool) -> String {
    if json {
        return serde_json::to_string_pretty(checks).unwrap_or_default() + "\n";
    }
    let mut s = String::new();
    for c in checks {
        let mark = match c.result.as_str() {
            "pass" => "✓",
            "fail" => "✗",
            _ => "n/a",
        };
        s.push_str(&format!(
            "{} {:<36} {mark:<3} {}\n",
            c.revision, c.check, c.detail
        ));
        if c.result == "fail" && !c.spec.is_empty() {
            s.push_str(&format!("           spec: {}\n", c.spec));
        }
    }
    let n = |r: &str| checks.iter().filter(|c| c.result == r).count();
    s.push_str(&format!(
        "\n{} passed, {} failed, {} n/a\n",
        n("pass"),
        n("fail"),
        n("n/a")
    ));
    s
}
