//! JSON-RPC batches: 2025-03-26 only (`SessionRevision::batches`).
//!
//! 2025-03-26 *Transports*, "Sending Messages to the Server" 3: the body of
//! a POST may be "an array batching one or more requests and/or
//! notifications" or "an array batching one or more responses"; 4: input
//! made "solely of (any number of) JSON-RPC responses or notifications" is
//! answered 202 with no body; 5-6: input that "contains any number of
//! JSON-RPC requests" is answered with one JSON body or an SSE stream that
//! "SHOULD eventually include one JSON-RPC response per each JSON-RPC
//! request", after which "the server SHOULD close the SSE stream". The
//! element rules are JSON-RPC 2.0's (§6, "Batch"). Later revisions removed
//! batches (2025-06-18 changelog, "Major changes" 1): their sessions never
//! get here, `post` answers an array there with 400 `-32600` "batches ended
//! with 2025-03-26".
//!
//! # What a batch is answered with
//!
//! | batch | answer |
//! | --- | --- |
//! | over [`ServerConfig::max_batch_len`](super::ServerConfig::max_batch_len) elements | 400, `-32600`, nothing processed |
//! | before any session (no `MCP-Session-Id`) | 400 like any non-`initialize` POST; the message names `initialize` when the batch holds one |
//! | only notifications and responses | each processed in order, then 202 with no body |
//! | no handler request, but something to answer (`ping`, `logging/setLevel`, an invalid element) | 200, a JSON array of those responses |
//! | handler requests, SSE mode (the default) | one SSE stream: the responses already known first, then the requests' related messages and responses as they come, **each message its own event** (never a JSON array inside an event), each with an event id when ids are on; the stream ends after the last request's response |
//! | handler requests, `json_response` mode | 200, one JSON array of every response, unless a request sends a related message (or needs client input) first: then the answer becomes the SSE stream above, starting with the responses collected so far |
//! | every handler request cancelled, nothing else to answer | an SSE body that ends at once (as for a cancelled single request) |
//!
//! The batch's stream is leased like a single request's
//! (`ServerConfig::leases`, see `lease.rs`), with the ids of the batch's
//! handler requests as the lease's data: if this instance dies, a client
//! following the stream through another instance gets one `-32603` error
//! per request still unanswered, and the stream ends. In `json_response`
//! mode the lease is taken when a related message opens the stream.
//!
//! Responses are in the order they are ready (JSON-RPC 2.0: "The Response
//! objects being returned from a batch call MAY be returned in any order";
//! the client matches them by id).
//!
//! # Elements
//!
//! Elements are taken in array order. Notifications and responses are
//! processed (in order) before the answer starts; requests are started in
//! order and run concurrently, each in its own task, exactly as a single
//! request (cancellation by `notifications/cancelled`, server-to-client
//! requests on the batch's stream, a dropped connection is not a
//! cancellation).
//!
//! * An invalid element gets its own error response (`-32600`, or
//!   `-32700`), carrying the element's id when one could be read and no id
//!   otherwise; the rest of the batch is served (JSON-RPC 2.0 §6: "an
//!   Array containing one Response object" per invalid element).
//! * `initialize` gets an error response (`-32600`): 2025-03-26 *Lifecycle*,
//!   "Initialization": "The initialize request MUST NOT be part of a
//!   JSON-RPC batch". The session is not touched by it.
//! * A request whose id is already in progress in the session (earlier in
//!   this batch, or from another POST) gets a `-32600` error response.

use std::sync::Arc;

use axum::body::Body;
use http::StatusCode;
use mcp_transport_core::admission::{self, RunPermit};
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::event_id::EventId;
use mcp_transport_core::jsonrpc::{
    BatchElementError, BodyError, ErrorObject, INVALID_REQUEST, Message, Request, RequestId,
    Response,
};

use super::checks::SessionHeaders;
use super::connection;
use super::group::{Group, GroupAnswer};
use super::open::open_request_stream;
use super::outlet::Outlet;
use super::reply::{self, HttpResponse};
use super::session::Session;
use super::stream::StreamState;
use super::{Shared, post, request};

/// The text of the error for `initialize` inside a batch.
const INITIALIZE_IN_BATCH: &str = "initialize MUST NOT be part of a JSON-RPC batch (2025-03-26 Lifecycle, \"Initialization\"); send it alone";

