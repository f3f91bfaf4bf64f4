//! `x-mcp-header` annotations of a tool's `inputSchema` (*Tools*,
//! "x-mcp-header"; *Streamable HTTP*, "Custom Headers from Tool
//! Parameters").
//!
//! An annotation names the `{Name}` of an `Mcp-Param-{Name}` header that
//! mirrors one argument. Its constraints are checked here exactly as a
//! client checks them ("Clients using the Streamable HTTP transport MUST
//! reject tool definitions where any `x-mcp-header` value violates these
//! constraints"): a tool that breaks one is a tool conforming clients never
//! call, so the server expects no `Mcp-Param-*` header for it.
//!
//! Constraints: not empty; an HTTP token (`1*tchar`, which also excludes
//! control characters); case-insensitively unique in the schema; on a
//! property of type `integer`, `string` or `boolean` (`number` is not
//! permitted); and only on properties "statically reachable from the schema
//! root: reachable via a chain consisting solely of `properties` keys" —
//! never under `items`, composition or conditional keywords, `$ref`
//! targets (`$defs`) and the like.

use http::HeaderName;
use serde_json::{Map, Value};

use crate::headers::PARAM_PREFIX;

/// One `Mcp-Param-{Name}` header of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    /// `{Name}` as the annotation spells it.
    pub name: String,
    /// The header name, `mcp-param-{name}` lowercased.
    pub header: HeaderName,
    /// The chain of `properties` keys leading to the argument.
    pub path: Vec<String>,
}

impl ParamHeader {
    /// A header for an already validated `{Name}` (a token).
    pub fn new(name: &str, path: Vec<String>) -> Self {
        let header = HeaderName::from_bytes(
            format!("{PARAM_PREFIX}{}", name.to_ascii_lowercase()).as_bytes(),
        )
        .unwrap_or_else(|_| HeaderName::from_static("mcp-param-invalid"));
        ParamHeader {
            name: name.to_owned(),
            header,
            path,
        }
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Keywords whose value is one subschema or an array of subschemas; an
/// annotation under them is not statically reachable.
const SUBSCHEMA_KEYWORDS: [&str; 15] = [
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
];

/// Keywords whose value maps names to subschemas (other than `properties`).
const SCHEMA_MAP_KEYWORDS: [&str; 5] = [
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
];

/// The primitive type of an annotated property: `integer`, `string` or
/// `boolean` (optionally together with `null`).
fn primitive_type(schema: &Map<String, Value>) -> Result<(), String> {
    let ok = |t: &str| matches!(t, "integer" | "string" | "boolean");
    match schema.get("type") {
        Some(Value::String(t)) if ok(t) => Ok(()),
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            let prim = names.iter().filter(|t| ok(t)).count();
            let nulls = names.iter().filter(|t| **t == "null").count();
            if names.len() == ts.len() && prim == 1 && prim + nulls == names.len() {
                Ok(())
            } else {
                Err(format!(
                    "type {} is not one primitive type",
                    Value::Array(ts.clone())
                ))
            }
        }
        Some(other) => Err(format!("type {other} is not integer, string or boolean")),
        None => Err("the property declares no type (integer, string or boolean)".into()),
    }
}

fn walk(
    schema: &Value,
    reachable: bool,
    path: &mut Vec<String>,
    out: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    let Some(obj) = schema.as_object() else {
        // `true` / `false` schemas and non-schemas carry no annotation.
        return Ok(());
    };
    if let Some(annotation) = obj.get("x-mcp-header") {
        let at = if path.is_empty() {
            "the schema root".to_owned()
        } else {
            format!("property {}", path.join("."))
        };
        if !reachable || path.is_empty() {
            return Err(format!(
                "x-mcp-header at {at} is not on a property statically reachable through `properties`"
            ));
        }
        let Some(name) = annotation.as_str() else {
            return Err(format!("x-mcp-header at {at} is not a string"));
        };
        if name.is_empty() {
            return Err(format!("x-mcp-header at {at} is empty"));
        }
        if !name.bytes().all(is_tchar) {
            return Err(format!(
                "x-mcp-header {name:?} at {at} is not an HTTP token (1*tchar)"
            ));
        }
        primitive_type(obj).map_err(|e| format!("x-mcp-header {name:?} at {at}: {e}"))?;
        if out.iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
            return Err(format!(
                "x-mcp-header {name:?} is not case-insensitively unique in the inputSchema"
            ));
        }
        out.push(ParamHeader::new(name, path.clone()));
    }
    for (key, value) in obj {
        if key == "properties" {
            if let Some(props) = value.as_object() {
                for (prop, sub) in props {
                    path.push(prop.clone());
                    let r = walk(sub, reachable, path, out);
                    path.pop();
                    r?;
                }
            }
        } else if SCHEMA_MAP_KEYWORDS.contains(&key.as_str()) {
            if let Some(map) = value.as_object() {
                for sub in map.values() {
                    walk(sub, false, path, out)?;
                }
            }
        } else if SUBSCHEMA_KEYWORDS.contains(&key.as_str()) {
            match value {
                Value::Array(items) => {
                    for sub in items {
                        walk(sub, false, path, out)?;
                    }
                }
                sub => walk(sub, false, path, out)?,
            }
        }
    }
    Ok(())
}

