//! The [`EventStore`] contract as a suite every implementation runs: the
//! in-memory store (`transport-core/tests/memory_stores.rs`) and the Redis
//! store (`store-redis/tests/`) pass the same cases.
//!
//! Each case is a `pub async fn` taking an [`EventStoreMaker`], which builds
//! a fresh, empty store with the given bounds; [`event_store_suite!`](crate::event_store_suite)
//! expands to one `#[tokio::test]` per case. The bounds are
//! [`MemoryEventStoreConfig`]'s fields, which every implementation keeps
//! with the same meaning (see the memory store's documentation).
//! Implementation-specific checks (the memory store's own byte accounting,
//! shared payload buffers) stay with their implementation.

use std::sync::Arc;

use bytes::Bytes;
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::{
    EventStore, MemoryEventStoreConfig, Replay, ReplayError, StoreError, StoredEvent,
};

/// Builds fresh, empty stores for the suite.
#[async_trait::async_trait]
pub trait EventStoreMaker: Send + Sync {
    /// A new store, sharing nothing with earlier ones, with these bounds.
    async fn make(&self, limits: MemoryEventStoreConfig) -> Arc<dyn EventStore>;
}

const S1: StreamId = StreamId(1);
const S2: StreamId = StreamId(2);

fn sess(n: u64) -> SessionTag {
    SessionTag::from_u64(n)
}

fn msg(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn payloads(r: &Replay) -> Vec<&[u8]> {
    r.events.iter().map(|e| &e.data[..]).collect()
}

fn seqs(r: &Replay) -> Vec<u64> {
    r.events.iter().map(|e| e.id.seq).collect()
}

async fn small(
    m: &dyn EventStoreMaker,
    max_events: usize,
    max_bytes: usize,
) -> Arc<dyn EventStore> {
    m.make(MemoryEventStoreConfig {
        max_events_per_stream: max_events,
        max_bytes_per_stream: max_bytes,
        ..Default::default()
    })
    .await
}

/// A store with these bounds and session 1 open.
async fn one_session(
    m: &dyn EventStoreMaker,
    limits: MemoryEventStoreConfig,
) -> (Arc<dyn EventStore>, SessionTag) {
    let store = m.make(limits).await;
    let t = sess(1);
    store.open_session(&t).await.unwrap();
    (store, t)
}

/// A store with one session and streams 1 and 2 open.
async fn store_with_streams(store: Arc<dyn EventStore>) -> (Arc<dyn EventStore>, SessionTag) {
    let t = sess(1);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    store.open_stream(&t, S2).await.unwrap();
    (store, t)
}

/// Case: ids are sequential and priming is zero.
pub async fn ids_are_sequential_and_priming_is_zero(m: &dyn EventStoreMaker) {
    let store = m.make(MemoryEventStoreConfig::default()).await;
    let t = sess(7);
    store.open_session(&t).await.unwrap();
    let priming = store.open_stream(&t, S1).await.unwrap();
    assert_eq!(priming, EventId::priming(t, S1));
    assert!(priming.is_priming());
    assert_eq!(store.last_seq(&t, S1).await.unwrap(), 0);
    for i in 1..=5 {
        let id = store.append(&t, S1, msg(&format!("m{i}"))).await.unwrap();
        assert_eq!(id, EventId::new(t, S1, i));
    }
    assert_eq!(store.last_seq(&t, S1).await.unwrap(), 5);
}

/// Case: replay is exclusive.
pub async fn replay_is_exclusive(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(m.make(MemoryEventStoreConfig::default()).await).await;
    let mut ids = Vec::new();
    for i in 1..=5 {
        ids.push(store.append(&t, S1, msg(&format!("m{i}"))).await.unwrap());
    }
    for (k, last) in ids.iter().enumerate() {
        let r = store.replay_after(&t, last).await.unwrap();
        assert!(
            r.events.iter().all(|e| e.id != *last),
            "replay repeated {last}"
        );
        assert_eq!(seqs(&r), ((k as u64 + 2)..=5).collect::<Vec<_>>());
        assert_eq!(r.stream, S1);
        assert_eq!(r.last_seq, 5);
        assert!(!r.finished);
    }
    // After the last id: nothing, but not an error.
    let r = store.replay_after(&t, &ids[4]).await.unwrap();
    assert!(r.events.is_empty());
    assert_eq!(r.last_seq, 5);
}

/// Case: replay after priming returns everything in order.
pub async fn replay_after_priming_returns_everything_in_order(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(m.make(MemoryEventStoreConfig::default()).await).await;
    for i in 1..=3 {
        store.append(&t, S1, msg(&format!("m{i}"))).await.unwrap();
    }
    let r = store
        .replay_after(&t, &EventId::priming(t, S1))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"m1"[..], b"m2", b"m3"]);
    assert_eq!(
        r.events.iter().map(|e| e.id).collect::<Vec<_>>(),
        (1..=3).map(|i| EventId::new(t, S1, i)).collect::<Vec<_>>()
    );
    // Priming of a stream with no events yet: empty replay.
    let r = store
        .replay_after(&t, &EventId::priming(t, S2))
        .await
        .unwrap();
    assert!(r.events.is_empty());
    assert_eq!(r.last_seq, 0);
}

/// Case: replay is per stream.
pub async fn replay_is_per_stream(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(m.make(MemoryEventStoreConfig::default()).await).await;
    store.open_stream(&t, StreamId::STANDALONE).await.unwrap();
    // Interleave three streams.
    for i in 1..=4 {
        store.append(&t, S1, msg(&format!("a{i}"))).await.unwrap();
        store.append(&t, S2, msg(&format!("b{i}"))).await.unwrap();
        store
            .append(&t, StreamId::STANDALONE, msg(&format!("g{i}")))
            .await
            .unwrap();
    }
    let r = store
        .replay_after(&t, &EventId::new(t, S2, 1))
        .await
        .unwrap();
    assert_eq!(r.stream, S2);
    assert_eq!(payloads(&r), vec![&b"b2"[..], b"b3", b"b4"]);
    assert!(
        r.events
            .iter()
            .all(|e| e.id.stream == S2 && e.id.session == t)
    );
    let r = store
        .replay_after(&t, &EventId::priming(t, StreamId::STANDALONE))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"g1"[..], b"g2", b"g3", b"g4"]);
}

