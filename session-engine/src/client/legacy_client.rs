//! [`LegacyClient`]: one legacy-era MCP connection over Streamable HTTP.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use async_trait::async_trait;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{Message, Notification};
use mcp_transport_core::transport::{
    ListenFilter, Negotiated, RequestOptions, ResponseStream, ServerMessages, Transport,
    TransportError,
};
use mcp_transport_core::version::Features;
use serde_json::value::RawValue;

use super::batch::{self, BatchItem, BatchResponses};
use super::config::ClientConfig;
use super::listen;
use super::request;
use super::session::{self, delete_ok};
use super::shared::Shared;
use super::state::{Current, InitializeResult};
use super::task;
use super::wire;

/// A client of one MCP endpoint speaking a session-based revision
/// (2025-03-26, 2025-06-18 or 2025-11-25), chosen by `initialize`.
///
/// Cheap to clone: clones share the session and the request id counter.
///
/// # Sessions
///
/// [`connect`](Self::connect) runs the handshake. When the server answers
/// a request carrying the session id with HTTP 404, the session is gone
/// (*Transports*, "Session Management" 3-4): every in-flight stream of that
/// session ends with [`TransportError::SessionExpired`], the request that
/// got the 404 fails with it too and is **not** re-sent (re-sending is the
/// caller's decision: not every request is idempotent), and the next call
/// ([`request`](Transport::request), [`notify`](Transport::notify),
/// [`listen`](Transport::listen)) first starts a new session with a fresh
/// `initialize` that carries no session id.
#[derive(Clone)]
pub struct LegacyClient {
    shared: Arc<Shared>,
    first: Arc<Current>,
}

impl fmt::Debug for LegacyClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let current = self.current();
        f.debug_struct("LegacyClient")
            .field("url", &self.shared.url.as_str())
            .field("revision", &format_args!("{}", current.session.version))
            .field("session_id", &current.session.id)
            .field("closed", &self.shared.closed.is_cancelled())
            .finish()
    }
}

impl LegacyClient {
    /// Connects: POSTs `initialize` offering `config.versions[0]` (the
    /// answer may be JSON or SSE), accepts the server's version when it is
    /// in `config.versions` (else a `Negotiation` error naming both sides,
    /// after a best-effort DELETE of the session), keeps the
    /// `MCP-Session-Id` if one was given and sends
    /// `notifications/initialized`.
    pub async fn connect(config: ClientConfig) -> Result<Self, TransportError> {
        let shared = Shared::new(config)?;
        let first = session::ensure(&shared).await?;
        Ok(LegacyClient { shared, first })
    }

    fn current(&self) -> Arc<Current> {
        self.shared.current().unwrap_or_else(|| self.first.clone())
    }

    /// The current session's `MCP-Session-Id`, if the server assigned one.
    pub fn session_id(&self) -> Option<String> {
        self.current().session.id.clone()
    }

    /// Whether the server has forgotten the current session (HTTP 404); the
    /// next call starts a new one.
    pub fn session_lost(&self) -> bool {
        self.current().session.is_lost()
    }

    /// What the server answered to the current session's `initialize`.
    pub fn initialize_result(&self) -> Arc<InitializeResult> {
        self.current().init.clone()
    }

    /// The server's `serverInfo`.
    pub fn server_info(&self) -> serde_json::Value {
        self.current().init.server_info.clone()
    }

    /// The negotiated revision's feature row.
    pub fn features(&self) -> Features {
        self.current().session.features
    }

    /// Sends `items` as one JSON-RPC batch (one POST whose body is a JSON
    /// array) and returns one response per request, matched by id.
    ///
    /// Only revision 2025-03-26 has batches (*Transports*, "Sending Messages
    /// to the Server" 3; removed in 2025-06-18): on a session of another
    /// revision this fails with [`TransportError::Unsupported`] and sends
    /// nothing. An empty `items` is `InvalidInput`.
    ///
    /// A batch of notifications only is answered 202. Otherwise the answer
    /// is one JSON array (or object) or an SSE stream, whose events may
    /// hold single messages or arrays of them; the stream is read until
    /// every request has its response, resumed by GET with `Last-Event-ID`
    /// if the connection breaks (as for [`request`](Transport::request)),
    /// and server requests on it are answered through the input handler.
    /// The whole batch is bounded by `ClientConfig::http.request_timeout`. If the
    /// client gives up (timeout, failed resumption, or this future is
    /// dropped), each unanswered request is cancelled with
    /// `notifications/cancelled`.
    pub async fn batch(&self, items: Vec<BatchItem>) -> Result<BatchResponses, TransportError> {
        batch::send(self.shared.clone(), items).await
    }

