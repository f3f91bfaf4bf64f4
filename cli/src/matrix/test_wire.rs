//! What the scenarios' unit tests build without a server: recorded
//! exchanges, answers, and a handler that has or has not cancelled (for
//! the checks that read the wire: [`super::checks`], [`super::declared`],
//! [`super::long_running`], [`super::streams`], [`super::task`], ...), and
//! how they read an outcome.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde_json::Value;
use tokio::time::Instant;

use super::harness::Observed;
use super::outcome::Outcome;
use super::seen::Seen;
use super::wire::{Exchange, Wire};
use crate::fixtures::testing::{Cx, request};
use crate::reference::ReferenceHandler;
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::handler::Handler;
use mcp_transport_core::jsonrpc::{RequestId, Response, to_raw};
use serde_json::json;

fn exchange(method: Method, body: Bytes) -> Exchange {
    Exchange {
        method,
        headers: HeaderMap::new(),
        body,
        started: Instant::now(),
        status: None,
        response_headers: HeaderMap::new(),
        response_body: Vec::new(),
        ended: None,
    }
}

/// The response to request `id` whose result is one text content, `text`
/// (what a tool call answers).
pub(crate) fn text_answer(id: i64, text: &str) -> Response {
    let result =
        to_raw(&serde_json::json!({"content": [{"type": "text", "text": text}]})).expect("JSON");
    Response::result(RequestId::Number(id), result)
}

/// A POST of `body` (a JSON-RPC message), not yet answered.
pub(crate) fn post(body: Value) -> Exchange {
    exchange(Method::POST, Bytes::from(body.to_string()))
}

/// A GET with no body, not yet answered.
pub(crate) fn get() -> Exchange {
    exchange(Method::GET, Bytes::new())
}

impl Exchange {
    /// With this request header.
    pub(crate) fn with_header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_str(value).expect("header value"),
        );
        self
    }

    /// Started at `at`.
    pub(crate) fn started_at(mut self, at: Instant) -> Self {
        self.started = at;
        self
    }

    /// With this response header.
    pub(crate) fn with_response_header(mut self, name: &'static str, value: &str) -> Self {
        self.response_headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_str(value).expect("header value"),
        );
        self
    }

    /// Answered `status` with a JSON body.
    pub(crate) fn answered_json(mut self, status: StatusCode, body: &Value) -> Self {
        self.status = Some(status);
        self.response_body = body.to_string().into_bytes();
        self.with_response_header("content-type", "application/json")
    }

    /// Answered 200 with an SSE body (`text` as sent).
    pub(crate) fn answered_sse(mut self, text: &str) -> Self {
        self.status = Some(StatusCode::OK);
        self.response_body = text.as_bytes().to_vec();
        self.with_response_header("content-type", "text/event-stream")
    }
}

/// What an outcome says: the detail of a success or an absence, the
/// message of a failure. A failure returned as `Ok`, or a success or an
/// absence as `Err`, is a bug in the scenario: it panics.
pub(crate) fn said(outcome: &Outcome) -> String {
    match outcome {
        Ok(Observed::Works(m) | Observed::Absent(m)) | Err(Observed::Failed { message: m, .. }) => {
            m.clone()
        }
        other => panic!("a scenario returned {other:?}"),
    }
}

/// The message of a check's failure; anything else panics.
pub(crate) fn failure<T: std::fmt::Debug>(result: Result<T, Observed>) -> String {
    match result {
        Err(Observed::Failed { message, .. }) => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// The reference handler; when `cancelled`, it has counted one cancelled
/// request, as that of a server that cancels on a drop would.
pub(crate) async fn handler(cancelled: bool) -> ReferenceHandler {
    let h = ReferenceHandler::new();
    if cancelled {
        let cx = Cx::at(V::V2025_11_25);
        cx.cancellation().cancel();
        let call = json!({ "name": "slow", "arguments": { "ms": 60000 } });
        let _ = h.handle(request("tools/call", call), cx.build()).await;
        assert_eq!(h.cancelled_count(), 1);
    }
    h
}

/// What the verdicts see of a server whose handler had cancelled nothing
/// before the call.
pub(crate) fn seen<'a>(handler: &'a ReferenceHandler, wire: &'a Wire) -> Seen<'a> {
    Seen {
        handler,
        wire,
        before: 0,
    }
}
