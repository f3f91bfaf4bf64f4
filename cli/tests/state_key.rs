//! `serve --state-key-file`: instances given the same key accept each
//! other's sealed 2026-07-28 `requestState`, so an input round issued by one
//! may be answered on another (what a load balancer does); instances with
//! their own keys refuse it as the integrity check says; a bad key file is
//! a clear startup error.

mod common;

use std::path::PathBuf;

use mcp_compat::serve::{build, config, read_state_key};
use mcp_test_support::server::TestServer;
use serde_json::{Value, json};

const TOOL: &str = "test_input_required_result_multi_round";

/// A directory of this test's own under the system's temp dir.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("state-key-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn key_file(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

async fn instance(key: Option<PathBuf>) -> TestServer {
    let mut args = common::serve_args();
    args.state_key_file = key;
    TestServer::serve(build(config(&args).unwrap()).unwrap().route("/mcp")).await
}

/// A 2026-07-28 `tools/call` of the multi-round tool with `extra` params;
/// the JSON-RPC answer.
async fn call(server: &TestServer, extra: Value) -> Value {
    let mut params = json!({
        "name": TOOL,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
    });
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let resp = reqwest::Client::new()
        .post(server.url())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", TOOL)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(std::iter::once(text.as_str()))
        .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {text:?}"))
}

/// Round 1 on `a`, its answer on `b`: the answer `b` gives.
async fn round_trip(a: &TestServer, b: &TestServer) -> Value {
    let first = call(a, json!({})).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].clone();
    assert!(state.is_string(), "{first}");
    let answer = json!({"action": "accept", "content": {"name": "Alice"}});
    call(
        b,
        json!({"inputResponses": {"step1": answer}, "requestState": state}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_sharing_a_key_accept_each_others_request_state() {
    let dir = temp_dir("shared");
    let key = key_file(&dir, "k", &format!("{}\n", "ab".repeat(32)));
    let a = instance(Some(key.clone())).await;
    let b = instance(Some(key)).await;
    let second = round_trip(&a, &b).await;
    // Round 2 of the tool: it asks for step 2, so B opened A's state.
    assert_eq!(second["result"]["resultType"], "input_required", "{second}");
    assert!(
        second["result"]["inputRequests"]["step2"].is_object(),
        "{second}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_with_their_own_keys_refuse_each_others_request_state() {
    let dir = temp_dir("own");
    let a = instance(Some(key_file(&dir, "a", &"ab".repeat(32)))).await;
    let b = instance(Some(key_file(&dir, "b", &"cd".repeat(32)))).await;
    let second = round_trip(&a, &b).await;
    assert_eq!(second["error"]["code"], -32602, "{second}");
    // And without a key file each process has its own random key.
    let (a, b) = (instance(None).await, instance(None).await);
    let second = round_trip(&a, &b).await;
    assert_eq!(second["error"]["code"], -32602, "{second}");
}

#[test]
fn a_bad_key_file_is_a_clear_error() {
    let dir = temp_dir("bad");
    for (text, needle) in [
        ("abcd", "expected 64 hex digits"),
        (&"zz".repeat(32)[..], "expected 64 hex digits"),
    ] {
        let e = read_state_key(&key_file(&dir, "bad", text)).unwrap_err();
        assert!(e.contains(needle), "{e}");
    }
    let missing = read_state_key(&dir.join("none")).unwrap_err();
    assert!(missing.contains("--state-key-file"), "{missing}");
    let key = read_state_key(&key_file(&dir, "ok", &format!(" {}\n", "0f".repeat(32)))).unwrap();
    assert_eq!(key, [0x0f; 32]);
    // Meaningless without 2026-07-28.
    let mut args = common::serve_args();
    args.revisions = "2025-11-25".into();
    args.state_key_file = Some(key_file(&dir, "k", &"ab".repeat(32)));
    let e = config(&args).map(|_| ()).unwrap_err();
    assert!(e.contains("only 2026-07-28 seals requestState"), "{e}");
}
