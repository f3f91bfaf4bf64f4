//! The pure `x-mcp-header` pieces, reachable from the fuzz targets
//! (`fuzz/`, built by cargo-fuzz with `--cfg fuzzing`) and from nowhere
//! else: the annotation reader of *Tools*, "x-mcp-header", and the
//! header-against-body comparison of *Streamable HTTP*, "Server Behavior
//! for Custom Headers".

use http::HeaderMap;
use serde_json::Value;

/// Reads a tool's `inputSchema` annotations: for each `Mcp-Param-{Name}`,
/// `(Name, header name, path of properties keys)`, or why the definition
/// is invalid.
pub fn header_params(input_schema: &Value) -> Result<Vec<(String, String, Vec<String>)>, String> {
    super::schema::header_params(input_schema).map(|specs| {
        specs
            .into_iter()
            .map(|p| (p.name, p.header.as_str().to_owned(), p.path))
            .collect()
    })
}

/// Whether a decoded header value represents the body value, or why the
/// body value cannot be mirrored in a header.
pub fn value_matches(header: &str, body: &Value) -> Result<bool, &'static str> {
    super::validate::value_matches(header, body)
}

/// Checks every `Mcp-Param-*` header the annotations of `input_schema`
/// define against `arguments`; the rejection's JSON-RPC code and message.
pub fn check_param_headers(
    headers: &HeaderMap,
    input_schema: &Value,
    arguments: Option<&Value>,
) -> Result<(), (i64, String)> {
    let specs = super::schema::header_params(input_schema).map_err(|e| (0, e))?;
    super::validate::check_param_headers(headers, &specs, arguments)
        .map_err(|r| (r.code, r.message))
}
