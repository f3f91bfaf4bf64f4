//! The client-side [`Transport`] trait every revision implements.
//!
//! One logical MCP connection, whatever revision is underneath. What each
//! method means, revision by revision:
//!
//! | | 2025-03-26 / 2025-06-18 | 2025-11-25 | 2026-07-28 |
//! | --- | --- | --- | --- |
//! | [`Transport::request`] | POST; JSON or an SSE stream of related messages then the response; server-to-client requests on that stream are answered through the [`InputHandler`] | as before, plus SEP-1699: the server may drop the connection after a `retry`; the transport waits exactly `retry` and resumes by GET with `Last-Event-ID`, underneath | POST with `_meta` and the `Mcp-*` headers; `InputRequiredResult` rounds are run through the [`InputHandler`] and the request retried |
//! | dropping the [`ResponseStream`] | sends `notifications/cancelled` | sends `notifications/cancelled`; once the request became a task (`params.task`), `tasks/cancel` instead | closes the response stream, which *is* the cancellation; once the request became a task, `tasks/cancel` |
//! | a request that became a task | — | `response()` waits on `tasks/result` (resumed across cuts); [`ResponseStream::detach_task`] lets the task outlive the stream | `response()` polls `tasks/get`; [`ResponseStream::detach_task`] likewise |
//! | a broken connection | resumed by GET + `Last-Event-ID` when the server sent event ids, else a clear error | resumed (polling) | not resumable: an error, or a re-issue with a new id when the caller marked the request safe to retry |
//! | [`Transport::listen`] | the standalone GET stream (405 = the server offers none: [`TransportError::NotOffered`]) | the same, primed and polled | a `subscriptions/listen` request with the caller's filter |
//! | [`Transport::close`] | DELETE of the session | DELETE of the session | nothing to tear down (no session) |
//!
//! The trait is object safe (`async-trait`), so a negotiating client can hand
//! back a `Box<dyn Transport>` whatever revision it chose.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use async_trait::async_trait;
use futures_core::Stream;
use serde_json::value::RawValue;

pub use crate::error::{ConfigError, LimitExceeded, Misbehaviour, ResumeFailure};
use crate::jsonrpc::{ErrorObject, Notification, Request, Response};
use crate::negotiation::NegotiationError;
use crate::version::{Era, ProtocolVersion};

/// What a request's stream yields: related messages, then the response.
#[derive(Clone, Debug)]
pub enum StreamEvent {
    /// A notification related to the request (progress, log).
    Notification(Notification),
    /// A server-to-client request that arrived on the request's stream; the
    /// transport has already answered it through the [`InputHandler`].
    ServerRequest(Request),
    /// The final response; the stream ends after it.
    Response(Response),
}

/// The task a request became, shared between its [`ResponseStream`] and
/// the revision code following the task: the revision records the id once
/// the server created the task, and the caller may detach it.
#[derive(Clone, Debug, Default)]
pub struct TaskLink {
    inner: Arc<std::sync::Mutex<TaskLinkState>>,
}

#[derive(Debug, Default)]
struct TaskLinkState {
    id: Option<String>,
    detached: bool,
}

impl TaskLink {
    /// A link with no task yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TaskLinkState> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records the task id (called by the revision crates).
    pub fn set_id(&self, id: &str) {
        self.lock().id = Some(id.to_owned());
    }

    /// The task id, once the request became a task.
    pub fn id(&self) -> Option<String> {
        self.lock().id.clone()
    }

    /// Whether the caller detached the task: dropping the stream must then
    /// not cancel it.
    pub fn is_detached(&self) -> bool {
        self.lock().detached
    }

    fn detach(&self) -> Option<String> {
        let mut s = self.lock();
        let id = s.id.clone()?;
        s.detached = true;
        Some(id)
    }
}

/// The stream of one request: related messages, then its response.
///
/// Dropping it before the response cancels the request (see the module docs
/// for what that means on each revision), or, once the request became a
/// task, the task — unless the caller [detached](Self::detach_task) it.
pub struct ResponseStream {
    inner: Pin<Box<dyn Stream<Item = Result<StreamEvent, TransportError>> + Send>>,
    task: Option<TaskLink>,
}

impl fmt::Debug for ResponseStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseStream")
    }
}

