//! Running one client request through the handler.
//!
//! Each request runs in its own spawned task (polled once in the POST
//! first: a handler that answers at once needs no task, see `start`), so a
//! dropped HTTP connection never cancels it (*Transports*: "Disconnection SHOULD NOT be interpreted
//! as the client cancelling its request"); only `notifications/cancelled`
//! (or the end of the session) fires its cancellation token. Once cancelled,
//! nothing more is sent for the request, not even a response
//! (*Cancellation*: receivers SHOULD "Not send a response for the cancelled
//! request"); the handler is still polled to completion so it can clean up.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use http::StatusCode;
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::handler::{Outcome, RequestContext};
use mcp_transport_core::jsonrpc::{ErrorObject, INTERNAL_ERROR, Request, RequestId, Response};

use tracing::Instrument;

use super::Shared;
use super::connection;
use super::input::{self, AskError};
use super::open::open_request_stream;
use super::outlet::{Answer, Outlet};
use super::reply::{self, HttpResponse};
use super::session::{BusyGuard, Session};

/// Starts `request` and answers the POST: an SSE stream, or in
/// `json_response` mode JSON unless the handler streams first.
pub(crate) async fn serve(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    request: Request,
) -> HttpResponse {
    let cancel = CancellationToken::new();
    if !session.start_request(&request.id, cancel.clone()) {
        return reply::invalid(
            StatusCode::BAD_REQUEST,
            format!(
                "Invalid Request: request id {} is already used by a request in progress in this session",
                request.id
            ),
        );
    }
    if !shared.config.json_response {
        let (state, priming) = match open_request_stream(shared, session).await {
            Ok(s) => s,
            Err(e) => {
                session.end_request(&request.id);
                return reply::internal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("cannot open a stream for this request: {e}"),
                );
            }
        };
        super::lease::hold_stream(shared, session, &state, std::slice::from_ref(&request.id)).await;
        let generation = state.attach(0);
        let outlet = Outlet::with_stream(shared, session, cancel.clone(), state.clone());
        start(shared, session, request, cancel, outlet).await;
        return connection::respond_new(shared, session, state, generation, priming);
    }
    let (outlet, answer) = Outlet::json(shared, session, cancel.clone(), request.id.clone());
    start(shared, session, request, cancel, outlet).await;
    match answer.await {
        Ok(Answer::Json(response)) => reply::json_response(response),
        Ok(Answer::Stream(state, priming)) => {
            let generation = state.attach(0);
            connection::respond_new(shared, session, state, generation, priming)
        }
        // Cancelled before anything was sent: an SSE stream that ends at
        // once, without a response.
        Ok(Answer::Nothing) | Err(_) => reply::sse(axum::body::Body::empty()),
    }
}

tokio::task_local! {
    /// The HTTP request whose POST is being handled (set around it by
    /// `LegacyServer::handle`), for [`RequestContext::http`].
    pub(crate) static HTTP_PARTS: Arc<http::request::Parts>;
}

/// The POST's parts as [`RequestContext::http`] keeps them while the
/// request runs: a copy whose header values all share one buffer. A value
/// parsed by hyper is a slice of the connection's read buffer (kilobytes,
/// kept alive by any slice), one built by hand a block of its own; a
/// request pending between SEP-1699 polls would hold either for its whole
/// run. The map's entries and the extensions are cloned as they are.
pub(crate) fn kept_parts(parts: &http::request::Parts) -> Arc<http::request::Parts> {
    let mut kept = parts.clone();
    let size = kept.headers.values().map(http::HeaderValue::len).sum();
    let mut all = bytes::BytesMut::with_capacity(size);
    for v in kept.headers.values() {
        all.extend_from_slice(v.as_bytes());
    }
    let all = all.freeze();
    let mut at = 0;
    for v in kept.headers.values_mut() {
        let end = at + v.len();
        // Valid as the value it copies; kept as it is otherwise.
        if let Ok(mut shared) = http::HeaderValue::from_maybe_shared(all.slice(at..end)) {
            shared.set_sensitive(v.is_sensitive());
            *v = shared;
        }
        at = end;
    }
    Arc::new(kept)
}

/// Runs `request` as [`spawn`] does, but polls it once here first: a
/// handler that answers at once (most do) has its answer in the stream
/// before the response is built (the priming event, the answer and the end
/// of the stream leave in one write; a JSON answer is there without a
/// wake-up from another task), and no task is spawned. One that
/// does not is spawned as it is, its first step done; a connection dropped
/// later does not reach it (the first poll happens between two awaits of
/// the POST, never across one).
async fn start(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    request: Request,
    cancel: CancellationToken,
    outlet: Arc<Outlet>,
) {
    let mut task = Box::pin(task(shared, session, request, cancel, outlet));
    if futures_util::poll!(task.as_mut()).is_pending() {
        tokio::spawn(task);
    }
}

