//! The JSON Schema scenarios: a tool's `inputSchema` is data the client
//! keeps as sent. No `$ref` is resolved (SEP-2106: implementations "MUST
//! NOT automatically dereference" network `$ref`s; this client fetches
//! nothing a schema names) and no keyword is dropped (SEP-1613: 2020-12
//! keywords such as `$schema`, `$defs`, `additionalProperties`, `$anchor`,
//! `allOf`/`anyOf`, `if`/`then`/`else` survive): the transports keep results
//! as raw JSON and this client reads them as untyped JSON values.

use serde_json::{Map, Value};

use super::session::Session;

/// The tool whose `inputSchema` `json-schema-2020-12-preservation` checks.
pub const FOCAL_TOOL: &str = "json_schema_2020_12_tool";
/// The tool that echoes a schema back to the mock.
pub const ECHO_TOOL: &str = "json_schema_echo";

/// `json-schema-ref-no-deref`: lists the tools and nothing else (calling
/// them would not change what is checked: whether the `$ref` URL is
/// fetched); the `$ref`s are logged as received.
pub async fn list_without_dereferencing(session: &Session) -> Result<(), String> {
    for tool in session.tools().await? {
        let mut refs = Vec::new();
        collect_refs(tool.get("inputSchema").unwrap_or(&Value::Null), &mut refs);
        if !refs.is_empty() {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
            eprintln!(
                "conformance-client: tool {name} has $ref {} (kept, not dereferenced)",
                refs.join(", ")
            );
        }
    }
    Ok(())
}

/// Every `$ref` value in a schema.
fn collect_refs(node: &Value, out: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    _ => collect_refs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// `json-schema-2020-12-preservation`: lists the tools and sends the focal
/// tool's `inputSchema`, exactly as received, to the echo tool.
pub async fn echo_schema(session: &Session) -> Result<(), String> {
    let tools = session.tools().await?;
    let schema = tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(FOCAL_TOOL))
        .and_then(|t| t.get("inputSchema"))
        .ok_or_else(|| format!("tools/list has no {FOCAL_TOOL} with an inputSchema"))?;
    if !tools
        .iter()
        .any(|t| t.get("name").and_then(Value::as_str) == Some(ECHO_TOOL))
    {
        return Err(format!("tools/list has no {ECHO_TOOL}"));
    }
    let mut arguments = Map::new();
    arguments.insert("schema".into(), schema.clone());
    session.call_tool(ECHO_TOOL, arguments).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_are_collected_not_followed() {
        let mut refs = Vec::new();
        collect_refs(
            &json!({
                "properties": {"id": {"$ref": "#/$defs/userId"}, "p": {"$ref": "http://x/s.json"}},
                "allOf": [{"$ref": "#a"}],
                "default": {"$ref": 1}
            }),
            &mut refs,
        );
        refs.sort();
        assert_eq!(refs, ["#/$defs/userId", "#a", "http://x/s.json"]);
    }
}
