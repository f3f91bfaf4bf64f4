//! Issue 15: 2025-11-25's experimental tasks (SEP-1686, session-bound)
//! across two `serve --store redis://…` instances sharing one real
//! `redis-server`: a task created on A is polled through B, its input
//! request is carried by a `tasks/result` on B and answered by a POST that
//! lands on A, and another task created on A and cancelled through B stops
//! its handler on A; the same for a 2026-07-28 task (input through
//! `tasks/update` on B, cancel through B).

mod common;

use std::time::Duration;

use mcp_compat::serve::{build, config, with_store};
use mcp_test_support::server::TestServer;
use mcp_test_support::sse::SseReader;
use mcp_test_support::{RedisServer, within};
use serde_json::{Value, json};

/// A `serve` instance on 127.0.0.1:0 over `redis`, with short leases (a
/// worker learns of a cancel or an answer given through another instance
/// at each renewal).
async fn instance(redis: &RedisServer) -> TestServer {
    let mut args = common::serve_args();
    args.store = redis.url();
    args.lease_ttl_ms = Some(2_000);
    args.lease_renew_ms = Some(100);
    let cfg = with_store(config(&args).unwrap(), &args).await.unwrap();
    TestServer::serve(build(cfg).unwrap().route("/mcp")).await
}

fn post(server: &TestServer, sid: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
    let mut r = reqwest::Client::new()
        .post(server.url())
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

/// A 2025-11-25 session (declaring elicitation) created on `server`.
async fn session(server: &TestServer) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"}}});
    let r = post(server, None, &init).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = r.text().await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(server, Some(&sid), &note)
            .send()
            .await
            .unwrap()
            .status(),
        202
    );
    sid
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Starts tool `name` with `args` as a task on `server`; the task id.
async fn task(server: &TestServer, sid: &str, name: &str, args: Value) -> String {
    let call = request(
        2,
        "tools/call",
        json!({"name": name, "arguments": args, "task": {}}),
    );
    let created = message(post(server, Some(sid), &call).send().await.unwrap()).await;
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task id in {created}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_task_created_on_a_is_polled_answered_and_cancelled_through_b() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let sid = session(&a).await;

    // Created on A, polled through B.
    let id = task(&a, &sid, "slow_ask", json!({"ms": 10})).await;
    let got = message(
        post(
            &b,
            Some(&sid),
            &request(3, "tasks/get", json!({"taskId": id})),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert!(
        ["working", "input_required"].contains(&got["result"]["status"].as_str().unwrap_or("")),
        "{got}"
    );

    // `tasks/result` through B carries the task's input request; the
    // client's answer lands on A, which hands it to B.
    let waiting = post(
        &b,
        Some(&sid),
        &request(4, "tasks/result", json!({"taskId": id})),
    )
    .send()
    .await
    .unwrap();
    let mut waiting = SseReader::new(waiting);
    let ask = within("the input request", async {
        loop {
            let m = waiting.next_message().await.expect("the stream goes on");
            let m = m.json();
            if m["method"] == "elicitation/create" {
                return m;
            }
        }
    })
    .await;
    let answer = json!({"jsonrpc": "2.0", "id": ask["id"],
        "result": {"action": "accept", "content": {"name": "Ada"}}});
    assert_eq!(
        post(&a, Some(&sid), &answer).send().await.unwrap().status(),
        202
    );
    let done = within("the task's result through B", async {
        loop {
            let m = waiting
                .next_message()
                .await
                .expect("the result comes")
                .json();
            if m["id"] == 4 {
                return m;
            }
        }
    })
    .await;
    assert_eq!(done["result"]["content"][0]["text"], "hello, Ada", "{done}");

    // Another task on A, cancelled through B: its handler on A stops.
    let id = task(&a, &sid, "slow", json!({"ms": 60_000})).await;
    let cancelled = message(
        post(
            &b,
            Some(&sid),
            &request(5, "tasks/cancel", json!({"taskId": id})),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    within("the handler on A sees the cancel", async {
        loop {
            let count = message(
                post(
                    &a,
                    Some(&sid),
                    &request(
                        6,
                        "tools/call",
                        json!({"name": "cancelled_count", "arguments": {}}),
                    ),
                )
                .send()
                .await
                .unwrap(),
            )
            .await;
            if count["result"]["content"][0]["text"] == "1" {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
}

/// A 2026-07-28 request declaring the Tasks extension and elicitation.
fn modern(server: &TestServer, method: &str, mut params: Value) -> reqwest::RequestBuilder {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    });
    let name = params["name"]
        .as_str()
        .or_else(|| params["taskId"].as_str())
        .map(str::to_owned);
    let mut r = reqwest::Client::new()
        .post(server.url())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .body(request(1, method, params).to_string());
    if let Some(n) = name {
        r = r.header("mcp-name", n);
    }
    r
}

/// Polls `tasks/get` on `server` until the task's status is `status`.
async fn until(server: &TestServer, id: &str, status: &str) -> Value {
    within(&format!("task {id} {status}"), async {
        loop {
            let got = message(
                modern(server, "tasks/get", json!({"taskId": id}))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            if got["result"]["status"] == status {
                return got["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_task_on_a_takes_input_and_a_cancel_given_through_b() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis).await, instance(&redis).await);
    let created = message(
        modern(
            &a,
            "tools/call",
            json!({"name": "slow_ask", "arguments": {"ms": 10}}),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .or_else(|| created["result"]["taskId"].as_str())
        .unwrap_or_else(|| panic!("no task id in {created}"))
        .to_owned();
    let asked = until(&b, &id, "input_required").await;
    let key = asked["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .unwrap_or_else(|| panic!("no input request in {asked}"));
    let update = json!({"taskId": id, "inputResponses": {
        key: {"action": "accept", "content": {"name": "Ada"}}}});
    let ack = message(modern(&b, "tasks/update", update).send().await.unwrap()).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    // The worker on A takes the answer given to B and completes.
    let done = until(&b, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "hello, Ada", "{done}");

    // Another task on A, cancelled through B: its handler on A stops (it
    // hears of the cancel at its lease's next renewal).
    let created = message(
        modern(
            &a,
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 60_000}}),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .or_else(|| created["result"]["taskId"].as_str())
        .unwrap_or_else(|| panic!("no task id in {created}"))
        .to_owned();
    let ack = message(
        modern(&b, "tasks/cancel", json!({"taskId": id}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    within("the handler on A sees the cancel", async {
        loop {
            let count = message(
                modern(
                    &a,
                    "tools/call",
                    json!({"name": "cancelled_count", "arguments": {}}),
                )
                .send()
                .await
                .unwrap(),
            )
            .await;
            if count["result"]["content"][0]["text"] == "1" {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
}
