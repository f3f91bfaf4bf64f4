//! Opening a request stream: a fresh stream number, registered in the event
//! store (which gives its priming id) and in the session.

use std::sync::Arc;

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