impl ResponseStream {
    /// Wraps a stream built by a revision crate.
    pub fn new(
        inner: impl Stream<Item = Result<StreamEvent, TransportError>> + Send + 'static,
    ) -> Self {
        ResponseStream {
            inner: Box::pin(inner),
            task: None,
        }
    }

    /// Attaches the link through which the revision reports the task this
    /// request became (called by the revision crates).
    pub fn with_task_link(mut self, link: TaskLink) -> Self {
        self.task = Some(link);
        self
    }

    /// The id of the task this request became, once the server created it
    /// (the event announcing it has been read: `notifications/tasks/status`
    /// on 2025-11-25, `notifications/tasks` on 2026-07-28).
    pub fn task_id(&self) -> Option<String> {
        self.task.as_ref().and_then(TaskLink::id)
    }

    /// Lets the task outlive this stream: the stream is dropped without
    /// cancelling the task, and its id is returned so the caller can
    /// persist it and follow it later (`resume_task` on either era's
    /// client). A request that has not (yet) become a task is given back
    /// unchanged.
    ///
    /// # Errors
    ///
    /// The stream itself, when there is no task to detach.
    pub fn detach_task(self) -> Result<String, ResponseStream> {
        match self.task.as_ref().and_then(TaskLink::detach) {
            Some(id) => Ok(id),
            None => Err(self),
        }
    }

    /// Waits for the response, handing each related message to `on_event`.
    pub async fn response_with(
        mut self,
        mut on_event: impl FnMut(&StreamEvent) + Send,
    ) -> Result<Response, TransportError> {
        loop {
            let next = std::future::poll_fn(|cx| self.inner.as_mut().poll_next(cx)).await;
            match next {
                Some(Ok(StreamEvent::Response(r))) => return Ok(r),
                Some(Ok(ev)) => on_event(&ev),
                Some(Err(e)) => return Err(e),
                None => {
                    return Err(TransportError::PeerMisbehaved(Misbehaviour::EndedWithout {
                        what: "the stream".into(),
                        missing: "a response".into(),
                    }));
                }
            }
        }
    }

    /// Waits for the response, discarding related messages.
    pub async fn response(self) -> Result<Response, TransportError> {
        self.response_with(|_| {}).await
    }
}

impl Stream for ResponseStream {
    type Item = Result<StreamEvent, TransportError>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// Server-initiated messages not tied to a request: the GET stream (legacy)
/// or a `subscriptions/listen` stream (2026-07-28).
pub struct ServerMessages {
    inner: Pin<Box<dyn Stream<Item = Result<crate::jsonrpc::Message, TransportError>> + Send>>,
}

impl fmt::Debug for ServerMessages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ServerMessages")
    }
}

impl ServerMessages {
    /// Wraps a stream built by a revision crate.
    pub fn new(
        inner: impl Stream<Item = Result<crate::jsonrpc::Message, TransportError>> + Send + 'static,
    ) -> Self {
        ServerMessages {
            inner: Box::pin(inner),
        }
    }
}

impl Stream for ServerMessages {
    type Item = Result<crate::jsonrpc::Message, TransportError>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// Per-request options.
#[derive(Clone, Debug, Default)]
pub struct RequestOptions {
    /// Overall deadline for the response (none = the transport's default).
    pub timeout: Option<Duration>,
    /// The request may be re-issued with a new id if its stream breaks where
    /// the revision cannot resume (2026-07-28).
    pub safe_to_retry: bool,
    /// Ask for progress notifications (a progress token is attached).
    pub progress: bool,
}

/// Which change notifications a listener wants (2026-07-28
/// `subscriptions/listen`; on legacy revisions the GET stream carries
/// whatever the server sends and the filter is applied client-side).
#[derive(Clone, Debug, Default)]
pub struct ListenFilter {
    /// `notifications/tools/list_changed`.
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    pub resource_uris: Vec<String>,
}

impl ListenFilter {
    /// Whether `n` passes the filter, for transports that apply it
    /// client-side (legacy servers send whatever they send on the GET
    /// stream). A filter that selects nothing (the default) passes
    /// everything; one that selects something drops the change
    /// notifications it does not select. Other messages always pass.
    pub fn admits(&self, n: &Notification) -> bool {
        let selects_any = self.tools_list_changed
            || self.prompts_list_changed
            || self.resources_list_changed
            || !self.resource_uris.is_empty();
        if !selects_any {
            return true;
        }
        match n.method.as_str() {
            "notifications/tools/list_changed" => self.tools_list_changed,
            "notifications/prompts/list_changed" => self.prompts_list_changed,
            "notifications/resources/list_changed" => self.resources_list_changed,
            "notifications/resources/updated" => {
                #[derive(serde::Deserialize)]
                struct Updated {
                    uri: String,
                }
                n.params
                    .as_ref()
                    .and_then(|p| serde_json::from_str::<Updated>(p.get()).ok())
                    .is_some_and(|u| self.resource_uris.contains(&u.uri))
            }
            _ => true,
        }
    }
}

/// Answers the server's requests for client input (sampling, elicitation,
/// roots), on every revision: legacy server-to-client requests and 2026-07-28
/// `InputRequiredResult` rounds alike.
#[async_trait]
pub trait InputHandler: Send + Sync {
    /// Produces the `result` for one input request, or an error.
    async fn handle(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject>;
}

impl fmt::Debug for dyn InputHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("dyn InputHandler")
    }
}

