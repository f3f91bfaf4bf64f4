//! A resumed connection that follows a stream another instance writes
//! (`connection.rs`'s `follow`; *Transports*, "Resumability and
//! Redelivery": the server "MAY use this header to replay messages that
//! would have been sent after the last event ID, on the stream that was
//! disconnected").
//!
//! A stream this instance has no live state for, and which has not finished
//! in the event store, is written by another instance sharing the session:
//! a `GET` with `Last-Event-ID` on it follows it in the store
//! (`EventStore::tail_after`) until it finishes. Here the test plays the
//! other instance: it opens the stream, appends to it and finishes it
//! through the store the server uses (`server_common::store::WatchedStore`),
//! which can also fail its `tail_after` like a store out of reach.
//!
//! On tokio's paused clock, driven in memory (no socket): every body frame
//! is exactly one `next_chunk`, every instant virtual. A follower that
//! asks the store again and again without pausing (it never lets the clock
//! move) is caught by the store itself, which counts the reads made at one
//! instant, so such a bug fails the test instead of hanging it.

mod server_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http::StatusCode;
use mcp_session_engine::server::{LegacyServer, ServerConfig};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::event_id::{EventId, StreamId};
use mcp_transport_core::event_log::EventStore;
use mcp_transport_core::lease::{LeaseError, LeaseInfo, LeaseStore, Leases, MemoryLeaseStore};
use serde_json::{Value, json};
use server_common::memory::{frames, initialized_as, resume_as};
use server_common::store::WatchedStore;
use tower::ServiceExt;

/// The stream the "other instance" writes (far from the numbers this
/// instance gives its own streams).
const REMOTE: StreamId = StreamId(1 << 40);

/// How long the tests wait (virtual time) for something that should come
/// within a few store polls.
const PATIENCE: Duration = Duration::from_secs(30);

/// The `retry` of the 2025-11-25 test config.
const RETRY_MS: u64 = 50;

/// A [`MemoryLeaseStore`] that counts `get` (how a follower checks the
/// writer's lease) and `take_over` (a write: only for a lapsed lease).
#[derive(Default)]
struct CountingLeases {
    inner: MemoryLeaseStore,
    gets: AtomicUsize,
    take_overs: AtomicUsize,
}

#[async_trait::async_trait]
impl LeaseStore for CountingLeases {
    async fn acquire(
        &self,
        key: &str,
        holder: &str,
        data: &str,
        ttl: Duration,
    ) -> Result<bool, LeaseError> {
        self.inner.acquire(key, holder, data, ttl).await
    }

    async fn renew(&self, key: &str, holder: &str, ttl: Duration) -> Result<bool, LeaseError> {
        self.inner.renew(key, holder, ttl).await
    }

    async fn release(&self, key: &str, holder: &str) -> Result<bool, LeaseError> {
        self.inner.release(key, holder).await
    }

    async fn get(&self, key: &str) -> Result<Option<LeaseInfo>, LeaseError> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        self.inner.get(key).await
    }

    async fn take_over(
        &self,
        key: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<LeaseInfo>, LeaseError> {
        self.take_overs.fetch_add(1, Ordering::SeqCst);
        self.inner.take_over(key, holder, ttl).await
    }
}

/// 2025-06-18 and 2025-11-25, `store` as the event log, `retry: 50`, no
/// keep-alive comments (an idle connection writes nothing).
fn config(store: &Arc<WatchedStore>) -> ServerConfig {
    server_common::config()
        .with_versions([ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25])
        .with_event_store(store.clone())
        .with_keepalive(None)
}

/// A session of `version` on a server with `config`, and the stream
/// [`REMOTE`] opened in the store as another instance would: the session
/// id and the stream's priming id.
async fn remote_stream(
    config: ServerConfig,
    store: &WatchedStore,
    version: &str,
) -> (LegacyServer, String, EventId) {
    let server = LegacyServer::new(Arc::new(server_common::test_handler()), config);
    let session = initialized_as(&server, version).await;
    let priming = store.inner.open_stream(&store.tag(), REMOTE).await.unwrap();
    (server, session, priming)
}

/// The frames of a `GET` of `session` resuming after `last`.
async fn resume(
    server: &LegacyServer,
    version: &str,
    session: &str,
    last: &EventId,
) -> BoxStream<'static, Bytes> {
    let response = server
        .clone()
        .oneshot(resume_as(version, session, &last.to_string()))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    frames(response.into_body())
}

/// The next frame, which must come within [`PATIENCE`] (virtual time).
async fn next(body: &mut BoxStream<'static, Bytes>) -> Option<String> {
    let frame = tokio::time::timeout(PATIENCE, body.next())
        .await
        .expect("the connection neither wrote nor ended");
    frame.map(|f| String::from_utf8(f.to_vec()).unwrap())
}