/// Case: finished flag.
pub async fn finished_flag(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(m.make(MemoryEventStoreConfig::default()).await).await;
    store.append(&t, S1, msg("progress")).await.unwrap();
    let resp = store.append(&t, S1, msg("response")).await.unwrap();
    let r = store
        .replay_after(&t, &EventId::priming(t, S1))
        .await
        .unwrap();
    assert!(!r.finished);
    store.finish_stream(&t, S1).await.unwrap();
    store.finish_stream(&t, S1).await.unwrap(); // idempotent
    let r = store
        .replay_after(&t, &EventId::priming(t, S1))
        .await
        .unwrap();
    assert!(r.finished);
    assert_eq!(payloads(&r), vec![&b"progress"[..], b"response"]);
    // Caught up on a finished stream: empty and finished.
    let r = store.replay_after(&t, &resp).await.unwrap();
    assert!(r.finished && r.events.is_empty());
    // Other stream unaffected.
    assert!(
        !store
            .replay_after(&t, &EventId::priming(t, S2))
            .await
            .unwrap()
            .finished
    );
    // No appends after finishing.
    assert!(matches!(
        store.append(&t, S1, msg("late")).await,
        Err(StoreError::StreamFinished { stream: S1, .. })
    ));
}

/// Case: unknown event id.
pub async fn unknown_event_id(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(m.make(MemoryEventStoreConfig::default()).await).await;
    store.append(&t, S1, msg("m1")).await.unwrap();
    // Beyond what was issued.
    let beyond = EventId::new(t, S1, 2);
    assert!(matches!(
        store.replay_after(&t, &beyond).await,
        Err(ReplayError::UnknownEventId { id }) if id == beyond
    ));
    // A stream never opened.
    let never = EventId::new(t, StreamId(99), 0);
    assert!(matches!(
        store.replay_after(&t, &never).await,
        Err(ReplayError::UnknownEventId { .. })
    ));
    // A session never opened (right tag, so not foreign).
    let ghost = sess(12345);
    assert!(matches!(
        store
            .replay_after(&ghost, &EventId::new(ghost, S1, 0))
            .await,
        Err(ReplayError::UnknownEventId { .. })
    ));
}

/// Case: foreign session.
pub async fn foreign_session(m: &dyn EventStoreMaker) {
    let store = m.make(MemoryEventStoreConfig::default()).await;
    let (a, b) = (sess(1), sess(2));
    for t in [a, b] {
        store.open_session(&t).await.unwrap();
        store.open_stream(&t, S1).await.unwrap();
        store.append(&t, S1, msg("x")).await.unwrap();
    }
    // An id valid in session b, presented in session a.
    let id = EventId::new(b, S1, 0);
    let err = store.replay_after(&a, &id).await.unwrap_err();
    assert!(matches!(err, ReplayError::ForeignSession { id: got } if got == id));
    assert!(err.to_string().contains("different session"), "{err}");
}

/// Case: eviction by event count.
pub async fn eviction_by_event_count(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(small(m, 3, 1 << 20).await).await;
    for i in 1..=10 {
        store.append(&t, S1, msg(&format!("m{i}"))).await.unwrap();
    }
    // Retained: 8, 9, 10. Evicted: 1..=7.
    assert_eq!(store.last_seq(&t, S1).await.unwrap(), 10);
    for seq in 0..7 {
        let id = EventId::new(t, S1, seq);
        assert!(
            matches!(store.replay_after(&t, &id).await, Err(ReplayError::Expired { id: got }) if got == id),
            "seq {seq} should be expired"
        );
    }
    // The edge of the window: the client has 7 (evicted), needs 8.. (retained).
    let r = store
        .replay_after(&t, &EventId::new(t, S1, 7))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"m8"[..], b"m9", b"m10"]);
    assert_eq!(seqs(&r), vec![8, 9, 10]);
    let r = store
        .replay_after(&t, &EventId::new(t, S1, 9))
        .await
        .unwrap();
    assert_eq!(seqs(&r), vec![10]);
    let r = store
        .replay_after(&t, &EventId::new(t, S1, 10))
        .await
        .unwrap();
    assert!(r.events.is_empty());
    // Still unknown beyond the end.
    assert!(matches!(
        store.replay_after(&t, &EventId::new(t, S1, 11)).await,
        Err(ReplayError::UnknownEventId { .. })
    ));
    // Other streams keep their own window.
    store.append(&t, S2, msg("b1")).await.unwrap();
    let r = store
        .replay_after(&t, &EventId::priming(t, S2))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"b1"[..]]);
}

/// Case: eviction by bytes.
pub async fn eviction_by_bytes(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(small(m, 1000, 10).await).await;
    store.append(&t, S1, msg("aaaa")).await.unwrap(); // 1: 4 bytes
    store.append(&t, S1, msg("bbbb")).await.unwrap(); // 2: 8 bytes
    let r = store
        .replay_after(&t, &EventId::priming(t, S1))
        .await
        .unwrap();
    assert_eq!(seqs(&r), vec![1, 2]);
    store.append(&t, S1, msg("cccc")).await.unwrap(); // 3: 12 > 10, evict 1
    assert!(matches!(
        store.replay_after(&t, &EventId::priming(t, S1)).await,
        Err(ReplayError::Expired { .. })
    ));
    let r = store
        .replay_after(&t, &EventId::new(t, S1, 1))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"bbbb"[..], b"cccc"]);
    // A message of exactly the limit evicts everything else.
    store.append(&t, S1, msg("0123456789")).await.unwrap(); // 4
    assert!(matches!(
        store.replay_after(&t, &EventId::new(t, S1, 2)).await,
        Err(ReplayError::Expired { .. })
    ));
    let r = store
        .replay_after(&t, &EventId::new(t, S1, 3))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"0123456789"[..]]);
}

/// Case: message too large.
pub async fn message_too_large(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(small(m, 1000, 10).await).await;
    store.append(&t, S1, msg("ok")).await.unwrap();
    let err = store.append(&t, S1, msg("01234567890")).await.unwrap_err();
    assert!(
        matches!(err, StoreError::MessageTooLarge { size: 11, max: 10 }),
        "{err:?}"
    );
    // Nothing changed: no sequence number consumed, nothing evicted.
    assert_eq!(store.last_seq(&t, S1).await.unwrap(), 1);
    let r = store
        .replay_after(&t, &EventId::priming(t, S1))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"ok"[..]]);
    assert_eq!(store.append(&t, S1, msg("next")).await.unwrap().seq, 2);
}

