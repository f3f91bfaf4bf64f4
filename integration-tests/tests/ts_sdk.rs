//! Interop with the TypeScript SDK (`@modelcontextprotocol/sdk` 1.32.2),
//! both ways, at 2025-03-26, 2025-06-18 and 2025-11-25:
//!
//! - `ours_vs_ts_server::v*`: our [`LegacyClient`] (one revision each)
//!   against `scripts/ts-interop/server.mjs` (`StreamableHTTPServerTransport`
//!   with the SDK's `InMemoryEventStore` and `retryInterval`): a tool call,
//!   progress (each notification exactly once), `closeSSEStream` mid-call
//!   with resumption by GET + `Last-Event-ID`, and DELETE on close, observed
//!   on the TS server (its stderr is one JSON event per line).
//! - `ts_client_vs_serve::v*`: `scripts/ts-interop/client.mjs` (`Client` over
//!   `StreamableHTTPClientTransport`) against `mcp-compat serve`, the version
//!   chosen by the server (`--revisions REV`) or pinned by the client, and on
//!   2025-11-25 with our server disconnecting mid-call (`--disconnect`): the
//!   SDK client resumes and every result and progress notification arrives.
//!
//! Every test is ignored by default (they need Node and the SDK, not only
//! Rust); `scripts/ts-interop.sh` installs the SDK, builds `mcp-compat` and
//! runs them with `--ignored`. Environment: `NODE` (default `node`),
//! `MCP_COMPAT_BIN` (default: the newest of `target/{debug,release}/mcp-compat`).
//! What the SDK does differently is written down in `docs/INTEROP.md`.
//!
//! Every child process is killed when its test ends, however it ends
//! ([`Peer`], `mcp_test_support::process`), and every wait is bounded; no test asserts
//! how fast anything is.

mod peers;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use mcp_negotiate::client::{NegotiateConfig, connect as negotiate};
use mcp_session_engine::client::{ClientConfig, LegacyClient};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport};
use peers::{Peer, Ran, WAIT, root};
use serde_json::{Value, json};

/// The bound on one run of `client.mjs`.
const CLIENT_WAIT: Duration = Duration::from_secs(90);
/// The SDK version the scripts pin.
const SDK_VERSION: &str = "1.32.2";

// ---------------------------------------------------------------------------
// Locating things

fn interop_dir() -> PathBuf {
    root().join("scripts").join("ts-interop")
}

fn node() -> Command {
    let mut cmd = Command::new(std::env::var_os("NODE").unwrap_or_else(|| OsString::from("node")));
    cmd.current_dir(root());
    cmd
}

/// Fails with how to fix it when the SDK is not where the scripts import it from.
fn require_sdk() {
    let pkg = interop_dir().join("node_modules/@modelcontextprotocol/sdk/package.json");
    let text = std::fs::read_to_string(&pkg).unwrap_or_else(|e| {
        panic!(
            "the TypeScript SDK is not installed ({}: {e}); run scripts/ts-interop.sh",
            pkg.display()
        )
    });
    let manifest: Value = serde_json::from_str(&text).expect("the SDK's package.json is JSON");
    assert_eq!(
        manifest["version"],
        SDK_VERSION,
        "{} is not the pinned SDK version; run scripts/ts-interop.sh",
        pkg.display()
    );
}

/// Runs `node scripts/ts-interop/client.mjs URL ARGS...` to its end.
fn ts_client(url: &str, args: &[&str]) -> Ran {
    let mut cmd = node();
    cmd.arg(interop_dir().join("client.mjs"))
        .arg(url)
        .args(args);
    Ran::run(&format!("client.mjs {url} {args:?}"), cmd, CLIENT_WAIT)
}

// ---------------------------------------------------------------------------
// Our client against the TypeScript SDK server

/// `node scripts/ts-interop/server.mjs` (retry 200 ms).
fn ts_server() -> Peer {
    require_sdk();
    let mut cmd = node();
    cmd.arg(interop_dir().join("server.mjs"))
        .args(["--retry-ms", "200"]);
    Peer::spawn("TS SDK server", cmd)
}