/// Answers one server-to-client request with `handler`: `ping` with an
/// empty result (*Ping*: "The receiver MUST respond promptly with an empty
/// response"), anything else with the handler's result or error.
pub async fn answer_request(handler: &dyn InputHandler, request: &Request) -> Response {
    let payload = if request.method == "ping" {
        Ok(RawValue::from_string("{}".to_owned()).expect("`{}` is JSON"))
    } else {
        handler
            .handle(&request.method, request.params.as_deref())
            .await
    };
    Response {
        id: Some(request.id.clone()),
        payload,
    }
}

/// An [`InputHandler`] that declines everything with `-32601`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoInput;

#[async_trait]
impl InputHandler for NoInput {
    async fn handle(
        &self,
        method: &str,
        _: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        Err(ErrorObject::method_not_found(method))
    }
}

/// How a transport was chosen, for callers that ask "which revision and why".
#[derive(Clone, Debug)]
pub struct Negotiated {
    /// The revision in use.
    pub revision: ProtocolVersion,
    /// Its era.
    pub era: Era,
    /// A human-readable account of how it was chosen.
    pub reason: String,
}

impl Negotiated {
    /// `revision` (its era follows from it), chosen for `reason`.
    pub fn new(revision: ProtocolVersion, reason: impl Into<String>) -> Self {
        Negotiated {
            era: revision.era(),
            reason: reason.into(),
            revision,
        }
    }
}

/// Errors a transport reports; each says who is at fault (rustls style).
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The connection failed or broke and could not be recovered.
    #[error("connection error: {0}")]
    Connection(String),
    /// The server answered with an HTTP status the transport cannot use.
    #[error("HTTP {status}: {message}")]
    Http {
        /// The status code.
        status: u16,
        /// What the body said (a JSON-RPC error message when it held one).
        message: String,
        /// The JSON-RPC error in the body, when there was one.
        rpc: Option<ErrorObject>,
    },
    /// The server broke a rule of the protocol.
    #[error("peer misbehaved: {0}")]
    PeerMisbehaved(Misbehaviour),
    /// The versions could not be agreed.
    #[error(transparent)]
    Negotiation(#[from] NegotiationError),
    /// The session was terminated by the server (HTTP 404 on a request that
    /// carried its id); a new session has been or must be started.
    #[error("session expired: the server no longer knows session {session_id}")]
    SessionExpired {
        /// The lost session.
        session_id: String,
    },
    /// A broken stream could not be resumed.
    #[error("stream could not be resumed: {0}")]
    ResumeFailed(ResumeFailure),
    /// The client's configuration is unusable (nothing was sent).
    #[error("invalid configuration: {0}")]
    Config(ConfigError),
    /// The caller's request is invalid (nothing was sent).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The server offers no such thing (legacy: the standalone GET stream,
    /// answered 405). An answer, not a failure of the connection.
    #[error("the server does not offer {what}")]
    NotOffered {
        /// What it does not offer.
        what: &'static str,
    },
    /// A bug in this library (never the peer's or the caller's fault).
    #[error("internal error: {0}")]
    Internal(String),
    /// A limit was hit (event size, body size, attempts, rounds).
    #[error("limit exceeded: {0}")]
    Limit(LimitExceeded),
    /// The deadline passed.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// The transport was closed.
    #[error("transport closed")]
    Closed,
    /// The operation does not exist on this revision.
    #[error("not supported on protocol revision {revision}: {what}")]
    Unsupported {
        /// The revision in use.
        revision: ProtocolVersion,
        /// What was attempted.
        what: &'static str,
    },
}

