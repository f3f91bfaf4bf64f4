//! `serve --store redis://…`: two instances sharing one real `redis-server`
//! share the 2026-07-28 tasks (created on one, read and cancelled through
//! the other), and while Redis is down the requests that need it get 503
//! with a JSON-RPC error body, then work again once it is back, with no
//! restart of the server.

mod common;

use std::time::Duration;

use common::cluster::{answer, initialize, instance, legacy, modern, session, task_id};
use mcp_test_support::{RedisServer, within};
use serde_json::{Value, json};

/// Posts a 2026-07-28 request (see [`modern`]) to `url`: the status and
/// the JSON-RPC message.
async fn post_modern(url: &str, method: &str, params: Value) -> (u16, Value) {
    answer(modern(url, method, params).send().await.unwrap()).await
}

/// Posts `initialize` to `url`: the status and the JSON-RPC message.
async fn post_initialize(url: &str) -> (u16, Value) {
    answer(
        legacy(url, None, &initialize(json!({})))
            .send()
            .await
            .unwrap(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_on_one_instance_is_polled_and_cancelled_through_another() {
    let redis = RedisServer::start();
    let (sa, sb) = (instance(&redis, None).await, instance(&redis, None).await);
    let (a, b) = (sa.url(), sb.url());
    let slow = json!({"name": "slow", "arguments": {"ms": 60_000}});
    let (status, created) = post_modern(&a, "tools/call", slow).await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = task_id(&created);

    let (status, got) = post_modern(&b, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["result"]["status"], "working", "{got}");

    let (status, cancelled) = post_modern(&b, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(status, 200, "{cancelled}");
    let (_, on_a) = post_modern(&a, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(on_a["result"]["status"], "cancelled", "{on_a}");

    // An unknown id is the spec's error on both.
    for s in [&a, &b] {
        let (_, v) = post_modern(s, "tasks/get", json!({"taskId": "nope"})).await;
        assert_eq!(v["error"]["code"], -32602, "{v}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_is_503_with_a_json_rpc_error_then_service_resumes() {
    let mut redis = RedisServer::start();
    let server = instance(&redis, None).await;
    let url = server.url();
    let (status, v) = post_initialize(&url).await;
    assert_eq!(status, 200, "{v}");

    redis.stop();
    within("requests while Redis is down", async {
        let (status, v) = post_initialize(&url).await;
        assert_eq!(status, 503, "initialize: {v}");
        assert_eq!(v["error"]["code"], -32603, "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("unavailable"),
            "{v}"
        );
        let (status, v) = post_modern(&url, "tasks/get", json!({"taskId": "x"})).await;
        assert_eq!(status, 503, "tasks/get: {v}");
        assert_eq!(v["error"]["code"], -32603, "{v}");
    })
    .await;

    redis.restart();
    within("recovery", async {
        for attempt in 0.. {
            let (status, v) = post_initialize(&url).await;
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
        let (_, v) = post_modern(&url, "tasks/get", json!({"taskId": "x"})).await;
        assert_eq!(v["error"]["code"], -32602, "tasks work again: {v}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_while_redis_is_down_is_503_not_a_lost_stream() {
    let mut redis = RedisServer::start();
    let server = instance(&redis, None).await;
    let url = server.url();
    let sid = session(&url, json!({})).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}}});
    let text = legacy(&url, Some(&sid), &call)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let last_id = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("id:"))
        .unwrap_or_else(|| panic!("no event id in {text}"))
        .trim()
        .to_owned();
    assert!(text.contains("hi"), "{text}");

    redis.stop();
    let resume = within(
        "a resume while Redis is down",
        reqwest::Client::new()
            .get(&url)
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
    let r = legacy(&url, Some(&sid), &call).send().await.unwrap();
    assert_eq!(r.status(), 503);
}

/// With Redis as the store, 2025-11-25's experimental tasks are served
/// on it by default and not at all under `--no-legacy-tasks` (the Redis
/// path sets the tasks again: it must honour the flag as the memory path
/// does); the 2026-07-28 tasks are served either way.
#[tokio::test]
async fn the_redis_store_keeps_no_legacy_tasks() {
    use mcp_compat::serve::{ServeArgs, config, with_store};
    use mcp_rev_2025_11_25::PollingExt;
    let redis = RedisServer::start();
    let url = redis.url();
    for (extra, legacy_tasks) in [(None, true), (Some("--no-legacy-tasks"), false)] {
        let options: Vec<&str> = ["--store", url.as_str()].into_iter().chain(extra).collect();
        let args = ServeArgs::from_options(options.iter().copied()).unwrap();
        let cfg = within("with_store", with_store(config(&args).unwrap(), &args))
            .await
            .unwrap();
        assert_eq!(
            cfg.legacy.polling().tasks.is_some(),
            legacy_tasks,
            "{options:?}"
        );
        assert!(cfg.modern.tasks.is_some(), "{options:?}");
    }
}
