//! Running one request through the handler, and its response stream.
//!
//! The handler runs in its own task, polled once in the POST before it is
//! spawned (an answer ready at once needs no task and no wake-up across
//! threads: docs/PERFORMANCE.md). What it
//! produces travels through a bounded queue to the HTTP response; the
//! queue is made when something needs it (the first notification, or a
//! handler still running after its first poll), so an answer ready at
//! once, without notifications, goes straight to the response:
//!
//! * The POST waits for the first thing the handler produces. A final
//!   answer that comes first is sent as JSON when `json_response` is on or
//!   when it has its own HTTP status (`404`/`400`, see
//!   [`reply::status_for`]); otherwise as a one-event SSE stream. A
//!   notification that comes first opens the SSE stream. With
//!   `json_response` off, a handler silent for a whole
//!   [`keepalive`](super::ModernConfig::keepalive) period also gets its
//!   stream opened, with a keep-alive comment.
//! * **Cancellation by close** (*Streamable HTTP*, "Cancellation": "Closing
//!   the SSE response stream MUST be treated by the server as cancellation
//!   of that request"): a drop guard of the request's cancellation token
//!   lives in the POST future and then in the response body. When the
//!   client goes away, hyper drops whichever holds it and the handler's
//!   `RequestContext::cancelled()` fires at once; the queue is gone with
//!   the body, so nothing more is sent for the request ("MUST NOT send any
//!   further messages for it"). In JSON mode the same guard sits in the
//!   POST future, which hyper drops when the connection closes.
//! * After the final answer the stream ends ("The final JSON-RPC response
//!   SHOULD terminate the stream"). Events have no `id` and there is no
//!   priming event (no resumption in this revision). Each event is one
//!   body chunk, so one write.
//!
//! Nothing about the request outlives it: the task, the queue and the
//! guard are all it has.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;
use std::time::Duration;
use tracing::Instrument;

use async_trait::async_trait;
use axum::body::Body;
use bytes::Bytes;
use futures_util::FutureExt;
use http::StatusCode;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::admission::{self, Refused, RunPermit};
use mcp_transport_core::cancel::{CancellationToken, DropGuard};
use mcp_transport_core::handler::{
    ClientDescription, LogLevel, Outcome, RequestContext, RequestSink, SendError,
};
use mcp_transport_core::jsonrpc::{
    self, ErrorObject, INTERNAL_ERROR, MISSING_REQUIRED_CLIENT_CAPABILITY, Message, Notification,
    Request, RequestId,
};
use mcp_transport_core::request_head::RequestHead;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use super::Shared;
use super::mrtr::{self, BindingSource, Opened};
use super::reply::{self, HttpResponse};
use super::result::{self, Decoration};
use super::validate::{Params, RequestMeta};

/// Notifications that belong on `subscriptions/listen` streams only.
const LISTEN_ONLY: [&str; 5] = [
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/subscriptions/acknowledged",
];

/// What flows from the handler's task to the response.
enum Item {
    /// A notification, already an SSE event.
    Notification(Bytes),
    /// The final answer.
    Final(Final),
}

/// The final answer: its JSON text and the status it gets when sent as JSON.
struct Final {
    status: StatusCode,
    json: String,
}

impl Final {
    fn error(id: &RequestId, error: ErrorObject) -> Final {
        Final {
            status: reply::status_for(error.code),
            json: reply::response_json(jsonrpc::Response::error(Some(id.clone()), error)),
        }
    }

    fn result(id: &RequestId, result: &RawValue) -> Final {
        Final::result_text(id, result.get())
    }

    /// A result response to `id` whose `result` is the JSON text `result`.
    fn result_text(id: &RequestId, result: &str) -> Final {
        Final {
            status: StatusCode::OK,
            json: jsonrpc::result_json(id, result),
        }
    }
}

