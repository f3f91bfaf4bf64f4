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
    for line in session.tools().await?.iter().filter_map(refs_kept) {
        eprintln!("conformance-client: {line}");
    }
    Ok(())
}

/// The log line for a tool whose `inputSchema` holds `$ref`s, as
/// received; `None` for a tool without any.
fn refs_kept(tool: &Value) -> Option<String> {
    let mut refs = Vec::new();
    collect_refs(tool.get("inputSchema").unwrap_or(&Value::Null), &mut refs);
    if refs.is_empty() {
        return None;
    }
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
    Some(format!(
        "tool {name} has $ref {} (kept, not dereferenced)",
        refs.join(", ")
    ))
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
    let arguments = echo_arguments(&session.tools().await?)?;
    session.call_tool(ECHO_TOOL, arguments).await?;
    Ok(())
}

/// The echo tool's arguments: the focal tool's `inputSchema` as `schema`.
/// A list without either tool is an error naming it.
fn echo_arguments(tools: &[Value]) -> Result<Map<String, Value>, String> {
    let named = |name: &str| {
        tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
    };
    let schema = named(FOCAL_TOOL)
        .and_then(|t| t.get("inputSchema"))
        .ok_or_else(|| format!("tools/list has no {FOCAL_TOOL} with an inputSchema"))?;
    if named(ECHO_TOOL).is_none() {
        return Err(format!("tools/list has no {ECHO_TOOL}"));
    }
    let mut arguments = Map::new();
    arguments.insert("schema".into(), schema.clone());
    Ok(arguments)
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

    #[test]
    fn a_tool_with_refs_is_logged_with_them_and_one_without_is_not() {
        let with =
            json!({"name": "t", "inputSchema": {"properties": {"a": {"$ref": "#/$defs/a"}}}});
        assert_eq!(
            refs_kept(&with).as_deref(),
            Some("tool t has $ref #/$defs/a (kept, not dereferenced)")
        );
        assert_eq!(refs_kept(&json!({"name": "u", "inputSchema": {}})), None);
        assert_eq!(refs_kept(&json!({"name": "v"})), None);
    }

    #[test]
    fn the_echo_needs_both_tools_and_sends_the_focal_schema() {
        let focal = json!({"name": FOCAL_TOOL, "inputSchema": {"$defs": {}}});
        let echo = json!({"name": ECHO_TOOL, "inputSchema": {"type": "object"}});
        let other = json!({"name": "other", "inputSchema": {"type": "string"}});
        let arguments = echo_arguments(&[other.clone(), echo.clone(), focal.clone()]).unwrap();
        assert_eq!(Value::Object(arguments), json!({"schema": {"$defs": {}}}));
        let err = echo_arguments(&[other.clone(), focal]).unwrap_err();
        assert!(err.contains(ECHO_TOOL), "{err}");
        let err = echo_arguments(&[other, echo]).unwrap_err();
        assert!(err.contains(FOCAL_TOOL), "{err}");
    }
}
