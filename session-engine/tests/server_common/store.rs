//! [`WatchedStore`]: the in-memory event store with what a test needs to
//! watch a connection's reads, and to make them fail.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::{
    EventStore, FinalAppend, MemoryEventStore, MemoryEventStoreConfig, Replay, ReplayError,
    StoreError,
};
use tokio::time::Instant;

/// Reads (`replay_after`, `tail_after`) at one instant beyond this many
/// mean a connection asks the store in a loop without ever waiting.
pub const MAX_READS_AT_ONE_INSTANT: usize = 50;

/// A [`MemoryEventStore`] that remembers the tag of the last session
/// opened, counts `replay_after`, `tail_after`, `finish_stream` and
/// `append_final` calls (forwarding the last, not leaving it to the
/// trait's default), fails
/// `tail_after` when told to (a store out of reach), and panics when it is
/// read more than [`MAX_READS_AT_ONE_INSTANT`] times at one instant of
/// tokio's clock: on the paused clock a connection that loops without
/// pausing never lets time move, so the test would hang instead of failing.
pub struct WatchedStore {
    /// The store behind: the tests write to it as another instance would.
    pub inner: MemoryEventStore,
    tag: Mutex<Option<SessionTag>>,
    fail_tail: AtomicBool,
    fail_opens: AtomicBool,
    clashes: AtomicUsize,
    fail_sessions: AtomicBool,
    replays: AtomicUsize,
    tails: AtomicUsize,
    finishes: AtomicUsize,
    finals: AtomicUsize,
    opens: AtomicUsize,
    answered_opens: AtomicUsize,
    /// The instant of the last read and how many came at it.
    at: Mutex<(Option<Instant>, usize)>,
}

impl Default for WatchedStore {
    fn default() -> Self {
        WatchedStore {
            inner: MemoryEventStore::new(MemoryEventStoreConfig::default()),
            tag: Mutex::new(None),
            fail_tail: AtomicBool::new(false),
            fail_opens: AtomicBool::new(false),
            clashes: AtomicUsize::new(0),
            fail_sessions: AtomicBool::new(false),
            replays: AtomicUsize::new(0),
            tails: AtomicUsize::new(0),
            finishes: AtomicUsize::new(0),
            finals: AtomicUsize::new(0),
            opens: AtomicUsize::new(0),
            answered_opens: AtomicUsize::new(0),
            at: Mutex::new((None, 0)),
        }
    }
}

impl WatchedStore {
    /// The tag of the last session opened.
    pub fn tag(&self) -> SessionTag {
        self.tag.lock().unwrap().expect("a session was opened")
    }

    /// From now on every `tail_after` fails with a backend error.
    pub fn fail_tails(&self) {
        self.fail_tail.store(true, Ordering::SeqCst);
    }

    /// From now on every `open_stream` and `open_answered` fails with a
    /// backend error (the store out of reach when a stream is opened).
    pub fn fail_opens(&self) {
        self.fail_opens.store(true, Ordering::SeqCst);
    }

    /// The next `n` `open_session` calls find their tag taken
    /// (`SessionExists`: a tag collision).
    pub fn clash_tags(&self, n: usize) {
        self.clashes.store(n, Ordering::SeqCst);
    }

    /// From now on every `open_session` fails with a backend error whose
    /// cause is "connection refused".
    pub fn fail_sessions(&self) {
        self.fail_sessions.store(true, Ordering::SeqCst);
    }

    /// `replay_after` calls so far.
    pub fn replays(&self) -> usize {
        self.replays.load(Ordering::SeqCst)
    }

    /// `tail_after` calls so far.
    pub fn tails(&self) -> usize {
        self.tails.load(Ordering::SeqCst)
    }

    /// `finish_stream` calls so far.
    pub fn finishes(&self) -> usize {
        self.finishes.load(Ordering::SeqCst)
    }

    /// `append_final` and `append_final_delivered` calls so far.
    pub fn finals(&self) -> usize {
        self.finals.load(Ordering::SeqCst)
    }

    /// `open_stream` calls so far.
    pub fn opens(&self) -> usize {
        self.opens.load(Ordering::SeqCst)
    }

    /// `open_answered` calls so far.
    pub fn answered_opens(&self) -> usize {
        self.answered_opens.load(Ordering::SeqCst)
    }

    fn read(&self) {
        let now = Instant::now();
        let mut at = self.at.lock().unwrap();
        *at = if at.0 == Some(now) {
            (Some(now), at.1 + 1)
        } else {
            (Some(now), 1)
        };
        assert!(
            at.1 <= MAX_READS_AT_ONE_INSTANT,
            "the store was read {} times at one instant: a connection loops without waiting",
            at.1
        );
    }
}

#[async_trait::async_trait]
impl EventStore for WatchedStore {
    async fn open_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        if self.fail_sessions.load(Ordering::SeqCst) {
            return Err(StoreError::Backend("connection refused".into()));
        }
        let clash = self
            .clashes
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if clash.is_ok() {
            return Err(StoreError::SessionExists { session: *session });
        }
        *self.tag.lock().unwrap() = Some(*session);
        self.inner.open_session(session).await
    }

    async fn open_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<EventId, StoreError> {
        self.opens.fetch_add(1, Ordering::SeqCst);
        if self.fail_opens.load(Ordering::SeqCst) {
            return Err(StoreError::Backend(
                "the event store is out of reach".into(),
            ));
        }
        self.inner.open_stream(session, stream).await
    }

    async fn open_answered(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> Result<(EventId, FinalAppend), StoreError> {
        self.answered_opens.fetch_add(1, Ordering::SeqCst);
        if self.fail_opens.load(Ordering::SeqCst) {
            return Err(StoreError::Backend(
                "the event store is out of reach".into(),
            ));
        }
        self.inner.open_answered(session, stream, message).await
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
        self.finishes.fetch_add(1, Ordering::SeqCst);
        self.inner.finish_stream(session, stream).await
    }

    async fn append_final(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> FinalAppend {
        self.finals.fetch_add(1, Ordering::SeqCst);
        self.inner.append_final(session, stream, message).await
    }

    async fn append_final_delivered(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> FinalAppend {
        self.finals.fetch_add(1, Ordering::SeqCst);
        self.inner
            .append_final_delivered(session, stream, message)
            .await
    }

    async fn replay_after(
        &self,
        expected_session: &SessionTag,
        last: &EventId,
    ) -> Result<Replay, ReplayError> {
        self.replays.fetch_add(1, Ordering::SeqCst);
        self.read();
        self.inner.replay_after(expected_session, last).await
    }

    async fn tail_after(
        &self,
        expected_session: &SessionTag,
        last: &EventId,
        wait: Duration,
    ) -> Result<Replay, ReplayError> {
        self.tails.fetch_add(1, Ordering::SeqCst);
        self.read();
        if self.fail_tail.load(Ordering::SeqCst) {
            return Err(ReplayError::Backend(
                "the event store is out of reach".into(),
            ));
        }
        self.inner.tail_after(expected_session, last, wait).await
    }

    async fn last_seq(&self, session: &SessionTag, stream: StreamId) -> Result<u64, StoreError> {
        self.inner.last_seq(session, stream).await
    }

    async fn remove_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        self.inner.remove_session(session).await
    }
}
