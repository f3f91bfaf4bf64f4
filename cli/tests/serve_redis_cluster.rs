//! `serve --store redis+cluster://…`: two instances sharing a real
//! three-master Redis Cluster (the `Layout::Cluster` key layout, every
//! store operation in one hash slot). A session created on A is used
//! through B; under SEP-1699's `after-priming` policy every POST's
//! connection is closed after its priming event, so each answer is fetched
//! by a resume (`GET` with `Last-Event-ID`) on the *other* instance — a
//! tool call's answer and a task's `CreateTaskResult` both cross; the
//! task created on A is listed, polled and its result fetched through B.
//! And 2025-11-25 `tasks/list` across instances (the store's per-session
//! index), on one Redis and on the cluster: tasks created on A and on B
//! are listed, in creation order, through either.

mod common;

use mcp_compat::serve::{build, config, with_store};
use mcp_test_support::server::TestServer;
use mcp_test_support::{RedisCluster, RedisServer, within};
use serde_json::{Value, json};

/// A `serve` instance on 127.0.0.1:0 with `--store store`, and with
/// `--disconnect after-priming --retry-ms 10` when `cut` is set.
async fn instance(store: &str, cut: bool) -> TestServer {
    let mut args = common::serve_args();
    args.store = store.to_owned();
    if cut {
        args.disconnect = Some("after-priming".parse().unwrap());
        args.retry_ms = Some(10);
    }
    let cfg = with_store(config(&args).unwrap(), &args).await.unwrap();
    TestServer::serve(build(cfg).unwrap().route("/mcp")).await
}

fn legacy(builder: reqwest::RequestBuilder, sid: &str) -> reqwest::RequestBuilder {
    builder
        .header("mcp-session-id", sid)
        .header("mcp-protocol-version", "2025-11-25")
}

/// The events of an SSE body: (id, JSON data) for each event with data.
fn events(text: &str) -> Vec<(Option<String>, Option<Value>)> {
    text.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let id = block
                .lines()
                .find_map(|l| l.strip_prefix("id:"))
                .map(|s| s.trim().to_owned());
            let data = block
                .lines()
                .find_map(|l| l.strip_prefix("data:"))
                .and_then(|d| serde_json::from_str(d.trim()).ok());
            (id, data)
        })
        .collect()
}

/// A 2025-11-25 session created on `a`, its `notifications/initialized`
/// sent through `b`.
async fn session(a: &TestServer, b: &TestServer) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let r = reqwest::Client::new()
        .post(a.url())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = r.text().await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = legacy(reqwest::Client::new().post(b.url()), &sid)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(note.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    sid
}

/// Notes the events of `text`: the last event id, and every response to
/// request `id`.
fn take(text: &str, id: i64, last: &mut Option<String>, seen: &mut Vec<Value>) {
    for (eid, data) in events(text) {
        if eid.is_some() {
            *last = eid;
        }
        if let Some(d) = data
            && d["id"] == id
        {
            seen.push(d);
        }
    }
}

/// What one request cost to answer: its response, and how many resumes
/// on the other instance it took.
struct Answer {
    response: Value,
    resumes: usize,
}

