//! Following a task against a fake 2025-11-25 server (`client/task.rs`):
//! only a request sent with `params.task` (an object) is followed, however
//! its result looks; and the caller's timeout bounds each `tasks/result`
//! (a `tasks/result` that times out is sent again, up to `MAX_BROKEN` in a
//! row); a `tasks/get` the server was briefly unable to answer (408, 429,
//! 5xx) is sent again, one it refused (another 4xx) is not. The rest of
//! the task client runs against our own server in
//! `rev-2025-11-25`'s `tasks.rs` and `task_poll_cut.rs`.

mod client_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use client_common::*;
use futures::StreamExt;
use http::StatusCode;
use mcp_session_engine::client::{ClientConfig, LegacyClient};
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport, TransportError};
use serde_json::{Value, json};

/// A `CreateTaskResult` for `id`.
fn created(id: &Value) -> Value {
    result(
        id,
        json!({"task": {"taskId": "t1", "status": "working", "createdAt": "2026-12-06T00:00:00Z", "ttl": 60000}}),
    )
}

/// A fake whose `tools/call` is answered with a `CreateTaskResult` and
/// whose `tasks/result` is an SSE stream that never answers.
async fn fake() -> Fake {
    legacy_fake("2025-11-25", |seen| {
        if seen.is_rpc("tools/call") {
            return Some(json_ok(&created(seen.rpc_id().unwrap())));
        }
        seen.is_rpc("tasks/result")
            .then(|| sse(vec![priming("r0", None)], Ending::Hang, None))
    })
    .await
}

async fn events_of(
    client: &LegacyClient,
    params: Value,
    options: RequestOptions,
) -> Vec<Result<StreamEvent, TransportError>> {
    let stream = client
        .request("tools/call", Some(to_raw(&params).unwrap()), options)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), stream.collect::<Vec<_>>())
        .await
        .expect("the stream ended")
}

#[tokio::test]
async fn only_a_request_with_a_task_object_is_followed() {
    let fake = fake().await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    for params in [
        json!({"name": "t"}),
        json!({"name": "t", "task": true}),
        json!({"name": "t", "task": "ttl=60000"}),
    ] {
        let events = events_of(&client, params.clone(), RequestOptions::default()).await;
        match &events[..] {
            [Ok(StreamEvent::Response(r))] => {
                let v: Value = serde_json::from_str(r.payload.as_ref().unwrap().get()).unwrap();
                assert_eq!(v["task"]["taskId"], "t1", "{params}");
            }
            other => panic!("{params}: {other:?}"),
        }
    }
    assert!(fake.rpc("tasks/result").is_empty(), "{:?}", fake.seen());
}

#[tokio::test]
async fn the_callers_timeout_bounds_each_tasks_result() {
    let fake = fake().await;
    let client = LegacyClient::connect(ClientConfig::new(&fake.url))
        .await
        .unwrap();
    let options = RequestOptions {
        timeout: Some(Duration::from_millis(200)),
        ..RequestOptions::default()
    };
    let events = events_of(
        &client,
        json!({"name": "t", "task": {"ttl": 60000}}),
        options,
    )
    .await;
    match &events[..] {
        [
            Ok(StreamEvent::Notification(n)),
            Err(TransportError::Timeout(d)),
        ] => {
            assert_eq!(n.method, "notifications/tasks/status");
            assert_eq!(*d, Duration::from_millis(200));
        }
        other => panic!("{other:?}"),
    }
    // Three in a row timed out: the call ends with the last.
    assert_eq!(fake.rpc("tasks/result").len(), 3);
}

/// `resume_task` against a fake whose first `tasks/get` is answered
/// `first` and the next ones with the task's status: the events, and how
/// many `tasks/get` were sent.
async fn resume_after(first: StatusCode) -> (Vec<Result<StreamEvent, TransportError>>, usize) {
    let gets = Arc::new(AtomicUsize::new(0));
    let g = gets.clone();
    let fake = legacy_fake("2025-11-25", move |seen| {
        let id = seen.rpc_id()?;
        if seen.is_rpc("tasks/get") {
            if g.fetch_add(1, Ordering::SeqCst) == 0 {
                return Some(status(first, ""));
            }
            return Some(json_ok(&result(
                id,
                json!({"taskId": "t1", "status": "working"}),
            )));
        }
        seen.is_rpc("tasks/result")
            .then(|| json_ok(&result(id, json!({"content": []}))))
    })
    .await;
    let client = LegacyClient::connect(
        ClientConfig::new(&fake.url)
            .with_reconnect_backoff(Duration::from_millis(10))
            .with_max_resume_attempts(3),
    )
    .await
    .unwrap();
    let stream = client.resume_task("t1").await.unwrap();
    let events = tokio::time::timeout(Duration::from_secs(10), stream.collect::<Vec<_>>())
        .await
        .expect("the stream ended");
    (events, gets.load(Ordering::SeqCst))
}

#[tokio::test]
async fn a_tasks_get_the_server_could_not_answer_is_sent_again() {
    for code in [408, 429, 500, 503, 599] {
        let (events, gets) = resume_after(StatusCode::from_u16(code).unwrap()).await;
        assert_eq!(gets, 2, "{code}");
        match &events[..] {
            [
                Ok(StreamEvent::Notification(n)),
                Ok(StreamEvent::Response(r)),
            ] => {
                assert_eq!(n.method, "notifications/tasks/status");
                assert!(r.payload.is_ok(), "{code}: {r:?}");
            }
            other => panic!("{code}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_tasks_get_the_server_refused_is_not_sent_again() {
    for code in [400, 403, 409] {
        let (events, gets) = resume_after(StatusCode::from_u16(code).unwrap()).await;
        assert_eq!(gets, 1, "{code}");
        match &events[..] {
            [Err(TransportError::Http { status, .. })] => assert_eq!(*status, code),
            other => panic!("{code}: {other:?}"),
        }
    }
}
