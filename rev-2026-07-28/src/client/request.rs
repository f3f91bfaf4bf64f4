//! One logical request ([`Call`]): its HTTP attempts, their JSON or SSE
//! answers, and every retry the revision calls for.
//!
//! A call is a pull-driven state machine: nothing runs in the background,
//! so dropping the [`ResponseStream`](mcp_transport_core::transport::ResponseStream)
//! that owns it drops the in-flight POST or the response body, which closes
//! the connection — and "Closing the SSE response stream MUST be treated by
//! the server as cancellation of that request" (*Streamable HTTP*,
//! "Cancellation"; *Cancellation*, "Transport-Specific Cancellation": "No
//! `notifications/cancelled` message is required or expected"). A timeout
//! does the same ("closing the response stream for the request, which
//! constitutes cancellation", *Cancellation*, "Timeouts").
//!
//! # Attempts
//!
//! Every attempt is a POST with a **new** request id, the caller's params
//! plus the per-request metadata ([`super::meta`]), answered by
//! `application/json` or `text/event-stream` ("The client MUST support
//! both"). A call makes a new attempt when
//!
//! | the answer | what happens |
//! | --- | --- |
//! | `-32022 UnsupportedProtocolVersionError` (HTTP 400) | once per call: the highest version in both the configuration and `error.data.supported` becomes the client's version for this and later requests (*Versioning*, "Protocol Version Negotiation"), and the request is re-sent with it — also when it is the version just rejected (the server lists it as supported, so the rejection was transient); no mutual version is `TransportError::Negotiation`, naming both lists |
//! | `-32020 HeaderMismatch` on `tools/call` | once per call: `tools/list` is fetched again (all pages) and the call re-sent with recomputed `Mcp-Param-*` headers ("Client Behavior": the client "SHOULD call `tools/list` ... then retry") |
//! | `resultType: "input_required"` | up to `max_input_rounds` times: [`super::mrtr`] |
//! | the stream or body ends before the response | only with `RequestOptions::safe_to_retry`, once: "Resumable SSE streams via `Last-Event-ID` are not supported", so the call is re-issued whole; otherwise `TransportError::ResumeFailed` |
//!
//! # What is yielded
//!
//! Notifications on an SSE answer (progress, log messages) are yielded in
//! order as `StreamEvent::Notification`; each input request answered in an
//! MRTR round as `StreamEvent::ServerRequest` (id = its `inputRequests`
//! key); then the final `StreamEvent::Response`. A JSON-RPC error response
//! is a `Response` even when it came with a 4xx status (2026-07-28 servers
//! MUST use 400/404 for several JSON-RPC errors); a non-2xx answer without
//! a JSON-RPC error for this request is `TransportError::Http`. A JSON-RPC
//! *request* on the stream is `TransportError::PeerMisbehaved`: "The server
//! MUST NOT send independent JSON-RPC requests on this stream"; so is an
//! unrecognized `resultType` (*Overview*, "ResultType": it "MUST be
//! considered invalid"). A result without `resultType` is complete.
//!
//! The final result of `tools/list` has its invalid tools removed
//! ([`super::tool_cache`]).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use mcp_transport_core::jsonrpc::{
    HEADER_MISMATCH, Message, Request, RequestId, Response, UNSUPPORTED_PROTOCOL_VERSION,
    parse_message, to_raw,
};
use mcp_transport_core::negotiation::{UnsupportedVersionData, highest_mutual};
use mcp_transport_core::transport::{
    LimitExceeded, Misbehaviour, RequestOptions, ResumeFailure, StreamEvent, TaskLink,
    TransportError,
};
use mcp_transport_core::{Era, ProtocolVersion};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::time::Instant;
use tracing::Instrument;

use super::meta::{self, MetaInputs};
use super::mrtr::{self, ResultType, Retry};
use super::shared::Shared;
use super::sse::{SseRead, SseReader};
use super::task::{self, TaskPoll};
use super::tool_cache;
use super::wire::{self, BodyError, MediaType};
use mcp_http_edge::client::with_deadline;

