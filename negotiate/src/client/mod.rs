//! The negotiating client: finds the best revision a server speaks.
//!
//! Configured with the revisions it may use, most preferred first, it finds
//! the server's era as 2026-07-28 *Versioning* ("Backward Compatibility with
//! Initialization-Based Versions") and *Streamable HTTP* ("Backward
//! Compatibility") say:
//!
//! 1. **Modern probe** (when a modern revision is allowed): `server/discover`
//!    with per-request metadata. Success, or a recognized modern error
//!    ([`probe::classify`]), means a modern server: stay modern (a `-32022`
//!    is retried with the highest mutual version from `supported`).
//! 2. **Legacy** (a 4xx without a recognized modern error, or no modern
//!    revision allowed): `initialize` offering the newest legacy revision
//!    allowed; the server's counter-offer is accepted when it is in the set.
//! 3. **HTTP+SSE** (when 2024-11-05 is allowed and Streamable HTTP failed
//!    with 400, 404 or 405 and no modern error): GET the URL, expect an
//!    `endpoint` event (2025-11-25 *Transports*, "Backwards Compatibility").
//!
//! When nothing matches, one [`NegotiateError::NoMatch`] lists what the
//! client offered and what the server answered at each step. The era found
//! is cached per origin ([`EraCache`]) and tried first next time; when the
//! cached answer stops working the origin is re-probed.

pub mod cache;
pub mod connection;
/// The deprecated 2024-11-05 HTTP+SSE client (crate `mcp-rev-2024-11-05`),
/// the last fallback.
pub use mcp_rev_2024_11_05 as http_sse;
pub mod probe;

use std::sync::Arc;
use std::time::Duration;

use mcp_rev_2026_07_28::client::{ModernClient, ModernClientConfig};
use mcp_session_engine::client::{ClientConfig, LegacyClient};
use mcp_transport_core::transport::{InputHandler, NoInput, TransportError};
use mcp_transport_core::version::{HttpTransport, list};
use mcp_transport_core::{Era, ProtocolVersion};
use serde_json::{Value, json};

pub use cache::{EraCache, origin_of};
pub use connection::{Connection, Underlying};
pub use probe::{Verdict, classify};

/// Configuration of [`connect`].
#[derive(Clone)]
pub struct NegotiateConfig {
    /// The server URL (the MCP endpoint; for HTTP+SSE, its SSE URL).
    pub url: String,
    /// Revisions the client may use, most preferred first. Any of
    /// 2024-11-05 (HTTP+SSE), 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28.
    pub revisions: Vec<ProtocolVersion>,
    /// `clientInfo`.
    pub client_info: Value,
    /// `ClientCapabilities`.
    pub capabilities: Value,
    /// Answers the server's requests for input, in every era.
    pub input_handler: Arc<dyn InputHandler>,
    /// The per-origin era cache (shared between connections when cloned).
    pub cache: Option<EraCache>,
    /// Overall timeout of each request (and of each probe).
    pub request_timeout: Option<Duration>,
    /// The HTTP client of every engine the negotiation tries — the modern
    /// probe, legacy `initialize`, the HTTP+SSE fallback — and of the
    /// connection it returns (`ClientHttp::http_client`; `None` builds one
    /// per engine with TLS and [`headers`](Self::headers)). It overrides
    /// the templates' own.
    pub http_client: Option<reqwest::Client>,
    /// Headers sent on every request of every engine, resumes and DELETE
    /// included (`ClientHttp::headers`; with a custom
    /// [`http_client`](Self::http_client), set them on that client).
    /// Added to the templates' own.
    pub headers: http::HeaderMap,
    /// Template for the legacy engine (its url, versions, info,
    /// capabilities and input handler are overwritten).
    pub legacy: ClientConfig,
    /// Template for the modern engine (overwritten likewise).
    pub modern: ModernClientConfig,
}

impl std::fmt::Debug for NegotiateConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NegotiateConfig")
            .field("url", &self.url)
            .field("revisions", &self.revisions)
            .finish_non_exhaustive()
    }
}

