//! `x-mcp-header`: validating tool definitions and mirroring annotated
//! arguments into `Mcp-Param-{Name}` headers (*Streamable HTTP*, "Custom
//! Headers from Tool Parameters"; *Tools*, "x-mcp-header"; SEP-2243).
//!
//! # Validation ("Schema Extension", "Constraints on `x-mcp-header` values")
//!
//! [`header_params`] walks a tool's `inputSchema` **as a JSON Schema**: it
//! knows which keywords hold subschemas, which hold maps of named
//! subschemas (`properties`, `$defs`, ...) and which hold instance data
//! (`default`, `const`, `enum`, `examples`, whose contents are never
//! annotations). An annotation is valid only when
//!
//! * it sits on a property that is *statically reachable*: the chain from the
//!   schema root consists solely of `properties` keys (never `items`,
//!   `oneOf`/`anyOf`/`allOf`/`not`, `if`/`then`/`else`, `$ref`, `$defs`, ...);
//!   on the root schema itself it annotates no property and is misplaced;
//! * its value is a non-empty string of RFC 9110 `tchar`s (which excludes
//!   control characters, CR, LF, spaces, `:` and non-ASCII);
//! * the property's `type` is `string`, `integer` or `boolean` — or one of
//!   them together with `"null"` (a null argument omits the header, which
//!   the spec's "Parameter value is `null`" row anticipates). `number` is
//!   refused, and so is a property without a `type`: the client could not
//!   check that it is primitive;
//! * no other annotation of the same `inputSchema` has the same name,
//!   compared case-insensitively.
//!
//! Anything else rejects the **whole tool**: "Rejection means the client
//! MUST exclude the invalid tool from the result of `tools/list`", with a
//! warning naming the tool and the reason (`tracing::warn!`).
//! Schemas nested deeper than [`MAX_SCHEMA_DEPTH`] are rejected too
//! (*Overview*, "Composition-Keyword Resource Use": implementations SHOULD
//! bound schema depth).
//!
//! # Extraction ("Value Encoding", "Client Behavior")
//!
//! For a `tools/call`, each annotated path is read from `arguments`; an
//! absent or `null` value omits the header. Strings are used as-is, booleans
//! become `true`/`false`, integers their decimal form (an integral float such
//! as `42.0` is written `42`); the text is then encoded with
//! [`crate::headers::encode_value`] (Base64 sentinel
//! for non-ASCII, control characters, leading/trailing whitespace and
//! sentinel-shaped values). An object or array where a primitive was
//! declared omits the header (the server will reject the arguments anyway).
//! Tools the client has never seen, or has rejected, get no `Mcp-Param-*`
//! headers (SEP-2243: "A client that has never obtained the tool's
//! `inputSchema` SHOULD send the request without `Mcp-Param-*` headers").

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, RwLock};

use serde_json::{Map, Value};

use crate::headers;

/// The deepest nesting of schema objects [`header_params`] walks before it
/// rejects the tool.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// JavaScript's `Number.MAX_SAFE_INTEGER` (2^53 − 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// One valid `x-mcp-header` annotation of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderParam {
    /// The chain of `properties` keys from the schema root to the property.
    pub path: Vec<String>,
    /// The annotation's value: the `{Name}` of `Mcp-Param-{Name}`.
    pub name: String,
}

impl HeaderParam {
    /// The full header name, `Mcp-Param-{Name}`.
    pub fn header_name(&self) -> String {
        format!("Mcp-Param-{}", self.name)
    }
}

