//! [`ServerConfig`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_http_edge::config::ServerHttp;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::admission::RunLimits;
use mcp_transport_core::event_log::{DEFAULT_MAX_SESSIONS, EventStore, MemoryEventStore};
use mcp_transport_core::handler::PrincipalFn;
use mcp_transport_core::lease::Leases;
use mcp_transport_core::session_store::{SessionStore, SignalBus};

use crate::revision::SessionRevision;

/// Configuration of a [`LegacyServer`](super::LegacyServer).
///
/// Every field has a documented default ([`ServerConfig::default`]); the
/// `with_*` methods set one field each.
///
/// # Binding somewhere other than loopback
///
/// By default the server accepts only requests whose `Host` header names a
/// loopback address (`localhost`, `127.0.0.1`, `[::1]`, any port) and whose
/// `Origin` (when present) is a loopback origin: the DNS-rebinding
/// protection the *Transports* page's "Security Warning" asks for. A server
/// reachable under another name **must** set
/// [`with_allowed_hosts`](Self::with_allowed_hosts) (and, for browser
/// clients, [`with_allowed_origins`](Self::with_allowed_origins)), or every
/// request gets 403 (see [`mcp_http_edge::config::OriginPolicy`]).
#[derive(Clone)]
pub struct ServerConfig {
    /// The legacy revisions served, negotiated at `initialize` with
    /// `negotiation::legacy_server_select`. A version is served only when
    /// [`revisions`](Self::revisions) holds its implementation; others are
    /// ignored (with a warning when the server is built).
    /// Default: `[2025-11-25]`.
    pub versions: Vec<ProtocolVersion>,
    /// The revision implementations this server may negotiate, at most one
    /// per version (see [`crate::revision`]): `mcp-rev-2025-11-25` for
    /// 2025-11-25, `mcp-rev-2025-03-26` for 2025-03-26 and 2025-06-18. The
    /// engine itself knows none, so the default is empty: start from a
    /// revision crate's `server_config()`, or add them with
    /// [`with_revision`](Self::with_revision). Versions listed here but not
    /// in [`versions`](Self::versions) are not served.
    pub revisions: Vec<Arc<dyn SessionRevision>>,
    /// Answer a request with `application/json` unless the handler sends a
    /// related message (or needs client input) before its result, in which
    /// case the answer becomes an SSE stream. When `false` (the default)
    /// every handler request is answered with an SSE stream. The
    /// transport's own answers (`initialize`, `ping`, `logging/setLevel`)
    /// are always JSON.
    pub json_response: bool,
    /// Offer the standalone `GET` stream. When `false`, a `GET` without
    /// `Last-Event-ID` gets 405 (*Transports*, "Listening for Messages from
    /// the Server" 3). Default `true`.
    pub get_stream: bool,
    /// Let clients end their session with `DELETE`; when `false` it is 405
    /// (*Transports*, "Session Management" 5). Default `true`.
    pub allow_delete: bool,
    /// Give SSE events ids (and so make them resumable) on sessions without
    /// SEP-1699 polling. Polling sessions always get ids (SEP-1699 needs
    /// them). Default `true`.
    pub event_ids: bool,
    /// What is checked at the HTTP edge: the `Origin`/`Host` allowlists
    /// (loopback only by default; servers bound to another interface must
    /// set `allowed_hosts`) and the largest POST body (larger is 413;
    /// default 4 MiB).
    pub http: ServerHttp,
    /// A session with no request, no running request and no open connection
    /// for this long is ended (one sweeper task for all sessions, plus a
    /// check on lookup). Default 30 minutes.
    pub session_idle_timeout: Duration,
    /// The most sessions at once; one more `initialize` gets 503.
    /// Default [`DEFAULT_MAX_SESSIONS`] (4,096), the default
    /// [`MemoryEventStore`]'s cap too: one number. With a custom store, the
    /// lower of the two caps is the one that applies.
    pub max_sessions: usize,
    /// Send an SSE comment on a connection idle this long, so proxies and
    /// clients see it alive. `None` disables. Default 15 s.
    pub keepalive: Option<Duration>,
    /// How long a handler's server-to-client request (sampling, elicitation,
    /// roots) waits for the client's answer. Default 60 s.
    pub client_request_timeout: Duration,
    /// At most this many events of a stream may be undelivered while a
    /// connection is attached; a handler's `send` then waits
    /// (backpressure). While no connection is attached, events are retained
    /// up to the event store's window instead. Default 64; at least 1.
    ///
    /// Keep it below the store's per-stream retention (1024 events for the
    /// default [`MemoryEventStore`]): a connection reads live events from the
    /// store, so a queue longer than the store's window could let a slow
    /// connection fall behind what is retained (it is then closed, and its
    /// resume is 410 Gone).
    pub stream_queue: usize,
    /// How long an attached connection may take no event while its queue
    /// ([`stream_queue`](Self::stream_queue)) is full — a client that
    /// stopped reading — before it stops holding the handler: it is
    /// detached and asked to close (a polling session's connection gets
    /// `retry`, SEP-1699, when it is next written to), and the handler's
    /// events go on into the event log up to its bounds, for a resume.
    /// `None` lets a stalled reader hold the handler. Default 30 s.
    pub sse_write_timeout: Option<Duration>,
    /// At most this many server-to-client requests may await an answer per
    /// session. Default 64.
    pub max_pending_client_requests: usize,
    /// Where every SSE message event is logged for delivery and replay.
    /// Default: a [`MemoryEventStore`] with its default limits.
    pub event_store: Arc<dyn EventStore>,
    /// How many times one request may return `Outcome::InputRequired`
    /// before it is answered with an error. Default 8.
    pub max_input_rounds: u32,
    /// The most elements one JSON-RPC batch may hold (2025-03-26 sessions,
    /// the only ones whose revision has batches); a longer batch is answered
    /// 400 with `-32600` and nothing in it is processed. JSON-RPC 2.0 sets
    /// no bound; this one keeps one POST from starting an unbounded number
    /// of handler tasks. Default [`DEFAULT_MAX_BATCH_LEN`]; at least 1.
    pub max_batch_len: usize,
    /// Where session records are shared with other instances of this
    /// server (several instances behind a load balancer). With one, an
    /// instance serves a session another created: the first request
    /// carrying its `MCP-Session-Id` adopts the record (revision, client
    /// description, event-log tag); every request touches it (idle expiry
    /// is the store's); `DELETE` removes it everywhere. Give every instance
    /// the same [`event_store`](Self::event_store) too (shared, e.g.
    /// Redis), and a [`signals`](Self::signals) bus. Default `None`:
    /// sessions live in this process only.
    pub session_store: Option<Arc<dyn SessionStore>>,
    /// How instances sharing sessions reach the one running a request: a
    /// `notifications/cancelled`, or the client's answer to a
    /// server-to-client request, that arrives where nothing waits for it is
    /// published here and acted on by the instance that holds the request.
    /// Default `None`.
    pub signals: Option<Arc<dyn SignalBus>>,
    /// Names the principal of each request. When set, a session belongs to
    /// the principal of its `initialize` (kept in the shared session record
    /// too), and a request naming it from any other principal — or from
    /// none — is answered 404, as if the session did not exist (*Security
    /// Best Practices*, "Session Hijacking": "bind session IDs to
    /// user-specific information"). 2025-11-25 tasks belong to their
    /// session, so they are bound with it. Default `None`: not bound.
    pub principal: Option<PrincipalFn>,
    /// Liveness across instances: the instance running a request holds a
    /// lease on its SSE stream, renewed while it runs; an instance
    /// following that stream for a resumed client (a stream another
    /// instance writes) that finds the lease lapsed — the writer died —
    /// takes it over (one instance wins) and ends the stream with a
    /// `-32603` error response for each request still unanswered on it.
    /// Give every instance sharing sessions the same shared lease store.
    /// Default `None`: no lease is kept, which behaves as the in-process
    /// `MemoryLeaseStore` does (in one process a request's runner and its
    /// followers live and die together) without its bookkeeping.
    pub leases: Option<Leases>,
    /// How many requests may run at once across all sessions, and how many
    /// bytes of requests they may keep ([`RunLimits`]): a request over
    /// either is answered 503 (`Retry-After: 1`) with a `-32603` naming
    /// the limit (one element of a batch gets that error in the batch's
    /// answer), before its handler runs. A request keeps its place until
    /// its handler ends, also while no connection is attached (SEP-1699
    /// polling; a disconnect is not a cancellation). Handlers see this bound as
    /// `RequestContext::admission`, where work they start that outlives
    /// the request takes a place of its own (a 2025-11-25 task's worker).
    /// Default [`RunLimits::default`]: 16,384 requests, 256 MiB.
    pub running: RunLimits,
}

