//! The JSON-RPC envelope parser (`parse_body`, `parse_message`,
//! `parse_single`): never panics; accepts only text `serde_json` takes as
//! JSON (its fast path checks the JSON itself); every message it accepts
//! re-serializes to JSON that parses to the same message (compared
//! through its serialization, which must be stable); the params' index
//! `parse_single` finds on the way is the index of the message's params;
//! an error maps to -32700 or -32600.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_transport_core::json_members::ObjectIndex;
use mcp_transport_core::jsonrpc::{
    Body, INVALID_REQUEST, Message, PARSE_ERROR, parse_body, parse_message, parse_single,
};

fuzz_target!(|data: &[u8]| {
    for allow_batch in [false, true] {
        match parse_body(data, allow_batch) {
            Ok(Body::Single(message)) => round_trip(&message),
            Ok(Body::Batch(items)) => {
                assert!(allow_batch, "a batch accepted where batches are not");
                assert!(!items.is_empty());
                for item in items {
                    match item {
                        Ok(message) => round_trip(&message),
                        Err(e) => {
                            let code = e.to_response().payload.unwrap_err().code;
                            assert!(code == PARSE_ERROR || code == INVALID_REQUEST);
                        }
                    }
                }
            }
            Err(e) => assert!(e.code() == PARSE_ERROR || e.code() == INVALID_REQUEST),
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(message) = parse_message(text) {
            assert!(
                serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok(),
                "accepted text that is not JSON: {text:?}"
            );
            round_trip(&message);
        }
    }
    if let Ok(parsed) = parse_single(data) {
        let (message, index) = parsed.into_indexed();
        let params = match &message {
            Message::Request(r) => r.params.as_deref(),
            Message::Notification(n) => n.params.as_deref(),
            Message::Response(_) => None,
        };
        if let Some(index) = index {
            assert_eq!(index, ObjectIndex::of_params(params));
            // `_meta`'s members, when the reading knows them, are those of
            // the value the index gives for `_meta`.
            if let Some(meta) = index.meta_members() {
                let walked: Vec<_> = index
                    .get("_meta")
                    .and_then(|v| v.object())
                    .expect("known members of an object")
                    .collect();
                assert_eq!(meta.collect::<Vec<_>>(), walked);
            }
        }
    }
});

fn round_trip(message: &Message) {
    let json = message.to_json();
    // Raw payloads keep their whitespace (line breaks included); SSE must
    // still carry the message intact (CR and CRLF come back as LF).
    let mut wire = Vec::new();
    mcp_transport_core::sse::write_event(&mut wire, None, Some("s.1.1"), &json).unwrap();
    let mut items = Vec::new();
    mcp_transport_core::sse::Decoder::with_max_event_size(usize::MAX)
        .feed(&wire, &mut items)
        .unwrap();
    match items.as_slice() {
        [mcp_transport_core::sse::SseItem::Event(e)] => {
            assert_eq!(e.data, json.replace("\r\n", "\n").replace('\r', "\n"));
        }
        other => panic!("{json} became {other:?} over SSE"),
    }
    let again = match parse_body(json.as_bytes(), false) {
        Ok(Body::Single(m)) => m,
        other => panic!("{json} did not parse back to one message: {other:?}"),
    };
    assert_eq!(
        again.to_json(),
        json,
        "re-serialization changed the message"
    );
    assert_eq!(again.method(), message.method());
    match (message, &again) {
        (Message::Request(a), Message::Request(b)) => {
            assert_eq!(a.id, b.id);
            assert_eq!(
                a.params.as_ref().map(|p| p.get()),
                b.params.as_ref().map(|p| p.get())
            );
        }
        (Message::Notification(a), Message::Notification(b)) => {
            assert_eq!(
                a.params.as_ref().map(|p| p.get()),
                b.params.as_ref().map(|p| p.get())
            );
        }
        (Message::Response(a), Message::Response(b)) => {
            assert_eq!(a.id, b.id);
            match (&a.payload, &b.payload) {
                (Ok(x), Ok(y)) => assert_eq!(x.get(), y.get()),
                (Err(x), Err(y)) => assert_eq!(x, y),
                _ => panic!("result/error kind changed: {json}"),
            }
        }
        _ => panic!("message kind changed: {json}"),
    }
}
