//! Checks on the recorded wire ([`super::wire`]) that several scenarios
//! share: ids, replays, where answers went, minted session ids.

use mcp_negotiate::client::Connection;
use mcp_transport_core::transport::Transport;
use serde_json::Value;

use super::harness::{Harness, Observed};
use super::outcome::*;
use super::wire::Exchange;
use mcp_http_edge::headers;

/// Whether the connection speaks the deprecated HTTP+SSE transport
/// (2024-11-05): answers go down one SSE stream, POSTs get 202.
pub(crate) fn http_sse(conn: &Connection) -> bool {
    conn.revision() == mcp_transport_core::ProtocolVersion::V2024_11_05
}

/// HTTP+SSE: the POST was accepted (202) and its response came down the
/// SSE stream (a GET answered `text/event-stream`).
pub(crate) fn answered_on_the_stream(wire: &[Exchange], post: &Exchange) -> Result<(), Observed> {
    ensure(post.status == Some(http::StatusCode::ACCEPTED), || {
        format!("the POST was answered {:?}, not 202", post.status)
    })?;
    let id = post.json()["id"].clone();
    let on_stream = wire.iter().any(|e| {
        e.method == http::Method::GET
            && e.is_sse()
            && e.messages()
                .iter()
                .any(|m| m["id"] == id && m.get("result").is_some())
    });
    ensure(on_stream, || {
        format!("the response to request {id} did not come down the SSE stream")
    })
}

/// 2026-07-28: "do not mint or echo session IDs". Legacy: nothing to check.
pub(crate) fn no_session_id_minted(conn: &Connection, harness: &Harness) -> Result<(), Observed> {
    if !conn.revision().is_modern() {
        return Ok(());
    }
    match harness
        .wire
        .exchanges()
        .iter()
        .find(|e| e.response_header(headers::SESSION_ID).is_some())
    {
        Some(e) => Err(failed(format!(
            "a 2026-07-28 answer to {} {} carries Mcp-Session-Id: {:?}",
            e.method,
            e.rpc_method().unwrap_or_default(),
            e.response_header(headers::SESSION_ID).unwrap_or_default()
        ))),
        None => Ok(()),
    }
}

/// The POST of the `tools/call` of `tool` (the first such, or the one whose
/// arguments match `args` when given).
pub(crate) fn call_post(
    exchanges: &[Exchange],
    tool: &str,
    args: Option<&Value>,
) -> Option<Exchange> {
    exchanges
        .iter()
        .find(|e| e.is_call_of(tool) && args.is_none_or(|a| &e.json()["params"]["arguments"] == a))
        .cloned()
}

/// Every message event id on the wire is used once: "the ID MUST be
/// globally unique across all streams within that session", and a resume
/// replays only what followed `Last-Event-ID`.
pub(crate) fn ids_unique(exchanges: &[Exchange]) -> Result<usize, Observed> {
    let mut seen = std::collections::HashMap::new();
    for e in exchanges.iter().filter(|e| e.is_sse()) {
        for (id, data) in e.sse_ids() {
            if data.trim().is_empty() {
                continue;
            }
            if let Some(first) = seen.insert(id.clone(), data.clone()) {
                return Err(failed(format!(
                    "event id {id} went out twice on the wire (first {}, again {}): replayed or broadcast",
                    short(&first),
                    short(&data)
                )));
            }
        }
    }
    Ok(seen.len())
}

/// Every resume replays only what followed its `Last-Event-ID`: no event
/// the client had by then (that id and the ones before it on the closed
/// connection) goes out again — "replay messages that would have been sent
/// after the last event ID". (After a network cut, events the server wrote
/// into the dead connection after that id may rightly go out again.)
pub(crate) fn replays_exclusive(exchanges: &[Exchange]) -> Result<usize, Observed> {
    let mut checked = 0;
    for (i, g) in exchanges.iter().enumerate() {
        let Some(last) = g
            .header("last-event-id")
            .filter(|_| g.method == http::Method::GET)
        else {
            continue;
        };
        let Some(before) = exchanges[..i].iter().find_map(|e| {
            let ids = e.sse_ids();
            let at = ids.iter().position(|(id, _)| id == last)?;
            Some(
                ids[..=at]
                    .iter()
                    .map(|(id, _)| id.clone())
                    .collect::<Vec<_>>(),
            )
        }) else {
            continue;
        };
        for (id, data) in g.sse_ids() {
            if !data.trim().is_empty() && before.contains(&id) {
                return Err(failed(format!(
                    "the resume after Last-Event-ID {last} replayed event {id}, which the client already had: {}",
                    short(&data)
                )));
            }
        }
        checked += 1;
    }
    Ok(checked)
}

pub(crate) fn short(s: &str) -> String {
    let s: String = s.chars().take(120).collect();
    s
}

/// The GETs resuming with `Last-Event-ID`, in order.
pub(crate) fn resumes(exchanges: &[Exchange]) -> Vec<Exchange> {
    exchanges
        .iter()
        .filter(|e| e.method == http::Method::GET && e.header("last-event-id").is_some())
        .cloned()
        .collect()
}

/// No message follows the response on the request's connections: "After
/// the JSON-RPC response has been sent, the server SHOULD terminate the SSE
/// stream", and nothing for another request.
pub(crate) fn nothing_after_response(connections: &[Exchange], id: &Value) -> Result<(), Observed> {
    let msgs: Vec<Value> = connections.iter().flat_map(Exchange::messages).collect();
    let Some(at) = msgs
        .iter()
        .position(|m| &m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()))
    else {
        return Err(failed(format!("no response to request {id} on the wire")));
    };
    match msgs.get(at + 1) {
        Some(m) => Err(failed(format!(
            "a message followed the response on its stream: {}",
            short(&m.to_string())
        ))),
        None => Ok(()),
    }
}
