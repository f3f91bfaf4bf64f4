//! The conformance client's answers to the server's requests for input.
//!
//! The suite's mock servers ask for elicitation (a legacy server-to-client
//! `elicitation/create` request, or an MRTR `inputRequests` entry on
//! 2026-07-28) and expect a client that accepts. The answer applies the
//! requested schema's defaults (SEP-1034, 2025-11-25 *Elicitation*,
//! "Requested Schema": a primitive may carry a `default`, and clients
//! "SHOULD pre-populate" form fields with it): every property with a
//! `default` gets it, every other *required* property a placeholder of its
//! type, and optional properties without a default are left out. URL-mode
//! elicitations (nothing to fill in, a page to open) are declined.

use async_trait::async_trait;
use mcp_transport_core::jsonrpc::{ErrorObject, to_raw};
use mcp_transport_core::transport::InputHandler;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// Accepts every form elicitation with the schema's defaults (see the
/// [module docs](self)); declines URL elicitations; refuses other methods
/// with `-32601`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConformanceInput;

#[async_trait]
impl InputHandler for ConformanceInput {
    async fn handle(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match method {
            "elicitation/create" => {
                let params: Value = match params {
                    Some(raw) => serde_json::from_str(raw.get()).map_err(|e| {
                        ErrorObject::new(-32602, format!("elicitation/create params: {e}"))
                    })?,
                    None => Value::Null,
                };
                to_raw(&elicitation_answer(&params)).map_err(ErrorObject::internal)
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

/// The `ElicitResult` for `elicitation/create` params.
pub fn elicitation_answer(params: &Value) -> Value {
    if params.get("mode").and_then(Value::as_str) == Some("url") {
        return json!({ "action": "decline" });
    }
    let content = params
        .get("requestedSchema")
        .map(content_with_defaults)
        .unwrap_or_default();
    json!({ "action": "accept", "content": content })
}

/// The content of an accepted form: defaults, then placeholders for the
/// required properties still missing.
pub fn content_with_defaults(schema: &Value) -> Map<String, Value> {
    let mut content = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return content;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default") {
            content.insert(name.clone(), default.clone());
        }
    }
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    for name in required {
        if content.contains_key(name) {
            continue;
        }
        if let Some(value) = properties.get(name).and_then(placeholder) {
            content.insert(name.to_owned(), value);
        }
    }
    content
}

/// A value a primitive elicitation property accepts: its first `enum`
/// value (or `oneOf` `const`), else one of its type (`minimum` respected).
fn placeholder(property: &Value) -> Option<Value> {
    if let Some(first) = property
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return Some(first.clone());
    }
    if let Some(first) = property
        .get("oneOf")
        .and_then(Value::as_array)
        .and_then(|o| o.first())
        .and_then(|o| o.get("const"))
    {
        return Some(first.clone());
    }
    let minimum = property.get("minimum").and_then(Value::as_f64);
    match property.get("type").and_then(Value::as_str)? {
        "string" => Some(json!("conformance")),
        "boolean" => Some(json!(true)),
        "integer" => Some(json!(minimum.map_or(1, |m| m.ceil() as i64))),
        "number" => Some(json!(minimum.unwrap_or(1.0))),
        "array" => Some(json!([])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema of the suite's `elicitation-sep1034-client-defaults`.
    fn sep1034_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true}
            },
            "required": []
        })
    }

    #[test]
    fn defaults_are_applied_for_every_omitted_field() {
        let answer = elicitation_answer(&json!({
            "message": "accept with defaults",
            "requestedSchema": sep1034_schema()
        }));
        assert_eq!(
            answer,
            json!({"action": "accept", "content": {
                "name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true
            }})
        );
    }

    #[test]
    fn required_fields_without_default_get_a_placeholder_optional_ones_none() {
        let content = content_with_defaults(&json!({
            "type": "object",
            "properties": {
                "confirmed": {"type": "boolean"},
                "color": {"type": "string", "enum": ["red", "blue"]},
                "count": {"type": "integer", "minimum": 3},
                "note": {"type": "string"},
                "name": {"type": "string"},
                "ratio": {"type": "number"},
                "floor": {"type": "number", "minimum": 0.5},
                "tags": {"type": "array"},
                "size": {"type": "integer"},
                "tier": {"type": "string", "oneOf": [{"const": "gold", "title": "Gold"}]},
                "object": {"type": "object"}
            },
            "required": ["color", "count", "confirmed", "name", "ratio", "floor", "tags", "size", "tier", "object"]
        }));
        assert_eq!(
            Value::Object(content),
            json!({
                "confirmed": true, "color": "red", "count": 3, "name": "conformance",
                "ratio": 1.0, "floor": 0.5, "tags": [], "size": 1, "tier": "gold"
            }),
            "no placeholder for a type a form cannot hold (object)"
        );
    }

    #[test]
    fn url_mode_is_declined_and_other_methods_refused() {
        assert_eq!(
            elicitation_answer(&json!({"mode": "url", "url": "https://example.com"})),
            json!({"action": "decline"})
        );
        let refused = futures_util::FutureExt::now_or_never(
            ConformanceInput.handle("sampling/createMessage", None),
        )
        .expect("ready");
        assert_eq!(refused.unwrap_err().code, -32601);
    }

    #[test]
    fn params_too_deep_to_read_are_invalid_params() {
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(200), "]".repeat(200));
        let raw = RawValue::from_string(deep).expect("valid JSON");
        let refused = futures_util::FutureExt::now_or_never(
            ConformanceInput.handle("elicitation/create", Some(&raw)),
        )
        .expect("ready");
        assert_eq!(refused.unwrap_err().code, -32602);
    }
}