/// Connects our client offering only `rev`, and checks the TS server
/// accepted it (the answer, and the version its log says was requested).
async fn connect_ours(server: &Peer, rev: &ProtocolVersion) -> (LegacyClient, String) {
    let config = ClientConfig::new(server.url.clone())
        .with_versions(vec![rev.clone()])
        .with_request_timeout(Some(WAIT));
    let client = LegacyClient::connect(config)
        .await
        .unwrap_or_else(|e| panic!("initialize at {rev} against the TS SDK server: {e}"));
    assert_eq!(&client.revision(), rev, "the TS SDK server accepts {rev}");
    let session = client
        .session_id()
        .expect("the TS SDK server (sessionIdGenerator) assigns a session id");
    let init = server
        .wait_event("session-initialized", |e| {
            e["event"] == "session-initialized" && e["session"] == session.as_str()
        })
        .await;
    assert_eq!(init["requested"], rev.as_str());
    (client, session)
}

/// What one `tools/call` brought.
#[derive(Debug, Default)]
struct Call {
    text: String,
    is_error: bool,
    /// `progress` of each progress notification, in arrival order.
    progress: Vec<f64>,
    /// `data` of each log message, in arrival order.
    logs: Vec<String>,
}

async fn call_tool(client: &LegacyClient, name: &str, args: Value, progress: bool) -> Call {
    let params = serde_json::value::to_raw_value(&json!({ "name": name, "arguments": args }))
        .expect("params");
    let options = RequestOptions {
        progress,
        ..RequestOptions::default()
    };
    let stream = client
        .request("tools/call", Some(params), options)
        .await
        .unwrap_or_else(|e| panic!("tools/call {name}: {e}"));
    let mut events = Vec::new();
    let response = tokio::time::timeout(WAIT, stream.response_with(|e| events.push(e.clone())))
        .await
        .unwrap_or_else(|_| panic!("tools/call {name}: no response within {WAIT:?}"))
        .unwrap_or_else(|e| panic!("tools/call {name}: {e}"));
    let result: Value = match &response.payload {
        Ok(raw) => serde_json::from_str(raw.get()).expect("result JSON"),
        Err(e) => panic!("tools/call {name} failed: {e:?}"),
    };
    let mut call = Call {
        text: result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        is_error: result["isError"] == true,
        ..Call::default()
    };
    for event in events {
        let StreamEvent::Notification(n) = event else {
            panic!("tools/call {name}: unexpected {event:?}");
        };
        let params: Value = n
            .params
            .as_deref()
            .map(|p| serde_json::from_str(p.get()).expect("params JSON"))
            .unwrap_or(Value::Null);
        match n.method.as_str() {
            "notifications/progress" => {
                assert!(
                    params.get("progressToken").is_some(),
                    "progress without a token: {params}"
                );
                call.progress
                    .push(params["progress"].as_f64().expect("progress is a number"));
            }
            "notifications/message" => call
                .logs
                .push(params["data"].as_str().unwrap_or_default().to_owned()),
            other => panic!("tools/call {name}: unexpected notification {other}: {params}"),
        }
    }
    call
}

fn one_to(n: u32) -> Vec<f64> {
    (1..=n).map(f64::from).collect()
}

/// The requests the TS server logged for `session`.
fn requests_of(server: &Peer, session: &str) -> Vec<Value> {
    server
        .events()
        .into_iter()
        .filter(|e| e["event"] == "request" && e["session"] == session)
        .collect()
}

/// Resumptions: GETs of `session` that carried `Last-Event-ID`.
fn resumptions(server: &Peer, session: &str) -> Vec<Value> {
    requests_of(server, session)
        .into_iter()
        .filter(|e| e["method"] == "GET" && e["lastEventId"].is_string())
        .collect()
}

/// Closes our client and checks the TS server saw the DELETE end the session.
async fn close_and_check_delete(server: &Peer, client: &LegacyClient, session: &str) {
    client.close().await.expect("DELETE of the session");
    server
        .wait_event("session-deleted", |e| {
            e["event"] == "session-deleted" && e["session"] == session
        })
        .await;
    let response = server
        .wait_event("the DELETE's response", |e| {
            e["event"] == "response" && e["method"] == "DELETE" && e["session"] == session
        })
        .await;
    assert_eq!(response["status"], 200, "the SDK answers DELETE with 200");
}

