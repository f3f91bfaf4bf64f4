//! The multi-revision server: one endpoint, every configured revision.
//!
//! Each engine is a `tower::Service` (see `mcp_http_edge::server::service`);
//! the server holds them boxed, by era, and forwards each request, after
//! [`route()`] picked the era, to that era's service. The server is itself a
//! `tower::Service<http::Request<B>>`, so it can be driven in memory
//! (`tower::ServiceExt::oneshot`) as well as mounted with
//! [`MultiServer::router`] or [`MultiServer::route`].
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use mcp_negotiate::server::{MultiConfig, MultiServer};
//! # async fn demo(handler: Arc<dyn mcp_transport_core::handler::Handler>) -> std::io::Result<()> {
//! let server = MultiServer::new(handler, MultiConfig::all());
//! let app = server.route("/mcp");
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! axum::serve(listener, app).await
//! # }
//! ```

pub mod route;

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::response::IntoResponse;
use http::{Request, Response, StatusCode};
use mcp_http_edge::header_scan::{self, Seen};
use mcp_http_edge::headers;
use mcp_http_edge::server::service;
use mcp_http_edge::server::span_body::SpanBody;
use mcp_http_edge::server::{Endpoint, read_body};
use mcp_rev_2026_07_28::server::{ModernConfig, ModernServer};
use mcp_session_engine::server::{LegacyServer, ServerConfig};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::admission::{Admission, RunLimits};
use mcp_transport_core::handler::Handler;
use mcp_transport_core::jsonrpc::{self, Message, Notification};
use tracing::Instrument;

pub use route::{Probe, Target, route, route_parsed};

/// Configuration of a [`MultiServer`].
#[derive(Clone, Debug)]
pub struct MultiConfig {
    /// The revisions served (any subset of the four Streamable HTTP
    /// revisions). Legacy ones go to the session engine, 2026-07-28 to the
    /// stateless one.
    pub revisions: Vec<ProtocolVersion>,
    /// Settings of the legacy engine (its `versions` are overwritten with
    /// the legacy subset of `revisions`; the revision crates'
    /// implementations are added where it has none, see [`legacy_config`]).
    pub legacy: ServerConfig,
    /// Settings of the modern engine (its `supported_versions` are
    /// overwritten with the modern subset of `revisions`, and its advertised
    /// versions with all of `revisions`, so a `-32022` or `server/discover`
    /// names the legacy ones too).
    pub modern: ModernConfig,
    /// One bound on the handlers running in both engines together
    /// (requests of every era, tasks' workers): the engines share one
    /// [`Admission`], so a request of either era over it is answered 503
    /// with a `-32603` naming the limit. The engines' own `running` fields
    /// are overwritten with it. Default [`RunLimits::default`].
    pub running: RunLimits,
}

impl MultiConfig {
    /// Every Streamable HTTP revision, default engine settings.
    pub fn all() -> Self {
        Self::revisions(ProtocolVersion::STREAMABLE)
    }

    /// The given revisions, default engine settings.
    pub fn revisions(revisions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        MultiConfig {
            revisions: revisions.into_iter().collect(),
            legacy: legacy_config(),
            modern: ModernConfig::default(),
            running: RunLimits::default(),
        }
    }
}

mcp_transport_core::impl_running_setters!(MultiConfig);

/// The session engine's configuration with every legacy revision's
/// implementation from its crate: 2025-03-26 and 2025-06-18 from
/// `mcp-rev-2025-03-26`, 2025-11-25 (SEP-1699) from `mcp-rev-2025-11-25`.
/// Implementations already in `config` are kept.
pub fn with_legacy_revisions(config: ServerConfig) -> ServerConfig {
    mcp_rev_2025_11_25::register(mcp_rev_2025_03_26::register(config))
}

/// [`ServerConfig::default`] with every legacy revision's implementation
/// ([`with_legacy_revisions`]).
pub fn legacy_config() -> ServerConfig {
    with_legacy_revisions(ServerConfig::default())
}

/// Why a [`MultiServer`] could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// No revision was configured.
    #[error(
        "no revision configured: give at least one of 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"
    )]
    Empty,
    /// A revision this server cannot serve.
    #[error(
        "revision {0} cannot be served (Streamable HTTP revisions: 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)"
    )]
    Unservable(ProtocolVersion),
}

/// One MCP endpoint serving every configured revision (see [`route()`]).
///
/// It is a `tower::Service<http::Request<B>>` for any axum-compatible body
/// `B` (`Response = http::Response<axum::body::Body>`, `Error =
/// Infallible`).
///
/// Cloned for every request it serves (its future owns it), so it is one
/// `Arc`: a clone is one reference count, not one per engine and one for
/// the bound. The count is shared by every connection's task, so each
/// increment and decrement moves its cache line between the CPUs; three
/// of them a request cost ~0.8 % of the server's time on the wire
/// (docs/PERFORMANCE.md, session 47).
#[derive(Clone)]
pub struct MultiServer {
    inner: Arc<Engines>,
}