/// Case: zero retention still issues ids.
pub async fn zero_retention_still_issues_ids(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(small(m, 0, 1 << 20).await).await;
    for i in 1..=3 {
        assert_eq!(store.append(&t, S1, msg("x")).await.unwrap().seq, i);
    }
    let r = store
        .replay_after(&t, &EventId::new(t, S1, 3))
        .await
        .unwrap();
    assert!(r.events.is_empty());
    assert!(matches!(
        store.replay_after(&t, &EventId::new(t, S1, 2)).await,
        Err(ReplayError::Expired { .. })
    ));
}

/// Case: remove session then unknown.
pub async fn remove_session_then_unknown(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(m.make(MemoryEventStoreConfig::default()).await).await;
    let id = store.append(&t, S1, msg("m1")).await.unwrap();
    store.remove_session(&t).await.unwrap();
    store.remove_session(&t).await.unwrap(); // idempotent
    assert!(matches!(
        store.replay_after(&t, &id).await,
        Err(ReplayError::UnknownEventId { .. })
    ));
    // Stream 0's ids too (the standalone stream, the lowest number: not
    // taken for an evicted stream's).
    let standalone = EventId::new(t, StreamId::STANDALONE, 1);
    assert!(matches!(
        store.replay_after(&t, &standalone).await,
        Err(ReplayError::UnknownEventId { .. })
    ));
    assert!(matches!(
        store.append(&t, S1, msg("late")).await,
        Err(StoreError::UnknownSession { .. })
    ));
    assert!(matches!(
        store.open_stream(&t, S2).await,
        Err(StoreError::UnknownSession { .. })
    ));
    assert!(matches!(
        store.last_seq(&t, S1).await,
        Err(StoreError::UnknownSession { .. })
    ));
    // The tag can be registered afresh; its old events are gone.
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    assert!(matches!(
        store.replay_after(&t, &id).await,
        Err(ReplayError::UnknownEventId { .. })
    ));
}

/// Case: store errors.
pub async fn store_errors(m: &dyn EventStoreMaker) {
    let store = m
        .make(MemoryEventStoreConfig {
            max_sessions: 2,
            ..Default::default()
        })
        .await;
    let t = sess(1);
    assert!(matches!(
        store.open_stream(&t, S1).await,
        Err(StoreError::UnknownSession { .. })
    ));
    store.open_session(&t).await.unwrap();
    assert!(matches!(
        store.open_session(&t).await,
        Err(StoreError::SessionExists { .. })
    ));
    store.open_session(&sess(2)).await.unwrap();
    assert!(matches!(
        store.open_session(&sess(3)).await,
        Err(StoreError::TooManySessions { max: 2 })
    ));
    store.open_stream(&t, S1).await.unwrap();
    assert!(matches!(
        store.open_stream(&t, S1).await,
        Err(StoreError::StreamExists { stream: S1, .. })
    ));
    assert!(matches!(
        store.append(&t, S2, msg("x")).await,
        Err(StoreError::UnknownStream { stream: S2, .. })
    ));
    assert!(matches!(
        store.finish_stream(&t, S2).await,
        Err(StoreError::UnknownStream { .. })
    ));
    assert!(matches!(
        store.last_seq(&t, S2).await,
        Err(StoreError::UnknownStream { .. })
    ));
    // Removing a session frees a slot.
    store.remove_session(&sess(2)).await.unwrap();
    store.open_session(&sess(3)).await.unwrap();
}

/// Whether stream `n` of session `t` is gone: a replay from its priming id
/// reports [`ReplayError::Expired`].
async fn evicted(store: &dyn EventStore, t: &SessionTag, n: u64) -> bool {
    matches!(
        store
            .replay_after(t, &EventId::priming(*t, StreamId(n)))
            .await,
        Err(ReplayError::Expired { .. })
    )
}

/// A store of 3 streams a session, and session 1 holding streams 1 to 3,
/// each with one event `x`, none finished.
async fn three_streams_of_three(m: &dyn EventStoreMaker) -> (Arc<dyn EventStore>, SessionTag) {
    let (store, t) = one_session(
        m,
        MemoryEventStoreConfig {
            max_streams_per_session: 3,
            ..Default::default()
        },
    )
    .await;
    for n in 1..=3 {
        store.open_stream(&t, StreamId(n)).await.unwrap();
        store.append(&t, StreamId(n), msg("x")).await.unwrap();
    }
    (store, t)
}

/// Case: stream limit evicts longest finished stream.
pub async fn stream_limit_evicts_longest_finished_stream(m: &dyn EventStoreMaker) {
    let (store, t) = three_streams_of_three(m).await;
    // Full and nothing finished: error.
    assert!(matches!(
        store.open_stream(&t, StreamId(4)).await,
        Err(StoreError::TooManyStreams { max: 3, .. })
    ));
    // Finish 3 then 2: 3 finished first, so it goes first.
    store.finish_stream(&t, StreamId(3)).await.unwrap();
    store.finish_stream(&t, StreamId(2)).await.unwrap();
    store.open_stream(&t, StreamId(4)).await.unwrap();
    let gone = EventId::priming(t, StreamId(3));
    assert!(matches!(
        store.replay_after(&t, &gone).await,
        Err(ReplayError::Expired { id }) if id == gone
    ));
    assert!(
        store
            .replay_after(&t, &EventId::priming(t, StreamId(2)))
            .await
            .is_ok()
    );
    assert!(
        store
            .replay_after(&t, &EventId::priming(t, StreamId(1)))
            .await
            .is_ok()
    );
    store.open_stream(&t, StreamId(5)).await.unwrap();
    assert!(evicted(&*store, &t, 2).await);
    // Above the highest stream ever opened: unknown, not expired.
    assert!(matches!(
        store
            .replay_after(&t, &EventId::priming(t, StreamId(6)))
            .await,
        Err(ReplayError::UnknownEventId { .. })
    ));
}

