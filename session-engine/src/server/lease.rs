//! Leases on request streams (`ServerConfig::leases`): liveness across
//! instances sharing sessions.
//!
//! * **The writer.** When a request's SSE stream is opened, the instance
//!   running the request takes the stream's lease (key
//!   `Leases::stream_key(tag, stream)`, data: the JSON array of the
//!   request ids on it) and renews it every `renew_every` until the
//!   stream finishes, when it releases it (a stream opened with its
//!   answer already in it, `EventStore::open_answered`, is born finished
//!   and needs none). If it finds the lease taken over
//!   (it was too slow to renew; another instance ended the stream on its
//!   behalf) it cancels the requests: nothing more of theirs can go out.
//! * **A follower.** An instance following a stream another instance
//!   writes (a resumed `GET`: `EventStore::tail_after`) checks the lease
//!   every `renew_every` while nothing arrives. When it has lapsed — the
//!   writer died — it takes it over (of several followers exactly one
//!   wins), appends one `-32603` error response for each request on the
//!   stream that has no response in the log yet, finishes the stream and
//!   releases the lease. Every follower then sees the error and the end in
//!   the log, so each waiting client gets the error once and its stream
//!   ends (JSON-RPC 2.0, "Error object": `-32603` Internal error; the
//!   request's outcome is unknown, so it is not reported as a result).
//!
//! A standalone `GET` stream is leased too, with no request ids: a
//! follower that finds its writer dead just finishes it (the client opens
//! a new `GET`). In `json_response` mode the stream opened when the
//! handler first streams is leased the same way, and so is a 2025-03-26
//! batch's stream, with the ids of every handler request of the batch
//! (`batch.rs`, `group.rs`). A stream without a lease (an instance without
//! `leases`) is followed as before: until it ends.

use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use mcp_transport_core::event_id::{EventId, StreamId};
use mcp_transport_core::jsonrpc::{ErrorObject, INTERNAL_ERROR, Message, RequestId, Response};
use mcp_transport_core::lease::Leases;

use super::Shared;
use super::held_lease::HeldLease;
use super::session::Session;
use super::stream::StreamState;

/// The message of the error a follower writes for a dead writer's request.
pub(crate) const WRITER_GONE: &str = "Internal error: the server instance running this request stopped (its lease lapsed); the request's outcome is unknown";

/// The message of the error an instance shutting down writes for a request
/// it abandons (`abandon_stream`).
pub(crate) const SHUT_DOWN: &str = "Internal error: the server instance running this request shut down before it finished; the request's outcome is unknown";

/// Takes the lease of stream `state`, just opened for the requests `ids`
/// (none for a standalone stream), and
/// keeps it renewed until the stream finishes (no-op without leases). A
/// lease that cannot be taken (the store out of reach) is logged and the
/// request runs without one.
pub(crate) async fn hold_stream(
    shared: &Shared,
    session: &Arc<Session>,
    state: &StreamState,
    ids: &[RequestId],
) {
    let Some(leases) = shared.config.leases.clone() else {
        return;
    };
    let key = Leases::stream_key(&session.tag, &state.id);
    let data = serde_json::to_string(ids).unwrap_or_else(|_| "[]".to_owned());
    match leases
        .store
        .acquire(&key, &leases.holder, &data, leases.ttl)
        .await
    {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(lease = %key, "the stream's lease exists already; running without one");
            return;
        }
        Err(e) => {
            tracing::warn!(lease = %key, error = %e, "cannot take the stream's lease; running without one");
            return;
        }
    }
    let weak: Weak<Session> = Arc::downgrade(session);
    let (l, k, cancel) = (leases.clone(), key.clone(), ids.to_vec());
    let stop = session.shutdown.cancelled();
    let renewer = tokio::spawn(async move {
        tokio::select! {
            () = l.keep(&k, tokio::time::sleep) => {}
            () = stop => {
                let _ = l.store.release(&k, &l.holder).await;
                return;
            }
        }
        tracing::warn!(lease = %k, "lease taken over by another instance; the request is cancelled here");
        if let Some(session) = weak.upgrade() {
            for id in &cancel {
                session.cancel_request(id);
            }
        }
    });
    state.set_lease(HeldLease::new(
        leases,
        key,
        ids.to_vec(),
        renewer.abort_handle(),
    ));
}

/// Whether a follower should check the lease now (every `renew_every`
/// while nothing arrives); moves `last` on when it should.
pub(crate) fn check_due(shared: &Shared, last: &mut tokio::time::Instant) -> bool {
    let every = shared
        .config
        .leases
        .as_ref()
        .map_or(Duration::MAX, |l| l.renew_every);
    if last.elapsed() >= every {
        *last = tokio::time::Instant::now();
        true
    } else {
        false
    }
}

