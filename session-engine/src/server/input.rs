//! Server-to-client requests for a handler's `Outcome::InputRequired`.
//!
//! On legacy revisions the framework asks the client itself (see the
//! `handler` module of `mcp-transport-core`): each `InputRequest` becomes a
//! JSON-RPC request with a server-generated id (`"s-<n>"`) sent on the
//! originating request's stream (*Transports*: "The server MAY send JSON-RPC
//! requests and notifications before sending the JSON-RPC response. These
//! messages SHOULD relate to the originating client request"). The client
//! POSTs its responses; [`Session::complete_client_request`] routes them
//! here by id. Each round waits at most `client_request_timeout`; then the
//! outstanding requests are cancelled with `notifications/cancelled`
//! (*Lifecycle*, "Timeouts").

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_transport_core::handler::InputRequired;
use mcp_transport_core::jsonrpc::{
    ErrorObject, INTERNAL_ERROR, MISSING_REQUIRED_CLIENT_CAPABILITY, Message, Notification,
    Request, RequestId,
};
use serde_json::value::RawValue;

use super::Shared;
use super::outlet::Outlet;
use super::session::Session;

/// Why a round of input requests did not produce answers.
pub(crate) enum AskError {
    /// The request was cancelled or the session ended: answer nothing.
    Cancelled,
    /// Answer the original request with this error.
    Failed(ErrorObject),
    /// The session's revision has no such server-to-client method (for
    /// example `elicitation/create` on 2025-03-26). A `tools/call` then
    /// ends with a tool execution error (*Tools*, "Error Handling": "Tool
    /// Execution Errors: Reported in tool results with `isError: true`");
    /// any other request with `-32021` naming the reason.
    NotInRevision(String),
}

/// The client capability a server-to-client method needs, and whether the
/// session's revision has the method at all.
fn required_capability(session: &Session, method: &str) -> Result<Option<&'static str>, String> {
    match method {
        "elicitation/create" if !session.revision.elicitation() => Err(format!(
            "elicitation/create does not exist in protocol revision {}",
            session.version
        )),
        "elicitation/create" => Ok(Some("elicitation")),
        "sampling/createMessage" => Ok(Some("sampling")),
        "roots/list" => Ok(Some("roots")),
        _ => Ok(None),
    }
}

/// Removes pending entries when a round ends, however it ends.
struct PendingGuard<'a> {
    session: &'a Session,
    ids: Vec<RequestId>,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        for id in &self.ids {
            self.session.forget_client_request(id);
        }
    }
}

/// Sends every input request of `input` to the client and collects the
/// answers by key.
pub(crate) async fn ask(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    outlet: &Outlet,
    cancel: &mcp_transport_core::cancel::CancellationToken,
    input: InputRequired,
) -> Result<BTreeMap<String, Box<RawValue>>, AskError> {
    for req in input.requests.values() {
        match required_capability(session, &req.method) {
            Err(reason) => return Err(AskError::NotInRevision(reason)),
            Ok(Some(cap)) if !shared.sessions.described(session).has_capability(cap) => {
                return Err(AskError::Failed(ErrorObject::new(
                    MISSING_REQUIRED_CLIENT_CAPABILITY,
                    format!(
                        "the server needs to send {} but the client did not declare the `{cap}` capability at initialize",
                        req.method
                    ),
                )));
            }
            Ok(_) => {}
        }
    }
    let mut guard = PendingGuard {
        session,
        ids: Vec::new(),
    };
    let mut waiting = Vec::new();
    for (key, req) in input.requests {
        let id = session.next_client_request_id();
        let Some(rx) =
            session.await_client_response(id.clone(), shared.config.max_pending_client_requests)
        else {
            return Err(AskError::Failed(ErrorObject::new(
                INTERNAL_ERROR,
                format!(
                    "too many server-to-client requests awaiting an answer in this session (at most {})",
                    shared.config.max_pending_client_requests
                ),
            )));
        };
        guard.ids.push(id.clone());
        let message = Message::Request(Request {
            id: id.clone(),
            method: req.method.clone(),
            params: req.params,
        });
        if outlet.push(&message).await.is_err() {
            return Err(AskError::Cancelled);
        }
        waiting.push((key, id, req.method, rx));
    }

    let timeout = shared.config.client_request_timeout;
    let mut answers = BTreeMap::new();
    let deadline = tokio::time::Instant::now() + timeout;
    for (key, id, method, rx) in waiting {
        let response = tokio::select! {
            r = rx => r,
            () = cancel.cancelled() => return Err(AskError::Cancelled),
            () = session.shutdown.cancelled() => return Err(AskError::Cancelled),
            () = tokio::time::sleep_until(deadline) => {
                cancel_outstanding(outlet, &guard.ids, session).await;
                return Err(AskError::Failed(ErrorObject::new(
                    INTERNAL_ERROR,
                    format!("the client did not answer {method} (id {id}) within {} ms", timeout.as_millis()),
                )));
            }
        };
        let Ok(response) = response else {
            return Err(AskError::Cancelled);
        };
        match response.payload {
            Ok(result) => {
                answers.insert(key, result);
            }
            Err(e) => {
                return Err(AskError::Failed(ErrorObject::new(
                    INTERNAL_ERROR,
                    format!(
                        "the client answered {method} (id {id}) with error {}: {}",
                        e.code, e.message
                    ),
                )));
            }
        }
    }
    Ok(answers)
}

/// Tells the client to stop working on requests still pending.
async fn cancel_outstanding(outlet: &Outlet, ids: &[RequestId], session: &Session) {
    for id in ids {
        if !session.is_client_request_pending(id) {
            continue;
        }
        let n = Notification::cancelled(id, "timed out waiting for the client's response");
        let _ = outlet.push(&Message::Notification(n)).await;
    }
}
