//! Unit tests of [`StreamState`]: what each change publishes, to whom,
//! and when (session 35 wrote most of them from cargo-mutants' survivors:
//! docs/TESTING.md).

use super::*;
use mcp_transport_core::event_log::MemoryEventStore;
use std::time::Duration;

/// A store with one session and stream 1 open.
async fn one_stream() -> (Arc<MemoryEventStore>, SessionTag) {
    let store = Arc::new(MemoryEventStore::default());
    let tag = SessionTag::from_u64(7);
    store.open_session(&tag).await.unwrap();
    store.open_stream(&tag, StreamId(1)).await.unwrap();
    (store, tag)
}

/// Appends `n` small events to `s`.
async fn append_n(s: &StreamState, store: &MemoryEventStore, tag: &SessionTag, n: usize) {
    for _ in 0..n {
        s.append(store, tag, Bytes::from_static(b"{}"))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn backpressure_only_while_attached() {
    let (store, tag) = one_stream().await;
    let s = StreamState::new(StreamId(1));
    // Not attached: never waits.
    append_n(&s, &store, &tag, 5).await;
    s.wait_for_room(2, None).await;
    // Attached with nothing delivered: 5 undelivered >= 2, so it waits.
    let g = s.attach(0);
    let waited = tokio::time::timeout(Duration::from_millis(50), s.wait_for_room(2, None)).await;
    assert!(waited.is_err(), "must wait while the queue is full");
    // Delivery frees room.
    let s2 = s.clone();
    let waiter = tokio::spawn(async move { s2.wait_for_room(2, None).await });
    s.delivered(g, 4);
    tokio::time::timeout(Duration::from_secs(1), waiter)
        .await
        .unwrap()
        .unwrap();
    // Detaching frees it too.
    append_n(&s, &store, &tag, 5).await;
    let s3 = s.clone();
    let waiter = tokio::spawn(async move { s3.wait_for_room(2, None).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!waiter.is_finished());
    s.detach(g);
    tokio::time::timeout(Duration::from_secs(1), waiter)
        .await
        .unwrap()
        .unwrap();
}

/// The final message is kept only with a connection attached, handed
/// out once and only as the event right after the cursor, and dropped
/// once the cursor has passed it.
#[tokio::test]
async fn a_final_message_is_kept_for_the_attached_connection() {
    let store = MemoryEventStore::default();
    let tag = SessionTag::from_u64(7);
    store.open_session(&tag).await.unwrap();
    let final_json = Bytes::from_static(b"{\"result\":1}");
    // No connection attached: nothing kept.
    store.open_stream(&tag, StreamId(1)).await.unwrap();
    let alone = StreamState::new(StreamId(1));
    alone
        .append_final(&store, &tag, final_json.clone())
        .await
        .unwrap();
    assert!(alone.take_final_after(0).is_none());
    // Attached: kept as the event after 1 (a notification went first).
    store.open_stream(&tag, StreamId(2)).await.unwrap();
    let s = StreamState::new(StreamId(2));
    s.attach(0);
    s.append(&store, &tag, Bytes::from_static(b"{}"))
        .await
        .unwrap();
    s.append_final(&store, &tag, final_json.clone())
        .await
        .unwrap();
    assert!(s.live().finished);
    assert!(s.take_final_after(0).is_none(), "not the event after 0");
    let replay = s.take_final_after(1).expect("kept");
    assert_eq!(replay.stream, StreamId(2));
    assert_eq!(replay.last_seq, 2);
    assert!(replay.finished);
    assert_eq!(replay.events.len(), 1);
    assert_eq!(replay.events[0].id, EventId::new(tag, StreamId(2), 2));
    assert_eq!(replay.events[0].data, final_json);
    assert!(s.take_final_after(1).is_none(), "taken once");
    // Passed by the cursor (read from the store instead): dropped.
    store.open_stream(&tag, StreamId(3)).await.unwrap();
    let passed = StreamState::new(StreamId(3));
    passed.attach(0);
    passed
        .append_final(&store, &tag, final_json.clone())
        .await
        .unwrap();
    assert!(passed.take_final_after(1).is_none());
    assert!(passed.take_final_after(0).is_none(), "dropped");
}

#[test]
fn attach_takeover_and_detach() {
    let s = StreamState::new(StreamId(1));
    assert!(!s.is_attached());
    let g1 = s.attach(0);
    assert!(s.is_attached());
    let g2 = s.attach(0);
    assert!(g2 > g1);
    assert_eq!(s.live().generation, g2);
    s.detach(g1); // stale: no effect
    assert!(s.is_attached());
    s.detach(g2);
    assert!(!s.is_attached());
    let g3 = s.attach(5);
    assert_eq!(s.live().generation, g3);
    assert_eq!(s.lock().both.delivery.delivered, 5);
}

/// Issue 13 (6): a connection that takes nothing for the write timeout
/// no longer holds the producer; it is detached and asked to close.
#[tokio::test(start_paused = true)]
async fn a_stalled_reader_is_detached_after_the_write_timeout() {
    let (store, tag) = one_stream().await;
    let s = StreamState::new(StreamId(1));
    let g = s.attach(0);
    append_n(&s, &store, &tag, 3).await;
    let closes = s.live().close_requests;
    // The reader delivered one event, then nothing.
    s.delivered(g, 1);
    let waited = tokio::time::timeout(
        Duration::from_secs(3600),
        s.wait_for_room(2, Some(Duration::from_secs(30))),
    )
    .await;
    assert!(waited.is_ok(), "a stalled reader held the producer");
    assert!(!s.is_attached(), "the stalled reader is detached");
    assert_eq!(s.live().close_requests, closes + 1, "and asked to close");
    // A reader that keeps delivering is never detached.
    let g = s.attach(3);
    append_n(&s, &store, &tag, 3).await;
    let s2 = s.clone();
    let reader = tokio::spawn(async move {
        for seq in 4..=6 {
            tokio::time::sleep(Duration::from_secs(20)).await;
            s2.delivered(g, seq);
        }
    });
    s.wait_for_room(2, Some(Duration::from_secs(30))).await;
    assert!(s.is_attached());
    reader.await.unwrap();
}

/// The stand-ins a connection starts from when the stream has no live
/// state here: each says what the log said of it.
#[test]
fn each_stand_in_starts_where_the_log_is() {
    let ended = StreamState::ended(StreamId(3), 5);
    assert_eq!(
        ended.live(),
        Live {
            last_seq: 5,
            finished: true,
            ..Live::default()
        }
    );
    assert!(!ended.remote);
    let remote = StreamState::remote(StreamId(3), 4);
    assert_eq!(
        remote.live(),
        Live {
            last_seq: 4,
            ..Live::default()
        }
    );
    assert!(remote.remote);
}

/// A stream opened with its answer in it: ended at the answer, which is
/// kept for the connection; or, when the store refused the answer, ended
/// with nothing in the log and the answer kept to go out without an id.
#[test]
fn an_answered_stream_is_ended_with_its_answer_kept() {
    let tag = SessionTag::from_u64(7);
    let message = Bytes::from_static(b"{\"result\":{}}");
    let stored = EventId::new(tag, StreamId(2), 1);
    let s = StreamState::answered(
        StreamId(2),
        FinalAppend {
            appended: Ok(stored),
            finished: Ok(()),
        },
        message.clone(),
    );
    assert_eq!(
        s.live(),
        Live {
            last_seq: 1,
            finished: true,
            ..Live::default()
        }
    );
    let replay = s.take_final_after(0).expect("the answer is kept");
    assert_eq!(
        replay.events,
        vec![StoredEvent {
            id: stored,
            data: message.clone()
        }]
    );
    assert!(s.take_unstored().is_none());

    let refused = || StoreError::UnknownSession { session: tag };
    let s = StreamState::answered(
        StreamId(2),
        FinalAppend {
            appended: Err(refused()),
            finished: Err(refused()),
        },
        message.clone(),
    );
    assert_eq!(
        s.live(),
        Live {
            finished: true,
            ..Live::default()
        }
    );
    assert!(s.take_final_after(0).is_none());
    assert_eq!(
        s.take_unstored(),
        Some(message),
        "kept to go out without an id"
    );
    assert!(s.take_unstored().is_none(), "taken once");
}

/// What the log says of a remote stream moves it on, never back, and
/// wakes a waiting connection only when it says something new.
#[tokio::test(start_paused = true)]
async fn what_the_log_says_of_a_remote_stream_wakes_its_connection() {
    let s = StreamState::remote(StreamId(1), 2);
    let mut rx = s.subscribe();
    let waiter = tokio::spawn(async move { rx.changed().await });
    tokio::task::yield_now().await;
    let version = s.lock().version;
    s.observed(2, false);
    s.observed(1, false);
    assert_eq!(
        s.lock().version,
        version,
        "nothing new: no change published"
    );
    assert_eq!(s.live().last_seq, 2, "never back");
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished(), "nothing changed: still waiting");
    s.observed(3, false);
    tokio::time::timeout(Duration::from_secs(1), waiter)
        .await
        .expect("a new event wakes the connection")
        .unwrap()
        .unwrap();
    assert_eq!(s.live().last_seq, 3);
    assert!(!s.live().finished);
    s.observed(3, true);
    assert!(s.live().finished, "the end is recorded");
    s.observed(3, false);
    assert!(s.live().finished, "and stays");
}

/// Only the attached connection's progress counts, and it never goes
/// back; it wakes no one (no new version) unless a producer waits for
/// room.
#[tokio::test(start_paused = true)]
async fn only_the_attached_connections_progress_counts() {
    let (store, tag) = one_stream().await;
    let s = StreamState::new(StreamId(1));
    append_n(&s, &store, &tag, 4).await;
    let old = s.attach(0);
    let g = s.attach(0);
    let version = s.lock().version;
    s.delivered(old, 3);
    assert_eq!(
        s.lock().both.delivery.delivered,
        0,
        "a taken-over connection"
    );
    s.delivered(g, 2);
    s.delivered(g, 1);
    assert_eq!(s.lock().both.delivery.delivered, 2, "never back");
    assert_eq!(s.lock().version, version, "no producer waits: nobody woken");
    // A producer waits for room (4 appended, 2 delivered, limit 1):
    // progress now notifies, but a repeat of the same progress does not.
    let s2 = s.clone();
    let producer = tokio::spawn(async move { s2.wait_for_room(1, None).await });
    tokio::task::yield_now().await;
    assert_eq!(s.lock().both.waiting_for_room, 1);
    let version = s.lock().version;
    s.delivered(g, 2);
    assert_eq!(s.lock().version, version, "the same progress again");
    s.delivered(g, 3);
    assert_eq!(
        s.lock().version,
        version + 1,
        "new progress wakes the producer"
    );
    s.delivered(g, 4);
    producer.await.unwrap();
    assert_eq!(s.lock().both.waiting_for_room, 0, "uncounted when it ends");
}

/// A producer's wait for room, cancelled, is uncounted too: later
/// progress wakes nobody.
#[tokio::test(start_paused = true)]
async fn a_cancelled_wait_for_room_is_uncounted() {
    let (store, tag) = one_stream().await;
    let s = StreamState::new(StreamId(1));
    let g = s.attach(0);
    append_n(&s, &store, &tag, 3).await;
    for waiting in [1, 2] {
        let s2 = s.clone();
        let producers: Vec<_> = (0..waiting)
            .map(|_| {
                let s2 = s2.clone();
                tokio::spawn(async move { s2.wait_for_room(1, None).await })
            })
            .collect();
        tokio::task::yield_now().await;
        assert_eq!(s.lock().both.waiting_for_room, waiting);
        for p in producers {
            p.abort();
            assert!(p.await.unwrap_err().is_cancelled());
        }
        assert_eq!(s.lock().both.waiting_for_room, 0);
    }
    let version = s.lock().version;
    s.delivered(g, 1);
    assert_eq!(s.lock().version, version, "nobody waits: nobody woken");
}

/// Whether a stream may be reaped: everything appended is delivered, or
/// no connection is attached to deliver it.
#[tokio::test]
async fn fully_delivered_means_caught_up_or_unattached() {
    let (store, tag) = one_stream().await;
    let s = StreamState::new(StreamId(1));
    assert!(s.fully_delivered(), "nothing appended, none attached");
    append_n(&s, &store, &tag, 2).await;
    assert!(s.fully_delivered(), "none attached to deliver it");
    let g = s.attach(0);
    assert!(!s.fully_delivered(), "two undelivered");
    s.delivered(g, 1);
    assert!(!s.fully_delivered(), "one undelivered");
    s.delivered(g, 2);
    assert!(s.fully_delivered(), "caught up");
    append_n(&s, &store, &tag, 1).await;
    assert!(!s.fully_delivered());
    s.detach(g);
    assert!(s.fully_delivered(), "detached");
}

/// A stall is `stall` without progress, counted from the connection's
/// last delivery, not from when the producer began to wait; what other
/// producers append does not restart it.
#[tokio::test(start_paused = true)]
async fn a_stall_counts_from_the_last_delivery() {
    let (store, tag) = one_stream().await;
    let s = StreamState::new(StreamId(1));
    let g = s.attach(0);
    append_n(&s, &store, &tag, 3).await;
    let start = tokio::time::Instant::now();
    let s2 = s.clone();
    let producer =
        tokio::spawn(async move { s2.wait_for_room(2, Some(Duration::from_secs(30))).await });
    // The reader delivers one event at 10 s (the queue stays full: two
    // undelivered against a limit of 2), then nothing; another producer
    // appends every 5 s.
    let s3 = s.clone();
    let reader = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(10)).await;
        s3.delivered(g, 1);
    });
    let s4 = s.clone();
    let (store4, tag4) = (store.clone(), tag);
    let other = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(5)).await;
            append_n(&s4, &store4, &tag4, 1).await;
        }
    });
    tokio::time::timeout(Duration::from_secs(3600), producer)
        .await
        .expect("the stalled reader was never detached")
        .unwrap();
    reader.await.unwrap();
    other.abort();
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(40),
        "30 s after the delivery at 10 s"
    );
    assert!(!s.is_attached(), "the stalled reader is detached");
}

