//! A handler that answers at once has its answer in the response when the
//! POST returns it: the engine polls the request once before spawning its
//! task (`request::start`), so over a socket the priming event, the answer
//! and the end of the stream leave in one write (one TCP segment, one
//! wake-up of the client), and a JSON answer needs no wake-up from another
//! task. A handler that does not answer at once is spawned and answers
//! later, as before.
//!
//! Deterministic: tokio's current-thread runtime, and the body read with
//! `now_or_never` — a spawned task cannot have run before the test yields.

mod server_common;

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use http::StatusCode;
use mcp_session_engine::server::{LegacyServer, ServerConfig};
use mcp_test_support::TestHandler;
use mcp_test_support::handler::{Call, tool_fn};
use mcp_transport_core::handler::{LogLevel, Outcome};
use serde_json::json;
use server_common::memory::{initialized, post};
use tower::ServiceExt;

fn server(json_response: bool) -> LegacyServer {
    let mut config: ServerConfig = mcp_rev_2025_11_25::server_config();
    config.json_response = json_response;
    server_with(config)
}

/// The test handler (`add` answers at once, `later` after 10 ms,
/// `log_then_add` logs `{"step": "before"}` and answers at once,
/// `close_then_add` asks for its stream's connection to close and then
/// answers at once) served
/// with `config`.
fn server_with(config: ServerConfig) -> LegacyServer {
    let handler = TestHandler::builder("quick")
        .tool(
            "add",
            tool_fn(|c: Call| async move {
                let sum = c.args["a"].as_i64().unwrap_or(0) + c.args["b"].as_i64().unwrap_or(0);
                Outcome::json(&json!({ "sum": sum }))
            }),
        )
        .tool(
            "later",
            tool_fn(|_: Call| async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                Outcome::json(&json!({ "later": true }))
            }),
        )
        .tool(
            "log_then_add",
            tool_fn(|c: Call| async move {
                let _ =
                    c.cx.log(LogLevel::Info, None, json!({ "step": "before" }))
                        .await;
                Outcome::json(&json!({ "sum": 5 }))
            }),
        )
        .tool(
            "close_then_add",
            tool_fn(|c: Call| async move {
                let closed = c.cx.close_sse_stream();
                Outcome::json(&json!({ "closed": closed, "sum": 5 }))
            }),
        )
        .build();
    LegacyServer::new(Arc::new(handler), config)
}

/// The test server over a store that counts its calls, and an initialized
/// session of it.
async fn watched() -> (
    Arc<server_common::store::WatchedStore>,
    LegacyServer,
    String,
) {
    let store = Arc::new(server_common::store::WatchedStore::default());
    let mut config: ServerConfig = mcp_rev_2025_11_25::server_config();
    config.event_store = store.clone();
    let server = server_with(config);
    let session = initialized(&server).await;
    (store, server, session)
}

fn call(tool: &str) -> serde_json::Value {
    json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": { "name": tool, "arguments": { "a": 2, "b": 3 } }
    })
}

/// `server`'s response to POSTing `message` in `session`.
async fn answer(
    server: &LegacyServer,
    session: &str,
    message: &serde_json::Value,
) -> http::Response<Body> {
    server
        .clone()
        .oneshot(post(message, Some(session)))
        .await
        .unwrap()
}

/// A body's chunks.
fn chunks(body: Body) -> BoxStream<'static, Bytes> {
    body.into_data_stream().map(|r| r.unwrap()).boxed()
}

/// The body's chunks as far as they are ready without waiting, and whether
/// the body ended.
fn ready_text(body: &mut BoxStream<'static, Bytes>) -> (String, bool) {
    let mut text = String::new();
    loop {
        match body.next().now_or_never() {
            Some(Some(data)) => text.push_str(std::str::from_utf8(&data).unwrap()),
            Some(None) => return (text, true),
            None => return (text, false),
        }
    }
}

/// The rest of a body, waiting for it.
async fn rest(mut body: BoxStream<'static, Bytes>) -> String {
    let mut text = String::new();
    while let Some(data) = body.next().await {
        text.push_str(std::str::from_utf8(&data).unwrap());
    }
    text
}

