//! Issue 15, "Liveness across instances": real `mcp-compat serve --store
//! redis://…` child processes sharing one `redis-server`; instance A is
//! killed (SIGKILL) in the middle of a request while the client waits on
//! it through other instances. Each waiting client gets a clear end
//! instead of waiting forever: a `-32603` error response on the resumed
//! stream (written once, though two instances follow the stream), or the
//! task `failed` with a status message. The leases are short here
//! (`--lease-ttl-ms 1000 --lease-renew-ms 200`); the bounds below
//! (`within`, 30 s) only keep a broken build from hanging the test.

use std::process::Command;
use std::time::Duration;

use mcp_test_support::process::Listening;
use mcp_test_support::sse::{Rec, SseReader};
use mcp_test_support::{RedisServer, within};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-compat");
const EXT: &str = "io.modelcontextprotocol/tasks";

/// `mcp-compat serve` on a free port, sharing `redis`, with short leases.
fn instance(redis: &RedisServer, name: &str) -> Listening {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--bind", "127.0.0.1:0", "--store", &redis.url()])
        .args(["--lease-ttl-ms", "1000", "--lease-renew-ms", "200"])
        .env_remove("RUST_LOG");
    Listening::spawn(name, &mut cmd, Duration::from_secs(20))
}

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

/// A legacy (2025-11-25) POST in session `sid` (none for `initialize`).
fn legacy(url: &str, sid: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
    let mut r = client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(sid) = sid {
        r = r
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", "2025-11-25");
    }
    r
}

/// A 2025-11-25 session created on `url`, initialized.
async fn session(url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let r = legacy(url, None, &init).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = r.text().await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = legacy(url, Some(&sid), &note).send().await.unwrap();
    assert_eq!(r.status(), 202);
    sid
}

/// `GET` with `Last-Event-ID: last` on `url`: the resumed stream.
async fn resume(url: &str, sid: &str, last: &str) -> SseReader {
    let r = client()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", sid)
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", last)
        .send()
        .await
        .unwrap();
    SseReader::new(r)
}

/// The message events of `recs` (no priming events, no retries).
fn messages(recs: &[Rec]) -> Vec<Value> {
    recs.iter()
        .filter(|r| matches!(r, Rec::Event { data, .. } if !data.is_empty()))
        .map(Rec::json)
        .collect()
}

