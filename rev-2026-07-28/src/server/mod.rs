//! The 2026-07-28 server: Streamable HTTP in the stateless model.
//!
//! # Use
//!
//! ```no_run
//! use std::sync::Arc;
//! use axum::serve::ListenerExt;
//! use mcp_rev_2026_07_28::server::{ModernConfig, ModernServer};
//! # async fn run(handler: Arc<dyn mcp_transport_core::handler::Handler>) -> std::io::Result<()> {
//! let server = ModernServer::new(handler, ModernConfig::default());
//! let app = axum::Router::new().nest_service("/mcp", server.router());
//! // Bind to loopback: the default Host/Origin checks allow only loopback
//! // names (see `ModernConfig::with_allowed_hosts`).
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000")
//!     .await?
//!     // SSE events are small writes; without TCP_NODELAY, Nagle's algorithm
//!     // and delayed ACKs add ~40 ms to each.
//!     .tap_io(|tcp| {
//!         let _ = tcp.set_nodelay(true);
//!     });
//! axum::serve(listener, app).await
//! # }
//! ```
//!
//! [`ModernServer::route`] mounts the endpoint at any path, and
//! [`ModernServer::handle`] serves one request directly. The server is also
//! a `tower::Service<http::Request<B>>` (see [`ModernServer`]), which is how
//! a dispatcher in front of several revision engines holds it.
//!
//! # The model
//!
//! * **Stateless** (*Overview*, "Statelessness"; SEP-2575, SEP-2567): no
//!   `initialize`, no session. Every POST carries its protocol version and
//!   client capabilities in `params._meta`, mirrored into headers (SEP-2243).
//!   `GET` and `DELETE` get `405` with `Allow: POST`; `Mcp-Session-Id` and
//!   `Last-Event-ID` are ignored and never minted or echoed; SSE events carry
//!   no `id` and there is no priming event. Nothing of a request is kept
//!   after it ends: the only state that spans requests is the `requestState`
//!   key and the registry of open listen streams.
//! * **Cancellation by close**: closing a request's response stream (or its
//!   connection, in JSON mode) fires the handler's cancellation token at
//!   once, and nothing more is sent for the request.
//! * **`server/discover`** and **`subscriptions/listen`** are answered by the
//!   transport; change notifications are fed in with
//!   [`ModernServer::publish`].
//! * **MRTR**: `Outcome::InputRequired` becomes an `InputRequiredResult`
//!   whose `requestState` the server seals (HMAC-SHA256); the retry's
//!   `inputResponses` and the handler's own state are handed back in
//!   `RequestContext::input_responses` / `request_state`. The server never
//!   sends a JSON-RPC request.
//! * **Tasks** (with [`ModernConfig::tasks`]): the `io.modelcontextprotocol/tasks`
//!   extension — a long-running `tools/call` (the handler's
//!   `Handler::execution`) from a request that declares it answers
//!   `CreateTaskResult` and runs on; `tasks/get`, `tasks/update`,
//!   `tasks/cancel` and `notifications/tasks` on listen streams follow it
//!   (see the `tasks` module).
//! * Results get `resultType`, `_meta["io.modelcontextprotocol/serverInfo"]`
//!   and, where *Caching* requires them, `ttlMs`/`cacheScope`.
//!
//! # Architecture
//!
//! | module | concern |
//! | --- | --- |
//! | `config` | [`ModernConfig`], [`CacheScope`], [`PrincipalFn`] |
//! | `validate` | per-request `_meta`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` (pure) |
//! | `schema` | `x-mcp-header` annotations of an `inputSchema` (pure) |
//! | `catalog` | the tools' `Mcp-Param-*` headers, from the handler's `tools/list` |
//! | `mrtr` | sealing `requestState`; capabilities input requests need |
//! | `result` | `resultType`, `serverInfo`, caching hints |
//! | `post` | the POST pipeline, check by check |
//! | `request` | a request's task, sink and response stream; cancellation |
//! | `listen` | `subscriptions/listen` streams and their registry |
//! | `tasks` | the Tasks extension: `CreateTaskResult`, `tasks/get`/`update`/`cancel`, the task workers |
//! | `discover` | `server/discover` |
//! | `reply` | status mapping, error-code translation, SSE blocks (the HTTP responses are the edge's, `mcp_http_edge`, which also checks `Origin`, `Host`, `Accept` and `Content-Type`) |
//!
//! # Status and error-code mapping
//!
//! | status | JSON-RPC code | when | spec |
//! | --- | --- | --- | --- |
//! | 200 | — | JSON result, or an SSE stream | "Sending Messages" 6 |
//! | 202 | — | a notification (accepted; see `post`) | "Sending Messages" 5 |
//! | 400 | `-32700` | body is not JSON | JSON-RPC |
//! | 400 | `-32600` | not one conforming message; a batch; a JSON-RPC response | "Sending Messages" 4 |
//! | 400 | `-32602` | `_meta` lacks `protocolVersion`/`clientCapabilities` or has them malformed, or names a member twice; bad `logLevel`; body lacks `params.name`/`uri` for `Mcp-Name`; `requestState` tampered, expired, or for another request/principal; bad `notifications` filter | *Overview*, "Per-request protocol fields": "the server MUST reject it with JSON-RPC error code `-32602` … the response status MUST be `400 Bad Request`"; *Logging*, "Error Handling"; *MRTR*, "Server Requirements" 4 |
//! | 400 | `-32020` | `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` missing, mismatched, invalid characters, bad Base64, sent twice | *Streamable HTTP*, "Server Validation" |
//! | 400 | `-32021` | the handler's input requests need a capability the client did not declare (`data.requiredCapabilities`) | *Overview*: "MUST return a `MissingRequiredClientCapabilityError` (`-32021`) … On HTTP, the response status MUST be `400 Bad Request`" |
//! | 400 | `-32022` | unsupported version (`data: {supported, requested}`); also the answer to `initialize` | *Versioning*, "Protocol Version Negotiation"; "Backward Compatibility" |
//! | 403 | `-32600` | `Origin` present and not allowed; `Host` not allowed; two `Origin` or `Host` headers; an absolute-form target naming a host not allowed | "Security & Endpoint" 1 |
//! | 404 | `-32601` | the handler does not implement the method; `ping`, `logging/setLevel`, `resources/(un)subscribe` | "Protocol Version Header": "MUST respond with `404 Not Found` and a JSON-RPC error with code `-32601`" |
//! | 405 | `-32600` | GET, DELETE, any method but POST (`Allow: POST`) | "Earlier Streamable HTTP Revisions" |
//! | 406 | `-32600` | `Accept` lacks `application/json` or `text/event-stream` | "Sending Messages" 2 |
//! | 408 | `-32600` | the body stalled past the connection's body-read timeout (`mcp_http_edge::server::serve`) | — |
//! | 413 | `-32600` | body over `max_body_bytes` (before reading when `Content-Length` says so) | — |
//! | 415 | `-32600` | `Content-Type` is not `application/json` | — |
//! | 503 | `-32603` | `max_listen_streams` reached; the task store is full (Tasks extension); `running` reached (too many handlers, or their requests' bytes), with the request's id, before its handler runs or its task is created | — |
//! | 400 | `-32021` | Tasks extension: `tasks/get`/`update`/`cancel`, a task-only tool or `notifications.taskIds` from a request that does not declare `io.modelcontextprotocol/tasks` (`data.requiredCapabilities.extensions`) | *Tasks*, "Protocol Errors" |
//! | 200 | `-32602` | Tasks extension: unknown, foreign or expired `taskId` | *Tasks*, "Protocol Errors": "Invalid or nonexistent `taskId`: `-32602`" |
//!
//! A handler's `-32002` (resource not found, retired) is sent as `-32602`,
//! and `-32042` or any code of `-32020..=-32099` this revision does not
//! define as `-32603` (*Overview*, "Error Codes": implementations "MUST NOT
//! emit these codes").
//!
//! Handler errors other than `-32601`/`-32020`/`-32021`/`-32022` (for example
//! `-32602` for an unknown tool) are ordinary JSON-RPC responses with 200.
//! An error status can only be used while no SSE stream has been opened for
//! the request; after a notification, the error is the stream's last event.
//! Errors echo the request `id` when the request could be parsed.

