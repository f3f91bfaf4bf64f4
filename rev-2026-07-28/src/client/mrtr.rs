//! Multi round-trip requests (*MRTR*; SEP-2322): reading an
//! `InputRequiredResult`, answering its `inputRequests` through the
//! [`InputHandler`], and shaping the retry.
//!
//! Client rules applied ("Client Requirements (Basic Workflow)"):
//!
//! 1. With `inputRequests`, the client "MUST construct the requested inputs
//!    before retrying": every request is passed to the input handler (one at
//!    a time, in key order, so a user sees one prompt at a time). Without
//!    them it "MAY retry the original request immediately", and does.
//! 2. `requestState` is echoed back byte for byte; when the result has none
//!    the retry carries none (a `requestState` or `inputResponses` of the
//!    caller's original params is removed too).
//! 3. The retry is a new JSON-RPC request with a new `id`
//!    ([`Call`](super::request::Call) assigns it) and the original params.
//!
//! # When the input handler fails
//!
//! `InputResponses` values are results (`ElicitResult`,
//! `CreateMessageResult`, `ListRootsResult`); the schema has no slot for an
//! error, and retrying without the input would break rule 1 (and a server
//! "SHOULD respond with a new `InputRequiredResult` requesting the missing
//! information again", so it would only loop). Servers "MUST NOT assume
//! that clients will fulfill the `inputRequests` or retry", so the client
//! abandons the request: no retry is sent, the handler's error is logged
//! with the input key and method, and the request fails with
//! [`TransportError::Unsupported`] ("retrying after an input handler
//! error"). Nothing JSON-RPC-shaped is synthesized: local errors must not be
//! mistakable for the peer's (*Overview*, "Error Codes"). A handler that
//! wants the server to see a refusal answers with a result that says so
//! (for elicitation, `{"action": "decline"}` or `"cancel"`).

use std::collections::VecDeque;

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{Request, RequestId};
use mcp_transport_core::transport::{InputHandler, Misbehaviour, StreamEvent, TransportError};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The `resultType` of a result (*Overview*, "ResultType").
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ResultType {
    /// `"complete"`, or absent ("clients MUST treat an absent `resultType`
    /// as `"complete"`").
    Complete,
    /// `"input_required"`.
    InputRequired,
    /// Anything else: "MUST be considered invalid".
    Unknown(String),
}

/// Reads the `resultType` of a raw result.
pub(crate) fn result_type(result: &RawValue) -> Result<ResultType, TransportError> {
    #[derive(Deserialize)]
    struct Head {
        #[serde(rename = "resultType")]
        result_type: Option<Value>,
    }
    let bad = |e: &dyn std::fmt::Display| {
        TransportError::PeerMisbehaved(Misbehaviour::MalformedResult {
            what: "result".into(),
            detail: format!("a result must be a JSON object: {e}"),
        })
    };
    if !result.get().trim_start().starts_with('{') {
        return Err(bad(&result.get().chars().take(40).collect::<String>()));
    }
    let head: Head = serde_json::from_str(result.get()).map_err(|e| bad(&e))?;
    Ok(match head.result_type {
        None => ResultType::Complete,
        Some(Value::String(s)) if s == "complete" => ResultType::Complete,
        Some(Value::String(s)) if s == "input_required" => ResultType::InputRequired,
        Some(Value::String(s)) => ResultType::Unknown(s),
        Some(other) => ResultType::Unknown(other.to_string()),
    })
}

/// One input request of an `InputRequiredResult`.
#[derive(Debug, Deserialize)]
struct InputRequest {
    method: String,
    #[serde(default)]
    params: Option<Box<RawValue>>,
}

/// A parsed `InputRequiredResult`.
#[derive(Debug)]
pub(crate) struct InputRequired {
    /// `inputRequests`, by key (sorted).
    requests: Vec<(String, InputRequest)>,
    /// Whether `inputRequests` was present at all.
    has_requests: bool,
    /// `requestState`, exactly as sent.
    state: Option<String>,
}

