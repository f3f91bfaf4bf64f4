use proptest::prelude::*;

use super::super::parse_single;
use super::{Fields, Message, Notification, Request, fast, owned_raw, parse_envelope, slow};
use crate::json_members::ObjectIndex;

/// What a path makes of `text`, printed (messages have no `PartialEq`).
fn made(fields: Result<Fields<'_>, super::BodyError>) -> String {
    format!("{:?}", fields.and_then(Fields::message))
}

/// The fast path, when it takes `text`, makes what the slow path makes.
fn agree(text: &str) -> bool {
    let Some((f, _)) = fast(text, true) else {
        return false;
    };
    let slow = slow(text);
    assert!(
        slow.is_ok(),
        "the fast path took what serde_json refuses: {text}"
    );
    assert_eq!(made(Ok(f)), made(slow), "{text}");
    // The params' index is the index of the params the message holds.
    if let Ok(parsed) = parse_single(text.as_bytes()) {
        let (message, index) = parsed.into_indexed();
        match message {
            Message::Request(Request { params, .. })
            | Message::Notification(Notification { params, .. }) => {
                assert_eq!(index.is_some(), params.is_some(), "{text}");
                if let Some(index) = index {
                    assert_eq!(index, ObjectIndex::of_params(params.as_deref()), "{text}");
                    // `_meta`'s members, when known, are those of the value
                    // the index gives for `_meta`.
                    if let Some(meta) = index.meta_members() {
                        let meta: Vec<_> = meta.collect();
                        let walked: Vec<_> = index
                            .get("_meta")
                            .and_then(|v| v.object())
                            .expect("known members of an object")
                            .collect();
                        assert_eq!(meta, walked, "{text}");
                    }
                }
            }
            Message::Response(_) => assert_eq!(index, None, "{text}"),
        }
    }
    true
}

#[test]
fn what_clients_send_takes_the_fast_path() {
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        r#"{"jsonrpc": "2.0", "id": "abc", "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}"#,
        r#"{"id":1,"jsonrpc":"2.0","method":"ping","extra":[1,2,{"x":null}]}"#,
    ] {
        assert!(agree(text), "declined: {text}");
    }
    // A stateless request's `_meta` is known from the reading.
    let (_, index) = parse_single(
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","_meta":{"a":1,"b":{}}}}"#,
    )
    .unwrap()
    .into_indexed();
    let names: Vec<_> = index
        .unwrap()
        .meta_members()
        .expect("known")
        .map(|m| m.raw_name().to_owned())
        .collect();
    assert_eq!(names, ["a", "b"]);
}

#[test]
fn what_the_slow_path_must_read_is_declined() {
    for text in [
        // serde_json's "duplicate field" errors.
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}"#,
        r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m"}"#,
        // Escaped names and methods are decoded by serde_json.
        r#"{"jsonrpc":"2.0","\u0069d":1,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call"}"#,
        // `method` that is not a string, or `null`.
        r#"{"jsonrpc":"2.0","id":1,"method":3}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":null,"result":{}}"#,
        // Not JSON, not an object.
        r#"{"jsonrpc":"2.0","id":1,"method":"m""#,
        r#"[{"jsonrpc":"2.0","method":"m"}]"#,
    ] {
        assert!(fast(text, true).is_none(), "{text}");
        let _ = parse_envelope(text, false);
    }
    // The errors are the slow path's.
    let e = parse_envelope(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#, false).unwrap_err();
    assert!(e.to_string().contains("duplicate field `id`"), "{e}");
    let m = parse_envelope(r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call"}"#, false).unwrap();
    assert!(format!("{m:?}").contains("\"tools/call\""));
}

#[test]
fn a_body_read_on_the_fast_path_keeps_its_params_index() {
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}"#;
    let (message, index) = parse_single(body).expect("a request").into_indexed();
    let index = index.expect("indexed on the way");
    assert_eq!(index.get("name").map(|v| v.text()), Some("\"add\""));
    let Message::Request(r) = message else {
        panic!("a request")
    };
    assert!(index.describes(r.params.as_deref()));
    // A member the envelope does not name may repeat: still read on the
    // fast path (empty params are indexed too).
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{},"x":1,"x":2}"#;
    let index = parse_single(body).expect("a request").into_indexed().1;
    assert_eq!(index.map(|i| i.members().count()), Some(0));
    // Declined by the fast path (a repeated or escaped envelope member):
    // an error, or read the slow way and not indexed.
    let body = br#"{"jsonrpc":"2.0","id":1,"id":1,"method":"m","params":{}}"#;
    assert!(parse_single(body).is_err());
    let body = br#"{"jsonrpc":"2.0","\u0069d":1,"method":"m","params":{}}"#;
    assert!(
        parse_single(body)
            .expect("a request")
            .into_indexed()
            .1
            .is_none()
    );
    // Batches are refused as `parse_body` refuses them.
    assert_eq!(
        parse_single(b"[{}]").unwrap_err(),
        crate::jsonrpc::BodyError::BatchNotAllowed
    );
    assert!(matches!(
        parse_single(b"[{}"),
        Err(crate::jsonrpc::BodyError::Parse(_))
    ));
}