fn is_writer_gone(m: &Value, id: i64) -> bool {
    m["id"] == id
        && m["error"]["code"] == -32603
        && m["error"]["message"]
            .as_str()
            .is_some_and(|s| s.contains("lease"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_instance_s_request_ends_with_one_error_on_the_streams_others_follow() {
    let redis = RedisServer::start();
    let mut a = instance(&redis, "A");
    let (b, c) = (instance(&redis, "B"), instance(&redis, "C"));
    let sid = session(&a.url).await;

    // A runs a minute-long request; the client keeps only its priming id.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 60_000}}});
    let mut on_a = SseReader::new(legacy(&a.url, Some(&sid), &call).send().await.unwrap());
    let priming = within("the priming event", on_a.next())
        .await
        .expect("a priming event");
    assert!(priming.is_priming(), "{priming:?}");
    let priming = priming.id().to_owned();
    drop(on_a);

    // The client resumes through B and C (both now follow A's stream in
    // the shared log), then A dies.
    let mut via_b = resume(&b.url, &sid, &priming).await;
    let mut via_c = resume(&c.url, &sid, &priming).await;
    a.signal("KILL");
    a.wait_exit(Duration::from_secs(10));
    let killed = std::time::Instant::now();

    for (name, reader) in [("B", &mut via_b), ("C", &mut via_c)] {
        let recs = within("the resumed stream ends", reader.rest()).await;
        // A figure for the report, not a check (TTL 1000 ms, renewal 200 ms).
        eprintln!(
            "{name}: the error arrived {:?} after the kill",
            killed.elapsed()
        );
        let got = messages(&recs);
        assert_eq!(got.len(), 1, "{name}: exactly one message: {got:?}");
        assert!(is_writer_gone(&got[0], 2), "{name}: {}", got[0]);
    }
    // The log holds the error once: a later resume from the priming id
    // replays it and ends.
    let mut again = resume(&b.url, &sid, &priming).await;
    let got = messages(&within("a later resume", again.rest()).await);
    assert_eq!(got.len(), 1, "written once: {got:?}");
    assert!(is_writer_gone(&got[0], 2), "{}", got[0]);
}

/// A 2026-07-28 request declaring the Tasks extension.
fn modern(url: &str, method: &str, mut params: Value) -> reqwest::RequestBuilder {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
    });
    let name = params["name"]
        .as_str()
        .or_else(|| params["taskId"].as_str())
        .map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut r = client()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .body(body.to_string());
    if let Some(n) = name {
        r = r.header("mcp-name", n);
    }
    r
}

/// The JSON-RPC message of a response (JSON, or the last SSE data line).
async fn message(r: reqwest::Response) -> Value {
    assert_eq!(r.status(), 200);
    let text = r.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .rev()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .unwrap_or_else(|| panic!("no JSON-RPC message in {text}"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_instance_s_tasks_fail_when_polled_through_another() {
    let redis = RedisServer::start();
    let mut a = instance(&redis, "A");
    let b = instance(&redis, "B");

    // A 2026-07-28 task and a 2025-11-25 task, both running on A.
    let created = message(
        modern(
            &a.url,
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 60_000}}),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    let modern_id = created["result"]["task"]["taskId"]
        .as_str()
        .or_else(|| created["result"]["taskId"].as_str())
        .unwrap_or_else(|| panic!("no task id in {created}"))
        .to_owned();
    let sid = session(&a.url).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 60_000}, "task": {}}});
    let created = message(legacy(&a.url, Some(&sid), &call).send().await.unwrap()).await;
    let legacy_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task id in {created}"))
        .to_owned();

    // Polled through B while A lives: working.
    let get = |id: &str| json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": id}});
    let got = message(
        modern(&b.url, "tasks/get", json!({"taskId": modern_id}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    let got = message(
        legacy(&b.url, Some(&sid), &get(&legacy_id))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got["result"]["status"], "working", "{got}");

    // A `tasks/result` waiting through B when A dies ends with the error.
    let result = json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": legacy_id}});
    let waiting = tokio::spawn(
        legacy(&b.url, Some(&sid), &result)
            .send()
            .await
            .unwrap()
            .text(),
    );
    a.signal("KILL");
    a.wait_exit(Duration::from_secs(10));
    let killed = std::time::Instant::now();

    let modern_end = within("the 2026-07-28 task fails", async {
        loop {
            let got = message(
                modern(&b.url, "tasks/get", json!({"taskId": modern_id}))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            if got["result"]["status"] != "working" {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    eprintln!("the task failed {:?} after the kill", killed.elapsed());
    assert_eq!(modern_end["result"]["status"], "failed", "{modern_end}");
    assert!(
        modern_end["result"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("stopped")),
        "{modern_end}"
    );

    let body = within("tasks/result through B ends", waiting)
        .await
        .unwrap()
        .unwrap();
    let last = body
        .lines()
        .rev()
        .filter_map(|l| l.strip_prefix("data:"))
        .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .unwrap_or_else(|| panic!("no message in {body}"));
    assert_eq!(last["id"], 4, "{last}");
    assert_eq!(last["error"]["code"], -32603, "{last}");
    let got = message(
        legacy(&b.url, Some(&sid), &get(&legacy_id))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got["result"]["status"], "failed", "{got}");
    assert!(
        got["result"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("stopped")),
        "{got}"
    );
}

#[test]
fn lease_flags_are_refused_without_redis_or_with_a_renewal_not_below_the_ttl() {
    use mcp_test_support::process::run_to_end;
    let run = |args: &[&str]| {
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", "--bind", "127.0.0.1:0"])
            .args(args)
            .env_remove("RUST_LOG");
        run_to_end("mcp-compat serve", &mut cmd, Duration::from_secs(20))
    };
    let out = run(&["--lease-ttl-ms", "1000"]);
    assert!(!out.ok(), "{out:?}");
    assert!(out.stderr.contains("--store memory"), "{}", out.stderr);
    let redis = RedisServer::start();
    let out = run(&[
        "--store",
        &redis.url(),
        "--lease-ttl-ms",
        "200",
        "--lease-renew-ms",
        "200",
    ]);
    assert!(!out.ok(), "{out:?}");
    assert!(out.stderr.contains("below its TTL"), "{}", out.stderr);
}

/// Like [`instance`], with a lease TTL of ten minutes (no test waits that
/// long: only an instance ending its requests itself can end them in time)
/// and a 300 ms shutdown grace period.
fn long_lease_instance(redis: &RedisServer, name: &str) -> Listening {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--bind", "127.0.0.1:0", "--store", &redis.url()])
        .args(["--lease-ttl-ms", "600000", "--lease-renew-ms", "200"])
        .args(["--shutdown-grace-ms", "300"])
        .env_remove("RUST_LOG");
    Listening::spawn(name, &mut cmd, Duration::from_secs(20))
}

/// Issue 15, graceful shutdown: A is stopped (SIGTERM) while a request
/// runs and the client follows its stream through B. A's drain closes the
/// client's connection to A; after the grace period A abandons the request
/// — a `-32603` error in the stream, its lease released — and exits 0. B
/// delivers that error and ends the stream well before the lease's TTL
/// (ten minutes) could have run out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gracefully_stopped_instance_s_request_ends_with_its_error_at_once_on_b() {
    let redis = RedisServer::start();
    let mut a = long_lease_instance(&redis, "A");
    let b = long_lease_instance(&redis, "B");
    let sid = session(&a.url).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 60_000}}});
    let mut on_a = SseReader::new(legacy(&a.url, Some(&sid), &call).send().await.unwrap());
    let priming = within("the priming event", on_a.next())
        .await
        .expect("a priming event");
    assert!(priming.is_priming(), "{priming:?}");
    let mut via_b = resume(&b.url, &sid, priming.id()).await;

    a.signal("TERM");
    let stopped = std::time::Instant::now();
    // A's drain closes the client's connection after a `retry`, with no
    // response (SEP-1699: resume elsewhere).
    let closed = within("A's connection closes", on_a.rest()).await;
    assert!(messages(&closed).is_empty(), "{closed:?}");
    let status = a.wait_exit(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "exit status {status}");
    assert!(
        a.stderr_lines()
            .iter()
            .any(|l| l.contains("1 stream(s) abandoned")),
        "{:?}",
        a.stderr_lines()
    );

    let got = messages(&within("B's stream ends", via_b.rest()).await);
    // A figure for the report, not a check (grace 300 ms, TTL 10 min).
    eprintln!("B: the error arrived {:?} after SIGTERM", stopped.elapsed());
    assert_eq!(got.len(), 1, "exactly one message: {got:?}");
    assert_eq!(got[0]["id"], 2, "{}", got[0]);
    assert_eq!(got[0]["error"]["code"], -32603, "{}", got[0]);
    let text = got[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(text.contains("shut down"), "{text}");
}
