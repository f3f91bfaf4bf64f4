//! Checks of 2026-07-28 (stateless): 405 on GET, header validation, the
//! unsupported-version error, cancellation by closing the response stream,
//! and the `Origin` and `Accept` rules every revision shares.

use std::time::Duration;

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION};
use serde_json::{Value, json};

use super::detect::modern_request;
use super::legacy::{EVIL_ORIGIN, T_ACCEPT_CHECK, origin_outcome, without_accept};
use super::wire::{Headers, Reply, Wire, error_code, short};
use super::{Check, Ctx, Outcome, SlowTool, id, spec};
use mcp_http_edge::headers;

/// A protocol version no server speaks.
const FUTURE_VERSION: &str = "2099-01-01";
/// How long the slow call runs before its stream is closed.
const HOLD: Duration = Duration::from_millis(300);
/// How long the cancellation count is watched for a change.
const WATCH: Duration = Duration::from_secs(3);

const T_ORIGIN: &str = "a request from a foreign Origin is refused with 403";
const T_GET: &str = "GET is answered 405 Method Not Allowed";
const T_MISMATCH: &str = "an Mcp-Method header that differs from the body gets 400 with -32020";
const T_NO_VERSION: &str = "a POST without MCP-Protocol-Version gets 400";
const T_UNSUPPORTED: &str = "an unknown protocol version gets 400 with -32022 and data.supported";
const T_CANCEL: &str = "closing a request's response stream cancels the request";

/// The 2026-07-28 checks.
pub(crate) async fn run(cx: &Ctx<'_>, rev: &ProtocolVersion) -> Vec<Check> {
    let wire = cx.wire;
    let v = rev.as_str();
    let (spec_origin, _) = spec::origin(rev);
    vec![
        Check::new(
            id::FORBIDDEN_BAD_ORIGIN,
            rev,
            T_ORIGIN,
            spec_origin,
            origin(wire, v).await,
        ),
        Check::new(
            id::NOT_ACCEPTABLE_WITHOUT_ACCEPT,
            rev,
            T_ACCEPT_CHECK,
            spec::accept(rev),
            without_accept(wire, rev, &Headers::new()).await,
        ),
        Check::new(
            id::METHOD_NOT_ALLOWED_ON_GET,
            rev,
            T_GET,
            spec::GET_405,
            get(cx, v).await,
        ),
        Check::new(
            id::HEADER_MISMATCH,
            rev,
            T_MISMATCH,
            spec::HEADER_MISMATCH,
            mismatch(wire, v).await,
        ),
        Check::new(
            id::MISSING_VERSION_HEADER,
            rev,
            T_NO_VERSION,
            spec::VERSION_HEADER,
            missing_version(cx, v).await,
        ),
        Check::new(
            id::UNSUPPORTED_VERSION,
            rev,
            T_UNSUPPORTED,
            spec::UNSUPPORTED_VERSION,
            unsupported(wire).await,
        ),
        Check::new(
            id::CANCEL_ON_CLOSE,
            rev,
            T_CANCEL,
            spec::CANCEL_ON_CLOSE,
            cancel_on_close(wire, cx.opts.slow_tool.as_ref(), v).await,
        ),
    ]
}

/// Sends `tools/list` at `v`, with `edit` applied to the headers.
async fn tools_list(
    wire: &Wire,
    v: &str,
    edit: impl FnOnce(&mut Headers),
) -> Result<Reply, String> {
    let (mut headers, body) = modern_request(wire.id(), "tools/list", json!({}), v);
    edit(&mut headers);
    wire.post(&headers, &body).await
}

async fn origin(wire: &Wire, v: &str) -> Outcome {
    let (mut headers, body) = modern_request(wire.id(), "server/discover", json!({}), v);
    headers.push(("origin", EVIL_ORIGIN.to_owned()));
    match wire.post(&headers, &body).await {
        Ok(r) => origin_outcome(r.status, true),
        Err(e) => Outcome::Inconclusive(e),
    }
}