/// The default [`ServerConfig::sse_write_timeout`]: 30 s.
pub const DEFAULT_SSE_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// The default [`ServerConfig::max_batch_len`]: 64 elements.
pub const DEFAULT_MAX_BATCH_LEN: usize = 64;

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            versions: vec![ProtocolVersion::V2025_11_25],
            revisions: Vec::new(),
            json_response: false,
            get_stream: true,
            allow_delete: true,
            event_ids: true,
            http: ServerHttp::default(),
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: DEFAULT_MAX_SESSIONS,
            keepalive: Some(Duration::from_secs(15)),
            client_request_timeout: Duration::from_secs(60),
            stream_queue: 64,
            max_pending_client_requests: 64,
            sse_write_timeout: Some(DEFAULT_SSE_WRITE_TIMEOUT),
            event_store: Arc::new(MemoryEventStore::default()),
            max_input_rounds: 8,
            max_batch_len: DEFAULT_MAX_BATCH_LEN,
            session_store: None,
            signals: None,
            principal: None,
            leases: None,
            running: RunLimits::default(),
        }
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("versions", &self.versions)
            .field("revisions", &self.revisions)
            .field("json_response", &self.json_response)
            .field("get_stream", &self.get_stream)
            .field("allow_delete", &self.allow_delete)
            .field("event_ids", &self.event_ids)
            .field("http", &self.http)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("keepalive", &self.keepalive)
            .field("client_request_timeout", &self.client_request_timeout)
            .field("stream_queue", &self.stream_queue)
            .field("sse_write_timeout", &self.sse_write_timeout)
            .field(
                "max_pending_client_requests",
                &self.max_pending_client_requests,
            )
            .field("max_input_rounds", &self.max_input_rounds)
            .field("max_batch_len", &self.max_batch_len)
            .field("shared_sessions", &self.session_store.is_some())
            .field("signals", &self.signals.is_some())
            .field("principal", &self.principal.as_ref().map(|_| "<fn>"))
            .field("leases", &self.leases)
            .field("running", &self.running)
            .finish_non_exhaustive()
    }
}

