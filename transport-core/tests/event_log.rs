//! What is particular to `MemoryEventStore`: its own byte accounting, shared
//! payload buffers and `block_on` use. The `EventStore` contract itself is the shared suite in
//! `mcp-test-support` (`conformance::event_store`), run against this store by
//! `transport-core/tests/memory_stores.rs` and against Redis by `store-redis`.

use bytes::Bytes;
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::{
    EventStore, MemoryEventStore, MemoryEventStoreConfig, Replay, ReplayError,
};

const S1: StreamId = StreamId(1);
const S2: StreamId = StreamId(2);

fn sess(n: u64) -> SessionTag {
    SessionTag::from_u64(n)
}

fn msg(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn seqs(r: &Replay) -> Vec<u64> {
    r.events.iter().map(|e| e.id.seq).collect()
}

fn small(max_events: usize, max_bytes: usize) -> MemoryEventStore {
    MemoryEventStore::new(MemoryEventStoreConfig {
        max_events_per_stream: max_events,
        max_bytes_per_stream: max_bytes,
        ..Default::default()
    })
}

/// A store with one session and streams 1 and 2 open.
async fn store_with_streams(store: MemoryEventStore) -> (MemoryEventStore, SessionTag) {
    let t = sess(1);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    store.open_stream(&t, S2).await.unwrap();
    (store, t)
}

/// What removing a session does to what it refers to is the shared
/// suite's `remove_session_then_unknown`; here, the store's own count.
#[tokio::test]
async fn a_removed_session_is_no_longer_counted() {
    let (store, t) = store_with_streams(MemoryEventStore::default()).await;
    store.append(&t, S1, msg("m1")).await.unwrap();
    assert_eq!(store.session_count(), 1);
    store.remove_session(&t).await.unwrap();
    assert_eq!(store.session_count(), 0);
    store.remove_session(&t).await.unwrap(); // idempotent
    assert_eq!(store.session_count(), 0);
    store.open_session(&t).await.unwrap();
    assert_eq!(store.session_count(), 1);
}

#[tokio::test]
async fn replay_shares_payloads() {
    let (store, t) = store_with_streams(MemoryEventStore::default()).await;
    let payload = Bytes::from(vec![b'x'; 4096]);
    store.append(&t, S1, payload.clone()).await.unwrap();
    let r = store
        .replay_after(&t, &EventId::priming(t, S1))
        .await
        .unwrap();
    // Same allocation, not a copy.
    assert_eq!(r.events[0].data.as_ptr(), payload.as_ptr());
}

#[test]
fn error_messages() {
    let id = EventId::new(SessionTag::parse("abc").unwrap(), S1, 4);
    assert_eq!(
        ReplayError::UnknownEventId { id }.to_string(),
        "Last-Event-ID abc.1.4 does not name an event of this session"
    );
    assert_eq!(
        ReplayError::ForeignSession { id }.to_string(),
        "Last-Event-ID abc.1.4 was issued in a different session"
    );
    assert_eq!(
        ReplayError::Expired { id }.to_string(),
        "the events after Last-Event-ID abc.1.4 are no longer retained"
    );
}

#[test]
fn usable_with_block_on() {
    let store = MemoryEventStore::default();
    futures::executor::block_on(async {
        let t = SessionTag::SESSIONLESS;
        store.open_session(&t).await.unwrap();
        store.open_stream(&t, S1).await.unwrap();
        store.append(&t, S1, msg("a")).await.unwrap();
        let r = store
            .replay_after(&t, &EventId::priming(t, S1))
            .await
            .unwrap();
        assert_eq!(r.events.len(), 1);
    });
}

/// Issue 13 (2): the server-wide byte budget evicts the oldest events of
/// the whole store first, across sessions, with the usual `Expired`.
#[tokio::test]
async fn the_byte_budget_evicts_the_oldest_across_sessions() {
    let store = MemoryEventStore::new(MemoryEventStoreConfig {
        max_bytes_total: 1000,
        ..Default::default()
    });
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
    assert_eq!(store.retained_bytes(), 600);
    for _ in 0..6 {
        store.append(&b, S1, hundred()).await.unwrap();
        assert!(store.retained_bytes() <= 1000);
    }
    assert_eq!(store.retained_bytes(), 1000);
    assert_eq!(store.retained_events(), 10);
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
#[tokio::test]
async fn removing_a_session_releases_its_bytes() {
    let store = MemoryEventStore::default();
    let (a, b) = (sess(1), sess(2));
    for t in [a, b] {
        store.open_session(&t).await.unwrap();
        store.open_stream(&t, S1).await.unwrap();
        for _ in 0..10 {
            store
                .append(&t, S1, Bytes::from(vec![b'y'; 1000]))
                .await
                .unwrap();
        }
    }
    assert_eq!(store.retained_bytes(), 20_000);
    store.remove_session(&a).await.unwrap();
    assert_eq!(store.retained_bytes(), 10_000);
    assert_eq!(store.retained_events(), 10);
    store.remove_session(&b).await.unwrap();
    assert_eq!(store.retained_bytes(), 0);
    assert_eq!(store.retained_events(), 0);
}

/// The budget's queue is compacted: appends evicted by the per-stream
/// bounds do not pile up in it.
#[tokio::test]
async fn per_stream_evictions_keep_the_accounting_exact() {
    let store = small(4, 1 << 20);
    let t = sess(3);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    for _ in 0..5000 {
        store
            .append(&t, S1, Bytes::from_static(b"12345"))
            .await
            .unwrap();
    }
    assert_eq!(store.retained_events(), 4);
    assert_eq!(store.retained_bytes(), 20);
}

/// The default server-wide budget is the documented 512 MiB, exactly:
/// 128 events of 4 MiB (the default per-stream maximum, 4 streams per
/// session filling the default 16 MiB per session) are all retained, and
/// one byte more evicts the oldest. The payload is one shared buffer, so
/// the test holds 4 MiB, not 512.
#[tokio::test]
async fn the_default_budget_is_512_mib() {
    let config = MemoryEventStoreConfig::default();
    assert_eq!(config.max_bytes_per_stream, 4 << 20);
    assert_eq!(config.max_bytes_per_session, 16 << 20);
    let store = MemoryEventStore::default();
    let big = Bytes::from(vec![b'x'; 4 << 20]);
    let mut first = None;
    for n in 1..=32 {
        let t = sess(n);
        store.open_session(&t).await.unwrap();
        for s in 1..=4 {
            let primed = store.open_stream(&t, StreamId(s)).await.unwrap();
            first.get_or_insert(primed);
            store.append(&t, StreamId(s), big.clone()).await.unwrap();
        }
    }
    assert_eq!(store.retained_bytes(), 512 << 20);
    assert_eq!(store.retained_events(), 128);
    let first = first.unwrap();
    assert_eq!(
        seqs(&store.replay_after(&first.session, &first).await.unwrap()),
        [1]
    );

    let t = sess(33);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    store.append(&t, S1, msg("x")).await.unwrap();
    assert_eq!(store.retained_bytes(), (508 << 20) + 1);
    assert_eq!(store.retained_events(), 128);
    assert!(matches!(
        store.replay_after(&first.session, &first).await,
        Err(ReplayError::Expired { .. })
    ));
}

/// `config()` reports the limits the store was made with.
#[test]
fn config_reports_the_limits_given() {
    let config = MemoryEventStoreConfig {
        max_events_per_stream: 3,
        max_bytes_per_stream: 5,
        max_streams_per_session: 7,
        max_bytes_per_session: 11,
        max_sessions: 13,
        max_bytes_total: 17,
    };
    assert_eq!(MemoryEventStore::new(config.clone()).config(), &config);
    assert_eq!(
        MemoryEventStore::default().config(),
        &MemoryEventStoreConfig::default()
    );
}

/// `max_events_per_stream: 0` retains nothing, and ids are still issued
/// (the field's docs): a resume from the last id finds the stream caught
/// up, one from before it has expired.
#[tokio::test]
async fn zero_events_per_stream_retains_nothing_but_issues_ids() {
    let (store, t) = store_with_streams(small(0, 1024)).await;
    let primed = EventId::priming(t, S1);
    let mut last = primed;
    for seq in 1..=3 {
        last = store.append(&t, S1, msg("m")).await.unwrap();
        assert_eq!(last.seq, seq);
    }
    assert_eq!((store.retained_events(), store.retained_bytes()), (0, 0));
    let caught_up = store.replay_after(&t, &last).await.unwrap();
    assert!(caught_up.events.is_empty());
    assert_eq!(caught_up.last_seq, 3);
    assert!(matches!(
        store.replay_after(&t, &primed).await,
        Err(ReplayError::Expired { .. })
    ));
}

/// Over the server-wide budget the oldest retained event goes, and only
/// as many as it takes: the next event of the same stream stays, and a
/// resume from the evicted one's id gets everything after it.
#[tokio::test]
async fn the_byte_budget_evicts_exactly_what_it_must() {
    let store = MemoryEventStore::new(MemoryEventStoreConfig {
        max_bytes_total: 30,
        ..Default::default()
    });
    let t = sess(1);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    for _ in 0..4 {
        store.append(&t, S1, msg("0123456789")).await.unwrap();
    }
    assert_eq!((store.retained_bytes(), store.retained_events()), (30, 3));
    let rest = store
        .replay_after(&t, &EventId::new(t, S1, 1))
        .await
        .unwrap();
    assert_eq!(seqs(&rest), [2, 3, 4]);
    assert!(matches!(
        store.replay_after(&t, &EventId::priming(t, S1)).await,
        Err(ReplayError::Expired { .. })
    ));
}

/// The budget's queue, compacted after many per-stream evictions, keeps
/// the entries of every event still retained, in order: the next time the
/// store goes over budget it still evicts the store's oldest event (here
/// on another stream than the busy one), not the busy stream's.
#[tokio::test]
async fn the_byte_budget_still_evicts_the_oldest_after_compaction() {
    let store = MemoryEventStore::new(MemoryEventStoreConfig {
        max_events_per_stream: 4,
        max_bytes_total: 70,
        ..Default::default()
    });
    let t = sess(1);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    store.open_stream(&t, S2).await.unwrap();
    for _ in 0..3 {
        store.append(&t, S1, msg("0123456789")).await.unwrap();
    }
    // Stream 2 keeps its last 4: 1,496 stale entries in the queue, which
    // compacts once it holds more than 2 × 7 + 1024.
    for _ in 0..1500 {
        store.append(&t, S2, msg("abcdefghij")).await.unwrap();
    }
    assert_eq!((store.retained_bytes(), store.retained_events()), (70, 7));
    // Over budget: stream 1's first event is the oldest retained.
    store.append(&t, S1, msg("0123456789")).await.unwrap();
    assert_eq!(store.retained_bytes(), 70);
    let s1 = store
        .replay_after(&t, &EventId::new(t, S1, 1))
        .await
        .unwrap();
    assert_eq!(seqs(&s1), [2, 3, 4]);
    let s2 = store
        .replay_after(&t, &EventId::new(t, S2, 1496))
        .await
        .unwrap();
    assert_eq!(seqs(&s2), [1497, 1498, 1499, 1500]);
}

/// A finished stream evicted to make room for a new one (the per-session
/// stream bound) gives back its events and bytes to the store's counts.
#[tokio::test]
async fn a_stream_evicted_for_the_stream_bound_releases_its_events() {
    let store = MemoryEventStore::new(MemoryEventStoreConfig {
        max_streams_per_session: 2,
        ..Default::default()
    });
    let t = sess(1);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    for _ in 0..3 {
        store.append(&t, S1, msg("abc")).await.unwrap();
    }
    store.finish_stream(&t, S1).await.unwrap();
    store.open_stream(&t, S2).await.unwrap();
    for _ in 0..2 {
        store.append(&t, S2, msg("de")).await.unwrap();
    }
    assert_eq!((store.retained_bytes(), store.retained_events()), (13, 5));
    store.open_stream(&t, StreamId(3)).await.unwrap();
    assert_eq!((store.retained_bytes(), store.retained_events()), (4, 2));
}

/// A finished stream dropped for the per-session byte bound gives back its
/// events, not only its bytes, to the store's counts.
#[tokio::test]
async fn a_stream_dropped_for_the_session_bound_releases_its_events() {
    let store = MemoryEventStore::new(MemoryEventStoreConfig {
        max_bytes_per_session: 10,
        ..Default::default()
    });
    let t = sess(1);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, S1).await.unwrap();
    for _ in 0..2 {
        store.append(&t, S1, msg("abcd")).await.unwrap();
    }
    store.finish_stream(&t, S1).await.unwrap();
    store.open_stream(&t, S2).await.unwrap();
    for _ in 0..2 {
        store.append(&t, S2, msg("a")).await.unwrap();
    }
    assert_eq!((store.retained_bytes(), store.retained_events()), (10, 4));
    // One byte over: the finished stream goes, with its two events.
    store.append(&t, S2, msg("a")).await.unwrap();
    assert_eq!((store.retained_bytes(), store.retained_events()), (3, 3));
}
