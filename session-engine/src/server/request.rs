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

use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::FutureExt;
use futures_util::future::CatchUnwind;
use http::StatusCode;
use mcp_transport_core::admission::{self, RunPermit};
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::event_id::EventId;
use mcp_transport_core::event_log::Replay;
use mcp_transport_core::handler::{Outcome, RequestContext};
use mcp_transport_core::jsonrpc::{
    ErrorObject, INTERNAL_ERROR, Message, Request, RequestId, Response,
};
use mcp_transport_core::request_head::RequestHead;

use serde_json::value::RawValue;
use tracing::Instrument;

use super::Shared;
use super::connection;
use super::input::{self, AskError};
use super::open::open_answered_stream;
use super::outlet::{Answer, Outlet};
use super::reply::{self, HttpResponse};
use super::session::Session;
use super::stream::StreamState;

/// The events of a stream whose request answered in its first poll
/// (`start`), read now, in the POST's task: the stream's first connection
/// then writes them without reading the store. Read later, when hyper
/// first polls the response body, they may be gone: a session over its
/// stream cap evicts the stream that finished longest ago, answered or
/// not, and under load (64 connections on one session,
/// `bench --workloads legacy-sse-shared`) a few hundred streams opened
/// in between did so, losing about one answer in 20,000 (docs/PERFORMANCE.md,
/// session 10). The answer alone is not read but taken from the stream's
/// state, which kept it (`StreamState::take_final_after`). `None` for a
/// stream still running, or when the read fails (the connection reads the
/// store itself, as before).
async fn prefetch_finished(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    state: &StreamState,
) -> Option<Replay> {
    if !state.live().finished {
        return None;
    }
    // The answer alone, kept by the stream as it was appended: no read.
    if let Some(replay) = state.take_final_after(0) {
        return Some(replay);
    }
    let after = EventId::new(session.tag, state.id, 0);
    shared
        .config
        .event_store
        .replay_after(&session.tag, &after)
        .await
        .ok()
}

/// Starts `request` and answers the POST: an SSE stream, or in
/// `json_response` mode JSON unless the handler streams first.
pub(crate) async fn serve(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    request: Request,
) -> HttpResponse {
    // Admitted first: a request over the server's bounds is refused
    // before it is registered or anything of it runs.
    let permit = match shared.admission.try_admit(admission::weight(&request)) {
        Ok(p) => p,
        Err(why) => return reply::not_admitted(Some(request.id), &why),
    };
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
    let json_mode = shared.config.json_response;
    let (outlet, answer) = Outlet::json(shared, session, cancel.clone(), request.id.clone());
    start(shared, session, request, cancel, outlet.clone(), permit).await;
    if !json_mode {
        return answer_with_sse(shared, session, &outlet, answer).await;
    }
    match answer.await {
        Ok(Answer::Json(response)) => reply::json_response(response),
        Ok(Answer::Stream(state, priming, generation)) => {
            connection::respond_new(shared, session, state, generation, priming, None)
        }
        // Cancelled before anything was sent: an SSE stream that ends at
        // once, without a response.
        Ok(Answer::Nothing) | Err(_) => reply::sse(axum::body::Body::empty()),
    }
}

