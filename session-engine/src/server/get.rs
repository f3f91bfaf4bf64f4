//! `GET`: standalone streams ("Listening for Messages from the Server")
//! and resumption ("Resumability and Redelivery").
//!
//! # Resumption (`Last-Event-ID`)
//!
//! The id names its stream and position (`event_id`), so the server replays
//! exactly the events after it on that stream — "MUST NOT replay messages
//! that would have been delivered on a different stream" — then continues
//! live while the stream is unfinished, and ends after the response. A
//! resume that cannot be served exactly is a 4xx with a JSON-RPC error body
//! naming the reason, never a 200 with an empty stream:
//!
//! | `Last-Event-ID` | status |
//! | --- | --- |
//! | malformed (not `tag.stream.seq`) | 400 |
//! | issued in another session | 400 |
//! | names no stream/event of this session | 400 (not 404: a 404 tells the client its *session* is gone) |
//! | its events are no longer retained (evicted) | 410 Gone |
//! | event store failure | 500 |
//!
//! A resume of a stream that has a connection takes the stream over: the
//! old connection is closed, so no message goes out on two connections.
//!
//! # Standalone streams
//!
//! "Resumability and Redelivery" (2025-11-25): event ids "MUST be globally
//! unique across all streams within that session". So each fresh `GET` (no
//! `Last-Event-ID`) opens a **new** stream with its own number and becomes
//! the session's *current* standalone stream; its priming event (polling
//! sessions) is that stream's seq-0 id, which no other event of the session
//! ever carries. (Re-opening one long-lived stream "at its current end"
//! would make the priming event of a later `GET` repeat the id of the last
//! event already sent on it.) The session's first standalone stream is
//! number 0 (`StreamId::STANDALONE`, which the request-stream counter never
//! issues); every later one takes the next number of the session's stream
//! counter, shared with request streams.
//!
//! * One connection at a time: a fresh `GET` while the current standalone
//!   stream has a connection attached (fresh or resumed) is 409.
//! * The current standalone stream carries only what the server sends with
//!   `LegacyServer::notify_session`/`notify_all`, never a response. A
//!   message sent while no connection is attached is logged on it all the
//!   same: a client that resumes the stream with its `Last-Event-ID` gets it.
//! * A fresh `GET` that replaces a standalone stream *finishes* the old one
//!   (in the event store and in its live state). Messages logged on the old
//!   stream are **not** carried over to the new one — "MUST NOT replay
//!   messages that would have been delivered on a different stream" — but
//!   stay resumable: a `Last-Event-ID` of the old stream replays what
//!   followed it and then the response ends, as for a finished request
//!   stream. So a message sent between two `GET`s goes to the stream that
//!   is current at that moment (the old one, until the new `GET` replaces
//!   it), and is lost only to a client that reconnects without
//!   `Last-Event-ID`.
//! * Replacing happens under the session's standalone slot lock, which
//!   server-initiated messages also take: each message lands either on the
//!   old stream before it is finished or on the new one.
//! * Finished standalone streams are ordinary finished streams for the
//!   event store's bounds (evicted first when a session needs room; a
//!   resume from an evicted one is 410).

use std::sync::Arc;

use http::StatusCode;
use http::request::Parts;
use mcp_http_edge::faults::Fault;
use mcp_transport_core::event_id::{EventId, EventIdError, StreamId};
use mcp_transport_core::event_log::{ReplayError, StoredEvent};

use super::connection::{self, Plan};
use super::reply::{self, HttpResponse};
use super::session::Session;
use super::stream::StreamState;
use super::{Shared, checks};
use crate::headers::LAST_EVENT_ID;

/// Handles one GET.
pub(crate) async fn get(shared: &Arc<Shared>, parts: &Parts) -> HttpResponse {
    if !checks::accepts(&parts.headers).sse {
        return reply::invalid(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: the Accept header must list text/event-stream",
        );
    }
    let last = parts.headers.get(LAST_EVENT_ID);
    if last.is_none() && !shared.config.get_stream {
        // Allow names only what is supported (RFC 9110, 10.2.1): DELETE
        // only when sessions may be ended with it.
        let allow = if shared.config.allow_delete {
            "POST, DELETE"
        } else {
            "POST"
        };
        return reply::method_not_allowed(
            allow,
            "Method Not Allowed: this server offers no standalone SSE stream (GET is only for resuming with Last-Event-ID)",
        );
    }
    let session = match shared.require_session(parts).await {
        Ok(s) => s,
        Err(r) => return r.response(),
    };
    match last {
        Some(v) => match v.to_str() {
            Ok(text) => resume(shared, &session, text.trim()).await,
            Err(_) => reply::invalid(
                StatusCode::BAD_REQUEST,
                "Bad Request: Last-Event-ID is not visible ASCII",
            ),
        },
        None => standalone(shared, &session).await,
    }
}

