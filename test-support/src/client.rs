//! Helpers for tests that drive a client: request params, the events of a
//! request's stream, results, and short descriptions of notifications for
//! comparing sequences.

use futures_util::StreamExt;
use mcp_transport_core::jsonrpc::{Notification, Response, to_raw};
use mcp_transport_core::transport::{
    RequestOptions, ResponseStream, StreamEvent, Transport, TransportError,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::wait::WAIT;

/// Raw params for a request.
pub fn params(v: Value) -> Option<Box<RawValue>> {
    Some(to_raw(&v).unwrap())
}

/// The response to `method` with `params`, sent on `transport` with the
/// default options: what the request's stream ends with (its
/// notifications skipped), or the error that ended it.
///
/// # Panics
///
/// When the request cannot be sent: a test that expects that calls
/// [`Transport::request`] itself and looks at its error.
pub async fn answer<T: Transport + ?Sized>(
    transport: &T,
    method: &str,
    params: Option<Box<RawValue>>,
) -> Result<Response, TransportError> {
    transport
        .request(method, params, RequestOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{method} not sent: {e}"))
        .response()
        .await
}

/// `tools/call` params: `{"name": name, "arguments": args}`.
pub fn tool(name: &str, args: Value) -> Box<RawValue> {
    to_raw(&json!({ "name": name, "arguments": args })).unwrap()
}

/// The result of a response as JSON (panics on an error response).
pub fn result_of(response: &Response) -> Value {
    match &response.payload {
        Ok(raw) => serde_json::from_str(raw.get()).unwrap(),
        Err(e) => panic!("error response: {e}"),
    }
}

/// Everything a request's stream yielded before its response, and the
/// response (bounded by [`WAIT`]).
pub async fn collect(
    mut stream: ResponseStream,
) -> Result<(Vec<StreamEvent>, Response), TransportError> {
    let mut events = Vec::new();
    let work = async {
        while let Some(item) = stream.next().await {
            match item? {
                StreamEvent::Response(r) => return Ok(r),
                other => events.push(other),
            }
        }
        Err(TransportError::PeerMisbehaved(
            mcp_transport_core::transport::Misbehaviour::EndedWithout {
                what: "the request's stream".into(),
                missing: "a response".into(),
            },
        ))
    };
    let response = tokio::time::timeout(WAIT, work)
        .await
        .expect("the request's stream did not finish in time")?;
    Ok((events, response))
}

/// Reads events (not the response) of a request's stream until `n` have
/// arrived (each bounded by [`WAIT`]); a response before that fails the
/// test.
pub async fn read_events(stream: &mut ResponseStream, events: &mut Vec<StreamEvent>, n: usize) {
    while events.len() < n {
        let item = tokio::time::timeout(WAIT, stream.next())
            .await
            .expect("an event in time")
            .expect("the stream goes on")
            .expect("no error");
        assert!(
            !matches!(item, StreamEvent::Response(_)),
            "response too early"
        );
        events.push(item);
    }
}

/// A short description of a notification, for comparing sequences:
/// `progress i/n`, `log <data>`, or the method.
pub fn describe(n: &Notification) -> String {
    let p: Value = n
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null);
    match n.method.as_str() {
        "notifications/progress" => format!("progress {}/{}", p["progress"], p["total"]),
        "notifications/message" => format!("log {}", p["data"]),
        other => other.to_owned(),
    }
}

/// [`describe`] of every event (server requests as `request <method>`).
pub fn describe_all(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            StreamEvent::Notification(n) => describe(n),
            StreamEvent::ServerRequest(r) => format!("request {}", r.method),
            StreamEvent::Response(_) => "response".to_owned(),
        })
        .collect()
}

/// What the shared `countdown {n}` tool
/// ([`tools::countdown`](crate::handler::tools::countdown)) sends, in
/// order, as [`describe`] puts it, with or without a progress token.
pub fn countdown_expected(n: u64, progress: bool) -> Vec<String> {
    let mut out = Vec::new();
    for i in 1..=n {
        if progress {
            out.push(format!("progress {i}.0/{n}.0"));
        }
        out.push(format!("log {}", json!({ "tick": i })));
    }
    out
}
