//! Recorded exchanges (and answers) built without a server, for the unit
//! tests of the checks that read the wire ([`super::checks`],
//! [`super::declared`], [`super::long_running`], [`super::task`]).

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde_json::Value;
use tokio::time::Instant;

use super::harness::Observed;
use super::outcome::Outcome;
use super::wire::Exchange;
use mcp_transport_core::jsonrpc::{RequestId, Response, to_raw};

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
