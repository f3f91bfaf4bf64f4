//! A task's poll cut off before it was answered: our session client sends
//! `tasks/result` or `tasks/get` again (within its resumption budget)
//! instead of failing the call, and the task is not cancelled by it
//! (*Transports*, "Sending Messages to the Server" 6: "Disconnection SHOULD
//! NOT be interpreted as the client cancelling its request").
//!
//! The server holds the chosen POSTs unanswered (no status line goes out);
//! once a held POST has reached it, the test cuts every connection at the
//! proxy between client and server. Everything is ordered by events (the
//! held count, the gate the tool waits on), never by elapsed time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use mcp_rev_2025_11_25::{self as rev, LegacyClient, TasksConfig, TasksExt};
use mcp_test_support::client::answer;
use mcp_test_support::server::TestServer;
use mcp_test_support::{Proxy, WAIT, eventually};
use mcp_transport_core::handler::{Execution, Handler, Outcome, RequestContext, ServerDescription};
use mcp_transport_core::jsonrpc::{ErrorObject, Request, to_raw};
use mcp_transport_core::transport::{
    RequestOptions, ResponseStream, ResumeFailure, StreamEvent, Transport, TransportError,
};
use serde_json::{Value, json};
use tokio::sync::watch;

/// `gate` (may be long): waits for the gate, then answers "opened";
/// counts the cancellations it sees.
struct Gate {
    gate: watch::Receiver<bool>,
    cancelled: AtomicUsize,
}

#[async_trait]
impl Handler for Gate {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({"name": "gate", "version": "1"}),
            capabilities: json!({"tools": {}}),
            instructions: None,
        }
    }

    fn execution(&self, _request: &Request) -> Execution {
        Execution::MayBeLong
    }

    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome {
        if request.method != "tools/call" {
            return Outcome::Error(ErrorObject::method_not_found(&request.method));
        }
        let mut gate = self.gate.clone();
        tokio::select! {
            () = async { let _ = gate.wait_for(|open| *open).await; } => {
                Outcome::json(&json!({ "content": [{ "type": "text", "text": "opened" }] }))
            }
            () = cx.cancelled() => {
                self.cancelled.fetch_add(1, Ordering::SeqCst);
                Outcome::Error(ErrorObject::new(-32800, "cancelled"))
            }
        }
    }
}

struct Fixture {
    handler: Arc<Gate>,
    open: watch::Sender<bool>,
    /// POSTs of the held method that reached the server (held or not).
    arrived: Arc<AtomicUsize>,
    proxy: Proxy,
    _server: TestServer,
}

/// Our server with tasks, behind a proxy; the first `hold` POSTs of
/// `method` are held unanswered (until their connection is cut).
async fn start(method: &'static str, hold: usize) -> Fixture {
    let (open, gate) = watch::channel(false);
    let handler = Arc::new(Gate {
        gate,
        cancelled: AtomicUsize::new(0),
    });
    let config = rev::server_config().with_tasks(TasksConfig {
        poll_interval_ms: 20,
        ..TasksConfig::default()
    });
    let arrived = Arc::new(AtomicUsize::new(0));
    let counted = arrived.clone();
    let app = rev::server(handler.clone(), config)
        .route("/mcp")
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let counted = counted.clone();
                async move {
                    let (parts, body) = req.into_parts();
                    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
                    let rpc: Value = serde_json::from_slice(&bytes).unwrap_or_default();
                    if rpc["method"] == method && counted.fetch_add(1, Ordering::SeqCst) < hold {
                        // Never answered: the status line never goes out.
                        std::future::pending::<()>().await;
                    }
                    let req = axum::extract::Request::from_parts(parts, bytes.into());
                    next.run(req).await
                }
            },
        ));
    let server = TestServer::serve(app).await;
    let proxy = Proxy::start(server.addr()).await.unwrap();
    Fixture {
        handler,
        open,
        arrived,
        proxy,
        _server: server,
    }
}

async fn client(f: &Fixture, attempts: u32) -> LegacyClient {
    LegacyClient::connect(
        rev::client_config(f.proxy.url())
            .with_capabilities(json!({ "tasks": {} }))
            .with_reconnect_backoff(Duration::from_millis(20))
            .with_max_resume_attempts(attempts)
            .with_request_timeout(Some(WAIT)),
    )
    .await
    .expect("connect")
}

