//! `POST`: one JSON-RPC message per request (*Transports*, "Sending
//! Messages to the Server").
//!
//! Checks, in order (each failure is answered with its status and a
//! JSON-RPC error body without id, and the server keeps serving):
//!
//! | check | failure |
//! | --- | --- |
//! | `Accept` lists `application/json` and `text/event-stream` (2.) — `*/*` counts as both, `application/*` as JSON, `text/*` as SSE, `q=0` as absent | 406 |
//! | `Content-Type: application/json` (parameters allowed) | 415 |
//! | body at most `max_body_bytes` | 413 |
//! | the body is JSON | 400, `-32700` |
//! | the body is one conforming message (3.; batches: see below) | 400, `-32600` |
//! | `initialize` carries no `MCP-Session-Id` | 400 |
//! | other messages carry `MCP-Session-Id` ("Session Management" 2.) | 400 |
//! | that session exists | 404 |
//! | `MCP-Protocol-Version`, when sent, is well-formed and served | 400 |
//!
//! Then a notification or response is accepted with 202 and no body (4.);
//! a request is answered with JSON or an SSE stream (5., 6.).
//!
//! Batches (2025-03-26 only, `SessionRevision::batches`) go through the same
//! checks (the session ones in [`established`]) and are then answered by
//! the `batch` module, which dispatches element by element with
//! [`own_answer`], [`on_notification`] and [`on_response`] and runs handler
//! requests like single ones. On sessions of later revisions an array is
//! 400 `-32600` "batches ended with 2025-03-26".

use std::sync::Arc;

use axum::body::Body;
use http::StatusCode;
use http::request::Parts;
use mcp_http_edge::faults::Fault;
use mcp_http_edge::server::read_body_unless_parsed;
use mcp_transport_core::handler::LogLevel;
use mcp_transport_core::jsonrpc::{
    self, ErrorObject, Message, Notification, Parsed, Request, Response,
};

use super::reply::{self, HttpResponse, Reject};
use super::session::Session;
use super::{Shared, batch, checks, cluster, initialize, request};

/// Handles one POST; `parsed` is its body's message when the dispatcher in
/// front already parsed it (`mcp_negotiate`), else the body is parsed here.
///
/// Not an `async fn`: its arguments are the future's own fields, used in
/// place (an `async fn` copies each into a local of its own).
#[expect(
    clippy::manual_async_fn,
    reason = "arguments used in place: an async fn copies each into a local of its future"
)]
pub(crate) fn post(
    shared: &Arc<Shared>,
    parts: Parts,
    parsed: Option<Parsed>,
    body: Body,
) -> impl Future<Output = HttpResponse> + Send + '_ {
    async move {
        if let Err(r) = checks::check_post_media(&parts.headers) {
            return r.response();
        }
        // A body whose message the dispatcher parsed is held to this
        // engine's limit, not read again.
        let limit = shared.config.http.max_body_bytes;
        let bytes =
            match read_body_unless_parsed(body, &parts.headers, limit, parsed.as_ref()).await {
                Ok(b) => b,
                Err(r) => return r.response(),
            };
        let session_headers = checks::SessionHeaders::of(&parts.headers);
        let session_id = match session_headers.session_id() {
            Ok(id) => id,
            Err(r) => return r.response(),
        };
        let session = match session_id {
            Some(id) => match shared.lookup_for(id, &parts).await {
                Ok(s) => s,
                Err(r) => return r.response(),
            },
            None => None,
        };
        // The session's revision decides whether a batch is legal; before a
        // session exists, any served revision that allows them.
        let batches = match &session {
            Some(s) => s.revision.batches(),
            None => shared.config.served_revisions().iter().any(|r| r.batches()),
        };
        let message = match parsed.map_or_else(
            || jsonrpc::parse_body(&bytes, batches),
            |p| Ok(jsonrpc::Body::Single(p.into_message())),
        ) {
            Ok(jsonrpc::Body::Single(m)) => m,
            Ok(jsonrpc::Body::Batch(items)) => {
                return batch::post(shared, &session_headers, session_id, session, items).await;
            }
            Err(e) => return reply::body_error(&e),
        };

        if let Message::Request(req) = &message
            && req.method == "initialize"
        {
            if session_id.is_some() {
                return reply::invalid(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: initialize must not carry an MCP-Session-Id header (it starts a new session)",
                );
            }
            let Message::Request(req) = message else {
                unreachable!("checked above")
            };
            return initialize::initialize(shared, req, shared.principal_of(&parts)).await;
        }
        let session = match established(shared, &session_headers, session_id, session) {
            Ok(s) => s,
            Err(r) => return r.response(),
        };
        match message {
            Message::Request(req) => on_request(shared, &session, req).await,
            Message::Notification(n) => {
                on_notification(shared, &session, n).await;
                reply::accepted()
            }
            Message::Response(r) => {
                on_response(shared, &session, r).await;
                reply::accepted()
            }
        }
    }
}