#[tokio::test(flavor = "current_thread")]
async fn a_quick_sse_answer_is_in_the_body_when_the_response_is_returned() {
    let server = server(false);
    let session = initialized(&server).await;
    let response = answer(&server, &session, &call("add")).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = chunks(response.into_body());
    let (text, ended) = ready_text(&mut body);
    assert!(
        text.contains(r#""sum":5"#) && ended,
        "the answer and the end of the stream must be ready with the response: {text:?} (ended: {ended})"
    );
    assert!(
        text.starts_with("id:"),
        "the priming event still comes first: {text:?}"
    );
}

/// The priming event, the answer and the end of the stream are one body
/// frame of a known length: one buffer for hyper to write with a
/// `Content-Length` (no chunked framing) and for the client to read, not
/// a stream of a frame for the priming event and another for the answer.
#[tokio::test(flavor = "current_thread")]
async fn a_quick_sse_answer_is_one_body_frame() {
    use axum::body::HttpBody as _;
    let server = server(false);
    let session = initialized(&server).await;
    let response = answer(&server, &session, &call("add")).await;
    let length = response.body().size_hint().exact();
    let frames: Vec<Bytes> = chunks(response.into_body()).collect().await;
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(length, Some(frames[0].len() as u64), "the length is known");
    let text = std::str::from_utf8(&frames[0]).unwrap();
    assert!(
        text.starts_with("id:") && text.contains(r#""sum":5"#),
        "{text:?}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_quick_json_answer_needs_no_other_task() {
    let server = server(true);
    let session = initialized(&server).await;
    let post = server.clone().oneshot(post(&call("add"), Some(&session)));
    // Not `.await`ed on the runtime: polled once, it must be done.
    let response = post
        .now_or_never()
        .expect("a quick answer is there without another task running")
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = rest(chunks(response.into_body())).await;
    assert!(body.contains(r#""sum":5"#), "{body}");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_handler_that_waits_is_spawned_and_answers_later() {
    let server = server(false);
    let session = initialized(&server).await;
    let response = answer(&server, &session, &call("later")).await;
    let mut body = chunks(response.into_body());
    let (first, ended) = ready_text(&mut body);
    assert!(
        !ended && !first.contains("later"),
        "not answered yet: {first:?}"
    );
    let rest = rest(body).await;
    assert!(rest.contains(r#""later":true"#), "{rest}");
}

/// `handle_parsed`: the message a dispatcher in front parsed is served as
/// the POST's, and the body is not parsed again (here the two differ, so
/// the answer shows which one was served).
#[tokio::test(flavor = "current_thread")]
async fn a_message_parsed_in_front_is_served_without_parsing_the_body() {
    let server = server(false);
    let session = initialized(&server).await;
    let mut parsed = call("add");
    parsed["params"]["arguments"] = json!({ "a": 20, "b": 22 });
    let parsed = match mcp_transport_core::jsonrpc::parse_body(parsed.to_string().as_bytes(), false)
    {
        Ok(mcp_transport_core::jsonrpc::Body::Single(m)) => m,
        other => panic!("{other:?}"),
    };
    let response = server
        .handle_parsed(post(&call("add"), Some(&session)), Some(parsed.into()))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = rest(chunks(response.into_body())).await;
    assert!(text.contains(r#""sum":42"#), "{text}");
}

/// A quick answer's stream is read before the response is returned: a
/// session that opens more streams than the store keeps (here 2) before
/// the first response's body is read must not lose that answer. (The
/// store evicts the stream that finished longest ago, answered or not;
/// `bench --workloads legacy-sse-shared` lost about one answer in 20,000
/// that way before the engine read a finished stream's events in the POST.)
#[tokio::test(flavor = "current_thread")]
async fn a_quick_answer_survives_its_stream_being_evicted_before_the_body_is_read() {
    let text = first_answer_after_eviction("add").await;
    assert!(
        text.contains(r#""sum":5"#),
        "the first answer was lost with its evicted stream: {text:?}"
    );
}

/// The same for a request whose handler sent a message before answering
/// in its first poll: the message opened the stream, so the answer is not
/// the stream's only event, and the POST reads the finished stream's
/// events from the store (`request::prefetch_finished`) instead of taking
/// the kept answer.
#[tokio::test(flavor = "current_thread")]
async fn a_quick_answer_after_a_message_survives_its_stream_being_evicted() {
    let text = first_answer_after_eviction("log_then_add").await;
    assert!(text.contains(r#""step":"before""#), "{text:?}");
    assert!(
        text.contains(r#""sum":5"#),
        "the first answer was lost with its evicted stream: {text:?}"
    );
}

/// The body of a first `tool` call (2 + 3) read only after three more
/// calls of the session opened streams in a store that keeps two.
async fn first_answer_after_eviction(tool: &str) -> String {
    use mcp_transport_core::event_log::{MemoryEventStore, MemoryEventStoreConfig};
    let mut config: ServerConfig = mcp_rev_2025_11_25::server_config();
    config.event_store = Arc::new(MemoryEventStore::new(MemoryEventStoreConfig {
        max_streams_per_session: 2,
        ..MemoryEventStoreConfig::default()
    }));
    let server = server_with(config);
    let session = initialized(&server).await;
    let call_with = |id: u64, tool: &str, a: i64| {
        json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": tool, "arguments": { "a": a, "b": 3 } }
        })
    };
    let first = answer(&server, &session, &call_with(1, tool, 2)).await;
    for id in 2..=4 {
        let other = answer(&server, &session, &call_with(id, "add", 100)).await;
        let text = rest(chunks(other.into_body())).await;
        assert!(text.contains(r#""sum":103"#), "{text}");
    }
    rest(chunks(first.into_body())).await
}

/// An answer sent on the request's own stream ends it in one call to the
/// event store (`append_final`: one lock, or one round trip to Redis),
/// answered at once or later, not `append` then `finish_stream`.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_answer_and_the_end_of_its_stream_are_one_store_call() {
    let (store, server, session) = watched().await;
    for tool in ["add", "later"] {
        let response = answer(&server, &session, &call(tool)).await;
        let text = rest(chunks(response.into_body())).await;
        assert!(text.contains(r#""result""#), "{tool}: {text}");
    }
    assert_eq!(store.finals(), 1, "one append_final for the later answer");
    assert_eq!(
        store.answered_opens(),
        1,
        "the quick answer's stream opened with it"
    );
    assert_eq!(store.finishes(), 0, "no separate finish_stream");
}

/// A request that answers in its first poll has its stream opened with
/// the answer in it: one call to the event store (`open_answered`), no
/// `open_stream` before the handler runs (with Redis, one script where
/// there were four with the lease's two). One still running then has its
/// stream opened before the response, the priming event first.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_quick_sse_answer_is_one_store_call() {
    let (store, server, session) = watched().await;
    let response = answer(&server, &session, &call("add")).await;
    let text = rest(chunks(response.into_body())).await;
    assert!(
        text.starts_with("id:") && text.contains(r#""sum":5"#),
        "{text}"
    );
    assert_eq!(store.answered_opens(), 1);
    assert_eq!(store.opens(), 0, "no stream opened before the answer");
    assert_eq!(store.finals(), 0);
    let response = answer(&server, &session, &call("later")).await;
    let mut body = chunks(response.into_body());
    let (first, ended) = ready_text(&mut body);
    assert!(
        first.starts_with("id:") && !ended,
        "priming first: {first:?}"
    );
    assert_eq!(store.opens(), 1, "opened for the request still running");
    let text = rest(body).await;
    assert!(text.contains(r#""later":true"#), "{text}");
    assert_eq!(store.answered_opens(), 1);
}

/// An answer given at once while the event store cannot open its stream
/// (Redis out of reach) is not lost: it goes back as JSON, which the
/// client accepts too, instead of the SSE stream it could not have.
#[tokio::test(flavor = "current_thread")]
async fn a_quick_answer_whose_stream_cannot_open_goes_back_as_json() {
    let (store, server, session) = watched().await;
    store.fail_opens();
    let response = answer(&server, &session, &call("add")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let text = rest(chunks(response.into_body())).await;
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["id"], 7, "{text}");
    assert_eq!(v["result"]["sum"], 5, "{text}");
    assert_eq!(store.answered_opens(), 1);
}

/// A close the handler asks for before its stream exists
/// (`close_sse_stream` in the first poll, then an answer at once) is
/// still honoured (SEP-1699): the POST's connection gets the priming
/// event and `retry`, not the answer, and the answer waits in the log for
/// the client's resume.
#[tokio::test(flavor = "current_thread")]
async fn a_close_asked_before_the_stream_opened_is_honoured() {
    let server = server(false);
    let session = initialized(&server).await;
    let response = answer(&server, &session, &call("close_then_add")).await;
    let text = rest(chunks(response.into_body())).await;
    assert!(text.contains("retry:"), "closed with retry: {text:?}");
    assert!(!text.contains(r#""sum":5"#), "the answer waits: {text:?}");
    let priming = text
        .lines()
        .find_map(|l| l.strip_prefix("id:"))
        .expect("the priming id")
        .trim()
        .to_owned();
    let resumed = server
        .clone()
        .oneshot(server_common::memory::resume_as(
            "2025-11-25",
            &session,
            &priming,
        ))
        .await
        .unwrap();
    let text = rest(chunks(resumed.into_body())).await;
    assert!(text.contains(r#""sum":5"#), "resumed: {text:?}");
    assert!(text.contains(r#""closed":true"#), "{text:?}");
}

/// An answer appended while its stream's connection is attached goes out
/// from the stream's own copy, not read back from the event store (with
/// Redis, a round trip a request): the answer given at once and the one
/// given later alike. The store counts both streams as read to their end
/// (`open_answered`, `append_final_delivered`), and a resume still
/// replays the answer from the store.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_answer_to_an_attached_connection_is_not_read_back_from_the_store() {
    let (store, server, session) = watched().await;
    for (tool, expected) in [("add", r#""sum":5"#), ("later", r#""later":true"#)] {
        let response = answer(&server, &session, &call(tool)).await;
        let text = rest(chunks(response.into_body())).await;
        assert!(text.contains(expected), "{tool}: {text}");
    }
    // The quick answer's stream opened with it, the later one's appended.
    assert_eq!((store.answered_opens(), store.finals()), (1, 1));
    assert_eq!(store.replays(), 0, "an answer was read back from the store");
    // Still in the store for a resume (the first stream's priming id).
    let tag = store.tag();
    let first = mcp_transport_core::event_id::EventId::priming(
        tag,
        mcp_transport_core::event_id::StreamId(1),
    );
    use mcp_transport_core::event_log::EventStore;
    let replay = store.inner.replay_after(&tag, &first).await.unwrap();
    assert!(replay.finished);
    assert!(
        std::str::from_utf8(&replay.events[0].data)
            .unwrap()
            .contains(r#""sum":5"#)
    );
}

/// A quick answer with more events than one body frame holds (64) still
/// goes out whole and in order: the frames the connection gives at once
/// first, then the rest of its stream.
#[tokio::test(flavor = "current_thread")]
async fn a_quick_answer_longer_than_a_frame_goes_out_whole_and_in_order() {
    use mcp_transport_core::handler::LogLevel;
    let mut config: ServerConfig = mcp_rev_2025_11_25::server_config();
    config.stream_queue = 1000;
    let handler = TestHandler::builder("chatty")
        .tool(
            "chatty",
            tool_fn(|c: Call| async move {
                for i in 0..70 {
                    c.cx.log(LogLevel::Info, None, json!({ "tick": i }))
                        .await
                        .unwrap();
                }
                Outcome::json(&json!({ "ticks": 70 }))
            }),
        )
        .build();
    let server = LegacyServer::new(Arc::new(handler), config);
    let session = initialized(&server).await;
    let response = answer(&server, &session, &call("chatty")).await;
    let text = rest(chunks(response.into_body())).await;
    let data: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert_eq!(data.len(), 71, "{text}");
    for (i, d) in data[..70].iter().enumerate() {
        assert!(d.contains(&format!(r#""tick":{i}"#)), "event {i}: {d}");
    }
    assert!(data[70].contains(r#""ticks":70"#), "{}", data[70]);
    let seqs: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(|id| id.rsplit('.').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        seqs,
        (0..=71).collect::<Vec<u64>>(),
        "priming, then 71 events"
    );
}