/// The SSE answer (the default mode) of a request polled once
/// (`start`), its outlet opening its stream late:
///
/// * Answered in that poll, with nothing before the answer (most
///   requests): the stream is opened with its answer in it and ended, in
///   one call to the event store (`open::open_answered_stream`: one round
///   trip with Redis where opening first took four — open, lease, answer,
///   lease release; docs/PERFORMANCE.md, session 31), and the priming
///   event, the answer and the end go out as one body.
/// * A related message came first: it opened the stream, which answers.
/// * Still running: the stream opens now, so that the priming event goes
///   out at once (SEP-1699: "When a server starts an SSE stream, it MUST
///   immediately send an SSE event consisting of an id and an empty data
///   string"), and the rest follows on it.
///
/// A close the handler asked for before the stream opened
/// (`close_sse_stream`) is asked of the stream as it opens. Cancelled
/// before anything was sent: an SSE stream that ends at once.
async fn answer_with_sse(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    outlet: &Outlet,
    mut answer: tokio::sync::oneshot::Receiver<Answer>,
) -> HttpResponse {
    let first = match answer.try_recv() {
        Err(tokio::sync::oneshot::error::TryRecvError::Empty) => {
            outlet.open_now().await;
            answer.await.ok()
        }
        other => other.ok(),
    };
    match first {
        Some(Answer::Json(response)) => {
            let json = Bytes::from(Message::Response(response).to_json());
            match open_answered_stream(shared, session, json.clone()).await {
                Ok((state, priming)) => {
                    if outlet.close_pending() {
                        state.request_close();
                    }
                    let generation = state.attach(0);
                    let prefetched = state.take_final_after(0);
                    connection::respond_new(shared, session, state, generation, priming, prefetched)
                }
                Err(e) => {
                    // The event store is out of reach: the answer is not
                    // lost, it goes back as JSON (which the client accepts
                    // as well), with no stream to resume.
                    tracing::warn!(session = %session.id, error = %e, "cannot open a stream for an answer; answering with JSON");
                    let text = String::from_utf8_lossy(&json).into_owned();
                    reply::json(StatusCode::OK, text)
                }
            }
        }
        Some(Answer::Stream(state, priming, generation)) => {
            let prefetched = prefetch_finished(shared, session, &state).await;
            connection::respond_new(shared, session, state, generation, priming, prefetched)
        }
        Some(Answer::Nothing) | None => reply::sse(axum::body::Body::empty()),
    }
}

tokio::task_local! {
    /// The HTTP request whose POST is being handled (set around it by
    /// `LegacyServer::handle`), for [`RequestContext::http`].
    pub(crate) static HTTP_PARTS: Arc<RequestHead>;
}

/// What the handler sees of the POST ([`RequestContext::http`]), kept for
/// as long as the request runs — between SEP-1699 polls too, with no
/// connection — so compactly: the target and headers in one buffer of its
/// own (a value parsed by hyper is a slice of the connection's read
/// buffer, which a pending request would otherwise keep alive), the
/// extensions cloned without axum's `OriginalUri` when that is the target
/// itself (a router inserts it into every request: a `Uri` and its shared
/// bytes, ~110 bytes). That `OriginalUri` is taken out of `parts` first
/// (it says nothing `parts.uri` does not), so it is not cloned either.
pub(crate) fn kept_head(parts: &mut http::request::Parts) -> RequestHead {
    if parts
        .extensions
        .get::<axum::extract::OriginalUri>()
        .is_some_and(|o| o.0 == parts.uri)
    {
        parts.extensions.remove::<axum::extract::OriginalUri>();
    }
    RequestHead::from_parts(parts)
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
    permit: RunPermit,
) {
    let mut task = Box::pin(task(shared, session, request, cancel, outlet, permit));
    if futures_util::poll!(task.as_mut()).is_pending() {
        tokio::spawn(task);
    }
}

/// Runs `request` in its own task, its messages going to `outlet`. The
/// request must already be registered (`Session::start_request`) with
/// `cancel`. The handler sees the POST's HTTP parts ([`HTTP_PARTS`]).
///
/// A pending request (for minutes under SEP-1699 polling) is this task
/// and the handler's future, so the task holds as little as it can while
/// the handler runs: the request and the handles it needs, no
/// [`RequestContext`] (each round's context is moved into the handler's
/// future), and no room for what comes after the handler answers (input
/// rounds, the response, the stream's end: [`conclude`], boxed). A task is
/// sized for its largest state. It is an `async` block over what it owns,
/// not an `async fn`: an `async fn` keeps room for its arguments besides
/// the locals they move into.
pub(crate) fn spawn(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    request: Request,
    cancel: CancellationToken,
    outlet: Arc<Outlet>,
    permit: RunPermit,
) {
    tokio::spawn(task(shared, session, request, cancel, outlet, permit));
}