/// Case: a finished stream a replay has read to its end is evicted before
/// one nobody has read yet, by the stream cap and by the session's byte
/// bound: a quick answer whose connection has not read it yet survives a
/// burst of other streams.
pub async fn a_stream_read_to_its_end_is_evicted_first(m: &dyn EventStoreMaker) {
    let (store, t) = three_streams_of_three(m).await;
    // 1 finishes first, but 2 is the one read to its end.
    store.finish_stream(&t, StreamId(1)).await.unwrap();
    store.finish_stream(&t, StreamId(2)).await.unwrap();
    // Read before it finished does not count: only a read of the end does.
    store
        .replay_after(&t, &EventId::priming(t, StreamId(3)))
        .await
        .unwrap();
    store
        .replay_after(&t, &EventId::priming(t, StreamId(2)))
        .await
        .unwrap();
    store.open_stream(&t, StreamId(4)).await.unwrap();
    assert!(evicted(&*store, &t, 2).await);
    let kept = store
        .replay_after(&t, &EventId::priming(t, StreamId(1)))
        .await
        .unwrap();
    assert_eq!(payloads(&kept), vec![&b"x"[..]]);
    // Now 1 is read to its end too, and finished before 3: 1 goes next.
    store.finish_stream(&t, StreamId(3)).await.unwrap();
    store.open_stream(&t, StreamId(5)).await.unwrap();
    assert!(evicted(&*store, &t, 1).await);
    assert!(
        store
            .replay_after(&t, &EventId::priming(t, StreamId(3)))
            .await
            .is_ok()
    );

    // The session's byte bound: the read stream goes, the unread one stays.
    let t = sess(2);
    let store = ten_bytes_a_session(m, t).await;
    for s in [S1, S2] {
        store.open_stream(&t, s).await.unwrap();
        store.append(&t, s, msg("aaaa")).await.unwrap();
        store.finish_stream(&t, s).await.unwrap();
    }
    store
        .replay_after(&t, &EventId::priming(t, S2))
        .await
        .unwrap();
    let s3 = StreamId(3);
    store.open_stream(&t, s3).await.unwrap();
    store.append(&t, s3, msg("cccc")).await.unwrap(); // 12 > 10: one goes
    assert!(matches!(
        store.replay_after(&t, &EventId::priming(t, S2)).await,
        Err(ReplayError::Expired { .. })
    ));
    assert!(
        store
            .replay_after(&t, &EventId::priming(t, S1))
            .await
            .is_ok()
    );
}

/// A store of 10 payload bytes a session (100 a stream), with session `t`
/// open.
async fn ten_bytes_a_session(m: &dyn EventStoreMaker, t: SessionTag) -> Arc<dyn EventStore> {
    let store = m
        .make(MemoryEventStoreConfig {
            max_bytes_per_stream: 100,
            max_bytes_per_session: 10,
            ..Default::default()
        })
        .await;
    store.open_session(&t).await.unwrap();
    store
}

/// Case: session byte limit evicts finished streams first.
pub async fn session_byte_limit_evicts_finished_streams_first(m: &dyn EventStoreMaker) {
    let t = sess(1);
    let store = ten_bytes_a_session(m, t).await;
    store.open_stream(&t, S1).await.unwrap();
    store.open_stream(&t, S2).await.unwrap();
    store.append(&t, S1, msg("aaaa")).await.unwrap();
    store.finish_stream(&t, S1).await.unwrap();
    store.append(&t, S2, msg("bbbb")).await.unwrap(); // 8 bytes in session
    store.append(&t, S2, msg("cccc")).await.unwrap(); // 12 > 10: stream 1 goes
    assert!(matches!(
        store.replay_after(&t, &EventId::priming(t, S1)).await,
        Err(ReplayError::Expired { .. })
    ));
    let r = store
        .replay_after(&t, &EventId::priming(t, S2))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"bbbb"[..], b"cccc"]);
    // No finished stream left: the appending stream's oldest events go.
    store.append(&t, S2, msg("dddd")).await.unwrap();
    assert!(matches!(
        store.replay_after(&t, &EventId::priming(t, S2)).await,
        Err(ReplayError::Expired { .. })
    ));
    let r = store
        .replay_after(&t, &EventId::new(t, S2, 1))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"cccc"[..], b"dddd"]);
}

/// Case: a finished stream evicted for the session's bytes gives its place
/// under the stream cap back, like one evicted at the cap: the stream count
/// stays exact through both evictions, so a new stream opens without
/// evicting a stream that is still running (or being refused, with no
/// finished stream left to evict).
pub async fn a_stream_evicted_for_bytes_frees_its_place_under_the_cap(m: &dyn EventStoreMaker) {
    let (store, t) = one_session(
        m,
        MemoryEventStoreConfig {
            max_streams_per_session: 2,
            max_bytes_per_stream: 100,
            max_bytes_per_session: 10,
            ..Default::default()
        },
    )
    .await;
    for (n, answer) in [(S1, "aaaa"), (S2, "bbbb")] {
        let (_, done) = store.open_answered(&t, n, msg(answer)).await.unwrap();
        done.appended.unwrap();
    }
    // At the cap: stream 1 goes.
    store.open_stream(&t, StreamId(3)).await.unwrap();
    assert!(evicted(&*store, &t, 1).await);
    // 4 + 8 bytes > 10: stream 2 goes, leaving one stream.
    store
        .append(&t, StreamId(3), msg("cccccccc"))
        .await
        .unwrap();
    assert!(evicted(&*store, &t, 2).await);
    store.open_stream(&t, StreamId(4)).await.unwrap();
    assert_eq!(
        retained(&*store, t, 3).await,
        bytes_of(&["cccccccc"]),
        "the running stream is still there"
    );
}

/// What stream `n` still holds after its priming event (`None`: expired).
async fn retained(store: &dyn EventStore, t: SessionTag, n: u64) -> Option<Vec<Vec<u8>>> {
    match store
        .replay_after(&t, &EventId::priming(t, StreamId(n)))
        .await
    {
        Ok(r) => Some(payloads(&r).into_iter().map(<[u8]>::to_vec).collect()),
        Err(ReplayError::Expired { .. }) => None,
        Err(e) => panic!("stream {n}: {e:?}"),
    }
}

fn bytes_of(items: &[&str]) -> Option<Vec<Vec<u8>>> {
    Some(items.iter().map(|s| s.as_bytes().to_vec()).collect())
}

