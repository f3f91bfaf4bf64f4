//! Checks of the Tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663) at 2026-07-28, for servers whose `server/discover` advertises
//! it (otherwise each is not applicable). They need no task of the
//! server's: an unknown task id is enough to see the gates.

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{
    HEADER_MISMATCH, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY,
};
use serde_json::{Value, json};

use super::detect::modern_request;
use super::wire::{Wire, error_code};
use super::{Check, Ctx, Outcome, id, spec};
use mcp_http_edge::headers;

/// The extension's identifier.
const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// A task id no server issued.
const UNKNOWN_TASK: &str = "mcp-compat-check-no-such-task";

const T_GATED: &str = "tasks/get from a request that does not declare the extension gets -32021";
const T_UNKNOWN: &str = "tasks/get for an unknown task id gets -32602";
const T_NAME: &str = "tasks/get whose Mcp-Name differs from params.taskId gets 400 with -32020";

/// Whether `server/discover` at `v` advertises the extension (`None`: it
/// could not be read).
async fn advertised(wire: &Wire, v: &str) -> Option<bool> {
    let (headers, body) = modern_request(wire.id(), "server/discover", json!({}), v);
    let reply = wire.post(&headers, &body).await.ok()?;
    let body = reply.json(wire.timeout).await?;
    Some(
        body.pointer("/result/capabilities/extensions")
            .and_then(|e| e.get(EXTENSION))
            .is_some(),
    )
}

/// `tasks/get` for [`UNKNOWN_TASK`]: declaring the extension or not, with
/// `Mcp-Name` set to `name`; the status and the JSON body.
async fn tasks_get(
    wire: &Wire,
    v: &str,
    declare: bool,
    name: &str,
) -> Result<(u16, Value), String> {
    let (mut headers, mut body) =
        modern_request(wire.id(), "tasks/get", json!({ "taskId": UNKNOWN_TASK }), v);
    if declare {
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({ "extensions": { EXTENSION: {} } });
    }
    headers.retain(|(n, _)| *n != headers::NAME);
    headers.push((headers::NAME, name.to_owned()));
    let reply = wire.post(&headers, &body).await?;
    let status = reply.status;
    let body = reply.json(wire.timeout).await.unwrap_or(Value::Null);
    Ok((status, body))
}

fn expect(
    got: Result<(u16, Value), String>,
    status: Option<u16>,
    code: i64,
    what: &str,
) -> Outcome {
    let (s, body) = match got {
        Ok(g) => g,
        Err(e) => return Outcome::Inconclusive(e),
    };
    match (error_code(&body), status) {
        (Some(c), Some(want)) if c == code && s == want => Outcome::Pass,
        (Some(c), None) if c == code => Outcome::Pass,
        (Some(c), _) => Outcome::Fail(format!(
            "{what}: answered HTTP {s} with JSON-RPC error {c}, not {}{code}",
            status.map_or(String::new(), |w| format!("HTTP {w} with "))
        )),
        (None, _) => Outcome::Fail(format!(
            "{what}: answered HTTP {s} without a JSON-RPC error (expected {code})"
        )),
    }
}