impl NegotiateConfig {
    /// Every revision, newest first.
    pub fn new(url: impl Into<String>) -> Self {
        let url = url.into();
        let mut revisions: Vec<ProtocolVersion> = ProtocolVersion::KNOWN.to_vec();
        revisions.reverse();
        NegotiateConfig {
            legacy: ClientConfig::new(url.clone()),
            modern: ModernClientConfig::new(url.clone()),
            url,
            revisions,
            client_info: json!({ "name": "mcp-negotiate", "version": env!("CARGO_PKG_VERSION") }),
            capabilities: json!({}),
            input_handler: Arc::new(NoInput),
            cache: None,
            request_timeout: Some(Duration::from_secs(60)),
            http_client: None,
            headers: http::HeaderMap::new(),
        }
    }

    /// Sets the revisions, most preferred first.
    pub fn with_revisions(mut self, revisions: Vec<ProtocolVersion>) -> Self {
        self.revisions = revisions;
        self
    }

    /// Sets the client capabilities.
    pub fn with_capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Sets the input handler.
    pub fn with_input_handler(mut self, handler: Arc<dyn InputHandler>) -> Self {
        self.input_handler = handler;
        self
    }

    /// Sets the HTTP client of every era ([`http_client`](Self::http_client)).
    pub fn with_http_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
        self
    }

    /// Adds a header sent on every request of every era
    /// ([`headers`](Self::headers)).
    pub fn with_header(mut self, name: http::HeaderName, value: http::HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Applies [`http_client`](Self::http_client) and
    /// [`headers`](Self::headers) to one engine's HTTP settings.
    fn apply_http(&self, http: &mut mcp_http_edge::config::ClientHttp) {
        if let Some(client) = &self.http_client {
            http.http_client = Some(client.clone());
        }
        for (name, value) in &self.headers {
            http.headers.append(name.clone(), value.clone());
        }
        http.request_timeout = self.request_timeout;
    }

    /// Uses (and fills) an era cache.
    pub fn with_cache(mut self, cache: EraCache) -> Self {
        self.cache = Some(cache);
        self
    }

    fn of_era(&self, pred: impl Fn(&ProtocolVersion) -> bool) -> Vec<ProtocolVersion> {
        self.revisions.iter().filter(|v| pred(v)).cloned().collect()
    }

    fn modern_versions(&self) -> Vec<ProtocolVersion> {
        self.of_era(|v| v.is_modern())
    }

    fn legacy_versions(&self) -> Vec<ProtocolVersion> {
        self.of_era(|v| {
            v.is_legacy() && v.has(|f| f.http_transport == HttpTransport::StreamableHttp)
        })
    }

    fn allows_http_sse(&self) -> bool {
        self.revisions
            .iter()
            .any(|v| v.has(|f| f.http_transport == HttpTransport::HttpSse))
    }

    fn modern_config(&self, versions: Vec<ProtocolVersion>) -> ModernClientConfig {
        let mut c = self.modern.clone();
        c.http.url = self.url.clone();
        c.versions = versions;
        c.client_info = Some(self.client_info.clone());
        c.capabilities = self.capabilities.clone();
        c.input_handler = self.input_handler.clone();
        self.apply_http(&mut c.http);
        c
    }

    fn legacy_config(&self, versions: Vec<ProtocolVersion>) -> ClientConfig {
        let mut c = self.legacy.clone();
        c.http.url = self.url.clone();
        c.versions = versions;
        c.client_info = self.client_info.clone();
        c.capabilities = self.capabilities.clone();
        c.input_handler = self.input_handler.clone();
        self.apply_http(&mut c.http);
        c
    }
}

