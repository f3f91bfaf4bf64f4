//! The HTTP+SSE server (2024-11-05 *Transports*, "HTTP with SSE") read at
//! the wire, with no client of ours in between: what the message endpoint
//! takes and refuses, what goes down each session's stream, sessions ending
//! with their stream, and what a request's end looks like in this era.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_rev_2024_11_05::server::HttpSseServer;
use mcp_test_support::TestServer;
use mcp_test_support::handler::{Call, TestHandler, method_fn, tool_fn, tools};
use mcp_test_support::sse::SseReader;
use mcp_test_support::wait::{eventually, within};
use mcp_transport_core::handler::{InputRequired, LogLevel, Outcome};
use mcp_transport_core::jsonrpc::Notification;
use serde_json::{Value, json};

/// A server on 127.0.0.1:0: its SSE endpoint `/sse`, messages `/messages`.
struct Old {
    base: String,
    server: HttpSseServer,
    handler: Arc<TestHandler>,
    _http: TestServer,
}

async fn start(handler: TestHandler) -> Old {
    let handler = Arc::new(handler);
    let server = HttpSseServer::new(handler.clone(), "/messages");
    let http = TestServer::serve(server.router("/sse")).await;
    Old {
        base: format!("http://{}", http.addr()),
        server,
        handler,
        _http: http,
    }
}

/// One session: its stream and the message endpoint its `endpoint` event
/// named.
struct Session {
    stream: SseReader,
    post: String,
    http: reqwest::Client,
}

impl Session {
    async fn open(old: &Old) -> Session {
        let http = reqwest::Client::new();
        let resp = http.get(format!("{}/sse", old.base)).send().await.unwrap();
        let mut stream = SseReader::new(resp);
        let endpoint = stream.next_event().await.unwrap().data;
        assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");
        Session {
            stream,
            post: format!("{}{endpoint}", old.base),
            http,
        }
    }

    /// POSTs `body`; returns the status.
    async fn post(&self, body: String) -> u16 {
        let resp = self.http.post(&self.post).body(body).send().await.unwrap();
        resp.status().as_u16()
    }

    /// POSTs one message, which must be accepted (202).
    async fn send(&self, msg: Value) {
        assert_eq!(self.post(msg.to_string()).await, 202, "{msg}");
    }

    /// The next message down the stream.
    async fn next(&mut self) -> Value {
        self.stream.next_json().await.expect("the stream ended")
    }
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call(id: u64, tool: &str, args: Value) -> Value {
    request(id, "tools/call", json!({"name": tool, "arguments": args}))
}

/// `ping` is answered by the transport; notifications go to the handler,
/// but for `notifications/cancelled`; the body bound is 4 MiB; a bad body
/// or an unknown session is refused and the session goes on.
#[tokio::test]
async fn the_message_endpoint_answers_passes_on_and_refuses() {
    let old = start(TestHandler::builder("old").streaming_tools().build()).await;
    let mut s = Session::open(&old).await;
    s.send(request(1, "ping", json!({}))).await;
    assert_eq!(
        s.next().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );

    s.send(json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}))
        .await;
    s.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 99}}),
    )
    .await;
    let stats = old.handler.stats();
    eventually("the handler has the notification", || {
        !stats.notifications.lock().unwrap().is_empty()
    })
    .await;
    assert_eq!(
        *stats.notifications.lock().unwrap(),
        ["notifications/roots/list_changed"],
        "a cancellation is the transport's"
    );

    // 2 MiB is taken; one byte over 4 MiB is not.
    let padded = |len: usize| {
        let mut m = request(2, "ping", json!({"pad": ""}));
        let room = len - m.to_string().len();
        m["params"]["pad"] = "x".repeat(room).into();
        let text = m.to_string();
        assert_eq!(text.len(), len);
        text
    };
    assert_eq!(s.post(padded(2 * 1024 * 1024)).await, 202);
    assert_eq!(s.next().await["id"], 2);
    assert_eq!(s.post(padded(4 * 1024 * 1024 + 1)).await, 413);

    assert_eq!(s.post("{not json".into()).await, 400);
    let unknown = s.post.replace("sessionId=", "sessionId=gone-");
    let resp = s.http.post(unknown).body("{}").send().await.unwrap();
    assert_eq!(resp.status(), 404);
    s.send(request(3, "ping", json!({}))).await;
    assert_eq!(s.next().await["id"], 3, "the session goes on");
}

