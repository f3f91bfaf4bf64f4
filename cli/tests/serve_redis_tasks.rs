//! Issue 15: 2025-11-25's experimental tasks (SEP-1686, session-bound)
//! across two `serve --store redis://…` instances sharing one real
//! `redis-server`: a task created on A is polled through B, its input
//! request is carried by a `tasks/result` on B and answered by a POST that
//! lands on A, and another task created on A and cancelled through B stops
//! its handler on A; the same for a 2026-07-28 task (input through
//! `tasks/update` on B, cancel through B).

mod common;

use common::cluster::{
    instance, legacy, message, modern, request, session, task_id, until, until_one_cancelled,
};
use mcp_test_support::sse::SseReader;
use mcp_test_support::{RedisServer, within};
use serde_json::{Value, json};

/// Short leases: a worker learns of a cancel or an answer given through
/// another instance at each renewal.
const LEASES: Option<(u64, u64)> = Some((2_000, 100));

/// Starts tool `name` with `args` as a task on `url`; the task id.
async fn task(url: &str, sid: &str, name: &str, args: Value) -> String {
    let call = request(
        2,
        "tools/call",
        json!({"name": name, "arguments": args, "task": {}}),
    );
    task_id(&message(legacy(url, Some(sid), &call).send().await.unwrap()).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_task_created_on_a_is_polled_answered_and_cancelled_through_b() {
    let redis = RedisServer::start();
    let (sa, sb) = (
        instance(&redis, LEASES).await,
        instance(&redis, LEASES).await,
    );
    let (a, b) = (sa.url(), sb.url());
    let sid = session(&a, json!({"elicitation": {}})).await;

    // Created on A, polled through B.
    let id = task(&a, &sid, "slow_ask", json!({"ms": 10})).await;
    let get = request(3, "tasks/get", json!({"taskId": id}));
    let got = message(legacy(&b, Some(&sid), &get).send().await.unwrap()).await;
    assert!(
        ["working", "input_required"].contains(&got["result"]["status"].as_str().unwrap_or("")),
        "{got}"
    );

    // `tasks/result` through B carries the task's input request; the
    // client's answer lands on A, which hands it to B.
    let result = request(4, "tasks/result", json!({"taskId": id}));
    let waiting = legacy(&b, Some(&sid), &result).send().await.unwrap();
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
    let r = legacy(&a, Some(&sid), &answer).send().await.unwrap();
    assert_eq!(r.status(), 202);
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
    let cancel = request(5, "tasks/cancel", json!({"taskId": id}));
    let cancelled = message(legacy(&b, Some(&sid), &cancel).send().await.unwrap()).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    let count = request(
        6,
        "tools/call",
        json!({"name": "cancelled_count", "arguments": {}}),
    );
    until_one_cancelled(|| async { legacy(&a, Some(&sid), &count).send().await.unwrap() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_task_on_a_takes_input_and_a_cancel_given_through_b() {
    let redis = RedisServer::start();
    let (sa, sb) = (
        instance(&redis, LEASES).await,
        instance(&redis, LEASES).await,
    );
    let (a, b) = (sa.url(), sb.url());
    let call = |name: &str, args: Value| {
        modern(&a, "tools/call", json!({"name": name, "arguments": args}))
    };
    let created = message(call("slow_ask", json!({"ms": 10})).send().await.unwrap()).await;
    let id = task_id(&created);
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
    // hears of the cancel when it next reads the store).
    let created = message(call("slow", json!({"ms": 60_000})).send().await.unwrap()).await;
    let id = task_id(&created);
    let cancel = modern(&b, "tasks/cancel", json!({"taskId": id}));
    let ack = message(cancel.send().await.unwrap()).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    until_one_cancelled(|| async { call("cancelled_count", json!({})).send().await.unwrap() })
        .await;
}