mod catalog;
mod config;
mod discover;
mod dup_keys;
mod fanout;
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
mod listen;
mod mrtr;
mod post;
mod reply;
mod request;
mod result;
mod schema;
mod tasks;
mod validate;

use std::fmt;
use std::sync::Arc;

use axum::body::Body;
use http::Method;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::admission::Admission;
use mcp_transport_core::handler::{Handler, ServerDescription};
use mcp_transport_core::jsonrpc::{Notification, to_raw};
use rand::RngCore;
use serde_json::value::RawValue;

pub use config::{CacheScope, ModernConfig, PrincipalFn, TasksConfig};

use catalog::ToolCatalog;
use listen::Registry;
use mrtr::Sealer;

/// State shared by every request of one server.
pub(crate) struct Shared {
    pub handler: Arc<dyn Handler>,
    pub config: ModernConfig,
    /// The handler's `describe()`, taken once when the server is built.
    pub description: ServerDescription,
    /// `serverInfo`, serialized; `None` when `include_server_info` is off.
    pub server_info: Option<Box<RawValue>>,
    /// The modern versions served.
    pub served: Vec<ProtocolVersion>,
    /// The versions advertised in `-32022` and `server/discover`.
    pub advertised: Vec<ProtocolVersion>,
    pub sealer: Sealer,
    pub catalog: ToolCatalog,
    pub listeners: Arc<Registry>,
    /// Handlers running (requests and task workers), against
    /// [`ModernConfig::running`].
    pub admission: Arc<Admission>,
    /// The Tasks extension, when configured.
    pub tasks: Option<tasks::Tasks>,
    /// This instance on the signal bus (`fanout`).
    pub fanout: fanout::Fanout,
}

