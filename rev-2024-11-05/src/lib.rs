//! # mcp-rev-2024-11-05
//!
//! The client of the deprecated 2024-11-05 **HTTP+SSE** transport: the last
//! fallback of the negotiating client, for servers that predate Streamable
//! HTTP; and a small server of it ([`server`]), for the compatibility
//! matrix's 2024-11-05 column.
//!
//! 2026-07-28 *Streamable HTTP*, "HTTP+SSE Transport (2024-11-05)": the
//! transport "has been deprecated since protocol version `2025-03-26`";
//! "New implementations SHOULD NOT adopt it". Clients that want to reach
//! older servers follow 2025-11-25 *Transports*, "Backwards Compatibility":
//! after the POST of Streamable HTTP failed with 400, 404 or 405, "Issue a
//! GET request to the server URL, expecting that this will open an SSE
//! stream and return an `endpoint` event as the first event." That GET is
//! [`HttpSseClient::connect`].
//!
//! # The transport (2024-11-05 *Transports*, "HTTP with SSE")
//!
//! * "The server MUST provide two endpoints": "An SSE endpoint, for clients
//!   to establish a connection and receive messages from the server" and "A
//!   regular HTTP POST endpoint for clients to send messages to the server".
//! * "When a client connects, the server MUST send an `endpoint` event
//!   containing a URI for the client to use for sending messages. All
//!   subsequent client messages MUST be sent as HTTP POST requests to this
//!   endpoint." The URI is resolved against the SSE URL and must be of the
//!   same origin (others are refused: every message, input
//!   handler answers included, would otherwise go to a third party).
//! * "Server messages are sent as SSE `message` events, with the message
//!   content encoded as JSON in the event data." One reader task owns the
//!   stream and routes each message: a response to the request with its id,
//!   a `notifications/progress` to the request whose id is its
//!   `progressToken`, a server-to-client request to the
//!   [`InputHandler`](mcp_transport_core::transport::InputHandler) (its
//!   answer is POSTed), everything else to the listener.
//!
//! There are no event ids and no resumption: if the SSE stream ends or
//! breaks, the connection is over. Every in-flight request fails with
//! `TransportError::ResumeFailed(ResumeFailure::NotResumable)` (the typed
//! error of every revision without resumption), and every later call with
//! a [`TransportError::Connection`] that says why (connect again for a new
//! connection).
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcp_transport_core::transport::TransportError> {
//! use mcp_rev_2024_11_05::{HttpSseClient, HttpSseConfig};
//! use mcp_transport_core::transport::{RequestOptions, Transport};
//!
//! let client = HttpSseClient::connect(HttpSseConfig::new("http://127.0.0.1:3000/sse")).await?;
//! let tools = client
//!     .request("tools/list", None, RequestOptions::default())
//!     .await?
//!     .response()
//!     .await?;
//! println!("{:?}", tools.payload);
//! client.close().await?;
//! # Ok(()) }
//! ```
//!
//! | module | what it does |
//! | --- | --- |
//! | `config` | [`HttpSseConfig`]: offered versions, input handler, bounds |
//! | `open` | the GET, the `endpoint` event, same-origin resolution |
//! | `reader` | the task that owns the SSE stream and routes messages |
//! | `request` | POST of a request, its [`ResponseStream`], `notifications/cancelled` |
//! | `shared` | the routing table, the connection's end, the POST |

mod config;
mod open;
mod reader;
mod request;
pub mod server;
mod shared;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use futures_util::stream;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{Message, Notification, to_raw};
use mcp_transport_core::negotiation::legacy_client_accept;
use mcp_transport_core::transport::{
    ListenFilter, Negotiated, RequestOptions, ResponseStream, ServerMessages, Transport,
    TransportError,
};
use serde_json::value::RawValue;
use tokio::sync::mpsc;

pub use config::{
    DEFAULT_CHANNEL_CAPACITY, DEFAULT_ENDPOINT_TIMEOUT, DEFAULT_MAX_CONCURRENT_INPUT,
    DEFAULT_REQUEST_TIMEOUT, HttpSseConfig,
};
/// What the server answered to `initialize` (2024-11-05 *Lifecycle*,
/// "Initialization"); the same type the Streamable HTTP legacy client uses.
pub use mcp_session_engine::client::InitializeResult;

use request::Cancel;
use shared::{Lifeline, Shared};

/// One connection to a server speaking the deprecated 2024-11-05 HTTP+SSE
/// transport (see the [module docs](self)).
///
/// Cheap to clone: clones share the connection. The connection ends when
/// [`close`](Transport::close) is called, when the SSE stream ends, or when
/// the last clone and the last [`ResponseStream`] are dropped (a
/// [`ServerMessages`] listener does not keep it open).
#[derive(Clone)]
pub struct HttpSseClient {
    shared: Arc<Shared>,
    lifeline: Arc<Lifeline>,
    init: Arc<InitializeResult>,
    revision: ProtocolVersion,
}

impl fmt::Debug for HttpSseClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSseClient")
            .field("sse_url", &self.shared.sse_url.as_str())
            .field("endpoint", &self.shared.endpoint.as_str())
            .field("revision", &self.revision)
            .field("ended", &self.shared.end_reason())
            .finish()
    }
}

