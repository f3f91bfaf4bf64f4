//! A resume whose replay was read before the stream's last events
//! (*Transports*, "Resumability and Redelivery": the server replays the
//! messages after `Last-Event-ID` and goes on delivering the stream).
//!
//! `GET` + `Last-Event-ID` reads the replay from the event store before the
//! connection starts (`get.rs`'s prefetch). If the request answers and its
//! stream finishes in between, the connection's first look at the stream's
//! live state says "finished" while the prefetched replay ends before the
//! response: the connection must still deliver the response (and whatever
//! else came after the replay), and do so at once, not at the next
//! keep-alive. Before 7a5db11 it ended the body as soon as it had written
//! the stale replay, and the response was lost (found by chance by
//! `bench --workloads resume`).
//!
//! Deterministic: a store wrapper ([`RacingStore`]) makes the race happen on
//! every run. Its first armed `replay_after` reads the replay, then releases
//! the tool, and returns only once the stream's end has been recorded
//! (`finish_stream`). The test runs on tokio's current-thread runtime, so
//! the engine publishes the end to the stream's live state before the
//! resume's handler runs again; the clock is paused, so "at once" means
//! before the first keep-alive comment, not a duration.

mod server_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use futures::StreamExt;
use http::{Request, StatusCode};
use mcp_session_engine::server::{LegacyServer, ServerConfig};
use mcp_test_support::TestHandler;
use mcp_test_support::handler::{Call, tool_fn};
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::{
    EventStore, MemoryEventStore, MemoryEventStoreConfig, Replay, ReplayError, StoreError,
};
use mcp_transport_core::handler::{LogLevel, Outcome};
use serde_json::{Value, json};
use server_common::memory::{frames, initialized, post};
use tokio::sync::Notify;
use tower::ServiceExt;

/// The keep-alive interval: a resume that waited for it instead of
/// delivering at once shows a `: keep-alive` comment before the response.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// A [`MemoryEventStore`] whose first `replay_after` after [`arm`] lets the
/// stream finish between reading the replay and returning it.
///
/// [`arm`]: RacingStore::arm
struct RacingStore {
    inner: MemoryEventStore,
    armed: AtomicBool,
    /// Lets the tool answer (notified once the stale replay was read).
    release: Arc<Notify>,
    /// Notified when a stream's end has been recorded.
    finished: Notify,
}

impl RacingStore {
    fn new(release: Arc<Notify>) -> Self {
        RacingStore {
            inner: MemoryEventStore::new(MemoryEventStoreConfig::default()),
            armed: AtomicBool::new(false),
            release,
            finished: Notify::new(),
        }
    }

    fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl EventStore for RacingStore {
    async fn open_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        self.inner.open_session(session).await
    }

    async fn open_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<EventId, StoreError> {
        self.inner.open_stream(session, stream).await
    }

    async fn append(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> Result<EventId, StoreError> {
        self.inner.append(session, stream, message).await
    }

    async fn finish_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<(), StoreError> {
        let r = self.inner.finish_stream(session, stream).await;
        self.finished.notify_one();
        r
    }

    async fn replay_after(
        &self,
        expected_session: &SessionTag,
        last: &EventId,
    ) -> Result<Replay, ReplayError> {
        let replay = self.inner.replay_after(expected_session, last).await;
        if self.armed.swap(false, Ordering::SeqCst) {
            assert!(
                !replay.as_ref().is_ok_and(|r| r.finished),
                "the stream finished before the prefetch: no race"
            );
            self.release.notify_one();
            self.finished.notified().await;
        }
        replay
    }

    async fn last_seq(&self, session: &SessionTag, stream: StreamId) -> Result<u64, StoreError> {
        self.inner.last_seq(session, stream).await
    }

    async fn remove_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        self.inner.remove_session(session).await
    }
}