/// The session's byte count stays exact through per-stream evictions and
/// whole-stream evictions, so the session bound bites at exactly the byte
/// the configuration names, not before and not after.
pub async fn session_bytes_stay_exact_through_evictions(m: &dyn EventStoreMaker) {
    let (store, t) = one_session(
        m,
        MemoryEventStoreConfig {
            max_bytes_per_stream: 8,
            max_bytes_per_session: 12,
            ..Default::default()
        },
    )
    .await;
    store.open_stream(&t, StreamId(1)).await.unwrap();
    for m in ["aaaa", "bbbb", "cccc"] {
        store.append(&t, StreamId(1), msg(m)).await.unwrap();
    }
    // Per-stream bound: 12 > 8, the oldest event went; the session holds 8.
    assert_eq!(retained(&*store, t, 1).await, None);
    let r = store
        .replay_after(&t, &EventId::new(t, StreamId(1), 1))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"bbbb"[..], b"cccc"]);
    store.finish_stream(&t, StreamId(1)).await.unwrap();
    store.open_stream(&t, StreamId(2)).await.unwrap();
    store.append(&t, StreamId(2), msg("dd")).await.unwrap();
    store.append(&t, StreamId(2), msg("ee")).await.unwrap();
    // Exactly at the session bound (8 + 4 = 12): nothing goes.
    assert!(retained(&*store, t, 2).await.is_some());
    let r = store
        .replay_after(&t, &EventId::new(t, StreamId(1), 1))
        .await
        .unwrap();
    assert_eq!(
        r.events.len(),
        2,
        "stream 1 must survive a session exactly at its bound"
    );
    // One byte more: the finished stream goes whole; the session holds 5.
    store.append(&t, StreamId(2), msg("f")).await.unwrap();
    assert!(matches!(
        store
            .replay_after(&t, &EventId::new(t, StreamId(1), 1))
            .await,
        Err(ReplayError::Expired { .. })
    ));
    assert_eq!(retained(&*store, t, 2).await, bytes_of(&["dd", "ee", "f"]));
    // 5 + 7 = 12 in the session, but stream 2 would hold 12 > 8: its two
    // oldest go and it holds 8, the session too.
    store.append(&t, StreamId(2), msg("ggggggg")).await.unwrap();
    let r = store
        .replay_after(&t, &EventId::new(t, StreamId(2), 2))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"f"[..], b"ggggggg"]);
    // 8 + 4 = 12 with a new stream: within the bound, everything stays.
    store.open_stream(&t, StreamId(3)).await.unwrap();
    store.append(&t, StreamId(3), msg("hhhh")).await.unwrap();
    assert_eq!(retained(&*store, t, 3).await, bytes_of(&["hhhh"]));
    let r = store
        .replay_after(&t, &EventId::new(t, StreamId(2), 2))
        .await
        .unwrap();
    assert_eq!(r.events.len(), 2);
    // 13: no finished stream is left, so the appending stream's oldest
    // event goes (stream 3's "hhhh"), and the session is back to 9.
    store.append(&t, StreamId(3), msg("i")).await.unwrap();
    assert!(retained(&*store, t, 3).await.is_none());
    let r = store
        .replay_after(&t, &EventId::new(t, StreamId(3), 1))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"i"[..]]);
    // 9 + 3 = 12: still within the bound, nothing else goes.
    store.append(&t, StreamId(3), msg("jjj")).await.unwrap();
    let r = store
        .replay_after(&t, &EventId::new(t, StreamId(3), 1))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"i"[..], b"jjj"]);
    // 14: stream 3's oldest go until the session fits (8 + 2 = 10).
    store.append(&t, StreamId(3), msg("kk")).await.unwrap();
    let r = store
        .replay_after(&t, &EventId::new(t, StreamId(3), 3))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"kk"[..]]);
    assert!(matches!(
        store
            .replay_after(&t, &EventId::new(t, StreamId(3), 2))
            .await,
        Err(ReplayError::Expired { .. })
    ));
}

/// A stream evicted to make room for a new one (the stream-count bound)
/// gives its bytes back to the session.
pub async fn a_stream_evicted_for_count_releases_its_bytes(m: &dyn EventStoreMaker) {
    let (store, t) = one_session(
        m,
        MemoryEventStoreConfig {
            max_streams_per_session: 2,
            max_bytes_per_session: 12,
            ..Default::default()
        },
    )
    .await;
    store.open_stream(&t, StreamId(1)).await.unwrap();
    store
        .append(&t, StreamId(1), msg("aaaaaaaa"))
        .await
        .unwrap();
    store.finish_stream(&t, StreamId(1)).await.unwrap();
    store.open_stream(&t, StreamId(2)).await.unwrap();
    // The third stream evicts finished stream 1 and its 8 bytes.
    store.open_stream(&t, StreamId(3)).await.unwrap();
    // So 12 bytes fit the session again.
    store
        .append(&t, StreamId(2), msg("bbbbbbbbbbbb"))
        .await
        .unwrap();
    assert_eq!(retained(&*store, t, 2).await, bytes_of(&["bbbbbbbbbbbb"]));
}

/// Case: through arc dyn.
pub async fn through_arc_dyn(m: &dyn EventStoreMaker) {
    let store = m.make(MemoryEventStoreConfig::default()).await;
    let t = SessionTag::from_random_bytes(*b"0123456789ab");
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    let mut tasks = Vec::new();
    // Concurrent appenders on distinct streams.
    for n in 2..6u64 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            store.open_stream(&t, StreamId(n)).await.unwrap();
            for i in 0..100 {
                store
                    .append(&t, StreamId(n), msg(&format!("{n}:{i}")))
                    .await
                    .unwrap();
            }
            store.finish_stream(&t, StreamId(n)).await.unwrap();
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    for n in 2..6u64 {
        let r = store
            .replay_after(&t, &EventId::priming(t, StreamId(n)))
            .await
            .unwrap();
        assert!(r.finished);
        assert_eq!(r.events.len(), 100);
        for (i, e) in r.events.iter().enumerate() {
            assert_eq!(e.id, EventId::new(t, StreamId(n), i as u64 + 1));
            assert_eq!(e.data, msg(&format!("{n}:{i}")));
        }
    }
    // The id a client got round-trips through its string form.
    let id = store.append(&t, S1, msg("{}")).await.unwrap();
    let parsed = EventId::parse_in_session(&id.to_string(), &t).unwrap();
    assert!(
        store
            .replay_after(&t, &parsed)
            .await
            .unwrap()
            .events
            .is_empty()
    );
}