/// The Tasks extension checks at `rev`.
pub(crate) async fn run(cx: &Ctx<'_>, rev: &ProtocolVersion) -> Vec<Check> {
    let wire = cx.wire;
    let v = rev.as_str();
    let skip = |why: &str| Outcome::NotApplicable(why.to_owned());
    let (gated, unknown, name) = match advertised(wire, v).await {
        Some(true) => (
            expect(
                tasks_get(wire, v, false, UNKNOWN_TASK).await,
                Some(400),
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                "tasks/get without the extension declared",
            ),
            expect(
                tasks_get(wire, v, true, UNKNOWN_TASK).await,
                None,
                INVALID_PARAMS,
                "tasks/get for an unknown task",
            ),
            expect(
                tasks_get(wire, v, true, "some-other-task").await,
                Some(400),
                HEADER_MISMATCH,
                "tasks/get with Mcp-Name: some-other-task",
            ),
        ),
        Some(false) => {
            let why =
                "server/discover does not advertise the io.modelcontextprotocol/tasks extension";
            (skip(why), skip(why), skip(why))
        }
        None => {
            let why = "server/discover could not be read".to_owned();
            (
                Outcome::Inconclusive(why.clone()),
                Outcome::Inconclusive(why.clone()),
                Outcome::Inconclusive(why),
            )
        }
    };
    vec![
        Check::new(id::TASKS_GATED, rev, T_GATED, spec::TASKS_GATED, gated),
        Check::new(
            id::TASKS_UNKNOWN_ID,
            rev,
            T_UNKNOWN,
            spec::TASKS_UNKNOWN_ID,
            unknown,
        ),
        Check::new(id::TASKS_MCP_NAME, rev, T_NAME, spec::TASKS_MCP_NAME, name),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::CheckOptions;
    use super::super::test_fake::{bare, serving};
    use super::*;
    use mcp_test_support::fake::json_ok;

    #[tokio::test]
    async fn without_the_extension_advertised_the_checks_do_not_apply() {
        let opts = CheckOptions::default();
        let rev = ProtocolVersion::V2026_07_28;
        let labels = |checks: Vec<Check>| -> Vec<&'static str> {
            checks.iter().map(|c| c.outcome.label()).collect()
        };
        let (fake, wire) = serving(|_| {
            json_ok(
                &json!({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {"extensions": {}}}}),
            )
        })
        .await;
        let cx = Ctx {
            wire: &wire,
            opts: &opts,
            speaks: &[],
        };
        assert_eq!(labels(run(&cx, &rev).await), ["n/a", "n/a", "n/a"]);
        assert_eq!(fake.seen().len(), 1, "only server/discover");
        assert_eq!(fake.seen()[0].rpc_method(), Some("server/discover"));
        let (_fake, wire) = serving(|_| bare(500)).await;
        let cx = Ctx {
            wire: &wire,
            opts: &opts,
            speaks: &[],
        };
        assert_eq!(
            labels(run(&cx, &rev).await),
            ["inconclusive", "inconclusive", "inconclusive"]
        );
    }

    fn error(code: i64) -> Value {
        json!({ "jsonrpc": "2.0", "id": 1, "error": { "code": code, "message": "m" } })
    }

    #[test]
    fn the_code_and_the_status_named_both_decide() {
        let got = |s: u16, body: Value| Ok((s, body));
        assert_eq!(
            expect(got(400, error(-32021)), Some(400), -32021, "w"),
            Outcome::Pass
        );
        // The right code at another status fails when a status is named.
        let Outcome::Fail(why) = expect(got(200, error(-32021)), Some(400), -32021, "w") else {
            panic!("a wrong status passed");
        };
        assert_eq!(
            why,
            "w: answered HTTP 200 with JSON-RPC error -32021, not HTTP 400 with -32021"
        );
        // With no status named any status does.
        assert_eq!(
            expect(got(200, error(-32602)), None, -32602, "w"),
            Outcome::Pass
        );
        // Another code fails, at the named status or without one.
        let Outcome::Fail(why) = expect(got(400, error(-32602)), Some(400), -32021, "w") else {
            panic!("a wrong code passed");
        };
        assert_eq!(
            why,
            "w: answered HTTP 400 with JSON-RPC error -32602, not HTTP 400 with -32021"
        );
        let Outcome::Fail(why) = expect(got(200, error(-32603)), None, -32602, "w") else {
            panic!("a wrong code passed");
        };
        assert_eq!(
            why,
            "w: answered HTTP 200 with JSON-RPC error -32603, not -32602"
        );
        // A body without an error fails; a request that got no answer is
        // inconclusive.
        let Outcome::Fail(why) = expect(got(200, json!({"result": {}})), None, -32602, "w") else {
            panic!("a result passed");
        };
        assert_eq!(
            why,
            "w: answered HTTP 200 without a JSON-RPC error (expected -32602)"
        );
        assert_eq!(
            expect(Err("refused".into()), None, -32602, "w"),
            Outcome::Inconclusive("refused".into())
        );
    }
}