/// Why a tool definition was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolRejection {
    /// An annotation outside a statically reachable property.
    #[error(
        "x-mcp-header at {pointer} is not on a property reachable from the schema root through `properties` keys alone"
    )]
    Misplaced {
        /// JSON pointer of the schema holding the annotation.
        pointer: String,
    },
    /// The annotation's value is not a string.
    #[error("x-mcp-header at {pointer} is not a string")]
    NotAString {
        /// JSON pointer of the annotated schema.
        pointer: String,
    },
    /// The annotation's value is empty.
    #[error("x-mcp-header at {pointer} is empty")]
    Empty {
        /// JSON pointer of the annotated schema.
        pointer: String,
    },
    /// The annotation's value is not an RFC 9110 token.
    #[error(
        "x-mcp-header {name:?} at {pointer} is not an HTTP field-name token (1*tchar, RFC 9110 section 5.1)"
    )]
    InvalidName {
        /// The offending value.
        name: String,
        /// JSON pointer of the annotated schema.
        pointer: String,
    },
    /// The annotated property is not of a primitive type.
    #[error(
        "x-mcp-header {name:?} at {pointer} is on a property of type {found}; only string, integer and boolean are permitted"
    )]
    NotPrimitive {
        /// The annotation's value.
        name: String,
        /// JSON pointer of the annotated schema.
        pointer: String,
        /// The `type` found (`number`, `object`, ..., or `no type`).
        found: String,
    },
    /// Two annotations share a name, case-insensitively.
    #[error("x-mcp-header {name:?} is used more than once (names are compared case-insensitively)")]
    Duplicate {
        /// The repeated name (as written the second time).
        name: String,
    },
    /// The schema nests deeper than [`MAX_SCHEMA_DEPTH`].
    #[error("inputSchema nests deeper than {MAX_SCHEMA_DEPTH} levels")]
    TooDeep,
}

/// Validates a tool's `inputSchema` and returns its `x-mcp-header`
/// annotations (see the [module docs](self) for the rules).
pub fn header_params(input_schema: &Value) -> Result<Vec<HeaderParam>, ToolRejection> {
    let mut out = Vec::new();
    walk(input_schema, Some(&[]), 0, "", &mut out)?;
    let mut seen = HashSet::new();
    for p in &out {
        if !seen.insert(p.name.to_ascii_lowercase()) {
            return Err(ToolRejection::Duplicate {
                name: p.name.clone(),
            });
        }
    }
    Ok(out)
}

/// Keywords whose value is instance data, never a schema.
fn is_data_keyword(k: &str) -> bool {
    matches!(k, "default" | "const" | "enum" | "examples")
}

/// Keywords whose value maps names to subschemas that are not properties.
fn is_schema_map_keyword(k: &str) -> bool {
    matches!(
        k,
        "patternProperties" | "$defs" | "definitions" | "dependentSchemas" | "dependencies"
    )
}

/// Walks one schema (or, for arrays, a list of schemas). `path` is `Some`
/// while the schema is statically reachable (the property path so far).
fn walk(
    node: &Value,
    path: Option<&[String]>,
    depth: usize,
    pointer: &str,
    out: &mut Vec<HeaderParam>,
) -> Result<(), ToolRejection> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(ToolRejection::TooDeep);
    }
    let map = match node {
        Value::Object(map) => map,
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, None, depth + 1, &format!("{pointer}/{i}"), out)?;
            }
            return Ok(());
        }
        _ => return Ok(()),
    };
    for (key, value) in map {
        let here = format!("{pointer}/{}", escape(key));
        match key.as_str() {
            "x-mcp-header" => {
                let pointer = if pointer.is_empty() { "/" } else { pointer };
                let Some(path) = path.filter(|p| !p.is_empty()) else {
                    return Err(ToolRejection::Misplaced {
                        pointer: pointer.to_owned(),
                    });
                };
                out.push(annotation(map, value, path, pointer)?);
            }
            "properties" => {
                if let Value::Object(props) = value {
                    for (name, sub) in props {
                        let sub_path = path.map(|p| {
                            let mut v = p.to_vec();
                            v.push(name.clone());
                            v
                        });
                        let ptr = format!("{here}/{}", escape(name));
                        walk(sub, sub_path.as_deref(), depth + 1, &ptr, out)?;
                    }
                }
            }
            k if is_schema_map_keyword(k) => {
                if let Value::Object(subs) = value {
                    for (name, sub) in subs {
                        let ptr = format!("{here}/{}", escape(name));
                        walk(sub, None, depth + 1, &ptr, out)?;
                    }
                }
            }
            k if is_data_keyword(k) => {}
            // Every other keyword's subschemas (items, allOf, not, if, ...,
            // and unknown keywords, conservatively) are not statically
            // reachable.
            _ => walk(value, None, depth + 1, &here, out)?,
        }
    }
    Ok(())
}

