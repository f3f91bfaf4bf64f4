//! [`ModernConfig`], [`CacheScope`] and [`PrincipalFn`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_http_edge::config::ServerHttp;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::admission::RunLimits;
use mcp_transport_core::session_store::SignalBus;
use mcp_transport_core::task_store::{MemoryTaskStore, TaskStore};
use serde::{Deserialize, Serialize};

/// Who may reuse a cached result (2026-07-28 *Caching*, "Cache Scope Field":
/// "analogous to HTTP `Cache-Control: public` vs `Cache-Control: private`").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// "The response does not contain user-specific data. Any client, shared
    /// gateway, or caching proxy MAY store and serve the cached response to
    /// any user."
    Public,
    /// "Cached responses MAY be reused for the same authorization context.
    /// Caches MUST NOT be shared across authorization contexts."
    #[default]
    Private,
}

impl CacheScope {
    /// The wire value, `"public"` or `"private"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// The principal function, shared with the session engine (one value
/// serves both eras).
///
/// When set in [`ModernConfig::principal`], every `requestState` the server
/// issues is bound to the principal of the request that produced it, and a
/// retry presented by another principal is rejected (*Multi Round-Trip
/// Requests*, "Server Requirements" 5: servers SHOULD include "the
/// authenticated principal, rejecting state presented by a different
/// principal").
pub use mcp_transport_core::handler::PrincipalFn;

/// The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) as a
/// [`ModernServer`](super::ModernServer) offers it (see the server's module
/// docs, "Tasks").
#[derive(Clone)]
pub struct TasksConfig {
    /// Where task state lives. Default: a [`MemoryTaskStore`] with its
    /// default bounds (10 000 tasks, 64 MiB, TTL at most 24 h). Instances
    /// that share a store must also be reached by task-sticky routing
    /// (`Mcp-Name: <taskId>`), since a task's worker runs where it was
    /// created.
    pub store: Arc<dyn TaskStore>,
    /// The TTL asked of the store for each task (`ttlMs`), from creation;
    /// `None` asks for unlimited (which the store may cap). Default one
    /// hour.
    pub ttl_ms: Option<u64>,
    /// The `pollIntervalMs` suggested to clients. Default 500.
    pub poll_interval_ms: u64,
    /// Task ids one `subscriptions/listen` request may name in
    /// `notifications.taskIds`; more is `-32602`. Default 256.
    pub max_listen_task_ids: usize,
    /// Liveness across instances sharing the store: the instance running
    /// a task's worker holds a lease on it (renewed while it runs; also how
    /// a worker learns that a `tasks/cancel` reached another instance), and
    /// a `tasks/get` on another instance fails a task whose worker's lease
    /// lapsed (`mcp_transport_core::task_store::liveness`). Default `None`:
    /// no lease, as in one process.
    pub leases: Option<mcp_transport_core::lease::Leases>,
}

impl Default for TasksConfig {
    fn default() -> Self {
        TasksConfig {
            store: Arc::new(MemoryTaskStore::default()),
            ttl_ms: Some(60 * 60 * 1000),
            poll_interval_ms: 500,
            max_listen_task_ids: 256,
            leases: None,
        }
    }
}

impl fmt::Debug for TasksConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TasksConfig")
            .field("ttl_ms", &self.ttl_ms)
            .field("poll_interval_ms", &self.poll_interval_ms)
            .field("max_listen_task_ids", &self.max_listen_task_ids)
            .finish_non_exhaustive()
    }
}

