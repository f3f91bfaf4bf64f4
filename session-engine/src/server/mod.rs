//! The legacy-era (session-based) Streamable HTTP server, for revisions
//! 2025-03-26, 2025-06-18 and 2025-11-25.
//!
//! # Use
//!
//! ```no_run
//! use std::sync::Arc;
//! use axum::serve::ListenerExt;
//! use mcp_session_engine::server::{LegacyServer, ServerConfig};
//! # async fn run(handler: Arc<dyn mcp_transport_core::handler::Handler>, revision: Arc<dyn mcp_session_engine::revision::SessionRevision>) -> std::io::Result<()> {
//! // `revision`: a revision crate's implementation, e.g.
//! // `mcp_rev_2025_11_25::Revision::default()`.
//! let config = ServerConfig::default()
//!     .with_versions([revision.version()])
//!     .with_revision(revision);
//! let server = LegacyServer::new(handler, config);
//! let app = axum::Router::new().nest_service("/mcp", server.router());
//! // Bind to loopback: the default Host/Origin checks allow only loopback
//! // names (see `ServerConfig::with_allowed_hosts`).
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000")
//!     .await?
//!     // TCP_NODELAY: SSE events are small writes; without it Nagle's
//!     // algorithm and delayed ACKs add ~40 ms to each.
//!     .tap_io(|tcp| {
//!         let _ = tcp.set_nodelay(true);
//!     });
//! axum::serve(listener, app).await
//! # }
//! ```
//!
//! [`LegacyServer::route`] mounts it at any path instead, and
//! [`LegacyServer::handle`] serves one request directly. The server is also
//! a `tower::Service<http::Request<B>>` (see [`LegacyServer`]), which is how
//! a dispatcher in front of several engines holds it.
//!
//! # One engine, three revisions
//!
//! `initialize` fixes a session's version and picks that version's
//! [`SessionRevision`](crate::revision::SessionRevision) from
//! [`ServerConfig::revisions`] (implemented by the revision crates); every
//! behaviour that differs by revision then asks it, never the version
//! string:
//!
//! | method | effect here |
//! | --- | --- |
//! | `polling` (2025-11-25, `mcp-rev-2025-11-25`) | priming event first on every new stream; the revision's `ConnectionPolicy` and `close_sse_stream` close connections early (after `retry`). Without it: no priming, never closed early, but events still carry ids ([`ServerConfig::event_ids`]) so they can be resumed |
//! | `batches` (2025-03-26, `mcp-rev-2025-03-26`) | a JSON array body is a batch, answered element by element (the `batch` module: 202, one JSON array, or one SSE stream with one event per message); elsewhere it is 400 `-32600` "batches ended with 2025-03-26" |
//! | `version_header` | a missing `MCP-Protocol-Version` is served at the session's version (logged where the revision defines the header); a malformed or unsupported one, one naming another version than the session's, or two that differ, is 400 on every revision |
//! | `elicitation` | `elicitation/create` input requests are refused before 2025-06-18 |
//!
//! # Architecture
//!
//! | module | concern |
//! | --- | --- |
//! | `config` | [`ServerConfig`] |
//! | `checks` | session and version headers (`Origin`, `Host`, `Accept`, `Content-Type` are checked at the edge, `mcp_http_edge`) |
//! | `reply` | the batch answer; the other HTTP responses are the edge's |
//! | `session` | sessions, their registry, idle expiry |
//! | `initialize` | negotiation and session creation |
//! | `post` | POST checks and per-message dispatch |
//! | `batch` | JSON-RPC batches (2025-03-26): element rules, one answer for the batch |
//! | `group` | a batch's requests as a group: one stream or collected responses |
//! | `open` | opening a request stream (store, session) |
//! | `request` | running a request in its task; cancellation |
//! | `outlet` | a request's `RequestSink`: JSON or SSE, backpressure |
//! | `input` | server-to-client requests for `Outcome::InputRequired` |
//! | `stream` | the small live state of a stream |
//! | `connection` | an SSE connection: a cursor over the event log |
//! | `get` | standalone streams and resumption |
//! | `delete` | session termination |
//! | `drain` | ending SSE connections before a shutdown |
//! | `cluster` | sessions shared with other instances: adoption from the `SessionStore`, its expiry, signals |
//!
//! Every message event is appended to the `EventStore` first and delivered
//! from there, so live delivery and replay are one path.
//!
//! # HTTP status mapping
//!
//! Every error response carries a JSON-RPC error without id whose message
//! says what was wrong; the server keeps serving after each.
//!
//! | status | when |
//! | --- | --- |
//! | 200 | JSON answer (a JSON array for a batch), or an SSE stream |
//! | 202 | a notification or response, or a batch of only those, was accepted |
//! | 204 | DELETE ended the session |
//! | 400 | unparsable JSON (`-32700`), non-conforming message, empty batch, batch longer than `max_batch_len`, or batch where none is allowed (`-32600`), missing `MCP-Session-Id`, `initialize` with one, bad `MCP-Protocol-Version` (malformed, unsupported, not the session's, or two that differ), request id already in flight, malformed / foreign / unknown `Last-Event-ID` |
//! | 403 | `Origin` or `Host` not allowed; two `Origin` or `Host` headers; an absolute-form target naming a host not allowed |
//! | 404 | unknown, expired or terminated session |
//! | 405 | GET without `Last-Event-ID` when `get_stream` is off; DELETE when `allow_delete` is off; other methods |
//! | 406 | `Accept` lacks a required type |
//! | 409 | a second concurrent standalone GET |
//! | 410 | `Last-Event-ID` whose following events were evicted |
//! | 408 | the body stalled past the connection's body-read timeout (`mcp_http_edge::server::serve`) |
//! | 413 | body over `max_body_bytes` (before reading when `Content-Length` says so) |
//! | 415 | `Content-Type` is not `application/json` |
//! | 500 | event store failure |
//! | 503 | `max_sessions` reached; no stream could be opened; `running` reached (too many requests running across sessions, or their bytes: `-32603` with the request's id, before its handler runs) |
//!
//! JSON-RPC-level errors (invalid `initialize` params, unsupported version,
//! handler errors) are ordinary error *responses* with the request's id.
//!
//! # Decisions where the spec leaves room
//!
//! * `Accept: */*` counts as listing both types; `application/*` as JSON,
//!   `text/*` as SSE; a range with `q=0` as absent.
//! * Until `logging/setLevel`, a session's log level is `debug` (every
//!   message is sent): the logging utility lets servers log without it.
//! * A client response whose id no server-to-client request awaits (late
//!   after a timeout, or unknown) is accepted with 202 and logged, like the
//!   cancellation races the *Cancellation* page asks to tolerate.
//! * A server-to-client request the client declared no capability for
//!   answers the originating request with `-32021` naming the capability;
//!   one the session's revision does not have (`elicitation/create` before
//!   2025-06-18) ends a `tools/call` with a tool execution error
//!   (`isError: true`) and any other request with `-32021`.
//! * The transport's own answers (`initialize`, `ping`,
//!   `logging/setLevel`) are always JSON.
//! * A cancelled request's stream ends without a response; in
//!   `json_response` mode the POST is answered by an SSE body that ends at
//!   once.