impl HttpSseClient {
    /// Connects (2025-11-25 *Transports*, "Backwards Compatibility", and
    /// 2024-11-05 *Lifecycle*, "Initialization"):
    ///
    /// 1. GETs `config.http.url` with `Accept: text/event-stream` and waits, at
    ///    most [`endpoint_timeout`](HttpSseConfig::endpoint_timeout), for
    ///    the `endpoint` event, which must be the stream's first event. A
    ///    non-2xx answer is [`TransportError::Http`]; a 2xx that is not
    ///    `text/event-stream`, a first event of another type, an endpoint of
    ///    another origin or no event in time is
    ///    [`TransportError::PeerMisbehaved`] (with [`Misbehaviour::WrongContentType`](mcp_transport_core::transport::Misbehaviour::WrongContentType),
    ///    [`Misbehaviour::FirstEventNotEndpoint`](mcp_transport_core::transport::Misbehaviour::FirstEventNotEndpoint),
    ///    [`Misbehaviour::EndpointOriginMismatch`](mcp_transport_core::transport::Misbehaviour::EndpointOriginMismatch) or
    ///    [`Misbehaviour::NoEndpointEvent`](mcp_transport_core::transport::Misbehaviour::NoEndpointEvent)); each says the server does not
    ///    speak HTTP+SSE.
    /// 2. Starts the reader task on the stream.
    /// 3. POSTs `initialize` offering `config.protocol_versions[0]` (the
    ///    result arrives on the stream), accepts the server's version when
    ///    it is in `config.protocol_versions` (else a
    ///    [`TransportError::Negotiation`] naming both sides, and the
    ///    connection is dropped: "If the client does not support the version
    ///    in the server's response, it SHOULD disconnect"), and POSTs
    ///    `notifications/initialized`.
    ///
    /// # Errors
    ///
    /// [`TransportError::Config`] for an unusable configuration
    /// (nothing is sent), and the errors above. A JSON-RPC error in answer
    /// to `initialize` is [`TransportError::Http`] with status 202 (what the
    /// POST got) and the error in `rpc`; no answer within
    /// [`request_timeout`](mcp_http_edge::config::ClientHttp::request_timeout) is
    /// [`TransportError::Timeout`].
    pub async fn connect(config: HttpSseConfig) -> Result<Self, TransportError> {
        let sse_url = config.validate()?;
        let http = config.http.client()?;
        let opened = open::open(
            &http,
            &sse_url,
            config.max_event_bytes,
            config.endpoint_timeout,
        )
        .await?;
        let shared = Shared::new(config, http, sse_url, opened.endpoint);
        // From here, returning early drops the lifeline, which ends the
        // reader and the SSE stream.
        let lifeline = Arc::new(Lifeline(shared.clone()));
        reader::spawn(shared.clone(), opened.body);
        let (init, revision) = handshake(&shared, &lifeline).await?;
        Ok(HttpSseClient {
            shared,
            lifeline,
            init: Arc::new(init),
            revision,
        })
    }

    /// What the server answered to `initialize`.
    pub fn initialize_result(&self) -> Arc<InitializeResult> {
        self.init.clone()
    }

    /// The server's `serverInfo` (an `Implementation` object).
    pub fn server_info(&self) -> serde_json::Value {
        self.init.server_info.clone()
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> serde_json::Value {
        self.init.capabilities.clone()
    }

    /// The SSE URL the client connected to.
    pub fn sse_url(&self) -> &str {
        self.shared.sse_url.as_str()
    }

    /// The message endpoint the server named in its `endpoint` event,
    /// resolved against the SSE URL.
    pub fn endpoint(&self) -> &str {
        self.shared.endpoint.as_str()
    }

    /// Why the connection is over (`Closed` after [`close`](Transport::close),
    /// else the error that ended it), or `None` while it is open.
    pub fn end_reason(&self) -> Option<TransportError> {
        self.shared.end_reason()
    }
}

/// `initialize`, version check, `notifications/initialized`.
async fn handshake(
    shared: &Arc<Shared>,
    lifeline: &Arc<Lifeline>,
) -> Result<(InitializeResult, ProtocolVersion), TransportError> {
    let versions = shared.config.protocol_versions.clone();
    let offered = versions[0].clone();
    let params = serde_json::json!({
        "protocolVersion": offered,
        "capabilities": shared.config.capabilities,
        "clientInfo": shared.config.client_info,
    });
    let params = to_raw(&params).map_err(|e| {
        TransportError::InvalidInput(format!("serializing the initialize params: {e}"))
    })?;
    let response = request::start(
        shared.clone(),
        lifeline.clone(),
        "initialize",
        Some(params),
        RequestOptions::default(),
        Cancel::Never,
    )
    .await?
    .response()
    .await?;
    let result = match response.payload {
        Ok(result) => result,
        Err(error) => {
            return Err(TransportError::Http {
                status: 202,
                message: format!(
                    "the HTTP+SSE server accepted initialize (offering {offered}) but refused it \
                     on the SSE stream: {error}"
                ),
                rpc: Some(error),
            });
        }
    };
    let init = InitializeResult::from_raw(result)?;
    // "If the client does not support the version in the server's
    // response, it SHOULD disconnect": returning drops the lifeline.
    let revision = legacy_client_accept(&offered, &init.protocol_version, &versions)?;
    let initialized = Message::Notification(Notification {
        method: "notifications/initialized".into(),
        params: None,
    });
    shared
        .post(
            &initialized,
            "POST notifications/initialized to the HTTP+SSE endpoint",
        )
        .await?;
    tracing::debug!(%revision, endpoint = %shared.endpoint, "HTTP+SSE connection initialized");
    Ok((init, revision))
}

#[async_trait]
impl Transport for HttpSseClient {
    /// The version `initialize` negotiated (2024-11-05 unless the client
    /// was configured to accept another one).
    fn revision(&self) -> ProtocolVersion {
        self.revision.clone()
    }