async fn resume(shared: &Arc<Shared>, session: &Arc<Session>, text: &str) -> HttpResponse {
    let last = match EventId::parse(text) {
        Ok(id) => id,
        Err(e) => {
            return reply::invalid(
                StatusCode::BAD_REQUEST,
                format!(
                    "Bad Request: Last-Event-ID {text:?} is not an event id of this server: {e}"
                ),
            );
        }
    };
    if let Err(EventIdError::ForeignSession) = last.check_session(&session.tag) {
        return foreign(text);
    }
    let state = session.stream(last.stream);
    let faults = shared.config.http.faults;
    // Self-test fault: replay the Last-Event-ID event itself too.
    let inclusive = faults.has(Fault::ReplayInclusive) && last.seq > EventId::PRIMING_SEQ;
    let after = if inclusive {
        EventId::new(last.session, last.stream, last.seq - 1)
    } else {
        last.position()
    };
    let replay = match shared
        .config
        .event_store
        .replay_after(&session.tag, &after)
        .await
    {
        Ok(r) => r,
        Err(ReplayError::UnknownEventId { .. }) => {
            return reply::invalid(
                StatusCode::BAD_REQUEST,
                format!("Bad Request: Last-Event-ID {text} does not name an event of this session"),
            );
        }
        Err(ReplayError::ForeignSession { .. }) => return foreign(text),
        Err(ReplayError::Expired { .. }) => {
            return reply::invalid(
                StatusCode::GONE,
                format!(
                    "Gone: the events after Last-Event-ID {text} are no longer retained; the stream cannot be resumed"
                ),
            );
        }
        // The store is out of reach (Redis down): 503, the client may retry.
        Err(e @ ReplayError::Backend(_)) => {
            let cause = std::error::Error::source(&e).map_or_else(String::new, ToString::to_string);
            return reply::internal(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("cannot read the event log: {e}: {cause}"),
            );
        }
        Err(e) => {
            return reply::internal(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot read the event log: {e}"),
            );
        }
    };
    // A stream without live state has finished and been reaped: serve it
    // from the log alone. One without live state that has not finished is
    // written by another instance sharing the session (`cluster`): follow
    // it in the log until it finishes (`EventStore::tail_after`).
    let state = match state {
        Some(s) => s,
        None if replay.finished => StreamState::ended(last.stream, replay.last_seq),
        None => {
            let s = StreamState::remote(last.stream, replay.last_seq);
            session.add_stream(s.clone());
            s
        }
    };
    let leak = if faults.has(Fault::LeakOtherStream) {
        other_streams_events(shared, session, last.stream).await
    } else {
        Vec::new()
    };
    let generation = state.attach(after.seq);
    connection::respond(
        shared,
        session,
        state,
        Plan {
            generation,
            priming: None,
            cursor: after.seq,
            prefetched: Some(replay),
            resuming: true,
            leak,
            first: false,
        },
    )
}

/// Every logged message event of the session's other live streams (the
/// `LeakOtherStream` self-test fault only).
async fn other_streams_events(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    own: StreamId,
) -> Vec<StoredEvent> {
    let mut out = Vec::new();
    for id in session.stream_ids().into_iter().filter(|id| *id != own) {
        let from = EventId::priming(session.tag, id);
        if let Ok(r) = shared
            .config
            .event_store
            .replay_after(&session.tag, &from)
            .await
        {
            out.extend(r.events);
        }
    }
    out
}

fn foreign(text: &str) -> HttpResponse {
    reply::invalid(
        StatusCode::BAD_REQUEST,
        format!("Bad Request: Last-Event-ID {text} was issued in a different session"),
    )
}

/// A fresh `GET`: opens a new standalone stream that replaces the current
/// one (see the module documentation).
async fn standalone(shared: &Arc<Shared>, session: &Arc<Session>) -> HttpResponse {
    let store = shared.config.event_store.as_ref();
    let mut slot = session.standalone().lock().await;
    if slot.as_ref().is_some_and(|s| s.is_attached()) {
        return reply::invalid(
            StatusCode::CONFLICT,
            "Conflict: this session already has its standalone GET stream open (one at a time); resume it with Last-Event-ID instead",
        );
    }
    let first = if slot.is_none() {
        StreamId::STANDALONE
    } else {
        session.next_stream_id()
    };
    let (id, priming) = match super::open::open_fresh(shared, session, first).await {
        Ok(p) => p,
        Err(e) => {
            return reply::internal(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("cannot open a standalone stream: {e}"),
            );
        }
    };
    let state = StreamState::new(id);
    // Leased like a request stream, with no request on it: if this
    // instance dies, a client following the stream elsewhere sees it end
    // (and opens a new one) instead of waiting forever (`lease`).
    super::lease::hold_stream(shared, session, &state, &[]).await;
    let generation = state.attach(EventId::PRIMING_SEQ);
    session.add_stream(state.clone());
    if let Some(old) = slot.replace(state.clone()) {
        // Nothing more goes on the old stream: a resume of it replays what
        // the client missed and then ends.
        old.finish(store, &session.tag).await;
        session.reap(&old);
    }
    drop(slot);
    connection::respond(
        shared,
        session,
        state,
        Plan {
            generation,
            priming: Some(priming),
            cursor: EventId::PRIMING_SEQ,
            prefetched: None,
            resuming: false,
            leak: Vec::new(),
            first: false,
        },
    )
}