/// Configuration of a [`ModernServer`](super::ModernServer).
///
/// Every field has a documented default ([`ModernConfig::default`]); the
/// `with_*` methods set one field each.
///
/// # Binding somewhere other than loopback
///
/// By default only requests whose `Host` names a loopback address
/// (`localhost`, `127.0.0.1`, `[::1]`, any port) and whose `Origin`, when
/// present, is a loopback origin are served — the DNS-rebinding protection
/// of *Streamable HTTP*, "Security & Endpoint" ("Servers MUST validate the
/// Origin header on all incoming connections"). A server reachable under
/// another name **must** set [`with_allowed_hosts`](Self::with_allowed_hosts)
/// (and, for browser clients,
/// [`with_allowed_origins`](Self::with_allowed_origins)), or every request
/// gets 403 (see [`mcp_http_edge::config::OriginPolicy`]).
///
/// # Several instances behind a load balancer
///
/// The stateless model lets any instance answer any request, including the
/// retry of a multi round-trip request. The `requestState` an instance
/// issues is sealed with [`state_key`](Self::state_key); instances that may
/// receive each other's retries **must** be configured with the same key
/// (the default is a random key per process, so a retry that lands on
/// another instance fails verification).
#[derive(Clone)]
pub struct ModernConfig {
    /// The modern protocol versions this engine serves. A request whose
    /// `io.modelcontextprotocol/protocolVersion` is not one of them gets an
    /// `UnsupportedProtocolVersionError` (`-32022`). Legacy versions listed
    /// here are ignored (this engine has no `initialize`). Default:
    /// `[2026-07-28]`.
    pub supported_versions: Vec<ProtocolVersion>,
    /// The versions named in `supported` of every `-32022` error and in
    /// `supportedVersions` of `server/discover`. `None` (the default) means
    /// [`supported_versions`](Self::supported_versions). A dual-era
    /// deployment (this engine next to a legacy one on the same endpoint)
    /// lists its legacy versions here too, so that a client can see them
    /// (*Versioning*, "Protocol Version Negotiation": the error lists "the
    /// versions it does support").
    pub advertised_versions: Option<Vec<ProtocolVersion>>,
    /// Answer requests with `application/json`, unless the handler sends a
    /// notification (progress, log) before its result, which switches that
    /// answer to an SSE stream. When `false` (the default) results are sent
    /// as SSE streams. Either way an error with its own HTTP status (`404`
    /// for `-32601`, `400` for `-32020`/`-32021`/`-32022` and for the
    /// transport's `-32602`) is sent as JSON with that status when it comes
    /// before any notification. The transport's own answers
    /// (`server/discover`, errors of the checks) are always JSON.
    pub json_response: bool,
    /// What is checked at the HTTP edge: the `Origin`/`Host` allowlists
    /// (loopback only by default; a present but not allowed `Origin`, or
    /// any other `Host`, gets 403) and the largest POST body (larger is
    /// 413; default 4 MiB).
    pub http: ServerHttp,
    /// Keep-alive period of SSE responses: a comment line (`:`) is written
    /// on a stream idle this long (*Streamable HTTP*, "Receiving Messages",
    /// Note on keep-alives). With `json_response` off, a request whose
    /// handler has sent nothing for this long also gets its SSE stream
    /// opened (with such a comment), so a client waits no longer than this
    /// for response headers. `None` disables both. Default 15 s.
    pub keepalive: Option<Duration>,
    /// `ttlMs` of the `server/discover` result (*Caching*, "Cacheable
    /// Results": `server/discover` MUST carry caching hints). Default
    /// 60 000 (one minute).
    pub discover_ttl_ms: u64,
    /// `cacheScope` of the `server/discover` result. Default
    /// [`CacheScope::Public`]: versions, capabilities and server info
    /// describe the deployment, not the user.
    pub discover_cache_scope: CacheScope,
    /// `ttlMs` added to a complete result of `tools/list`, `prompts/list`,
    /// `resources/list`, `resources/templates/list` and `resources/read`
    /// when the handler's result has none (*Caching*: "Servers MUST include
    /// caching hints on results with `resultType: \"complete\"` returned by"
    /// these operations). Default 0 ("immediately stale").
    pub result_ttl_ms: u64,
    /// `cacheScope` added to those results when the handler's result has
    /// none. Default [`CacheScope::Private`] (the safe choice: no shared
    /// cache may reuse it).
    pub result_cache_scope: CacheScope,
    /// Put `io.modelcontextprotocol/serverInfo` (the handler's
    /// `ServerDescription::info`) in every result's `_meta` (*Overview*,
    /// "Per-response protocol fields": servers SHOULD, "unless specifically
    /// configured not to do so"). Default `true`.
    pub include_server_info: bool,
    /// The HMAC-SHA256 key sealing `requestState` (*Multi Round-Trip
    /// Requests*, "Server Requirements" 4: servers "MUST protect its
    /// integrity (e.g. HMAC or AEAD)"). `None` (the default) draws a random
    /// key when the server is built, so state survives only within this
    /// process. **Instances behind a load balancer must share one key.**
    pub state_key: Option<[u8; 32]>,
    /// How long an issued `requestState` stays valid ("a short expiry (TTL),
    /// rejecting state presented after it lapses"). Default 10 minutes.
    pub state_ttl: Duration,
    /// How many `InputRequiredResult`s one logical request may receive in a
    /// row (the count travels inside the sealed state); the next one is
    /// answered with an error instead. Default 8.
    pub max_input_rounds: u32,
    /// The most `subscriptions/listen` streams open at once; one more is
    /// answered `503`. Default 1024.
    pub max_listen_streams: usize,
    /// The most notifications queued for one listen stream. A listener that
    /// falls this far behind has its subscription ended with a JSON-RPC
    /// error response (it must re-subscribe and re-fetch what it caches);
    /// notifications are never dropped silently. Default 64; at least 1.
    pub listen_queue: usize,
    /// The most notifications queued, unsent, for one request's response
    /// stream; a handler's `notify` then waits (backpressure). Default 16;
    /// at least 1. The queue is made at a request's first notification
    /// (or when its handler does not answer at once): a request answered
    /// in its handler's first poll without notifications has none.
    pub stream_queue: usize,
    /// Names the authenticated principal of a request, to bind
    /// `requestState` to it. `None` (the default): state is not bound to a
    /// principal.
    pub principal: Option<PrincipalFn>,
    /// The Tasks extension: `Some` advertises it in `server/discover` and
    /// runs [`Execution::MayBeLong`]/[`Execution::TaskOnly`] tool calls of
    /// clients that declare it as tasks; tasks are scoped to
    /// [`principal`](Self::principal) when one is named. `None` (the
    /// default): no tasks; `tasks/*` are `-32601` and a `TaskOnly` call is
    /// `-32021`.
    ///
    /// [`Execution::MayBeLong`]: mcp_transport_core::handler::Execution::MayBeLong
    /// [`Execution::TaskOnly`]: mcp_transport_core::handler::Execution::TaskOnly
    pub tasks: Option<TasksConfig>,
    /// The bus that carries change notifications between instances: what
    /// [`ModernServer::publish`](super::ModernServer::publish) delivers
    /// here is also published on it, and every other instance on the bus
    /// delivers it to the `subscriptions/listen` streams it holds (*Subscriptions*:
    /// a listen stream may be held by any instance behind a load balancer).
    /// `None` (the default): this instance's streams only.
    pub signals: Option<Arc<dyn SignalBus>>,
    /// How many handlers may run at once — requests and task workers — and
    /// how many bytes of requests they may keep ([`RunLimits`]): a request
    /// over either is answered 503 (`Retry-After: 1`) with a `-32603`
    /// naming the limit before its handler runs (a `tools/call` to be run
    /// as a task: before the task is created). A task's worker keeps its place until the task
    /// ends, with no connection. Default [`RunLimits::default`]: 16,384
    /// handlers, 256 MiB.
    pub running: RunLimits,
}

