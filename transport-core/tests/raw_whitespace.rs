//! A message whose raw payload holds line breaks (JSON whitespace kept as
//! received) still crosses SSE intact: found by the `jsonrpc_body` fuzz
//! target, which showed `Message::to_json` is not newline-free.

use mcp_transport_core::jsonrpc::{Body, parse_body};
use mcp_transport_core::sse::{Decoder, SseItem, write_event};

#[test]
fn a_payload_with_line_breaks_round_trips_through_sse() {
    let body = b"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"m\",\"data\":[1,2\n\r\n\r]}}";
    let Ok(Body::Single(message)) = parse_body(body, false) else {
        panic!("not one message");
    };
    let json = message.to_json();
    assert!(
        json.contains('\n'),
        "the raw data keeps its whitespace: {json}"
    );
    let mut wire = Vec::new();
    write_event(&mut wire, None, Some("s.1.1"), &json).unwrap();
    let mut items = Vec::new();
    Decoder::new().feed(&wire, &mut items).unwrap();
    let [SseItem::Event(event)] = items.as_slice() else {
        panic!("one event expected: {items:?}");
    };
    let Ok(Body::Single(again)) = parse_body(event.data.as_bytes(), false) else {
        panic!("the SSE data is not one message: {:?}", event.data);
    };
    let normalised = json.replace("\r\n", "\n").replace('\r', "\n");
    assert_eq!(again.to_json(), normalised);
}