/// A request that passed every check, ready for the handler.
pub(crate) struct Prepared {
    /// The request.
    pub request: Request,
    /// Its params' members, as the engine found them (handed to the
    /// handler: [`RequestContext::params_index`]).
    pub params: Params,
    /// Its protocol version.
    pub version: ProtocolVersion,
    /// Its metadata.
    pub meta: RequestMeta,
    /// Its parsed log level.
    pub log_level: Option<LogLevel>,
    /// What a `requestState` issued for it is bound to (MRTR methods only).
    pub binding: Option<BindingSource>,
    /// The verified `requestState` of a retry.
    pub opened: Option<Opened>,
    /// The `inputResponses` of a retry.
    pub input_responses: Option<BTreeMap<String, Box<RawValue>>>,
    /// The HTTP request's parts, for [`RequestContext::http`].
    pub http: Option<Arc<RequestHead>>,
}

/// The queue from the handler to the response, made on first use.
struct Queue {
    capacity: usize,
    tx: OnceLock<mpsc::Sender<Item>>,
    /// The receiving end, until the response takes it.
    rx: Mutex<Option<mpsc::Receiver<Item>>>,
}

impl Queue {
    fn new(capacity: usize) -> Queue {
        Queue {
            capacity: capacity.max(1),
            tx: OnceLock::new(),
            rx: Mutex::new(None),
        }
    }

    /// The sending end (the queue made now if it was not yet).
    fn sender(&self) -> &mpsc::Sender<Item> {
        self.tx.get_or_init(|| {
            let (tx, rx) = mpsc::channel(self.capacity);
            *self.rx.lock().unwrap_or_else(|e| e.into_inner()) = Some(rx);
            tx
        })
    }

    /// Whether anything was queued (the queue exists).
    fn made(&self) -> bool {
        self.tx.get().is_some()
    }

    /// The receiving end (the queue made now if it was not yet); `None`
    /// once taken.
    fn receiver(&self) -> Option<mpsc::Receiver<Item>> {
        self.sender();
        self.rx.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The request's [`RequestSink`]: queues notifications for the response
/// stream, applying the per-request rules.
struct Sink {
    queue: Queue,
    cancel: CancellationToken,
    log_level: Option<LogLevel>,
    progress_token: Option<Value>,
}

fn param<'a>(n: &'a Notification, key: &str) -> Option<Value> {
    let p: &'a RawValue = n.params.as_deref()?;
    let v: Value = serde_json::from_str(p.get()).ok()?;
    v.get(key).cloned()
}

#[async_trait]
impl RequestSink for Sink {
    /// Queues a notification for this request's stream (waiting while the
    /// queue is full). Request-scoped rules:
    ///
    /// * `notifications/message` only at or above the level the request's
    ///   `_meta` asked for, and never without one (*Logging*: "The server
    ///   MUST NOT emit `notifications/message` for a request that does not
    ///   include this field"); others are dropped (`Ok`).
    /// * `notifications/progress` only with the request's own
    ///   `progressToken` (*Progress*: "Progress notifications MUST only
    ///   reference tokens that: Were provided in an active request");
    ///   others are dropped (`Ok`).
    /// * Change notifications (`*/list_changed`, `resources/updated`) are
    ///   refused: they go to listen streams (*Streamable HTTP*, "Receiving
    ///   Messages": notifications on a response stream "MUST relate to the
    ///   originating client request").
    async fn send(&self, n: Notification) -> Result<(), SendError> {
        if self.cancel.is_cancelled() {
            return Err(SendError::Finished);
        }
        match n.method.as_str() {
            "notifications/message" => {
                let level =
                    param(&n, "level").and_then(|l| serde_json::from_value::<LogLevel>(l).ok());
                match (self.log_level, level) {
                    (Some(min), Some(level)) if level >= min => {}
                    _ => return Ok(()),
                }
            }
            "notifications/progress"
                if self.progress_token.is_none()
                    || param(&n, "progressToken") != self.progress_token =>
            {
                return Ok(());
            }
            "notifications/cancelled" => {
                return Err(SendError::Unsupported(
                    "a server sends notifications/cancelled only to end a subscription on stdio",
                ));
            }
            m if LISTEN_ONLY.contains(&m) => {
                return Err(SendError::Unsupported(
                    "change notifications go to subscriptions/listen streams (ModernServer::publish), not to a request's response stream",
                ));
            }
            _ => {}
        }
        let event = reply::event(&Message::Notification(n).to_json());
        tokio::select! {
            sent = self.queue.sender().send(Item::Notification(event)) => sent.map_err(|_| SendError::Finished),
            () = self.cancel.cancelled() => Err(SendError::Finished),
        }
    }