/// The methods on which servers may answer `InputRequiredResult` (*MRTR*,
/// "Supported Requests").
const MRTR_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// Where the messages of one attempt's answer come from.
enum Source {
    /// An `application/json` answer, already read (taken once).
    Ready(Option<Message>),
    /// An answer whose connection broke before the response (why).
    Broken(String),
    /// A `text/event-stream` answer.
    Sse(Box<SseReader>),
}

/// What reading an answer gave.
enum Incoming {
    /// A message.
    Message(Message),
    /// The answer ended (or broke) without more messages.
    Ended(String),
}

impl Source {
    async fn next(&mut self) -> Result<Incoming, TransportError> {
        match self {
            Source::Ready(slot) => Ok(slot.take().map_or_else(
                || Incoming::Ended("the JSON answer held no response".into()),
                Incoming::Message,
            )),
            Source::Broken(why) => Ok(Incoming::Ended(why.clone())),
            Source::Sse(reader) => match reader.next().await? {
                SseRead::Data(data) => parse_message(&data).map(Incoming::Message).map_err(|e| {
                    TransportError::PeerMisbehaved(Misbehaviour::InvalidJsonRpc {
                        what: "an SSE event".into(),
                        detail: e.to_string(),
                    })
                }),
                SseRead::End => Ok(Incoming::Ended("the server ended the stream".into())),
                SseRead::Broken(why) => Ok(Incoming::Ended(format!("the connection broke: {why}"))),
            },
        }
    }
}

/// One attempt in flight.
struct Attempt {
    id: RequestId,
    version: ProtocolVersion,
    source: Source,
}

/// What one step of a [`Call`] gives its driver.
#[derive(Debug)]
pub(crate) enum Step {
    /// An event for the caller.
    Event(StreamEvent),
    /// The server answered `tools/call` with `HeaderMismatch` (`-32020`);
    /// the driver refreshes `tools/list` and steps again (the call retries
    /// once; *Client Behavior for Custom Headers*: the client "SHOULD call
    /// `tools/list` to check for changes to the tool's `inputSchema`, then
    /// retry the original request"), or ends the call with this answer when the refresh fails
    /// ([`Call::end_with`]). The call cannot refresh by itself: a refresh
    /// is calls of its own, run by the layer above (`run`).
    RefreshTools(Response),
}

/// One logical request (see the module docs).
pub(crate) struct Call {
    shared: Arc<Shared>,
    method: String,
    /// The caller's params (without the per-attempt additions).
    base: Map<String, Value>,
    options: RequestOptions,
    progress_token: Option<Value>,
    rounds: u32,
    retry: Option<Retry>,
    version_retried: bool,
    header_retried: bool,
    /// A `HeaderMismatch` answer to `tools/call` waiting for its caller to
    /// refresh `tools/list` ([`Step::RefreshTools`]).
    refresh_due: Option<Response>,
    reissued: bool,
    attempt: Option<Attempt>,
    pending: VecDeque<StreamEvent>,
    done: bool,
    status: StatusCode,
    last_id: Option<RequestId>,
    timeout: Option<Duration>,
    deadline: Option<Instant>,
    deadline_enabled: bool,
    /// The task being followed, once the server made the call one
    /// ([`super::task`]).
    task: Option<TaskPoll>,
    /// Where the task id is reported to the caller's `ResponseStream`, and
    /// whether the caller detached it.
    pub(crate) link: TaskLink,
}