mod batch;
mod checks;
mod client_info;
mod cluster;
mod config;
mod connection;
mod delete;
mod drain;
mod fanout;
mod get;
mod group;
mod held_lease;
mod initialize;
mod input;
mod lease;
mod open;
mod outlet;
mod post;
mod reply;
mod request;
mod session;
mod stream;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use axum::body::Body;
use bytes::Bytes;
use http::{Method, StatusCode};
use mcp_transport_core::admission::Admission;
use mcp_transport_core::handler::Handler;
use mcp_transport_core::jsonrpc::{Message, Notification};

pub use config::{DEFAULT_MAX_BATCH_LEN, DEFAULT_SSE_WRITE_TIMEOUT, ServerConfig};

use reply::Reject;
use session::{Registry, Session, millis_since, sweep_interval};

/// State shared by every request of one server.
pub(crate) struct Shared {
    pub handler: Arc<dyn Handler>,
    pub config: ServerConfig,
    pub sessions: Registry,
    epoch: Instant,
    sweeper_running: AtomicBool,
    /// Set by [`LegacyServer::drain`]: polling connections close at once.
    pub draining: AtomicBool,
    /// Whether the signal listener task runs (`cluster`).
    listener_running: AtomicBool,
    /// Fired when the server is dropped: the signal listener ends.
    stop: tokio_util::sync::CancellationToken,
    /// A random id naming this instance in its broadcasts (`fanout`).
    pub origin: String,
    /// The requests running, against [`ServerConfig::running`].
    pub admission: Arc<Admission>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Shared {
    /// Milliseconds since the server started.
    pub fn now_ms(&self) -> u64 {
        millis_since(self.epoch)
    }

    /// The live session with this id; an idle-expired one is ended here
    /// (lazily, in case the sweeper has not come by yet). With a shared
    /// session store the store decides (and a session another instance
    /// created is adopted: see `cluster`); 503 when it is out of reach.
    pub async fn lookup(self: &Arc<Self>, id: &str) -> Result<Option<Arc<Session>>, Reject> {
        if let Some(store) = &self.config.session_store {
            return cluster::lookup(self, store.as_ref(), id).await;
        }
        let Some(s) = self.sessions.get(id) else {
            return Ok(None);
        };
        if s.is_expired(self.now_ms(), self.config.session_idle_timeout) {
            self.terminate(&s).await;
            return Ok(None);
        }
        Ok(Some(s))
    }

    /// The principal of a request, when sessions are bound to principals
    /// ([`ServerConfig::principal`]).
    pub fn principal_of(&self, parts: &http::request::Parts) -> Option<String> {
        self.config.principal.as_ref().and_then(|f| f(parts))
    }

    /// [`lookup`](Self::lookup) on behalf of the request `parts`: a session
    /// bound to another principal is not found (404, as if it did not
    /// exist; it goes on for its own principal).
    pub async fn lookup_for(
        self: &Arc<Self>,
        id: &str,
        parts: &http::request::Parts,
    ) -> Result<Option<Arc<Session>>, Reject> {
        let session = self.lookup(id).await?;
        if self.config.principal.is_none() {
            return Ok(session);
        }
        let caller = self.principal_of(parts);
        Ok(session.filter(|s| {
            let same = s.principal == caller;
            if !same {
                tracing::debug!(session = %s.id, "a request from another principal names the session: 404");
            }
            same
        }))
    }

    /// The session named by `MCP-Session-Id`, with the protocol version
    /// header checked: 400 without the header, 404 for an unknown session
    /// or one bound to another principal.
    pub async fn require_session(
        self: &Arc<Self>,
        parts: &http::request::Parts,
    ) -> Result<Arc<Session>, Reject> {
        let headers = checks::SessionHeaders::of(&parts.headers);
        let Some(id) = headers.session_id()? else {
            return Err(Reject::invalid(
                StatusCode::BAD_REQUEST,
                "Bad Request: the MCP-Session-Id header is required (send initialize first)",
            ));
        };
        let Some(session) = self.lookup_for(id, parts).await? else {
            return Err(post::not_found(self, id));
        };
        headers.check_protocol_version(&session, &self.config)?;
        session.touch(self.now_ms());
        Ok(session)
    }

    /// Ends a session: removed from the registry, the shared session store
    /// (if any) and the event store, its connections closed, its requests
    /// cancelled.
    pub async fn terminate(&self, session: &Arc<Session>) {
        self.forget_local(session);
        if let Some(store) = &self.config.session_store
            && let Err(e) = store.remove(&session.id).await
        {
            tracing::warn!(session = %session.id, error = %e, "could not remove the session from the shared store");
        }
        if let Err(e) = self.config.event_store.remove_session(&session.tag).await {
            tracing::warn!(session = %session.id, error = %e, "could not remove the session's event log");
        }
    }

    /// Ends this instance's copy of a session only: out of the registry,
    /// its local activity ended; what is shared (the store's record, the
    /// event log) stays for the other instances.
    pub fn forget_local(&self, session: &Arc<Session>) {
        if let Some(s) = self.sessions.remove(&session.id)
            && !Arc::ptr_eq(&s, session)
        {
            // A different session with the same id cannot exist (ids are
            // random); put it back to be safe.
            let _ = self.sessions.insert(s, usize::MAX);
        }
        session.shut_down();
    }

    /// Starts the single sweeper task that ends idle sessions, unless it
    /// runs. It stops by itself when no session is left (or the server is
    /// dropped), so an idle server owns no task.
    pub fn ensure_sweeper(self: &Arc<Self>) {
        if self.sweeper_running.swap(true, Ordering::AcqRel) {
            return;
        }
        let weak = Arc::downgrade(self);
        let every = sweep_interval(self.config.session_idle_timeout);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(shared) = weak.upgrade() else { return };
                let timeout = shared.config.session_idle_timeout;
                if let Some(store) = shared.config.session_store.clone() {
                    cluster::sweep(&shared, store.as_ref()).await;
                } else {
                    for s in shared.sessions.expired(shared.now_ms(), timeout) {
                        tracing::debug!(session = %s.id, "session expired (idle)");
                        shared.terminate(&s).await;
                    }
                }
                if shared.sessions.len() == 0 {
                    shared.sweeper_running.store(false, Ordering::Release);
                    // A session inserted meanwhile may have seen the flag
                    // still set: take the job back if so.
                    if shared.sessions.len() == 0
                        || shared.sweeper_running.swap(true, Ordering::AcqRel)
                    {
                        return;
                    }
                }
            }
        });
    }

    /// Appends a server-initiated message to a session's current standalone
    /// stream (holding the slot, so a fresh GET cannot replace the stream
    /// in the middle).
    async fn notify(&self, session: &Session, message: &Message) -> bool {
        let slot = session.standalone().lock().await;
        let Some(state) = slot.as_ref() else {
            return false;
        };
        state
            .append(
                self.config.event_store.as_ref(),
                &session.tag,
                Bytes::from(message.to_json()),
            )
            .await
            .is_ok()
    }
}