/// Parses an `InputRequiredResult` (schema, `InputRequiredResult`).
pub(crate) fn parse(result: &RawValue) -> Result<InputRequired, TransportError> {
    #[derive(Deserialize)]
    struct Wire {
        #[serde(rename = "inputRequests")]
        input_requests: Option<std::collections::BTreeMap<String, InputRequest>>,
        #[serde(rename = "requestState")]
        request_state: Option<String>,
    }
    let wire: Wire = serde_json::from_str(result.get()).map_err(|e| {
        TransportError::PeerMisbehaved(Misbehaviour::MalformedResult {
            what: "InputRequiredResult".into(),
            detail: format!(
                "inputRequests must map keys to {{method, params}}, requestState must be a string: {e}"
            ),
        })
    })?;
    if wire.input_requests.is_none() && wire.request_state.is_none() {
        return Err(TransportError::PeerMisbehaved(Misbehaviour::MalformedResult {
            what: "InputRequiredResult".into(),
            detail: "it must include at least one of inputRequests or requestState (MRTR, Server Requirements 6)".into(),
        }));
    }
    Ok(InputRequired {
        has_requests: wire.input_requests.is_some(),
        requests: wire
            .input_requests
            .unwrap_or_default()
            .into_iter()
            .collect(),
        state: wire.request_state,
    })
}

/// What the next attempt adds to the original params.
#[derive(Clone, Debug, Default)]
pub(crate) struct Retry {
    /// `inputResponses`, when the result had `inputRequests`.
    responses: Option<Map<String, Value>>,
    /// `requestState`, when the result had one.
    state: Option<String>,
}

impl Retry {
    /// Sets `inputResponses` and `requestState` in `params` (and removes
    /// them when this round has none).
    pub(crate) fn apply(&self, params: &mut Map<String, Value>) {
        match &self.responses {
            Some(r) => {
                params.insert("inputResponses".into(), Value::Object(r.clone()));
            }
            None => {
                params.remove("inputResponses");
            }
        }
        match &self.state {
            Some(s) => {
                params.insert("requestState".into(), Value::String(s.clone()));
            }
            None => {
                params.remove("requestState");
            }
        }
    }
}

/// Answers every input request through `handler`, in key order, pushing a
/// [`StreamEvent::ServerRequest`] (id = the input key) for each answered
/// one, and returns what the retry must carry.
pub(crate) async fn answer(
    handler: &dyn InputHandler,
    input: InputRequired,
    events: &mut VecDeque<StreamEvent>,
) -> Result<Retry, TransportError> {
    let mut responses = Map::new();
    for (key, request) in input.requests {
        let result = handler
            .handle(&request.method, request.params.as_deref())
            .await
            .map_err(|error| {
                tracing::warn!(
                    key,
                    method = %request.method,
                    %error,
                    "the input handler failed; the request is abandoned without a retry (MRTR: inputs must be constructed before retrying)"
                );
                TransportError::Unsupported {
                    revision: ProtocolVersion::V2026_07_28,
                    what: "retrying after an input handler error (MRTR carries no errors in inputResponses, so the request was abandoned; see the log for the input key and the handler's error)",
                }
            })?;
        let value: Value = serde_json::from_str(result.get()).unwrap_or(Value::Null);
        responses.insert(key.clone(), value);
        events.push_back(StreamEvent::ServerRequest(Request {
            id: RequestId::String(key),
            method: request.method,
            params: request.params,
        }));
    }
    Ok(Retry {
        responses: input.has_requests.then_some(responses),
        state: input.state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_transport_core::jsonrpc::to_raw;
    use serde_json::json;

    #[test]
    fn result_types() {
        let rt = |v: Value| result_type(&to_raw(&v).unwrap()).unwrap();
        assert_eq!(rt(json!({})), ResultType::Complete);
        assert_eq!(rt(json!({"resultType": "complete"})), ResultType::Complete);
        assert_eq!(
            rt(json!({"resultType": "input_required"})),
            ResultType::InputRequired
        );
        assert_eq!(
            rt(json!({"resultType": "task"})),
            ResultType::Unknown("task".into())
        );
        assert!(result_type(&to_raw(&json!([1])).unwrap()).is_err());
    }

    #[test]
    fn parse_requires_requests_or_state() {
        let p = |v: Value| parse(&to_raw(&v).unwrap());
        assert!(p(json!({"resultType": "input_required"})).is_err());
        assert!(
            p(json!({"resultType": "input_required", "inputRequests": {"a": {"params": {}}}}))
                .is_err()
        );
        let only_state = p(json!({"resultType": "input_required", "requestState": "s"})).unwrap();
        assert!(!only_state.has_requests);
    }

    #[test]
    fn retry_replaces_and_removes() {
        let mut params = json!({"name": "t", "requestState": "old", "inputResponses": {"x": {}}})
            .as_object()
            .unwrap()
            .clone();
        Retry::default().apply(&mut params);
        assert_eq!(Value::Object(params.clone()), json!({"name": "t"}));
        Retry {
            responses: Some(Map::new()),
            state: Some("s".into()),
        }
        .apply(&mut params);
        assert_eq!(
            Value::Object(params),
            json!({"name": "t", "requestState": "s", "inputResponses": {}})
        );
    }
}