impl Call {
    /// A call of `method`; `params` must be a JSON object when present.
    pub(crate) fn new(
        shared: Arc<Shared>,
        method: &str,
        params: Option<&RawValue>,
        options: RequestOptions,
    ) -> Result<Self, TransportError> {
        let base = match params {
            None => Map::new(),
            Some(raw) => match serde_json::from_str::<Value>(raw.get()) {
                Ok(Value::Object(map)) => map,
                _ => {
                    return Err(TransportError::Unsupported {
                        revision: ProtocolVersion::V2026_07_28,
                        what: "request params that are not a JSON object (every 2026-07-28 request carries _meta in its params)",
                    });
                }
            },
        };
        Ok(Self::from_map(shared, method, base, options))
    }

    /// A call of `method` with params already parsed.
    pub(crate) fn from_map(
        shared: Arc<Shared>,
        method: &str,
        base: Map<String, Value>,
        options: RequestOptions,
    ) -> Self {
        let progress_token = options.progress.then(|| shared.next_progress_token());
        let timeout = options.timeout.or(shared.config.http.request_timeout);
        Call {
            method: method.to_owned(),
            base,
            options,
            progress_token,
            rounds: 0,
            retry: None,
            version_retried: false,
            header_retried: false,
            refresh_due: None,
            reissued: false,
            attempt: None,
            pending: VecDeque::new(),
            done: false,
            status: StatusCode::OK,
            last_id: None,
            timeout,
            deadline: None,
            deadline_enabled: true,
            task: None,
            link: TaskLink::new(),
            shared,
        }
    }

    /// A call that follows the existing task `task_id` ([`super::task`]).
    pub(crate) fn for_task(shared: Arc<Shared>, task_id: &str) -> Self {
        let caps = shared.config.capabilities.clone();
        let mut call = Self::from_map(shared, "tools/call", Map::new(), RequestOptions::default());
        call.task = Some(TaskPoll::resume(task_id.to_owned(), caps));
        call.link.set_id(task_id);
        call
    }

    /// The client state the call runs in.
    pub(crate) fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// The HTTP status of the answer that carried the latest message.
    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    /// The id of the latest attempt.
    pub(crate) fn request_id(&self) -> Option<&RequestId> {
        self.last_id.as_ref()
    }

    /// Stops applying the timeout to reads (a `subscriptions/listen` stream
    /// after its acknowledgment).
    pub(crate) fn disable_deadline(&mut self) {
        self.deadline_enabled = false;
    }

    /// Sends until an answer is open (or a final response or error is
    /// known), so that a refusal is returned by `request()` itself.
    pub(crate) async fn open_first(&mut self) -> Result<(), TransportError> {
        let closed = self.shared.closed.clone();
        let result = tokio::select! {
            biased;
            () = closed.cancelled() => Err(TransportError::Closed),
            r = self.open_until_answer() => r,
        };
        if result.is_err() {
            self.finish();
        }
        result
    }

    async fn open_until_answer(&mut self) -> Result<(), TransportError> {
        while self.attempt.is_none() && self.pending.is_empty() && self.refresh_due.is_none() {
            if let Some(event) = self.open().await? {
                self.pending.push_back(event);
            }
        }
        Ok(())
    }

    /// The `HeaderMismatch` answer that [`open_first`](Self::open_first)
    /// stopped at, when it did: the caller refreshes `tools/list`, then
    /// calls `open_first` again (the call retries) or
    /// [`end_with`](Self::end_with) the answer.
    pub(crate) fn take_refresh(&mut self) -> Option<Response> {
        self.refresh_due.take()
    }

    /// Ends the call with `response` as its answer (the next step yields
    /// it): what a caller whose `tools/list` refresh failed does with the
    /// `HeaderMismatch` answer.
    pub(crate) fn end_with(&mut self, response: Response) {
        self.attempt = None;
        self.pending.push_back(StreamEvent::Response(response));
    }