impl Default for ModernConfig {
    fn default() -> Self {
        ModernConfig {
            supported_versions: vec![ProtocolVersion::V2026_07_28],
            advertised_versions: None,
            json_response: false,
            http: ServerHttp::default(),
            keepalive: Some(Duration::from_secs(15)),
            discover_ttl_ms: 60_000,
            discover_cache_scope: CacheScope::Public,
            result_ttl_ms: 0,
            result_cache_scope: CacheScope::Private,
            include_server_info: true,
            state_key: None,
            state_ttl: Duration::from_secs(600),
            max_input_rounds: 8,
            max_listen_streams: 1024,
            listen_queue: 64,
            stream_queue: 16,
            principal: None,
            tasks: None,
            signals: None,
            running: RunLimits::default(),
        }
    }
}

impl fmt::Debug for ModernConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModernConfig")
            .field("supported_versions", &self.supported_versions)
            .field("advertised_versions", &self.advertised_versions)
            .field("json_response", &self.json_response)
            .field("http", &self.http)
            .field("keepalive", &self.keepalive)
            .field("discover_ttl_ms", &self.discover_ttl_ms)
            .field("discover_cache_scope", &self.discover_cache_scope)
            .field("result_ttl_ms", &self.result_ttl_ms)
            .field("result_cache_scope", &self.result_cache_scope)
            .field("include_server_info", &self.include_server_info)
            .field(
                "state_key",
                &self.state_key.map(|_| "<redacted>").unwrap_or("<random>"),
            )
            .field("state_ttl", &self.state_ttl)
            .field("signals", &self.signals.is_some())
            .field("running", &self.running)
            .field("max_input_rounds", &self.max_input_rounds)
            .field("max_listen_streams", &self.max_listen_streams)
            .field("listen_queue", &self.listen_queue)
            .field("stream_queue", &self.stream_queue)
            .field("principal", &self.principal.as_ref().map(|_| "<fn>"))
            .field("tasks", &self.tasks)
            .finish()
    }
}