/// Why no transport could be negotiated.
#[derive(Clone, Debug, thiserror::Error)]
pub enum NegotiateError {
    /// No revision both sides speak: what was offered and what came back.
    #[error(
        "no mutually supported MCP revision at {url}: the client offered {}; the server answered: {}",
        list(offered),
        answers.join("; ")
    )]
    NoMatch {
        /// The server URL.
        url: String,
        /// The client's revisions.
        offered: Vec<ProtocolVersion>,
        /// What each attempt got back.
        answers: Vec<String>,
    },
    /// The configuration is unusable.
    #[error("invalid negotiation configuration: {0}")]
    Config(String),
    /// A failure that says nothing about revisions (unreachable server, 5xx, …).
    #[error("cannot reach the server at {url}: {error}")]
    Transport {
        /// The server URL.
        url: String,
        /// The underlying error.
        error: TransportError,
    },
}

/// Finds the best revision the server at `config.url` speaks and returns a
/// [`Connection`] over it (see the module docs for the steps).
pub async fn connect(config: NegotiateConfig) -> Result<Connection, NegotiateError> {
    if config.revisions.is_empty() {
        return Err(NegotiateError::Config("no revision to offer".into()));
    }
    let origin = origin_of(&config.url)
        .ok_or_else(|| NegotiateError::Config(format!("not an http(s) URL: {}", config.url)))?;
    let mut answers = Vec::new();
    // The self-test's `ClientIgnoresEraCache` fault: as if none was given.
    let cache = config.cache.as_ref().filter(|_| {
        !config
            .legacy
            .http
            .faults
            .has(mcp_http_edge::faults::Fault::ClientIgnoresEraCache)
    });
    if let Some(cache) = cache
        && let Some(cached) = cache.get(&origin)
    {
        if config.revisions.contains(&cached) {
            match connect_cached(&config, &cached).await {
                Ok(mut c) => {
                    c.set_reason(format!(
                        "{cached} from the era cache for {origin} (no probe sent)"
                    ));
                    c.attach_cache(cache.clone(), origin);
                    return Ok(c);
                }
                Err(e) => answers.push(format!("cached {cached} stopped working ({e}); re-probed")),
            }
        }
        cache.forget(&origin);
    }
    let result = probe_all(&config, &mut answers).await;
    match result {
        Ok(mut c) => {
            if let Some(cache) = cache {
                cache.put(&origin, c.negotiated_revision());
                c.attach_cache(cache.clone(), origin);
            }
            Ok(c)
        }
        Err(e) => Err(e),
    }
}

async fn connect_cached(
    config: &NegotiateConfig,
    cached: &ProtocolVersion,
) -> Result<Connection, TransportError> {
    if cached.is_modern() {
        // Offer the cached modern revision first (the server answered it
        // before), so a client preferring a version the server lacks does
        // not pay a -32022 round trip on every connection.
        let mut versions = Vec::new();
        let modern = config.modern_versions();
        if modern.contains(cached) {
            versions.push(cached.clone());
        }
        versions.extend(modern.into_iter().filter(|v| v != cached));
        let client = ModernClient::new(config.modern_config(versions))?;
        return Ok(Connection::new(Underlying::Modern(client), String::new()));
    }
    if cached.has(|f| f.http_transport == HttpTransport::HttpSse) {
        let client = http_sse::HttpSseClient::connect(http_sse_config(config)).await?;
        return Ok(Connection::new(Underlying::HttpSse(client), String::new()));
    }
    // Offer the cached legacy revision first, the others after it.
    let mut versions = vec![cached.clone()];
    versions.extend(config.legacy_versions().into_iter().filter(|v| v != cached));
    let client = LegacyClient::connect(config.legacy_config(versions)).await?;
    Ok(Connection::new(Underlying::Legacy(client), String::new()))
}

fn http_sse_config(config: &NegotiateConfig) -> http_sse::HttpSseConfig {
    let mut c = http_sse::HttpSseConfig::new(config.url.clone());
    c.client_info = config.client_info.clone();
    c.capabilities = config.capabilities.clone();
    c.input_handler = config.input_handler.clone();
    config.apply_http(&mut c.http);
    c
}

fn unreachable(config: &NegotiateConfig, error: TransportError) -> NegotiateError {
    NegotiateError::Transport {
        url: config.url.clone(),
        error,
    }
}