/// Each request of our client after `initialize` carries
/// `MCP-Protocol-Version` naming the revision where the revision has the
/// header (2025-06-18 on), and none on 2025-03-26.
fn check_version_headers(server: &Peer, session: &str, rev: &ProtocolVersion) {
    let requests = requests_of(server, session);
    assert!(!requests.is_empty());
    let with_header = rev.has(|f| f.version_header);
    for r in &requests {
        if with_header {
            assert_eq!(r["protocolVersion"], rev.as_str(), "{r}");
        } else {
            assert!(r["protocolVersion"].is_null(), "{r}");
        }
    }
}

/// echo, countdown with progress (each exactly once, in order, with its
/// log messages), then DELETE on close.
async fn ours_call_progress_delete(rev: ProtocolVersion) {
    let server = ts_server();
    let (client, session) = connect_ours(&server, &rev).await;

    let echo = call_tool(&client, "echo", json!({ "text": "hello from Rust" }), false).await;
    assert!(!echo.is_error, "{echo:?}");
    assert_eq!(echo.text, "hello from Rust");

    let countdown = call_tool(
        &client,
        "countdown",
        json!({ "n": 5, "interval_ms": 10 }),
        true,
    )
    .await;
    assert_eq!(countdown.text, "done", "{countdown:?}");
    assert_eq!(countdown.progress, one_to(5), "each progress exactly once");
    assert_eq!(
        countdown.logs,
        ["4 left", "3 left", "2 left", "1 left", "0 left"]
    );
    assert!(resumptions(&server, &session).is_empty());

    check_version_headers(&server, &session, &rev);
    close_and_check_delete(&server, &client, &session).await;
}

/// `close_stream`: the TS server calls `extra.closeSSEStream()` mid-call.
/// The SDK offers it only to clients at >= 2025-11-25 (with an event
/// store): there our client waits the `retry` and resumes by GET with
/// `Last-Event-ID`; on older revisions the stream is never closed.
async fn ours_close_sse_stream(rev: ProtocolVersion) {
    let server = ts_server();
    let (client, session) = connect_ours(&server, &rev).await;
    let polling = rev.has(|f| f.sse_polling);

    let call = call_tool(&client, "close_stream", json!({ "ms": 150, "n": 4 }), true).await;
    assert!(!call.is_error, "{call:?}");
    assert_eq!(call.progress, one_to(4), "each progress exactly once");
    assert_eq!(call.logs, ["before close", "after close"]);
    let closed = server
        .wait_event("sse-closed", |e| {
            e["event"] == "sse-closed" && e["session"] == session.as_str()
        })
        .await;
    let resumed = resumptions(&server, &session);
    if polling {
        assert_eq!(closed["how"], "extra.closeSSEStream", "{closed}");
        assert_eq!(call.text, "resumed");
        assert_eq!(resumed.len(), 1, "one GET with Last-Event-ID: {resumed:?}");
    } else {
        assert!(
            closed["how"].is_null(),
            "the SDK offers closeSSEStream only at >= 2025-11-25: {closed}"
        );
        assert_eq!(call.text, "not closed");
        assert!(resumed.is_empty(), "{resumed:?}");
    }

    check_version_headers(&server, &session, &rev);
    close_and_check_delete(&server, &client, &session).await;
}

/// `close_stream {force: true}`: the TS server closes the request's SSE
/// stream with `transport.closeSSEStream(requestId)` whatever the revision
/// (before 2025-11-25 this is a server-side drop: no priming event, no
/// `retry`, but the progress events before it carried ids). Our client
/// resumes by GET with `Last-Event-ID` (after `retry`, or its backoff) and
/// gets every notification once and the result.
async fn ours_forced_close(rev: ProtocolVersion) {
    let server = ts_server();
    let (client, session) = connect_ours(&server, &rev).await;

    let call = call_tool(
        &client,
        "close_stream",
        json!({ "ms": 150, "n": 4, "force": true }),
        true,
    )
    .await;
    assert!(!call.is_error, "{call:?}");
    assert_eq!(call.text, "resumed");
    assert_eq!(call.progress, one_to(4), "each progress exactly once");
    assert_eq!(call.logs, ["before close", "after close"]);
    let closed = server
        .wait_event("sse-closed", |e| {
            e["event"] == "sse-closed" && e["session"] == session.as_str()
        })
        .await;
    assert!(closed["how"].is_string(), "{closed}");
    let resumed = resumptions(&server, &session);
    assert_eq!(resumed.len(), 1, "one GET with Last-Event-ID: {resumed:?}");

    close_and_check_delete(&server, &client, &session).await;
}