mcp_http_edge::impl_server_setters!(ModernConfig);
mcp_transport_core::impl_running_setters!(ModernConfig);

impl ModernConfig {
    /// Sets [`supported_versions`](Self::supported_versions).
    pub fn with_supported_versions(
        mut self,
        versions: impl IntoIterator<Item = ProtocolVersion>,
    ) -> Self {
        self.supported_versions = versions.into_iter().collect();
        self
    }

    /// Sets [`advertised_versions`](Self::advertised_versions).
    pub fn with_advertised_versions(mut self, versions: Option<Vec<ProtocolVersion>>) -> Self {
        self.advertised_versions = versions;
        self
    }

    /// Sets [`json_response`](Self::json_response).
    pub fn with_json_response(mut self, on: bool) -> Self {
        self.json_response = on;
        self
    }

    /// Sets [`keepalive`](Self::keepalive).
    pub fn with_keepalive(mut self, every: Option<Duration>) -> Self {
        self.keepalive = every;
        self
    }

    /// Sets [`discover_ttl_ms`](Self::discover_ttl_ms) and
    /// [`discover_cache_scope`](Self::discover_cache_scope).
    pub fn with_discover_cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.discover_ttl_ms = ttl_ms;
        self.discover_cache_scope = scope;
        self
    }

    /// Sets [`result_ttl_ms`](Self::result_ttl_ms) and
    /// [`result_cache_scope`](Self::result_cache_scope).
    pub fn with_result_cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.result_ttl_ms = ttl_ms;
        self.result_cache_scope = scope;
        self
    }

    /// Sets [`include_server_info`](Self::include_server_info).
    pub fn with_include_server_info(mut self, on: bool) -> Self {
        self.include_server_info = on;
        self
    }

    /// Sets [`state_key`](Self::state_key).
    pub fn with_state_key(mut self, key: Option<[u8; 32]>) -> Self {
        self.state_key = key;
        self
    }

    /// Sets [`state_ttl`](Self::state_ttl).
    pub fn with_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// Sets [`max_input_rounds`](Self::max_input_rounds).
    pub fn with_max_input_rounds(mut self, n: u32) -> Self {
        self.max_input_rounds = n;
        self
    }

    /// Sets [`max_listen_streams`](Self::max_listen_streams).
    pub fn with_max_listen_streams(mut self, n: usize) -> Self {
        self.max_listen_streams = n;
        self
    }

    /// Sets [`listen_queue`](Self::listen_queue).
    pub fn with_listen_queue(mut self, n: usize) -> Self {
        self.listen_queue = n;
        self
    }

    /// Sets [`stream_queue`](Self::stream_queue).
    pub fn with_stream_queue(mut self, n: usize) -> Self {
        self.stream_queue = n;
        self
    }

    /// Sets [`principal`](Self::principal).
    pub fn with_principal(mut self, principal: Option<PrincipalFn>) -> Self {
        self.principal = principal;
        self
    }

    /// Sets [`signals`](Self::signals).
    pub fn with_signals(mut self, bus: Option<Arc<dyn SignalBus>>) -> Self {
        self.signals = bus;
        self
    }

    /// Sets [`tasks`](Self::tasks).
    pub fn with_tasks(mut self, tasks: Option<TasksConfig>) -> Self {
        self.tasks = tasks;
        self
    }

    /// The configured versions this engine serves: the modern ones.
    pub(crate) fn served_versions(&self) -> Vec<ProtocolVersion> {
        self.supported_versions
            .iter()
            .filter(|v| v.is_modern())
            .cloned()
            .collect()
    }

    /// The versions advertised in `-32022` errors and `server/discover`.
    pub(crate) fn advertised(&self) -> Vec<ProtocolVersion> {
        self.advertised_versions
            .clone()
            .unwrap_or_else(|| self.supported_versions.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_served() {
        let c = ModernConfig::default();
        assert_eq!(c.served_versions(), [ProtocolVersion::V2026_07_28]);
        assert_eq!(c.advertised(), [ProtocolVersion::V2026_07_28]);
        let c = c
            .with_supported_versions([ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28])
            .with_advertised_versions(Some(vec![
                ProtocolVersion::V2026_07_28,
                ProtocolVersion::V2025_11_25,
            ]));
        assert_eq!(c.served_versions(), [ProtocolVersion::V2026_07_28]);
        assert_eq!(c.advertised().len(), 2);
    }

    /// Each setter sets its own field and leaves the others at their
    /// defaults (one that returned a default config would drop every
    /// setting made before it).
    #[test]
    fn each_setter_sets_its_field() {
        let bus: Arc<dyn SignalBus> =
            Arc::new(mcp_transport_core::session_store::LocalSignalBus::default());
        let c = ModernConfig::default()
            .with_json_response(true)
            .with_supported_versions([ProtocolVersion::parse("2099-01-01")])
            .with_stream_queue(3)
            .with_signals(Some(bus))
            .with_tasks(Some(TasksConfig {
                poll_interval_ms: 7,
                ..TasksConfig::default()
            }))
            .with_listen_queue(5);
        assert!(c.json_response, "kept through the setters after it");
        assert_eq!(c.supported_versions, [ProtocolVersion::parse("2099-01-01")]);
        assert_eq!(c.stream_queue, 3);
        assert!(c.signals.is_some());
        assert_eq!(c.tasks.as_ref().map(|t| t.poll_interval_ms), Some(7));
        assert_eq!(c.listen_queue, 5);
        let d = ModernConfig::default();
        assert_eq!((d.stream_queue, d.listen_queue), (16, 64));
        assert!(d.signals.is_none() && d.tasks.is_none());
    }

    /// A tasks configuration shows its settings, not its store.
    #[test]
    fn tasks_config_shows_its_settings() {
        let shown = format!("{:?}", TasksConfig::default());
        for part in [
            "TasksConfig",
            "ttl_ms: Some(3600000)",
            "poll_interval_ms: 500",
            "max_listen_task_ids: 256",
        ] {
            assert!(shown.contains(part), "{part} in {shown}");
        }
    }

    #[test]
    fn debug_redacts_the_key() {
        let c = ModernConfig::default().with_state_key(Some([7u8; 32]));
        let s = format!("{c:?}");
        assert!(s.contains("<redacted>") && !s.contains("7, 7"), "{s}");
    }
}