/// Posts request `body` (id `id`) to `post_to`; while the answer has not
/// arrived (the connection was cut), resumes the stream on `resume_on`
/// from the last event id seen. The response must arrive exactly once.
async fn call(
    post_to: &TestServer,
    resume_on: &TestServer,
    sid: &str,
    id: i64,
    body: Value,
) -> Answer {
    let r = legacy(reqwest::Client::new().post(post_to.url()), sid)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let mut seen: Vec<Value> = Vec::new();
    let mut last = None;
    take(&r.text().await.unwrap(), id, &mut last, &mut seen);
    let mut resumes = 0;
    within("the answer arrives through a resume", async {
        while seen.is_empty() {
            let from = last.clone().expect("an event id before the cut");
            let r = legacy(reqwest::Client::new().get(resume_on.url()), sid)
                .header("accept", "text/event-stream")
                .header("last-event-id", &from)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200, "resume from {from}");
            resumes += 1;
            take(&r.text().await.unwrap(), id, &mut last, &mut seen);
        }
    })
    .await;
    assert_eq!(seen.len(), 1, "the response exactly once: {seen:?}");
    Answer {
        response: seen.remove(0),
        resumes,
    }
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_resume_and_a_task_crosses_instances_on_a_redis_cluster() {
    let cluster = RedisCluster::start();
    let (a, b) = (
        instance(&cluster.url(), true).await,
        instance(&cluster.url(), true).await,
    );
    let sid = session(&a, &b).await;

    // A tool call posted to A, its connection cut after priming, answered
    // through a resume on B (including what A wrote after the cut).
    let slow = request(
        2,
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 300}}),
    );
    let answer = call(&a, &b, &sid, 2, slow).await;
    assert!(answer.resumes >= 1, "the POST's connection was cut");
    assert_eq!(
        answer.response["result"]["content"][0]["text"], "slept 300 ms",
        "{}",
        answer.response
    );

    // A task created on A (its CreateTaskResult fetched through B) is
    // listed, polled and its result fetched through B.
    let create = request(
        3,
        "tools/call",
        json!({"name": "slow", "arguments": {"ms": 200}, "task": {}}),
    );
    let created = call(&a, &b, &sid, 3, create).await.response;
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task in {created}"))
        .to_owned();
    let listed = call(&b, &a, &sid, 4, request(4, "tasks/list", json!({})))
        .await
        .response;
    assert_eq!(
        listed["result"]["tasks"][0]["taskId"],
        task_id.as_str(),
        "{listed}"
    );
    let result = call(
        &b,
        &a,
        &sid,
        5,
        request(5, "tasks/result", json!({"taskId": task_id})),
    )
    .await
    .response;
    assert_eq!(
        result["result"]["content"][0]["text"], "slept 200 ms",
        "{result}"
    );
    let got = call(
        &a,
        &b,
        &sid,
        6,
        request(6, "tasks/get", json!({"taskId": task_id})),
    )
    .await
    .response;
    assert_eq!(got["result"]["status"], "completed", "{got}");

    // Deleted through B: 404 on both.
    let r = legacy(reqwest::Client::new().delete(b.url()), &sid)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    for s in [&a, &b] {
        let r = legacy(reqwest::Client::new().post(s.url()), &sid)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(request(7, "ping", json!({})).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
}

/// `tasks/list` through either instance lists the session's tasks created
/// on both, oldest first; another session lists none of them.
async fn tasks_are_listed_through_every_instance(store: &str) {
    let (a, b) = (instance(store, false).await, instance(store, false).await);
    let sid = session(&a, &b).await;
    let mut ids = Vec::new();
    for (n, on) in [(10, &a), (11, &b), (12, &a)] {
        let create = request(
            n,
            "tools/call",
            json!({"name": "slow", "arguments": {"ms": 60_000}, "task": {}}),
        );
        let created = call(on, on, &sid, n, create).await.response;
        ids.push(
            created["result"]["task"]["taskId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    for on in [&a, &b] {
        let listed = call(on, on, &sid, 20, request(20, "tasks/list", json!({})))
            .await
            .response;
        let got: Vec<&str> = listed["result"]["tasks"]
            .as_array()
            .unwrap_or_else(|| panic!("{listed}"))
            .iter()
            .map(|t| t["taskId"].as_str().unwrap())
            .collect();
        assert_eq!(got, ids, "{listed}");
        assert!(listed["result"].get("nextCursor").is_none(), "{listed}");
        let bad = call(
            on,
            on,
            &sid,
            21,
            request(21, "tasks/list", json!({"cursor": "nope"})),
        )
        .await
        .response;
        assert_eq!(bad["error"]["code"], -32602, "{bad}");
    }
    let other = session(&b, &a).await;
    let listed = call(&a, &a, &other, 22, request(22, "tasks/list", json!({})))
        .await
        .response;
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
    for (n, id) in ids.iter().enumerate() {
        let n = 30 + i64::try_from(n).unwrap();
        let cancel = request(n, "tasks/cancel", json!({"taskId": id}));
        let r = call(&b, &b, &sid, n, cancel).await.response;
        assert_eq!(r["result"]["status"], "cancelled", "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_list_across_instances_on_one_redis() {
    let redis = RedisServer::start();
    tasks_are_listed_through_every_instance(&redis.url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_list_across_instances_on_a_redis_cluster() {
    let cluster = RedisCluster::start();
    tasks_are_listed_through_every_instance(&cluster.url()).await;
}
