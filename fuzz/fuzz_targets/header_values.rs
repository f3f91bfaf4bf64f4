//! The 2026-07-28 header value decoders (*Streamable HTTP*, "Value
//! Encoding", and the `x-mcp-header` machinery): never panic; any string
//! survives `encode_value` → `decode_value`; a plain value decodes to
//! itself; `x-mcp-header` annotations give valid header names; a body
//! value always matches its own header rendering; checking headers with
//! arbitrary values answers -32020 or accepts, never anything else.
//!
//! Input: byte 0 selects the part, the rest is its input.
#![no_main]

use http::{HeaderMap, HeaderName, HeaderValue};
use libfuzzer_sys::fuzz_target;
use mcp_rev_2026_07_28::headers::{decode_value, encode_value, is_plain_safe};
use mcp_rev_2026_07_28::server::fuzzing;
use serde_json::Value;

fuzz_target!(|input: &[u8]| {
    let Some((&selector, data)) = input.split_first() else {
        return;
    };
    match selector % 4 {
        0 => sentinel(data),
        1 => {
            if let Ok(text) = std::str::from_utf8(data) {
                round_trip(text);
            }
        }
        2 => annotations(data),
        _ => matches(data),
    }
});

/// `decode_value` on raw header bytes.
fn sentinel(raw: &[u8]) {
    if let Ok(value) = decode_value(raw) {
        let text = std::str::from_utf8(raw).expect("accepted bytes are ASCII");
        let encoded = text.starts_with("=?base64?") && text.ends_with("?=") && text.len() >= 11;
        if !encoded {
            assert_eq!(value, text, "a plain value must decode to itself");
        }
    }
}

/// Any string: encoded, it is a valid header value and decodes back.
fn round_trip(text: &str) {
    let encoded = encode_value(text);
    assert!(
        HeaderValue::from_str(&encoded).is_ok(),
        "{encoded:?} is not a header value"
    );
    if is_plain_safe(text) {
        assert_eq!(encoded, text);
    }
    assert_eq!(decode_value(encoded.as_bytes()).as_deref(), Ok(text));
}

/// An arbitrary JSON schema's `x-mcp-header` annotations.
fn annotations(data: &[u8]) {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(params) = fuzzing::header_params(&schema) {
        for (name, header, _path) in &params {
            assert!(!name.is_empty());
            assert!(HeaderName::from_bytes(header.as_bytes()).is_ok());
            assert_eq!(header, &format!("mcp-param-{}", name.to_ascii_lowercase()));
        }
    }
}

/// A header value against a body value, and a full check.
fn matches(data: &[u8]) {
    // `header NUL body-json`.
    let Some(split) = data.iter().position(|&b| b == 0) else {
        return;
    };
    let (header, body) = (&data[..split], &data[split + 1..]);
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    if let Ok(header) = std::str::from_utf8(header) {
        let _ = fuzzing::value_matches(header, &body);
    }
    // A body value matches its own rendering.
    let own = match &body {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    if let Some(own) = &own {
        assert_eq!(
            fuzzing::value_matches(own, &body),
            Ok(true),
            "{own:?} vs {body}"
        );
    }
    // The full check, with the header (raw bytes) on a one-argument tool.
    // (An annotated property has one primitive type: integer, string or boolean.)
    let kind = match &body {
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "integer",
        _ => return,
    };
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"v": {"type": kind, "x-mcp-header": "V"}}
    });
    let arguments = serde_json::json!({ "v": body });
    let mut headers = HeaderMap::new();
    if let Ok(value) = HeaderValue::from_bytes(header) {
        headers.insert("mcp-param-v", value);
    }
    match fuzzing::check_param_headers(&headers, &schema, Some(&arguments)) {
        Ok(()) => {}
        Err((code, _)) => assert_eq!(code, -32020),
    }
    // Its own encoded rendering is always accepted.
    if let Some(own) = own {
        let mut headers = HeaderMap::new();
        headers.insert(
            "mcp-param-v",
            HeaderValue::from_str(&encode_value(&own)).unwrap(),
        );
        assert_eq!(
            fuzzing::check_param_headers(&headers, &schema, Some(&arguments)),
            Ok(()),
            "{own:?}"
        );
    }
}