impl TransportError {
    /// Whether sending the same request again, unchanged, may succeed: the
    /// failure was in the network, the server's availability (HTTP 408, 429,
    /// 5xx), the time allowed, a lost session (the next call starts a new
    /// one) or a stream that could not be resumed. Errors that say the peer
    /// broke the protocol, or that the caller or configuration is wrong, are
    /// not retryable.
    pub fn is_retryable(&self) -> bool {
        match self {
            TransportError::Connection(_)
            | TransportError::Timeout(_)
            | TransportError::SessionExpired { .. }
            | TransportError::ResumeFailed(_) => true,
            TransportError::Http { status, .. } => matches!(status, 408 | 429 | 500..=599),
            _ => false,
        }
    }

    /// The misbehaviour, when the server broke a rule of the protocol.
    pub fn misbehaviour(&self) -> Option<&Misbehaviour> {
        match self {
            TransportError::PeerMisbehaved(m) => Some(m),
            _ => None,
        }
    }

    /// The reason, when a broken stream could not be resumed.
    pub fn resume_failure(&self) -> Option<&ResumeFailure> {
        match self {
            TransportError::ResumeFailed(r) => Some(r),
            _ => None,
        }
    }
}

impl From<Misbehaviour> for TransportError {
    fn from(m: Misbehaviour) -> Self {
        TransportError::PeerMisbehaved(m)
    }
}

impl From<ResumeFailure> for TransportError {
    fn from(r: ResumeFailure) -> Self {
        TransportError::ResumeFailed(r)
    }
}

impl From<ConfigError> for TransportError {
    fn from(c: ConfigError) -> Self {
        TransportError::Config(c)
    }
}

/// One logical MCP connection (see the module docs for each revision's meaning).
#[async_trait]
pub trait Transport: Send + Sync {
    /// The revision in use.
    fn revision(&self) -> ProtocolVersion;

    /// How the revision was chosen.
    fn negotiated(&self) -> Negotiated {
        let revision = self.revision();
        Negotiated::new(revision.clone(), format!("configured for {revision}"))
    }

    /// Sends a request (the transport assigns its id) and returns the stream
    /// of its related messages and response.
    async fn request(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<ResponseStream, TransportError>;

    /// Sends a notification.
    async fn notify(&self, notification: Notification) -> Result<(), TransportError>;

    /// Opens the stream of server-initiated messages.
    ///
    /// A server that offers none (legacy: the GET answered 405; 2026-07-28:
    /// `subscriptions/listen` answered `-32601`) is
    /// [`TransportError::NotOffered`]: an answer the caller may act on, not
    /// a broken connection.
    async fn listen(&self, filter: ListenFilter) -> Result<ServerMessages, TransportError>;

    /// Ends the connection (DELETE of a legacy session).
    async fn close(&self) -> Result<(), TransportError>;
}

/// Shared handle to any transport.
pub type DynTransport = Arc<dyn Transport>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::RequestId;

    fn note(method: &str, params: Option<serde_json::Value>) -> Notification {
        Notification::new(method, params.as_ref()).unwrap()
    }

    #[test]
    fn default_filter_passes_everything_and_a_selection_filters_changes_only() {
        let all = ListenFilter::default();
        assert!(all.admits(&note("notifications/tools/list_changed", None)));
        let tools = ListenFilter {
            tools_list_changed: true,
            resource_uris: vec!["file:///a".into()],
            ..Default::default()
        };
        assert!(tools.admits(&note("notifications/tools/list_changed", None)));
        assert!(!tools.admits(&note("notifications/prompts/list_changed", None)));
        assert!(tools.admits(&note("notifications/message", None)));
        let a = serde_json::json!({"uri": "file:///a"});
        let b = serde_json::json!({"uri": "file:///b"});
        assert!(tools.admits(&note("notifications/resources/updated", Some(a))));
        assert!(!tools.admits(&note("notifications/resources/updated", Some(b))));
    }