async fn get(cx: &Ctx<'_>, v: &str) -> Outcome {
    let extra: Headers = vec![(headers::PROTOCOL_VERSION, v.to_owned())];
    let reply = match cx.wire.get(&extra).await {
        Ok(r) => r,
        Err(e) => return Outcome::Inconclusive(e),
    };
    let (status, media) = (reply.status, reply.media_type());
    drop(reply);
    match status {
        405 => Outcome::Pass,
        200..=299 => Outcome::Fail(format!(
            "GET with MCP-Protocol-Version: {v} answered HTTP {status} ({media:?}): 2026-07-28 has no GET stream"
        )),
        _ if cx.speaks.iter().any(ProtocolVersion::is_legacy) => Outcome::Inconclusive(format!(
            "GET answered HTTP {status}; this server also speaks legacy revisions (whose GET needs a session), and the 405 rule is written for a server that speaks only 2026-07-28"
        )),
        _ => Outcome::Fail(format!("GET answered HTTP {status}, not 405")),
    }
}

/// A status and the JSON-RPC error code of the body, if any.
async fn status_and_code(wire: &Wire, reply: Reply) -> (u16, Option<i64>, Option<Value>) {
    let status = reply.status;
    let body = reply.json(wire.timeout).await;
    (status, body.as_ref().and_then(error_code), body)
}

async fn mismatch(wire: &Wire, v: &str) -> Outcome {
    let reply = tools_list(wire, v, |h| {
        for (name, value) in h.iter_mut() {
            if *name == headers::METHOD {
                *value = "prompts/list".to_owned();
            }
        }
    })
    .await;
    let (status, code, _) = match reply {
        Ok(r) => status_and_code(wire, r).await,
        Err(e) => return Outcome::Inconclusive(e),
    };
    match (status, code) {
        (400, Some(HEADER_MISMATCH)) => Outcome::Pass,
        (400, code) => Outcome::Fail(format!(
            "answered 400, but with JSON-RPC error code {}, not {HEADER_MISMATCH} (HeaderMismatch)",
            code.map_or("(none)".to_owned(), |c| c.to_string())
        )),
        (200..=299, _) => Outcome::Fail(format!(
            "served tools/list sent with Mcp-Method: prompts/list (HTTP {status}): the headers are not checked against the body"
        )),
        _ => Outcome::Fail(format!(
            "answered HTTP {status}, not 400 with {HEADER_MISMATCH}"
        )),
    }
}

async fn missing_version(cx: &Ctx<'_>, v: &str) -> Outcome {
    let reply = tools_list(cx.wire, v, |h| {
        h.retain(|(n, _)| *n != headers::PROTOCOL_VERSION)
    })
    .await;
    let status = match reply {
        Ok(r) => r.status,
        Err(e) => return Outcome::Inconclusive(e),
    };
    match status {
        400 => Outcome::Pass,
        200..=299 if cx.speaks.contains(&ProtocolVersion::V2025_03_26) => {
            Outcome::NotApplicable(format!(
                "served it (HTTP {status}): this server speaks 2025-03-26 and MAY treat a request without the header as 2025-03-26"
            ))
        }
        200..=299 => Outcome::Fail(format!(
            "served a POST without MCP-Protocol-Version (HTTP {status})"
        )),
        _ => Outcome::Fail(format!("answered HTTP {status}, not 400")),
    }
}