    /// The next step; `None` after the response or an error.
    pub(crate) async fn next_step(&mut self) -> Option<Result<Step, TransportError>> {
        if self.done && self.pending.is_empty() {
            return None;
        }
        let closed = self.shared.closed.clone();
        let result = tokio::select! {
            biased;
            () = closed.cancelled() => Err(TransportError::Closed),
            r = self.step() => r,
        };
        if matches!(result, Ok(Step::Event(StreamEvent::Response(_))) | Err(_)) {
            self.finish();
        }
        Some(result)
    }

    fn finish(&mut self) {
        self.done = true;
        self.pending.clear();
        self.attempt = None;
    }

    fn active_deadline(&self) -> Option<Instant> {
        self.deadline.filter(|_| self.deadline_enabled)
    }

    async fn step(&mut self) -> Result<Step, TransportError> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Ok(Step::Event(event));
            }
            if let Some(mismatch) = self.refresh_due.take() {
                return Ok(Step::RefreshTools(mismatch));
            }
            let deadline = self.active_deadline();
            let timeout = self.timeout;
            let Some(attempt) = self.attempt.as_mut() else {
                if let Some(event) = self.open().await? {
                    return Ok(Step::Event(event));
                }
                continue;
            };
            let incoming = with_deadline(deadline, timeout, attempt.source.next()).await?;
            match incoming {
                Incoming::Message(Message::Notification(n)) => {
                    return Ok(Step::Event(StreamEvent::Notification(n)));
                }
                Incoming::Message(Message::Request(r)) => {
                    return Err(TransportError::PeerMisbehaved(
                        Misbehaviour::UnexpectedMessage {
                            got: format!("JSON-RPC request {} (id {})", r.method, r.id),
                            context: format!("the response stream of {}", self.method),
                            rule: "on 2026-07-28 servers MUST NOT send requests on a stream \
                                   (server-to-client input travels as an InputRequiredResult)",
                        },
                    ));
                }
                Incoming::Message(Message::Response(r)) => {
                    let ours =
                        r.id.as_ref() == Some(&attempt.id) || (r.id.is_none() && r.is_error());
                    if !ours {
                        return Err(TransportError::PeerMisbehaved(
                            Misbehaviour::ResponseIdMismatch {
                                expected: attempt.id.clone(),
                                got: r.id,
                            },
                        ));
                    }
                    let Some(attempt) = self.attempt.take() else {
                        continue;
                    };
                    if let Some(event) = self.on_response(r, &attempt.version).await? {
                        return Ok(Step::Event(event));
                    }
                }
                Incoming::Ended(why) => {
                    let id = attempt.id.clone();
                    let revision = attempt.version.clone();
                    self.attempt = None;
                    if let Some(task) = self.task.as_mut() {
                        // A poll is safe to repeat.
                        task.on_broken(&why)?;
                        continue;
                    }
                    if self.options.safe_to_retry && !self.reissued {
                        self.reissued = true;
                        tracing::warn!(method = %self.method, %id, why, "response stream broke; re-issuing the request (safe_to_retry) with a new id");
                        continue;
                    }
                    return Err(TransportError::ResumeFailed(ResumeFailure::NotResumable {
                        revision,
                        what: format!("the answer to {} (request {id})", self.method),
                        why,
                    }));
                }
            }
        }
    }

    /// Sends one attempt. `Some` when its answer is already final (a 4xx
    /// JSON-RPC error that calls for no retry).
    async fn open(&mut self) -> Result<Option<StreamEvent>, TransportError> {
        let shared = self.shared.clone();
        let (method, mut params) = match &self.task {
            Some(task) => {
                if let Some(wait) = task.wait() {
                    tokio::time::sleep(wait).await;
                }
                task.request()
            }
            None => (self.method.clone(), self.base.clone()),
        };
        let id = shared.next_id();
        let version = shared.version();
        if let (Some(retry), None) = (&self.retry, &self.task) {
            retry.apply(&mut params);
        }
        meta::apply_meta(
            &mut params,
            &MetaInputs {
                version: &version,
                config: &shared.config,
                progress_token: self.progress_token.as_ref(),
            },
        );
        let headers = meta::request_headers(&method, &params, &version, &shared.tools)?;
        let params = to_raw(&params)
            .map_err(|e| TransportError::Internal(format!("serializing params: {e}")))?;
        let body = Message::Request(Request {
            id: id.clone(),
            method: method.clone(),
            params: Some(params),
        })
        .to_json();
        self.last_id = Some(id.clone());
        self.deadline = self.timeout.map(|t| Instant::now() + t);
        let deadline = self.active_deadline();
        let timeout = self.timeout;
        let what = format!("POST {method} (request {id})");
        let builder = shared
            .http
            .post(shared.url.clone())
            .headers(headers)
            .body(body);
        // One `mcp.client.request` span per HTTP attempt (mcp_http_edge::trace;
        // a retry, an MRTR round or a task poll is a request of its own).
        let span = tracing::info_span!(
            "mcp.client.request",
            rpc.method = %method,
            rpc.id = %id,
            mcp.protocol_version = %version,
            http.status = tracing::field::Empty,
        );
        let sent = async { Ok(builder.send().await) }.instrument(span.clone());
        let sent = with_deadline(deadline, timeout, sent).await?;
        if let Ok(response) = &sent {
            span.record("http.status", response.status().as_u16());
        }
        let response = match sent {
            Ok(response) => response,
            // Nothing reached the server.
            Err(e) if e.is_connect() || e.is_builder() => {
                return Err(TransportError::Connection(format!(
                    "{what}: {}",
                    wire::error_chain(&e)
                )));
            }
            // The request may have been delivered, but the connection
            // closed before an answer: a broken stream like any other.
            Err(e) => {
                self.attempt = Some(Attempt {
                    id,
                    version,
                    source: Source::Broken(format!(
                        "the connection closed before the answer: {}",
                        wire::error_chain(&e)
                    )),
                });
                return Ok(None);
            }
        };
        let status = response.status();
        self.status = status;
        if status.is_success() {
            if status == StatusCode::ACCEPTED {
                return Err(TransportError::PeerMisbehaved(
                    Misbehaviour::AcceptedWithoutAnswer {
                        what: what.to_string(),
                    },
                ));
            }
            let source = match wire::media_type(&response) {
                MediaType::Json => {
                    let max = shared.config.max_body_bytes;
                    let read = async { Ok(wire::read_body(response, max, &what).await) };
                    match with_deadline(deadline, timeout, read).await? {
                        Ok(body) => Source::Ready(Some(parse_json_answer(&body, &what)?)),
                        Err(BodyError::Limit(e)) => return Err(e),
                        Err(BodyError::Broken(why)) => Source::Broken(format!(
                            "the connection broke while the JSON answer was read: {why}"
                        )),
                    }
                }
                MediaType::EventStream => Source::Sse(Box::new(SseReader::new(
                    response,
                    shared.config.max_event_bytes,
                ))),
                MediaType::Other(ct) => {
                    return Err(TransportError::PeerMisbehaved(
                        Misbehaviour::WrongContentType {
                            what: what.to_string(),
                            got: Some(ct).filter(|ct| !ct.is_empty()),
                            expected: "application/json or text/event-stream",
                        },
                    ));
                }
            };
            self.attempt = Some(Attempt {
                id,
                version,
                source,
            });
            return Ok(None);
        }
        let read = async { Ok(wire::read_limited(response, wire::MAX_ERROR_BODY).await) };
        let body = with_deadline(deadline, timeout, read).await?;
        let rpc = wire::error_response(&body);
        if let Some(r) = &rpc {
            let code = r.payload.as_ref().err().map_or(0, |e| e.code);
            let ours = r.id.as_ref() == Some(&id)
                || (r.id.is_none()
                    && matches!(code, HEADER_MISMATCH | UNSUPPORTED_PROTOCOL_VERSION));
            if ours {
                return self.on_response(r.clone(), &version).await;
            }
        }
        let rpc = rpc.and_then(|r| r.payload.err());
        let message = rpc
            .as_ref()
            .map_or_else(|| wire::body_excerpt(&body, status), |e| e.message.clone());
        tracing::debug!(%what, %status, message, "unusable HTTP status");
        Err(TransportError::Http {
            status: status.as_u16(),
            message,
            rpc,
        })
    }

    /// Handles the response of the attempt sent with `version`: `Some` is
    /// final, `None` means a new attempt is due.
    async fn on_response(
        &mut self,
        response: Response,
        version: &ProtocolVersion,
    ) -> Result<Option<StreamEvent>, TransportError> {
        if let Some(task) = self.task.as_mut() {
            let handler = self.shared.config.input_handler.clone();
            let Some(last) = task
                .on_response(response, &*handler, &mut self.pending)
                .await?
            else {
                return Ok(None);
            };
            // The final status event goes before the response.
            self.pending.push_back(StreamEvent::Response(last));
            return Ok(self.pending.pop_front());
        }
        let result = match &response.payload {
            Err(error) => {
                if error.code == UNSUPPORTED_PROTOCOL_VERSION
                    && !self.version_retried
                    && let Some(data) = UnsupportedVersionData::from_error(error)
                {
                    let chosen = highest_mutual(
                        &self.shared.config.versions,
                        &data.supported,
                        Some(Era::Modern),
                    )?;
                    // Retried even when `chosen` is the version just
                    // sent: the server lists it as supported, so the
                    // rejection was not about the version itself (a
                    // server behind a load balancer mid-upgrade, a
                    // stale instance) and "retry using the advertised
                    // `supported` versions" holds for it too. Once per
                    // call, so it cannot loop.
                    self.version_retried = true;
                    if chosen == *version {
                        tracing::info!(%version, "UnsupportedProtocolVersionError for a version the server lists as supported; retrying once with it");
                    } else {
                        let reason = format!(
                            "{chosen}: the highest version in both the client's list ({}) and the server's ({}), after the server rejected {version}",
                            mcp_transport_core::version::list(&self.shared.config.versions),
                            mcp_transport_core::version::list(&data.supported),
                        );
                        self.shared.set_version(chosen, reason);
                    }
                    return Ok(None);
                }
                if error.code == HEADER_MISMATCH
                    && self.method == "tools/call"
                    && !self.header_retried
                {
                    self.header_retried = true;
                    tracing::info!(message = %error.message, "HeaderMismatch on tools/call: refreshing tools/list and retrying once");
                    self.refresh_due = Some(response);
                    return Ok(None);
                }
                return Ok(Some(StreamEvent::Response(response)));
            }
            Ok(result) => result,
        };
        match mrtr::result_type(result)? {
            ResultType::Complete => {
                let response = if self.method == "tools/list" {
                    self.filter_tools(response)?
                } else {
                    response
                };
                Ok(Some(StreamEvent::Response(response)))
            }
            ResultType::InputRequired => {
                if !MRTR_METHODS.contains(&self.method.as_str()) {
                    tracing::warn!(method = %self.method, "InputRequiredResult on a method that does not support it (MRTR, Supported Requests); answering it anyway");
                }
                self.rounds += 1;
                if self.rounds > self.shared.config.max_input_rounds {
                    return Err(TransportError::Limit(LimitExceeded::new(
                        "ModernClientConfig::max_input_rounds",
                        u64::from(self.shared.config.max_input_rounds),
                        format!("the input rounds {} asked for", self.method),
                    )));
                }
                let input = mrtr::parse(result)?;
                let handler = self.shared.config.input_handler.clone();
                let retry = mrtr::answer(&*handler, input, &mut self.pending).await?;
                self.retry = Some(retry);
                Ok(None)
            }
            ResultType::Unknown(t)
                if t == "task"
                    && self.method == "tools/call"
                    && task::declared(&task::capabilities_of(
                        &self.base,
                        &self.shared.config.capabilities,
                    )) =>
            {
                let caps = task::capabilities_of(&self.base, &self.shared.config.capabilities);
                let poll = TaskPoll::start(result, caps, &mut self.pending)?;
                self.link.set_id(&poll.id);
                self.task = Some(poll);
                Ok(None)
            }
            ResultType::Unknown(t) => Err(TransportError::PeerMisbehaved(
                Misbehaviour::UnknownResultType {
                    method: self.method.clone(),
                    result_type: t,
                },
            )),
        }
    }

    /// Removes invalid tools from a `tools/list` result and caches the rest.
    fn filter_tools(&self, response: Response) -> Result<Response, TransportError> {
        let Ok(raw) = &response.payload else {
            return Ok(response);
        };
        let mut value: Value = serde_json::from_str(raw.get()).map_err(|e| {
            TransportError::PeerMisbehaved(Misbehaviour::MalformedResult {
                what: "tools/list result".into(),
                detail: format!("not JSON: {e}"),
            })
        })?;
        if !tool_cache::filter_tools_result(&mut value, &self.shared.tools) {
            return Ok(response);
        }
        let raw = to_raw(&value)
            .map_err(|e| TransportError::Internal(format!("re-serializing tools/list: {e}")))?;
        Ok(Response {
            id: response.id,
            payload: Ok(raw),
        })
    }
}