/// A parsed body knows its length (an engine handed the message and no
/// body holds it to its limit); a message parsed elsewhere does not.
#[test]
fn a_parsed_body_knows_its_length() {
    let body = b" {\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n";
    let parsed = parse_single(body).expect("a notification");
    assert_eq!(parsed.body_len(), Some(body.len()));
    let from_message = crate::jsonrpc::Parsed::from(parsed.into_message());
    assert_eq!(from_message.body_len(), None);
    assert_eq!(from_message.with_body_len(7).body_len(), Some(7));
}

/// The params' text is kept as sent, without `serde_json` checking it
/// again: `RawValue`'s `Deserialize` takes it from a one-member map. If a
/// `serde_json` release stops doing that, this fails (and messages are
/// still right, only slower).
#[test]
fn a_raw_value_is_made_without_a_second_check() {
    let raw = owned_raw("not json, taken as given").expect("taken");
    assert_eq!(raw.get(), "not json, taken as given");
    let raw = owned_raw(r#"{"a": [1, 2]}"#).expect("taken");
    assert_eq!(raw.get(), r#"{"a": [1, 2]}"#);
}

/// Members of an envelope, some of them wrong, in any order and spacing.
fn member() -> impl Strategy<Value = String> {
    let value = prop_oneof![
        Just("\"2.0\"".to_owned()),
        Just("\"1.0\"".to_owned()),
        Just("null".to_owned()),
        Just("1".to_owned()),
        Just("-0".to_owned()),
        Just("1.5".to_owned()),
        Just("\"x\"".to_owned()),
        Just("\"\"".to_owned()),
        Just("\"a\\u0062\"".to_owned()),
        Just("{}".to_owned()),
        Just("{\"code\":-1,\"message\":\"m\"}".to_owned()),
        Just("{\"name\":\"add\",\"_meta\":{\"k\":[1,{}]}}".to_owned()),
        Just(r#"{"_meta":{"a":1},"_meta":2}"#.to_owned()),
        Just(r#"{"_meta":{"a":1},"_meta":{"b":{"_meta":{}}}}"#.to_owned()),
        Just(r#"{"_meta":{"a":1},"_m\u0065ta":{"b":1}}"#.to_owned()),
        Just(r#"{"x":{"_meta":{"c":1}},"_meta":{ "a" : 1 , "a":2}}"#.to_owned()),
        Just("[1]".to_owned()),
        Just("true".to_owned()),
    ];
    let name = prop::sample::select(vec![
        "jsonrpc", "id", "method", "params", "result", "error", "other", "\\u0069d",
    ]);
    (name, value, 0usize..3)
        .prop_map(|(n, v, gap)| format!("\"{n}\"{}:{}{v}", " ".repeat(gap), "\n".repeat(gap)))
}

proptest! {
    /// Whatever the fast path takes, the slow path makes the same message
    /// (or the same error) of.
    #[test]
    fn the_fast_path_agrees_with_the_slow_path(
        members in prop::collection::vec(member(), 0..10),
        lead in "[ \n]{0,2}",
    ) {
        let text = format!("{lead}{{{}}}", members.join(","));
        agree(&text);
        prop_assert_eq!(
            format!("{:?}", parse_envelope(&text, false).map(|(m, _)| m)),
            made(slow(&text)),
        );
    }

    /// A message broken in one place: never taken unless serde_json takes
    /// it too, and then read alike.
    #[test]
    fn a_broken_message_is_never_read_differently(
        members in prop::collection::vec(member(), 1..6),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b"{}[]\",:\\ 0-.ex\x01".to_vec()),
        remove in any::<bool>(),
    ) {
        let mut bytes = format!("{{{}}}", members.join(",")).into_bytes();
        let i = at.index(bytes.len());
        if remove { bytes.remove(i); } else { bytes[i] = byte; }
        let text = String::from_utf8(bytes).expect("ASCII");
        agree(&text);
    }
}