/// The 2026-07-28 Streamable HTTP server. Cheap to clone (a handle).
///
/// It is a `tower::Service<http::Request<B>>` for any axum-compatible body
/// `B` (`Response = http::Response<axum::body::Body>`, `Error =
/// Infallible`), so it can be driven in memory or wrapped in tower
/// middleware; [`router`](Self::router) mounts it in axum.
///
/// See the [module documentation](self) for behaviour and status codes.
#[derive(Clone)]
pub struct ModernServer {
    shared: Arc<Shared>,
}

mcp_http_edge::impl_engine_service!(ModernServer);
mcp_http_edge::impl_engine_router!(ModernServer);

impl fmt::Debug for ModernServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModernServer")
            .field("config", &self.shared.config)
            .field("listen_streams", &self.active_listen_streams())
            .field("in_flight", &self.in_flight_requests())
            .finish()
    }
}

impl ModernServer {
    /// A server answering with `handler`. Calls `handler.describe()` once,
    /// now: the description (server info, capabilities, instructions) is
    /// what `server/discover`, result `_meta` and listen filters use for the
    /// server's lifetime. Needs no runtime until it serves.
    pub fn new(handler: Arc<dyn Handler>, config: ModernConfig) -> Self {
        let admission = Admission::new(config.running);
        Self::with_admission(handler, config, admission)
    }

