use proptest::prelude::*;
use serde_json::Value;
use serde_json::value::RawValue;

use super::super::tests::json_value;
use super::{Checked, Found, MAX_DEPTH, Member, Span, Valid, object};

/// At most this many members are generated at the top.
const MAX_MEMBERS: usize = 8;

/// The walk's result and the top-level members it handed out.
fn walk(text: &str) -> Option<(Checked<'_>, Vec<Member<'_>>)> {
    let mut top = Vec::new();
    let c = object(text, Some(("params", "_meta")), |m| {
        top.push(m);
        Some(())
    })?;
    Some((c, top))
}

/// Whether `serde_json` takes `text` as one JSON value.
fn serde_accepts(text: &str) -> bool {
    serde_json::from_str::<&RawValue>(text).is_ok()
}

/// The walk's verdict, checked against `serde_json`'s: never accepted
/// unless `serde_json` accepts it.
fn checked(text: &str) -> bool {
    let ok = walk(text).is_some();
    assert!(
        !ok || serde_accepts(text),
        "accepted what serde_json refuses: {text:?}"
    );
    ok
}

#[test]
fn members_and_the_inner_objects_members() {
    let text = r#" {"jsonrpc":"2.0", "id" : 7,"method":"tools/call","params":{"name":"add","arguments":{"a":[1,{"b":"}"}]},"_meta":{"k":null}}} "#;
    let (c, top) = walk(text).expect("valid");
    let top: Vec<_> = top
        .iter()
        .map(|m| (m.raw_name(), m.value().text()))
        .collect();
    assert_eq!(
        top[..3],
        [
            ("jsonrpc", "\"2.0\""),
            ("id", "7"),
            ("method", "\"tools/call\"")
        ]
    );
    assert_eq!(top[3].0, "params");
    let inner: Vec<_> = c
        .inner_members()
        .iter()
        .map(|m| (m.raw_name(), m.value().text()))
        .collect();
    assert_eq!(
        inner,
        [
            ("name", "\"add\""),
            ("arguments", r#"{"a":[1,{"b":"}"}]}"#),
            ("_meta", r#"{"k":null}"#),
        ]
    );
    // The same as the lenient walk of the same (valid) text.
    let walked: Vec<_> = Valid::assume(top[3].1).object().unwrap().collect();
    assert_eq!(c.inner_members(), walked);
}

#[test]
fn the_inner_member_is_found_by_its_exact_name_and_only_as_an_object() {
    for (text, n) in [
        (r#"{"params":[1,2]}"#, 0),
        (r#"{"params":"{}"}"#, 0),
        (r#"{"p\u0061rams":{"a":1}}"#, 0),
        (r#"{"param":{"a":1}}"#, 0),
        (r#"{"x":{"params":{"a":1}}}"#, 0),
        (r#"{"params":{"a":1,"b":2}}"#, 2),
        // Repeated: the last one's (as a map reads it).
        (r#"{"params":{"a":1,"b":2},"params":{"c":3}}"#, 1),
        (r#"{"params":{"a":1,"b":2},"params":3}"#, 2),
    ] {
        let (c, _) = walk(text).expect(text);
        assert_eq!(c.inner_members().len(), n, "{text}");
    }
}

#[test]
fn the_nested_members_are_the_last_plain_named_object_s() {
    let nested = |text: &str| {
        let (c, _) = walk(text).expect(text);
        c.nested_members().map(|ms| {
            ms.iter()
                .map(|m| format!("{}={}", m.raw_name(), m.value().text()))
                .collect::<Vec<_>>()
        })
    };
    let one = r#"{"params":{"name":"x","_meta":{"v":"1", "c" : {"a":[1]}}}}"#;
    assert_eq!(
        nested(one),
        Some(vec!["v=\"1\"".into(), r#"c={"a":[1]}"#.into()])
    );
    // The same as the lenient walk of `_meta`'s value.
    let (c, _) = walk(one).unwrap();
    let meta = c.inner_members()[1].value();
    let walked: Vec<_> = meta.object().unwrap().collect();
    assert_eq!(c.nested_members().unwrap(), walked);
    for (text, want) in [
        (r#"{"params":{"_meta":{}}}"#, Some(vec![])),
        // Repeated: the last one, as a reader of the params sees it.
        (
            r#"{"params":{"_meta":{"a":1},"_meta":{"b":2}}}"#,
            Some(vec!["b=2".to_owned()]),
        ),
        // The last one is not an object: none.
        (r#"{"params":{"_meta":{"a":1},"_meta":3}}"#, None),
        (r#"{"params":{"_meta":"{}"}}"#, None),
        // Not a member of the params themselves.
        (r#"{"params":{"arguments":{"_meta":{"a":1}}}}"#, None),
        (r#"{"_meta":{"a":1},"params":{}}"#, None),
        // A name with escapes in the params (it may spell `_meta`): unknown.
        (r#"{"params":{"_meta":{"a":1},"\u005fmeta":{"b":2}}}"#, None),
        (r#"{"params":{"_meta":{"a":1},"n\u0061me":"x"}}"#, None),
        // Escapes inside `_meta` are its reader's business.
        (
            r#"{"params":{"_meta":{"\u0061":1}}}"#,
            Some(vec![r#"\u0061=1"#.to_owned()]),
        ),
    ] {
        assert_eq!(nested(text), want, "{text}");
    }
}

#[test]
fn valid_json_is_accepted() {
    for text in [
        "{}",
        " \t\r\n{ \t\r\n} \t\r\n",
        r#"{"a":-0,"b":0.5,"c":-1.25e+10,"d":1E-3,"e":12345678901234567890123}"#,
        r#"{"a":true,"b":false,"c":null,"d":[],"e":{},"f":[[],{}]}"#,
        r#"{"s":"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00 é ☃ 😀"}"#,
        // A lone surrogate is valid JSON text.
        r#"{"s":"\ud800"}"#,
        r#"{"\u0041":1, "a" : [ 1 , 2 ] }"#,
    ] {
        assert!(checked(text), "{text}");
    }
}

#[test]
fn invalid_json_is_refused() {
    // Valid JSON, not an object.
    for text in ["[]", "1", "\"{}\"", "null"] {
        assert!(!checked(text), "{text:?}");
    }
    for text in [
        "",
        "{",
        "{}}",
        "{} {}",
        "{}x",
        "{,}",
        r#"{"a"}"#,
        r#"{"a":}"#,
        r#"{"a" 1}"#,
        r#"{"a":1,}"#,
        r#"{"a":1 "b":2}"#,
        r#"{a:1}"#,
        r#"{'a':1}"#,
        r#"{"a":[1,]}"#,
        r#"{"a":[,1]}"#,
        r#"{"a":[1 2]}"#,
        r#"{"a":01}"#,
        r#"{"a":-}"#,
        r#"{"a":-a}"#,
        r#"{"a":1.}"#,
        r#"{"a":.5}"#,
        r#"{"a":1e}"#,
        r#"{"a":1e+}"#,
        r#"{"a":+1}"#,
        r#"{"a":0x1}"#,
        r#"{"a":NaN}"#,
        r#"{"a":tru}"#,
        r#"{"a":nul}"#,
        r#"{"a":True}"#,
        r#"{"a":"\x"}"#,
        r#"{"a":"\u12"}"#,
        r#"{"a":"\u12G4"}"#,
        r#"{"a":"\"}"#,
        "{\"a\":\"tab\there\"}",
        "{\"a\":\"nul\u{0}\"}",
        "{\"a\":\"\u{1f}\"}",
        "{\"a\u{0}\":1}",
        "\u{feff}{}",
        "{\"a\":1}\u{0}",
        // The named member's value missing at the very end (found by the
        // `jsonrpc_body` fuzz target: a read past the end).
        "{\"params\":",
        "{\"params\": ",
        "{\"x\":1,\"params\":",
    ] {
        assert!(!checked(text), "{text:?}");
        assert!(!serde_accepts(text), "{text:?}");
    }
}

#[test]
fn nesting_beyond_the_bound_is_left_to_the_slow_path() {
    let nested = |levels: usize| {
        format!(
            "{{\"a\":{}1{}}}",
            "[".repeat(levels - 1),
            "]".repeat(levels - 1)
        )
    };
    assert!(checked(&nested(MAX_DEPTH)));
    let deeper = nested(MAX_DEPTH + 1);
    assert!(serde_accepts(&deeper));
    assert!(!checked(&deeper));
}

/// The depth is how deep a value is, not how many objects and arrays came
/// before it: siblings, empty or not, each leave the depth where they
/// found it (a count that only grows would send any request with more
/// than [`MAX_DEPTH`] objects or arrays in all down the slow path).
#[test]
fn siblings_do_not_add_to_the_depth() {
    let many = MAX_DEPTH + 8;
    for sibling in ["{}", "{\"b\":1}", "[]", "[1]", "{\"c\":[{}]}"] {
        let list = vec![sibling; many].join(",");
        let members: Vec<String> = (0..many).map(|i| format!("\"m{i}\":{sibling}")).collect();
        for text in [
            format!("{{\"a\":[{list}]}}"),
            format!("{{{}}}", members.join(",")),
            format!("{{\"params\":{{{}}}}}", members.join(",")),
        ] {
            assert!(checked(&text), "{text}");
        }
    }
    // Two members each as deep as the bound allows.
    let deep = format!(
        "{}1{}",
        "[".repeat(MAX_DEPTH - 1),
        "]".repeat(MAX_DEPTH - 1)
    );
    assert!(checked(&format!("{{\"a\":{deep},\"b\":{deep}}}")));
}

#[test]
fn a_member_whose_offsets_do_not_fit_a_span_is_left_to_the_slow_path() {
    let max = u32::MAX as usize;
    let found = |start: usize| Found {
        quoted: start..start + 3,
        escaped: false,
        value_start: start + 4,
    };
    let span = found(max - 8).span(max, 0).expect("within u32");
    assert_eq!(
        span,
        Span::new(max - 8..max - 5, false, max - 4..max).unwrap()
    );
    // Offsets are taken from the inner object's start.
    assert_eq!(
        found(max + 10).span(max + 20, max),
        Span::new(10..13, false, 14..20)
    );
    assert_eq!(found(max - 8).span(max + 1, 0), None);
    assert_eq!(found(max).span(max + 8, 0), None);
}

#[test]
fn a_member_the_caller_declines_declines_the_text() {
    let text = r#"{"a":1,"b":{"c":2},"d":3}"#;
    let mut seen = Vec::new();
    let declined = object(text, None, |m| {
        seen.push(m.raw_name());
        (m.raw_name() != "b").then_some(())
    });
    assert!(declined.is_none());
    assert_eq!(seen, ["a", "b"], "the walk stops at the member declined");
}

proptest! {
    /// Every valid object within the bounds is accepted, with the members
    /// the lenient walk finds (and `serde_json` reads).
    #[test]
    fn takes_every_valid_object(
        entries in prop::collection::vec(("[a-z\"\\\\é]{0,4}", json_value()), 0..MAX_MEMBERS),
        gaps in prop::collection::vec(any::<u8>(), 1..8),
    ) {
        let map: serde_json::Map<String, Value> = entries.into_iter().collect();
        let text = mcp_test_support::json::spaced(&Value::Object(map).to_string(), &gaps);
        let found = walk(&text);
        prop_assert!(found.is_some(), "{}", text);
        let (_, found) = found.unwrap();
        let walked: Vec<_> = Valid::assume(&text).object().unwrap().collect();
        prop_assert_eq!(found, walked);
    }

    /// A valid text broken in one place (a byte dropped, replaced or
    /// added) is accepted only if `serde_json` still accepts it.
    #[test]
    fn never_takes_what_serde_json_refuses(
        value in json_value(),
        at in any::<prop::sample::Index>(),
        edit in 0u8..3,
        byte in prop::sample::select(
            b"{}[]\",:\\ \t\n\r0123456789-+.eEtrufalsn\x00\x1fux".to_vec()
        ),
    ) {
        let text = serde_json::json!({ "v": value, "params": {"k": value} }).to_string();
        let mut bytes = text.into_bytes();
        let i = at.index(bytes.len());
        match edit {
            0 => { bytes.remove(i); }
            1 => bytes[i] = byte,
            _ => bytes.insert(i, byte),
        }
        if let Ok(text) = String::from_utf8(bytes) {
            checked(&text);
        }
    }

    /// Short texts over JSON's punctuation: the same.
    #[test]
    fn never_takes_what_serde_json_refuses_in_short_texts(
        text in "\\{[{}\\[\\]\",:\\\\ 0-9.eE+\\-tfnrulsa\\x00\\x1f]{0,24}"
    ) {
        checked(&text);
    }
}