    /// The level of the request's `io.modelcontextprotocol/logLevel`, or
    /// `None` when it carried none.
    fn log_level(&self) -> Option<LogLevel> {
        self.log_level
    }
}

/// `method` as a static name when it is one a handler commonly gets;
/// copied otherwise.
fn method_name(method: &str) -> Cow<'static, str> {
    const NAMED: [&str; 8] = [
        "tools/call",
        "tools/list",
        "prompts/get",
        "prompts/list",
        "resources/read",
        "resources/list",
        "resources/templates/list",
        "completion/complete",
    ];
    NAMED
        .into_iter()
        .find(|m| *m == method)
        .map_or_else(|| Cow::Owned(method.to_owned()), Cow::Borrowed)
}

/// What the task needs to turn an outcome into the final answer.
struct Finish {
    /// The method, borrowed when it is one the engine names (no copy for
    /// the common ones).
    method: Cow<'static, str>,
    id: RequestId,
    /// The client's description, shared with the handler's context.
    client: Arc<ClientDescription>,
    binding: Option<BindingSource>,
    round: u32,
}

/// Runs the handler and answers the POST (see the module docs).
///
/// Not an `async fn`: everything up to the handler's first poll runs when
/// this is called, and the future returned holds only what answering
/// needs. (An `async fn` would keep the whole [`Prepared`] as its argument
/// next to what it was taken apart into, in every request's future.)
pub(crate) fn serve(
    shared: &Arc<Shared>,
    prepared: Prepared,
) -> impl Future<Output = HttpResponse> + Send + 'static {
    answer(start(shared, prepared))
}

/// A request whose handler has been polled once: what answering needs.
struct Started {
    /// The final answer, when the handler gave it in its first poll and
    /// queued nothing before it.
    ready: Option<Final>,
    /// Where the rest comes from otherwise.
    rx: Option<mpsc::Receiver<Item>>,
    /// Armed until the answer is complete: dropping it (the client went
    /// away before the head was sent) cancels the request.
    guard: DropGuard,
    id: RequestId,
    json_mode: bool,
    keepalive: Option<Duration>,
}

impl Started {
    /// The answer to a request refused at admission: 503 with a `-32603`
    /// naming the limit, nothing run.
    fn refused(id: RequestId, why: &Refused, shared: &Shared) -> Started {
        let error = why.to_error();
        let ready = Final {
            status: StatusCode::SERVICE_UNAVAILABLE,
            json: reply::response_json(jsonrpc::Response::error(Some(id.clone()), error)),
        };
        Started {
            ready: Some(ready),
            rx: None,
            guard: CancellationToken::new().drop_guard(),
            id,
            json_mode: shared.config.json_response,
            keepalive: shared.config.keepalive,
        }
    }
}