/// The request's task (laid out as [`spawn`] describes): its first round,
/// then [`conclude`], with the session's busy guard, the request's place
/// in the server's admission (given back when the task ends) and the
/// POST's HTTP head, in the current span.
fn task(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    request: Request,
    cancel: CancellationToken,
    outlet: Arc<Outlet>,
    permit: RunPermit,
) -> impl Future<Output = ()> + Send + 'static {
    let busy = session.busy(shared);
    let http = HTTP_PARTS.try_with(Arc::clone).ok();
    let (shared, session) = (shared.clone(), session.clone());
    let task = async move {
        let cx = context(&shared, &session, &request, &cancel, &outlet, &http, None);
        let first = round(&session, &request, &cancel, cx).await;
        Box::pin(conclude(
            &shared, &session, &request, &cancel, &outlet, &http, first,
        ))
        .await;
        session.end_request(&request.id);
        drop(busy);
        drop(permit);
    };
    task.instrument(tracing::Span::current())
}

/// The handler's future of one round, with a panic caught.
type Running<'a> =
    CatchUnwind<AssertUnwindSafe<Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>>>;

/// What a round ended with: the handler's outcome (`Err`: it panicked),
/// or `None` when the request was cancelled first.
type RoundEnd = Option<Result<Outcome, Box<dyn std::any::Any + Send>>>;