/// The session a (non-`initialize`) POST belongs to: 400 without
/// `MCP-Session-Id`, 404 for a session that does not exist (any more), 400
/// for a bad `MCP-Protocol-Version`; the session is touched.
pub(crate) fn established(
    shared: &Shared,
    headers: &checks::SessionHeaders<'_>,
    session_id: Option<&str>,
    session: Option<Arc<Session>>,
) -> Result<Arc<Session>, Reject> {
    let session = match (session_id, session) {
        (None, _) => {
            return Err(Reject::invalid(
                StatusCode::BAD_REQUEST,
                "Bad Request: the MCP-Session-Id header is required (send initialize first)",
            ));
        }
        (Some(id), None) => return Err(not_found(shared, id)),
        (Some(_), Some(s)) => s,
    };
    headers.check_protocol_version(&session, &shared.config)?;
    session.touch(shared.now_ms());
    Ok(session)
}

/// 404: the session does not exist (any more). "When a client receives HTTP
/// 404 in response to a request containing an MCP-Session-Id, it MUST start
/// a new session" ("Session Management" 4).
pub(crate) fn not_found(shared: &Shared, id: &str) -> Reject {
    let status = if shared.config.http.faults.has(Fault::GoneSession400) {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::NOT_FOUND
    };
    Reject::invalid(
        status,
        format!("Not Found: session {id} does not exist or has ended; send initialize again"),
    )
}

/// One request of the session: the transport answers `ping` and
/// `logging/setLevel` itself (as JSON); everything else goes to the handler.
pub(crate) async fn on_request(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    req: Request,
) -> HttpResponse {
    match own_answer(session, req) {
        Ok(response) => reply::json_response(response),
        Err(req) => request::serve(shared, session, req).await,
    }
}

/// The transport's own answer to `ping` and `logging/setLevel`; any other
/// request is given back, for the handler.
pub(crate) fn own_answer(session: &Session, req: Request) -> Result<Response, Request> {
    Ok(match req.method.as_str() {
        "ping" => Response::result(req.id, empty_object()),
        "logging/setLevel" => {
            #[derive(serde::Deserialize)]
            struct SetLevel {
                level: LogLevel,
            }
            let parsed = req
                .params
                .as_deref()
                .ok_or_else(|| "logging/setLevel needs params {\"level\": ...}".to_owned())
                .and_then(|p| serde_json::from_str::<SetLevel>(p.get()).map_err(|e| e.to_string()));
            match parsed {
                Ok(p) => {
                    session.set_log_level(p.level);
                    Response::result(req.id, empty_object())
                }
                Err(e) => Response::error(Some(req.id), ErrorObject::invalid_params(e)),
            }
        }
        _ => return Err(req),
    })
}

fn empty_object() -> Box<serde_json::value::RawValue> {
    serde_json::value::RawValue::from_string("{}".to_owned())
        .unwrap_or_else(|_| unreachable!("{{}} is valid JSON"))
}

/// One notification of the session. `notifications/initialized` and
/// `notifications/cancelled` are the transport's; others go to the handler.
/// A cancel for a request not running here goes to the other instances
/// (`cluster`), one of which may run it.
pub(crate) async fn on_notification(shared: &Shared, session: &Arc<Session>, n: Notification) {
    match n.method.as_str() {
        "notifications/initialized" => {}
        "notifications/cancelled" => {
            // *Cancellation*, "Error Handling": invalid cancellation
            // notifications (unknown ids, malformed) SHOULD be ignored.
            match cluster::cancelled_request(&n) {
                Some(request) => {
                    let found = session.cancel_request(&request);
                    tracing::debug!(
                        session = %session.id,
                        request = %request,
                        found,
                        "notifications/cancelled"
                    );
                    if !found {
                        cluster::publish(shared, session, &Message::Notification(n)).await;
                    }
                }
                None => {
                    tracing::debug!(session = %session.id, "malformed notifications/cancelled ignored")
                }
            }
        }
        _ => session.handler.notification(n).await,
    }
}

/// A client's response to a server-to-client request: routed by id to the
/// waiting request. A response nobody waits for (unknown id, or one that
/// arrives after its request timed out or was cancelled — a race the
/// *Cancellation* page says to handle gracefully) is accepted (202) and
/// logged. With other instances (`cluster`) it is handed to them: the
/// request waiting for it may run on one of them.
pub(crate) async fn on_response(shared: &Shared, session: &Session, r: Response) {
    let id = r.id.clone();
    let copy = shared.config.signals.is_some().then(|| r.clone());
    if session.complete_client_request(r) {
        return;
    }
    match copy {
        Some(r) => cluster::publish(shared, session, &Message::Response(r)).await,
        None => {
            tracing::debug!(session = %session.id, id = ?id, "response to no pending server request; ignored");
        }
    }
}