/// Builds the handler's context and polls its future once (see
/// [`serve`]).
fn start(shared: &Arc<Shared>, prepared: Prepared) -> Started {
    // Admitted first: a request over the server's bounds is refused before
    // anything of it is built or run.
    let permit = match shared
        .admission
        .try_admit(admission::weight(&prepared.request))
    {
        Ok(p) => p,
        Err(why) => return Started::refused(prepared.request.id, &why, shared),
    };
    let Prepared {
        request,
        params,
        version,
        meta,
        log_level,
        binding,
        opened,
        input_responses,
        http,
    } = prepared;
    let cancel = CancellationToken::new();
    let sink = Arc::new(Sink {
        queue: Queue::new(shared.config.stream_queue),
        cancel: cancel.clone(),
        log_level,
        progress_token: meta.progress_token.clone(),
    });
    let client = Arc::new(ClientDescription {
        info: meta.info,
        capabilities: meta.capabilities,
    });
    let finish = Finish {
        method: method_name(&request.method),
        id: request.id.clone(),
        client: client.clone(),
        binding,
        round: opened.as_ref().map_or(0, |o| o.round),
    };
    let mut cx = RequestContext::new(
        version,
        request.id.clone(),
        client,
        cancel.clone(),
        sink.clone(),
    );
    cx.progress_token = meta.progress_token;
    cx.set_input(input_responses, opened.and_then(|o| o.state));
    cx.http = http;
    cx.set_params_index(Some(params.into_index()));

    let guard = if shared
        .config
        .http
        .faults
        .has(mcp_http_edge::faults::Fault::IgnoreClose)
    {
        // Self-test fault: a guard of a token nobody watches.
        CancellationToken::new().drop_guard()
    } else {
        cancel.drop_guard()
    };
    let id = finish.id.clone();
    // Polled once here first: a handler that answers at once (most do)
    // has its answer before the POST waits for it, with no task spawned,
    // no wake-up from another thread and (when it sent no notification)
    // no queue; one that does not is spawned as it is, and its answer
    // follows its notifications through the queue. Nothing is awaited
    // between the first poll and the spawn, so dropping the POST cannot
    // land in between.
    let mut task = Box::pin(
        run(shared.clone(), request, cx, finish, permit).instrument(tracing::Span::current()),
    );
    let waker = futures_util::task::noop_waker();
    let ready = match task
        .as_mut()
        .poll(&mut std::task::Context::from_waker(&waker))
    {
        Poll::Ready(Some(fin)) if sink.queue.made() => {
            // Notifications went first: the answer goes behind them.
            let tx = sink.queue.sender().clone();
            if let Err(mpsc::error::TrySendError::Full(item)) = tx.try_send(Item::Final(fin)) {
                tokio::spawn(async move {
                    let _ = tx.send(item).await;
                });
            }
            None
        }
        Poll::Ready(fin) => fin,
        Poll::Pending => {
            let tx = sink.queue.sender().clone();
            tokio::spawn(async move {
                if let Some(fin) = task.await {
                    // The receiver is gone if the client closed the
                    // stream meanwhile.
                    let _ = tx.send(Item::Final(fin)).await;
                }
            });
            None
        }
    };
    // Not taken for an answer ready at once: no queue is made for it.
    let rx = if ready.is_some() {
        None
    } else {
        sink.queue.receiver()
    };
    Started {
        ready,
        rx,
        guard,
        id,
        json_mode: shared.config.json_response,
        keepalive: shared.config.keepalive,
    }
}

