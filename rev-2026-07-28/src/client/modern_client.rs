//! [`ModernClient`] and its [`Transport`] implementation.

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::stream;
use mcp_transport_core::jsonrpc::{METHOD_NOT_FOUND, Message, Notification};
use mcp_transport_core::negotiation::highest_mutual;
use mcp_transport_core::transport::{
    ListenFilter, Misbehaviour, Negotiated, RequestOptions, ResponseStream, ServerMessages,
    Transport, TransportError,
};
use mcp_transport_core::{Era, ProtocolVersion};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::config::ModernClientConfig;
use super::listen::{self, Subscription};
use super::meta;
use super::request::Call;
use super::run;
use super::shared::Shared;
use super::tool_cache::HeaderParam;
use super::wire;

/// What `server/discover` returned (*Discovery*, "DiscoverResult").
#[derive(Clone, Debug)]
pub struct DiscoverResult {
    /// `supportedVersions`.
    pub supported_versions: Vec<ProtocolVersion>,
    /// `capabilities` (`ServerCapabilities`).
    pub capabilities: Value,
    /// `_meta["io.modelcontextprotocol/serverInfo"]`, when sent.
    pub server_info: Option<Value>,
    /// `instructions`, when sent.
    pub instructions: Option<String>,
    /// The whole result, as sent.
    pub raw: Value,
}

/// The 2026-07-28 (stateless) Streamable HTTP client.
///
/// There is nothing to set up: every request carries its own metadata, so
/// [`ModernClient::new`] sends nothing and [`Transport::close`] has nothing
/// to tear down. Cheap to clone (the state is shared).
///
/// ```no_run
/// # async fn demo() -> Result<(), mcp_transport_core::transport::TransportError> {
/// use mcp_rev_2026_07_28::client::{ModernClient, ModernClientConfig};
/// use mcp_transport_core::transport::{RequestOptions, Transport};
///
/// let client = ModernClient::new(ModernClientConfig::new("http://127.0.0.1:8080/mcp"))?;
/// let tools = client.list_tools().await?; // also fills the x-mcp-header cache
/// let params = serde_json::value::to_raw_value(&serde_json::json!({
///     "name": "get_weather", "arguments": {"location": "Seattle"}
/// })).unwrap();
/// let response = client
///     .request("tools/call", Some(params), RequestOptions::default())
///     .await?
///     .response() // dropping the stream instead would cancel the call
///     .await?;
/// # let _ = (tools, response); Ok(()) }
/// ```
#[derive(Clone)]
pub struct ModernClient {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ModernClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModernClient")
            .field("url", &self.shared.url.as_str())
            .field("version", &self.shared.version())
            .finish_non_exhaustive()
    }
}

impl ModernClient {
    /// A client for `config.http.url`. Sends nothing ("There is no negotiation
    /// handshake", *Versioning*). Fails (`TransportError::Connection`) on an
    /// invalid URL, an empty version list or a legacy version in it.
    pub fn new(config: ModernClientConfig) -> Result<Self, TransportError> {
        Ok(ModernClient {
            shared: Arc::new(Shared::new(config)?),
        })
    }

    /// `server/discover` (*Discovery*): the server's versions, capabilities
    /// and identity. When the client's current version is not among
    /// `supportedVersions`, later requests switch to the highest mutual
    /// version ("The client should choose one of these for subsequent
    /// requests"); no mutual version is `TransportError::Negotiation`. A
    /// JSON-RPC error is `TransportError::Http` carrying it.
    pub async fn discover(&self) -> Result<DiscoverResult, TransportError> {
        let raw = run::call_value(self.shared.clone(), "server/discover", Map::new()).await?;
        let supported_versions: Vec<ProtocolVersion> = raw
            .get("supportedVersions")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .ok_or_else(|| {
                TransportError::PeerMisbehaved(Misbehaviour::MalformedResult {
                    what: "server/discover result".into(),
                    detail: "it has no supportedVersions list".into(),
                })
            })?;
        let current = self.shared.version();
        if !supported_versions.contains(&current) {
            let chosen = highest_mutual(
                &self.shared.config.versions,
                &supported_versions,
                Some(Era::Modern),
            )?;
            let reason = format!(
                "{chosen}: the highest version in both the client's list ({}) and server/discover's supportedVersions ({})",
                mcp_transport_core::version::list(&self.shared.config.versions),
                mcp_transport_core::version::list(&supported_versions),
            );
            self.shared.set_version(chosen, reason);
        }
        Ok(DiscoverResult {
            supported_versions,
            capabilities: raw.get("capabilities").cloned().unwrap_or(Value::Null),
            server_info: raw
                .get("_meta")
                .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
                .cloned(),
            instructions: raw
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            raw,
        })
    }

    /// Every page of `tools/list`, without the tools whose `x-mcp-header`
    /// annotations are invalid (each logged as a warning); refreshes the
    /// cache the `Mcp-Param-*` headers of `tools/call` are computed from.
    pub async fn list_tools(&self) -> Result<Vec<Value>, TransportError> {
        self.shared.check_open()?;
        run::list_all_tools(self.shared.clone()).await
    }