/// A server whose `gated` tool logs `{"step": 1}`, waits for `release`,
/// then answers `{"done": true}`; and its store.
fn server() -> (LegacyServer, Arc<RacingStore>) {
    let release = Arc::new(Notify::new());
    let store = Arc::new(RacingStore::new(release.clone()));
    let handler = TestHandler::builder("resume-race")
        .tool(
            "gated",
            tool_fn(move |c: Call| {
                let release = release.clone();
                async move {
                    let _ = c.cx.log(LogLevel::Info, None, json!({"step": 1})).await;
                    release.notified().await;
                    Outcome::json(&json!({"done": true}))
                }
            }),
        )
        .build();
    let config: ServerConfig = mcp_rev_2025_11_25::server_config()
        .with_event_store(store.clone())
        .with_keepalive(Some(KEEPALIVE));
    (LegacyServer::new(Arc::new(handler), config), store)
}

/// The SSE events of `text` as (id, data) pairs; comments as `(":", text)`.
fn events(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for block in text.split("\n\n").filter(|b| !b.is_empty()) {
        let (mut id, mut data) = (String::new(), String::new());
        for line in block.lines() {
            if let Some(c) = line.strip_prefix(':') {
                out.push((":".to_owned(), c.trim().to_owned()));
            } else if let Some(v) = line.strip_prefix("id:") {
                id = v.trim().to_owned();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.trim_start());
            }
        }
        if !id.is_empty() || !data.is_empty() {
            out.push((id, data));
        }
    }
    out
}

/// Starts `gated`, reads the priming event and `{"step": 1}`, disconnects,
/// and resumes after the event `resume_after` picks (0: priming, 1: the
/// step) with the race armed. Returns the step event and everything the
/// resume's body carried, in order.
async fn race(resume_after: usize) -> ((String, String), Vec<(String, String)>) {
    let (server, store) = server();
    let session = initialized(&server).await;
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "gated", "arguments": {} }
    });
    let response = server
        .clone()
        .oneshot(post(&call, Some(&session)))
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = frames(response.into_body());
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let frame = body.next().await.expect("the priming event and the step");
        seen.extend(events(std::str::from_utf8(&frame).unwrap()));
    }
    assert!(seen[0].1.is_empty(), "priming first: {seen:?}");
    assert!(seen[1].1.contains("\"step\":1"), "{seen:?}");
    // The client goes away; the request goes on, waiting for `release`.
    drop(body);
    store.arm();
    let resume = Request::get("/")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .header("last-event-id", &seen[resume_after].0)
        .body(Body::empty())
        .unwrap();
    let response = server.clone().oneshot(resume).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut got = Vec::new();
    let mut body = frames(response.into_body());
    // At most a few frames: a connection that only sends keep-alives
    // would otherwise be read forever.
    for _ in 0..4 {
        let Some(frame) = body.next().await else {
            break;
        };
        got.extend(events(std::str::from_utf8(&frame).unwrap()));
        // The response is the stream's last event: stop there (a body
        // that does not end would show up as what came before it).
        if got.iter().any(|(_, d)| d.contains("\"done\":true")) {
            break;
        }
    }
    (seen[1].clone(), got)
}

fn is_response(event: &(String, String)) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(&event.1) else {
        return false;
    };
    v["id"] == 1 && v["result"]["done"] == true
}

/// The prefetched replay holds `{"step": 1}` but not the response, which
/// was appended (and the stream finished) before the connection started:
/// the resume delivers both, in order, without a keep-alive in between.
#[tokio::test(start_paused = true)]
async fn a_resume_whose_replay_predates_the_response_delivers_it() {
    let (step, got) = race(0).await;
    assert_eq!(got.len(), 2, "the step, then the response: {got:?}");
    assert_eq!(got[0], step);
    assert!(is_response(&got[1]), "{got:?}");
}

/// The prefetched replay is empty (the client had everything up to then)
/// and the response came after it: the resume delivers the response at
/// once, not after a keep-alive interval of silence.
#[tokio::test(start_paused = true)]
async fn a_resume_whose_empty_replay_predates_the_response_delivers_it_at_once() {
    let (_, got) = race(1).await;
    assert_eq!(got.len(), 1, "only the response: {got:?}");
    assert!(is_response(&got[0]), "{got:?}");
}