/// Waits for the handler's first item and answers with it (see the
/// module docs).
async fn answer(started: Started) -> HttpResponse {
    let Started {
        ready,
        rx,
        guard,
        id,
        json_mode,
        keepalive,
    } = started;
    let (first, rx) = match (ready, rx) {
        (Some(fin), _) => (Some(Some(Item::Final(fin))), None),
        (None, None) => (None, None),
        (None, Some(mut rx)) => {
            let first = match (json_mode, keepalive) {
                (false, Some(every)) => match tokio::time::timeout(every, rx.recv()).await {
                    Ok(item) => item.map(Some),
                    Err(_) => Some(None),
                },
                _ => rx.recv().await.map(Some),
            };
            (first, Some(rx))
        }
    };
    match (first, rx) {
        (Some(Some(Item::Final(fin))), _) if json_mode || fin.status != StatusCode::OK => {
            guard.disarm();
            let response = reply::json(fin.status, fin.json);
            // Only a refusal at admission answers 503 (`Started::refused`;
            // a handler's errors are 200, 400 or 404: `reply::status_for`).
            if fin.status == StatusCode::SERVICE_UNAVAILABLE {
                reply::retry_soon(response)
            } else {
                response
            }
        }
        (Some(Some(Item::Final(fin))), _) => {
            guard.disarm();
            reply::sse(Body::from(reply::event(&fin.json)))
        }
        (Some(Some(Item::Notification(event))), Some(rx)) => {
            stream(rx, guard, event, keepalive, &id)
        }
        (Some(None), Some(rx)) => stream(rx, guard, reply::comment(), keepalive, &id),
        _ => {
            // The task ended without an answer; it cannot have been
            // cancelled (the guard is still here), so it failed.
            guard.disarm();
            reply::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                None,
                ErrorObject::internal("the request ended without an answer"),
            )
        }
    }
}

/// The state of a response stream; dropping it (the client closed the
/// stream) drops the guard, which cancels the request.
struct Flow {
    rx: mpsc::Receiver<Item>,
    guard: Option<DropGuard>,
    first: Option<Bytes>,
    keepalive: Option<Duration>,
    /// The stream's span, events and end (`done`: the final answer went
    /// out; gone before it, the client closed the stream, which cancelled
    /// the request through the guard's drop).
    tally: reply::StreamTally,
}

fn stream(
    rx: mpsc::Receiver<Item>,
    guard: DropGuard,
    first: Bytes,
    keepalive: Option<Duration>,
    id: &RequestId,
) -> HttpResponse {
    let flow = Flow {
        rx,
        guard: Some(guard),
        first: Some(first),
        keepalive,
        tally: reply::StreamTally::new(id),
    };
    let chunks = futures_util::stream::unfold(flow, |mut f| {
        let span = f.tally.span.clone();
        async move {
            if let Some(first) = f.first.take() {
                f.tally.events +=
                    u64::from(first.starts_with(b"data:") || first.starts_with(b"event:"));
                return Some((Ok::<Bytes, Infallible>(first), f));
            }
            if f.tally.done {
                return None;
            }
            let Some(item) = reply::next_or_keepalive(&mut f.rx, f.keepalive).await else {
                return Some((Ok(reply::comment()), f));
            };
            match item {
                Some(Item::Notification(event)) => {
                    f.tally.events += 1;
                    Some((Ok(event), f))
                }
                Some(Item::Final(fin)) => {
                    f.tally.done = true;
                    f.tally.events += 1;
                    if let Some(g) = f.guard.take() {
                        g.disarm();
                    }
                    Some((Ok(reply::event(&fin.json)), f))
                }
                None => None,
            }
        }
        .instrument(span)
    });
    reply::sse(Body::from_stream(chunks))
}

/// The handler's task: its final answer, `None` when the request was
/// cancelled (its response stream closed).
///
/// Not an `async fn`, as `post::post`: the arguments are the future's own
/// fields, used in place (872 → 488 bytes, and one copy of `finish` and
/// `cx` fewer a request).
#[expect(
    clippy::manual_async_fn,
    reason = "arguments used in place: an async fn copies each into a local of its future"
)]
fn run(
    shared: Arc<Shared>,
    request: Request,
    cx: RequestContext,
    mut finish: Finish,
    permit: RunPermit,
) -> impl Future<Output = Option<Final>> + Send + 'static {
    async move {
        let _permit = permit;
        let cancel = cx.cancellation().clone();
        let outcome = AssertUnwindSafe(shared.handler.handle(request, cx))
            .catch_unwind()
            .await;
        if cancel.is_cancelled() {
            tracing::debug!(request = %finish.id, "request cancelled: its response stream was closed");
            return None;
        }
        let fin = match outcome {
            Ok(outcome) => conclude(&shared, &mut finish, outcome),
            Err(_) => {
                tracing::error!(request = %finish.id, method = %finish.method, "the handler panicked");
                Final::error(
                    &finish.id,
                    ErrorObject::new(INTERNAL_ERROR, "Internal error: the handler failed"),
                )
            }
        };
        Some(fin)
    }
}

