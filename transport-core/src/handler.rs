//! The server-side handler API: written once, served in every era.
//!
//! A [`Handler`] answers requests. The revision crates drive it and translate
//! what it does into their wire model:
//!
//! | handler does | 2025-03-26 / 2025-06-18 / 2025-11-25 (legacy) | 2026-07-28 (modern) |
//! | --- | --- | --- |
//! | [`RequestContext::notify`] (progress, log) | an SSE event on the stream of the originating POST (on 2025-11-25 logged for replay) | an SSE event on the request's response stream |
//! | returns [`Outcome::InputRequired`] | the framework sends each input request to the client as a JSON-RPC request on the request's stream, waits for the POSTed responses, then calls `handle` again with them in [`RequestContext::input_responses`] | an `InputRequiredResult` (`resultType: "input_required"`); the client retries with `inputResponses` and the (integrity-protected) `requestState` |
//! | awaits [`RequestContext::cancelled`] | fires on `notifications/cancelled`; a dropped connection does **not** cancel ("Disconnection SHOULD NOT be interpreted as the client cancelling its request") | fires when the client closes the response stream (*Streamable HTTP*, "Cancellation") |
//! | calls [`RequestContext::close_sse_stream`] | 2025-11-25: closes the connection after a `retry` (SEP-1699), the request goes on; earlier revisions: no-op | no-op |
//!
//! After cancellation nothing more is sent for the request, whatever the
//! handler returns.
//!
//! # Long-running work
//!
//! A handler says once, per request, whether the work may be long
//! ([`Handler::execution`], usually decided by the tool's name), and the
//! framework picks how each client gets it; the handler code is the same in
//! every case, including progress and asking for input:
//!
//! | [`Execution`] | client asked for a task (2026-07-28: `io.modelcontextprotocol/tasks` in the request's capabilities; 2025-11-25: `params.task` on a server with tasks configured) | client without tasks |
//! | --- | --- | --- |
//! | `Immediate` (default) | answered while the client waits (2025-11-25: a `params.task` is `-32601`, the tool's `taskSupport` being `forbidden`) | answered while the client waits |
//! | `MayBeLong` | a task: the client gets `CreateTaskResult` at once. 2026-07-28: it polls `tasks/get`; [`Outcome::InputRequired`] becomes the task's `inputRequests`, answered with `tasks/update`. 2025-11-25: it polls `tasks/get` or waits on `tasks/result`, which carries the input requests (with `related-task` metadata), progress and `notifications/tasks/status` on an SSE stream that SEP-1699 polling may cut and the client resumes. Either era: `tasks/cancel` fires [`RequestContext::cancelled`]; closing the connection does not | 2026-07-28: a held response stream (closing it cancels); 2025-11-25: SEP-1699 polling (priming, cut, `retry`, resumption) where the server's disconnect policy polls, a held stream otherwise; earlier revisions: a held stream |
//! | `TaskOnly` | a task, as above | 2026-07-28: `-32021` naming the extension; 2025-11-25: `-32601` (the tool's `taskSupport` is `required`) |
//!
//! Inside a task, [`RequestContext::task_id`] names it; progress messages
//! become the task's `statusMessage`. On 2026-07-28 log messages are not
//! delivered (*Tasks*: `notifications/progress` and `notifications/message`
//! "are not supported on tasks"); on 2025-11-25 progress goes to a
//! `tasks/result` waiting on the task ("The `progressToken` provided in the
//! initial request remains valid throughout the task lifetime"), and log
//! messages are not delivered.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::admission::Admission;
use crate::cancel::{CancellationToken, Cancelled};
use crate::json_members::ObjectIndex;
use crate::jsonrpc::{ErrorObject, Notification, Request, RequestId};
use crate::request_head::RequestHead;
use crate::version::ProtocolVersion;

/// What the server says about itself in `initialize` and `server/discover`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerDescription {
    /// `serverInfo` / `Implementation`: at least `name` and `version`.
    pub info: serde_json::Value,
    /// `ServerCapabilities`.
    pub capabilities: serde_json::Value,
    /// Optional `instructions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// One request for client input (sampling, elicitation or roots).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InputRequest {
    /// `sampling/createMessage`, `elicitation/create` or `roots/list`.
    pub method: String,
    /// The request's params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Box<RawValue>>,
}

/// A handler's request for client input, keyed by handler-chosen names.
#[derive(Clone, Debug, Default)]
pub struct InputRequired {
    /// The requests, by key; the answers come back under the same keys.
    pub requests: BTreeMap<String, InputRequest>,
    /// Opaque state handed back to the handler with the answers.
    pub state: Option<String>,
}