/// Parses a JSON answer: exactly one JSON-RPC message.
/// Dropping a call that follows a task which has not ended cancels the
/// task (`tasks/cancel`, sent in the background when a runtime is there),
/// unless the caller detached it (`ResponseStream::detach_task`).
impl Drop for Call {
    fn drop(&mut self) {
        let Some(task) = self.task.take().filter(|t| !t.ended) else {
            return;
        };
        if self.link.is_detached() {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let shared = self.shared.clone();
        let caps = task::capabilities_of(&self.base, &shared.config.capabilities);
        rt.spawn(async move {
            let id = task.id.clone();
            let mut call =
                Self::from_map(shared, "tools/call", Map::new(), RequestOptions::default());
            call.task = Some(TaskPoll::cancelling(task.id, caps));
            let outcome = match call.open_first().await {
                Err(e) => Err(e),
                Ok(()) => loop {
                    match call.next_step().await {
                        Some(Ok(Step::Event(StreamEvent::Response(r)))) => break Ok(r),
                        Some(Ok(_)) => {}
                        Some(Err(e)) => break Err(e),
                        None => break Err(TransportError::Closed),
                    }
                },
            };
            match outcome {
                Ok(r) if r.payload.is_ok() => {}
                Ok(r) => tracing::debug!(task = %id, answer = ?r.payload, "tasks/cancel after the call was dropped was refused"),
                Err(e) => tracing::debug!(task = %id, error = %e, "tasks/cancel after the call was dropped failed"),
            }
        });
    }
}

fn parse_json_answer(body: &[u8], what: &str) -> Result<Message, TransportError> {
    let text = std::str::from_utf8(body).map_err(|e| {
        TransportError::PeerMisbehaved(Misbehaviour::InvalidJsonRpc {
            what: what.to_owned(),
            detail: format!("the JSON answer is not UTF-8: {e}"),
        })
    })?;
    let message = parse_message(text).map_err(|e| {
        TransportError::PeerMisbehaved(Misbehaviour::InvalidJsonRpc {
            what: what.to_owned(),
            detail: e.to_string(),
        })
    })?;
    if !matches!(message, Message::Response(_)) {
        return Err(TransportError::PeerMisbehaved(
            Misbehaviour::UnexpectedMessage {
                got: message.method().unwrap_or("message").to_owned(),
                context: what.to_owned(),
                rule: "an application/json answer must be the response",
            },
        ));
    }
    Ok(message)
}