/// Answers a POST whose body is a batch (see the module documentation).
/// `session_id` and `session` are what `post` read from the headers.
pub(crate) async fn post(
    shared: &Arc<Shared>,
    headers: &SessionHeaders<'_>,
    session_id: Option<&str>,
    session: Option<Arc<Session>>,
    items: Vec<Result<Message, BatchElementError>>,
) -> HttpResponse {
    let max = shared.config.max_batch_len.max(1);
    if items.len() > max {
        return reply::invalid(
            StatusCode::BAD_REQUEST,
            format!(
                "Invalid Request: the batch has {} elements; this server accepts at most {max} per batch (nothing in it was processed)",
                items.len()
            ),
        );
    }
    if session_id.is_none() && items.iter().any(is_initialize) {
        return reply::invalid(
            StatusCode::BAD_REQUEST,
            format!("Bad Request: {INITIALIZE_IN_BATCH}, as the only message of its POST"),
        );
    }
    let session = match post::established(shared, headers, session_id, session) {
        Ok(s) => s,
        Err(r) => return r.response(),
    };
    if !session.revision.batches() {
        // `post` parses arrays as batches only for sessions that allow them.
        return reply::body_error(&BodyError::BatchNotAllowed);
    }

    let mut answers = Vec::new();
    let mut runs = Vec::new();
    for item in items {
        match item {
            Err(e) => answers.push(e.to_response()),
            Ok(Message::Request(req)) if req.method == "initialize" => {
                answers.push(Response::error(
                    Some(req.id),
                    ErrorObject::new(
                        INVALID_REQUEST,
                        format!("Invalid Request: {INITIALIZE_IN_BATCH}"),
                    ),
                ));
            }
            Ok(Message::Request(req)) => match post::own_answer(&session, req) {
                Ok(response) => answers.push(response),
                Err(req) => {
                    // Each element is admitted on its own; one over the
                    // server's bounds gets its error in the answer.
                    let permit = match shared.admission.try_admit(admission::weight(&req)) {
                        Ok(p) => p,
                        Err(why) => {
                            answers.push(Response::error(Some(req.id), why.to_error()));
                            continue;
                        }
                    };
                    let cancel = CancellationToken::new();
                    if session.start_request(&req.id, cancel.clone()) {
                        runs.push((req, cancel, permit));
                    } else {
                        let message = format!(
                            "Invalid Request: request id {} is already used by a request in progress in this session",
                            req.id
                        );
                        answers.push(Response::error(
                            Some(req.id),
                            ErrorObject::new(INVALID_REQUEST, message),
                        ));
                    }
                }
            },
            Ok(Message::Notification(n)) => post::on_notification(shared, &session, n).await,
            Ok(Message::Response(r)) => post::on_response(shared, &session, r).await,
        }
    }

    if runs.is_empty() {
        // JSON-RPC 2.0 §6: with nothing to answer, "the server MUST NOT
        // return an empty Array and should return nothing at all".
        return if answers.is_empty() {
            reply::accepted()
        } else {
            reply::json_batch(&answers)
        };
    }
    if shared.config.json_response {
        let (group, answer) = Group::collecting(shared, &session, ids_of(&runs), answers);
        start(shared, &session, &group, runs);
        return match answer.await {
            Ok(GroupAnswer::Json(responses)) if !responses.is_empty() => {
                reply::json_batch(&responses)
            }
            Ok(GroupAnswer::Stream(state, priming)) => sse(shared, &session, state, priming),
            // Every request was cancelled and nothing else is to be answered.
            Ok(GroupAnswer::Json(_)) | Err(_) => reply::sse(Body::empty()),
        };
    }
    let (state, priming) = match open_request_stream(shared, &session).await {
        Ok(s) => s,
        Err(e) => {
            for (req, ..) in &runs {
                session.end_request(&req.id);
            }
            return reply::internal(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("cannot open a stream for this batch: {e}"),
            );
        }
    };
    let ids = ids_of(&runs);
    super::lease::hold_stream(shared, &session, &state, &ids).await;
    let group = Group::streaming(shared, &session, ids, state.clone());
    for response in answers {
        group.append(&state, response).await;
    }
    let response = sse(shared, &session, state, priming);
    start(shared, &session, &group, runs);
    response
}

/// A request of the batch to run: registered with its token, admitted.
type Run = (Request, CancellationToken, RunPermit);

/// The ids of the requests a batch runs.
fn ids_of(runs: &[Run]) -> Vec<RequestId> {
    runs.iter().map(|(req, ..)| req.id.clone()).collect()
}

fn is_initialize(item: &Result<Message, BatchElementError>) -> bool {
    matches!(item, Ok(Message::Request(r)) if r.method == "initialize")
}

/// Runs each request of the batch in its own task, its messages going to
/// the group.
fn start(shared: &Arc<Shared>, session: &Arc<Session>, group: &Arc<Group>, runs: Vec<Run>) {
    for (req, cancel, permit) in runs {
        let outlet = Outlet::in_group(shared, session, cancel.clone(), group.clone());
        request::spawn(shared, session, req, cancel, outlet, permit);
    }
}

/// The SSE answer: a new connection at the start of the batch's stream.
fn sse(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    state: Arc<StreamState>,
    priming: EventId,
) -> HttpResponse {
    let generation = state.attach(0);
    // Its requests are spawned, not polled first: nothing to prefetch.
    connection::respond_new(shared, session, state, generation, priming, None)
}
