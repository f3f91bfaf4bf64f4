//! Sessions (*Transports*, "Session Management") and their registry.
//!
//! A session is fixed at `initialize`: its [`ProtocolVersion`], that
//! version's [`SessionRevision`] (every revision-dependent behaviour asks
//! it, never the version string), the client's description, and the
//! [`SessionTag`] its event ids carry. Besides that it holds only small,
//! bounded maps: live state of its unfinished streams (request streams and
//! standalone GET streams alike; the current standalone stream is also
//! named by the standalone slot), its in-flight requests' cancellation
//! tokens and its pending server-to-client requests.
//! An idle session owns no task, channel or timer; one sweeper task per
//! server ends idle sessions. What only a busy session needs is made on
//! first use (the shutdown token), and sessions whose clients describe
//! themselves alike share one client description ([`Registry::client`];
//! one that differs keeps the JSON text): an idle session is the struct,
//! its id, and its entries in the registry and the event store.

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::event_id::{SessionTag, StreamId};
use mcp_transport_core::handler::{ClientDescription, Handler, LogLevel};
use mcp_transport_core::jsonrpc::{RequestId, Response};
use tokio::sync::oneshot;

use super::Shared;
use super::client_info::{ClientKeep, LastClient};
use super::stream::StreamState;
use crate::revision::SessionRevision;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No code here panics while holding these locks; a poisoned lock still
    // guards consistent data.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One MCP session.
pub(crate) struct Session {
    /// The `MCP-Session-Id` value.
    pub id: Arc<str>,
    /// The tag of every event id issued in this session.
    pub tag: SessionTag,
    /// The version negotiated at `initialize`.
    pub version: ProtocolVersion,
    /// That version's rules, chosen once at `initialize`.
    pub revision: Arc<dyn SessionRevision>,
    /// The client, from `initialize` ([`Session::client`]).
    client: ClientKeep,
    /// The handler serving this session: the server's, as the revision's
    /// [`SessionRevision::session_handler`] wrapped it.
    pub handler: Arc<dyn Handler>,
    /// The principal that created the session, when the server binds
    /// sessions to principals (`ServerConfig::principal`).
    pub principal: Option<String>,
    log_level: AtomicU8,
    next_stream: AtomicU64,
    next_client_request: AtomicU64,
    /// The last renewal number given out ([`EventId::renewed`]).
    ///
    /// [`EventId::renewed`]: mcp_transport_core::event_id::EventId::renewed
    renewals: AtomicU32,
    /// Live state of streams not yet reaped: request streams and standalone
    /// GET streams (the current one, and a replaced one until it is reaped).
    streams: Mutex<FxHashMap<StreamId, Arc<StreamState>>>,
    /// The current standalone GET stream: none before the first GET, then
    /// the one the latest fresh GET opened (see the `get` module). An async
    /// lock, held while a server-initiated message is appended and while a
    /// fresh GET replaces the stream, so every message lands either on the
    /// old stream before it is finished or on the new one.
    standalone: tokio::sync::Mutex<Option<Arc<StreamState>>>,
    /// In-flight client requests and their cancellation tokens.
    requests: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Server-to-client requests awaiting the client's response.
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Response>>>,
    /// Milliseconds since the server's epoch at the last activity.
    last_active: AtomicU64,
    /// Running requests plus attached connections: a busy session is never idle.
    busy: AtomicUsize,
    /// Fired when the session ends.
    pub shutdown: Shutdown,
}

/// The end of a session, as a token connections and requests wait on. The
/// token is made on first use: an idle session never needs one (a
/// `tokio_util` token is a heap node of its own).
pub(crate) struct Shutdown {
    slot: Mutex<ShutdownSlot>,
}

enum ShutdownSlot {
    /// Nobody has waited yet, and the session has not ended.
    Unused,
    /// Someone waits (or waited) on this token.
    Token(tokio_util::sync::CancellationToken),
    /// The session has ended.
    Fired,
}

impl Shutdown {
    fn new() -> Self {
        Shutdown {
            slot: Mutex::new(ShutdownSlot::Unused),
        }
    }

    /// The token, made now if nobody asked before (already cancelled when
    /// the session has ended).
    fn token(&self) -> tokio_util::sync::CancellationToken {
        let mut slot = lock(&self.slot);
        match &*slot {
            ShutdownSlot::Token(t) => t.clone(),
            ShutdownSlot::Fired => {
                let t = tokio_util::sync::CancellationToken::new();
                t.cancel();
                t
            }
            ShutdownSlot::Unused => {
                let t = tokio_util::sync::CancellationToken::new();
                *slot = ShutdownSlot::Token(t.clone());
                t
            }
        }
    }