/// What a handler produces for one request.
#[derive(Debug)]
pub enum Outcome {
    /// The `result` member, raw.
    Result(Box<RawValue>),
    /// A JSON-RPC error.
    Error(ErrorObject),
    /// The handler needs client input first (see the module docs for how each
    /// era delivers it).
    InputRequired(InputRequired),
}

impl Outcome {
    /// A result serialized from any value.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Outcome {
        match crate::jsonrpc::to_raw(value) {
            Ok(raw) => Outcome::Result(raw),
            Err(e) => Outcome::Error(ErrorObject::internal(e)),
        }
    }
}

/// How long a request's work may take, which decides whether it may run as
/// a task (see "Long-running work" in the [module docs](self)). Maps to
/// 2025-11-25's tool-level `execution.taskSupport`: `forbidden`,
/// `optional`, `required`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Execution {
    /// Answered while the client waits; never a task.
    #[default]
    Immediate,
    /// May take long: a task for clients that declared tasks, otherwise
    /// answered on a held stream (or by SEP-1699 polling).
    MayBeLong,
    /// Only as a task: clients that did not declare tasks get an error
    /// naming the missing capability.
    TaskOnly,
}

/// The client as the server knows it for this request: from `initialize` on
/// legacy sessions, from `_meta` on every 2026-07-28 request.
#[derive(Clone, Debug, Default)]
pub struct ClientDescription {
    /// `clientInfo`, when sent.
    pub info: Option<serde_json::Value>,
    /// `ClientCapabilities` (an empty object when none were declared).
    pub capabilities: serde_json::Value,
}

impl ClientDescription {
    /// Whether the client declared the named top-level capability
    /// (`sampling`, `elicitation`, `roots`, ...).
    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some_and(|v| !v.is_null())
    }
}

/// MCP log levels (RFC 5424 severities), ordered from least to most severe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// debug
    Debug,
    /// info
    Info,
    /// notice
    Notice,
    /// warning
    Warning,
    /// error
    Error,
    /// critical
    Critical,
    /// alert
    Alert,
    /// emergency
    Emergency,
}

/// Why a related message could not be sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The request was cancelled or has already been answered.
    #[error("the request is finished or cancelled; nothing more may be sent for it")]
    Finished,
    /// The revision has no way to deliver this message (for example a
    /// server-to-client request on 2026-07-28).
    #[error("not deliverable on this protocol revision: {0}")]
    Unsupported(&'static str),
    /// The message could not be stored or queued (bounds, store failure).
    #[error("could not queue the message: {0}")]
    Queue(String),
}

/// Where a request's related messages go; implemented by each revision crate.
#[async_trait]
pub trait RequestSink: Send + Sync {
    /// Sends a notification related to the request (progress, log). Waits
    /// when the stream's bounded queue is full (backpressure).
    async fn send(&self, notification: Notification) -> Result<(), SendError>;
    /// Closes the current SSE *connection* without ending the stream
    /// (SEP-1699). Returns whether this revision did anything.
    fn close_sse_stream(&self) -> bool {
        false
    }
    /// The least severe log level the client wants, or `None` when log
    /// messages must not be sent (2026-07-28: only when the request's `_meta`
    /// carries `io.modelcontextprotocol/logLevel`; legacy: `logging/setLevel`).
    fn log_level(&self) -> Option<LogLevel>;
    /// The engine's bound on running work, for
    /// [`RequestContext::admission`]; `None` (the default) where none is
    /// kept.
    fn admission(&self) -> Option<&Arc<Admission>> {
        None
    }
}

/// Names the authenticated principal of an HTTP request (for example the
/// subject an auth layer in front put in the request's extensions), or
/// `None` for an anonymous one. Servers use it to bind what a request
/// creates — a legacy session, a task, a 2026-07-28 `requestState` — to
/// its principal: another principal is then answered as if the thing did
/// not exist.
pub type PrincipalFn = Arc<dyn Fn(&http::request::Parts) -> Option<String> + Send + Sync>;

