//! `serve --store redis://…`: two instances sharing one real `redis-server`
//! share the 2026-07-28 tasks (created on one, read and cancelled through
//! the other), and while Redis is down the requests that need it get 503
//! with a JSON-RPC error body, then work again once it is back, with no
//! restart of the server.

mod common;

use std::time::Duration;

use mcp_compat::serve::{build, config, with_store};
use mcp_test_support::server::TestServer;
use mcp_test_support::{RedisServer, within};
use serde_json::{Value, json};

const EXT: &str = "io.modelcontextprotocol/tasks";

/// A `serve` instance on 127.0.0.1:0 with `--store URL`.
async fn instance(store: &str) -> TestServer {
    let mut args = common::serve_args();
    args.store = store.to_owned();
    let cfg = with_store(config(&args).unwrap(), &args).await.unwrap();
    let server = build(cfg).unwrap();
    TestServer::serve(server.route("/mcp")).await
}

/// A 2026-07-28 request that declares the Tasks extension.
fn modern(method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}},
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

/// Posts `body` to `server` with the headers its revision needs; the
/// status and the JSON-RPC message (JSON, or the last SSE event).
async fn post(server: &TestServer, body: &Value) -> (u16, Value) {
    let mut r = reqwest::Client::new()
        .post(server.url())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    let method = body["method"].as_str().unwrap();
    if method == "initialize" {
        // A legacy (2025-11-25) session.
    } else {
        r = r
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        let p = &body["params"];
        if let Some(name) = p["name"].as_str().or_else(|| p["taskId"].as_str()) {
            r = r.header("mcp-name", name);
        }
    }
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    let sse = resp
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
    let text = resp.text().await.unwrap();
    let v = if sse {
        text.lines()
            .rev()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .unwrap_or(Value::Null)
    } else {
        serde_json::from_str(&text).unwrap_or(Value::Null)
    };
    (status, v)
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_on_one_instance_is_polled_and_cancelled_through_another() {
    let redis = RedisServer::start();
    let (a, b) = (instance(&redis.url()).await, instance(&redis.url()).await);
    let (status, created) = post(
        &a,
        &modern(
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 60_000}}),
        ),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .or_else(|| created["result"]["taskId"].as_str())
        .unwrap_or_else(|| panic!("no task id in {created}"))
        .to_owned();

    let (status, got) = post(&b, &modern("tasks/get", json!({"taskId": id}))).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["result"]["status"], "working", "{got}");

    let (status, cancelled) = post(&b, &modern("tasks/cancel", json!({"taskId": id}))).await;
    assert_eq!(status, 200, "{cancelled}");
    let (_, on_a) = post(&a, &modern("tasks/get", json!({"taskId": id}))).await;
    assert_eq!(on_a["result"]["status"], "cancelled", "{on_a}");

    // An unknown id is the spec's error on both.
    for s in [&a, &b] {
        let (_, v) = post(s, &modern("tasks/get", json!({"taskId": "nope"}))).await;
        assert_eq!(v["error"]["code"], -32602, "{v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_is_503_with_a_json_rpc_error_then_service_resumes() {
    let mut redis = RedisServer::start();
    let server = instance(&redis.url()).await;
    let (status, v) = post(&server, &initialize()).await;
    assert_eq!(status, 200, "{v}");

    redis.stop();
    within("requests while Redis is down", async {
        let (status, v) = post(&server, &initialize()).await;
        assert_eq!(status, 503, "initialize: {v}");
        assert_eq!(v["error"]["code"], -32603, "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("unavailable"),
            "{v}"
        );
        let (status, v) = post(&server, &modern("tasks/get", json!({"taskId": "x"}))).await;
        assert_eq!(status, 503, "tasks/get: {v}");
        assert_eq!(v["error"]["code"], -32603, "{v}");
    })
    .await;

    redis.restart();
    within("recovery", async {
        for attempt in 0.. {
            let (status, v) = post(&server, &initialize()).await;
            if status == 200 {
                break;
            }
            assert_eq!(status, 503, "{v}");
            assert!(
                attempt < 100,
                "initialize still failing after Redis came back"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let (_, v) = post(&server, &modern("tasks/get", json!({"taskId": "x"}))).await;
        assert_eq!(v["error"]["code"], -32602, "tasks work again: {v}");
    })
    .await;
}

/// A legacy (2025-11-25) request in session `sid`.
fn legacy(server: &TestServer, sid: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(server.url())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", sid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_while_redis_is_down_is_503_not_a_lost_stream() {
    let mut redis = RedisServer::start();
    let server = instance(&redis.url()).await;
    let init = reqwest::Client::new()
        .post(server.url())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(initialize().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(init.status(), 200);
    let sid = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = init.text().await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = legacy(&server, &sid)
        .body(note.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}}});
    let answer = legacy(&server, &sid)
        .body(call.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let last_id = answer
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("id:"))
        .unwrap_or_else(|| panic!("no event id in {answer}"))
        .trim()
        .to_owned();
    assert!(answer.contains("hi"), "{answer}");

    redis.stop();
    let resume = within(
        "a resume while Redis is down",
        reqwest::Client::new()
            .get(server.url())
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &sid)
            .header("last-event-id", &last_id)
            .send(),
    )
    .await
    .unwrap();
    assert_eq!(resume.status(), 503);
    let v: Value = resume.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32603, "{v}");
    // A new request's stream cannot be opened either: 503 too.
    let r = legacy(&server, &sid)
        .body(call.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
}
