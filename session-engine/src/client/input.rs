//! Answering server-to-client requests that arrive on an SSE stream.
//!
//! *Transports*, "Sending Messages to the Server" 6 and "Listening for
//! Messages from the Server" 4: the server "MAY send JSON-RPC _requests_"
//! on its streams; the client answers each by POSTing a JSON-RPC
//! _response_, which the server accepts with 202. The answer comes from the
//! configured [`InputHandler`](mcp_transport_core::transport::InputHandler)
//! (its result or its error), except `ping`, which the transport answers
//! with an empty result itself (*Ping*: "The receiver MUST respond promptly
//! with an empty response").

use mcp_transport_core::jsonrpc::{Message, Request};
use mcp_transport_core::transport::{TransportError, answer_request};

use super::shared::Shared;
use super::state::Session;
use super::wire;

/// Computes the answer to `request` and POSTs it.
pub(crate) async fn answer(
    shared: &Shared,
    session: &Session,
    request: &Request,
) -> Result<(), TransportError> {
    let answer = answer_request(&*shared.config.input_handler, request).await;
    if let Err(e) = &answer.payload {
        tracing::debug!(method = %request.method, error = %e, "answering a server request with an error");
    }
    let response = Message::Response(answer);
    let what = format!(
        "POST of the answer to server request {} ({})",
        request.id, request.method
    );
    wire::post_accepted(shared, session, &response, &what).await
}