mod ours_vs_ts_server {
    use super::*;

    macro_rules! revision {
        ($name:ident, $rev:expr) => {
            mod $name {
                use super::*;

                #[tokio::test]
                #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
                async fn call_progress_delete() {
                    ours_call_progress_delete($rev).await
                }

                #[tokio::test]
                #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
                async fn close_sse_stream_mid_call() {
                    ours_close_sse_stream($rev).await
                }

                #[tokio::test]
                #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
                async fn forced_close_mid_call() {
                    ours_forced_close($rev).await
                }
            }
        };
    }

    revision!(v2025_03_26, ProtocolVersion::V2025_03_26);
    revision!(v2025_06_18, ProtocolVersion::V2025_06_18);
    revision!(v2025_11_25, ProtocolVersion::V2025_11_25);

    /// The negotiating client (every revision allowed) against the TS SDK
    /// server: the modern probe gets a 400 without a modern error, so it
    /// falls back to `initialize` and settles on 2025-11-25.
    #[tokio::test]
    #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
    async fn negotiating_client_settles_on_2025_11_25() {
        let server = ts_server();
        let connection = negotiate(NegotiateConfig::new(server.url.clone()))
            .await
            .unwrap_or_else(|e| panic!("negotiation with the TS SDK server: {e}"));
        assert_eq!(connection.revision(), ProtocolVersion::V2025_11_25);
        let params = serde_json::value::to_raw_value(
            &json!({ "name": "echo", "arguments": { "text": "negotiated" } }),
        )
        .expect("params");
        let response = connection
            .request("tools/call", Some(params), RequestOptions::default())
            .await
            .expect("tools/call")
            .response()
            .await
            .expect("response");
        let result: Value =
            serde_json::from_str(response.payload.expect("a result").get()).expect("JSON");
        assert_eq!(result["content"][0]["text"], "negotiated");
        connection.close().await.expect("DELETE");
        server
            .wait_event("session-deleted", |e| e["event"] == "session-deleted")
            .await;
    }
}

// ---------------------------------------------------------------------------
// The TypeScript SDK client against `mcp-compat serve`

/// `mcp-compat serve --bind 127.0.0.1:0 ARGS...`, once the SDK is there.
fn serve(args: &[&str]) -> Peer {
    require_sdk();
    peers::serve(args)
}

/// How `close_stream` must have gone.
#[derive(Clone, Copy, Debug, PartialEq)]
enum CloseStream {
    /// Our server closed the connection mid-call and the SDK resumed.
    Resumed,
    /// Not a polling revision: the stream stayed open.
    NotClosed,
}

