//! The reader task: the one owner of the SSE stream, routing every message
//! the server sends.
//!
//! 2024-11-05 *Transports*, "HTTP with SSE": "Server messages are sent as
//! SSE `message` events, with the message content encoded as JSON in the
//! event data." Unlike Streamable HTTP there is one stream for everything,
//! so the client must sort the messages itself:
//!
//! | message | goes to |
//! | --- | --- |
//! | a response | the request with its id (else the listener) |
//! | `notifications/progress` | the request whose id is its `progressToken` (else the listener) |
//! | a request (`ping`, `roots/list`, `sampling/createMessage`) | answered by POST (`ping` by the transport, the rest by the [`InputHandler`](mcp_transport_core::transport::InputHandler)), then a copy to the listener |
//! | any other notification | the listener |
//!
//! When the stream ends or breaks, the connection is over: this transport
//! has no event ids and no resumption, so every in-flight request fails with
//! a [`TransportError::Connection`] saying so, and so does every later call.

use std::sync::Arc;

use mcp_http_edge::client::{SseBody, SseEnd, SseNext};
use mcp_transport_core::jsonrpc::{Body, Message, Request, parse_body};
use mcp_transport_core::sse::SseItem;
use mcp_transport_core::transport::{TransportError, answer_request};
use tokio::sync::OwnedSemaphorePermit;

use super::shared::Shared;

/// Starts the reader task on the rest of the SSE stream.
pub(crate) fn spawn(shared: Arc<Shared>, body: SseBody) {
    tokio::spawn(run(shared, body));
}

async fn run(shared: Arc<Shared>, mut body: SseBody) {
    let ended = shared.ended.clone();
    loop {
        while let Some(item) = body.queued() {
            if !handle(&shared, item).await {
                return;
            }
        }
        let next = tokio::select! {
            biased;
            () = ended.cancelled() => return,
            next = body.next() => next,
        };
        match next {
            Ok(SseNext::Item(item)) => {
                if !handle(&shared, item).await {
                    return;
                }
            }
            Err(mut overflow) => {
                for item in std::mem::take(&mut overflow.decoded) {
                    if !handle(&shared, item).await {
                        return;
                    }
                }
                let what = format!(
                    "an event of the HTTP+SSE stream from {} (the connection was dropped)",
                    shared.sse_url
                );
                shared.end(overflow.limit_exceeded("HttpSseConfig::max_event_bytes", what));
                return;
            }
            Ok(SseNext::End(SseEnd::Eof)) => {
                tracing::debug!(url = %shared.sse_url, "the server ended the HTTP+SSE stream");
                shared.end(TransportError::Connection(format!(
                    "the server closed the HTTP+SSE stream at {}",
                    shared.sse_url
                )));
                return;
            }
            Ok(SseNext::End(SseEnd::Broken(chain))) => {
                shared.end(TransportError::Connection(format!(
                    "the HTTP+SSE stream at {} broke: {chain}",
                    shared.sse_url
                )));
                return;
            }
        }
    }
}

/// Handles one decoded item; `false` once the connection is over.
async fn handle(shared: &Arc<Shared>, item: SseItem) -> bool {
    let SseItem::Event(event) = item else {
        // Ids and `retry` mean nothing without resumption.
        return true;
    };
    match event.event_type.as_str() {
        "message" => {}
        "endpoint" => {
            tracing::warn!(data = %event.data, "ignoring a second `endpoint` event on the HTTP+SSE stream");
            return true;
        }
        other => {
            tracing::debug!(
                event_type = other,
                "ignoring an SSE event that is not `message`"
            );
            return true;
        }
    }
    // Batches are accepted on receipt: 2024-11-05 is JSON-RPC 2.0, batches
    // included, and a lenient reader costs nothing here.
    let messages = match parse_body(event.data.as_bytes(), true) {
        Ok(Body::Single(m)) => vec![m],
        Ok(Body::Batch(items)) => items
            .into_iter()
            .filter_map(|item| {
                item.map_err(|e| tracing::warn!(error = %e.error, "skipping an invalid element of a batch on the HTTP+SSE stream"))
                    .ok()
            })
            .collect(),
        Err(e) => {
            tracing::warn!(error = %e, "skipping an SSE `message` event that is not a JSON-RPC message");
            return true;
        }
    };
    for message in messages {
        if !route(shared, message).await {
            return false;
        }
    }
    true
}

/// Routes one message (see the module docs); `false` once the connection is over.
async fn route(shared: &Arc<Shared>, message: Message) -> bool {
    match message {
        Message::Response(response) => {
            if let Some(r) = shared.deliver_response(response) {
                tracing::warn!(id = ?r.id, "a response to no in-flight request; handing it to the listener");
                shared.to_listener(Message::Response(r));
            }
        }
        Message::Notification(note) => {
            if let Some(n) = shared.deliver_progress(note) {
                shared.to_listener(Message::Notification(n));
            }
        }
        Message::Request(request) => {
            let ended = shared.ended.clone();
            let permit = tokio::select! {
                biased;
                () = ended.cancelled() => return false,
                p = shared.input_permits.clone().acquire_owned() => p,
            };
            let Ok(permit) = permit else { return false };
            tokio::spawn(answer(shared.clone(), request, permit));
        }
    }
    true
}

/// Answers a server-to-client request by POSTing the response to the
/// endpoint, then hands a copy of the request to the listener.
///
/// `ping` is answered with an empty result by the transport (2024-11-05
/// *Ping*: "The receiver MUST respond promptly with an empty response");
/// everything else by the configured input handler, its result or its error.
async fn answer(shared: Arc<Shared>, request: Request, _permit: OwnedSemaphorePermit) {
    let ended = shared.ended.clone();
    let work = async {
        let answer = answer_request(&*shared.config.input_handler, &request).await;
        if let Err(e) = &answer.payload {
            tracing::debug!(method = %request.method, error = %e, "answering a server request with an error");
        }
        let response = Message::Response(answer);
        let what = format!(
            "POST of the answer to server request {} ({})",
            request.id, request.method
        );
        shared.post(&response, &what).await
    };
    let result = tokio::select! {
        biased;
        () = ended.cancelled() => return,
        r = work => r,
    };
    match result {
        Ok(()) => shared.to_listener(Message::Request(request)),
        Err(e) => tracing::warn!(error = %e, "could not answer a server request"),
    }
}