/// Everything up to the body's end, which must come within [`PATIENCE`].
async fn to_end(body: &mut BoxStream<'static, Bytes>) -> String {
    let mut text = String::new();
    while let Some(frame) = next(body).await {
        text.push_str(&frame);
    }
    text
}

/// A log notification of the writing instance's request.
fn log_message(step: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
           "params": {"level": "info", "data": {"step": step}}})
}

/// `message` as the store holds it.
fn stored(message: &Value) -> Bytes {
    Bytes::from(message.to_string())
}

/// The SSE `data` of the message events in `text`, parsed.
fn messages(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|block| {
            let data: String = block
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            serde_json::from_str(&data).ok()
        })
        .collect()
}

/// The `id` fields in `text`.
fn ids(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("id:"))
        .map(|v| v.trim().to_owned())
        .collect()
}

/// Without SEP-1699 (2025-06-18: no `retry` to send) a connection whose
/// store read fails while following the stream ends: the client sees the
/// body end cleanly, with nothing written, and can resume elsewhere. The
/// store is asked once: the connection does not go on polling a store it
/// has given up on.
#[tokio::test(start_paused = true)]
async fn a_failed_follow_ends_a_connection_without_sep_1699() {
    let store = Arc::new(WatchedStore::default());
    let (server, session, priming) = remote_stream(config(&store), &store, "2025-06-18").await;
    store.fail_tails();
    let mut body = resume(&server, "2025-06-18", &session, &priming).await;
    assert_eq!(to_end(&mut body).await, "");
    assert_eq!(store.tails(), 1);
}

/// The same on a SEP-1699 session (2025-11-25): the connection ends after
/// an id to resume from (the stream's position, renewed: it carried no id
/// yet) and `retry`.
#[tokio::test(start_paused = true)]
async fn a_failed_follow_ends_a_polling_connection_with_retry() {
    let store = Arc::new(WatchedStore::default());
    let (server, session, priming) = remote_stream(config(&store), &store, "2025-11-25").await;
    store.fail_tails();
    let mut body = resume(&server, "2025-11-25", &session, &priming).await;
    let text = to_end(&mut body).await;
    assert!(
        text.ends_with(&format!("retry: {RETRY_MS}\n\n")),
        "{text:?}"
    );
    let ids = ids(&text);
    assert_eq!(ids.len(), 1, "{text:?}");
    let id = EventId::parse(&ids[0]).unwrap();
    assert_eq!((id.stream, id.seq), (REMOTE, 0), "{text:?}");
    assert!(messages(&text).is_empty(), "{text:?}");
    assert_eq!(store.tails(), 1);
}

/// Each event the writing instance appends reaches the follower while the
/// stream is still running (not only once it finishes), with its id; the
/// response and the stream's end then end the body.
#[tokio::test(start_paused = true)]
async fn a_followed_stream_delivers_each_event_before_the_stream_ends() {
    let store = Arc::new(WatchedStore::default());
    let config = config(&store).with_event_ids(true);
    let (server, session, priming) = remote_stream(config, &store, "2025-06-18").await;
    let tag = store.tag();
    let mut body = resume(&server, "2025-06-18", &session, &priming).await;
    for step in 1..=2 {
        let id = store
            .inner
            .append(&tag, REMOTE, stored(&log_message(step)))
            .await
            .unwrap();
        let frame = next(&mut body).await.expect("the event, not the end");
        assert_eq!(messages(&frame), [log_message(step)]);
        assert_eq!(ids(&frame), [id.to_string()]);
    }
    let response = json!({"jsonrpc": "2.0", "id": 7, "result": {}});
    store
        .inner
        .append(&tag, REMOTE, stored(&response))
        .await
        .unwrap();
    store.inner.finish_stream(&tag, REMOTE).await.unwrap();
    let rest = to_end(&mut body).await;
    assert_eq!(messages(&rest), [response]);
}