/// What a [`MultiServer`] shares between its clones.
struct Engines {
    /// The legacy engine, when a legacy revision is configured.
    legacy: Option<LegacyServer>,
    /// The modern engine, when 2026-07-28 is configured.
    modern: Option<ModernServer>,
    max_body: usize,
    /// The bound both engines share ([`MultiConfig::running`]).
    admission: Arc<Admission>,
}

mcp_http_edge::impl_engine_service!(MultiServer);

impl std::fmt::Debug for MultiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiServer")
            .field("legacy", &self.inner.legacy.is_some())
            .field("modern", &self.inner.modern.is_some())
            .finish()
    }
}

impl MultiServer {
    /// Builds the server.
    ///
    /// # Panics
    ///
    /// When the configuration is invalid; use [`try_new`](Self::try_new)
    /// to get the error instead.
    pub fn new(handler: Arc<dyn Handler>, config: MultiConfig) -> Self {
        match Self::try_new(handler, config) {
            Ok(s) => s,
            Err(e) => panic!("invalid MultiServer configuration: {e}"),
        }
    }

    /// Builds the server, or says why the configuration is invalid.
    pub fn try_new(handler: Arc<dyn Handler>, config: MultiConfig) -> Result<Self, ConfigError> {
        if config.revisions.is_empty() {
            return Err(ConfigError::Empty);
        }
        let mut legacy_versions = Vec::new();
        let mut modern_versions = Vec::new();
        for v in &config.revisions {
            if !ProtocolVersion::STREAMABLE.contains(v) {
                return Err(ConfigError::Unservable(v.clone()));
            }
            if v.is_modern() {
                modern_versions.push(v.clone());
            } else {
                legacy_versions.push(v.clone());
            }
        }
        let max_body = config
            .legacy
            .http
            .max_body_bytes
            .max(config.modern.http.max_body_bytes);
        let admission = Admission::new(config.running);
        let legacy = (!legacy_versions.is_empty()).then(|| {
            LegacyServer::with_admission(
                handler.clone(),
                with_legacy_revisions(config.legacy.clone()).with_versions(legacy_versions),
                admission.clone(),
            )
        });
        let modern = (!modern_versions.is_empty()).then(|| {
            let mut m = config.modern.clone();
            m.supported_versions = modern_versions;
            m.advertised_versions = Some(config.revisions.clone());
            ModernServer::with_admission(handler.clone(), m, admission.clone())
        });
        Ok(MultiServer {
            inner: Arc::new(Engines {
                legacy,
                modern,
                max_body,
                admission,
            }),
        })
    }

    /// Handlers running now in both engines together (requests of every
    /// era and tasks' workers), as counted against
    /// [`MultiConfig::running`].
    pub fn running_requests(&self) -> usize {
        self.inner.admission.running()
    }

    /// The legacy engine, when a legacy revision is configured.
    pub fn legacy(&self) -> Option<&LegacyServer> {
        self.inner.legacy.as_ref()
    }

    /// The modern engine, when 2026-07-28 is configured.
    pub fn modern(&self) -> Option<&ModernServer> {
        self.inner.modern.as_ref()
    }

    /// A router serving the endpoint at `/` (mount it with `nest_service`).
    pub fn router(&self) -> Router {
        Router::new().fallback_service(self.clone())
    }

    /// A router serving the endpoint at `path`.
    pub fn route(&self, path: &str) -> Router {
        service::router(path, self.clone())
    }

    /// The endpoint at `path` without an axum `Router` (every other path
    /// gets 404), for a server that serves nothing else: what
    /// `mcp-compat serve` runs ([`Endpoint`]).
    ///
    /// # Panics
    ///
    /// If `path` does not start with `/`.
    pub fn endpoint(&self, path: &str) -> Endpoint<Self> {
        Endpoint::new(path, self.clone())
    }

