//! The state the client handles, the reader task and every stream share:
//! the routing table, the connection's fate, and the POST to the endpoint.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use http::header::CONTENT_TYPE;
use mcp_http_edge::client::{MAX_ERROR_BODY, body_excerpt, read_limited, rpc_error, send};
use mcp_http_edge::headers::JSON;
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::jsonrpc::{Message, Notification, RequestId, Response};
use mcp_transport_core::transport::TransportError;
use serde::Deserialize;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tracing::Instrument;

use super::config::HttpSseConfig;

/// Where the reader delivers what belongs to one in-flight request.
pub(crate) struct Pending {
    /// Its progress notifications (bounded; dropped when full).
    pub(crate) notes: mpsc::Sender<Notification>,
    /// Its response, or why it will never come.
    pub(crate) outcome: oneshot::Sender<Result<Response, TransportError>>,
    /// Whether a progress token (the request id) was attached.
    pub(crate) progress: bool,
}

/// Messages waiting for a consumer, keyed by who waits.
#[derive(Default)]
struct Routes {
    /// In-flight requests by id.
    pending: HashMap<RequestId, Pending>,
    /// The one listener, if any.
    listener: Option<mpsc::Sender<Message>>,
    /// Why the connection is over (`None` while it is open). Set once, under
    /// the same lock as `pending`, so no request is registered after the
    /// in-flight ones were failed.
    ended: Option<TransportError>,
}

/// Shared client state.
pub(crate) struct Shared {
    /// The configuration.
    pub(crate) config: HttpSseConfig,
    /// The HTTP client.
    pub(crate) http: reqwest::Client,
    /// The SSE URL.
    pub(crate) sse_url: reqwest::Url,
    /// The message endpoint from the `endpoint` event (same origin as
    /// `sse_url`).
    pub(crate) endpoint: reqwest::Url,
    /// Fired when the connection ends (closed, dropped or broken): the reader
    /// stops and drops the SSE stream.
    pub(crate) ended: CancellationToken,
    /// Bounds the server-to-client requests answered at once.
    pub(crate) input_permits: Arc<Semaphore>,
    next_id: AtomicI64,
    routes: Mutex<Routes>,
}

impl Shared {
    /// The shared state of a connection whose `endpoint` event has arrived.
    pub(crate) fn new(
        config: HttpSseConfig,
        http: reqwest::Client,
        sse_url: reqwest::Url,
        endpoint: reqwest::Url,
    ) -> Arc<Self> {
        let permits = config.max_concurrent_input;
        Arc::new(Shared {
            config,
            http,
            sse_url,
            endpoint,
            ended: CancellationToken::new(),
            input_permits: Arc::new(Semaphore::new(permits)),
            next_id: AtomicI64::new(1),
            routes: Mutex::new(Routes::default()),
        })
    }

    fn routes(&self) -> MutexGuard<'_, Routes> {
        // A panic while holding the lock leaves consistent data (every
        // critical section is a single map operation).
        self.routes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A fresh request id (integers counting up).
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// `Err` once the connection is over: `Closed` after `close()`, else
    /// the error that ended it.
    pub(crate) fn check_open(&self) -> Result<(), TransportError> {
        match &self.routes().ended {
            None => Ok(()),
            Some(e) => Err(e.clone()),
        }
    }

    /// Why the connection is over, if it is.
    pub(crate) fn end_reason(&self) -> Option<TransportError> {
        self.routes().ended.clone()
    }

    /// Registers an in-flight request, unless the connection is over.
    pub(crate) fn register(&self, id: RequestId, pending: Pending) -> Result<(), TransportError> {
        let mut routes = self.routes();
        if let Some(e) = &routes.ended {
            return Err(e.clone());
        }
        routes.pending.insert(id, pending);
        Ok(())
    }

    /// Forgets an in-flight request (its stream was dropped or gave up).
    pub(crate) fn unregister(&self, id: &RequestId) {
        self.routes().pending.remove(id);
    }

    /// Installs the listener, unless one is already open or the connection
    /// is over.
    pub(crate) fn set_listener(&self, sender: mpsc::Sender<Message>) -> Result<(), TransportError> {
        let mut routes = self.routes();
        if let Some(e) = &routes.ended {
            return Err(e.clone());
        }
        if routes.listener.as_ref().is_some_and(|l| !l.is_closed()) {
            return Err(TransportError::InvalidInput(
                "a listener is already open on this HTTP+SSE connection (its one SSE stream \
                 carries the server's messages to one listener at a time); drop it first"
                    .into(),
            ));
        }
        routes.listener = Some(sender);
        Ok(())
    }

