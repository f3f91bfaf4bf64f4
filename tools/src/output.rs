//! What a tool returns: its result types ([`IntoToolResult`]), structured
//! results ([`Json`]), hand-built results ([`CallToolResult`]) and the ways
//! a tool stops early ([`ToolError`]).

use mcp_transport_core::handler::{InputRequired, Outcome};
use mcp_transport_core::jsonrpc::ErrorObject;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use crate::revision::ToolRules;
use crate::schema::Schemas;

/// JSON-RPC code of a cancelled request, as the reference tools answer it.
pub const REQUEST_CANCELLED: i64 = -32800;

/// What a tool produced, before the revision shapes it (see
/// [`Reply::into_outcome`]).
#[derive(Debug)]
pub enum Reply {
    /// A complete `CallToolResult`.
    Result(CallToolResult),
    /// A structured value: `structuredContent` (and its JSON as text) where
    /// the revision has structured results, text only otherwise.
    Structured(Value),
    /// The arguments were invalid: a tool execution error or `-32602`,
    /// depending on the revision ([`ToolRules::invalid_arguments_are_tool_errors`]).
    InvalidArguments(String),
    /// An outcome passed through as is (a JSON-RPC error, input required).
    Outcome(Outcome),
}

impl Reply {
    /// The outcome this reply is on `rules`' revision.
    pub fn into_outcome(self, rules: &ToolRules) -> Outcome {
        match self {
            Reply::Result(r) => Outcome::json(&r.wire(rules)),
            Reply::Structured(v) => {
                let text = serde_json::to_string(&v).unwrap_or_default();
                let r = CallToolResult::text(text).with_structured(v);
                Outcome::json(&r.wire(rules))
            }
            Reply::InvalidArguments(message) if rules.invalid_arguments_are_tool_errors => {
                Outcome::json(&CallToolResult::error(message).wire(rules))
            }
            Reply::InvalidArguments(message) => {
                Outcome::Error(ErrorObject::invalid_params(message))
            }
            Reply::Outcome(o) => o,
        }
    }
}

/// A `CallToolResult` built by hand: content blocks (as the revision's
/// JSON), optional structured content, `isError`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallToolResult {
    /// The content blocks (`{"type": "text", "text": ...}`, images, ...).
    pub content: Vec<Value>,
    /// `structuredContent`; dropped on revisions without it (2025-03-26),
    /// and when it is not an object on 2025-06-18 and 2025-11-25 (their
    /// `schema.ts`: `structuredContent?: { [key: string]: unknown }`;
    /// 2026-07-28: any JSON value).
    pub structured: Option<Value>,
    /// `isError`.
    pub is_error: bool,
}

impl CallToolResult {
    /// A result with these content blocks.
    pub fn new(content: Vec<Value>) -> Self {
        CallToolResult {
            content,
            ..Self::default()
        }
    }

    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![text_block(text)])
    }

    /// A tool execution error (`isError: true`) with one text block.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: true,
            ..Self::text(text)
        }
    }

    /// Adds `structuredContent`.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// The result's JSON on `rules`' revision.
    pub fn to_value(&self, rules: &ToolRules) -> Value {
        serde_json::to_value(self.wire(rules)).unwrap_or_else(|_| unreachable!("JSON values serialize"))
    }

    /// The result as it is serialized on `rules`' revision, borrowed (no
    /// JSON tree built for an answer written once).
    fn wire<'a>(&'a self, rules: &ToolRules) -> Wire<'a> {
        Wire {
            content: &self.content,
            is_error: self.is_error,
            structured: self
                .structured
                .as_ref()
                .filter(|s| rules.structured && (s.is_object() || rules.structured_any)),
        }
    }
}

/// A `CallToolResult` on the wire, members in the order a JSON object
/// built with `json!` has them (sorted), so both paths write the same text.
#[derive(Serialize)]
struct Wire<'a> {
    content: &'a [Value],
    #[serde(rename = "isError", skip_serializing_if = "std::ops::Not::not")]
    is_error: bool,
    #[serde(rename = "structuredContent", skip_serializing_if = "Option::is_none")]
    structured: Option<&'a Value>,
}

/// A text content block.
pub fn text_block(text: impl Into<String>) -> Value {
    json!({ "type": "text", "text": text.into() })
}

/// A structured tool result: `T` is serialized into `structuredContent`
/// (with its JSON in a text block too, for clients that read only content:
/// *Tools*, "Structured Content": "a tool that returns structured content
/// SHOULD also return the serialized JSON in a TextContent block"), and the
/// tool's `outputSchema` is generated from `T`. On 2025-03-26, which has
/// neither, only the text block is sent.
#[derive(Clone, Debug, PartialEq)]
pub struct Json<T>(pub T);

