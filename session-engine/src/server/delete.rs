//! `DELETE`: the client ends its session (*Transports*, "Session
//! Management" 5). Answered 204 No Content; 405 when
//! `ServerConfig::allow_delete` is off ("The server MAY respond to this
//! request with HTTP 405 Method Not Allowed, indicating that the server does
//! not allow clients to terminate sessions"). Afterwards the session id gets
//! 404 ("Session Management" 3).

use std::sync::Arc;

use http::request::Parts;
use http::{Response, StatusCode};
use mcp_http_edge::faults::Fault;

use super::Shared;
use super::reply::{self, HttpResponse};

/// Handles one DELETE.
pub(crate) async fn delete(shared: &Arc<Shared>, parts: &Parts) -> HttpResponse {
    if !shared.config.allow_delete {
        return reply::method_not_allowed(
            "GET, POST",
            "Method Not Allowed: this server does not let clients terminate sessions",
        );
    }
    let session = match shared.require_session(parts).await {
        Ok(s) => s,
        Err(r) => return r.response(),
    };
    if !shared.config.http.faults.has(Fault::KeepDeletedSession) {
        shared.terminate(&session).await;
    }
    tracing::debug!(session = %session.id, "session terminated by DELETE");
    let mut r = Response::new(axum::body::Body::empty());
    *r.status_mut() = StatusCode::NO_CONTENT;
    r
}