    /// Ends the connection with `reason` (the first reason wins, except that
    /// `Closed` always replaces an earlier one): every
    /// in-flight request fails with it, the listener ends, the reader stops
    /// and drops the SSE stream. Returns whether this call ended it.
    pub(crate) fn end(&self, reason: TransportError) -> bool {
        let (pending, listener) = {
            let mut routes = self.routes();
            if routes.ended.is_some() {
                // After `close()`, later calls say `Closed` even when the
                // stream had broken first.
                if matches!(reason, TransportError::Closed) {
                    routes.ended = Some(reason);
                }
                return false;
            }
            routes.ended = Some(reason.clone());
            (std::mem::take(&mut routes.pending), routes.listener.take())
        };
        self.ended.cancel();
        drop(listener);
        for (id, p) in pending {
            // The transport has no event ids and no resumption: a request
            // whose stream broke is lost, and says so in the typed way the
            // other revisions without resumption do.
            let error = match &reason {
                TransportError::Connection(why) => TransportError::ResumeFailed(
                    mcp_transport_core::transport::ResumeFailure::NotResumable {
                        revision: mcp_transport_core::ProtocolVersion::V2024_11_05,
                        what: format!("the answer to request {id}"),
                        why: why.clone(),
                    },
                ),
                other => other.clone(),
            };
            let _ = p.outcome.send(Err(error));
        }
        true
    }

    /// Delivers a response to the request it answers; gives it back when no
    /// request of that id is waiting.
    pub(crate) fn deliver_response(&self, response: Response) -> Option<Response> {
        let Some(id) = &response.id else {
            return Some(response);
        };
        let Some(pending) = self.routes().pending.remove(id) else {
            return Some(response);
        };
        // The stream may have been dropped meanwhile: nothing to do then.
        let _ = pending.outcome.send(Ok(response));
        None
    }

    /// Delivers a progress notification to the request whose token it
    /// carries (2024-11-05 *Progress*: "`progressToken` ... MUST reference
    /// a token provided in an active request"); gives it back when none is
    /// waiting for it.
    pub(crate) fn deliver_progress(&self, note: Notification) -> Option<Notification> {
        let Some(id) = progress_token(&note) else {
            return Some(note);
        };
        let routes = self.routes();
        let Some(pending) = routes.pending.get(&id).filter(|p| p.progress) else {
            return Some(note);
        };
        match pending.notes.try_send(note) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => tracing::warn!(
                %id,
                "dropping a progress notification: the request's stream is not being read"
            ),
            // The stream was dropped; its guard is about to unregister it.
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
        None
    }

    /// Hands a message not tied to a request to the listener, if one is open.
    pub(crate) fn to_listener(&self, message: Message) {
        let routes = self.routes();
        let Some(listener) = &routes.listener else {
            tracing::debug!(
                method = ?message.method(),
                "no listener: dropping a server message not tied to a request"
            );
            return;
        };
        if let Err(mpsc::error::TrySendError::Full(m)) = listener.try_send(message) {
            tracing::warn!(method = ?m.method(), "dropping a server message: the listener is not being read");
        }
    }

    /// POSTs one message to the endpoint (2024-11-05 *Transports*, "HTTP
    /// with SSE": "All subsequent client messages MUST be sent as HTTP POST
    /// requests to this endpoint"). Any 2xx is accepted (servers answer 202
    /// and send the response, if any, on the SSE stream); other statuses are
    /// [`TransportError::Http`].
    pub(crate) async fn post(&self, message: &Message, what: &str) -> Result<(), TransportError> {
        let builder = self
            .http
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, JSON)
            .body(message.to_json());
        // The POST of a request runs in its `mcp.client.request` span
        // (mcp_http_edge::trace); its answer comes on the SSE stream.
        let span = match message {
            Message::Request(r) => tracing::info_span!(
                "mcp.client.request",
                rpc.method = %r.method,
                rpc.id = %r.id,
                mcp.protocol_version = "2024-11-05",
                http.status = tracing::field::Empty,
            ),
            _ => tracing::Span::none(),
        };
        let response = send(builder, what).instrument(span.clone()).await?;
        let status = response.status();
        span.record("http.status", status.as_u16());
        // 202 bodies are tiny; an error body is read for its message.
        let body = read_limited(response, MAX_ERROR_BODY).await;
        if status.is_success() {
            return Ok(());
        }
        Err(http_error(status, &body, what))
    }
}

/// The request id a progress notification's token names (tokens are the
/// ids of the requests they were attached to).
fn progress_token(note: &Notification) -> Option<RequestId> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Progress {
        progress_token: RequestId,
    }
    if note.method != "notifications/progress" {
        return None;
    }
    let params = note.params.as_ref()?;
    serde_json::from_str::<Progress>(params.get())
        .ok()
        .map(|p| p.progress_token)
}

/// `TransportError::Http` for an unusable status, with the JSON-RPC error
/// of the body when it held one, else the body's text.
pub(crate) fn http_error(status: http::StatusCode, body: &[u8], what: &str) -> TransportError {
    let rpc = rpc_error(body);
    let detail = match &rpc {
        Some(e) => e.message.clone(),
        None => body_excerpt(body, status),
    };
    TransportError::Http {
        status: status.as_u16(),
        message: format!("{what}: {detail}"),
        rpc,
    }
}

/// Ends the connection when the last client handle (or request stream) is
/// dropped, so the reader task and its SSE stream do not outlive their user.
pub(crate) struct Lifeline(pub(crate) Arc<Shared>);

impl Drop for Lifeline {
    fn drop(&mut self) {
        self.0.end(TransportError::Closed);
    }
}
