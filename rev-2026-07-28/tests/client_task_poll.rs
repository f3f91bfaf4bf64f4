//! Following a task (the Tasks extension) against a scripted server: when
//! a `CreateTaskResult` is followed at all, the poll interval, the status
//! events, a server-side cancellation, polls that break, and the
//! `tasks/cancel` sent when the stream is dropped.

mod client_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use http::StatusCode;
use mcp_rev_2026_07_28::client::ModernClient;
use mcp_test_support::wait::{eventually, within};
use mcp_transport_core::transport::{
    Misbehaviour, RequestOptions, StreamEvent, Transport, TransportError,
};
use serde_json::{Value, json};

fn declared() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

fn created(seen: &Seen, interval_ms: u64) -> axum::response::Response {
    json_ok(&result(
        &seen.id(),
        json!({"resultType": "task", "taskId": "t-1", "status": "working", "pollIntervalMs": interval_ms}),
    ))
}

fn state(seen: &Seen, status: &str, extra: Value) -> axum::response::Response {
    let mut task = json!({"resultType": "complete", "taskId": "t-1", "status": status});
    for (k, v) in extra.as_object().unwrap() {
        task[k] = v.clone();
    }
    json_ok(&result(&seen.id(), task))
}

/// An SSE answer that ends before any response: a broken poll.
fn broken() -> axum::response::Response {
    sse(&[])
}

fn call() -> Option<Box<serde_json::value::RawValue>> {
    params(json!({"name": "slow", "arguments": {}}))
}

/// The statuses of the `notifications/tasks` events among `events`.
fn statuses(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Notification(n) if n.method == "notifications/tasks" => {
                let p: Value = serde_json::from_str(n.params.as_deref()?.get()).ok()?;
                Some(p["status"].as_str()?.to_owned())
            }
            _ => None,
        })
        .collect()
}

/// Everything the call's stream yields, bounded: a call that follows
/// what it should not would poll for ever.
async fn run(client: &ModernClient) -> (Vec<StreamEvent>, Result<(), TransportError>) {
    within("the call's end", async {
        let mut stream = client
            .request("tools/call", call(), RequestOptions::default())
            .await?;
        let mut events = Vec::new();
        while let Some(e) = stream.next().await {
            events.push(e?);
        }
        Ok::<_, TransportError>(events)
    })
    .await
    .map_or_else(|e| (Vec::new(), Err(e)), |events| (events, Ok(())))
}

fn last_response(events: &[StreamEvent]) -> &mcp_transport_core::jsonrpc::Response {
    match events.last() {
        Some(StreamEvent::Response(r)) => r,
        other => panic!("the stream did not end with a response: {other:?}"),
    }
}

#[tokio::test]
async fn a_task_answer_to_a_request_that_did_not_declare_the_extension_is_invalid() {
    let fake = Fake::start(|seen| match seen.rpc_method() {
        Some("tools/call") => created(seen, 10),
        _ => state(seen, "working", json!({})),
    })
    .await;
    let (_, outcome) = run(&fake.client()).await;
    let err = outcome.unwrap_err();
    assert!(
        matches!(
            &err,
            TransportError::PeerMisbehaved(Misbehaviour::UnknownResultType { result_type, .. })
                if result_type == "task"
        ),
        "{err}"
    );
    assert!(fake.rpc("tasks/get").is_empty());
}

#[tokio::test]
async fn polls_wait_the_interval_and_each_status_is_reported_once() {
    let gets = Arc::new(AtomicUsize::new(0));
    let g = gets.clone();
    let fake = Fake::start(move |seen| match seen.rpc_method() {
        Some("tools/call") => created(seen, 150),
        _ => match g.fetch_add(1, Ordering::SeqCst) {
            0 | 1 => state(seen, "working", json!({"pollIntervalMs": 150})),
            _ => state(
                seen,
                "completed",
                json!({"result": {"content": [{"type": "text", "text": "ok"}]}}),
            ),
        },
    })
    .await;
    let client = ModernClient::new(fake.config().with_capabilities(declared())).unwrap();
    let (events, outcome) = run(&client).await;
    outcome.unwrap();
    assert_eq!(
        statuses(&events),
        ["working", "completed"],
        "a status seen again is not reported again"
    );
    assert_eq!(
        result_of(last_response(&events))["content"][0]["text"],
        "ok"
    );
    let seen = fake.seen();
    let methods: Vec<_> = seen.iter().map(|s| s.rpc_method().unwrap()).collect();
    assert_eq!(
        methods,
        ["tools/call", "tasks/get", "tasks/get", "tasks/get"]
    );
    // "Clients SHOULD respect the pollIntervalMs": each poll waits it
    // after the previous answer, the first one too.
    for pair in seen.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(gap >= Duration::from_millis(150), "polled after {gap:?}");
    }
}

