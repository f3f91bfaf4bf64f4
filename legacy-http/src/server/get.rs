//! `GET`: the standalone stream ("Listening for Messages from the Server")
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
//! # Standalone stream
//!
//! One per session (stream number `StreamId::STANDALONE`), opened in the
//! event store at the first `GET`; one connection at a time (a second
//! concurrent `GET` is 409). It carries only what the server sends with
//! `LegacyServer::notify_session`/`notify_all`, never a response. A fresh
//! `GET` starts at the stream's current end; its priming event (polling
//! sessions) names that position — for the first `GET` the stream's seq-0
//! priming id, for a later one the id of the last event already on the
//! stream, so that resuming from it replays exactly what follows.

use std::sync::Arc;

use http::StatusCode;
use http::request::Parts;
use mcp_transport_core::event_id::{EventId, EventIdError, StreamId};
use mcp_transport_core::event_log::ReplayError;

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
        return reply::method_not_allowed(
            "POST, DELETE",
            "Method Not Allowed: this server offers no standalone SSE stream (GET is only for resuming with Last-Event-ID)",
        );
    }
    let session = match shared.require_session(&parts.headers).await {
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
    let replay = match shared
        .config
        .event_store
        .replay_after(&session.tag, &last)
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
        Err(e) => {
            return reply::internal(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot read the event log: {e}"),
            );
        }
    };
    // A stream without live state has finished and been reaped: serve it
    // from the log alone.
    let state = state.unwrap_or_else(|| StreamState::ended(last.stream, replay.last_seq));
    let generation = state.attach(last.seq);
    connection::respond(
        shared,
        session,
        state,
        Plan {
            generation,
            priming: None,
            cursor: last.seq,
            prefetched: Some(replay),
            resuming: true,
        },
    )
}

fn foreign(text: &str) -> HttpResponse {
    reply::invalid(
        StatusCode::BAD_REQUEST,
        format!("Bad Request: Last-Event-ID {text} was issued in a different session"),
    )
}

async fn standalone(shared: &Arc<Shared>, session: &Arc<Session>) -> HttpResponse {
    let mut opened = None;
    let state = session
        .standalone()
        .get_or_try_init(|| async {
            let priming = shared
                .config
                .event_store
                .open_stream(&session.tag, StreamId::STANDALONE)
                .await?;
            opened = Some(priming);
            Ok::<_, mcp_transport_core::event_log::StoreError>(StreamState::new(
                StreamId::STANDALONE,
            ))
        })
        .await;
    let state = match state {
        Ok(s) => s.clone(),
        Err(e) => {
            return reply::internal(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("cannot open the standalone stream: {e}"),
            );
        }
    };
    let cursor = state.live().last_seq;
    let Some(generation) = state.try_attach(cursor) else {
        return reply::invalid(
            StatusCode::CONFLICT,
            "Conflict: this session already has its standalone GET stream open (one at a time); resume it with Last-Event-ID instead",
        );
    };
    let priming = opened.unwrap_or_else(|| EventId::new(session.tag, StreamId::STANDALONE, cursor));
    connection::respond(
        shared,
        session,
        state,
        Plan {
            generation,
            priming: Some(priming),
            cursor,
            prefetched: None,
            resuming: false,
        },
    )
}