/// A follower checks the writer's lease once per `renew_every` while the
/// stream is idle (`ServerConfig::leases`), not at every poll of the store;
/// when the writer's lease lapses (it died), the follower ends the stream
/// with one `-32603` error for the request on it, and the body ends.
#[tokio::test(start_paused = true)]
async fn a_follower_checks_the_lease_each_interval_and_ends_a_dead_writers_stream() {
    let store = Arc::new(WatchedStore::default());
    let leases = Arc::new(CountingLeases::default());
    let renew = Duration::from_secs(1);
    let config = config(&store).with_leases(
        Leases::new(leases.clone())
            .with_timing(Duration::from_secs(3), renew)
            .unwrap(),
    );
    let (server, session, priming) = remote_stream(config, &store, "2025-06-18").await;
    let key = Leases::stream_key(&store.tag(), &REMOTE);
    assert!(
        leases
            .acquire(&key, "writer", "[7]", Duration::from_secs(3))
            .await
            .unwrap()
    );
    let mut body = resume(&server, "2025-06-18", &session, &priming).await;
    // The writer is alive: five intervals of silence, five checks, and
    // no attempt to take a held lease over (a store write each).
    let idle = tokio::time::timeout(renew * 5 + renew / 2, body.next()).await;
    assert!(idle.is_err(), "the connection wrote or ended: {idle:?}");
    assert_eq!(leases.gets.load(Ordering::SeqCst), 5);
    assert_eq!(leases.take_overs.load(Ordering::SeqCst), 0);
    // The writer dies.
    assert_eq!(leases.inner.lapse_holder("writer"), 1);
    let text = to_end(&mut body).await;
    let got = messages(&text);
    assert_eq!(got.len(), 1, "{text:?}");
    assert_eq!(got[0]["id"], 7, "{text:?}");
    assert_eq!(got[0]["error"]["code"], -32603, "{text:?}");
}

/// A dead writer's stream carried three requests (a 2025-03-26 batch's
/// stream does); the log already holds the responses to two of them, one
/// a result and one an error. The follower writes the `-32603` for the
/// third only: a request answered before its writer died keeps its answer
/// as the one response to its id (JSON-RPC 2.0: one response per request).
#[tokio::test(start_paused = true)]
async fn a_dead_writers_answered_requests_get_no_error() {
    let store = Arc::new(WatchedStore::default());
    let leases = Arc::new(MemoryLeaseStore::default());
    let config = config(&store).with_leases(
        Leases::new(leases.clone())
            .with_timing(Duration::from_secs(3), Duration::from_secs(1))
            .unwrap(),
    );
    let (server, session, priming) = remote_stream(config, &store, "2025-06-18").await;
    let tag = store.tag();
    let key = Leases::stream_key(&tag, &REMOTE);
    assert!(
        leases
            .acquire(&key, "writer", "[1,2,3]", Duration::from_secs(3))
            .await
            .unwrap()
    );
    let answered = [
        json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "bad"}}),
    ];
    for response in &answered {
        store
            .inner
            .append(&tag, REMOTE, stored(response))
            .await
            .unwrap();
    }
    assert_eq!(leases.lapse_holder("writer"), 1);
    let mut body = resume(&server, "2025-06-18", &session, &priming).await;
    let got = messages(&to_end(&mut body).await);
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[..2], answered);
    assert_eq!(got[2]["id"], 2, "{got:?}");
    assert_eq!(got[2]["error"]["code"], -32603, "{got:?}");
}

/// The events of a backlog of `n` messages built by `message`, written by
/// the other instance and finished, as a resume from the start receives
/// them: the number of messages in each body chunk, and all of them.
async fn backlog_chunks(n: u64, message: fn(u64) -> Value) -> (Vec<usize>, Vec<Value>) {
    let store = Arc::new(WatchedStore::default());
    let (server, session, priming) = remote_stream(config(&store), &store, "2025-06-18").await;
    let tag = store.tag();
    for step in 1..=n {
        store
            .inner
            .append(&tag, REMOTE, stored(&message(step)))
            .await
            .unwrap();
    }
    store.inner.finish_stream(&tag, REMOTE).await.unwrap();
    let mut body = resume(&server, "2025-06-18", &session, &priming).await;
    let (mut sizes, mut all) = (Vec::new(), Vec::new());
    while let Some(frame) = next(&mut body).await {
        let got = messages(&frame);
        sizes.push(got.len());
        all.extend(got);
    }
    (sizes, all)
}

/// A run of ready events goes out as one body chunk, of at most 64 events
/// (the module documentation of `connection.rs`: a bounded write each).
#[tokio::test(start_paused = true)]
async fn a_backlog_goes_out_in_chunks_of_at_most_64_events() {
    let (sizes, all) = backlog_chunks(100, log_message).await;
    assert_eq!(sizes, [64, 36]);
    assert_eq!(all, (1..=100).map(log_message).collect::<Vec<_>>());
}

/// A chunk stops growing once it holds 256 KiB: 60 KB events go out five
/// to a chunk (four are under 256 KiB, the fifth passes it), not one by
/// one.
#[tokio::test(start_paused = true)]
async fn a_backlog_of_large_events_goes_out_in_chunks_of_about_256_kib() {
    fn large(step: u64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/message",
               "params": {"level": "info", "data": {"step": step, "pad": "x".repeat(60_000)}}})
    }
    let (sizes, all) = backlog_chunks(10, large).await;
    assert_eq!(sizes, [5, 5]);
    assert_eq!(all, (1..=10).map(large).collect::<Vec<_>>());
}
