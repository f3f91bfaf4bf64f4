//! The result decoration tested harder: on any result object (members
//! spaced, repeated, escaped; `resultType`, the caching hints and `_meta`
//! present or not, `_meta` an object or not, with or without its own
//! `serverInfo`), the splice into the text ([`splice`]) and the general
//! path ([`rebuild`], a map parsed and serialized again) give the same
//! JSON, and what [`complete_into`] writes is that JSON. The splice is
//! hand-written (it keeps the handler's bytes and avoids a parse), so it
//! is checked against the obvious version on inputs no one wrote by hand.

use mcp_test_support::json::spaced;
use proptest::prelude::*;
use serde_json::Value;

use super::*;

/// Names a result may carry, the decorated ones also written with an
/// escape (which the splice leaves to the general path).
const NAMES: [&str; 9] = [
    "content",
    "tools",
    "resultType",
    "ttlMs",
    "cacheScope",
    "_meta",
    "r\\u0065sultType",
    "_m\\u0065ta",
    "isError",
];

/// `_meta` member names: the one the decoration adds, escaped or not, and
/// others.
const META_NAMES: [&str; 4] = [
    "io.modelcontextprotocol/serverInfo",
    "io.modelcontextprotocol/serverInf\\u006f",
    "x",
    "a.b/c",
];

fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"complete\"".to_owned()),
        Just("\"input_required\"".to_owned()),
        Just("\"c\\u006fmplete\"".to_owned()),
        Just("\"public\"".to_owned()),
        any::<i32>().prop_map(|n| n.to_string()),
        Just("null".to_owned()),
        Just("true".to_owned()),
        "[a-z\"\\\\{}]{0,6}".prop_map(|s| Value::from(s).to_string()),
    ]
}

fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((prop::sample::select(&META_NAMES[..]), inner), 0..3)
                .prop_map(|m| object(&m)),
        ]
    })
}

fn object(members: &[(&str, String)]) -> String {
    let inner: Vec<String> = members
        .iter()
        .map(|(n, v)| format!("\"{n}\":{v}"))
        .collect();
    format!("{{{}}}", inner.join(","))
}

/// A result's text: its members, with whitespace from `gaps` around the
/// structural characters outside strings.
fn result() -> impl Strategy<Value = String> {
    let member = (prop::sample::select(&NAMES[..]), value());
    (
        prop::collection::vec(member, 0..6),
        prop::collection::vec(0u8..5, 1..8),
    )
        .prop_map(|(members, gaps)| spaced(&object(&members), &gaps))
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn the_splice_is_the_general_path(
        text in result(),
        method in prop::sample::select(&["tools/call", "tools/list", "resources/read"][..]),
        with_info in any::<bool>(),
    ) {
        let input = RawValue::from_string(text.clone()).unwrap();
        let info = RawValue::from_string(r#"{"name":"s","version":"1"}"#.to_owned()).unwrap();
        let deco = Decoration {
            server_info: with_info.then_some(&*info),
            ttl_ms: 5,
            scope: CacheScope::Private,
        };
        let general = parsed(rebuild(&input, method, &deco).unwrap().get());
        let mut out = String::from("[");
        if splice(&input, method, &deco, &mut out) {
            prop_assert_eq!(parsed(&out[1..]), general.clone(), "spliced {}", text);
        } else {
            prop_assert_eq!(out, "[", "a refused splice leaves the text alone");
        }
        let mut written = String::new();
        complete_into(&input, method, &deco, &mut written).unwrap();
        prop_assert_eq!(parsed(&written), general, "written for {}", text);
    }
}