/// Case: `append_final` stores the final message with the next sequence
/// number and ends the stream, as `append` then `finish_stream` do: a
/// replay has everything and says so, nothing more can be appended, a
/// second call is refused its message but still ends nothing new, and the
/// ended stream is the one the stream bound evicts.
pub async fn append_final_stores_the_answer_and_ends_the_stream(m: &dyn EventStoreMaker) {
    let store = m
        .make(MemoryEventStoreConfig {
            max_streams_per_session: 2,
            ..Default::default()
        })
        .await;
    let (store, t) = store_with_streams(store).await;
    store.append(&t, S1, msg("note")).await.unwrap();
    let done = store.append_final(&t, S1, msg("answer")).await;
    assert_eq!(done.appended.unwrap(), EventId::new(t, S1, 2));
    done.finished.unwrap();
    let r = store
        .replay_after(&t, &EventId::priming(t, S1))
        .await
        .unwrap();
    assert_eq!(payloads(&r), vec![&b"note"[..], b"answer"]);
    assert_eq!(r.last_seq, 2);
    assert!(r.finished);
    assert!(matches!(
        store.append(&t, S1, msg("late")).await,
        Err(StoreError::StreamFinished { .. })
    ));
    let again = store.append_final(&t, S1, msg("twice")).await;
    assert!(matches!(
        again.appended,
        Err(StoreError::StreamFinished { .. })
    ));
    again.finished.unwrap();
    // S2 is still running: a third stream evicts S1, the ended one.
    store.open_stream(&t, StreamId(3)).await.unwrap();
    assert!(matches!(
        store.replay_after(&t, &EventId::priming(t, S1)).await,
        Err(ReplayError::Expired { .. })
    ));
    assert!(
        !store
            .replay_after(&t, &EventId::priming(t, S2))
            .await
            .unwrap()
            .finished
    );
}

/// Case: `open_answered` opens a stream with its final message in it
/// (priming id, then the message as sequence number 1, the stream ended
/// and counted as read to its end), and refuses a stream that exists
/// without appending to it.
pub async fn open_answered_opens_a_finished_stream(m: &dyn EventStoreMaker) {
    let (store, t) = three_streams_of_three(m).await;
    store.finish_stream(&t, StreamId(1)).await.unwrap();
    store.finish_stream(&t, StreamId(2)).await.unwrap();
    assert!(matches!(
        store.open_answered(&t, StreamId(3), msg("again")).await,
        Err(StoreError::StreamExists { .. })
    ));
    assert_eq!(store.last_seq(&t, StreamId(3)).await.unwrap(), 1);
    // At the cap: opening it evicts 1 (finished first, nobody read it).
    let (priming, done) = store
        .open_answered(&t, StreamId(4), msg("answer"))
        .await
        .unwrap();
    assert_eq!(priming, EventId::priming(t, StreamId(4)));
    assert_eq!(done.appended.unwrap(), EventId::new(t, StreamId(4), 1));
    done.finished.unwrap();
    assert!(matches!(
        store.append(&t, StreamId(4), msg("late")).await,
        Err(StoreError::StreamFinished { .. })
    ));
    assert!(evicted(&*store, &t, 1).await);
    // 4 counts as read to its end: the next new stream evicts it, not 2.
    store.finish_stream(&t, StreamId(3)).await.unwrap();
    store.open_stream(&t, StreamId(5)).await.unwrap();
    assert!(evicted(&*store, &t, 4).await);
    let two = store
        .replay_after(&t, &EventId::priming(t, StreamId(2)))
        .await
        .unwrap();
    assert!(two.finished);
    // Its answer was stored: a store with room replays it.
    let (store, t) = three_streams_of_three(m).await;
    store.finish_stream(&t, StreamId(1)).await.unwrap();
    let (_, done) = store
        .open_answered(&t, StreamId(9), msg("kept"))
        .await
        .unwrap();
    done.finished.unwrap();
    let replay = store
        .replay_after(&t, &EventId::priming(t, StreamId(9)))
        .await
        .unwrap();
    assert_eq!(payloads(&replay), vec![&b"kept"[..]]);
    assert!(replay.finished);
}

/// Case: the stream read to its end is found however far down the list
/// of finished streams it is (here the 25th of 40 finished): the stream
/// cap evicts it, not the one that finished first.
pub async fn a_read_stream_deep_in_the_finished_list_is_evicted_first(m: &dyn EventStoreMaker) {
    let (store, t) = one_session(
        m,
        MemoryEventStoreConfig {
            max_streams_per_session: 40,
            ..Default::default()
        },
    )
    .await;
    for n in 1..=40 {
        store.open_stream(&t, StreamId(n)).await.unwrap();
        store
            .append_final(&t, StreamId(n), msg("x"))
            .await
            .finished
            .unwrap();
    }
    store
        .replay_after(&t, &EventId::priming(t, StreamId(25)))
        .await
        .unwrap();
    store.open_stream(&t, StreamId(41)).await.unwrap();
    assert!(evicted(&*store, &t, 25).await);
    // None of the others is read now: the next new stream evicts the one
    // that finished first.
    store.open_stream(&t, StreamId(42)).await.unwrap();
    assert!(evicted(&*store, &t, 1).await);
    for n in [2, 24, 26, 40] {
        assert!(
            store
                .replay_after(&t, &EventId::priming(t, StreamId(n)))
                .await
                .is_ok(),
            "stream {n} kept"
        );
    }
}

/// Case: `append_final_delivered` stores the final message and ends the
/// stream as `append_final` does, and counts the stream as read to its
/// end: the stream cap evicts it before streams that finished earlier
/// but that nobody has read (one ended by `finish_stream`, one by
/// `append_final`).
pub async fn append_final_delivered_counts_as_read_to_the_end(m: &dyn EventStoreMaker) {
    let (store, t) = three_streams_of_three(m).await;
    store.finish_stream(&t, StreamId(1)).await.unwrap();
    let plain = store.append_final(&t, StreamId(2), msg("two")).await;
    assert_eq!(plain.appended.unwrap(), EventId::new(t, StreamId(2), 2));
    plain.finished.unwrap();
    let delivered = store
        .append_final_delivered(&t, StreamId(3), msg("three"))
        .await;
    assert_eq!(delivered.appended.unwrap(), EventId::new(t, StreamId(3), 2));
    delivered.finished.unwrap();
    // Stored and ended like any final append (not read here: a replay of
    // the end would count as the read).
    assert_eq!(store.last_seq(&t, StreamId(3)).await.unwrap(), 2);
    assert!(matches!(
        store.append(&t, StreamId(3), msg("late")).await,
        Err(StoreError::StreamFinished { .. })
    ));
    store.open_stream(&t, StreamId(4)).await.unwrap();
    assert!(evicted(&*store, &t, 3).await);
    let two = store
        .replay_after(&t, &EventId::priming(t, StreamId(2)))
        .await
        .unwrap();
    assert_eq!(payloads(&two), vec![&b"x"[..], &b"two"[..]]);
    assert!(two.finished);
    assert!(
        store
            .replay_after(&t, &EventId::priming(t, StreamId(1)))
            .await
            .is_ok()
    );
}