/// A follower's check of stream `stream` (see the module documentation):
/// if its writer's lease lapsed and this instance wins the takeover, ends
/// the stream in the log with an error response per unanswered request.
/// Returns whether it wrote the end.
pub(crate) async fn end_if_writer_gone(
    shared: &Shared,
    session: &Session,
    stream: StreamId,
) -> bool {
    let Some(leases) = &shared.config.leases else {
        return false;
    };
    let key = Leases::stream_key(&session.tag, &stream);
    match leases.store.get(&key).await {
        Ok(Some(l)) if !l.held => {}
        Ok(_) => return false,
        Err(e) => {
            tracing::debug!(lease = %key, error = %e, "cannot read a stream's lease");
            return false;
        }
    }
    let taken = match leases
        .store
        .take_over(&key, &leases.holder, leases.ttl)
        .await
    {
        Ok(Some(t)) => t,
        Ok(None) => return false,
        Err(e) => {
            tracing::debug!(lease = %key, error = %e, "cannot take a lapsed lease over");
            return false;
        }
    };
    tracing::warn!(session = %session.id, %stream, dead = %taken.holder, "the instance writing this stream stopped; ending it with an error");
    let ids = ids_data(&taken.data);
    let store = shared.config.event_store.as_ref();
    for error in unanswered_errors(shared, session, stream, &ids, WRITER_GONE).await {
        if let Err(e) = store.append(&session.tag, stream, error).await {
            tracing::warn!(session = %session.id, %stream, error = %e, "cannot write the error of a dead writer's request");
        }
    }
    if let Err(e) = store.finish_stream(&session.tag, stream).await {
        tracing::warn!(session = %session.id, %stream, error = %e, "cannot finish a dead writer's stream");
    }
    let _ = leases.store.release(&key, &leases.holder).await;
    true
}

/// Abandons stream `state`, which this instance writes under a lease, when
/// the instance shuts down before its requests finished (see the module
/// documentation of `drain.rs`): one `-32603` error response
/// ([`SHUT_DOWN`]) is appended for each request with no response in the
/// log yet, the stream is finished, the requests are cancelled here, and
/// the lease released — so a client following the stream through another
/// instance gets the error at once instead of after the lease's TTL.
/// Returns whether the stream held a lease (and was abandoned).
///
/// The errors go out before the cancellation: a cancelled request's outlet
/// finishes its stream without a response (`Outlet::respond`), and a
/// follower that saw that end first would never read the error. A response
/// the handler completes in the instant between the scan of the log and
/// the cancellation lands after the error; the client keeps the first
/// response for an id, the error, and the outcome stays "unknown".
///
/// When the log refuses the end (the store out of reach), the lease is not
/// released but left to lapse: a follower then ends the stream once the
/// store is back, as for a dead writer.
pub(crate) async fn abandon_stream(
    shared: &Shared,
    session: &Session,
    state: &StreamState,
) -> bool {
    let Some(held) = state.take_lease() else {
        return false;
    };
    let store = shared.config.event_store.as_ref();
    for error in unanswered_errors(shared, session, state.id, held.ids(), SHUT_DOWN).await {
        if let Err(e) = state.append(store, &session.tag, error).await {
            tracing::warn!(session = %session.id, stream = %state.id, error = %e, "cannot write the error of an abandoned request");
        }
    }
    let recorded = store.finish_stream(&session.tag, state.id).await;
    state.finish(store, &session.tag).await;
    for id in held.ids() {
        session.cancel_request(id);
    }
    match recorded {
        Ok(()) => held.release().await,
        Err(e) => {
            tracing::warn!(session = %session.id, stream = %state.id, error = %e, "cannot finish an abandoned stream; its lease is left to lapse");
        }
    }
    true
}

/// The request ids stored as a stream lease's data.
fn ids_data(data: &str) -> Vec<RequestId> {
    serde_json::from_str(data).unwrap_or_default()
}

/// One `-32603` error response (`message`) for each of `ids` with no
/// response in stream `stream`'s log yet, as event data.
async fn unanswered_errors(
    shared: &Shared,
    session: &Session,
    stream: StreamId,
    ids: &[RequestId],
    message: &str,
) -> Vec<Bytes> {
    let answered = answered(shared, session, stream).await;
    ids.iter()
        .filter(|id| !answered.contains(id))
        .map(|id| {
            let error =
                Response::error(Some(id.clone()), ErrorObject::new(INTERNAL_ERROR, message));
            Bytes::from(Message::Response(error).to_json())
        })
        .collect()
}

/// The ids of the responses already in the stream's log.
async fn answered(shared: &Shared, session: &Session, stream: StreamId) -> Vec<RequestId> {
    let from = EventId::priming(session.tag, stream);
    let Ok(replay) = shared
        .config
        .event_store
        .replay_after(&session.tag, &from)
        .await
    else {
        return Vec::new();
    };
    replay
        .events
        .iter()
        .filter_map(|e| serde_json::from_slice::<serde_json::Value>(&e.data).ok())
        .filter(|v| v.get("result").is_some() || v.get("error").is_some())
        .filter_map(|v| serde_json::from_value(v.get("id")?.clone()).ok())
        .collect()
}