/// Checks one annotation found on a reachable property schema.
fn annotation(
    schema: &Map<String, Value>,
    value: &Value,
    path: &[String],
    pointer: &str,
) -> Result<HeaderParam, ToolRejection> {
    let Some(name) = value.as_str() else {
        return Err(ToolRejection::NotAString {
            pointer: pointer.to_owned(),
        });
    };
    if name.is_empty() {
        return Err(ToolRejection::Empty {
            pointer: pointer.to_owned(),
        });
    }
    if !name.bytes().all(is_tchar) {
        return Err(ToolRejection::InvalidName {
            name: name.to_owned(),
            pointer: pointer.to_owned(),
        });
    }
    if let Err(found) = primitive_type(schema.get("type")) {
        return Err(ToolRejection::NotPrimitive {
            name: name.to_owned(),
            pointer: pointer.to_owned(),
            found,
        });
    }
    Ok(HeaderParam {
        path: path.to_vec(),
        name: name.to_owned(),
    })
}

/// `Ok` for `string`/`integer`/`boolean` (optionally with `"null"`), else
/// a description of what was found.
fn primitive_type(ty: Option<&Value>) -> Result<(), String> {
    const PRIMITIVE: [&str; 3] = ["string", "integer", "boolean"];
    match ty {
        None => Err("no type".into()),
        Some(Value::String(s)) if PRIMITIVE.contains(&s.as_str()) => Ok(()),
        Some(Value::Array(items)) => {
            let names: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            let non_null: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
            if names.len() == items.len() && non_null.len() == 1 && PRIMITIVE.contains(&non_null[0])
            {
                Ok(())
            } else {
                Err(Value::Array(items.clone()).to_string())
            }
        }
        Some(other) => Err(other.to_string()),
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

/// JSON pointer escaping (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The header text of one argument value, before encoding; `None` omits
/// the header (absent, `null`, or not a primitive).
pub(crate) fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(if let Some(i) = n.as_i64() {
            i.to_string()
        } else if let Some(u) = n.as_u64() {
            u.to_string()
        } else {
            match n.as_f64() {
                // "42.0" in the body is the integer 42 (servers "SHOULD
                // compare ... numerically").
                Some(f) if f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER => {
                    format!("{}", f as i64)
                }
                _ => n.to_string(),
            }
        }),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// The `Mcp-Param-*` headers of a call: `(header name, encoded value)`.
pub fn param_headers(params: &[HeaderParam], arguments: Option<&Value>) -> Vec<(String, String)> {
    let Some(arguments) = arguments else {
        return Vec::new();
    };
    params
        .iter()
        .filter_map(|p| {
            let value = p
                .path
                .iter()
                .try_fold(arguments, |node, key| node.get(key))?;
            let text = header_text(value);
            if text.is_none() && !value.is_null() {
                tracing::debug!(
                    header = %p.header_name(),
                    "argument is not a primitive; Mcp-Param header omitted"
                );
            }
            Some((p.header_name(), headers::encode_value(&text?)))
        })
        .collect()
}

/// The `x-mcp-header` annotations of the tools last seen in `tools/list`.
#[derive(Debug, Default)]
pub(crate) struct ToolCache {
    tools: RwLock<HashMap<String, Arc<[HeaderParam]>>>,
}

impl ToolCache {
    /// The `Mcp-Param-*` headers for calling `tool` with `arguments`.
    pub(crate) fn headers_for(
        &self,
        tool: &str,
        arguments: Option<&Value>,
    ) -> Vec<(String, String)> {
        let params = self
            .tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(tool)
            .cloned();
        params.map_or_else(Vec::new, |p| param_headers(&p, arguments))
    }

    /// Keeps only the named tools (after a complete `tools/list`).
    pub(crate) fn retain(&self, names: &HashSet<String>) {
        self.tools
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k, _| names.contains(k));
    }

    fn set(&self, tool: &str, params: Option<Vec<HeaderParam>>) {
        let mut tools = self.tools.write().unwrap_or_else(|e| e.into_inner());
        match params {
            Some(p) => {
                tools.insert(tool.to_owned(), p.into());
            }
            None => {
                tools.remove(tool);
            }
        }
    }

    /// The annotations cached for `tool`.
    pub(crate) fn get(&self, tool: &str) -> Option<Vec<HeaderParam>> {
        self.tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(tool)
            .map(|p| p.to_vec())
    }
}

/// A rejected tool, for the warning.
struct Rejected<'a> {
    tool: &'a str,
    reason: &'a ToolRejection,
}

