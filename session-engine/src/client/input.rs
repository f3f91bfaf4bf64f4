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

use mcp_transport_core::jsonrpc::{Message, Request, Response};
use mcp_transport_core::transport::TransportError;
use serde_json::value::RawValue;

use super::shared::Shared;
use super::state::Session;
use super::wire;

/// Computes the answer to `request` and POSTs it.
pub(crate) async fn answer(
    shared: &Shared,
    session: &Session,
    request: &Request,
) -> Result<(), TransportError> {
    let payload = if request.method == "ping" {
        Ok(empty_result())
    } else {
        shared
            .config
            .input_handler
            .handle(&request.method, request.params.as_deref())
            .await
    };
    if let Err(e) = &payload {
        tracing::debug!(method = %request.method, error = %e, "answering a server request with an error");
    }
    let response = Message::Response(Response {
        id: Some(request.id.clone()),
        payload,
    });
    let what = format!(
        "POST of the answer to server request {} ({})",
        request.id, request.method
    );
    wire::post_accepted(shared, session, &response, &what).await
}

/// `{}`.
fn empty_result() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("`{}` is valid JSON")
}