/// Checks a successful `client.mjs` run: the version, echo, countdown
/// (progress exactly 1..=count, one log each), close_stream, DELETE.
fn check_ts_run(ran: &Ran, rev: &ProtocolVersion, count: u32, close: CloseStream) {
    let s = &ran.summary;
    assert!(
        ran.status.success() && s["ok"] == true,
        "client.mjs failed ({}): {s:#}\nstderr:\n{}",
        ran.status,
        ran.stderr
    );
    assert_eq!(s["protocolVersion"], rev.as_str(), "{s:#}");
    assert_eq!(s["echo"], "hello from the TypeScript SDK");
    let countdown = &s["countdown"];
    assert_eq!(countdown["text"], "done", "{s:#}");
    let want: Vec<Value> = (1..=count).map(Value::from).collect();
    assert_eq!(countdown["progress"], Value::from(want), "{s:#}");
    assert_eq!(countdown["logs"], count, "{s:#}");
    let closed = &s["closeStream"];
    // Our close_stream sends log messages, no progress.
    assert_eq!(closed["logs"], 2, "{s:#}");
    match close {
        CloseStream::Resumed => {
            assert_eq!(closed["text"], "resumed", "{s:#}");
            assert!(
                closed["resumptions"].as_u64() >= Some(1),
                "the SDK resumed by GET with Last-Event-ID: {s:#}"
            );
        }
        CloseStream::NotClosed => {
            assert_eq!(closed["text"], "not closed", "{s:#}");
            assert_eq!(closed["resumptions"], 0, "{s:#}");
        }
    }
    assert_eq!(s["deleted"], true, "{s:#}");
    let delete = s["deleteStatus"].as_u64();
    assert!(
        matches!(delete, Some(200 | 202 | 204)),
        "DELETE answered {delete:?}: {s:#}"
    );
    // Every request after initialize names the negotiated version (the SDK
    // sends the header on every revision).
    let http = s["http"].as_array().expect("http log");
    for r in http.iter().skip(1) {
        assert_eq!(r["protocolVersion"], rev.as_str(), "{r}");
    }
}

fn close_expectation(rev: &ProtocolVersion) -> CloseStream {
    if rev.has(|f| f.sse_polling) {
        CloseStream::Resumed
    } else {
        CloseStream::NotClosed
    }
}

/// `serve --revisions REV`: the SDK client offers 2025-11-25 (it always
/// offers its latest), our server counter-offers REV, the SDK accepts.
fn ts_counter_offer(rev: ProtocolVersion) {
    let mut args = vec!["--revisions", rev.as_str()];
    if rev.has(|f| f.sse_polling) {
        args.extend(["--retry-ms", "100"]);
    }
    let server = serve(&args);
    let ran = ts_client(&server.url, &["--expect-version", rev.as_str()]);
    check_ts_run(&ran, &rev, 5, close_expectation(&rev));
}

/// `serve` (every revision): the client pins REV in `initialize`
/// (`--protocol-version`), our server accepts it.
fn ts_pinned(rev: ProtocolVersion) {
    let server = serve(&["--retry-ms", "100"]);
    let ran = ts_client(
        &server.url,
        &[
            "--protocol-version",
            rev.as_str(),
            "--expect-version",
            rev.as_str(),
        ],
    );
    check_ts_run(&ran, &rev, 5, close_expectation(&rev));
}

mod ts_client_vs_serve {
    use super::*;

    macro_rules! revision {
        ($name:ident, $rev:expr) => {
            mod $name {
                use super::*;

                #[test]
                #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
                fn server_counter_offers() {
                    ts_counter_offer($rev)
                }

                #[test]
                #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
                fn client_pins_the_version() {
                    ts_pinned($rev)
                }
            }
        };
    }

    revision!(v2025_03_26, ProtocolVersion::V2025_03_26);
    revision!(v2025_06_18, ProtocolVersion::V2025_06_18);
    revision!(v2025_11_25, ProtocolVersion::V2025_11_25);

    /// Our server closes every new stream right after its priming event
    /// (`--disconnect after-priming`): every answer, and all of
    /// countdown's progress, reach the SDK client through GET +
    /// `Last-Event-ID` after our `retry`. The countdown (and close_stream's
    /// 100 ms wait) is well within one `retry`, so each poll finds something
    /// new (see
    /// `sdk_forgets_last_event_id_after_an_empty_poll` for why that matters).
    #[test]
    #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
    fn disconnect_after_priming() {
        let server = serve(&[
            "--revisions",
            "2025-11-25",
            "--disconnect",
            "after-priming",
            "--retry-ms",
            "250",
        ]);
        let ran = ts_client(&server.url, &["--count", "5", "--interval-ms", "5"]);
        let rev = ProtocolVersion::V2025_11_25;
        check_ts_run(&ran, &rev, 5, CloseStream::Resumed);
        assert!(
            ran.summary["countdown"]["resumptions"].as_u64() >= Some(1),
            "{:#}",
            ran.summary
        );
    }

