//! `mcp-compat serve`'s graceful shutdown, with the binary as a child
//! process: on SIGTERM (or SIGINT) it stops accepting, closes open
//! 2025-11-25 SSE streams after an event id and `retry` (SEP-1699: the
//! client resumes elsewhere), lets requests in flight on other revisions
//! finish within the grace period, and exits 0.

use std::process::Command;
use std::time::Duration;

use mcp_test_support::process::Listening;
use mcp_transport_core::sse::{Decoder, SseItem};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-compat");
/// The bound on start-up, reads and the exit.
const WAIT: Duration = Duration::from_secs(20);

fn serve(extra: &[&str]) -> Listening {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .env_remove("RUST_LOG");
    Listening::spawn("mcp-compat serve", &mut cmd, WAIT)
}

/// A legacy session at `version`: `initialize`, then `initialized`.
/// Returns the session id.
async fn open_session(http: &reqwest::Client, url: &str, version: &str) -> String {
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name":"shutdown-test","version":"0"}}});
    let resp = post(http, url, None, version, &init).await;
    assert_eq!(resp.status(), 200);
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = resp.bytes().await;
    let done = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let resp = post(http, url, Some(&sid), version, &done).await;
    assert_eq!(resp.status(), 202);
    sid
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    sid: Option<&str>,
    version: &str,
    body: &Value,
) -> reqwest::Response {
    let mut req = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", version)
        .body(body.to_string());
    if let Some(sid) = sid {
        req = req.header("mcp-session-id", sid);
    }
    req.send().await.unwrap()
}

/// Reads an SSE body to its end: its items, and whether it ended cleanly
/// (the chunked body was terminated, not cut). Calls `at_first_event` once,
/// after the first event (the priming event on 2025-11-25).
async fn read_to_end(
    mut resp: reqwest::Response,
    mut at_first_event: impl FnMut(),
) -> (Vec<SseItem>, bool) {
    let mut decoder = Decoder::new();
    let mut items = Vec::new();
    let mut called = false;
    loop {
        let chunk = tokio::time::timeout(WAIT, resp.chunk())
            .await
            .expect("the SSE body stalled");
        match chunk {
            Ok(Some(bytes)) => decoder.feed(&bytes, &mut items).unwrap(),
            Ok(None) => {
                decoder.finish(&mut items).unwrap();
                return (items, true);
            }
            Err(_) => return (items, false),
        }
        if !called && items.iter().any(|i| matches!(i, SseItem::Event(_))) {
            called = true;
            at_first_event();
        }
    }
}

fn connection_refused(url: &str) -> bool {
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    std::net::TcpStream::connect(addr).is_err()
}

/// A 2025-11-25 call in flight on its SSE stream when SIGTERM arrives: the
/// stream ends cleanly after an event id and `retry`, with no response (the
/// request goes on, its events wait in the log), new connections are
/// refused, and the process exits 0 as soon as its connections have
/// closed (the grace period, 60 s, is longer than the test's bound).
#[tokio::test]
async fn sigterm_closes_a_polling_stream_with_retry_and_exits_0() {
    let mut server = serve(&[
        "--revisions",
        "2025-11-25",
        "--retry-ms",
        "700",
        "--shutdown-grace-ms",
        "60000",
    ]);
    let http = reqwest::Client::new();
    let sid = open_session(&http, &server.url, "2025-11-25").await;
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"slow","arguments":{"ms":12000}}});
    let resp = post(&http, &server.url, Some(&sid), "2025-11-25", &call).await;
    assert_eq!(resp.status(), 200);
    let (items, clean) = read_to_end(resp, || server.signal("TERM")).await;
    assert!(clean, "the stream was cut, not closed: {items:?}");
    let retry = items.iter().position(|i| matches!(i, SseItem::Retry(700)));
    assert!(retry.is_some(), "no retry: 700 before the close: {items:?}");
    assert!(
        items
            .iter()
            .any(|i| matches!(i, SseItem::Event(e) if !e.last_event_id.is_empty())),
        "no event id to resume from: {items:?}"
    );
    assert!(
        !items
            .iter()
            .any(|i| matches!(i, SseItem::Event(e) if !e.data.is_empty())),
        "the request was still running: no message expected: {items:?}"
    );
    let status = server.wait_exit(WAIT);
    assert_eq!(status.code(), Some(0), "exit status {status}");
    assert!(
        server
            .stderr_lines()
            .iter()
            .any(|l| l.contains("SIGTERM: shutting down")),
        "{:?}",
        server.stderr_lines()
    );
    assert!(
        connection_refused(&server.url),
        "still accepting after exit"
    );
}

/// On a revision without SEP-1699 (2025-06-18) a request in flight is let
/// finish: after SIGINT its stream still carries the response, then the
/// process exits 0; a standalone GET stream is ended at once.
#[tokio::test]
async fn sigint_lets_a_request_in_flight_finish_and_exits_0() {
    let mut server = serve(&["--revisions", "2025-06-18", "--shutdown-grace-ms", "60000"]);
    let http = reqwest::Client::new();
    let sid = open_session(&http, &server.url, "2025-06-18").await;
    let get = http
        .get(&server.url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 200);
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"countdown","arguments":{"n":6,"interval_ms":150}}});
    let resp = post(&http, &server.url, Some(&sid), "2025-06-18", &call).await;
    assert_eq!(resp.status(), 200);
    let (items, clean) = read_to_end(resp, || server.signal("INT")).await;
    assert!(clean, "the stream was cut: {items:?}");
    let last = items
        .iter()
        .rev()
        .find_map(|i| match i {
            SseItem::Event(e) if !e.data.is_empty() => {
                Some(serde_json::from_str::<Value>(&e.data).unwrap())
            }
            _ => None,
        })
        .expect("no message");
    assert_eq!(last["id"], 2, "the response ends the stream: {last}");
    assert_eq!(last["result"]["content"][0]["text"], "done", "{last}");
    let (_, get_clean) = read_to_end(get, || {}).await;
    assert!(get_clean, "the GET stream was cut, not ended");
    let status = server.wait_exit(WAIT);
    assert_eq!(status.code(), Some(0), "exit status {status}");
    assert!(
        connection_refused(&server.url),
        "still accepting after exit"
    );
}