/// Turns the handler's outcome into the final answer.
fn conclude(shared: &Shared, f: &mut Finish, outcome: Outcome) -> Final {
    let server_info = shared.server_info.as_deref();
    match outcome {
        Outcome::Result(raw) => {
            let deco = Decoration {
                server_info,
                ttl_ms: shared.config.result_ttl_ms,
                scope: shared.config.result_cache_scope,
            };
            // The result is decorated straight into the response's text,
            // with room for all the splice writes (its own reserve is then
            // a no-op) and the closing brace.
            let mut json = jsonrpc::result_prefix(&f.id, result::room(raw.get(), server_info));
            match result::complete_into(&raw, &f.method, &deco, &mut json) {
                Ok(()) => {
                    json.push('}');
                    Final {
                        status: StatusCode::OK,
                        json,
                    }
                }
                Err(e) => Final::error(&f.id, ErrorObject::internal(e)),
            }
        }
        Outcome::Error(e) => Final::error(&f.id, reply::wire_error(e)),
        Outcome::InputRequired(input) => {
            // Only the methods that may ask have a binding
            // (`mrtr::input_method`).
            let Some(source) = f.binding.as_mut() else {
                tracing::error!(method = %f.method, "the handler asked for client input on a method that may not return InputRequiredResult");
                return Final::error(
                    &f.id,
                    ErrorObject::internal(format!(
                        "the handler needs client input, which {} cannot ask for (only tools/call, prompts/get and resources/read may)",
                        f.method
                    )),
                );
            };
            match mrtr::missing_capabilities(&input.requests, &f.client.capabilities) {
                Err(e) => {
                    tracing::error!(method = %f.method, error = %e, "invalid input request from the handler");
                    return Final::error(&f.id, ErrorObject::internal(e));
                }
                Ok(Some(missing)) => {
                    let names: Vec<&String> = missing
                        .as_object()
                        .map(|m| m.keys().collect())
                        .unwrap_or_default();
                    let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                    return Final::error(
                        &f.id,
                        ErrorObject::new(
                            MISSING_REQUIRED_CLIENT_CAPABILITY,
                            format!(
                                "Missing required client capability: this request needs {} ({missing}), which the request's _meta io.modelcontextprotocol/clientCapabilities does not declare",
                                names.join(", ")
                            ),
                        )
                        .with_data(&serde_json::json!({ "requiredCapabilities": missing })),
                    );
                }
                Ok(None) => {}
            }
            let round = f.round.saturating_add(1);
            if round > shared.config.max_input_rounds {
                return Final::error(
                    &f.id,
                    ErrorObject::internal(format!(
                        "the request needed client input more than {} times in a row; giving up",
                        shared.config.max_input_rounds
                    )),
                );
            }
            let token = shared.sealer.seal(
                source.binding(),
                input.state.as_deref(),
                round,
                mrtr::now_ms(),
            );
            Final::result(
                &f.id,
                &result::input_required(&input.requests, &token, server_info),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_json_is_the_serialized_response() {
        let result: Box<RawValue> =
            serde_json::from_str(r#"{"content":[{"type":"text","text":"5"}]}"#).unwrap();
        for id in [
            RequestId::Number(-7),
            RequestId::Number(0),
            RequestId::Number(i64::MIN),
            RequestId::Number(i64::MAX),
            RequestId::String("a \"quoted\"\n\u{1} id".into()),
        ] {
            let want = reply::response_json(jsonrpc::Response::result(id.clone(), result.clone()));
            assert_eq!(jsonrpc::result_json(&id, result.get()), want);
        }
    }
}