impl fmt::Display for Rejected<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool {:?} rejected: {}", self.tool, self.reason)
    }
}

/// Drops the tools of a `ListToolsResult` whose `x-mcp-header` annotations
/// are invalid (warning for each, with the tool name and the reason) and
/// records the annotations of the others in `cache`. Returns whether the
/// result was changed.
pub(crate) fn filter_tools_result(result: &mut Value, cache: &ToolCache) -> bool {
    let Some(Value::Array(tools)) = result.get_mut("tools") else {
        return false;
    };
    let before = tools.len();
    tools.retain(|tool| {
        let name = tool.get("name").and_then(Value::as_str);
        let schema = tool.get("inputSchema");
        let outcome = schema.map_or(Ok(Vec::new()), header_params);
        match (name, outcome) {
            (Some(name), Ok(params)) => {
                cache.set(name, Some(params));
                true
            }
            (None, Ok(_)) => true,
            (name, Err(reason)) => {
                let tool = name.unwrap_or("<unnamed>");
                tracing::warn!(
                    tool,
                    reason = %reason,
                    "{}; excluded from the tools/list result (2026-07-28 Streamable HTTP, \"Schema Extension\")",
                    Rejected { tool, reason: &reason }
                );
                if let Some(name) = name {
                    cache.set(name, None);
                }
                false
            }
        }
    });
    tools.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(schema: Value) -> Vec<HeaderParam> {
        header_params(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"))
    }

    fn err(schema: Value) -> ToolRejection {
        header_params(&schema).expect_err(&schema.to_string())
    }

    #[test]
    fn spec_example_is_valid() {
        let p = ok(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"}
            },
            "required": ["region", "query"]
        }));
        assert_eq!(
            p,
            [HeaderParam {
                path: vec!["region".into()],
                name: "Region".into()
            }]
        );
        assert_eq!(p[0].header_name(), "Mcp-Param-Region");
    }

    #[test]
    fn nested_properties_are_reachable() {
        let p = ok(json!({
            "type": "object",
            "properties": {
                "target": {"type": "object", "properties": {
                    "tenant": {"type": "string", "x-mcp-header": "TenantId"},
                    "n": {"type": ["integer", "null"], "x-mcp-header": "N"}
                }}
            }
        }));
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].path, ["target", "n"]);
        assert_eq!(p[1].path, ["target", "tenant"]);
    }

    #[test]
    fn property_named_like_the_keyword_is_not_an_annotation() {
        ok(json!({"type": "object", "properties": {"x-mcp-header": {"type": "object"}}}));
        ok(json!({"type": "object", "properties": {"a": {
            "type": "string",
            "default": {"x-mcp-header": "Data"},
            "examples": [{"x-mcp-header": "Data"}]
        }}}));
    }

    #[test]
    fn misplaced_annotations() {
        let cases = [
            json!({"type": "object", "x-mcp-header": "Root"}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string", "x-mcp-header": "A"}]}}}),
            json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"type": "object", "allOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"type": "object", "not": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "if": {}, "then": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "$defs": {"R": {"type": "string", "x-mcp-header": "A"}}, "properties": {"a": {"$ref": "#/$defs/R"}}}),
            json!({"type": "object", "patternProperties": {"^a": {"type": "string", "x-mcp-header": "A"}}}),
            json!({"type": "object", "additionalProperties": {"type": "string", "x-mcp-header": "A"}}),
        ];
        for schema in cases {
            assert!(
                matches!(err(schema.clone()), ToolRejection::Misplaced { .. }),
                "{schema}"
            );
        }
    }

    #[test]
    fn invalid_names() {
        for name in [
            "My Region",
            "Region:Primary",
            "Région",
            "Region\t1",
            "a\r\nb",
            "(x)",
        ] {
            let e = err(
                json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": name}}}),
            );
            assert!(
                matches!(e, ToolRejection::InvalidName { .. }),
                "{name:?}: {e}"
            );
        }
        let e = err(
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
        );
        assert!(matches!(e, ToolRejection::Empty { .. }));
        let e = err(
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": 7}}}),
        );
        assert!(matches!(e, ToolRejection::NotAString { .. }));
        // Every tchar is fine, and a name equal to a standard header's tail is allowed.
        ok(json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "!#$%&'*+-.^_`|~09azAZ"},
            "b": {"type": "string", "x-mcp-header": "Method"}
        }}));
    }

    #[test]
    fn types() {
        for ty in [
            json!("string"),
            json!("integer"),
            json!("boolean"),
            json!(["null", "boolean"]),
        ] {
            ok(json!({"type": "object", "properties": {"a": {"type": ty, "x-mcp-header": "A"}}}));
        }
        for ty in [
            json!("number"),
            json!("object"),
            json!("array"),
            json!("null"),
            json!(["string", "integer"]),
            json!(["number", "null"]),
            json!([]),
        ] {
            let e = err(
                json!({"type": "object", "properties": {"a": {"type": ty, "x-mcp-header": "A"}}}),
            );
            assert!(matches!(e, ToolRejection::NotPrimitive { .. }), "{ty}: {e}");
        }
        let e = err(json!({"type": "object", "properties": {"a": {"x-mcp-header": "A"}}}));
        assert!(matches!(e, ToolRejection::NotPrimitive { ref found, .. } if found == "no type"));
    }

    #[test]
    fn duplicates_are_case_insensitive() {
        let e = err(json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "object", "properties": {"c": {"type": "string", "x-mcp-header": "REGION"}}}
        }}));
        assert!(matches!(e, ToolRejection::Duplicate { .. }), "{e}");
    }

    #[test]
    fn depth_is_bounded() {
        let mut schema = json!({"type": "string"});
        for _ in 0..(MAX_SCHEMA_DEPTH + 2) {
            schema = json!({"type": "object", "properties": {"a": schema}});
        }
        assert_eq!(err(schema), ToolRejection::TooDeep);
    }

    #[test]
    fn depth_is_bounded_along_every_kind_of_nesting() {
        // Each wrapper nests the schema below it; its cost is the depth
        // one level adds (an array of subschemas is a level of its own).
        type Wrap = fn(Value) -> Value;
        let wrappers: [(&str, usize, Wrap); 4] = [
            (
                "properties",
                1,
                |s| json!({"type": "object", "properties": {"a": s}}),
            ),
            ("items", 1, |s| json!({"type": "array", "items": s})),
            ("allOf", 2, |s| json!({"allOf": [s]})),
            ("$defs", 1, |s| json!({"$defs": {"d": s}})),
        ];
        for (name, cost, wrap) in wrappers {
            let nest = |levels: usize| (0..levels).fold(json!({}), |s, _| wrap(s));
            let deepest = MAX_SCHEMA_DEPTH / cost;
            assert_eq!(
                header_params(&nest(deepest)),
                Ok(Vec::new()),
                "{name}: an empty schema at depth {} is within the bound",
                deepest * cost
            );
            assert_eq!(
                header_params(&nest(deepest + 1)),
                Err(ToolRejection::TooDeep),
                "{name}: one level more"
            );
        }
    }

    #[test]
    fn schema_maps_name_subschemas_not_keywords() {
        // A definition named like a data keyword is still a schema: its
        // annotation is misplaced, not skipped as data.
        for map in [
            "$defs",
            "definitions",
            "patternProperties",
            "dependentSchemas",
        ] {
            let e = err(
                json!({"type": "object", map: {"default": {"type": "string", "x-mcp-header": "A"}}}),
            );
            assert!(matches!(e, ToolRejection::Misplaced { .. }), "{map}: {e}");
        }
        // And a definition named `x-mcp-header` is no annotation.
        ok(json!({"type": "object", "$defs": {"x-mcp-header": {"type": "object"}}}));
    }

    #[test]
    fn rejections_point_at_the_schema_with_escaped_keys() {
        let e = err(json!({"type": "object", "properties": {"a/b~c": {
            "type": "array", "items": {"type": "string", "x-mcp-header": "A"}
        }}}));
        assert_eq!(
            e,
            ToolRejection::Misplaced {
                pointer: "/properties/a~1b~0c/items".into()
            },
            "RFC 6901: `~` is written `~0` and `/` `~1`"
        );
    }

    #[test]
    fn only_integral_floats_in_the_safe_range_are_written_as_integers() {
        let text = |v: Value| header_text(&v).unwrap();
        assert_eq!(text(json!(42.0)), "42");
        assert_eq!(text(json!(-9_007_199_254_740_991.0)), "-9007199254740991");
        assert_eq!(text(json!(1.5)), "1.5", "not rounded");
        assert_eq!(text(json!(-0.25)), "-0.25");
        // Past 2^53 a float no longer names one integer: written as it is.
        assert_eq!(text(json!(1e300)), "1e+300");
        assert_eq!(text(json!(9_007_199_254_740_994.0)), "9007199254740994.0");
    }

    #[test]
    fn extraction() {
        let params = ok(json!({"type": "object", "properties": {
            "s": {"type": "string", "x-mcp-header": "S"},
            "i": {"type": "integer", "x-mcp-header": "I"},
            "f": {"type": "integer", "x-mcp-header": "F"},
            "b": {"type": "boolean", "x-mcp-header": "B"},
            "n": {"type": ["string", "null"], "x-mcp-header": "N"},
            "missing": {"type": "string", "x-mcp-header": "Missing"},
            "o": {"type": "object", "properties": {"deep": {"type": "string", "x-mcp-header": "Deep"}}},
            "sentinel": {"type": "string", "x-mcp-header": "Sentinel"},
            "pad": {"type": "string", "x-mcp-header": "Pad"}
        }}));
        let args = json!({
            "s": "Hello, 世界", "i": -7, "f": 42.0, "b": false, "n": null,
            "o": {"deep": "us-west1"}, "sentinel": "=?base64?literal?=", "pad": " padded "
        });
        let mut h = param_headers(&params, Some(&args));
        h.sort();
        let expect: Vec<(String, String)> = [
            ("Mcp-Param-B", "false"),
            ("Mcp-Param-Deep", "us-west1"),
            ("Mcp-Param-F", "42"),
            ("Mcp-Param-I", "-7"),
            ("Mcp-Param-Pad", "=?base64?IHBhZGRlZCA=?="),
            ("Mcp-Param-S", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            ("Mcp-Param-Sentinel", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(h, expect);
        assert!(param_headers(&params, None).is_empty());
    }

    #[test]
    fn list_filtering_drops_invalid_tools_with_a_warning() {
        let cache = ToolCache::default();
        let mut result = json!({"tools": [
            {"name": "good", "inputSchema": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "Region"}}}},
            {"name": "bad", "inputSchema": {"type": "object", "properties": {"r": {"type": "number", "x-mcp-header": "Region"}}}},
            {"name": "plain", "inputSchema": {"type": "object"}}
        ]});
        let (logged, guard) = mcp_test_support::trace::Logged::install();
        let changed = filter_tools_result(&mut result, &cache);
        drop(guard);
        assert!(changed);
        let names: Vec<&str> = result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["good", "plain"]);
        let log = logged.take(tracing::Level::WARN);
        assert_eq!(log.len(), 1, "{log:?}");
        assert!(
            log[0].starts_with("tool \"bad\" rejected: "),
            "the message names the tool: {}",
            log[0]
        );
        assert!(
            log[0].contains("\"bad\"") && log[0].contains("number"),
            "{}",
            log[0]
        );
        assert!(cache.get("good").is_some());
        assert!(cache.get("bad").is_none());
        assert_eq!(cache.get("plain"), Some(Vec::new()));
    }
}