    /// As [`new`](Self::new), with the handlers that run (requests and
    /// task workers) counted against `admission`, which other servers may
    /// share: one bound on running work for all of them (a dual-era
    /// endpoint's two engines, several endpoints of one process). The
    /// admission's limits replace [`ModernConfig::running`] (which
    /// [`config`](Self::config) then reports).
    pub fn with_admission(
        handler: Arc<dyn Handler>,
        mut config: ModernConfig,
        admission: Arc<Admission>,
    ) -> Self {
        config.running = admission.limits();
        let served = config.served_versions();
        if served.is_empty() {
            tracing::warn!(
                versions = %mcp_transport_core::version::list(&config.supported_versions),
                "ModernConfig::supported_versions names no modern protocol version; every request will get -32022"
            );
        }
        let description = handler.describe();
        let server_info = config
            .include_server_info
            .then(|| to_raw(&description.info).ok())
            .flatten();
        let key = config.state_key.unwrap_or_else(|| {
            let mut k = [0u8; 32];
            rand::rng().fill_bytes(&mut k);
            k
        });
        let advertised = config.advertised();
        let tasks = config.tasks.clone().map(tasks::Tasks::new);
        let listeners = Registry::new(config.http.faults);
        ModernServer {
            shared: Arc::new(Shared {
                handler,
                sealer: Sealer::new(key, config.state_ttl),
                config,
                description,
                server_info,
                served,
                advertised,
                catalog: ToolCatalog::default(),
                listeners: Arc::new(listeners),
                admission,
                tasks,
                fanout: fanout::Fanout::default(),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ModernConfig {
        &self.shared.config
    }

    /// Serves one HTTP request to the MCP endpoint: `Origin` and `Host` are
    /// checked first (403), then anything but POST gets 405 with
    /// `Allow: POST`, then the POST pipeline runs (see the module docs).
    pub async fn handle(&self, req: http::Request<Body>) -> http::Response<Body> {
        self.handle_parsed(req, None).await
    }

    /// [`handle`](Self::handle), for a dispatcher that has parsed the
    /// POST's body already (`mcp_negotiate`): `parsed` must be that body's
    /// one request or notification as `jsonrpc::parse_single` returns it
    /// (a `Message` converts into one), and the engine does not parse the
    /// body again (it still reads the body, to apply its own size limit);
    /// the index of the params that reading found is used rather than
    /// walking them again. Without one, a [`Message`] in the request's
    /// extensions is taken as the parsed body, as before.
    ///
    /// [`Message`]: mcp_transport_core::jsonrpc::Message
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
        let (parts, body) = req.into_parts();
        async move {
            if let Err(r) = self.shared.config.http.origins.check(&parts) {
                return r.response();
            }
            if parts.method != Method::POST {
                return reply::method_not_allowed(&parts.method);
            }
            let mut response = post::post(&self.shared, parts, parsed, body).await;
            if self
                .shared
                .config
                .http
                .faults
                .has(mcp_http_edge::faults::Fault::MintSessionId)
            {
                response.headers_mut().insert(
                    mcp_http_edge::headers::SESSION_ID,
                    http::HeaderValue::from_static("minted-by-a-fault"),
                );
            }
            response
        }
    }

    /// Delivers a change notification to every open `subscriptions/listen`
    /// stream that opted in to it (see *Subscriptions*), tagged with that
    /// stream's subscription id; returns on how many streams it was queued.
    ///
    /// Only `notifications/tools/list_changed`,
    /// `notifications/prompts/list_changed`,
    /// `notifications/resources/list_changed` and
    /// `notifications/resources/updated` (with `params.uri`) are ever
    /// delivered; anything else (progress and log messages are
    /// request-scoped) reaches no stream. Publishing
    /// `notifications/tools/list_changed` also drops the cached tool
    /// definitions used to check `Mcp-Param-*` headers.
    ///
    /// With [`ModernConfig::signals`] it is also published to the other
    /// instances, which deliver it to the listen streams they hold; the
    /// count is this instance's streams only. Needs a tokio runtime then
    /// (the publication runs as a task, so this stays synchronous).
    pub fn publish(&self, notification: Notification) -> usize {
        let n = fanout::deliver_local(&self.shared, &notification);
        fanout::broadcast(&self.shared, &notification);
        n
    }

    /// Ends every open listen stream gracefully (for example before
    /// shutdown): each delivers what is queued, then the
    /// `subscriptions/listen` result (*Subscriptions*, "Graceful Closure"),
    /// then closes. Returns how many streams were open.
    pub fn end_listeners(&self) -> usize {
        self.shared.listeners.end_all()
    }

    /// The number of open `subscriptions/listen` streams.
    pub fn active_listen_streams(&self) -> usize {
        self.shared.listeners.len()
    }

    /// The number of handlers still running, requests and task workers
    /// (a cancelled request counts until its handler returns), as counted
    /// against [`ModernConfig::running`].
    pub fn in_flight_requests(&self) -> usize {
        self.shared.admission.running()
    }

    /// The number of task workers running in this process (tasks that have
    /// not ended; see [`ModernConfig::tasks`]).
    pub fn running_tasks(&self) -> usize {
        self.shared.tasks.as_ref().map_or(0, |t| t.running_count())
    }

    /// Forgets the cached tool definitions behind `Mcp-Param-*` checks, as
    /// publishing `notifications/tools/list_changed` does; the next
    /// `tools/call` lists the tools again.
    pub fn invalidate_tool_headers(&self) {
        self.shared.catalog.invalidate();
    }
}

#[cfg(test)]
mod tests {
    use mcp_test_support::handler::TestHandler;

    use super::*;

    /// The server keeps the config it was given and shows it in `Debug`
    /// with its two counts; `invalidate_tool_headers` empties the tool
    /// catalog as a `tools/list_changed` publication does.
    #[tokio::test]
    async fn config_debug_and_the_catalog() {
        let handler: Arc<dyn Handler> = Arc::new(TestHandler::builder("t").build());
        let config = ModernConfig::default().with_listen_queue(7);
        let server = ModernServer::new(handler.clone(), config);
        assert_eq!(server.config().listen_queue, 7);
        let shown = format!("{server:?}");
        assert!(shown.starts_with("ModernServer { config: "), "{shown}");
        assert!(
            shown.ends_with("listen_streams: 0, in_flight: 0 }"),
            "{shown}"
        );

        let v = ProtocolVersion::V2026_07_28;
        server.shared.catalog.headers_for(&handler, &v, "any").await;
        assert!(server.shared.catalog.cached("any").is_some());
        server.invalidate_tool_headers();
        assert!(server.shared.catalog.cached("any").is_none());
    }
}