/// The `Mcp-Param-*` headers a tool's `inputSchema` defines, or why the
/// tool definition is invalid.
pub(crate) fn header_params(input_schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut out = Vec::new();
    walk(input_schema, true, &mut Vec::new(), &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_example() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"}
            },
            "required": ["region", "query"]
        });
        let p = header_params(&schema).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].name, "Region");
        assert_eq!(p[0].header.as_str(), "mcp-param-region");
        assert_eq!(p[0].path, ["region"]);
    }

    #[test]
    fn nested_and_types() {
        let schema = json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "x-mcp-header": "Count"},
                "flag": {"type": ["boolean", "null"], "x-mcp-header": "Flag"},
                "target": {"type": "object", "properties": {
                    "zone": {"type": "string", "x-mcp-header": "Zone"}
                }},
                "x-mcp-header": {"type": "string"},
                "doc": {"type": "string", "default": {"x-mcp-header": "NotAnAnnotation"}}
            }
        });
        let p = header_params(&schema).unwrap();
        let names: Vec<_> = p
            .iter()
            .map(|p| (p.name.as_str(), p.path.join(".")))
            .collect();
        assert!(names.contains(&("Count", "count".into())));
        assert!(names.contains(&("Flag", "flag".into())));
        assert!(names.contains(&("Zone", "target.zone".into())));
        assert_eq!(p.len(), 3);
        assert!(
            header_params(&json!({"type": "object"}))
                .unwrap()
                .is_empty()
        );
    }

    /// A `type` array names one primitive type, with `null` or alone.
    #[test]
    fn type_arrays_name_one_primitive_type() {
        let with = |t: Value| {
            header_params(&json!({"type": "object", "properties": {
                "p": {"type": t, "x-mcp-header": "P"}
            }}))
        };
        for t in [
            json!(["string"]),
            json!(["null", "integer"]),
            json!(["boolean", "null"]),
        ] {
            assert!(with(t.clone()).is_ok(), "{t}");
        }
        for t in [
            json!(["string", "integer"]),
            json!(["string", "number"]),
            json!(["null"]),
            json!([]),
            json!(["string", 1]),
        ] {
            let e = with(t.clone()).unwrap_err();
            assert!(e.contains("not one primitive type"), "{t}: {e}");
        }
    }

    #[test]
    fn invalid_definitions() {
        let prop = |extra: Value| json!({"type": "object", "properties": {"a": extra}});
        for (schema, why) in [
            (prop(json!({"type": "string", "x-mcp-header": ""})), "empty"),
            (
                prop(json!({"type": "string", "x-mcp-header": "My Region"})),
                "token",
            ),
            (
                prop(json!({"type": "string", "x-mcp-header": "Region:Primary"})),
                "token",
            ),
            (
                prop(json!({"type": "string", "x-mcp-header": "Région"})),
                "token",
            ),
            (
                prop(json!({"type": "string", "x-mcp-header": "Region\t1"})),
                "token",
            ),
            (
                prop(json!({"type": "string", "x-mcp-header": 7})),
                "not a string",
            ),
            (
                prop(json!({"type": "number", "x-mcp-header": "N"})),
                "integer, string or boolean",
            ),
            (
                prop(json!({"type": "array", "x-mcp-header": "N"})),
                "integer, string or boolean",
            ),
            (
                prop(json!({"type": "object", "x-mcp-header": "N"})),
                "integer, string or boolean",
            ),
            (
                prop(json!({"type": "null", "x-mcp-header": "N"})),
                "integer, string or boolean",
            ),
            (prop(json!({"x-mcp-header": "N"})), "no type"),
            (
                json!({"type": "object", "properties": {
                    "a": {"type": "string", "x-mcp-header": "Region"},
                    "b": {"type": "string", "x-mcp-header": "REGION"}
                }}),
                "unique",
            ),
            (
                json!({"type": "object", "properties": {"list": {"type": "array",
                    "items": {"type": "object", "properties": {
                        "r": {"type": "string", "x-mcp-header": "R"}}}}}}),
                "statically reachable",
            ),
            (
                json!({"type": "object", "oneOf": [{"properties": {
                    "r": {"type": "string", "x-mcp-header": "R"}}}]}),
                "statically reachable",
            ),
            (
                json!({"type": "object", "$defs": {"r": {"type": "string", "x-mcp-header": "R"}},
                    "properties": {"r": {"$ref": "#/$defs/r"}}}),
                "statically reachable",
            ),
            (
                json!({"type": "string", "x-mcp-header": "Root"}),
                "statically reachable",
            ),
        ] {
            let e = header_params(&schema).unwrap_err();
            assert!(e.contains(why), "{schema}: {e}");
        }
    }

    #[test]
    fn standard_names_are_allowed_as_params() {
        let schema = json!({"type": "object", "properties": {
            "m": {"type": "string", "x-mcp-header": "Method"}}});
        let p = header_params(&schema).unwrap();
        assert_eq!(p[0].header.as_str(), "mcp-param-method");
    }
}