/// Everything a handler can know and do about the request it is handling.
#[derive(Clone)]
pub struct RequestContext {
    /// The protocol version this request is served at.
    pub revision: ProtocolVersion,
    /// The request's JSON-RPC id.
    pub request_id: RequestId,
    /// `_meta.progressToken`, when the client asked for progress.
    pub progress_token: Option<serde_json::Value>,
    /// Who the client is.
    pub client: Arc<ClientDescription>,
    /// The HTTP request that carried this request (without its body):
    /// method, target, headers and extensions, kept compactly (a request
    /// pending between SEP-1699 polls keeps it; see [`RequestHead`]). An
    /// auth layer in front of the server tells the handler who the caller
    /// is by inserting its principal into the extensions
    /// ([`RequestHead::extensions`]); the peer address is there as axum's
    /// `ConnectInfo<SocketAddr>` when the server runs under
    /// `mcp_http_edge::server::serve` (or axum's
    /// `into_make_service_with_connect_info`). `None` where no HTTP request
    /// is at hand: a task's work after its creating request ended, and
    /// contexts built by hand.
    pub http: Option<Arc<RequestHead>>,
    /// What few requests have ([`input_responses`](Self::input_responses),
    /// [`request_state`](Self::request_state), [`task_id`](Self::task_id)),
    /// boxed: a handler's future holds its context for as long as it runs,
    /// minutes for a request pending between SEP-1699 polls.
    rare: Option<Box<Rare>>,
    /// The transport's index of the request's params, when it made one
    /// (see [`params_index`](Self::params_index)).
    params_index: Option<Arc<ObjectIndex>>,
    cancel: CancellationToken,
    sink: Arc<dyn RequestSink>,
}

/// The rarely set members of a [`RequestContext`].
#[derive(Clone, Debug, Default)]
struct Rare {
    input_responses: Option<BTreeMap<String, Box<RawValue>>>,
    request_state: Option<String>,
    task_id: Option<String>,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("revision", &self.revision)
            .field("request_id", &self.request_id)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl RequestContext {
    /// Builds a context (called by the revision crates).
    pub fn new(
        revision: ProtocolVersion,
        request_id: RequestId,
        client: Arc<ClientDescription>,
        cancel: CancellationToken,
        sink: Arc<dyn RequestSink>,
    ) -> Self {
        RequestContext {
            revision,
            request_id,
            progress_token: None,
            client,
            http: None,
            rare: None,
            params_index: None,
            cancel,
            sink,
        }
    }

    /// The engine's bound on running work ([`crate::admission`]), when it
    /// keeps one (from the request's sink: [`RequestSink::admission`]).
    /// The request itself was admitted before its handler ran; a handler
    /// that starts work outliving the request (a task's worker) takes a
    /// place for that work here, and refuses the work when none is left
    /// (the refusal's [`Refused::to_error`](crate::admission::Refused::to_error)
    /// is the error to answer with).
    pub fn admission(&self) -> Option<&Arc<Admission>> {
        self.sink.admission()
    }

    /// Answers to an earlier [`Outcome::InputRequired`], by key (`None`
    /// on a request's first round).
    pub fn input_responses(&self) -> Option<&BTreeMap<String, Box<RawValue>>> {
        self.rare.as_ref()?.input_responses.as_ref()
    }

    /// The state returned with an earlier [`Outcome::InputRequired`].
    pub fn request_state(&self) -> Option<&str> {
        self.rare.as_ref()?.request_state.as_deref()
    }

    /// The task this request runs as, when the framework made it one (see
    /// "Long-running work" in the [module docs](self)).
    pub fn task_id(&self) -> Option<&str> {
        self.rare.as_ref()?.task_id.as_deref()
    }

    /// Sets what [`input_responses`](Self::input_responses) and
    /// [`request_state`](Self::request_state) return (called by the
    /// revision crates for a round after an [`Outcome::InputRequired`]).
    pub fn set_input(
        &mut self,
        responses: Option<BTreeMap<String, Box<RawValue>>>,
        state: Option<String>,
    ) {
        if responses.is_none() && state.is_none() && self.rare.is_none() {
            return;
        }
        let rare = self.rare.get_or_insert_default();
        rare.input_responses = responses;
        rare.request_state = state;
    }

    /// Sets what [`task_id`](Self::task_id) returns (called by the
    /// revision crates for work run as a task).
    pub fn set_task_id(&mut self, task_id: Option<String>) {
        if task_id.is_none() && self.rare.is_none() {
            return;
        }
        self.rare.get_or_insert_default().task_id = task_id;
    }

    /// The members of `params` as the transport found them when it read
    /// the request, so that a handler need not walk the text again (the
    /// 2026-07-28 engine reads every request's params to check it).
    /// `Some` only when the transport left an index here and it
    /// [describes](ObjectIndex::describes) `params` byte for byte: a
    /// handler passes the params it was given, and a layer that rewrote
    /// them gets `None` (and walks them as before).
    pub fn params_index(&self, params: Option<&RawValue>) -> Option<&Arc<ObjectIndex>> {
        self.params_index
            .as_ref()
            .filter(|index| index.describes(params))
    }

    /// Leaves the index [`params_index`](Self::params_index) hands out
    /// (called by the revision crates that read the params anyway).
    pub fn set_params_index(&mut self, index: Option<Arc<ObjectIndex>>) {
        self.params_index = index;
    }

    /// Whether the request has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Completes when the request is cancelled (a named future that does
    /// not borrow the context; see [`Cancelled`]).
    pub fn cancelled(&self) -> Cancelled {
        self.cancel.cancelled()
    }

    /// The request's cancellation token.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Sends a notification related to this request.
    pub async fn notify(&self, notification: Notification) -> Result<(), SendError> {
        if self.cancel.is_cancelled() {
            return Err(SendError::Finished);
        }
        self.sink.send(notification).await
    }

    /// Sends `notifications/progress` when the client gave a progress token;
    /// does nothing otherwise.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), SendError> {
        let Some(token) = &self.progress_token else {
            return Ok(());
        };
        let mut p = serde_json::json!({ "progressToken": token, "progress": progress });
        if let Some(t) = total {
            p["total"] = t.into();
        }
        if let Some(m) = message {
            p["message"] = m.into();
        }
        self.notify(notification("notifications/progress", &p))
            .await
    }

