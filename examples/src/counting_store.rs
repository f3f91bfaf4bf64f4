//! A custom [`EventStore`]: one that wraps another store and counts what
//! passes through it — appends, replays and the events replayed — the way
//! an application adds metrics, logging or encryption at rest around the
//! store it runs on (the in-memory one here; a Redis one, or your own, in
//! production).
//!
//! Every method forwards — the ones with a default implementation too
//! (`append_final`, `tail_after`), or the inner store's own version of them
//! is lost; the
//! only rule a wrapper must keep is the *replay contract* of
//! [`mcp_transport_core::event_log`]: return the inner store's answer
//! unchanged.

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::{EventStore, FinalAppend, Replay, ReplayError, StoreError};
use serde_json::{Value, json};

/// Counts the traffic of the [`EventStore`] it wraps.
pub struct CountingStore<S> {
    inner: S,
    appends: AtomicU64,
    replays: AtomicU64,
    replayed_events: AtomicU64,
}

impl<S: EventStore> CountingStore<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        CountingStore {
            inner,
            appends: AtomicU64::new(0),
            replays: AtomicU64::new(0),
            replayed_events: AtomicU64::new(0),
        }
    }

    /// The counts so far, as JSON: `{appends, replays, replayedEvents}`.
    pub fn stats(&self) -> Value {
        json!({
            "appends": self.appends.load(Ordering::Relaxed),
            "replays": self.replays.load(Ordering::Relaxed),
            "replayedEvents": self.replayed_events.load(Ordering::Relaxed),
        })
    }
}

#[async_trait]
impl<S: EventStore> EventStore for CountingStore<S> {
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
        data: Bytes,
    ) -> Result<EventId, StoreError> {
        let id = self.inner.append(session, stream, data).await?;
        self.appends.fetch_add(1, Ordering::Relaxed);
        Ok(id)
    }

    async fn finish_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<(), StoreError> {
        self.inner.finish_stream(session, stream).await
    }

    async fn append_final(
        &self,
        session: &SessionTag,
        stream: StreamId,
        data: Bytes,
    ) -> FinalAppend {
        // Forwarded, not left to the default: the inner store does both
        // steps in one call (one lock, or one round trip to Redis).
        let done = self.inner.append_final(session, stream, data).await;
        if done.appended.is_ok() {
            self.appends.fetch_add(1, Ordering::Relaxed);
        }
        done
    }

    async fn replay_after(
        &self,
        expected_session: &SessionTag,
        last: &EventId,
    ) -> Result<Replay, ReplayError> {
        let replay = self.inner.replay_after(expected_session, last).await?;
        self.replays.fetch_add(1, Ordering::Relaxed);
        self.replayed_events
            .fetch_add(replay.events.len() as u64, Ordering::Relaxed);
        Ok(replay)
    }

    async fn tail_after(
        &self,
        expected_session: &SessionTag,
        last: &EventId,
        wait: std::time::Duration,
    ) -> Result<Replay, ReplayError> {
        // Forward it too: a shared store may wait here for events another
        // instance writes (the trait's default does not wait).
        let replay = self.inner.tail_after(expected_session, last, wait).await?;
        self.replays.fetch_add(1, Ordering::Relaxed);
        self.replayed_events
            .fetch_add(replay.events.len() as u64, Ordering::Relaxed);
        Ok(replay)
    }

    async fn last_seq(&self, session: &SessionTag, stream: StreamId) -> Result<u64, StoreError> {
        self.inner.last_seq(session, stream).await
    }

    async fn remove_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        self.inner.remove_session(session).await
    }
}