async fn unsupported(wire: &Wire) -> Outcome {
    let (status, code, body) = match tools_list(wire, FUTURE_VERSION, |_| {}).await {
        Ok(r) => status_and_code(wire, r).await,
        Err(e) => return Outcome::Inconclusive(e),
    };
    let supported = body
        .as_ref()
        .and_then(|b| b.pointer("/error/data/supported"))
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty() && a.iter().all(Value::is_string));
    match (status, code, supported) {
        (400, Some(UNSUPPORTED_PROTOCOL_VERSION), Some(_)) => Outcome::Pass,
        (400, Some(UNSUPPORTED_PROTOCOL_VERSION), None) => Outcome::Fail(format!(
            "answered 400 with {UNSUPPORTED_PROTOCOL_VERSION}, but error.data.supported does not list the versions it speaks: {}",
            short(&body.unwrap_or_default().to_string())
        )),
        (400, code, _) => Outcome::Fail(format!(
            "answered 400, but with JSON-RPC error code {}, not {UNSUPPORTED_PROTOCOL_VERSION} (UnsupportedProtocolVersion)",
            code.map_or("(none)".to_owned(), |c| c.to_string())
        )),
        (200..=299, _, _) => Outcome::Fail(format!(
            "served a request for protocol version {FUTURE_VERSION} (HTTP {status})"
        )),
        _ => Outcome::Fail(format!(
            "answered HTTP {status}, not 400 with {UNSUPPORTED_PROTOCOL_VERSION}"
        )),
    }
}

/// Calls a tool at `v` and returns its result.
async fn call_tool(wire: &Wire, v: &str, name: &str, args: &Value) -> Result<Value, String> {
    let id = wire.id();
    let params = json!({ "name": name, "arguments": args });
    let (headers, body) = modern_request(id, "tools/call", params, v);
    let answer = wire
        .post(&headers, &body)
        .await?
        .rpc_answer(id, wire.timeout)
        .await?;
    answer
        .get("result")
        .cloned()
        .ok_or_else(|| format!("tools/call {name} failed: {}", short(&answer.to_string())))
}

/// The number a count tool's first text content starts with.
fn leading_number(result: &Value) -> Option<u64> {
    let text = result.pointer("/content/0/text")?.as_str()?.trim_start();
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

async fn count(wire: &Wire, v: &str, tool: &str) -> Result<u64, String> {
    let result = call_tool(wire, v, tool, &json!({})).await?;
    leading_number(&result).ok_or_else(|| {
        format!(
            "{tool} did not answer with a number: {}",
            short(&result.to_string())
        )
    })
}

/// The count once it has stopped moving (a cancellation sent earlier, for
/// example by the 2025-11-25 checks, may still be landing).
async fn stable_count(wire: &Wire, v: &str, tool: &str) -> Result<u64, String> {
    let mut last = count(wire, v, tool).await?;
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = count(wire, v, tool).await?;
        if now == last {
            return Ok(now);
        }
        last = now;
    }
    Err(format!(
        "{tool} keeps changing (another client is cancelling requests?)"
    ))
}

/// Starts the slow call and closes its connection after [`HOLD`]; `Err`
/// when the call ended first (nothing was cancelled).
async fn start_and_close(wire: &Wire, v: &str, tool: &SlowTool) -> Result<(), String> {
    let id = wire.id();
    let params = json!({ "name": tool.name, "arguments": tool.arguments });
    let (headers, body) = modern_request(id, "tools/call", params, v);
    let reply = match tokio::time::timeout(HOLD, wire.post(&headers, &body)).await {
        // No response head yet: dropping the request closes the connection.
        Err(_) => return Ok(()),
        Ok(Err(e)) => return Err(e),
        Ok(Ok(r)) => r,
    };
    if !reply.is_sse() {
        let status = reply.status;
        let text = reply.text(wire.timeout).await;
        return Err(format!(
            "tools/call {} was answered (HTTP {status}) before its stream could be closed: {}",
            tool.name,
            short(&text)
        ));
    }
    let capture = super::wire::Capture::read(reply.sse(), Some(id), HOLD, Duration::ZERO).await;
    match capture.response {
        // The capture (and with it the connection) is dropped here.
        None => Ok(()),
        Some(r) => Err(format!(
            "tools/call {} finished before its stream could be closed: {}",
            tool.name,
            short(&r.to_string())
        )),
    }
}

