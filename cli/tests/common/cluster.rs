//! What the tests of `serve --store redis://…` instances share: starting
//! an instance in process, the requests of each era (by URL, so that tests
//! of `serve` child processes can use them too), reading a response's
//! JSON-RPC message, and polling a task until it reaches a status.
//!
//! Each test binary uses some of these.
#![allow(dead_code)]

use std::time::Duration;

use mcp_compat::serve::{build, config, with_store};
use mcp_test_support::server::TestServer;
use mcp_test_support::{RedisServer, within};
use serde_json::{Value, json};

/// The Tasks extension's identifier.
pub const EXT: &str = "io.modelcontextprotocol/tasks";

/// A `serve` instance on 127.0.0.1:0 over `redis`; `leases`: `(ttl, renew)`
/// in ms, `None` for the defaults.
pub async fn instance(redis: &RedisServer, leases: Option<(u64, u64)>) -> TestServer {
    let mut args = super::serve_args();
    args.store = redis.url();
    if let Some((ttl, renew)) = leases {
        args.lease_ttl_ms = Some(ttl);
        args.lease_renew_ms = Some(renew);
    }
    let cfg = with_store(config(&args).unwrap(), &args).await.unwrap();
    TestServer::serve(build(cfg).unwrap().route("/mcp")).await
}

/// A JSON-RPC request.
pub fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// `initialize` for a 2025-11-25 session with `capabilities`.
pub fn initialize(capabilities: Value) -> Value {
    request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "t", "version": "1"}}),
    )
}

/// A legacy (2025-11-25) POST of `body` in session `sid` (none for
/// `initialize`).
pub fn legacy(url: &str, sid: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
    let mut r = reqwest::Client::new()
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

/// A 2025-11-25 session with `capabilities` created on `url`, initialized.
pub async fn session(url: &str, capabilities: Value) -> String {
    let r = legacy(url, None, &initialize(capabilities))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = r.text().await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = legacy(url, Some(&sid), &note).send().await.unwrap();
    assert_eq!(r.status(), 202);
    sid
}

/// A 2026-07-28 request (id 1) declaring the Tasks extension and
/// elicitation, with its `Mcp-Method` and `Mcp-Name` (the tool's name or
/// the task id) headers.
pub fn modern(url: &str, method: &str, mut params: Value) -> reqwest::RequestBuilder {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {EXT: {}},
        },
    });
    let name = params["name"]
        .as_str()
        .or_else(|| params["taskId"].as_str())
        .map(str::to_owned);
    let mut r = reqwest::Client::new()
        .post(url)
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

/// The status and JSON-RPC message of a response: its JSON body, or the
/// last SSE event's data (`null` when there is none).
pub async fn answer(r: reqwest::Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    let v = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .rev()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .unwrap_or(Value::Null)
    });
    (status, v)
}

/// The JSON-RPC message of a 200 response.
pub async fn message(r: reqwest::Response) -> Value {
    let (status, v) = answer(r).await;
    assert_eq!(status, 200, "{v}");
    assert!(!v.is_null(), "no JSON-RPC message in the response");
    v
}

/// The task id of a `CreateTaskResult` answer (`result.task.taskId`, or
/// `result.taskId`).
pub fn task_id(created: &Value) -> String {
    created["result"]["task"]["taskId"]
        .as_str()
        .or_else(|| created["result"]["taskId"].as_str())
        .unwrap_or_else(|| panic!("no task id in {created}"))
        .to_owned()
}

/// Polls 2026-07-28 `tasks/get` on `url` until the task's status is
/// `status`; the task then.
pub async fn until(url: &str, id: &str, status: &str) -> Value {
    within(&format!("task {id} {status}"), async {
        loop {
            let got = message(
                modern(url, "tasks/get", json!({"taskId": id}))
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

/// Calls the reference tool `cancelled_count` through `call` until it says
/// one handler saw its cancellation.
pub async fn until_one_cancelled<F, Fut>(call: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = reqwest::Response>,
{
    within("the handler sees the cancel", async {
        loop {
            let count = message(call().await).await;
            if count["result"]["content"][0]["text"] == "1" {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
}
