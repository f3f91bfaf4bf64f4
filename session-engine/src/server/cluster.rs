//! Sessions shared between instances (`ServerConfig::session_store` and
//! `ServerConfig::signals`): several instances of this server behind a load
//! balancer without sticky sessions, so that any request, resume or answer
//! of a session may reach any instance.
//!
//! What is shared and what stays in the process:
//!
//! | shared (store) | process-local |
//! | --- | --- |
//! | the session record: revision, client description, event-log tag, principal; idle expiry (`SessionStore`) | running requests and their cancellation tokens, pending server-to-client requests |
//! | every SSE event of every stream (`EventStore`): a resume anywhere replays, then follows the stream ([`EventStore::tail_after`]) | attached SSE connections and the live state of the streams this instance writes |
//! | signals to the instance holding a request (`SignalBus`) | the log level, the standalone stream slot, renewal and stream counters |
//!
//! * **Adoption.** A request carrying an `MCP-Session-Id` this instance does
//!   not know is looked up in the store; a live record is adopted: a local
//!   session is built from it (revision, client, tag) and serves the
//!   request. Its stream counter starts at a random number at or above
//!   2^32, so streams it opens never take a number the creating instance
//!   uses (an `open_stream` that still finds its number taken tries the
//!   next).
//! * **Expiry is the store's.** Every request touches the record; a record
//!   the store reports missing or expired is 404 here too, and the local
//!   copy ends (*Transports*, "Session Management" 3: requests with an
//!   ended session's id get 404). The sweeper keeps the records of sessions
//!   busy here (a long request) touched, ends local copies of sessions the
//!   store no longer has, and drops idle local copies of sessions still
//!   alive in the store without ending them.
//! * **`DELETE`** removes the record, the event log and the local copy; the
//!   other instances' copies end at their next request or sweep.
//! * **Signals.** A `notifications/cancelled` for a request not running
//!   here, or a client's response to a server-to-client request not waiting
//!   here, is published on the bus; every instance hears it and the one
//!   holding the request acts on it (*Cancellation*, and the answer routed
//!   to the waiting handler).
//!
//! [`EventStore::tail_after`]: mcp_transport_core::event_log::EventStore::tail_after

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use http::StatusCode;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::event_id::SessionTag;
use mcp_transport_core::handler::ClientDescription;
use mcp_transport_core::jsonrpc::{self, Message, Notification, RequestId};
use mcp_transport_core::session_store::{
    NewSession, SessionRecord, SessionSignal, SessionStore, SessionStoreError,
};

use super::Shared;
use super::reply::Reject;
use super::session::Session;

/// Milliseconds since the Unix epoch: the clock of shared session records
/// (every instance's, unlike the server's own monotonic epoch).
pub(crate) fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// 503: the session store is out of reach (the client may retry).
fn unavailable(e: &SessionStoreError) -> Reject {
    let cause = std::error::Error::source(e).map_or_else(String::new, ToString::to_string);
    Reject {
        status: StatusCode::SERVICE_UNAVAILABLE,
        code: jsonrpc::INTERNAL_ERROR,
        message: format!("Service Unavailable: the session store is unavailable: {e}: {cause}"),
    }
}

fn internal(message: String) -> Reject {
    Reject {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        code: jsonrpc::INTERNAL_ERROR,
        message,
    }
}

/// Stores a session `initialize` just created here.
pub(crate) async fn create(
    shared: &Shared,
    store: &dyn SessionStore,
    session: &Session,
) -> Result<(), Reject> {
    let raw = |v: &serde_json::Value| serde_json::value::to_raw_value(v).ok();
    let client = shared.sessions.described(session);
    let new = NewSession {
        id: session.id.to_string(),
        tag: session.tag.to_string(),
        version: session.version.to_string(),
        capabilities: raw(&client.capabilities)
            .ok_or_else(|| internal("cannot serialize the client's capabilities".into()))?,
        client_info: client.info.as_ref().and_then(raw),
        principal: session.principal.clone(),
        idle_timeout_ms: u64::try_from(shared.config.session_idle_timeout.as_millis())
            .unwrap_or(u64::MAX),
    };
    match store.create(new, wall_ms()).await {
        Ok(_) => Ok(()),
        Err(SessionStoreError::TooManySessions { max }) => Err(Reject {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: jsonrpc::INTERNAL_ERROR,
            message: format!(
                "Service Unavailable: the session store's limit of {max} sessions is reached; try again later"
            ),
        }),
        Err(e @ SessionStoreError::Backend(_)) => Err(unavailable(&e)),
        Err(e) => Err(internal(format!("cannot store the session: {e}"))),
    }
}

/// The session `id` as the shared store sees it: the local copy (or one
/// adopted from the record now) while the record lives, touched; `None`
/// (404) when the store has no such session any more — the local copy, if
/// any, ends.
pub(crate) async fn lookup(
    shared: &Arc<Shared>,
    store: &dyn SessionStore,
    id: &str,
) -> Result<Option<Arc<Session>>, Reject> {
    let local = shared.sessions.get(id);
    match store.touch(id, wall_ms()).await {
        Ok(record) => match local {
            Some(s) => Ok(Some(s)),
            None => adopt(shared, &record).map(Some),
        },
        Err(SessionStoreError::NotFound { .. } | SessionStoreError::Expired { .. }) => {
            if let Some(s) = local {
                tracing::debug!(session = %s.id, "session ended in the shared store; local copy ends");
                shared.terminate(&s).await;
            }
            Ok(None)
        }
        Err(e) => Err(unavailable(&e)),
    }
}