    /// Serves one request: reads what routing needs, then forwards the
    /// request to the chosen engine. When both eras are served, a POST
    /// body holding one well-formed request or notification is parsed here
    /// once and handed down (to the legacy engine as an argument,
    /// [`LegacyServer::handle_parsed`]; to the modern one as the
    /// [`Message`] in the request's extensions), so the engine does not
    /// parse it again; anything else
    /// is routed from the raw body and parsed by the engine, as before.
    ///
    /// Not an `async fn`: the request is split into its parts and body
    /// before the future is made, so the future holds them as its own
    /// fields (an `async fn` would hold the request as well, and copy each
    /// argument into a local besides).
    pub fn handle(&self, req: Request<Body>) -> impl Future<Output = Response<Body>> + Send + '_ {
        // Split before the future (as `ModernServer::handle_parsed`): the
        // request and its parts are not both kept in it.
        let (parts, body) = req.into_parts();
        async move {
            let bytes = if parts.method == http::Method::POST {
                // One pre-sized copy, `Content-Length` checked before anything
                // is read (so `Expect: 100-continue` gets 413, not 100).
                match read_body(body, &parts.headers, self.inner.max_body).await {
                    Ok(b) => Some(b),
                    Err(reject) => return reject.response(),
                }
            } else {
                None
            };
            // Both headers in one pass over the map: two hashed lookups of
            // custom names cost more than comparing a request's few names.
            let [version, session] = header_scan::scan(
                &parts.headers,
                [&headers::name::PROTOCOL_VERSION, &headers::name::SESSION_ID],
            );
            let version_header = match version {
                Seen::Absent => None,
                Seen::Once(v) => Some(v),
                // Routing reads the first, as `HeaderMap::get` gives it (the
                // engine refuses the ambiguity).
                Seen::Repeated => parts.headers.get(headers::name::PROTOCOL_VERSION),
            }
            .and_then(|v| v.to_str().ok());
            let probe = Probe {
                method: &parts.method,
                has_session: session != Seen::Absent,
                version_header,
                body: bytes.as_deref(),
            };
            let both = self.inner.legacy.is_some() && self.inner.modern.is_some();
            let parsed = bytes
                .as_deref()
                .filter(|b| both && b.iter().find(|c| !c.is_ascii_whitespace()) != Some(&b'['))
                .and_then(|b| {
                    // A stateless request's params are indexed on the way
                    // (the modern engine reads them so); a session's
                    // engine has no use for the index.
                    if session == Seen::Absent {
                        jsonrpc::parse_single(b).ok()
                    } else {
                        match jsonrpc::parse_body(b, false) {
                            Ok(jsonrpc::Body::Single(m)) => {
                                Some(jsonrpc::Parsed::from(m).with_body_len(b.len()))
                            }
                            _ => None,
                        }
                    }
                })
                .filter(|p| !matches!(p.message(), Message::Response(_)));
            let target = route_parsed(
                &probe,
                parsed.as_ref().map(jsonrpc::Parsed::message),
                self.inner.legacy.is_some(),
                self.inner.modern.is_some(),
            );
            let span = request_span(&parts, target, bytes.as_deref());
            tracing::trace!(parent: &span, "routed");
            let req = Request::from_parts(parts, handed_body(bytes, parsed.is_some()));
            // Each engine is called directly with the parsed message as an
            // argument: no boxed service cloned and called per request, and no
            // extensions entry (docs/PERFORMANCE.md, session 11).
            let response = match (target, &self.inner.legacy, &self.inner.modern) {
                // Each engine's future is pinned where it is made and
                // instrumented through the pin: `instrument` on the future
                // itself moved its ~2 KB into the `Instrumented` (one memcpy
                // a request, ~230 instructions), and a box (the legacy
                // engine's, when its future was the larger) cost an
                // allocation and the same copy. The two arms' futures share
                // this future's storage; the larger, the modern engine's
                // (2,120 bytes against 1,960, `-Zprint-type-sizes`), sizes it.
                (Target::Legacy, Some(legacy), _) => {
                    std::pin::pin!(legacy.handle_parsed(req, parsed))
                        .instrument(span.clone())
                        .await
                }
                (Target::Modern, _, Some(modern)) => {
                    std::pin::pin!(modern.handle_parsed(req, parsed))
                        .instrument(span.clone())
                        .await
                }
                // `route` only picks a configured engine.
                _ => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            };
            span.record("http.status", response.status().as_u16());
            SpanBody::wrap(response, span)
        }
    }

    /// Publishes a change notification (list changes, resource updates) to
    /// every era: the standalone GET streams of legacy sessions and the
    /// `subscriptions/listen` streams that opted in to it. Returns how many
    /// streams it was queued on.
    pub async fn publish(&self, notification: &Notification) -> usize {
        let mut n = 0;
        if let Some(l) = &self.inner.legacy {
            n += l.notify_all(notification).await;
        }
        if let Some(m) = &self.inner.modern {
            n += m.publish(notification.clone());
        }
        n
    }

    /// Ends the streams that would hold up a graceful shutdown
    /// (`mcp_http_edge::server::serve_with_shutdown`): 2025-11-25 SSE
    /// connections close after an event id and `retry` so their clients
    /// resume elsewhere (SEP-1699), earlier revisions' standalone GET
    /// streams end ([`LegacyServer::drain`]), and 2026-07-28
    /// `subscriptions/listen` streams end with their result
    /// (*Subscriptions*, "Graceful Closure"). Requests still running go on.
    /// Returns how many streams were ended.
    pub async fn drain(&self) -> usize {
        let mut n = 0;
        if let Some(l) = &self.inner.legacy {
            n += l.drain().await;
        }
        if let Some(m) = &self.inner.modern {
            n += m.end_listeners();
        }
        n
    }

    /// Ends a graceful shutdown once the HTTP layer is done (after
    /// [`drain`](Self::drain) and `serve_with_shutdown`): the legacy
    /// requests this instance runs under leases get up to `within` to
    /// finish, and those still running are then abandoned with a `-32603`
    /// error in their stream and their leases released, so clients waiting
    /// through other instances learn at once
    /// ([`LegacyServer::abandon_after`](mcp_session_engine::server::LegacyServer::abandon_after)).
    /// Returns how many streams were abandoned.
    pub async fn abandon_after(&self, within: std::time::Duration) -> usize {
        match &self.inner.legacy {
            Some(l) => l.abandon_after(within).await,
            None => 0,
        }
    }
}