/// One round of the handler with `cx`: runs until it answers or the
/// request is cancelled, and gives back how it ended and the handler's
/// future (polled on after a cancellation, so the handler can wind down).
/// The handler's future is made before the returned one, so `cx` is not
/// kept in it.
fn round<'a>(
    session: &'a Session,
    request: &Request,
    cancel: &'a CancellationToken,
    cx: RequestContext,
) -> impl Future<Output = (RoundEnd, Running<'a>)> + Send + 'a {
    let mut fut = AssertUnwindSafe(session.handler.handle(request.clone(), cx)).catch_unwind();
    async move {
        let end = tokio::select! {
            biased;
            o = &mut fut => Some(o),
            () = cancel.cancelled() => None,
        };
        (end, fut)
    }
}

/// After the first round: the response, or the input rounds and then the
/// response, or the abandoned stream of a cancelled request.
async fn conclude<'a>(
    shared: &Arc<Shared>,
    session: &'a Arc<Session>,
    request: &Request,
    cancel: &'a CancellationToken,
    outlet: &Arc<Outlet>,
    http: &Option<Arc<RequestHead>>,
    first: (RoundEnd, Running<'a>),
) {
    let id = &request.id;
    let (mut end, mut fut) = first;
    let mut rounds = 0u32;
    loop {
        let Some(outcome) = end else {
            outlet.abandon().await;
            // Let the handler see `cx.cancelled()` and wind down.
            let _ = fut.await;
            return;
        };
        let outcome = outcome.unwrap_or_else(|_| {
            tracing::error!(session = %session.id, request = %id, "handler panicked");
            Outcome::Error(ErrorObject::new(
                INTERNAL_ERROR,
                "Internal error: the handler failed",
            ))
        });
        let input = match outcome {
            Outcome::Result(result) => {
                return outlet.respond(Response::result(id.clone(), result)).await;
            }
            Outcome::Error(error) => {
                return outlet
                    .respond(Response::error(Some(id.clone()), error))
                    .await;
            }
            Outcome::InputRequired(input) => input,
        };
        rounds += 1;
        if rounds > shared.config.max_input_rounds {
            let e = ErrorObject::new(
                INTERNAL_ERROR,
                format!(
                    "the handler asked for client input more than {} times",
                    shared.config.max_input_rounds
                ),
            );
            return outlet.respond(Response::error(Some(id.clone()), e)).await;
        }
        let state = input.state.clone();
        let answers = match input::ask(shared, session, outlet, cancel, input).await {
            Ok(answers) => answers,
            Err(AskError::Cancelled) => return outlet.abandon().await,
            Err(AskError::Failed(e)) => {
                return outlet.respond(Response::error(Some(id.clone()), e)).await;
            }
            Err(AskError::NotInRevision(reason)) => {
                let response = not_in_revision(&request.method, id.clone(), reason);
                return outlet.respond(response).await;
            }
        };
        let cx = context(
            shared,
            session,
            request,
            cancel,
            outlet,
            http,
            Some((answers, state)),
        );
        (end, fut) = round(session, request, cancel, cx).await;
    }
}

/// The answers of an input round and the state the handler gave with its
/// request for them.
type Answered = (BTreeMap<String, Box<RawValue>>, Option<String>);

/// The handler's context for one round of `request`.
fn context(
    shared: &Shared,
    session: &Session,
    request: &Request,
    cancel: &CancellationToken,
    outlet: &Arc<Outlet>,
    http: &Option<Arc<RequestHead>>,
    answered: Option<Answered>,
) -> RequestContext {
    let mut cx = RequestContext::new(
        session.version.clone(),
        request.id.clone(),
        shared.sessions.described(session),
        cancel.clone(),
        outlet.clone(),
    );
    cx.http = http.clone();
    cx.progress_token = progress_token(request);
    if let Some((answers, state)) = answered {
        cx.set_input(Some(answers), state);
    }
    cx
}

/// `_meta.progressToken` of `request` when it is a string or an integer.
/// The params are parsed for it only when their text may name `_meta`:
/// it appears in it, or an escape does (a key may be spelled
/// `"\u005fmeta"`). Most requests carry none, and the parse would scan
/// all of them.
fn progress_token(request: &Request) -> Option<serde_json::Value> {
    let text = request.params.as_deref()?.get();
    if !text.contains("_meta") && !text.contains('\\') {
        return None;
    }
    request
        .meta()
        .and_then(|mut m| m.remove("progressToken"))
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::extract::OriginalUri;

    #[test]
    fn the_kept_head_drops_original_uri_only_when_it_is_the_target() {
        #[derive(Clone, Debug, PartialEq)]
        struct Principal(&'static str);
        let (mut parts, ()) = http::Request::post("/mcp")
            .header("mcp-session-id", "s1")
            .body(())
            .unwrap()
            .into_parts();
        parts.extensions.insert(Principal("ada"));
        parts.extensions.insert(OriginalUri(parts.uri.clone()));
        let head = kept_head(&mut parts);
        assert!(head.extensions().get::<OriginalUri>().is_none());
        assert_eq!(
            head.extensions().get::<Principal>(),
            Some(&Principal("ada"))
        );
        assert_eq!(head.header_str("mcp-session-id"), Some("s1"));
        // Nested under a prefix: the original says more than the target.
        parts
            .extensions
            .insert(OriginalUri(http::Uri::from_static("/api/mcp")));
        let head = kept_head(&mut parts);
        assert_eq!(
            head.extensions().get::<OriginalUri>().map(|o| o.0.path()),
            Some("/api/mcp")
        );
    }

    #[test]
    fn the_progress_token_is_read_only_where_meta_may_be() {
        let token = |params: &str| {
            progress_token(&Request {
                id: RequestId::Number(1),
                method: "tools/call".into(),
                params: Some(RawValue::from_string(params.to_owned()).unwrap()),
            })
        };
        assert_eq!(
            token(r#"{"name":"add","_meta":{"progressToken":"t"}}"#),
            Some(serde_json::json!("t"))
        );
        // An escaped key names `_meta` too.
        assert_eq!(
            token(r#"{"\u005fmeta":{"progressToken":7}}"#),
            Some(serde_json::json!(7))
        );
        // Any integer: negative, or beyond `i64` (*Progress*: a token is
        // a string or an integer).
        assert_eq!(
            token(r#"{"_meta":{"progressToken":-5}}"#),
            Some(serde_json::json!(-5))
        );
        assert_eq!(
            token(r#"{"_meta":{"progressToken":18446744073709551615}}"#),
            Some(serde_json::json!(u64::MAX))
        );
        assert_eq!(token(r#"{"name":"add","arguments":{"a":1}}"#), None);
        assert_eq!(token(r#"{"name":"_meta"}"#), None);
        assert_eq!(token(r#"{"_meta":{"progressToken":1.5}}"#), None);
    }
}
