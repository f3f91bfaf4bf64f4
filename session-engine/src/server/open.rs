//! Opening a request stream: a fresh stream number, registered in the event
//! store (which gives its priming id) and in the session.

use std::sync::Arc;

use bytes::Bytes;
use mcp_transport_core::event_id::{EventId, StreamId};
use mcp_transport_core::event_log::StoreError;

use super::Shared;
use super::session::Session;
use super::stream::StreamState;

/// Opens a new request stream: a fresh stream number, registered in the
/// event store and in the session. Returns its state and priming id.
pub(crate) async fn open_request_stream(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
) -> Result<(Arc<StreamState>, EventId), StoreError> {
    let first = session.next_stream_id();
    let (id, priming) = open_fresh(shared, session, first).await?;
    let state = StreamState::new(id);
    session.add_stream(state.clone());
    Ok((state, priming))
}

/// How many numbers [`open_fresh`] tries.
const OPEN_ATTEMPTS: usize = 8;

/// Opens stream `first` in the event store, or — when another instance
/// sharing the session already took that number (`cluster`) — the next
/// free number of the session's counter. Returns the number and its
/// priming id.
pub(crate) async fn open_fresh(
    shared: &Shared,
    session: &Session,
    first: StreamId,
) -> Result<(StreamId, EventId), StoreError> {
    let store = shared.config.event_store.as_ref();
    let mut id = first;
    for _ in 1..OPEN_ATTEMPTS {
        match store.open_stream(&session.tag, id).await {
            Ok(p) => return Ok((id, p)),
            Err(StoreError::StreamExists { .. }) => id = session.next_stream_id(),
            Err(e) => return Err(e),
        }
    }
    store.open_stream(&session.tag, id).await.map(|p| (id, p))
}

/// Opens a new request stream for a request that has answered already
/// (`message`, its response, and nothing before it): the stream opened,
/// the answer appended and the end recorded in one store call
/// ([`EventStore::open_answered`]: one round trip with Redis, and no lease,
/// since nothing more will be written). The stream is not registered in
/// the session: it has ended, and a resume finds it in the event store.
/// Returns its state ([`StreamState::answered`]) and priming id.
///
/// [`EventStore::open_answered`]: mcp_transport_core::event_log::EventStore::open_answered
pub(crate) async fn open_answered_stream(
    shared: &Shared,
    session: &Session,
    message: Bytes,
) -> Result<(Arc<StreamState>, EventId), StoreError> {
    let store = shared.config.event_store.as_ref();
    let mut id = session.next_stream_id();
    let mut attempt = 1;
    loop {
        match store.open_answered(&session.tag, id, message.clone()).await {
            Ok((priming, done)) => return Ok((StreamState::answered(id, done, message), priming)),
            // Taken by another instance sharing the session (as `open_fresh`).
            Err(StoreError::StreamExists { .. }) if attempt < OPEN_ATTEMPTS => {
                id = session.next_stream_id();
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}