/// `gate` as a task; the stream after its first event (the task's status).
async fn call_gate(c: &LegacyClient) -> (ResponseStream, String) {
    let mut stream = c
        .request(
            "tools/call",
            Some(to_raw(&json!({"name": "gate", "arguments": {}, "task": {}})).unwrap()),
            RequestOptions::default(),
        )
        .await
        .unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert!(
        matches!(&first, StreamEvent::Notification(n) if n.method == "notifications/tasks/status"),
        "{first:?}"
    );
    let id = stream.task_id().expect("a task");
    (stream, id)
}

/// Waits until `n` POSTs of the held method arrived, then cuts every
/// connection (the held one among them).
async fn cut_when_arrived(f: &Fixture, n: usize) {
    eventually("the poll reached the server", || {
        f.arrived.load(Ordering::SeqCst) >= n
    })
    .await;
    assert!(f.proxy.cut_and_wait().await >= 1, "the held POST was live");
}

/// The task as `tasks/get` reports it.
async fn task_status(c: &LegacyClient, id: &str) -> Value {
    let r = answer(
        c,
        "tasks/get",
        Some(to_raw(&json!({ "taskId": id })).unwrap()),
    )
    .await
    .unwrap();
    serde_json::from_str(r.payload.unwrap().get()).unwrap()
}

fn text_of(r: &mcp_transport_core::jsonrpc::Response) -> String {
    let v: Value = serde_json::from_str(r.payload.as_ref().unwrap().get()).unwrap();
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_tasks_result_post_cut_before_its_answer_is_sent_again() {
    let f = start("tasks/result", 1).await;
    let c = client(&f, 5).await;
    let (stream, id) = call_gate(&c).await;
    let pending = tokio::spawn(stream.response());
    cut_when_arrived(&f, 1).await;
    eventually("tasks/result was sent again", || {
        f.arrived.load(Ordering::SeqCst) >= 2
    })
    .await;
    f.open.send(true).unwrap();
    let response = tokio::time::timeout(WAIT, pending)
        .await
        .expect("the call ends")
        .unwrap()
        .expect("the cut poll is not the call's failure");
    assert_eq!(text_of(&response), "opened");
    assert_eq!(f.handler.cancelled.load(Ordering::SeqCst), 0);
    let task = task_status(&c, &id).await;
    assert_eq!(task["status"], "completed", "{task}");
}

#[tokio::test]
async fn a_tasks_get_post_cut_before_its_answer_is_sent_again() {
    let f = start("tasks/get", 1).await;
    let c = client(&f, 5).await;
    let (stream, id) = call_gate(&c).await;
    stream.detach_task().expect("a task to detach");
    let mut resumed = c.resume_task(&id).await.unwrap();
    let first = tokio::spawn(async move {
        let first = resumed.next().await;
        (first, resumed)
    });
    cut_when_arrived(&f, 1).await;
    let (first, resumed) = tokio::time::timeout(WAIT, first)
        .await
        .expect("the status comes")
        .unwrap();
    let first = first.unwrap().expect("the cut tasks/get is sent again");
    let StreamEvent::Notification(n) = &first else {
        panic!("{first:?}")
    };
    let task: Value = serde_json::from_str(n.params.as_ref().unwrap().get()).unwrap();
    assert_eq!(task["status"], "working", "{task}");
    assert_eq!(f.arrived.load(Ordering::SeqCst), 2);
    f.open.send(true).unwrap();
    let response = resumed.response().await.unwrap();
    assert_eq!(text_of(&response), "opened");
    assert_eq!(f.handler.cancelled.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn polls_cut_beyond_the_resume_budget_end_the_call() {
    // Two resends allowed: the third cut POST ends the call.
    let f = start("tasks/result", usize::MAX).await;
    let c = client(&f, 2).await;
    let (stream, id) = call_gate(&c).await;
    let pending = tokio::spawn(stream.response());
    for n in 1..=3 {
        cut_when_arrived(&f, n).await;
    }
    let err = tokio::time::timeout(WAIT, pending)
        .await
        .expect("the call ends")
        .unwrap()
        .expect_err("the budget is spent");
    assert!(
        matches!(
            &err,
            TransportError::ResumeFailed(ResumeFailure::AttemptsExhausted { attempts: 2, .. })
        ),
        "{err:?}"
    );
    assert_eq!(f.arrived.load(Ordering::SeqCst), 3);
    // Giving up on the poll is not cancelling the task.
    assert_eq!(f.handler.cancelled.load(Ordering::SeqCst), 0);
    let task = task_status(&c, &id).await;
    assert_eq!(task["status"], "working", "{task}");
}