/// `publish` reaches every open stream and counts them; a session ends with
/// its stream (counted out, its running requests cancelled).
#[tokio::test]
async fn publish_reaches_each_stream_and_a_session_ends_with_its_stream() {
    let old = start(TestHandler::builder("old").streaming_tools().build()).await;
    assert!(format!("{:?}", old.server).contains("HttpSseServer"));
    assert_eq!(old.server.session_count(), 0);
    let mut a = Session::open(&old).await;
    let mut b = Session::open(&old).await;
    assert_eq!(old.server.session_count(), 2);
    let note = Notification::new("notifications/tools/list_changed", None::<&Value>).unwrap();
    assert_eq!(old.server.publish(&note), 2);
    for s in [&mut a, &mut b] {
        assert_eq!(s.next().await["method"], "notifications/tools/list_changed");
    }

    b.send(call(1, "slow", json!({"ms": 10_000}))).await;
    let stats = old.handler.stats();
    eventually("the slow call runs", || {
        stats.started.load(Ordering::SeqCst) == 1
    })
    .await;
    drop(b);
    eventually("the session is gone", || old.server.session_count() == 1).await;
    eventually("its call is cancelled", || {
        stats.cancellations.load(Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(old.server.publish(&note), 1);
    assert_eq!(a.next().await["method"], "notifications/tools/list_changed");
}

/// 2024-11-05 has no elicitation: a tool that asks for input ends with a
/// tool execution error, any other method with `-32601`.
#[tokio::test]
async fn input_requests_end_as_this_revision_allows() {
    let handler = TestHandler::builder("old")
        .tool(
            "ask",
            tools::ask(tools::Ask::elicitation("name", json!({"message": "?"}))),
        )
        .method(
            "prompts/get",
            method_fn(|_, _, _| async {
                Outcome::InputRequired(InputRequired {
                    requests: BTreeMap::new(),
                    state: None,
                })
            }),
        )
        .build();
    let old = start(handler).await;
    let mut s = Session::open(&old).await;
    s.send(call(1, "ask", json!({}))).await;
    let r = s.next().await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("2024-11-05"),
        "{r}"
    );
    s.send(request(2, "prompts/get", json!({"name": "p"})))
        .await;
    let r = s.next().await;
    assert_eq!(r["id"], 2);
    assert_eq!(r["error"]["code"], -32601, "{r}");
}

/// This era has no `logging/setLevel` on the transport: every log message,
/// debug included, goes down the stream.
#[tokio::test]
async fn a_debug_log_goes_down_the_stream() {
    let handler = TestHandler::builder("old")
        .tool(
            "log",
            tool_fn(|c: Call| async move {
                c.cx.log(LogLevel::Debug, Some("t"), json!("quiet"))
                    .await
                    .unwrap();
                Outcome::json(&json!({}))
            }),
        )
        .build();
    let old = start(handler).await;
    let mut s = Session::open(&old).await;
    s.send(call(1, "log", json!({}))).await;
    let log = s.next().await;
    assert_eq!(log["method"], "notifications/message", "{log}");
    assert_eq!(log["params"]["level"], "debug");
    assert_eq!(s.next().await["id"], 1);
}

/// A cancelled request is not answered, even when its handler returns a
/// result after seeing the cancellation (2024-11-05 *Cancellation*:
/// receivers "Not send a response for the cancelled request").
#[tokio::test]
async fn a_cancelled_request_is_not_answered_even_when_its_handler_returns() {
    let handler = TestHandler::builder("old")
        .tool(
            "stubborn",
            tool_fn(|c: Call| async move {
                c.cx.cancelled().await;
                c.stats.cancelled();
                Outcome::json(&json!({"answered": "anyway"}))
            }),
        )
        .build();
    let old = start(handler).await;
    let mut s = Session::open(&old).await;
    s.send(call(7, "stubborn", json!({}))).await;
    let stats = old.handler.stats();
    eventually("the call runs", || {
        stats.started.load(Ordering::SeqCst) == 1
    })
    .await;
    s.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 7}}),
    )
    .await;
    eventually("the handler saw it", || {
        stats.cancellations.load(Ordering::SeqCst) == 1
    })
    .await;
    // Time for an answer to be sent, were one going to be.
    tokio::time::sleep(Duration::from_millis(100)).await;
    s.send(request(8, "ping", json!({}))).await;
    let next = within("the ping's answer", s.next()).await;
    assert_eq!(next["id"], 8, "no answer to the cancelled call: {next}");
}