    /// Our server closes each connection after two message events
    /// (`--disconnect after-events:2`): countdown's ten notifications and
    /// its answer arrive over several connections, each resumed by the SDK
    /// with `Last-Event-ID`, every progress exactly once.
    #[test]
    #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
    fn disconnect_after_events() {
        let server = serve(&[
            "--revisions",
            "2025-11-25",
            "--disconnect",
            "after-events:2",
            "--retry-ms",
            "50",
        ]);
        let ran = ts_client(&server.url, &["--count", "5", "--interval-ms", "10"]);
        let rev = ProtocolVersion::V2025_11_25;
        check_ts_run(&ran, &rev, 5, CloseStream::Resumed);
        assert!(
            ran.summary["countdown"]["resumptions"].as_u64() >= Some(2),
            "{:#}",
            ran.summary
        );
    }

    /// Serves 2025-11-25 under `policy` (`retry` 100 ms) and runs the SDK
    /// client with a countdown whose events are spaced wider than `retry`
    /// (4 × 250 ms) and a call that stays silent for ten `retry`s
    /// (`slow`, 1 s): every call completes, every progress event arrives
    /// exactly once (`check_ts_run`); returns the summary.
    fn run_under(policy: &str) -> Value {
        let server = serve(&[
            "--revisions",
            "2025-11-25",
            "--disconnect",
            policy,
            "--retry-ms",
            "100",
        ]);
        let ran = ts_client(
            &server.url,
            &[
                "--count",
                "4",
                "--interval-ms",
                "250",
                "--silent-ms",
                "1000",
                "--timeout-ms",
                "30000",
            ],
        );
        check_ts_run(&ran, &ProtocolVersion::V2025_11_25, 4, CloseStream::Resumed);
        assert_eq!(
            ran.summary["slow"]["text"], "slept 1000 ms",
            "{:#}",
            ran.summary
        );
        ran.summary
    }

    /// `never`: no connection is closed by the policy, so neither the
    /// countdown nor the silent call is resumed (close_stream still is: the
    /// tool closes its own stream).
    #[test]
    #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
    fn policy_never() {
        let s = run_under("never");
        assert_eq!(s["countdown"]["resumptions"], 0, "{s:#}");
        assert_eq!(s["slow"]["resumptions"], 0, "{s:#}");
    }

    crate::peers::closing_policies! {
        "needs node and the TypeScript SDK: run scripts/ts-interop.sh", run_under;
        policy_after_priming: "after-priming", silent_call_resumes: true;
        // Closes after two message events: a call that sends none keeps
        // its connection.
        policy_after_events: "after-events:2", silent_call_resumes: false;
        policy_after_ms: "after-ms:300", silent_call_resumes: true;
        policy_idle: "idle:200", silent_call_resumes: true;
    }

    /// A known bug of the SDK client (1.32.2): `_handleSseStream` keeps the
    /// last event id per *connection*, so after a resumed connection that
    /// carried no event with an id (a poll that found nothing new) its next
    /// reconnection is a GET **without** `Last-Event-ID`, which opens the
    /// standalone stream instead, and the request's answer never arrives
    /// (docs/INTEROP.md). Our server spares it: a connection it closes
    /// before carrying any id first gets an empty-data event with a fresh id
    /// for the same position. Here polls are not held
    /// (`--resume-hold-ms 0`) and the countdown (one event every 300 ms) is
    /// slower than the polls (100 ms), so empty polls happen: the call must
    /// complete, every resumption must carry `Last-Event-ID`, and some must
    /// carry a renewed id (four dot-separated parts).
    #[test]
    #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
    fn empty_polls_carry_a_fresh_id_so_the_sdk_keeps_resuming() {
        let server = serve(&[
            "--revisions",
            "2025-11-25",
            "--disconnect",
            "after-priming",
            "--retry-ms",
            "100",
            "--resume-hold-ms",
            "0",
        ]);
        let ran = ts_client(
            &server.url,
            &[
                "--count",
                "3",
                "--interval-ms",
                "300",
                "--timeout-ms",
                "10000",
            ],
        );
        let rev = ProtocolVersion::V2025_11_25;
        check_ts_run(&ran, &rev, 3, CloseStream::Resumed);
        let s = &ran.summary;
        let http = s["http"].as_array().expect("http log");
        let resumes: Vec<&Value> = http
            .iter()
            .filter(|r| r["method"] == "GET" && r["lastEventId"].is_string())
            .collect();
        assert!(resumes.len() >= 3, "{s:#}");
        let first_resume = http
            .iter()
            .position(|r| r["method"] == "GET" && r["lastEventId"].is_string())
            .expect("the SDK resumed");
        assert!(
            !http[first_resume..]
                .iter()
                .any(|r| r["method"] == "GET" && r["lastEventId"].is_null()),
            "a resumption without Last-Event-ID: {s:#}"
        );
        assert!(
            resumes.iter().any(|r| r["lastEventId"]
                .as_str()
                .unwrap_or_default()
                .split('.')
                .count()
                == 4),
            "no renewed id was used: {s:#}"
        );
    }