    /// Sends `notifications/message` when the client wants this level.
    pub async fn log(
        &self,
        level: LogLevel,
        logger: Option<&str>,
        data: serde_json::Value,
    ) -> Result<(), SendError> {
        match self.sink.log_level() {
            Some(min) if level >= min => {}
            _ => return Ok(()),
        }
        let mut p = serde_json::json!({ "level": level, "data": data });
        if let Some(l) = logger {
            p["logger"] = l.into();
        }
        self.notify(notification("notifications/message", &p)).await
    }

    /// Asks the transport to close the SSE connection now (SEP-1699 polling,
    /// 2025-11-25); the request keeps running and the client resumes.
    /// Returns whether the revision supports it.
    pub fn close_sse_stream(&self) -> bool {
        self.sink.close_sse_stream()
    }
}

fn notification(method: &str, params: &serde_json::Value) -> Notification {
    Notification {
        method: method.to_owned(),
        params: crate::jsonrpc::to_raw(params).ok(),
    }
}

/// A request handler, served in every era (see the module docs).
#[async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Who the server is and what it offers.
    fn describe(&self) -> ServerDescription;

    /// Handles one request. The transport itself answers `initialize`,
    /// `ping` and `server/discover`; everything else comes here.
    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome;

    /// Whether the work for `request` may be long (see "Long-running work"
    /// in the [module docs](self)); asked once per request, before
    /// [`handle`](Self::handle). Only `tools/call` can run as a task today
    /// (*Tasks*, "Supported Methods"). Default: [`Execution::Immediate`].
    fn execution(&self, _request: &Request) -> Execution {
        Execution::Immediate
    }

    /// [`execution`](Self::execution) of a `tools/call` whose tool `name`
    /// the transport has already read from its params (the 2026-07-28
    /// engine reads it to check `Mcp-Name`, *Streamable HTTP*, "Standard
    /// Headers"; the 2025-11-25 tasks layer with `params.task`, in the
    /// same walk). A name sent more than once is its last value. Override it to decide from the name without reading the
    /// params again (a handler that decides by tool needs nothing else);
    /// it must agree with `execution` for the same request. Default:
    /// [`execution`](Self::execution).
    fn tool_execution(&self, name: &str, request: &Request) -> Execution {
        let _ = name;
        self.execution(request)
    }

    /// A client notification the transport does not consume itself
    /// (it consumes `notifications/initialized` and `notifications/cancelled`).
    async fn notification(&self, _notification: Notification) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nowhere;

    #[async_trait]
    impl RequestSink for Nowhere {
        async fn send(&self, _: Notification) -> Result<(), SendError> {
            Err(SendError::Finished)
        }
        fn log_level(&self) -> Option<LogLevel> {
            None
        }
    }

    fn cx() -> RequestContext {
        RequestContext::new(
            ProtocolVersion::V2025_11_25,
            RequestId::Number(1),
            Arc::default(),
            CancellationToken::new(),
            Arc::new(Nowhere),
        )
    }

    /// A sink that keeps what it is sent, wants logs from `level` up, and
    /// says whether it closes SSE connections.
    #[derive(Default)]
    struct Recording {
        sent: std::sync::Mutex<Vec<Notification>>,
        level: Option<LogLevel>,
        closes: bool,
        admission: Option<Arc<Admission>>,
    }

    #[async_trait]
    impl RequestSink for Recording {
        async fn send(&self, n: Notification) -> Result<(), SendError> {
            self.sent.lock().unwrap().push(n);
            Ok(())
        }
        fn close_sse_stream(&self) -> bool {
            self.closes
        }
        fn log_level(&self) -> Option<LogLevel> {
            self.level
        }
        fn admission(&self) -> Option<&Arc<Admission>> {
            self.admission.as_ref()
        }
    }

    impl Recording {
        /// What was sent, as `(method, params)`.
        fn taken(&self) -> Vec<(String, serde_json::Value)> {
            std::mem::take(&mut *self.sent.lock().unwrap())
                .into_iter()
                .map(|n| {
                    let params = serde_json::from_str(n.params.unwrap().get()).unwrap();
                    (n.method, params)
                })
                .collect()
        }
    }

    fn cx_with(sink: Arc<Recording>) -> RequestContext {
        RequestContext::new(
            ProtocolVersion::V2026_07_28,
            RequestId::Number(7),
            Arc::default(),
            CancellationToken::new(),
            sink,
        )
    }

    #[test]
    fn a_capability_is_declared_by_a_value_that_is_not_null() {
        let client = ClientDescription {
            info: None,
            capabilities: serde_json::json!({"sampling": {}, "roots": null, "x": false}),
        };
        assert!(client.has_capability("sampling"));
        assert!(client.has_capability("x"), "any value but null declares it");
        assert!(!client.has_capability("roots"));
        assert!(!client.has_capability("elicitation"));
    }

    #[tokio::test]
    async fn notify_goes_to_the_sink_until_the_request_is_cancelled() {
        let sink = Arc::new(Recording::default());
        let c = cx_with(sink.clone());
        assert!(!c.is_cancelled());
        assert_eq!(
            format!("{c:?}"),
            "RequestContext { revision: V2026_07_28, request_id: Number(7), cancelled: false, .. }"
        );
        let n = Notification::new("notifications/x", Some(&serde_json::json!({"a": 1}))).unwrap();
        c.notify(n.clone()).await.unwrap();
        assert_eq!(
            sink.taken(),
            [("notifications/x".to_owned(), serde_json::json!({"a": 1}))]
        );
        // Cancelled through the token the context hands out.
        c.cancellation().cancel();
        assert!(c.is_cancelled());
        assert!(format!("{c:?}").contains("cancelled: true"));
        assert_eq!(c.notify(n).await, Err(SendError::Finished));
        assert!(sink.taken().is_empty(), "nothing sent once cancelled");
    }

    /// Progress only with the client's token (*Progress*), carrying what
    /// was given.
    #[tokio::test]
    async fn progress_is_sent_only_with_a_token() {
        let sink = Arc::new(Recording::default());
        let mut c = cx_with(sink.clone());
        c.progress(1.0, None, None).await.unwrap();
        assert!(sink.taken().is_empty(), "no token, no progress");
        c.progress_token = Some("p-1".into());
        c.progress(1.0, None, None).await.unwrap();
        c.progress(2.0, Some(4.0), Some("half")).await.unwrap();
        assert_eq!(
            sink.taken(),
            [
                (
                    "notifications/progress".to_owned(),
                    serde_json::json!({"progressToken": "p-1", "progress": 1.0})
                ),
                (
                    "notifications/progress".to_owned(),
                    serde_json::json!({"progressToken": "p-1", "progress": 2.0, "total": 4.0, "message": "half"})
                ),
            ]
        );
    }

    /// Logs only at or above the level the client wants (*Logging*), none
    /// when it wants none.
    #[tokio::test]
    async fn a_log_is_sent_at_or_above_the_wanted_level() {
        let sink = Arc::new(Recording {
            level: Some(LogLevel::Warning),
            ..Recording::default()
        });
        let c = cx_with(sink.clone());
        c.log(LogLevel::Info, None, "quiet".into()).await.unwrap();
        c.log(LogLevel::Warning, None, "w".into()).await.unwrap();
        c.log(LogLevel::Error, Some("db"), "e".into())
            .await
            .unwrap();
        assert_eq!(
            sink.taken(),
            [
                (
                    "notifications/message".to_owned(),
                    serde_json::json!({"level": "warning", "data": "w"})
                ),
                (
                    "notifications/message".to_owned(),
                    serde_json::json!({"level": "error", "data": "e", "logger": "db"})
                ),
            ]
        );
        let silent = Arc::new(Recording::default());
        let c = cx_with(silent.clone());
        c.log(LogLevel::Emergency, None, "x".into()).await.unwrap();
        assert!(silent.taken().is_empty(), "no level wanted, no log");
    }

    /// `close_sse_stream` and `admission` are the sink's; a sink that does
    /// not say closes nothing and keeps no bound.
    #[test]
    fn closing_and_admission_are_the_sinks() {
        let admission = Admission::new(crate::admission::RunLimits::default());
        let sink = Arc::new(Recording {
            closes: true,
            admission: Some(admission.clone()),
            ..Recording::default()
        });
        let c = cx_with(sink);
        assert!(c.close_sse_stream());
        assert!(Arc::ptr_eq(c.admission().unwrap(), &admission));
        let plain = cx();
        assert!(!plain.close_sse_stream());
        assert!(plain.admission().is_none());
    }

    /// The index is handed out only for the params it describes.
    #[test]
    fn a_params_index_is_handed_out_for_its_own_params_only() {
        let params = RawValue::from_string(r#"{"name":"add"}"#.to_owned()).unwrap();
        let other = RawValue::from_string(r#"{"name":"sub"}"#.to_owned()).unwrap();
        let mut c = cx();
        assert!(c.params_index(Some(&params)).is_none());
        let index = Arc::new(ObjectIndex::of_params(Some(&params)));
        c.set_params_index(Some(index.clone()));
        assert!(Arc::ptr_eq(c.params_index(Some(&params)).unwrap(), &index));
        assert!(c.params_index(Some(&other)).is_none());
        assert!(c.params_index(None).is_none());
    }

    /// A task id set on a context with nothing rare yet, and cleared.
    #[test]
    fn a_task_id_alone_is_set_and_cleared() {
        let mut c = cx();
        c.set_task_id(Some("t-2".into()));
        assert_eq!(c.task_id(), Some("t-2"));
        c.set_task_id(None);
        assert_eq!(c.task_id(), None);
    }

    /// `tool_execution` answers as `execution` unless overridden.
    #[test]
    fn tool_execution_defaults_to_execution() {
        struct Long;
        #[async_trait]
        impl Handler for Long {
            fn describe(&self) -> ServerDescription {
                ServerDescription {
                    info: serde_json::json!({"name": "long", "version": "1"}),
                    capabilities: serde_json::json!({}),
                    instructions: None,
                }
            }
            async fn handle(&self, _: Request, _: RequestContext) -> Outcome {
                Outcome::Error(ErrorObject::internal("unused"))
            }
            fn execution(&self, _: &Request) -> Execution {
                Execution::MayBeLong
            }
        }
        let request = Request::new(1, "tools/call", None::<&()>).unwrap();
        assert_eq!(Long.tool_execution("add", &request), Execution::MayBeLong);
    }

    /// The rare members read back as set, and a context without them
    /// allocates nothing for them and carries one pointer instead of their
    /// three `Option`s (72 bytes): 128 bytes in all, 192 before.
    #[test]
    fn rare_members_are_set_and_read_back() {
        let mut c = cx();
        assert!(c.input_responses().is_none());
        assert!(c.request_state().is_none());
        assert!(c.task_id().is_none());
        c.set_input(None, None);
        c.set_task_id(None);
        assert!(c.rare.is_none(), "nothing set, nothing allocated");

        let answers = BTreeMap::from([(
            "k".to_owned(),
            RawValue::from_string("1".to_owned()).unwrap(),
        )]);
        c.set_input(Some(answers), Some("s".into()));
        c.set_task_id(Some("t-1".into()));
        assert_eq!(c.input_responses().unwrap()["k"].get(), "1");
        assert_eq!(c.request_state(), Some("s"));
        assert_eq!(c.task_id(), Some("t-1"));
        let copy = c.clone();
        c.set_input(None, None);
        assert!(c.input_responses().is_none() && c.request_state().is_none());
        assert_eq!(c.task_id(), Some("t-1"), "the task id stays");
        assert_eq!(copy.request_state(), Some("s"), "a clone keeps its own");

        assert!(std::mem::size_of::<RequestContext>() <= 136);
    }
}