#[tokio::test]
async fn a_task_the_server_cancelled_ends_the_call_with_its_message() {
    let fake = Fake::start(|seen| match seen.rpc_method() {
        Some("tools/call") => created(seen, 10),
        _ => state(
            seen,
            "cancelled",
            json!({"statusMessage": "stopped by the operator"}),
        ),
    })
    .await;
    let client = ModernClient::new(fake.config().with_capabilities(declared())).unwrap();
    let (events, outcome) = run(&client).await;
    outcome.unwrap();
    assert_eq!(statuses(&events), ["working", "cancelled"]);
    let error = last_response(&events).payload.clone().unwrap_err();
    assert_eq!(
        (error.code, error.message.as_str()),
        (-32800, "stopped by the operator")
    );
}

/// A server whose first `broken_gets` polls break, then completes.
async fn flaky(broken_gets: usize) -> Fake {
    let gets = Arc::new(AtomicUsize::new(0));
    Fake::start(move |seen| match seen.rpc_method() {
        Some("tools/call") => created(seen, 10),
        _ if gets.fetch_add(1, Ordering::SeqCst) < broken_gets => broken(),
        _ => state(seen, "completed", json!({"result": {"content": []}})),
    })
    .await
}

#[tokio::test]
async fn three_broken_polls_in_a_row_are_retried_a_fourth_fails() {
    let fake = flaky(3).await;
    let client = ModernClient::new(fake.config().with_capabilities(declared())).unwrap();
    let (events, outcome) = run(&client).await;
    outcome.unwrap();
    assert!(last_response(&events).payload.is_ok());
    assert_eq!(fake.rpc("tasks/get").len(), 4);

    let fake = flaky(usize::MAX).await;
    let client = ModernClient::new(fake.config().with_capabilities(declared())).unwrap();
    let (_, outcome) = run(&client).await;
    let err = outcome.unwrap_err();
    assert!(
        matches!(&err, TransportError::Connection(why) if why.contains("3 polls in a row broke")),
        "{err}"
    );
    assert_eq!(fake.rpc("tasks/get").len(), 4, "the first and 3 retries");
}

/// Drops a followed call after its creation event.
async fn drop_after_creation(fake: &Fake) {
    let client = ModernClient::new(fake.config().with_capabilities(declared())).unwrap();
    let mut stream = client
        .request("tools/call", call(), RequestOptions::default())
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(statuses(&[first]), ["working"]);
    drop(stream);
}

#[tokio::test]
async fn a_broken_cancel_is_sent_again_and_nothing_else() {
    let cancels = Arc::new(AtomicUsize::new(0));
    let c = cancels.clone();
    let fake = Fake::start(move |seen| match seen.rpc_method() {
        // Long enough that the dropped call never polls.
        Some("tools/call") => created(seen, 60_000),
        Some("tasks/cancel") if c.fetch_add(1, Ordering::SeqCst) == 0 => broken(),
        _ => state(seen, "cancelled", json!({})),
    })
    .await;
    drop_after_creation(&fake).await;
    eventually("tasks/cancel sent again", || {
        fake.rpc("tasks/cancel").len() == 2
    })
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let methods: Vec<_> = fake
        .seen()
        .iter()
        .map(|s| s.rpc_method().unwrap().to_owned())
        .collect();
    assert_eq!(methods, ["tools/call", "tasks/cancel", "tasks/cancel"]);
}

#[tokio::test]
async fn a_refused_cancel_is_not_sent_again() {
    let fake = Fake::start(|seen| match seen.rpc_method() {
        Some("tools/call") => created(seen, 60_000),
        _ => status(StatusCode::INTERNAL_SERVER_ERROR, "no"),
    })
    .await;
    drop_after_creation(&fake).await;
    eventually("tasks/cancel sent", || !fake.rpc("tasks/cancel").is_empty()).await;
    // A cancel that failed must not leave a call behind that cancels again
    // when it is dropped in turn.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(fake.rpc("tasks/cancel").len(), 1);
    assert_eq!(fake.seen().len(), 2);
}