/// The body an engine is handed with a request ([`MultiServer::handle`]):
/// the bytes read, unless the message was parsed here. A parsed message
/// goes on as [`jsonrpc::Parsed`] with the body's length
/// ([`Parsed::body_len`](jsonrpc::Parsed::body_len)), which the engine
/// holds to its own limit, and no body: the bytes wrapped in a body again
/// cost an allocation a request that nobody read (docs/PERFORMANCE.md,
/// session 48).
fn handed_body(bytes: Option<Bytes>, parsed: bool) -> Body {
    match bytes {
        Some(b) if !parsed => Body::from(b),
        _ => Body::empty(),
    }
}

/// The span of one HTTP request to the endpoint (`mcp.request`), entered
/// while the engine handles it, while its handler runs and while its
/// response body (an SSE stream) is sent. Fields: `http.method`,
/// `http.status`, `mcp.era` (the engine routed to), `mcp.session_id`,
/// `mcp.protocol_version`, `mcp.last_event_id` (a resume), `rpc.method`
/// and `rpc.id` (a single JSON-RPC message; a batch records
/// `rpc.method = "batch"`).
fn request_span(
    parts: &http::request::Parts,
    target: Target,
    body: Option<&[u8]>,
) -> tracing::Span {
    let span = tracing::info_span!(
        "mcp.request",
        http.method = %parts.method,
        http.status = tracing::field::Empty,
        mcp.era = ?target,
        mcp.session_id = tracing::field::Empty,
        mcp.protocol_version = tracing::field::Empty,
        mcp.last_event_id = tracing::field::Empty,
        rpc.method = tracing::field::Empty,
        rpc.id = tracing::field::Empty,
    );
    if span.is_disabled() {
        // Nothing below is read by anyone: no header looked up, no parse.
        return span;
    }
    for (field, name) in [
        ("mcp.session_id", headers::name::SESSION_ID),
        ("mcp.protocol_version", headers::name::PROTOCOL_VERSION),
        ("mcp.last_event_id", headers::name::LAST_EVENT_ID),
    ] {
        if let Some(v) = parts.headers.get(name).and_then(|v| v.to_str().ok()) {
            span.record(field, v);
        }
    }
    if let Some(body) = body {
        #[derive(serde::Deserialize)]
        struct Envelope<'a> {
            #[serde(borrow)]
            method: Option<&'a str>,
            #[serde(borrow)]
            id: Option<&'a serde_json::value::RawValue>,
        }
        if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            span.record("rpc.method", "batch");
        } else if let Ok(env) = serde_json::from_slice::<Envelope<'_>>(body) {
            if let Some(m) = env.method {
                span.record("rpc.method", m);
            }
            if let Some(id) = env.id {
                span.record("rpc.id", id.get());
            }
        }
    }
    span
}

#[cfg(test)]
mod tests {
    use axum::body::HttpBody as _;

    use super::*;

    /// A parsed message's body is not handed on; an unparsed one is, and
    /// a request without a body gets an empty one.
    #[test]
    fn only_an_unparsed_body_is_handed_on() {
        let bytes = || Some(Bytes::from_static(b"{}"));
        assert_eq!(handed_body(bytes(), false).size_hint().exact(), Some(2));
        assert_eq!(handed_body(bytes(), true).size_hint().exact(), Some(0));
        assert_eq!(handed_body(None, false).size_hint().exact(), Some(0));
    }
}