    /// Completes when the session ends (at once if it has).
    pub fn cancelled(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.token().cancelled_owned()
    }

    /// Whether the session has ended.
    pub fn is_cancelled(&self) -> bool {
        match &*lock(&self.slot) {
            ShutdownSlot::Unused => false,
            ShutdownSlot::Token(t) => t.is_cancelled(),
            ShutdownSlot::Fired => true,
        }
    }

    /// Ends the session: every waiter wakes.
    pub fn cancel(&self) {
        let before = std::mem::replace(&mut *lock(&self.slot), ShutdownSlot::Fired);
        if let ShutdownSlot::Token(t) = before {
            t.cancel();
        }
    }
}

impl Session {
    /// The same session, bound to `principal`.
    pub fn with_principal(mut self, principal: Option<String>) -> Self {
        self.principal = principal;
        self
    }

    /// A new session.
    pub fn new(
        id: Arc<str>,
        tag: SessionTag,
        version: ProtocolVersion,
        revision: Arc<dyn SessionRevision>,
        client: impl Into<ClientKeep>,
        server_handler: Arc<dyn Handler>,
        now_ms: u64,
    ) -> Self {
        let handler = revision.session_handler(server_handler, &id);
        Session {
            id,
            tag,
            version,
            revision,
            client: client.into(),
            handler,
            principal: None,
            log_level: AtomicU8::new(level_to_u8(LogLevel::Debug)),
            next_stream: AtomicU64::new(StreamId::FIRST_REQUEST.get()),
            next_client_request: AtomicU64::new(1),
            renewals: AtomicU32::new(0),
            streams: Mutex::default(),
            standalone: tokio::sync::Mutex::new(None),
            requests: Mutex::default(),
            pending: Mutex::default(),
            last_active: AtomicU64::new(now_ms),
            busy: AtomicUsize::new(0),
            shutdown: Shutdown::new(),
        }
    }

    /// The least severe level the client wants. Until the client sends
    /// `logging/setLevel` this is `Debug` (everything): the MCP logging
    /// utility lets servers send log messages without a `setLevel`.
    pub fn log_level(&self) -> LogLevel {
        level_from_u8(self.log_level.load(Ordering::Relaxed))
    }

    /// Stores the level from `logging/setLevel`.
    pub fn set_log_level(&self, level: LogLevel) {
        self.log_level.store(level_to_u8(level), Ordering::Relaxed);
    }

    /// Makes the stream counter go on from `first` (a session adopted from
    /// the shared store: see `cluster`).
    pub fn start_streams_at(&self, first: u64) {
        self.next_stream.store(first, Ordering::Relaxed);
    }

    /// Allocates the next stream number (for a request stream, or for a
    /// standalone stream after the session's first).
    pub fn next_stream_id(&self) -> StreamId {
        StreamId(self.next_stream.fetch_add(1, Ordering::Relaxed))
    }