    /// The default resume hold (long-poll): a poll that finds nothing new is
    /// held until the next event, so a slow countdown costs about one
    /// resumption per event instead of one per `retry`.
    #[test]
    #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
    fn held_polls_deliver_each_event_without_busy_polling() {
        let server = serve(&[
            "--revisions",
            "2025-11-25",
            "--disconnect",
            "after-priming",
            "--retry-ms",
            "50",
        ]);
        let ran = ts_client(
            &server.url,
            &[
                "--count",
                "3",
                "--interval-ms",
                "300",
                "--timeout-ms",
                "10000",
            ],
        );
        let rev = ProtocolVersion::V2025_11_25;
        check_ts_run(&ran, &rev, 3, CloseStream::Resumed);
        let resumptions = ran.summary["countdown"]["resumptions"]
            .as_u64()
            .unwrap_or(0);
        // ~900 ms of countdown at a 50 ms retry would be ~15 polls without
        // the hold; with it, about one per event (3 progress + the answer).
        assert!((1..=8).contains(&resumptions), "{:#}", ran.summary);
    }
}

// ---------------------------------------------------------------------------
// 2025-11-25 experimental tasks (SEP-1686), both ways

mod tasks {
    use futures_util::StreamExt;
    use mcp_test_support::ScriptedInput;
    use mcp_test_support::client::answer;

    use super::*;

    /// `node scripts/ts-interop/tasks-client.mjs URL ARGS...` to its end.
    fn ts_tasks_client(url: &str, args: &[&str]) -> Ran {
        let mut cmd = node();
        cmd.arg(interop_dir().join("tasks-client.mjs"))
            .arg(url)
            .args(args);
        Ran::run(
            &format!("tasks-client.mjs {url} {args:?}"),
            cmd,
            CLIENT_WAIT,
        )
    }

    /// The SDK client's task flow against `serve`: `callToolStream` of a
    /// tool whose `taskSupport` is `optional` (created, polled, result),
    /// `tasks/list`, `tasks/cancel` (then `-32602` for the cancelled task),
    /// input mid-task over `tasks/result` with the related-task metadata,
    /// `-32602` for an unknown id — with and without SEP-1699 polling cuts.
    fn ts_client_runs_tasks_against_serve(extra: &[&str]) {
        let mut args = vec!["--revisions", "2025-11-25"];
        args.extend_from_slice(extra);
        let server = serve(&args);
        let ran = ts_tasks_client(
            &server.url,
            &["--slow-ms", "300", "--ask", "confirm_delete"],
        );
        let s = &ran.summary;
        assert!(
            ran.status.success() && s["ok"] == true,
            "{s:#}\n{}",
            ran.stderr
        );
        assert_eq!(s["protocolVersion"], "2025-11-25");
        assert_eq!(
            s["tasksCapability"],
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
        );
        assert_eq!(s["taskSupport"]["slow"], "optional");
        assert_eq!(s["taskSupport"]["failing_job"], "required");
        assert_eq!(s["taskSupport"]["echo"], Value::Null);
        assert_eq!(s["stream"]["types"][0], "taskCreated", "{s:#}");
        assert_eq!(s["stream"]["text"], "slept 300 ms", "{s:#}");
        assert_eq!(
            s["stream"]["statuses"].as_array().unwrap().last().unwrap(),
            "completed"
        );
        assert_eq!(s["listed"], true);
        assert_eq!(s["cancelStatus"], "cancelled");
        assert_eq!(s["afterCancel"], "cancelled");
        assert_eq!(s["cancelAgain"], -32602);
        assert_eq!(s["ask"]["text"], "deleted the file", "{s:#}");
        assert_eq!(s["asked"], 1);
        assert_eq!(s["askedRelatedTask"], s["ask"]["taskId"]);
        assert_eq!(s["unknown"], -32602);
    }