/// A stall is a connection that is still attached and has delivered
/// nothing since the producer looked: one that moved on, or was taken
/// over, is not detached.
#[test]
fn only_a_connection_that_made_no_progress_is_stalled() {
    let s = StreamState::new(StreamId(1));
    let g = s.attach(0);
    s.delivered(g, 1);
    s.stalled(g, 0);
    assert!(s.is_attached(), "it delivered since");
    let newer = s.attach(1);
    s.stalled(g, 1);
    assert_eq!(s.lock().both.delivery.attached, Some(newer), "taken over");
    assert_eq!(s.live().close_requests, 0);
    s.stalled(newer, 1);
    assert!(!s.is_attached());
    assert_eq!(s.live().close_requests, 1, "asked to close");
}

/// This instance's lease on a stream: its requests are readable until the
/// stream ends; ending releases it, unless it was taken out first or the
/// end did not reach the log (then it lapses).
#[tokio::test]
async fn a_streams_lease_is_released_when_it_ends() {
    use mcp_transport_core::jsonrpc::RequestId;
    use mcp_transport_core::lease::{LeaseStore, Leases, MemoryLeaseStore};
    let memory = Arc::new(MemoryLeaseStore::default());
    let leases = Leases::new(memory.clone());
    let hold = async |key: &str| {
        assert!(
            memory
                .acquire(key, &leases.holder, "", leases.ttl)
                .await
                .unwrap()
        );
        let renewer = tokio::spawn(std::future::pending::<()>());
        HeldLease::new(
            leases.clone(),
            key.to_owned(),
            vec![RequestId::Number(1)],
            renewer.abort_handle(),
        )
    };
    let (store, tag) = one_stream().await;
    let s = StreamState::new(StreamId(1));
    assert_eq!(s.lease_ids(), None);
    s.set_lease(hold("a").await);
    assert_eq!(s.lease_ids(), Some(vec![RequestId::Number(1)]));
    s.finish(&*store, &tag).await;
    assert_eq!(memory.get("a").await.unwrap(), None, "released");
    assert_eq!(s.lease_ids(), None);

    store.open_stream(&tag, StreamId(2)).await.unwrap();
    let s = StreamState::new(StreamId(2));
    s.set_lease(hold("b").await);
    let taken = s.take_lease().expect("held");
    assert_eq!(s.lease_ids(), None);
    s.finish(&*store, &tag).await;
    assert!(
        memory.get("b").await.unwrap().is_some(),
        "taken out: not released"
    );
    drop(taken);

    // The end not in the log (a stream the store does not know): left to lapse.
    let s = StreamState::new(StreamId(9));
    s.set_lease(hold("c").await);
    s.finish(&*store, &tag).await;
    assert!(memory.get("c").await.unwrap().is_some(), "left to lapse");
    assert_eq!(s.lease_ids(), None);
}