    /// A renewal number never given out before in this session (1, 2, …;
    /// after `u32::MAX` renewals it starts over at 1, by which time no
    /// client holds the first ones).
    pub fn next_renewal(&self) -> u32 {
        // The counter holds the last number given out and steps through
        // 1..=u32::MAX; a plain `fetch_add` would wrap through 0, and
        // `u32::MAX` and 0 both became 1 (the same number twice in a row).
        let step = |n: u32| n % u32::MAX + 1;
        let last = self
            .renewals
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| Some(step(n)))
            .unwrap_or_else(|n| n);
        step(last)
    }

    /// A fresh id for a server-to-client request: `"s-<n>"`.
    pub fn next_client_request_id(&self) -> RequestId {
        RequestId::String(format!(
            "s-{}",
            self.next_client_request.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Registers a stream's live state (so `Last-Event-ID` finds it).
    pub fn add_stream(&self, state: Arc<StreamState>) {
        lock(&self.streams).insert(state.id, state);
    }

    /// The live state of a stream, if it has one.
    pub fn stream(&self, id: StreamId) -> Option<Arc<StreamState>> {
        lock(&self.streams).get(&id).cloned()
    }

    /// Drops a stream's live state once it has ended and everything was
    /// delivered (or nobody is attached to deliver it); resumption then
    /// works from the event store alone. The current standalone stream is
    /// never finished, so it is never reaped; a replaced one is finished
    /// and reaped like a request stream.
    pub fn reap(&self, state: &Arc<StreamState>) {
        if !state.live().finished || !state.fully_delivered() {
            return;
        }
        let mut streams = lock(&self.streams);
        if streams
            .get(&state.id)
            .is_some_and(|s| Arc::ptr_eq(s, state))
        {
            streams.remove(&state.id);
        }
    }

    /// The slot of the current standalone stream (filled and replaced by
    /// the GET handler, appended to by server-initiated messages).
    pub fn standalone(&self) -> &tokio::sync::Mutex<Option<Arc<StreamState>>> {
        &self.standalone
    }

    /// Registers an in-flight request; `false` if its id is already in use.
    pub fn start_request(&self, id: &RequestId, token: CancellationToken) -> bool {
        let mut requests = lock(&self.requests);
        if requests.contains_key(id) {
            return false;
        }
        requests.insert(id.clone(), token);
        true
    }

    /// Forgets an in-flight request.
    pub fn end_request(&self, id: &RequestId) {
        lock(&self.requests).remove(id);
    }

    /// Fires the cancellation token of an in-flight request; `false` when
    /// there is none (already finished or never seen: ignored, as
    /// *Cancellation* says).
    pub fn cancel_request(&self, id: &RequestId) -> bool {
        match lock(&self.requests).get(id) {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }

    /// Fires every in-flight request's cancellation token (the
    /// `CancelOnDisconnect` self-test fault only).
    pub fn cancel_all_requests(&self) {
        for t in lock(&self.requests).values() {
            t.cancel();
        }
    }

    /// The numbers of the streams with live state.
    pub fn stream_ids(&self) -> Vec<StreamId> {
        lock(&self.streams).keys().copied().collect()
    }

    /// Registers a server-to-client request awaiting an answer; `None` when
    /// `max` are already pending.
    pub fn await_client_response(
        &self,
        id: RequestId,
        max: usize,
    ) -> Option<oneshot::Receiver<Response>> {
        let mut pending = lock(&self.pending);
        if pending.len() >= max {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        pending.insert(id, tx);
        Some(rx)
    }

    /// Forgets a pending server-to-client request.
    pub fn forget_client_request(&self, id: &RequestId) {
        lock(&self.pending).remove(id);
    }

    /// Whether a server-to-client request still awaits its answer.
    pub fn is_client_request_pending(&self, id: &RequestId) -> bool {
        lock(&self.pending).contains_key(id)
    }

    /// Routes a client's response to the waiting server-to-client request;
    /// `false` if no request with that id is pending.
    pub fn complete_client_request(&self, response: Response) -> bool {
        let Some(id) = response.id.clone() else {
            return false;
        };
        let Some(tx) = lock(&self.pending).remove(&id) else {
            return false;
        };
        tx.send(response).is_ok()
    }

    /// Records activity now.
    pub fn touch(&self, now_ms: u64) {
        self.last_active.fetch_max(now_ms, Ordering::Relaxed);
    }

    /// A guard that marks the session busy while it lives.
    pub fn busy(self: &Arc<Self>, shared: &Arc<Shared>) -> BusyGuard {
        self.busy.fetch_add(1, Ordering::AcqRel);
        BusyGuard {
            session: self.clone(),
            shared: Arc::downgrade(shared),
        }
    }

    /// Whether a request runs or a connection is attached.
    pub fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Acquire) > 0
    }

    /// Drops the live state of a stream another instance writes (a resume
    /// here followed it) once no connection here is attached to it.
    pub fn forget_remote(&self, state: &Arc<StreamState>) {
        if !state.remote || state.is_attached() {
            return;
        }
        let mut streams = lock(&self.streams);
        if streams
            .get(&state.id)
            .is_some_and(|s| Arc::ptr_eq(s, state))
        {
            streams.remove(&state.id);
        }
    }

    /// Whether the session has been idle longer than `timeout` at `now_ms`.
    pub fn is_expired(&self, now_ms: u64, timeout: Duration) -> bool {
        let idle = now_ms.saturating_sub(self.last_active.load(Ordering::Relaxed));
        self.busy.load(Ordering::Acquire) == 0 && u128::from(idle) > timeout.as_millis()
    }

    /// Ends the session's activity: connections close, running requests are
    /// cancelled, pending server-to-client requests fail.
    pub fn shut_down(&self) {
        self.shutdown.cancel();
        for t in lock(&self.requests).values() {
            t.cancel();
        }
        lock(&self.pending).clear();
        lock(&self.streams).clear();
    }
}

/// Keeps a session busy (not idle) while alive; touches it when dropped.
pub(crate) struct BusyGuard {
    session: Arc<Session>,
    shared: Weak<Shared>,
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            self.session.touch(shared.now_ms());
        }
        self.session.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

fn level_to_u8(l: LogLevel) -> u8 {
    match l {
        LogLevel::Debug => 0,
        LogLevel::Info => 1,
        LogLevel::Notice => 2,
        LogLevel::Warning => 3,
        LogLevel::Error => 4,
        LogLevel::Critical => 5,
        LogLevel::Alert => 6,
        LogLevel::Emergency => 7,
    }
}

fn level_from_u8(n: u8) -> LogLevel {
    match n {
        0 => LogLevel::Debug,
        1 => LogLevel::Info,
        2 => LogLevel::Notice,
        3 => LogLevel::Warning,
        4 => LogLevel::Error,
        5 => LogLevel::Critical,
        6 => LogLevel::Alert,
        _ => LogLevel::Emergency,
    }
}

/// Why a session could not be registered.
#[derive(Debug)]
pub(crate) struct Full {
    /// The cap.
    pub max: usize,
}

/// Every live session, by `MCP-Session-Id`.
#[derive(Default)]
pub(crate) struct Registry {
    /// Keyed by ids the server minted, as the streams are by numbers it
    /// allocated: FxHash, not SipHash (a client's id is only looked up,
    /// so it cannot crowd a bucket). Request ids, which clients choose,
    /// keep std's seeded SipHash.
    map: Mutex<FxHashMap<Arc<str>, Arc<Session>>>,
    /// The latest session's client: a new session whose client describes
    /// itself the same way shares its description.
    last_client: LastClient,
}

impl Registry {
    /// `client` as a new session keeps it: a description shared with the
    /// latest session's when both are equal (clients of one kind send the
    /// same `clientInfo` and capabilities, and a session only ever reads
    /// them), else its JSON text (see `client_info`).
    pub fn client(&self, client: &ClientDescription) -> ClientKeep {
        self.last_client.keep(client)
    }

    /// `session`'s client, as `initialize` described it (see
    /// `client_info`: shared, the latest kind's, or parsed now).
    pub fn described(&self, session: &Session) -> Arc<ClientDescription> {
        self.last_client.get(&session.client)
    }

    /// Registers a session unless `max` are already registered.
    pub fn insert(&self, session: Arc<Session>, max: usize) -> Result<(), Full> {
        let mut map = lock(&self.map);
        if map.len() >= max {
            return Err(Full { max });
        }
        map.insert(session.id.clone(), session);
        Ok(())
    }

    /// Registers a session unless one with its id is registered already
    /// (then that one is returned) or `max` are.
    pub fn insert_or_get(&self, session: Arc<Session>, max: usize) -> Result<Arc<Session>, Full> {
        let mut map = lock(&self.map);
        if let Some(s) = map.get(&session.id) {
            return Ok(s.clone());
        }
        if map.len() >= max {
            return Err(Full { max });
        }
        map.insert(session.id.clone(), session.clone());
        Ok(session)
    }

    /// The session with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.map).get(id).cloned()
    }

    /// Removes the session with this id.
    pub fn remove(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.map).remove(id)
    }

    /// The number of sessions.
    pub fn len(&self) -> usize {
        lock(&self.map).len()
    }

    /// Every session.
    pub fn all(&self) -> Vec<Arc<Session>> {
        lock(&self.map).values().cloned().collect()
    }

    /// The sessions expired at `now_ms`.
    pub fn expired(&self, now_ms: u64, timeout: Duration) -> Vec<Arc<Session>> {
        lock(&self.map)
            .values()
            .filter(|s| s.is_expired(now_ms, timeout))
            .cloned()
            .collect()
    }
}

/// How often the sweeper looks for idle sessions: a quarter of the timeout,
/// between 10 ms and 60 s.
pub(crate) fn sweep_interval(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(60))
}

/// Milliseconds from `epoch` to now.
pub(crate) fn millis_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