mcp_http_edge::impl_server_setters!(ServerConfig);
mcp_transport_core::impl_running_setters!(ServerConfig);

impl ServerConfig {
    /// Sets [`versions`](Self::versions).
    pub fn with_versions(mut self, versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.versions = versions.into_iter().collect();
        self
    }

    /// Adds a revision implementation to [`revisions`](Self::revisions),
    /// replacing the one of the same version. The version is served only
    /// if [`versions`](Self::versions) lists it.
    pub fn with_revision(mut self, revision: Arc<dyn SessionRevision>) -> Self {
        let v = revision.version();
        self.revisions.retain(|r| r.version() != v);
        self.revisions.push(revision);
        self
    }

    /// The implementation of `version` in [`revisions`](Self::revisions).
    pub fn revision(&self, version: &ProtocolVersion) -> Option<&Arc<dyn SessionRevision>> {
        self.revisions.iter().find(|r| &r.version() == version)
    }

    /// Sets [`json_response`](Self::json_response).
    pub fn with_json_response(mut self, on: bool) -> Self {
        self.json_response = on;
        self
    }

    /// Sets [`get_stream`](Self::get_stream).
    pub fn with_get_stream(mut self, on: bool) -> Self {
        self.get_stream = on;
        self
    }

    /// Sets [`allow_delete`](Self::allow_delete).
    pub fn with_allow_delete(mut self, on: bool) -> Self {
        self.allow_delete = on;
        self
    }

    /// Sets [`event_ids`](Self::event_ids).
    pub fn with_event_ids(mut self, on: bool) -> Self {
        self.event_ids = on;
        self
    }

    /// Sets [`session_idle_timeout`](Self::session_idle_timeout).
    pub fn with_session_idle_timeout(mut self, d: Duration) -> Self {
        self.session_idle_timeout = d;
        self
    }

    /// Sets [`sse_write_timeout`](Self::sse_write_timeout).
    pub fn with_sse_write_timeout(mut self, t: Option<Duration>) -> Self {
        self.sse_write_timeout = t;
        self
    }

    /// Sets [`max_sessions`](Self::max_sessions).
    pub fn with_max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// Sets [`keepalive`](Self::keepalive).
    pub fn with_keepalive(mut self, d: Option<Duration>) -> Self {
        self.keepalive = d;
        self
    }

    /// Sets [`client_request_timeout`](Self::client_request_timeout).
    pub fn with_client_request_timeout(mut self, d: Duration) -> Self {
        self.client_request_timeout = d;
        self
    }

    /// Sets [`stream_queue`](Self::stream_queue).
    pub fn with_stream_queue(mut self, n: usize) -> Self {
        self.stream_queue = n;
        self
    }