/// A local session built from a stored record (see the module
/// documentation).
fn adopt(shared: &Arc<Shared>, record: &SessionRecord) -> Result<Arc<Session>, Reject> {
    let r = &record.session;
    let version = ProtocolVersion::parse(&r.version);
    let revision = shared
        .config
        .served_revisions()
        .into_iter()
        .find(|rev| rev.version() == version)
        .ok_or_else(|| {
            internal(format!(
                "session {} was created at version {version}, which this instance does not serve",
                r.id
            ))
        })?;
    let tag = SessionTag::parse(&r.tag)
        .map_err(|e| internal(format!("session {} has a malformed tag: {e}", r.id)))?;
    let parse = |raw: &serde_json::value::RawValue| serde_json::from_str(raw.get()).ok();
    let client = ClientDescription {
        info: r.client_info.as_deref().and_then(parse),
        capabilities: parse(&r.capabilities)
            .filter(serde_json::Value::is_object)
            .unwrap_or_else(|| serde_json::json!({})),
    };
    let session = Arc::new(
        Session::new(
            r.id.as_str().into(),
            tag,
            version,
            revision,
            client,
            shared.handler.clone(),
            shared.now_ms(),
        )
        .with_principal(r.principal.clone()),
    );
    session.start_streams_at((1 << 32) | u64::from(rand::random::<u32>()));
    let session = shared
        .sessions
        .insert_or_get(session, shared.config.max_sessions)
        .map_err(|full| Reject {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: jsonrpc::INTERNAL_ERROR,
            message: format!(
                "Service Unavailable: this instance's limit of {} sessions is reached; try again later",
                full.max
            ),
        })?;
    shared.ensure_sweeper();
    ensure_listener(shared);
    tracing::debug!(session = %session.id, version = %session.version, "session adopted from the shared store");
    Ok(session)
}

/// One sweep over the local sessions with a shared store (see the module
/// documentation).
pub(crate) async fn sweep(shared: &Arc<Shared>, store: &dyn SessionStore) {
    let (now, timeout) = (shared.now_ms(), shared.config.session_idle_timeout);
    for s in shared.sessions.all() {
        if s.is_expired(now, timeout) {
            match store.get(&s.id, wall_ms()).await {
                // Alive elsewhere: only this instance's copy goes.
                Ok(_) => shared.forget_local(&s),
                Err(SessionStoreError::NotFound { .. } | SessionStoreError::Expired { .. }) => {
                    tracing::debug!(session = %s.id, "session expired (idle)");
                    shared.terminate(&s).await;
                }
                Err(_) => {}
            }
        } else if s.is_busy()
            && let Err(SessionStoreError::NotFound { .. } | SessionStoreError::Expired { .. }) =
                store.touch(&s.id, wall_ms()).await
        {
            shared.terminate(&s).await;
        }
    }
}

/// Starts the task that acts on signals for sessions held here, unless it
/// runs (one per server; it ends with the server).
pub(crate) fn ensure_listener(shared: &Arc<Shared>) {
    let Some(bus) = &shared.config.signals else {
        return;
    };
    if shared
        .listener_running
        .swap(true, std::sync::atomic::Ordering::AcqRel)
    {
        return;
    }
    // Subscribed before this returns: nothing published after is missed.
    let mut sub = bus.subscribe();
    let weak = Arc::downgrade(shared);
    let stop = shared.stop.clone();
    tokio::spawn(async move {
        loop {
            let signal = tokio::select! {
                s = sub.recv() => s,
                () = stop.cancelled() => return,
            };
            let Some(shared) = weak.upgrade() else { return };
            if signal.broadcast_parts().is_some() {
                super::fanout::on_broadcast(&shared, &signal).await;
            } else {
                deliver(&shared, &signal);
            }
        }
    });
}

/// Acts on a signal if its session, and the request or the pending
/// server-to-client request it names, is here.
fn deliver(shared: &Shared, signal: &SessionSignal) {
    let Some(session) = shared.sessions.get(&signal.session_id) else {
        return;
    };
    match jsonrpc::parse_body(&signal.message, false) {
        Ok(jsonrpc::Body::Single(Message::Notification(n))) => {
            if let Some(id) = cancelled_request(&n)
                && session.cancel_request(&id)
            {
                tracing::debug!(session = %session.id, request = %id, "notifications/cancelled from another instance");
            }
        }
        Ok(jsonrpc::Body::Single(Message::Response(r))) => {
            let id = r.id.clone();
            if session.complete_client_request(r) {
                tracing::debug!(session = %session.id, id = ?id, "client response from another instance");
            }
        }
        _ => {}
    }
}

/// The request a `notifications/cancelled` names (`None` when malformed:
/// *Cancellation* says to ignore it).
pub(crate) fn cancelled_request(n: &Notification) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cancelled {
        request_id: RequestId,
    }
    n.params
        .as_deref()
        .and_then(|p| serde_json::from_str::<Cancelled>(p.get()).ok())
        .map(|c| c.request_id)
}

/// Hands a client message nothing here waits for to the other instances
/// (no-op without a bus).
pub(crate) async fn publish(shared: &Shared, session: &Session, message: &Message) {
    let Some(bus) = &shared.config.signals else {
        return;
    };
    let signal = SessionSignal {
        session_id: session.id.to_string(),
        message: message.to_json().into(),
    };
    if let Err(e) = bus.publish(signal).await {
        tracing::warn!(session = %session.id, error = %e, "could not publish a signal to the other instances");
    }
}
