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

#[cfg(test)]
mod tests {
    use super::super::test_wire::{get, post};
    use super::*;
    use http::StatusCode;
    use serde_json::json;

    fn call(id: u64, tool: &str, args: Value) -> Exchange {
        post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}))
    }

    fn result(id: u64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
    }

    fn events(list: &[(&str, &str)]) -> String {
        list.iter()
            .map(|(id, data)| format!("id: {id}\ndata: {data}\n\n"))
            .collect()
    }

    #[test]
    fn an_http_sse_answer_must_be_accepted_and_come_down_the_stream() {
        let accepted = call(7, "echo", json!({})).answered_json(StatusCode::ACCEPTED, &json!(null));
        let stream = |id| get().answered_sse(&format!("data: {}\n\n", result(id)));
        assert!(answered_on_the_stream(&[stream(7)], &accepted).is_ok());
        // Another request's answer, or the answer on a POST body, is not it.
        assert!(answered_on_the_stream(&[stream(8)], &accepted).is_err());
        let ok = call(7, "echo", json!({})).answered_json(StatusCode::OK, &result(7));
        assert!(answered_on_the_stream(&[stream(7)], &ok).is_err());
        // An error or a JSON body on the GET is not the answer either.
        let error = get().answered_sse(&format!(
            "data: {}\n\n",
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "x"}})
        ));
        let json_get = get().answered_json(StatusCode::OK, &result(7));
        assert!(answered_on_the_stream(&[error, json_get], &accepted).is_err());
        let mut posted = stream(7);
        posted.method = http::Method::POST;
        assert!(answered_on_the_stream(&[posted], &accepted).is_err());
    }

    #[test]
    fn the_call_post_is_found_by_tool_and_arguments() {
        let wire = [
            call(1, "echo", json!({"text": "a"})),
            call(2, "slow", json!({"ms": 1})),
            call(3, "echo", json!({"text": "b"})),
        ];
        let id = |e: Option<Exchange>| e.map(|e| e.json()["id"].clone());
        assert_eq!(id(call_post(&wire, "echo", None)), Some(json!(1)));
        assert_eq!(
            id(call_post(&wire, "echo", Some(&json!({"text": "b"})))),
            Some(json!(3))
        );
        assert_eq!(id(call_post(&wire, "slow", None)), Some(json!(2)));
        assert_eq!(id(call_post(&wire, "echo", Some(&json!({})))), None);
        assert_eq!(id(call_post(&wire, "other", None)), None);
    }

    #[test]
    fn an_event_id_on_the_wire_twice_is_reported() {
        let a = get().answered_sse(&events(&[("0", ""), ("1", "{}"), ("2", "{}")]));
        let b = get().answered_sse(&events(&[("0", ""), ("3", "{}")]));
        // Priming events (empty data) may repeat their id.
        assert_eq!(ids_unique(&[a.clone(), b]).ok(), Some(3));
        let again = get().answered_sse(&events(&[("2", "{\"again\":1}")]));
        let err = ids_unique(&[a.clone(), again.clone()]).unwrap_err();
        assert!(matches!(&err, Observed::Failed { message, .. } if message.contains("event id 2")));
        // Only SSE bodies carry event ids.
        let mut json_body = again;
        json_body.response_headers = http::HeaderMap::new();
        assert_eq!(ids_unique(&[a, json_body]).ok(), Some(2));
    }

    #[test]
    fn a_resume_replays_only_what_followed_its_last_event_id() {
        let first =
            get().answered_sse(&events(&[("0", ""), ("1", "{}"), ("2", "{}"), ("3", "{}")]));
        let resume = |last: &str, ids: &[(&str, &str)]| {
            get()
                .with_header("last-event-id", last)
                .answered_sse(&events(ids))
        };
        // Resuming after 2 may replay 3 (and priming events), not 1 or 2.
        let good = resume("2", &[("5", ""), ("3", "{}")]);
        assert_eq!(
            replays_exclusive(&[first.clone(), good.clone()]).ok(),
            Some(1)
        );
        for replayed in ["1", "2"] {
            let bad = resume("2", &[(replayed, "{}")]);
            assert!(
                replays_exclusive(&[first.clone(), bad]).is_err(),
                "{replayed}"
            );
        }
        // An id the client never had, a resume before the stream it names,
        // and a POST carrying the header are not checked.
        let unknown = resume("9", &[("1", "{}")]);
        let mut posted = resume("2", &[("1", "{}")]);
        posted.method = http::Method::POST;
        let early = resume("2", &[("1", "{}")]);
        assert_eq!(
            replays_exclusive(&[early, first.clone(), unknown, posted]).ok(),
            Some(0)
        );
        assert_eq!(resumes(&[first, good.clone()]).len(), 1);
        let mut posted = good;
        posted.method = http::Method::POST;
        assert!(resumes(&[posted]).is_empty());
    }

    #[test]
    fn nothing_may_follow_a_response_on_its_stream() {
        let id = json!(4);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/progress"});
        let then = |msgs: &[Value]| {
            let text: String = msgs.iter().map(|m| format!("data: {m}\n\n")).collect();
            call(4, "echo", json!({})).answered_sse(&text)
        };
        assert!(nothing_after_response(&[then(&[note.clone(), result(4)])], &id).is_ok());
        assert!(nothing_after_response(&[then(&[result(4), note.clone()])], &id).is_err());
        let error = json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -1, "message": "x"}});
        assert!(nothing_after_response(&[then(std::slice::from_ref(&error))], &id).is_ok());
        assert!(nothing_after_response(&[then(&[error, note.clone()])], &id).is_err());
        // Another request's answer, or a server request that happens to
        // carry the same id (ids are per direction), is not it.
        let request = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
        assert!(nothing_after_response(&[then(&[result(5), request.clone()])], &id).is_err());
        assert!(nothing_after_response(&[then(&[request, result(4)])], &id).is_ok());
        assert!(nothing_after_response(&[then(&[result(5)])], &id).is_err());
        // The streams of one request are read as one, in order.
        let split = [then(&[result(4)]), then(&[note])];
        assert!(nothing_after_response(&split, &id).is_err());
    }

    #[test]
    fn short_keeps_120_characters() {
        let long = "é".repeat(200);
        assert_eq!(short(&long).chars().count(), 120);
        assert_eq!(short("abc"), "abc");
    }
}