async fn cancel_on_close(wire: &Wire, tool: Option<&SlowTool>, v: &str) -> Outcome {
    let Some(tool) = tool else {
        return Outcome::NotApplicable(
            "needs a tool that runs long: give --slow-tool NAME --slow-args JSON (and --cancel-count-tool NAME to see the cancellation)".into(),
        );
    };
    let id = wire.id();
    let (headers, body) = modern_request(id, "tools/list", json!({}), v);
    let listed = match wire.post(&headers, &body).await {
        Ok(r) => r.rpc_answer(id, wire.timeout).await,
        Err(e) => Err(e),
    };
    let names: Vec<String> = match listed {
        Ok(a) => a
            .pointer("/result/tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("name")?.as_str().map(str::to_owned))
            .collect(),
        Err(e) => return Outcome::Inconclusive(format!("tools/list failed: {e}")),
    };
    if !names.contains(&tool.name) {
        return Outcome::NotApplicable(format!("the server lists no tool named {:?}", tool.name));
    }
    let before = match &tool.cancel_count_tool {
        Some(c) => match stable_count(wire, v, c).await {
            Ok(n) => Some((c.as_str(), n)),
            Err(e) => return Outcome::Inconclusive(e),
        },
        None => None,
    };
    if let Err(e) = start_and_close(wire, v, tool).await {
        return Outcome::Inconclusive(e);
    }
    let Some((counter, before)) = before else {
        return Outcome::Inconclusive(format!(
            "the stream of tools/call {} was closed mid-call, but whether the server stopped the work cannot be seen from outside (give --cancel-count-tool NAME)",
            tool.name
        ));
    };
    let deadline = tokio::time::Instant::now() + WATCH.min(wire.timeout);
    loop {
        let now = match count(wire, v, counter).await {
            Ok(n) if n > before => return Outcome::Pass,
            Ok(n) => n,
            Err(e) => return Outcome::Inconclusive(e),
        };
        if tokio::time::Instant::now() >= deadline {
            return Outcome::Fail(format!(
                "closing the response stream of tools/call {} did not cancel it: {counter} stayed at {now} for {} ms",
                tool.name,
                WATCH.min(wire.timeout).as_millis()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::super::CheckOptions;
    use super::super::test_fake::{bare, rpc_error, serving};
    use super::*;
    use mcp_transport_core::jsonrpc::INVALID_REQUEST;

    fn reason(o: &Outcome) -> &str {
        o.reason().unwrap_or_default()
    }

    #[tokio::test]
    async fn a_header_that_differs_from_the_body_must_get_400_with_its_code() {
        let cases = [
            (rpc_error(400, HEADER_MISMATCH, None), true, ""),
            (
                rpc_error(400, INVALID_REQUEST, None),
                false,
                "code -32600, not -32020",
            ),
            (bare(400), false, "code (none), not -32020"),
            (bare(200), false, "the headers are not checked"),
            (bare(404), false, "HTTP 404, not 400"),
        ];
        for (answer, pass, says) in cases {
            let answer = std::sync::Mutex::new(Some(answer));
            let (fake, wire) =
                serving(move |_| answer.lock().expect("lock").take().expect("once")).await;
            let o = mismatch(&wire, "2026-07-28").await;
            assert_eq!(o == Outcome::Pass, pass, "{o:?}");
            assert!(reason(&o).contains(says), "{o:?}");
            let seen = &fake.seen()[0];
            assert_eq!(seen.header(headers::METHOD), Some("prompts/list"));
            assert_eq!(seen.rpc_method(), Some("tools/list"));
        }
    }

    #[tokio::test]
    async fn an_unknown_version_must_get_400_with_the_versions_spoken() {
        let supported = Some(json!({ "supported": ["2026-07-28"] }));
        let cases = [
            (
                rpc_error(400, UNSUPPORTED_PROTOCOL_VERSION, supported),
                true,
                "",
            ),
            (
                rpc_error(
                    400,
                    UNSUPPORTED_PROTOCOL_VERSION,
                    Some(json!({ "supported": [] })),
                ),
                false,
                "does not list the versions",
            ),
            (
                rpc_error(
                    400,
                    UNSUPPORTED_PROTOCOL_VERSION,
                    Some(json!({ "supported": [1] })),
                ),
                false,
                "does not list the versions",
            ),
            (
                rpc_error(400, UNSUPPORTED_PROTOCOL_VERSION, None),
                false,
                "does not list the versions",
            ),
            (rpc_error(400, INVALID_REQUEST, None), false, "not -32022"),
            (
                bare(200),
                false,
                "served a request for protocol version 2099-01-01",
            ),
            (bare(404), false, "HTTP 404, not 400"),
        ];
        for (answer, pass, says) in cases {
            let answer = std::sync::Mutex::new(Some(answer));
            let (fake, wire) =
                serving(move |_| answer.lock().expect("lock").take().expect("once")).await;
            let o = unsupported(&wire).await;
            assert_eq!(o == Outcome::Pass, pass, "{o:?}");
            assert!(reason(&o).contains(says), "{o:?}");
            assert_eq!(
                fake.seen()[0].header(headers::PROTOCOL_VERSION),
                Some(FUTURE_VERSION)
            );
        }
    }

    #[tokio::test]
    async fn a_post_without_the_version_header_must_get_400() {
        let opts = CheckOptions::default();
        let modern = [ProtocolVersion::V2026_07_28];
        let with_0326 = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_03_26];
        for (code, speaks, want) in [
            (400, &modern[..], "pass"),
            (200, &modern[..], "FAIL"),
            (404, &modern[..], "FAIL"),
            (200, &with_0326[..], "n/a"),
            (404, &with_0326[..], "FAIL"),
        ] {
            let (fake, wire) = serving(move |_| bare(code)).await;
            let cx = Ctx {
                wire: &wire,
                opts: &opts,
                speaks,
            };
            let o = missing_version(&cx, "2026-07-28").await;
            assert_eq!(o.label(), want, "{code} {speaks:?}: {o:?}");
            if (code, speaks.len()) == (200, 1) {
                assert!(reason(&o).contains("served a POST without"), "{o:?}");
            }
            assert_eq!(fake.seen()[0].header(headers::PROTOCOL_VERSION), None);
        }
    }

    #[tokio::test]
    async fn get_must_get_405_unless_legacy_revisions_share_the_endpoint() {
        let opts = CheckOptions::default();
        let modern = [ProtocolVersion::V2026_07_28];
        let both = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
        for (code, speaks, want) in [
            (405, &modern[..], "pass"),
            (200, &modern[..], "FAIL"),
            (400, &modern[..], "FAIL"),
            (400, &both[..], "inconclusive"),
            (200, &both[..], "FAIL"),
        ] {
            let (fake, wire) = serving(move |_| bare(code)).await;
            let cx = Ctx {
                wire: &wire,
                opts: &opts,
                speaks,
            };
            let o = get(&cx, "2026-07-28").await;
            assert_eq!(o.label(), want, "{code} {speaks:?}: {o:?}");
            assert_eq!(fake.seen()[0].method, http::Method::GET);
        }
    }

    #[tokio::test]
    async fn a_foreign_origin_must_get_403() {
        let (fake, wire) = serving(|_| bare(403)).await;
        assert_eq!(origin(&wire, "2026-07-28").await, Outcome::Pass);
        assert_eq!(fake.seen()[0].header("origin"), Some(EVIL_ORIGIN));
        let (_fake, wire) = serving(|_| bare(400)).await;
        assert!(
            origin(&wire, "2026-07-28").await.is_fail(),
            "403 is required"
        );
    }

    /// A stateless server listing `slow` and `cancelled`: `slow` streams
    /// and never answers; `cancelled` answers a count (5), which goes up by
    /// one at the `moves_at`-th count read after a `slow` call arrived (a
    /// stand-in for the cancellation its closed stream causes, seen late);
    /// `None`: it never moves.
    async fn slow_server(moves_at: Option<u64>) -> (mcp_test_support::fake::Fake, Wire) {
        use mcp_test_support::fake::{Ending, SseBody, json_ok};
        use std::sync::atomic::{AtomicU64, Ordering};
        // Count reads since the slow call (0: no slow call yet).
        let reads = std::sync::Arc::new(AtomicU64::new(0));
        serving(move |seen| {
            let body = seen.body.clone().unwrap_or_default();
            let id = body["id"].clone();
            match (body["method"].as_str(), body.pointer("/params/name")) {
                (Some("tools/list"), _) => json_ok(&json!({ "jsonrpc": "2.0", "id": id,
                    "result": { "tools": [{ "name": "slow" }, { "name": "cancelled" }] } })),
                (_, Some(t)) if t == "slow" => {
                    reads.store(1, Ordering::SeqCst);
                    SseBody::new(vec![": working\n\n".into()])
                        .ending(Ending::Hang)
                        .response()
                }
                _ => {
                    let after = reads.load(Ordering::SeqCst);
                    if after > 0 {
                        reads.fetch_add(1, Ordering::SeqCst);
                    }
                    let moved = moves_at.is_some_and(|k| after >= k);
                    let n = 5 + u64::from(moved);
                    json_ok(&json!({ "jsonrpc": "2.0", "id": id,
                        "result": { "content": [{ "type": "text", "text": format!("{n} cancelled") }] } }))
                }
            }
        })
        .await
    }

    fn slow_tool(counter: Option<&str>) -> SlowTool {
        SlowTool {
            name: "slow".into(),
            arguments: json!({ "ms": 60_000 }),
            cancel_count_tool: counter.map(str::to_owned),
        }
    }

    #[tokio::test]
    async fn closing_the_stream_must_move_the_cancellation_count() {
        // The count moves at once, or at the third read (a deadline
        // ahead, and polled until then).
        let (fake, wire) = slow_server(Some(3)).await;
        let o = cancel_on_close(&wire, Some(&slow_tool(Some("cancelled"))), "2026-07-28").await;
        assert_eq!(o, Outcome::Pass);
        let (_fake, wire) = slow_server(Some(1)).await;
        let o = cancel_on_close(&wire, Some(&slow_tool(Some("cancelled"))), "2026-07-28").await;
        assert_eq!(o, Outcome::Pass);
        let slow: Vec<Value> = fake
            .rpc("tools/call")
            .into_iter()
            .filter_map(|s| s.body)
            .filter(|b| b["params"]["name"] == "slow")
            .collect();
        assert_eq!(slow.len(), 1);
        assert_eq!(slow[0]["params"]["arguments"], json!({ "ms": 60_000 }));
        // The count stays put: a failure naming it (after `WATCH`).
        let (_fake, wire) = slow_server(None).await;
        let o = cancel_on_close(&wire, Some(&slow_tool(Some("cancelled"))), "2026-07-28").await;
        assert!(
            o.is_fail() && reason(&o).contains("cancelled stayed at 5"),
            "{o:?}"
        );
        // No counter: nothing to see; no tool, or one not listed: not
        // applicable.
        let o = cancel_on_close(&wire, Some(&slow_tool(None)), "2026-07-28").await;
        assert!(matches!(o, Outcome::Inconclusive(_)), "{o:?}");
        assert!(matches!(
            cancel_on_close(&wire, None, "2026-07-28").await,
            Outcome::NotApplicable(_)
        ));
        let mut other = slow_tool(Some("cancelled"));
        other.name = "missing".into();
        assert!(matches!(
            cancel_on_close(&wire, Some(&other), "2026-07-28").await,
            Outcome::NotApplicable(_)
        ));
    }

    #[tokio::test]
    async fn the_count_is_read_once_it_stops_moving() {
        let (fake, wire) = slow_server(None).await;
        assert_eq!(stable_count(&wire, "2026-07-28", "cancelled").await, Ok(5));
        assert_eq!(fake.rpc("tools/call").len(), 2, "read twice when it holds");
    }

    #[test]
    fn count_text() {
        let r = json!({"content": [{"type": "text", "text": "12"}]});
        assert_eq!(leading_number(&r), Some(12));
        let r = json!({"content": [{"type": "text", "text": " 3 cancelled"}]});
        assert_eq!(leading_number(&r), Some(3));
        assert_eq!(leading_number(&json!({"content": []})), None);
    }
}