async fn probe_all(
    config: &NegotiateConfig,
    answers: &mut Vec<String>,
) -> Result<Connection, NegotiateError> {
    let modern = config.modern_versions();
    let legacy = config.legacy_versions();
    // Whether Streamable HTTP was refused with 400, 404 or 405 and no modern
    // error: the condition for trying HTTP+SSE.
    let mut streamable_refused = modern.is_empty();
    // Step 1: the modern probe.
    if !modern.is_empty() {
        let client = ModernClient::new(config.modern_config(modern.clone()))
            .map_err(|e| NegotiateError::Config(e.to_string()))?;
        match client.discover().await {
            Ok(d) => {
                let chosen = mcp_transport_core::transport::Transport::revision(&client);
                let reason = format!(
                    "{chosen}: server/discover answered (server supports {}); modern era",
                    list(&d.supported_versions)
                );
                return Ok(Connection::new(Underlying::Modern(client), reason));
            }
            Err(e) => match classify(&e) {
                Verdict::Modern => {
                    answers.push(format!("server/discover: a modern server refused it: {e}"));
                    return Err(no_match(config, answers));
                }
                Verdict::ModernWithout { supported } => answers.push(format!(
                    "server/discover: a modern server supporting {}",
                    list(&supported)
                )),
                Verdict::Legacy { status } => {
                    streamable_refused = matches!(status, 400 | 404 | 405);
                    answers.push(format!(
                        "server/discover: HTTP {status} without a modern error ({e}): not a modern server"
                    ))
                }
                Verdict::Unreachable => return Err(unreachable(config, e)),
            },
        }
    }
    // Step 2: legacy initialize.
    if !legacy.is_empty() {
        match LegacyClient::connect(config.legacy_config(legacy.clone())).await {
            Ok(client) => {
                let chosen = mcp_transport_core::transport::Transport::revision(&client);
                let how = if chosen == legacy[0] {
                    "the server accepted the offered version".to_owned()
                } else {
                    format!("the server counter-offered it to {}", legacy[0])
                };
                let prefix = if answers.is_empty() {
                    String::new()
                } else {
                    format!("after {}: ", answers.join("; "))
                };
                let reason = format!("{prefix}{chosen} via initialize ({how}); legacy era");
                return Ok(Connection::new(Underlying::Legacy(client), reason));
            }
            Err(TransportError::Config(e)) => return Err(NegotiateError::Config(e.to_string())),
            Err(e) => {
                streamable_refused = matches!(
                    &e,
                    TransportError::Http { status: 400 | 404 | 405, rpc, .. }
                        if !rpc.as_ref().is_some_and(|r| probe::is_modern_error(400, r))
                );
                let modern_refusal = matches!(
                    &e,
                    TransportError::Http { status, rpc: Some(r), .. } if probe::is_modern_error(*status, r)
                );
                answers.push(format!("initialize offering {}: {e}", legacy[0]));
                if !(streamable_refused
                    || modern_refusal
                    || matches!(e, TransportError::Negotiation(_)))
                {
                    return Err(unreachable(config, e));
                }
            }
        }
    }
    // Step 3: the deprecated HTTP+SSE transport.
    if config.allows_http_sse() && streamable_refused {
        match http_sse::HttpSseClient::connect(http_sse_config(config)).await {
            Ok(client) => {
                let reason = format!(
                    "after {}: 2024-11-05 over the deprecated HTTP+SSE transport (endpoint event received)",
                    answers.join("; ")
                );
                return Ok(Connection::new(Underlying::HttpSse(client), reason));
            }
            Err(e) => answers.push(format!("HTTP+SSE GET: {e}")),
        }
    }
    Err(no_match(config, answers))
}

fn no_match(config: &NegotiateConfig, answers: &[String]) -> NegotiateError {
    NegotiateError::NoMatch {
        url: config.url.clone(),
        offered: config.revisions.clone(),
        answers: answers.to_vec(),
    }
}

/// The era of a revision, for reports.
pub fn era_of(v: &ProtocolVersion) -> Era {
    v.era()
}
