//! Properties of `Mcp-Param-*` extraction: whatever the argument, the header
//! value is a valid HTTP field value that decodes back to the body's value
//! (*Streamable HTTP*, "Value Encoding"; servers compare decoded headers
//! with the body).

use mcp_rev_2026_07_28::client::tool_cache::{header_params, param_headers};
use mcp_rev_2026_07_28::headers::decode_value;
use proptest::prelude::*;
use serde_json::json;

fn schema() -> serde_json::Value {
    json!({"type": "object", "properties": {
        "s": {"type": "string", "x-mcp-header": "S"},
        "i": {"type": "integer", "x-mcp-header": "I"},
        "o": {"type": "object", "properties": {"b": {"type": "boolean", "x-mcp-header": "B"}}}
    }})
}

proptest! {
    #[test]
    fn headers_are_valid_and_decode_to_the_body_value(s in any::<String>(), i in any::<i64>(), b in any::<bool>()) {
        let params = header_params(&schema()).unwrap();
        let args = json!({"s": s, "i": i, "o": {"b": b}});
        let headers = param_headers(&params, Some(&args));
        prop_assert_eq!(headers.len(), 3);
        for (name, value) in &headers {
            prop_assert!(http::HeaderName::from_bytes(name.as_bytes()).is_ok());
            prop_assert!(http::HeaderValue::from_str(value).is_ok());
            let decoded = decode_value(value.as_bytes()).unwrap();
            let expected = match name.as_str() {
                "Mcp-Param-S" => s.clone(),
                "Mcp-Param-I" => i.to_string(),
                "Mcp-Param-B" => b.to_string(),
                other => panic!("{other}"),
            };
            prop_assert_eq!(decoded, expected);
        }
    }

    #[test]
    fn any_annotation_name_is_accepted_only_as_a_token(name in "\\PC{0,12}") {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": name}}});
        let valid = header_params(&schema).is_ok();
        let token = !name.is_empty()
            && http::HeaderName::from_bytes(format!("Mcp-Param-{name}").as_bytes()).is_ok()
            && name.bytes().all(|c| c.is_ascii_graphic() && !b"\"(),/:;<=>?@[\\]{}".contains(&c));
        prop_assert_eq!(valid, token, "{:?}", name);
    }
}
