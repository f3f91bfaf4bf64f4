//! What each protocol revision says about tools, in one place: the JSON
//! Schema dialect of `inputSchema`/`outputSchema`, whether structured
//! results exist, and how invalid arguments are reported.

use mcp_transport_core::ProtocolVersion;

/// The JSON Schema dialect a revision's tool schemas are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// Draft-07. 2025-03-26 and 2025-06-18 name no dialect (their
    /// `schema.ts` gives `inputSchema` only as `{type: "object",
    /// properties?, required?}`); draft-07 is what the SDKs of that time
    /// emitted, with `definitions` for shared subschemas.
    Draft07,
    /// JSON Schema 2020-12: 2025-11-25 and 2026-07-28 *Tools*, "Tool":
    /// `inputSchema`/`outputSchema` "Defaults to 2020-12 if no `$schema`
    /// field is present" (SEP-1613).
    Draft2020_12,
}

/// How a revision shapes tool definitions and results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolRules {
    /// The schema dialect.
    pub dialect: Dialect,
    /// `Tool.outputSchema` and `CallToolResult.structuredContent` exist
    /// (added in 2025-06-18: *Tools*, "Structured Content", "Output Schema").
    pub structured: bool,
    /// `structuredContent` may be any JSON value and `outputSchema` any
    /// schema (2026-07-28 `schema.ts`: `structuredContent?: unknown`);
    /// before, both are objects (`{ [key: string]: unknown }`, an
    /// `outputSchema` "restricted to type: \"object\" at the root level").
    pub structured_any: bool,
    /// Arguments that fail the tool's input schema are a tool execution
    /// error (`isError: true`) rather than a JSON-RPC error. 2025-11-25 and
    /// 2026-07-28 *Tools*, "Error Handling": "Tool Execution Errors ...
    /// Input validation errors (e.g., date in wrong format, value out of
    /// range)"; 2025-03-26 and 2025-06-18 list "Invalid arguments" under
    /// "Protocol Errors: Standard JSON-RPC errors" (`-32602`).
    pub invalid_arguments_are_tool_errors: bool,
}

impl ToolRules {
    /// The rules of `revision`. An unknown revision is treated as the
    /// newest known one it follows (by date), the oldest if it precedes all.
    pub fn of(revision: &ProtocolVersion) -> ToolRules {
        let at_least = |v: ProtocolVersion| *revision >= v;
        let modern_schema = at_least(ProtocolVersion::V2025_11_25);
        ToolRules {
            dialect: if modern_schema {
                Dialect::Draft2020_12
            } else {
                Dialect::Draft07
            },
            structured: at_least(ProtocolVersion::V2025_06_18),
            structured_any: at_least(ProtocolVersion::V2026_07_28),
            invalid_arguments_are_tool_errors: modern_schema,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_revision_has_its_rules() {
        let r = ToolRules::of(&ProtocolVersion::V2025_03_26);
        assert_eq!(r.dialect, Dialect::Draft07);
        assert!(!r.structured && !r.invalid_arguments_are_tool_errors);
        let r = ToolRules::of(&ProtocolVersion::V2025_06_18);
        assert!(r.structured && !r.structured_any && !r.invalid_arguments_are_tool_errors);
        let r = ToolRules::of(&ProtocolVersion::V2025_11_25);
        assert_eq!(r.dialect, Dialect::Draft2020_12);
        assert!(r.structured && !r.structured_any && r.invalid_arguments_are_tool_errors);
        let r = ToolRules::of(&ProtocolVersion::V2026_07_28);
        assert!(r.structured_any && r.invalid_arguments_are_tool_errors);
        let r = ToolRules::of(&ProtocolVersion::parse("2099-01-01"));
        assert!(r.structured_any);
    }
}