/// Case: `append_final` ends the stream even when the message is refused
/// (too large), as `finish_stream` after a failed `append` would; on an
/// unknown stream or session both steps fail.
pub async fn append_final_ends_the_stream_when_the_message_is_refused(m: &dyn EventStoreMaker) {
    let (store, t) = store_with_streams(small(m, 10, 4).await).await;
    let done = store.append_final(&t, S1, msg("too large")).await;
    assert!(matches!(
        done.appended,
        Err(StoreError::MessageTooLarge { size: 9, max: 4 })
    ));
    done.finished.unwrap();
    let r = store
        .replay_after(&t, &EventId::priming(t, S1))
        .await
        .unwrap();
    assert!(r.events.is_empty());
    assert_eq!(r.last_seq, 0);
    assert!(r.finished);

    let none = store.append_final(&t, StreamId(9), msg("x")).await;
    assert!(matches!(
        none.appended,
        Err(StoreError::UnknownStream { .. })
    ));
    assert!(matches!(
        none.finished,
        Err(StoreError::UnknownStream { .. })
    ));
    let gone = store.append_final(&sess(99), S1, msg("x")).await;
    assert!(matches!(
        gone.appended,
        Err(StoreError::UnknownSession { .. })
    ));
    assert!(matches!(
        gone.finished,
        Err(StoreError::UnknownSession { .. })
    ));
}

/// Case: `append_final_delivered` whose message is refused (too large)
/// still ends the stream and counts it as read to its end (the writer
/// hands the refusal to the connection itself): the stream cap evicts it
/// before an older stream nobody has read.
pub async fn a_refused_delivered_answer_still_counts_as_read(m: &dyn EventStoreMaker) {
    let (store, t) = one_session(
        m,
        MemoryEventStoreConfig {
            max_streams_per_session: 3,
            max_bytes_per_stream: 4,
            ..Default::default()
        },
    )
    .await;
    for n in 1..=3 {
        store.open_stream(&t, StreamId(n)).await.unwrap();
    }
    store.finish_stream(&t, S1).await.unwrap();
    let done = store.append_final_delivered(&t, S2, msg("too large")).await;
    assert!(matches!(
        done.appended,
        Err(StoreError::MessageTooLarge { .. })
    ));
    done.finished.unwrap();
    store.open_stream(&t, StreamId(4)).await.unwrap();
    assert!(evicted(&*store, &t, 2).await);
    assert!(!evicted(&*store, &t, 1).await);
}

/// Case: a final message counts against the server-wide byte budget like
/// any other: the oldest appends of the store go first when it is over.
pub async fn append_final_counts_against_the_byte_budget(m: &dyn EventStoreMaker) {
    let store = m
        .make(MemoryEventStoreConfig {
            max_bytes_total: 250,
            ..Default::default()
        })
        .await;
    let (a, b) = (sess(1), sess(2));
    for t in [a, b] {
        store.open_session(&t).await.unwrap();
        store.open_stream(&t, S1).await.unwrap();
    }
    let hundred = || Bytes::from(vec![b'x'; 100]);
    store.append(&a, S1, hundred()).await.unwrap();
    store
        .append_final(&a, S1, hundred())
        .await
        .appended
        .unwrap();
    store
        .append_final(&b, S1, hundred())
        .await
        .appended
        .unwrap();
    // 300 bytes over a budget of 250: a's first event went.
    assert!(matches!(
        store.replay_after(&a, &EventId::priming(a, S1)).await,
        Err(ReplayError::Expired { .. })
    ));
    let kept = store
        .replay_after(&a, &EventId::new(a, S1, 1))
        .await
        .unwrap();
    assert_eq!(seqs(&kept), [2]);
    assert!(kept.finished);
    let all_b = store
        .replay_after(&b, &EventId::priming(b, S1))
        .await
        .unwrap();
    assert_eq!(seqs(&all_b), [1]);
}

/// Issue 13 (2): the server-wide byte budget evicts the oldest events of
/// the whole store first, across sessions, with the usual `Expired`.
pub async fn the_byte_budget_evicts_the_oldest_across_sessions(m: &dyn EventStoreMaker) {
    let store = m
        .make(MemoryEventStoreConfig {
            max_bytes_total: 1000,
            ..Default::default()
        })
        .await;
    let (a, b) = (sess(1), sess(2));
    for t in [a, b] {
        store.open_session(&t).await.unwrap();
        store.open_stream(&t, S1).await.unwrap();
    }
    let hundred = || Bytes::from(vec![b'x'; 100]);
    // Session a first: 6 events (600 bytes), then b: 6 more.
    for _ in 0..6 {
        store.append(&a, S1, hundred()).await.unwrap();
    }
    for _ in 0..6 {
        store.append(&b, S1, hundred()).await.unwrap();
    }
    // a's two oldest went first; b kept everything.
    let from_start = |t| EventId::priming(t, S1);
    assert!(matches!(
        store.replay_after(&a, &from_start(a)).await,
        Err(ReplayError::Expired { .. })
    ));
    let kept = store
        .replay_after(&a, &EventId::new(a, S1, 2))
        .await
        .unwrap();
    assert_eq!(seqs(&kept), [3, 4, 5, 6]);
    let all_b = store.replay_after(&b, &from_start(b)).await.unwrap();
    assert_eq!(seqs(&all_b), [1, 2, 3, 4, 5, 6]);
}

/// Issue 13 (2): removing a session (DELETE or expiry) gives its bytes back
/// to the budget, by the store's own accounting.
/// The budget's queue is compacted: appends evicted by the per-stream
/// bounds do not pile up in it.
/// Against a model that keeps everything, for `cases` random runs (stream
/// bounds and message sizes): every replay is either the exact suffix after
/// the id, `Expired`, or (beyond the end) `UnknownEventId`; the retained
/// window respects both per-stream bounds and is as large as they allow.
/// Runs each case on `rt` (a plain `#[test]` owns the runtime, since the
/// property runner is synchronous).
pub fn replay_matches_model(rt: &tokio::runtime::Runtime, m: &dyn EventStoreMaker, cases: u32) {
    use proptest::collection::vec;
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (0usize..6, 1usize..40, vec(0usize..40, 0..30));
    runner
        .run(&strategy, |(max_events, max_bytes, sizes)| {
            rt.block_on(model_case(m, max_events, max_bytes, sizes))
        })
        .unwrap();
}