    fn negotiated(&self) -> Negotiated {
        let revision = self.revision();
        Negotiated::new(
            revision.clone(),
            format!(
                "the deprecated HTTP+SSE transport (endpoint {}); initialize offered {} and the \
                 server answered {revision}",
                self.shared.endpoint, self.shared.config.protocol_versions[0]
            ),
        )
    }

    /// POSTs the request to the endpoint (ids are integers counting up) and
    /// returns the stream of its progress notifications (when
    /// `options.progress`, a progress token is attached) and then its
    /// response, both read off the SSE stream. Dropping the stream before
    /// the response sends `notifications/cancelled` (2024-11-05
    /// *Cancellation*); so does a timeout. Server-to-client requests are
    /// not tied to any request on this transport: they go to the listener.
    /// `options.safe_to_retry` changes nothing: a broken SSE stream ends
    /// the whole connection, so there is nothing to re-issue the request on.
    async fn request(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<ResponseStream, TransportError> {
        request::start(
            self.shared.clone(),
            self.lifeline.clone(),
            method,
            params,
            options,
            Cancel::OnDrop,
        )
        .await
    }

    /// POSTs the notification to the endpoint (any 2xx is success).
    async fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.shared.check_open()?;
        let what = format!("POST {} to the HTTP+SSE endpoint", notification.method);
        self.shared
            .post(&Message::Notification(notification), &what)
            .await
    }

    /// The server's messages not tied to a request: notifications other
    /// than a request's progress, copies of server-to-client requests
    /// (already answered through the input handler), and responses no
    /// request waits for. The filter is applied client-side (the server
    /// sends what it sends): a filter that selects nothing passes
    /// everything; one that selects something drops the change
    /// notifications it does not select.
    ///
    /// **One listener at a time**: all of them arrive on the one SSE stream,
    /// so a second `listen` while the first [`ServerMessages`] is still
    /// alive fails with [`TransportError::InvalidInput`]; drop the first to
    /// open another. Messages that arrive while no listener is open, or
    /// while the listener is [`channel_capacity`](HttpSseConfig::channel_capacity)
    /// messages behind, are dropped (and logged). The stream ends when the
    /// connection does, with the error that ended it unless it was closed.
    async fn listen(&self, filter: ListenFilter) -> Result<ServerMessages, TransportError> {
        let (tx, rx) = mpsc::channel(self.shared.config.channel_capacity);
        self.shared.set_listener(tx)?;
        let state = Listening {
            shared: self.shared.clone(),
            rx,
            filter,
            done: false,
        };
        Ok(ServerMessages::new(stream::unfold(
            state,
            |mut state| async move {
                let item = state.next().await?;
                Some((item, state))
            },
        )))
    }

    /// Ends the connection: drops the SSE stream (which is how a 2024-11-05
    /// client ends its session: "Client->>Server: Close SSE connection")
    /// and stops the reader. In-flight requests and later calls fail with
    /// [`TransportError::Closed`]; closing twice is a no-op.
    async fn close(&self) -> Result<(), TransportError> {
        self.shared.end(TransportError::Closed);
        Ok(())
    }
}

/// The state behind the listener's [`ServerMessages`].
struct Listening {
    shared: Arc<Shared>,
    rx: mpsc::Receiver<Message>,
    filter: ListenFilter,
    done: bool,
}

impl Listening {
    async fn next(&mut self) -> Option<Result<Message, TransportError>> {
        while !self.done {
            match self.rx.recv().await {
                Some(Message::Notification(n)) if !self.filter.admits(&n) => {}
                Some(message) => return Some(Ok(message)),
                None => {
                    self.done = true;
                    match self.shared.end_reason() {
                        Some(TransportError::Closed) | None => {}
                        Some(e) => return Some(Err(e)),
                    }
                }
            }
        }
        None
    }
}
