//! The provided methods of `EventStore`, as a store that implements only
//! the required ones gets them (`MemoryEventStore` and the Redis store
//! override `append_final` and `append_final_delivered`, so their tests
//! never run these bodies): the final message stored and the stream ended,
//! in one call.

use bytes::Bytes;
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::{
    EventStore, MemoryEventStore, MemoryEventStoreConfig, Replay, ReplayError, StoreError,
};

/// Only the required methods, passed on to a `MemoryEventStore`.
#[derive(Default)]
struct Minimal(MemoryEventStore);

#[async_trait::async_trait]
impl EventStore for Minimal {
    async fn open_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        self.0.open_session(session).await
    }
    async fn open_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<EventId, StoreError> {
        self.0.open_stream(session, stream).await
    }
    async fn append(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> Result<EventId, StoreError> {
        self.0.append(session, stream, message).await
    }
    async fn finish_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<(), StoreError> {
        self.0.finish_stream(session, stream).await
    }
    async fn replay_after(
        &self,
        session: &SessionTag,
        last: &EventId,
    ) -> Result<Replay, ReplayError> {
        self.0.replay_after(session, last).await
    }
    async fn last_seq(&self, session: &SessionTag, stream: StreamId) -> Result<u64, StoreError> {
        self.0.last_seq(session, stream).await
    }
    async fn remove_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        self.0.remove_session(session).await
    }
}

/// The final message and the stream's end, read back from the priming id.
async fn read_back(store: &Minimal, session: &SessionTag, priming: &EventId) -> (Vec<Bytes>, bool) {
    let r = store.replay_after(session, priming).await.unwrap();
    (r.events.into_iter().map(|e| e.data).collect(), r.finished)
}

#[tokio::test]
async fn the_provided_final_appends_store_the_message_and_end_the_stream() {
    let store = Minimal::default();
    let t = SessionTag::from_u64(1);
    store.open_session(&t).await.unwrap();

    let priming = store.open_stream(&t, StreamId(1)).await.unwrap();
    let done = store
        .append_final(&t, StreamId(1), Bytes::from_static(b"one"))
        .await;
    assert_eq!(done.appended.unwrap().seq, 1);
    assert!(done.finished.is_ok());
    assert_eq!(
        read_back(&store, &t, &priming).await,
        (vec![Bytes::from_static(b"one")], true)
    );

    let priming = store.open_stream(&t, StreamId(2)).await.unwrap();
    let done = store
        .append_final_delivered(&t, StreamId(2), Bytes::from_static(b"two"))
        .await;
    assert!(done.appended.is_ok() && done.finished.is_ok());
    assert_eq!(
        read_back(&store, &t, &priming).await,
        (vec![Bytes::from_static(b"two")], true)
    );

    let (priming, done) = store
        .open_answered(&t, StreamId(3), Bytes::from_static(b"three"))
        .await
        .unwrap();
    assert!(done.appended.is_ok() && done.finished.is_ok());
    assert_eq!(
        read_back(&store, &t, &priming).await,
        (vec![Bytes::from_static(b"three")], true)
    );

    // A refused message still ends the stream, as `finish_stream` after a
    // failed `append` would.
    let small = Minimal(MemoryEventStore::new(MemoryEventStoreConfig {
        max_bytes_per_stream: 4,
        ..Default::default()
    }));
    small.open_session(&t).await.unwrap();
    let priming = small.open_stream(&t, StreamId(1)).await.unwrap();
    let done = small
        .append_final(&t, StreamId(1), Bytes::from_static(b"too long"))
        .await;
    assert!(matches!(
        done.appended,
        Err(StoreError::MessageTooLarge { .. })
    ));
    assert!(done.finished.is_ok());
    assert_eq!(read_back(&small, &t, &priming).await, (vec![], true));
}