    /// Follows the task `task_id` (experimental tasks, SEP-1686) to its
    /// end, as [`request`](Transport::request) follows a task it created:
    /// `tasks/get` (its status as the first event, a
    /// `notifications/tasks/status`), then `tasks/result` (resumed across
    /// cuts, input answered through the input handler) whose answer ends
    /// the stream. An unknown, foreign or expired id ends with the server's
    /// error response. Tasks are scoped to the session that created them,
    /// so this works in that session. Dropping the stream before the end
    /// cancels the task unless it was
    /// [detached](ResponseStream::detach_task).
    pub async fn resume_task(&self, task_id: &str) -> Result<ResponseStream, TransportError> {
        if self.shared.closed.is_cancelled() {
            return Err(TransportError::Closed);
        }
        Ok(task::resume(self.shared.clone(), task_id))
    }
}

#[async_trait]
impl Transport for LegacyClient {
    fn revision(&self) -> ProtocolVersion {
        self.current().session.version.clone()
    }

    fn negotiated(&self) -> Negotiated {
        let revision = self.revision();
        Negotiated::new(
            revision.clone(),
            format!(
                "initialize offered {} and the server answered {revision}",
                self.shared.config.versions[0]
            ),
        )
    }

    /// POSTs the request (ids are integers counting up); see
    /// [`ResponseStream`] for what the stream yields. Dropping the stream
    /// before the response stops reading and sends `notifications/cancelled`.
    ///
    /// A request sent with `params.task` that the server answers with a
    /// `CreateTaskResult` is followed to its end (see the `task` module):
    /// a `notifications/tasks/status` event with the task, then
    /// `tasks/result`'s events and answer; dropping the stream then sends
    /// `tasks/cancel`, unless the task was
    /// [detached](ResponseStream::detach_task).
    async fn request(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<ResponseStream, TransportError> {
        let augmented = task::augmented(params.as_deref());
        let stream = request::start(self.shared.clone(), method, params, options.clone()).await?;
        if augmented {
            return Ok(task::follow(self.shared.clone(), stream, &options));
        }
        Ok(stream)
    }

    async fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        let current = session::ensure(&self.shared).await?;
        let what = format!("POST {}", notification.method);
        let message = Message::Notification(notification);
        wire::post_accepted(&self.shared, &current.session, &message, &what).await
    }

    /// The standalone GET stream; when the server offers none (405) this
    /// is [`TransportError::NotOffered`].
    async fn listen(&self, filter: ListenFilter) -> Result<ServerMessages, TransportError> {
        listen::open(self.shared.clone(), filter).await
    }

    /// Sends DELETE with the session id (200, 202, 204, 405 and 404 are all
    /// fine) and ends every stream; later calls fail with
    /// [`TransportError::Closed`]. Closing twice is a no-op.
    async fn close(&self) -> Result<(), TransportError> {
        if self.shared.close_started.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.shared.closed.cancel();
        let current = self.current();
        let session = &current.session;
        if session.id.is_none() || session.is_lost() {
            return Ok(());
        }
        let send = || wire::send(wire::delete(&self.shared, session), "DELETE of the session");
        let response = match send().await {
            // A pooled connection may have died with the network since its
            // last use; DELETE is idempotent, so one more try is safe.
            Err(TransportError::Connection(_)) => send().await?,
            other => other?,
        };
        if delete_ok(response.status()) {
            Ok(())
        } else {
            Err(wire::status_error(response, session, "DELETE of the session").await)
        }
    }
}