    /// Sets [`event_store`](Self::event_store).
    pub fn with_event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        self.event_store = store;
        self
    }

    /// Sets [`max_input_rounds`](Self::max_input_rounds).
    pub fn with_max_input_rounds(mut self, n: u32) -> Self {
        self.max_input_rounds = n;
        self
    }

    /// Sets [`max_batch_len`](Self::max_batch_len) (0 is taken as 1).
    pub fn with_max_batch_len(mut self, n: usize) -> Self {
        self.max_batch_len = n.max(1);
        self
    }

    /// Sets [`session_store`](Self::session_store).
    pub fn with_session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.session_store = Some(store);
        self
    }

    /// Sets [`principal`](Self::principal).
    pub fn with_principal(mut self, principal: PrincipalFn) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Sets [`signals`](Self::signals).
    pub fn with_signals(mut self, bus: Arc<dyn SignalBus>) -> Self {
        self.signals = Some(bus);
        self
    }

    /// Sets [`leases`](Self::leases).
    pub fn with_leases(mut self, leases: Leases) -> Self {
        self.leases = Some(leases);
        self
    }

    /// The configured versions that this engine can serve: legacy
    /// Streamable HTTP revisions with sessions, with an implementation in
    /// [`revisions`](Self::revisions).
    pub(crate) fn served_versions(&self) -> Vec<ProtocolVersion> {
        self.served_revisions()
            .iter()
            .map(|r| r.version())
            .collect()
    }

    /// The implementations of the served versions, in the order of
    /// [`versions`](Self::versions).
    pub(crate) fn served_revisions(&self) -> Vec<Arc<dyn SessionRevision>> {
        self.versions
            .iter()
            .filter(|v| {
                v.is_legacy()
                    && v.has(|f| {
                        f.sessions
                            && f.http_transport
                                == mcp_transport_core::version::HttpTransport::StreamableHttp
                    })
            })
            .filter_map(|v| self.revision(v).cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::revision::Plain;

    #[test]
    fn served_versions_are_legacy_streamable_and_implemented() {
        let mut c = ServerConfig::default();
        for v in [
            ProtocolVersion::V2024_11_05,
            ProtocolVersion::V2025_03_26,
            ProtocolVersion::V2025_11_25,
            ProtocolVersion::V2026_07_28,
        ] {
            c = c.with_revision(Arc::new(Plain(v)));
        }
        let c = c.with_versions([
            ProtocolVersion::V2025_06_18,
            ProtocolVersion::V2024_11_05,
            ProtocolVersion::V2025_03_26,
            ProtocolVersion::V2025_11_25,
            ProtocolVersion::V2026_07_28,
            ProtocolVersion::parse("2025-01-01"),
        ]);
        // 2025-06-18 has no implementation here; 2024-11-05 and 2026-07-28
        // are not session-based Streamable HTTP.
        assert_eq!(
            c.served_versions(),
            [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_11_25]
        );
        assert!(ServerConfig::default().served_versions().is_empty());
    }

    #[test]
    fn with_revision_replaces_the_same_version() {
        let c = ServerConfig::default()
            .with_revision(Arc::new(Plain(ProtocolVersion::V2025_11_25)))
            .with_revision(Arc::new(Plain(ProtocolVersion::V2025_11_25)));
        assert_eq!(c.revisions.len(), 1);
    }

    #[test]
    fn each_setter_sets_its_field() {
        let secs = Duration::from_secs;
        let c = ServerConfig::default()
            .with_json_response(true)
            .with_get_stream(false)
            .with_allow_delete(false)
            .with_event_ids(false)
            .with_session_idle_timeout(secs(5))
            .with_sse_write_timeout(Some(secs(6)))
            .with_max_sessions(7)
            .with_keepalive(None)
            .with_client_request_timeout(secs(8))
            .with_stream_queue(9)
            .with_max_input_rounds(10)
            .with_max_batch_len(11);
        assert!(c.json_response && !c.get_stream && !c.allow_delete && !c.event_ids);
        assert_eq!(c.session_idle_timeout, secs(5));
        assert_eq!(c.sse_write_timeout, Some(secs(6)));
        assert_eq!(c.max_sessions, 7);
        assert_eq!(c.keepalive, None);
        assert_eq!(c.client_request_timeout, secs(8));
        assert_eq!(c.stream_queue, 9);
        assert_eq!(c.max_input_rounds, 10);
        assert_eq!(c.max_batch_len, 11);
        // A batch of at most none would refuse every batch: 0 is 1.
        assert_eq!(c.with_max_batch_len(0).max_batch_len, 1);
        let off = ServerConfig::default().with_sse_write_timeout(None);
        assert_eq!(off.sse_write_timeout, None);
    }

    /// Issue 13 (5): the engine's session cap and the default store's are
    /// one number.
    #[test]
    fn one_session_cap() {
        let store = mcp_transport_core::event_log::MemoryEventStoreConfig::default();
        assert_eq!(ServerConfig::default().max_sessions, store.max_sessions);
        assert_eq!(store.max_sessions, DEFAULT_MAX_SESSIONS);
    }
}