async fn model_case(
    m: &dyn EventStoreMaker,
    max_events: usize,
    max_bytes: usize,
    sizes: Vec<usize>,
) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::{prop_assert, prop_assert_eq};
    let store = small(m, max_events, max_bytes).await;
    let t = sess(1);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    let mut all: Vec<Bytes> = Vec::new();
    for (i, size) in sizes.iter().enumerate() {
        let data = Bytes::from(vec![b'a' + (i % 26) as u8; *size]);
        match store.append(&t, S1, data.clone()).await {
            Ok(id) => {
                all.push(data);
                prop_assert_eq!(id, EventId::new(t, S1, all.len() as u64));
            }
            Err(StoreError::MessageTooLarge { size: s, max }) => {
                prop_assert!(s > max && max == max_bytes);
            }
            Err(e) => prop_assert!(false, "unexpected {e:?}"),
        }
    }
    let n = all.len() as u64;
    let mut lowest_ok = None;
    for k in 0..=n + 2 {
        match store.replay_after(&t, &EventId::new(t, S1, k)).await {
            Ok(r) => {
                prop_assert!(k <= n);
                lowest_ok.get_or_insert(k);
                prop_assert_eq!(r.last_seq, n);
                let want: Vec<StoredEvent> = (k + 1..=n)
                    .map(|s| StoredEvent {
                        id: EventId::new(t, S1, s),
                        data: all[s as usize - 1].clone(),
                    })
                    .collect();
                prop_assert_eq!(r.events, want);
            }
            Err(ReplayError::Expired { .. }) => prop_assert!(lowest_ok.is_none()),
            Err(ReplayError::UnknownEventId { .. }) => prop_assert!(k > n),
            Err(e) => prop_assert!(false, "unexpected {e:?}"),
        }
    }
    let lo = lowest_ok.expect("replay after the last id always works");
    let window = &all[lo as usize..];
    let bytes: usize = window.iter().map(Bytes::len).sum();
    prop_assert!(window.len() <= max_events && bytes <= max_bytes);
    if lo > 0 {
        // One more event would break a bound.
        let extra = all[lo as usize - 1].len();
        prop_assert!(window.len() + 1 > max_events || bytes + extra > max_bytes);
    }
    Ok(())
}

/// Case: the live tail ([`EventStore::tail_after`]). It keeps
/// `replay_after`'s contract (exactly what follows, the finished flag, the
/// errors); asked again and again while another task appends — what a
/// resumed connection on another instance does — it sees every append and
/// then the stream's end, each event once. A store that waits answers
/// within `wait` when nothing comes; one that does not wait answers at once.
pub async fn tail_after_follows_appends_and_the_end(m: &dyn EventStoreMaker) {
    use std::time::Duration;
    let (store, t) = store_with_streams(m.make(MemoryEventStoreConfig::default()).await).await;
    store.append(&t, S1, msg("a")).await.unwrap();
    let r = store
        .tail_after(&t, &EventId::priming(t, S1), Duration::from_millis(200))
        .await
        .unwrap();
    assert_eq!(payloads(&r), [b"a".as_slice()]);
    assert!(!r.finished);
    // Nothing new: an empty answer, not finished (after at most the wait).
    let r = store
        .tail_after(&t, &EventId::new(t, S1, 1), Duration::from_millis(50))
        .await
        .unwrap();
    assert!(
        r.events.is_empty() && !r.finished && r.last_seq == 1,
        "{r:?}"
    );
    // Errors as for replay_after.
    assert!(matches!(
        store
            .tail_after(&sess(1), &EventId::new(sess(2), S1, 0), Duration::ZERO)
            .await,
        Err(ReplayError::ForeignSession { .. })
    ));
    assert!(matches!(
        store
            .tail_after(&t, &EventId::new(t, StreamId(9), 0), Duration::ZERO)
            .await,
        Err(ReplayError::UnknownEventId { .. })
    ));
    // A writer appends two more and finishes while a follower tails.
    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            for p in ["b", "c"] {
                tokio::time::sleep(Duration::from_millis(30)).await;
                store.append(&t, S1, msg(p)).await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
            store.finish_stream(&t, S1).await.unwrap();
        })
    };
    let (mut cursor, mut seen, mut finished) = (1, Vec::new(), false);
    for _ in 0..1000 {
        let r = store
            .tail_after(&t, &EventId::new(t, S1, cursor), Duration::from_millis(200))
            .await
            .unwrap();
        for e in &r.events {
            assert_eq!(e.id.seq, cursor + 1, "consecutive, each once");
            cursor = e.id.seq;
            seen.push(e.data.clone());
        }
        if r.finished && cursor == r.last_seq {
            finished = true;
            break;
        }
        if r.events.is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    writer.await.unwrap();
    assert!(finished, "the tail saw the stream's end");
    assert_eq!(seen, [msg("b"), msg("c")]);
}

/// Expands to one `#[tokio::test]` per case of the [`EventStore`] suite
/// (and a `#[test]` for [`replay_matches_model`], 64 cases),
/// each calling the case with the maker `$maker` evaluates to (evaluated
/// in each test, inside its runtime, so it may `.await`).
#[macro_export]
macro_rules! event_store_suite {
    ($maker:expr) => {
        #[test]
        fn replay_matches_model() {
            let rt = tokio::runtime::Runtime::new().unwrap();
            let maker = rt.block_on(async { $maker });
            $crate::conformance::event_store::replay_matches_model(&rt, &maker, 64);
        }
        $crate::__store_cases!(event_store, $maker, [tokio::test(flavor = "multi_thread", worker_threads = 2)];
            ids_are_sequential_and_priming_is_zero,
            replay_is_exclusive,
            replay_after_priming_returns_everything_in_order,
            replay_is_per_stream,
            finished_flag,
            unknown_event_id,
            foreign_session,
            eviction_by_event_count,
            eviction_by_bytes,
            message_too_large,
            zero_retention_still_issues_ids,
            remove_session_then_unknown,
            store_errors,
            stream_limit_evicts_longest_finished_stream,
            a_stream_read_to_its_end_is_evicted_first,
            session_byte_limit_evicts_finished_streams_first,
            a_stream_evicted_for_bytes_frees_its_place_under_the_cap,
            session_bytes_stay_exact_through_evictions,
            a_stream_evicted_for_count_releases_its_bytes,
            through_arc_dyn,
            tail_after_follows_appends_and_the_end,
            append_final_stores_the_answer_and_ends_the_stream,
            append_final_ends_the_stream_when_the_message_is_refused,
            append_final_delivered_counts_as_read_to_the_end,
            a_refused_delivered_answer_still_counts_as_read,
            a_read_stream_deep_in_the_finished_list_is_evicted_first,
            open_answered_opens_a_finished_stream,
            append_final_counts_against_the_byte_budget,
            the_byte_budget_evicts_the_oldest_across_sessions,
        );
    };
}