/// Runs `request` in its own task, its messages going to `outlet`. The
/// request must already be registered (`Session::start_request`) with
/// `cancel`. The handler sees the POST's HTTP parts ([`HTTP_PARTS`]).
pub(crate) fn spawn(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    request: Request,
    cancel: CancellationToken,
    outlet: Arc<Outlet>,
) {
    tokio::spawn(task(shared, session, request, cancel, outlet));
}

/// The request's task: [`run`] with the session's busy guard and the
/// POST's HTTP parts, in the current span.
fn task(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    request: Request,
    cancel: CancellationToken,
    outlet: Arc<Outlet>,
) -> impl Future<Output = ()> + Send + 'static {
    let busy = session.busy(shared);
    let http = HTTP_PARTS.try_with(Arc::clone).ok();
    run(
        shared.clone(),
        session.clone(),
        request,
        cancel,
        outlet,
        busy,
        http,
    )
    .instrument(tracing::Span::current())
}

async fn run(
    shared: Arc<Shared>,
    session: Arc<Session>,
    request: Request,
    cancel: CancellationToken,
    outlet: Arc<Outlet>,
    _busy: BusyGuard,
    http: Option<Arc<http::request::Parts>>,
) {
    let id = request.id.clone();
    let mut cx = RequestContext::new(
        session.version.clone(),
        id.clone(),
        session.client(),
        cancel.clone(),
        outlet.clone(),
    );
    cx.http = http;
    cx.progress_token = request
        .meta()
        .and_then(|m| m.get("progressToken").cloned())
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64());
    let mut rounds = 0u32;
    loop {
        let fut =
            AssertUnwindSafe(session.handler.handle(request.clone(), cx.clone())).catch_unwind();
        tokio::pin!(fut);
        let outcome = tokio::select! {
            biased;
            o = &mut fut => Some(o),
            () = cancel.cancelled() => None,
        };
        let Some(outcome) = outcome else {
            // Boxed, as `input::ask` below: rare paths with large futures
            // would otherwise size every request's task (it is sized for
            // its largest state) while it waits for its handler.
            Box::pin(outlet.abandon()).await;
            // Let the handler see `cx.cancelled()` and wind down.
            let _ = fut.await;
            break;
        };
        let outcome = match outcome {
            Ok(o) => o,
            Err(_) => {
                tracing::error!(session = %session.id, request = %id, "handler panicked");
                Outcome::Error(ErrorObject::new(
                    INTERNAL_ERROR,
                    "Internal error: the handler failed",
                ))
            }
        };
        // Each ending is boxed: `Outlet::respond` awaits the event store,
        // the stream's end and its lease, and a task is sized for its
        // largest state, which would otherwise be every request's size
        // while it waits for its handler (SEP-1699 polling keeps many
        // waiting).
        match outcome {
            Outcome::Result(result) => {
                Box::pin(outlet.respond(Response::result(id.clone(), result))).await;
                break;
            }
            Outcome::Error(error) => {
                Box::pin(outlet.respond(Response::error(Some(id.clone()), error))).await;
                break;
            }
            Outcome::InputRequired(input) => {
                rounds += 1;
                if rounds > shared.config.max_input_rounds {
                    let e = ErrorObject::new(
                        INTERNAL_ERROR,
                        format!(
                            "the handler asked for client input more than {} times",
                            shared.config.max_input_rounds
                        ),
                    );
                    Box::pin(outlet.respond(Response::error(Some(id.clone()), e))).await;
                    break;
                }
                let state = input.state.clone();
                match Box::pin(input::ask(&shared, &session, &outlet, &cancel, input)).await {
                    Ok(answers) => {
                        cx.input_responses = Some(answers);
                        cx.request_state = state;
                    }
                    Err(AskError::Cancelled) => {
                        Box::pin(outlet.abandon()).await;
                        break;
                    }
                    Err(AskError::Failed(e)) => {
                        Box::pin(outlet.respond(Response::error(Some(id.clone()), e))).await;
                        break;
                    }
                    Err(AskError::NotInRevision(reason)) => {
                        let response = not_in_revision(&request.method, id.clone(), reason);
                        Box::pin(outlet.respond(response)).await;
                        break;
                    }
                }
            }
        }
    }
    session.end_request(&id);
}

/// The answer to a request whose handler needs a server-to-client method
/// the session's revision lacks: a tool execution error for `tools/call`
/// (*Tools*, "Error Handling"), `-32021` naming the reason otherwise.
fn not_in_revision(method: &str, id: RequestId, reason: String) -> Response {
    if method == "tools/call" {
        let result = serde_json::json!({
            "content": [{ "type": "text", "text": reason }],
            "isError": true,
        });
        if let Ok(raw) = mcp_transport_core::jsonrpc::to_raw(&result) {
            return Response::result(id, raw);
        }
    }
    Response::error(
        Some(id),
        ErrorObject::new(
            mcp_transport_core::jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY,
            reason,
        ),
    )
}