    #[test]
    #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
    fn ts_client_tasks_held() {
        ts_client_runs_tasks_against_serve(&[]);
    }

    #[test]
    #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
    fn ts_client_tasks_polled() {
        ts_client_runs_tasks_against_serve(&[
            "--disconnect",
            "after-priming",
            "--retry-ms",
            "50",
            "--resume-hold-ms",
            "0",
        ]);
    }

    /// `node scripts/ts-interop/tasks-server.mjs`.
    fn ts_tasks_server() -> Peer {
        require_sdk();
        let mut cmd = node();
        cmd.arg(interop_dir().join("tasks-server.mjs"));
        Peer::spawn("TS SDK tasks server", cmd)
    }

    async fn connect_with_tasks(url: &str, input: std::sync::Arc<ScriptedInput>) -> LegacyClient {
        LegacyClient::connect(
            ClientConfig::new(url.to_owned())
                .with_versions(vec![ProtocolVersion::V2025_11_25])
                .with_capabilities(json!({"tasks": {}, "elicitation": {}}))
                .with_input_handler(input)
                .with_request_timeout(Some(WAIT)),
        )
        .await
        .expect("initialize against the TS SDK tasks server")
    }

    fn call(tool: &str, args: Value) -> Option<Box<serde_json::value::RawValue>> {
        mcp_transport_core::jsonrpc::to_raw(&json!({"name": tool, "arguments": args, "task": {}}))
            .ok()
    }

    fn text_of(r: &mcp_transport_core::jsonrpc::Response) -> String {
        let v: Value = serde_json::from_str(r.payload.as_ref().expect("a result").get()).unwrap();
        v["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Our client against the SDK's task tools: the `CreateTaskResult`
    /// followed through `tasks/result` to the tool's result; input mid-task
    /// answered through our input handler; a detached task resumed by id.
    #[tokio::test]
    #[ignore = "needs node and the TypeScript SDK: run scripts/ts-interop.sh"]
    async fn our_client_follows_ts_server_tasks() {
        let server = ts_tasks_server();
        let input = ScriptedInput::ada();
        let client = connect_with_tasks(&server.url, input.clone()).await;
        assert!(
            client.initialize_result().capabilities["tasks"]["requests"]["tools"]["call"]
                .is_object(),
            "{:?}",
            client.initialize_result().capabilities
        );

        let mut stream = client
            .request(
                "tools/call",
                call("delay", json!({"ms": 200})),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        let first = stream.next().await.unwrap().unwrap();
        let StreamEvent::Notification(n) = &first else {
            panic!("{first:?}")
        };
        assert_eq!(n.method, "notifications/tasks/status");
        let id = stream.task_id().expect("the task id");
        let r = stream.response().await.unwrap();
        assert_eq!(text_of(&r), "Completed 200 ms");

        let r = answer(&client, "tools/call", call("collect", json!({})))
            .await
            .unwrap();
        assert_eq!(text_of(&r), "Hello, Ada");
        assert_eq!(input.methods(), ["elicitation/create"]);

        let mut stream = client
            .request(
                "tools/call",
                call("delay", json!({"ms": 300})),
                RequestOptions::default(),
            )
            .await
            .unwrap();
        stream.next().await.unwrap().unwrap();
        let detached = stream.detach_task().expect("a task");
        assert_ne!(detached, id);
        let r = client
            .resume_task(&detached)
            .await
            .unwrap()
            .response()
            .await
            .unwrap();
        assert_eq!(text_of(&r), "Completed 300 ms");
        client.close().await.unwrap();
    }
}