    /// The cached `x-mcp-header` annotations of a tool (`None` when the tool
    /// has not been listed, or was rejected).
    pub fn tool_header_params(&self, tool: &str) -> Option<Vec<HeaderParam>> {
        self.shared.tools.get(tool)
    }

    /// Opens a `subscriptions/listen` stream and waits for its
    /// acknowledgment (see "Subscriptions" in the [module docs](super) for
    /// the checks and what is delivered).
    pub async fn subscribe(&self, filter: ListenFilter) -> Result<Subscription, TransportError> {
        listen::subscribe(self.shared.clone(), filter).await
    }

    /// Follows the task `task_id` (Tasks extension) to its end, as
    /// `request` follows a task it created: `tasks/get` every
    /// `pollIntervalMs`, input through the input handler and `tasks/update`,
    /// each status as a `notifications/tasks` event, the task's outcome as
    /// the response. For a caller that persisted the id (*Tasks*: "Clients
    /// SHOULD persist task IDs to durable storage so that polling can
    /// resume after a crash or restart"). The configured capabilities must
    /// declare the extension (the server answers `-32021` otherwise), and
    /// dropping the stream before the end cancels the task.
    pub async fn resume_task(&self, task_id: &str) -> Result<ResponseStream, TransportError> {
        self.shared.check_open()?;
        let mut call = Call::for_task(self.shared.clone(), task_id);
        run::open(&mut call).await?;
        let link = call.link.clone();
        Ok(
            ResponseStream::new(stream::unfold(call, |mut call| async move {
                let item = run::next(&mut call).await?;
                Some((item, call))
            }))
            .with_task_link(link),
        )
    }
}

#[async_trait]
impl Transport for ModernClient {
    /// The protocol version the next request will carry.
    fn revision(&self) -> ProtocolVersion {
        self.shared.version()
    }

    fn negotiated(&self) -> Negotiated {
        let choice = self.shared.version_choice();
        Negotiated::new(
            choice.version,
            format!("stateless per-request model; {}", choice.reason),
        )
    }

    /// POSTs the request with its `_meta` and headers; returns once the
    /// answer has started (an HTTP refusal is returned here). See
    /// "Requests" in the [module docs](super) for the retries and what the
    /// stream yields. Dropping the stream cancels the request by closing it.
    async fn request(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<ResponseStream, TransportError> {
        self.shared.check_open()?;
        let mut call = Call::new(self.shared.clone(), method, params.as_deref(), options)?;
        run::open(&mut call).await?;
        let link = call.link.clone();
        Ok(
            ResponseStream::new(stream::unfold(call, |mut call| async move {
                let item = run::next(&mut call).await?;
                Some((item, call))
            }))
            .with_task_link(link),
        )
    }

    /// POSTs a notification (answered by 202). This revision defines no
    /// client-to-server notifications over Streamable HTTP; in particular
    /// `notifications/cancelled` is refused (`TransportError::Unsupported`):
    /// "closing the SSE response stream is itself the cancellation signal" —
    /// drop the request's `ResponseStream` instead.
    async fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.shared.check_open()?;
        if notification.method == "notifications/cancelled" {
            return Err(TransportError::Unsupported {
                revision: ProtocolVersion::V2026_07_28,
                what: "notifications/cancelled over Streamable HTTP (drop the request's ResponseStream: closing it is the cancellation)",
            });
        }
        let version = self.shared.version();
        let headers = meta::notification_headers(&notification.method, &version)?;
        let what = format!("POST {} (notification)", notification.method);
        let body = Message::Notification(notification).to_json();
        let builder = self
            .shared
            .http
            .post(self.shared.url.clone())
            .headers(headers)
            .body(body);
        let response = wire::send(builder, &what).await?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let body = wire::read_limited(response, wire::MAX_ERROR_BODY).await;
        let rpc = wire::error_response(&body).and_then(|r| r.payload.err());
        Err(TransportError::Http {
            status: status.as_u16(),
            message: rpc
                .as_ref()
                .map_or_else(|| wire::body_excerpt(&body, status), |e| e.message.clone()),
            rpc,
        })
    }

    /// `subscriptions/listen` with `filter`; the stream starts with the
    /// acknowledgment (see [`ModernClient::subscribe`]).
    /// [`subscribe`](ModernClient::subscribe)'s messages. A server without
    /// `subscriptions/listen` (it answers `-32601` Method not found) is
    /// [`TransportError::NotOffered`], as a legacy server's 405 on GET is;
    /// `subscribe` itself returns the `Http` error carrying the `-32601`.
    async fn listen(&self, filter: ListenFilter) -> Result<ServerMessages, TransportError> {
        match self.subscribe(filter).await {
            Ok(subscription) => Ok(subscription.messages),
            Err(TransportError::Http { rpc: Some(e), .. }) if e.code == METHOD_NOT_FOUND => {
                Err(TransportError::NotOffered {
                    what: "subscriptions/listen (answered -32601 Method not found)",
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Nothing to tear down (no session). Marks the client closed: streams
    /// in flight end with `TransportError::Closed` (their connections are
    /// dropped, which cancels them) and later calls fail with it.
    async fn close(&self) -> Result<(), TransportError> {
        self.shared.closed.cancel();
        Ok(())
    }
}