/// The legacy-era Streamable HTTP server. Cheap to clone (a handle).
///
/// It is a `tower::Service<http::Request<B>>` for any axum-compatible body
/// `B` (`Response = http::Response<axum::body::Body>`, `Error =
/// Infallible`), so it can be driven in memory or wrapped in tower
/// middleware; [`router`](Self::router) mounts it in axum.
///
/// See the [module documentation](self) for behaviour and status codes.
#[derive(Clone)]
pub struct LegacyServer {
    shared: Arc<Shared>,
}

mcp_http_edge::impl_engine_service!(LegacyServer);
mcp_http_edge::impl_engine_router!(LegacyServer);

impl fmt::Debug for LegacyServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LegacyServer")
            .field("config", &self.shared.config)
            .field("sessions", &self.shared.sessions.len())
            .finish()
    }
}

impl LegacyServer {
    /// A server answering with `handler`. Needs no runtime until it serves.
    pub fn new(handler: Arc<dyn Handler>, config: ServerConfig) -> Self {
        let admission = Admission::new(config.running);
        Self::with_admission(handler, config, admission)
    }

    /// A server answering with `handler` whose running requests are
    /// counted against `admission`, which other servers may share: one
    /// bound on running work for all of them (a dual-era endpoint's two
    /// engines, several endpoints of one process). The admission's limits
    /// replace [`ServerConfig::running`] (which [`config`](Self::config)
    /// then reports).
    pub fn with_admission(
        handler: Arc<dyn Handler>,
        mut config: ServerConfig,
        admission: Arc<Admission>,
    ) -> Self {
        config.running = admission.limits();
        if config.served_versions().is_empty() {
            tracing::warn!(
                versions = %mcp_transport_core::version::list(&config.versions),
                "ServerConfig::versions names no legacy Streamable HTTP revision with an implementation in ServerConfig::revisions; every initialize will fail"
            );
        }
        for v in &config.versions {
            if v.is_legacy() && config.revision(v).is_none() {
                tracing::warn!(version = %v, "ServerConfig::versions names a version without an implementation in ServerConfig::revisions; it is not served");
            }
        }
        LegacyServer {
            shared: Arc::new(Shared {
                handler,
                config,
                admission,
                sessions: Registry::default(),
                epoch: Instant::now(),
                sweeper_running: AtomicBool::new(false),
                draining: AtomicBool::new(false),
                listener_running: AtomicBool::new(false),
                stop: tokio_util::sync::CancellationToken::new(),
                origin: format!("{:032x}", rand::random::<u128>()),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.shared.config
    }

    /// Requests whose handlers run now, across all sessions (counted
    /// against [`ServerConfig::running`]), with or without a connection.
    pub fn running_requests(&self) -> usize {
        self.shared.admission.running()
    }

    /// Serves one HTTP request to the MCP endpoint (POST, GET or DELETE;
    /// anything else is 405). `Origin` and `Host` are checked first.
    ///
    /// A [`Message`] in the request's extensions is taken as the POST's
    /// body already parsed (see [`handle_parsed`](Self::handle_parsed),
    /// which hands it over without the extensions).
    pub async fn handle(&self, req: http::Request<Body>) -> http::Response<Body> {
        self.handle_parsed(req, None).await
    }

    /// [`handle`](Self::handle), for a dispatcher that has parsed the
    /// POST's body already (`mcp_negotiate`): `parsed` must be that body's
    /// one request or notification as `jsonrpc::parse_single` returns it
    /// (a `Message` converts into one), and the engine does not parse the
    /// body again (this engine does not use its params' index). Handed
    /// over here rather than in the request's extensions: a request pending between
    /// SEP-1699 polls keeps a copy of the extensions
    /// ([`RequestContext::http`](mcp_transport_core::handler::RequestContext::http)),
    /// and one more entry there grows their table for as long as it runs.
    ///
    /// Not an `async fn`: the request is split into its parts and body
    /// before the future is made, so the future holds them as its own
    /// fields (an `async fn` would hold the request as well, and copy each
    /// argument into a local besides).
    pub fn handle_parsed(
        &self,
        req: http::Request<Body>,
        parsed: Option<mcp_transport_core::jsonrpc::Parsed>,
    ) -> impl Future<Output = http::Response<Body>> + Send + '_ {
        // Split before the future: split inside, the request would stay
        // in the future as its field beside the parts as a local (224
        // bytes more in every state, copied with it).
        let (mut parts, body) = req.into_parts();
        async move {
            let shared = &self.shared;
            if let Err(r) = shared.config.http.origins.check(&parts) {
                return r.response();
            }
            match parts.method {
                Method::POST => {
                    // A message parsed in front and put in the extensions is
                    // taken out before the parts are kept for the handler, so
                    // it is neither cloned nor retained.
                    let parsed = parsed.or_else(|| {
                        parts
                            .extensions
                            .remove::<Message>()
                            .map(mcp_transport_core::jsonrpc::Parsed::from)
                    });
                    let http = Arc::new(request::kept_head(&mut parts));
                    request::HTTP_PARTS
                        .scope(http, post::post(shared, parts, parsed, body))
                        .await
                }
                Method::GET => get::get(shared, &parts).await,
                Method::DELETE => delete::delete(shared, &parts).await,
                _ => reply::method_not_allowed(
                    "GET, POST, DELETE",
                    format!(
                        "Method Not Allowed: the MCP endpoint answers POST, GET and DELETE, not {}",
                        parts.method
                    ),
                ),
            }
        }
    }

    /// The number of live sessions.
    pub fn session_count(&self) -> usize {
        self.shared.sessions.len()
    }

    /// The ids of the live sessions.
    pub fn session_ids(&self) -> Vec<String> {
        self.shared
            .sessions
            .all()
            .iter()
            .map(|s| s.id.to_string())
            .collect()
    }

    /// Ends one session (as if the client had sent DELETE); `false` if it
    /// does not exist. Later requests with its id get 404.
    pub async fn terminate_session(&self, id: &str) -> bool {
        match self.shared.sessions.get(id) {
            Some(s) => {
                self.shared.terminate(&s).await;
                true
            }
            None => false,
        }
    }

    /// Ends every session; returns how many there were.
    pub async fn terminate_all(&self) -> usize {
        let all = self.shared.sessions.all();
        for s in &all {
            self.shared.terminate(s).await;
        }
        all.len()
    }

    /// Sends a server-initiated notification, unrelated to any request, on
    /// one session's current standalone GET stream (the one the latest
    /// fresh GET opened). It is logged there, and so delivered on resume,
    /// even while no connection is attached; before the first GET there is
    /// nowhere to send it and this returns `false`. Never sent on a request
    /// stream, and never moved to a later standalone stream: a fresh GET
    /// opens a new stream, and what was logged on the old one stays
    /// resumable by its `Last-Event-ID`.
    pub async fn notify_session(&self, id: &str, notification: &Notification) -> bool {
        match self.shared.lookup(id).await.ok().flatten() {
            Some(s) => {
                self.shared
                    .notify(&s, &Message::Notification(notification.clone()))
                    .await
            }
            None => false,
        }
    }

    /// [`notify_session`](Self::notify_session) for every session; returns
    /// on how many (current) standalone streams of this instance it was
    /// logged. With [`ServerConfig::signals`] it is also published to the
    /// other instances, which log it on the standalone streams they hold
    /// (not counted here).
    pub async fn notify_all(&self, notification: &Notification) -> usize {
        let n = fanout::notify_local(&self.shared, notification).await;
        fanout::broadcast(&self.shared, notification).await;
        n
    }

    /// How many sessions have a standalone GET stream on this instance
    /// (where [`notify_all`](Self::notify_all) logs here).
    pub async fn standalone_streams(&self) -> usize {
        let mut n = 0;
        for s in self.shared.sessions.all() {
            if s.standalone().lock().await.is_some() {
                n += 1;
            }
        }
        n
    }
}
