//! One request: the POST, its JSON or SSE answer, and the stream the caller
//! reads (related messages, then the response).
//!
//! *Transports*, "Sending Messages to the Server" 5: the server answers a
//! request with `Content-Type: application/json` ("one JSON object") or
//! `text/event-stream`, and "The client MUST support both these cases". On
//! the SSE stream the server may send requests and notifications before the
//! response; the stream is read until the response and no further.

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream;
use mcp_transport_core::jsonrpc::{Message, Request};
use mcp_transport_core::transport::{RequestOptions, ResponseStream, StreamEvent, TransportError};
use serde_json::value::RawValue;
use tokio::time::Instant;
use tracing::Instrument;

use super::cancel::CancelGuard;
use super::exchange::Exchange;
use super::session;
use super::shared::Shared;
use super::wire::{self, Outgoing};
use mcp_http_edge::client::with_deadline;

/// Sends a request and returns its stream.
///
/// The POST is sent and its status checked before this returns; an HTTP
/// error is returned here (404 with the session id: `SessionExpired`, and
/// the session is marked lost; the request is **not** re-sent, because
/// re-sending is the caller's decision and not every request is
/// idempotent). The overall deadline (`options.timeout`, else
/// `ClientConfig::http.request_timeout`) covers the POST and the whole stream.
pub(crate) async fn start(
    shared: Arc<Shared>,
    method: &str,
    params: Option<Box<RawValue>>,
    options: RequestOptions,
) -> Result<ResponseStream, TransportError> {
    let current = session::ensure(&shared).await?;
    let session = current.session.clone();
    let id = shared.next_id();
    // A progress token names the request it belongs to: reuse the id.
    let params = if options.progress {
        let token = serde_json::to_value(&id).unwrap_or_default();
        Some(
            mcp_transport_core::jsonrpc::set_meta(params, "progressToken", token).map_err(|e| {
                TransportError::InvalidInput(format!("cannot attach a progress token: {e}"))
            })?,
        )
    } else {
        params
    };
    let timeout = options.timeout.or(shared.config.http.request_timeout);
    let deadline = timeout.map(|t| Instant::now() + t);
    let request = Message::Request(Request {
        id: id.clone(),
        method: method.to_owned(),
        params,
    });
    let body = Outgoing::Single(&request).to_body(&session.features)?;
    // Armed from here: dropping the `request()` future after the POST may
    // have reached the server cancels it too.
    let mut guard = CancelGuard::new(shared.clone(), session.clone(), id.clone());
    let what = format!("POST {method} (request {id})");
    // The request's `mcp.client.request` span (mcp_http_edge::trace):
    // entered while the POST is sent and while its stream is read, so a
    // resume's `mcp.client.resume` is its child.
    let span = tracing::info_span!(
        "mcp.client.request",
        rpc.method = method,
        rpc.id = %id,
        mcp.session_id = session.id.as_deref(),
        mcp.protocol_version = %session.version,
        http.status = tracing::field::Empty,
    );
    let opening = async {
        let response = wire::send(wire::post(&shared, &session, body), &what).await?;
        tracing::Span::current().record("http.status", response.status().as_u16());
        if !response.status().is_success() {
            return Err(wire::status_error(response, &session, &what).await);
        }
        Exchange::open(shared.clone(), session.clone(), id.clone(), response).await
    };
    let exchange = match with_deadline(deadline, timeout, opening.instrument(span.clone())).await {
        Ok(exchange) => exchange,
        Err(e) => {
            match &e {
                // The server refused the request, or the session is gone:
                // nothing is in progress.
                TransportError::Http { .. }
                | TransportError::SessionExpired { .. }
                | TransportError::Closed => guard.disarm(),
                other => guard.fire(&format!("the client stopped waiting: {other}")),
            }
            return Err(e);
        }
    };
    let state = RequestStream {
        exchange,
        guard,
        deadline,
        timeout,
        done: false,
    };
    Ok(ResponseStream::new(stream::unfold(
        state,
        move |mut state| {
            let span = span.clone();
            async move {
                let item = state.next().await?;
                Some((item, state))
            }
            .instrument(span)
        },
    )))
}

/// The state behind a [`ResponseStream`]. Dropping it before the response
/// drops the connection and sends `notifications/cancelled` (its guard).
struct RequestStream {
    exchange: Exchange,
    guard: CancelGuard,
    deadline: Option<Instant>,
    timeout: Option<Duration>,
    done: bool,
}

impl RequestStream {
    async fn next(&mut self) -> Option<Result<StreamEvent, TransportError>> {
        if self.done {
            return None;
        }
        let closed = self.exchange.shared.closed.clone();
        let lost = self.exchange.session.lost().clone();
        let expired = self.exchange.session.expired_error();
        let result = tokio::select! {
            biased;
            () = closed.cancelled() => Err(TransportError::Closed),
            () = lost.cancelled() => Err(expired),
            r = with_deadline(self.deadline, self.timeout, self.exchange.next_event()) => r,
        };
        match &result {
            Ok(StreamEvent::Response(_)) => self.guard.disarm(),
            Ok(_) => return Some(result),
            Err(TransportError::SessionExpired { .. } | TransportError::Closed) => {
                self.guard.disarm()
            }
            // *Lifecycle*, "Timeouts": the sender "SHOULD issue a
            // cancellation notification for that request and stop waiting";
            // the same holds when resumption is given up.
            Err(e) => self.guard.fire(&format!("the client stopped waiting: {e}")),
        }
        // The response (or an error) ends the stream: read no further.
        self.done = true;
        self.exchange.finish();
        Some(result)
    }
}
