//! Calling tools without knowing them: arguments made up from each tool's
//! `inputSchema`. Used by `initialize`, `tools_call`, `sse-retry`,
//! `elicitation-sep1034-client-defaults`, `request-metadata`,
//! `sep-2322-client-request-state` and `http-invalid-tool-headers` (call
//! every tool listed, in order) and by the generic default (the first tool).

use serde_json::{Map, Value, json};

use super::session::Session;

/// Lists the tools and calls each, in the order listed.
pub async fn call_every_tool(session: &Session) -> Result<(), String> {
    for tool in session.tools().await? {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        session.call_tool(name, arguments_for(&tool)).await?;
    }
    Ok(())
}

/// Lists the tools and calls the first one, if any.
pub async fn call_first_tool(session: &Session) -> Result<(), String> {
    let tools = session.tools().await?;
    let Some(tool) = tools.first() else {
        eprintln!("conformance-client: the server lists no tools; nothing to call");
        return Ok(());
    };
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("tools/list: the first tool has no name: {tool}"))?;
    session.call_tool(name, arguments_for(tool)).await?;
    Ok(())
}

/// Arguments for a tool: a value for each required property of its
/// `inputSchema` ([`sample`]); optional properties are left out.
pub fn arguments_for(tool: &Value) -> Map<String, Value> {
    let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut arguments = Map::new();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    for name in required {
        let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        arguments.insert(name.to_owned(), sample(property));
    }
    arguments
}

/// A value a property schema accepts: its `default`, `const` or first
/// `enum` value, else one of its (first) `type`.
pub fn sample(property: &Value) -> Value {
    for key in ["default", "const"] {
        if let Some(v) = property.get(key) {
            return v.clone();
        }
    }
    if let Some(first) = property
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let ty = match property.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => "string",
    };
    let minimum = property.get("minimum").and_then(Value::as_f64);
    match ty {
        "integer" => json!(minimum.map_or(2, |m| m.ceil() as i64)),
        "number" => json!(minimum.unwrap_or(3.0)),
        "boolean" => json!(true),
        "object" => json!({}),
        "array" => json!([]),
        "null" => Value::Null,
        _ => json!("conformance"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_properties_get_values_of_their_type() {
        let tool = json!({
            "name": "add_numbers",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"type": "number"},
                    "b": {"type": "integer", "minimum": 10},
                    "mode": {"type": "string", "enum": ["fast", "slow"]},
                    "flag": {"type": ["null", "boolean"]},
                    "label": {"type": "string", "default": "x"},
                    "optional": {"type": "string"},
                    "o": {"type": "object"},
                    "l": {"type": "array"},
                    "z": {"type": "null"},
                    "k": {"type": "integer", "const": 7},
                    "i": {"type": "integer"}
                },
                "required": ["a", "b", "mode", "flag", "label", "missing", "o", "l", "z", "k", "i"]
            }
        });
        assert_eq!(
            Value::Object(arguments_for(&tool)),
            json!({
                "a": 3.0, "b": 10, "mode": "fast", "flag": true, "label": "x", "missing": "conformance",
                "o": {}, "l": [], "z": null, "k": 7, "i": 2
            })
        );
        assert!(arguments_for(&json!({"name": "bare"})).is_empty());
    }
}
