//! The SEP-2243 header scenarios (2026-07-28): the transport mirrors the
//! method, the name and the `x-mcp-header` arguments into `Mcp-Method`,
//! `Mcp-Name` and `Mcp-Param-*`; these only make it send one request of each
//! kind the mock checks.

use serde_json::{Map, Value, json};

use super::session::Session;
use super::tools;

/// `http-standard-headers`: every tool called, every resource read, every
/// prompt fetched (`Mcp-Method` on each, `Mcp-Name` on `tools/call`,
/// `resources/read` and `prompts/get`).
pub async fn standard_headers(session: &Session) -> Result<(), String> {
    tools::call_every_tool(session).await?;
    for resource in session.list("resources/list", "resources").await? {
        let Some(uri) = resource.get("uri").and_then(Value::as_str) else {
            continue;
        };
        session
            .request("resources/read", Some(json!({ "uri": uri })))
            .await?;
        eprintln!("conformance-client: read {uri}");
    }
    for prompt in session.list("prompts/list", "prompts").await? {
        let Some(name) = prompt.get("name").and_then(Value::as_str) else {
            continue;
        };
        session
            .request(
                "prompts/get",
                Some(json!({ "name": name, "arguments": prompt_arguments(&prompt) })),
            )
            .await?;
        eprintln!("conformance-client: got prompt {name}");
    }
    Ok(())
}

/// A value for each required argument of a prompt (prompt arguments are
/// strings).
fn prompt_arguments(prompt: &Value) -> Map<String, Value> {
    prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a.get("required") == Some(&Value::Bool(true)))
        .filter_map(|a| a.get("name").and_then(Value::as_str))
        .map(|name| (name.to_owned(), json!("conformance")))
        .collect()
}

/// One tool call the scenario's context asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
}

/// The `toolCalls` of a scenario context (`MCP_CONFORMANCE_CONTEXT`).
pub fn tool_calls(context: Option<&Value>) -> Result<Vec<ToolCall>, String> {
    let Some(calls) = context.and_then(|c| c.get("toolCalls")) else {
        return Ok(Vec::new());
    };
    let calls = calls
        .as_array()
        .ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT: toolCalls is not a list: {calls}"))?;
    calls
        .iter()
        .map(|call| {
            let name = call
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT: a tool call has no name: {call}"))?;
            let arguments = match call.get("arguments") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(a)) => a.clone(),
                Some(other) => {
                    return Err(format!(
                        "MCP_CONFORMANCE_CONTEXT: the arguments of {name} are not an object: {other}"
                    ));
                }
            };
            Ok(ToolCall {
                name: name.to_owned(),
                arguments,
            })
        })
        .collect()
}

/// `http-custom-headers`: `tools/list` first (the `x-mcp-header`
/// annotations the `Mcp-Param-*` headers come from), then each call of the
/// context with its exact arguments; without a context, every tool.
pub async fn custom_headers(session: &Session, context: Option<&Value>) -> Result<(), String> {
    let calls = tool_calls(context)?;
    if calls.is_empty() {
        eprintln!("conformance-client: no toolCalls in the context; calling every tool");
        return tools::call_every_tool(session).await;
    }
    session.tools().await?;
    for call in calls {
        session.call_tool(&call.name, call.arguments).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_tool_calls_are_read_exactly() {
        let context = json!({
            "name": "http-custom-headers",
            "toolCalls": [
                {"name": "a", "arguments": {"region": "us-west1", "verbose": null, "tab_val": "\tx"}},
                {"name": "b"}
            ]
        });
        let calls = tool_calls(Some(&context)).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            Value::Object(calls[0].arguments.clone()),
            json!({"region": "us-west1", "verbose": null, "tab_val": "\tx"})
        );
        assert!(calls[1].arguments.is_empty());
        assert!(tool_calls(None).unwrap().is_empty());
        assert!(tool_calls(Some(&json!({"toolCalls": {}}))).is_err());
        assert!(tool_calls(Some(&json!({"toolCalls": [{"arguments": {}}]}))).is_err());
    }

    #[test]
    fn required_prompt_arguments_only() {
        let prompt = json!({"name": "p", "arguments": [
            {"name": "topic", "required": true},
            {"name": "style"}
        ]});
        assert_eq!(
            Value::Object(prompt_arguments(&prompt)),
            json!({"topic": "conformance"})
        );
    }
}