/// Why a tool stopped without a result of its own.
#[derive(Debug)]
pub enum ToolError {
    /// A tool execution error: `isError: true` with this text (*Tools*,
    /// "Error Handling": API failures, business logic errors).
    Failed(String),
    /// The arguments are invalid beyond what their type checks (a value out
    /// of range): reported as the revision says, like a type mismatch.
    InvalidArguments(String),
    /// A JSON-RPC error instead of a result.
    Rpc(ErrorObject),
    /// The request was cancelled: `-32800 Request cancelled` (nothing is
    /// sent after a cancellation anyway).
    Cancelled,
    /// The tool needs client input first; it is called again with the
    /// answers (see `Outcome::InputRequired`).
    InputRequired(InputRequired),
}

impl ToolError {
    /// A tool execution error with this text.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }

    /// Invalid arguments, with this reason.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::InvalidArguments(message.into())
    }
}

impl From<ErrorObject> for ToolError {
    fn from(e: ErrorObject) -> Self {
        ToolError::Rpc(e)
    }
}

/// Anything a tool function may return.
pub trait IntoToolResult: Send + 'static {
    /// The tool's output schema, when its result is structured.
    fn output_schema() -> Option<Schemas> {
        None
    }

    /// The reply, before the revision shapes it.
    fn into_reply(self) -> Reply;
}

impl IntoToolResult for String {
    fn into_reply(self) -> Reply {
        Reply::Result(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_reply(self) -> Reply {
        Reply::Result(CallToolResult::text(self))
    }
}

impl IntoToolResult for CallToolResult {
    fn into_reply(self) -> Reply {
        Reply::Result(self)
    }
}

impl IntoToolResult for Outcome {
    fn into_reply(self) -> Reply {
        Reply::Outcome(self)
    }
}

impl<T: Serialize + JsonSchema + Send + 'static> IntoToolResult for Json<T> {
    fn output_schema() -> Option<Schemas> {
        Some(Schemas::output::<T>())
    }

    fn into_reply(self) -> Reply {
        match serde_json::to_value(&self.0) {
            Ok(v) => Reply::Structured(v),
            Err(e) => Reply::Outcome(Outcome::Error(ErrorObject::internal(e))),
        }
    }
}

impl<T: IntoToolResult> IntoToolResult for Result<T, ToolError> {
    fn output_schema() -> Option<Schemas> {
        T::output_schema()
    }

    fn into_reply(self) -> Reply {
        match self {
            Ok(v) => v.into_reply(),
            Err(ToolError::Failed(m)) => Reply::Result(CallToolResult::error(m)),
            Err(ToolError::InvalidArguments(m)) => Reply::InvalidArguments(m),
            Err(ToolError::Rpc(e)) => Reply::Outcome(Outcome::Error(e)),
            Err(ToolError::Cancelled) => Reply::Outcome(Outcome::Error(ErrorObject::new(
                REQUEST_CANCELLED,
                "Request cancelled",
            ))),
            Err(ToolError::InputRequired(ir)) => Reply::Outcome(Outcome::InputRequired(ir)),
        }
    }
}

#[cfg(test)]
mod tests {
    use mcp_transport_core::ProtocolVersion;

    use super::*;

    /// The result as a JSON tree built member by member, as it was before
    /// [`Wire`]: the text written must not change.
    fn tree(r: &CallToolResult, rules: &ToolRules) -> Value {
        let mut v = json!({ "content": r.content });
        if let Some(s) = &r.structured
            && rules.structured
            && (s.is_object() || rules.structured_any)
        {
            v["structuredContent"] = s.clone();
        }
        if r.is_error {
            v["isError"] = true.into();
        }
        v
    }

    #[test]
    fn a_result_is_written_as_its_json_tree_would_be_on_every_revision() {
        let results = [
            CallToolResult::text("5"),
            CallToolResult::error("no"),
            CallToolResult::text("{}").with_structured(json!({"sum": 5})),
            CallToolResult::text("[1]").with_structured(json!([1])),
            CallToolResult {
                is_error: true,
                ..CallToolResult::text("x").with_structured(json!({"e": 1}))
            },
            CallToolResult::new(vec![]),
        ];
        for version in ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] {
            let rules = ToolRules::of(&ProtocolVersion::parse(version));
            for r in &results {
                let want = serde_json::to_string(&tree(r, &rules)).unwrap();
                assert_eq!(serde_json::to_string(&r.wire(&rules)).unwrap(), want, "{version}");
                assert_eq!(serde_json::to_string(&r.to_value(&rules)).unwrap(), want);
                let Outcome::Result(raw) = Reply::Result(r.clone()).into_outcome(&rules) else {
                    panic!("a result")
                };
                assert_eq!(raw.get(), want, "{version}");
            }
        }
    }
}