    /// Each selection alone makes a filter that selects: it admits its own
    /// change notification and drops the others.
    #[test]
    fn each_selection_alone_admits_its_own_change_only() {
        let changes = [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
        ];
        let filters = [
            ListenFilter {
                tools_list_changed: true,
                ..Default::default()
            },
            ListenFilter {
                prompts_list_changed: true,
                ..Default::default()
            },
            ListenFilter {
                resources_list_changed: true,
                ..Default::default()
            },
        ];
        for (i, filter) in filters.iter().enumerate() {
            for (j, change) in changes.iter().enumerate() {
                assert_eq!(
                    filter.admits(&note(change, None)),
                    i == j,
                    "{filter:?} {change}"
                );
            }
            let updated = note(
                "notifications/resources/updated",
                Some(serde_json::json!({"uri": "file:///a"})),
            );
            assert!(!filter.admits(&updated), "{filter:?}");
        }
        let uris = ListenFilter {
            resource_uris: vec!["file:///a".into()],
            ..Default::default()
        };
        for change in changes {
            assert!(!uris.admits(&note(change, None)), "{change}");
        }
    }

    fn events(items: Vec<StreamEvent>) -> ResponseStream {
        ResponseStream::new(futures::stream::iter(items.into_iter().map(Ok)))
    }

    /// The link reports the task id the revision records; detaching needs
    /// an id and marks the link, so that dropping the stream leaves the
    /// task running.
    #[test]
    fn a_task_is_detached_only_once_it_has_an_id() {
        let link = TaskLink::new();
        let stream = events(vec![]).with_task_link(link.clone());
        assert_eq!(stream.task_id(), None);
        let stream = stream.detach_task().expect_err("no task yet");
        assert!(!link.is_detached());
        link.set_id("t-9");
        assert_eq!(link.id().as_deref(), Some("t-9"));
        assert_eq!(stream.task_id().as_deref(), Some("t-9"));
        assert_eq!(stream.detach_task().unwrap(), "t-9");
        assert!(link.is_detached());
        // A stream without a link has no task to give.
        assert!(events(vec![]).detach_task().is_err());
        assert_eq!(format!("{:?}", events(vec![])), "ResponseStream");
    }

    /// The stream yields the related messages, then the response; one
    /// that ends without a response is the peer's fault.
    #[tokio::test]
    async fn a_stream_yields_its_events_then_its_response() {
        use futures::StreamExt;
        let n = note("notifications/progress", None);
        let answer = Response::result(RequestId::Number(1), crate::jsonrpc::to_raw(&1).unwrap());
        let mut seen = Vec::new();
        let got = events(vec![
            StreamEvent::Notification(n.clone()),
            StreamEvent::Response(answer.clone()),
        ])
        .response_with(|e| seen.push(format!("{e:?}")))
        .await
        .unwrap();
        assert_eq!(got.id, Some(RequestId::Number(1)));
        assert_eq!(seen.len(), 1);
        let polled: Vec<_> = events(vec![StreamEvent::Notification(n.clone())])
            .collect()
            .await;
        assert_eq!(polled.len(), 1, "the stream's own items, polled");
        let err = events(vec![StreamEvent::Notification(n)])
            .response()
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                TransportError::PeerMisbehaved(Misbehaviour::EndedWithout { .. })
            ),
            "{err:?}"
        );

        let mut messages = ServerMessages::new(futures::stream::iter([Ok(
            crate::jsonrpc::Message::Response(answer),
        )]));
        assert_eq!(format!("{messages:?}"), "ServerMessages");
        assert!(matches!(messages.next().await, Some(Ok(_))));
        assert!(messages.next().await.is_none());
    }

    /// `ping` is answered with an empty result whatever the handler does;
    /// anything else is the handler's answer, under the request's id.
    #[tokio::test]
    async fn ping_is_answered_empty_and_the_rest_by_the_handler() {
        let ping = Request::new("p", "ping", None::<&()>).unwrap();
        let r = answer_request(&NoInput, &ping).await;
        assert_eq!(r.id, Some(RequestId::from("p")));
        assert_eq!(r.payload.unwrap().get(), "{}");
        let other = Request::new(2, "roots/list", None::<&()>).unwrap();
        let r = answer_request(&NoInput, &other).await;
        assert_eq!(r.id, Some(RequestId::Number(2)));
        assert_eq!(
            r.payload.unwrap_err().code,
            crate::jsonrpc::METHOD_NOT_FOUND
        );
        let handler: &dyn InputHandler = &NoInput;
        assert_eq!(format!("{handler:?}"), "dyn InputHandler");
    }
}
