//! Opening a request stream: a fresh stream number, registered in the event
//! store (which gives its priming id) and in the session.

use std::sync::Arc;

use mcp_transport_core::event_id::EventId;
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
    let id = session.next_stream_id();
    let priming = shared
        .config
        .event_store
        .open_stream(&session.tag, id)
        .await?;
    let state = StreamState::new(id);
    session.add_stream(state.clone());
    Ok((state, priming))
}
