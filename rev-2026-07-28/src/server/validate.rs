//! Per-request metadata and header–body validation, as pure functions.
//!
//! * **Metadata** (*Overview*, "`_meta`", "Per-request protocol fields"):
//!   `io.modelcontextprotocol/protocolVersion` and
//!   `io.modelcontextprotocol/clientCapabilities` are required; "A request
//!   missing any required field is malformed; the server MUST reject it with
//!   JSON-RPC error code `-32602` (Invalid params). On HTTP, the response
//!   status MUST be `400 Bad Request`."
//! * **Headers** (*Streamable HTTP*, "Request Metadata", SEP-2243):
//!   `MCP-Protocol-Version` must equal the `_meta` version, `Mcp-Method` the
//!   method, `Mcp-Name` the `params.name`/`params.uri` of `tools/call`,
//!   `prompts/get` and `resources/read`, and each `Mcp-Param-{Name}` the
//!   argument its `x-mcp-header` annotation names. "Validation failure
//!   conditions include: A required standard header … is missing. A header
//!   value does not match the corresponding request body value. … A header
//!   value contains invalid characters." Each failure is a `HeaderMismatch`
//!   (`-32020`) with `400 Bad Request`.
//!
//! Header names are compared case-insensitively (`http::HeaderMap` does
//! that), values case-sensitively ("Case Sensitivity"). `Mcp-Name` and
//! `Mcp-Param-*` values are decoded from `=?base64?…?=` before comparing
//! ("Value Encoding": "servers MUST decode an encoded `Mcp-Name` or
//! `Mcp-Param-{Name}` value before comparing it"). Optional whitespace
//! around a value is HTTP framing and is trimmed (SEP-2243 conformance
//! table: "Extra whitespace in header … Server MUST accept"); a value whose
//! own leading or trailing whitespace matters is sent Base64-encoded.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use http::HeaderMap;
use mcp_http_edge::header_scan::{self, Ambiguous, Seen};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::LogLevel;
use mcp_transport_core::json_members::{ObjectIndex, Valid};
use mcp_transport_core::jsonrpc::{HEADER_MISMATCH, INVALID_PARAMS};
use serde_json::Value;
use serde_json::value::RawValue;

use super::schema::ParamHeader;
use crate::headers::{
    self, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
};

/// A rejected request: a JSON-RPC error code and message, answered with
/// `400 Bad Request`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rejection {
    /// `-32020` or `-32602`.
    pub code: i64,
    /// What was wrong, naming the header or field.
    pub message: String,
}

impl Rejection {
    /// A `HeaderMismatch` (`-32020`).
    pub fn header(message: impl Into<String>) -> Self {
        Rejection {
            code: HEADER_MISMATCH,
            message: message.into(),
        }
    }

    /// An `Invalid params` (`-32602`).
    pub fn params(message: impl Into<String>) -> Self {
        Rejection {
            code: INVALID_PARAMS,
            message: message.into(),
        }
    }
}

/// The top-level members of a request's `params`, values kept raw: the
/// transport-core [`ObjectIndex`] (one copy of the params text, each member
/// as spans of it), shared: the handler's context gets the same index
/// ([`RequestContext::params_index`](mcp_transport_core::handler::RequestContext::params_index)),
/// so a `tools/call` handler reads `name` and `arguments` without walking
/// the params again, and the MRTR binding keeps it for its digest.
#[derive(Clone, Debug, Default)]
pub(crate) struct Params(Arc<ObjectIndex>);

impl Params {
    /// Splits `params` into its members. The envelope parser has already
    /// checked that `params`, when present, is a JSON object; anything else
    /// has no members.
    pub fn parse(params: Option<&RawValue>) -> Params {
        Params(Arc::new(ObjectIndex::of_params(params)))
    }

    /// [`parse`](Self::parse), or `index` when the envelope reader found
    /// the params' members on the way (`jsonrpc::Parsed::into_indexed`,
    /// which makes the index from these very params, so it describes
    /// them), rather than walking them again.
    pub fn indexed(params: Option<&RawValue>, index: Option<ObjectIndex>) -> Params {
        match index {
            Some(index) => {
                debug_assert!(index.describes(params), "an index of other params");
                Params(Arc::new(index))
            }
            None => Params::parse(params),
        }
    }

    /// The index, to hand to the handler.
    pub fn into_index(self) -> Arc<ObjectIndex> {
        self.0
    }

    /// One member's JSON text; a name sent more than once is its last value
    /// (as a JSON object parsed into a map reads it).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(Valid::text)
    }

    /// One member when it is a JSON string, borrowed unless it was sent
    /// with escapes (what `parsed::<String>` gives, without a copy).
    pub fn string(&self, key: &str) -> Option<Cow<'_, str>> {
        self.0.get(key)?.as_str()
    }

    /// One member parsed, `None` when absent or not of type `T`.
    pub fn parsed<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        serde_json::from_str(self.get(key)?).ok()
    }

    /// Every member except `skip`, parsed (for digests; a repeated name is
    /// its last value).
    pub fn values_except(&self, skip: &[&str]) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        for m in self.0.members() {
            let name = m.name();
            if !skip.contains(&name.as_ref()) {
                let value = serde_json::from_str(m.value().text()).unwrap_or(Value::Null);
                out.insert(name.into_owned(), value);
            }
        }
        out
    }
}

/// What `params._meta` says about the client and the request.
#[derive(Clone, Debug)]
pub(crate) struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion` (its text as sent:
    /// [`ProtocolVersion::as_str`]; no copy for a version this crate knows).
    pub version: ProtocolVersion,
    /// `io.modelcontextprotocol/clientCapabilities` (an object).
    pub capabilities: Value,
    /// `io.modelcontextprotocol/clientInfo`, when sent (an object).
    pub info: Option<Value>,
    /// `io.modelcontextprotocol/logLevel`, unparsed (see [`Self::log_level`]).
    log_level: Option<Value>,
    /// `progressToken`, when it is a string or an integer.
    pub progress_token: Option<Value>,
}

impl RequestMeta {
    /// The requested log level. An unrecognized level is rejected with
    /// `-32602` (*Logging*, "Error Handling": "the server SHOULD reject that
    /// request with … Invalid log level: `-32602`").
    pub fn log_level(&self) -> Result<Option<LogLevel>, Rejection> {
        match &self.log_level {
            None | Some(Value::Null) => Ok(None),
            Some(v) => serde_json::from_value::<LogLevel>(v.clone())
                .map(Some)
                .map_err(|_| {
                    Rejection::params(format!(
                        "Invalid params: unrecognized log level {v} in _meta {META_LOG_LEVEL} (expected one of debug, info, notice, warning, error, critical, alert, emergency)"
                    ))
                }),
        }
    }
}

/// Reads and checks the per-request metadata (see the module docs).
pub(crate) fn read_meta(params: &Params) -> Result<RequestMeta, Rejection> {
    let Some(raw) = params.get("_meta") else {
        return Err(Rejection::params(format!(
            "Invalid params: missing params._meta; every request must carry {META_PROTOCOL_VERSION} and {META_CLIENT_CAPABILITIES} in params._meta"
        )));
    };
    // One pass: the members read below, and any repeated name; over the
    // members the envelope reader found when it knows them.
    let wanted = [
        META_PROTOCOL_VERSION,
        META_CLIENT_CAPABILITIES,
        META_CLIENT_INFO,
        META_LOG_LEVEL,
        "progressToken",
    ];
    let picked = match params.0.meta_members() {
        Some(members) => Ok(super::dup_keys::pick_members(members, wanted)),
        // A span of the params' text the walk found: valid JSON.
        None => super::dup_keys::pick(Valid::assume(raw), wanted),
    };
    let Ok(picked) = picked else {
        return Err(Rejection::params(
            "Invalid params: params._meta must be a JSON object",
        ));
    };
    if let Some(name) = picked.duplicate {
        return Err(Rejection::params(format!(
            "Invalid params: params._meta names {name} more than once (ambiguous)"
        )));
    }
    let [version, capabilities, info, log_level, progress_token] = picked.values;
    // Each read from its text: the version as a string (no `Value` made),
    // the objects parsed once they are known to be objects.
    let version = match version {
        None => {
            return Err(Rejection::params(format!(
                "Invalid params: missing required _meta field {META_PROTOCOL_VERSION}"
            )));
        }
        Some(v) => match v.as_str() {
            Some(s) => ProtocolVersion::parse(&s),
            // Not a string, or one that is not Unicode text.
            None => {
                return Err(match meta_value(META_PROTOCOL_VERSION, v) {
                    Err(unreadable) => unreadable,
                    Ok(other) => Rejection::params(format!(
                        "Invalid params: _meta field {META_PROTOCOL_VERSION} must be a string, got {other}"
                    )),
                });
            }
        },
    };
    let capabilities = match capabilities {
        None => {
            return Err(Rejection::params(format!(
                "Invalid params: missing required _meta field {META_CLIENT_CAPABILITIES} (send {{}} when the client has no optional capabilities)"
            )));
        }
        Some(v) if v.object().is_some() => meta_value(META_CLIENT_CAPABILITIES, v)?,
        Some(other) => {
            return Err(Rejection::params(format!(
                "Invalid params: _meta field {META_CLIENT_CAPABILITIES} must be an object, got {}",
                other.text()
            )));
        }
    };
    let info = match info {
        None => None,
        Some(v) if v.text() == "null" => None,
        Some(v) if v.object().is_some() => Some(meta_value(META_CLIENT_INFO, v)?),
        Some(other) => {
            return Err(Rejection::params(format!(
                "Invalid params: _meta field {META_CLIENT_INFO} must be an Implementation object, got {}",
                other.text()
            )));
        }
    };
    let log_level = log_level
        .map(|v| meta_value(META_LOG_LEVEL, v))
        .transpose()?;
    let progress_token = progress_token
        .map(|v| meta_value("progressToken", v))
        .transpose()?;
    let progress_token = progress_token.filter(|t| t.is_string() || t.is_i64() || t.is_u64());
    Ok(RequestMeta {
        version,
        capabilities,
        info,
        log_level,
        progress_token,
    })
}

/// A `_meta` member's value parsed. It is valid JSON, so the parse fails
/// only on a string escape that is not Unicode text (a lone surrogate,
/// which JSON's grammar allows and `serde_json` will not decode).
fn meta_value(name: &str, v: Valid<'_>) -> Result<Value, Rejection> {
    // What most clients declare (no optional capability): no parse.
    if v.text() == "{}" {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(v.text()).map_err(|e| {
        Rejection::params(format!(
            "Invalid params: _meta field {name} cannot be read: {e}"
        ))
    })
}

/// Shows a value in an error message: quoted, control characters escaped.
fn show(s: &str) -> String {
    format!("'{}'", s.escape_debug())
}

/// The single value of a header, with surrounding optional whitespace
/// trimmed; `None` when absent. Sent more than once is a mismatch (the
/// value would be ambiguous).
fn single<'a>(seen: Seen<'a>, display: &str) -> Result<Option<&'a [u8]>, Rejection> {
    match seen.single() {
        Ok(v) => Ok(v.map(|v| v.as_bytes().trim_ascii())),
        Err(Ambiguous) => Err(Rejection::header(format!(
            "Header mismatch: the {display} header was sent more than once"
        ))),
    }
}

/// The three standard MCP headers every request's body is checked
/// against (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), found in
/// one pass over the request's headers ([`header_scan`]: three hashed
/// lookups of these custom names cost ~600 instructions a request).
#[derive(Debug)]
pub(crate) struct McpHeaders<'a> {
    version: Seen<'a>,
    method: Seen<'a>,
    name: Seen<'a>,
}

impl<'a> McpHeaders<'a> {
    /// Reads the three headers (with how often each was sent).
    pub fn read(headers: &'a HeaderMap) -> McpHeaders<'a> {
        let [version, method, name] = header_scan::scan(
            headers,
            [
                &headers::name::PROTOCOL_VERSION,
                &headers::name::METHOD,
                &headers::name::NAME,
            ],
        );
        McpHeaders {
            version,
            method,
            name,
        }
    }
}

/// Whether a header's bytes are `text` and `text` is ASCII: the usual
/// case, decided without [`plain`]'s character check (an ASCII value that
/// is in a header has no character that check refuses: a header value
/// holds no control character but tab, which it allows).
fn same_text(raw: &[u8], text: &str) -> bool {
    raw == text.as_bytes() && text.is_ascii()
}

/// A plain (never Base64-encoded) header value: visible ASCII and
/// interior spaces or tabs only.
fn plain<'a>(raw: &'a [u8], display: &str) -> Result<&'a str, Rejection> {
    if raw.iter().all(|b| matches!(b, 0x21..=0x7e | b' ' | b'\t')) {
        // Checked: ASCII only.
        Ok(std::str::from_utf8(raw).unwrap_or_default())
    } else {
        Err(Rejection::header(format!(
            "Header mismatch: the {display} header value contains invalid characters"
        )))
    }
}

/// `MCP-Protocol-Version` is present and equals the `_meta` version
/// (*Streamable HTTP*, "Protocol Version Header": "The header value MUST
/// match the `io.modelcontextprotocol/protocolVersion` field … If the values
/// do not match, the server MUST reject the request with `400 Bad Request`
/// and a `HeaderMismatch` JSON-RPC error").
pub(crate) fn check_version_header(
    headers: &McpHeaders<'_>,
    meta_version: &str,
) -> Result<(), Rejection> {
    const D: &str = "MCP-Protocol-Version";
    let Some(raw) = single(headers.version, D)? else {
        return Err(Rejection::header(format!(
            "Header mismatch: the required {D} header is missing (it must equal _meta {META_PROTOCOL_VERSION}, {})",
            show(meta_version)
        )));
    };
    if same_text(raw, meta_version) {
        return Ok(());
    }
    let value = plain(raw, D)?;
    if value != meta_version {
        return Err(Rejection::header(format!(
            "Header mismatch: {D} header value {} does not match body value {}",
            show(value),
            show(meta_version)
        )));
    }
    Ok(())
}

/// `Mcp-Method` is present and equals the JSON-RPC `method`.
pub(crate) fn check_method_header(headers: &McpHeaders<'_>, method: &str) -> Result<(), Rejection> {
    const D: &str = "Mcp-Method";
    let Some(raw) = single(headers.method, D)? else {
        return Err(Rejection::header(format!(
            "Header mismatch: the required {D} header is missing (it must equal the method, {})",
            show(method)
        )));
    };
    if same_text(raw, method) {
        return Ok(());
    }
    let value = plain(raw, D)?;
    if value != method {
        return Err(Rejection::header(format!(
            "Header mismatch: {D} header value {} does not match body value {}",
            show(value),
            show(method)
        )));
    }
    Ok(())
}

/// `Mcp-Name` for `tools/call`, `prompts/get` (`params.name`) and
/// `resources/read` (`params.uri`): present, decoded, equal to the body
/// value, which is returned (the engine goes on with a `tools/call`'s tool
/// name without reading it again). A body without that string member is
/// `-32602`. Other methods have no `Mcp-Name` to check: `None`.
pub(crate) fn check_name_header<'p>(
    headers: &McpHeaders<'_>,
    method: &str,
    params: &'p Params,
) -> Result<Option<Cow<'p, str>>, Rejection> {
    const D: &str = "Mcp-Name";
    let Some(member) = headers::name_member(method) else {
        return Ok(None);
    };
    let Some(body) = params.string(member) else {
        return Err(Rejection::params(format!(
            "Invalid params: {method} requires params.{member} (a string)"
        )));
    };
    let Some(raw) = single(headers.name, D)? else {
        return Err(Rejection::header(format!(
            "Header mismatch: the required {D} header is missing (it must carry params.{member}, {})",
            show(&body)
        )));
    };
    let value = headers::decode(raw).map_err(|e| {
        Rejection::header(format!(
            "Header mismatch: the {D} header value is invalid: {e}"
        ))
    })?;
    if value != body {
        return Err(Rejection::header(format!(
            "Header mismatch: {D} header value {} does not match body value {}",
            show(&value),
            show(&body)
        )));
    }
    Ok(Some(body))
}

/// The value at `path` (a chain of `properties` keys) in the arguments;
/// `None` when absent or `null` ("Parameter value is `null`: … Server MUST
/// NOT expect the header").
fn at_path<'a>(arguments: Option<&'a Value>, path: &[String]) -> Option<&'a Value> {
    let mut v = arguments?;
    for key in path {
        v = v.as_object()?.get(key)?;
    }
    (!v.is_null()).then_some(v)
}

/// Every `Mcp-Param-{Name}` the tool's `x-mcp-header` annotations define,
/// against the call's `arguments` (*Streamable HTTP*, "Server Behavior for
/// Custom Headers"): a value present ⇒ the header is required and must
/// match; no value ⇒ no header expected (one sent anyway does not match);
/// a recognized header with invalid characters is rejected. Headers the
/// tool does not define are not looked at.
pub(crate) fn check_param_headers(
    headers: &HeaderMap,
    specs: &[ParamHeader],
    arguments: Option<&Value>,
) -> Result<(), Rejection> {
    for spec in specs {
        let display = format!("Mcp-Param-{}", spec.name);
        let raw = single(Seen::of(headers, &spec.header), &display)?;
        let decoded = raw
            .map(|raw| {
                headers::decode_value(raw).map_err(|e| {
                    Rejection::header(format!(
                        "Header mismatch: the {display} header value is invalid: {e}"
                    ))
                })
            })
            .transpose()?;
        let path = spec.path.join(".");
        match (decoded, at_path(arguments, &spec.path)) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(Rejection::header(format!(
                    "Header mismatch: the required {display} header is missing (arguments.{path} has a value)"
                )));
            }
            (Some(h), None) => {
                return Err(Rejection::header(format!(
                    "Header mismatch: {display} header value {} but arguments.{path} has no value",
                    show(&h)
                )));
            }
            (Some(h), Some(body)) => match value_matches(&h, body) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(Rejection::header(format!(
                        "Header mismatch: {display} header value {} does not match body value {body} (arguments.{path})",
                        show(&h)
                    )));
                }
                Err(why) => {
                    return Err(Rejection::header(format!(
                        "Header mismatch: arguments.{path} (mirrored in {display}) {why}"
                    )));
                }
            },
        }
    }
    Ok(())
}

/// Whether a decoded header value represents the body value ("Value
/// Encoding", "Type conversion"): strings exactly, booleans as `true` /
/// `false`, numbers numerically ("servers SHOULD compare the header value
/// and the body value numerically rather than as strings (e.g., `42.0` and
/// `42` are considered equal)"). Arrays and objects cannot be mirrored.
pub(crate) fn value_matches(header: &str, body: &Value) -> Result<bool, &'static str> {
    match body {
        Value::String(s) => Ok(header == s),
        Value::Bool(b) => Ok(header == if *b { "true" } else { "false" }),
        Value::Number(n) => Ok(numeric_eq(header, n)),
        Value::Null => Ok(false),
        Value::Array(_) | Value::Object(_) => {
            Err("is not a primitive value and cannot be carried in a header")
        }
    }
}

/// Whether `text` is a decimal number (JSON number syntax) equal to `n`.
fn numeric_eq(text: &str, n: &serde_json::Number) -> bool {
    if !is_decimal(text) {
        return false;
    }
    if let Ok(h) = text.parse::<i128>() {
        if let Some(b) = n.as_i64() {
            return h == i128::from(b);
        }
        if let Some(b) = n.as_u64() {
            return h == i128::from(b);
        }
    }
    match (text.parse::<f64>(), n.as_f64()) {
        (Ok(h), Some(b)) => h == b,
        _ => false,
    }
}

/// `-?digits(.digits)?([eE][+-]?digits)?`: no `+`, `inf`, `NaN` or spaces.
fn is_decimal(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use serde_json::json;

    fn params(v: Value) -> Params {
        let raw = serde_json::value::to_raw_value(&v).unwrap();
        Params::parse(Some(&raw))
    }

    fn meta_params(meta: Value) -> Params {
        params(json!({ "_meta": meta }))
    }

    fn hdrs(pairs: &[(&str, &[u8])]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_bytes(v).unwrap(),
            );
        }
        h
    }

    fn parse_text(text: &str) -> Params {
        let raw = RawValue::from_string(text.to_owned()).unwrap();
        Params::parse(Some(&raw))
    }

    #[test]
    fn params_members_are_exact_spans_of_the_text() {
        let p = parse_text(
            r#" { "name" : "add" , "arguments":{"a":[1, 2],"b":"}"} ,"_meta":{"k":null}}"#,
        );
        assert_eq!(p.get("name"), Some(r#""add""#));
        assert_eq!(p.get("arguments"), Some(r#"{"a":[1, 2],"b":"}"}"#));
        assert_eq!(p.get("_meta"), Some(r#"{"k":null}"#));
        assert_eq!(p.get("missing"), None);
        assert_eq!(p.parsed::<String>("name").as_deref(), Some("add"));
        assert_eq!(p.parsed::<String>("arguments"), None, "not a string");
    }

    #[test]
    fn params_read_a_repeated_name_as_its_last_value_and_decode_escaped_names() {
        let p = parse_text(r#"{"name":"a","n\u0061me":"b","x":1,"x":2}"#);
        assert_eq!(
            p.get("name"),
            Some(r#""b""#),
            "the escaped name is `name`, sent last"
        );
        assert_eq!(p.get("x"), Some("2"));
        let all = p.values_except(&["x"]);
        assert_eq!(all.len(), 1);
        assert_eq!(all["name"], json!("b"));
        let all = p.values_except(&[]);
        assert_eq!(all["x"], json!(2));
    }

    #[test]
    fn params_that_are_not_an_object_have_no_members() {
        for text in ["[1,2]", "\"name\"", "null", "3"] {
            let p = parse_text(text);
            assert_eq!(p.get("name"), None, "{text}");
            assert!(p.values_except(&[]).is_empty(), "{text}");
        }
        assert_eq!(Params::parse(None).get("name"), None);
    }

    #[test]
    fn metadata_required_fields() {
        let e = read_meta(&params(json!({}))).unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS);
        assert!(e.message.contains("params._meta"), "{}", e.message);

        let e = read_meta(&meta_params(json!({META_CLIENT_CAPABILITIES: {}}))).unwrap_err();
        assert!(e.message.contains(META_PROTOCOL_VERSION), "{}", e.message);

        let e = read_meta(&meta_params(json!({META_PROTOCOL_VERSION: "2026-07-28"}))).unwrap_err();
        assert!(
            e.message.contains(META_CLIENT_CAPABILITIES),
            "{}",
            e.message
        );

        let e = read_meta(&meta_params(
            json!({META_PROTOCOL_VERSION: 20260728, META_CLIENT_CAPABILITIES: {}}),
        ))
        .unwrap_err();
        assert!(e.message.contains("must be a string"), "{}", e.message);

        let e = read_meta(&meta_params(
            json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: []}),
        ))
        .unwrap_err();
        assert!(e.message.contains("must be an object"), "{}", e.message);

        let e = read_meta(&params(json!({"_meta": 3}))).unwrap_err();
        assert!(e.message.contains("JSON object"), "{}", e.message);

        let m = read_meta(&meta_params(json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {"elicitation": {}},
            META_CLIENT_INFO: {"name": "c", "version": "1"},
            META_LOG_LEVEL: "warning",
            "progressToken": 7
        })))
        .unwrap();
        assert_eq!(m.version.as_str(), "2026-07-28");
        assert_eq!(m.log_level().unwrap(), Some(LogLevel::Warning));
        assert_eq!(m.progress_token, Some(json!(7)));
        assert!(m.info.is_some());
        assert_eq!(m.capabilities, json!({"elicitation": {}}));
        // No optional capability (read without a parse) is an empty object,
        // spaced or not.
        for empty in ["{}", "{ }"] {
            let text = format!(
                r#"{{"_meta":{{"{META_PROTOCOL_VERSION}":"2026-07-28","{META_CLIENT_CAPABILITIES}":{empty}}}}}"#
            );
            let raw = RawValue::from_string(text).unwrap();
            let m = read_meta(&Params::parse(Some(&raw))).unwrap();
            assert_eq!(m.capabilities, json!({}), "{empty}");
        }
    }

    #[test]
    fn bad_log_level_and_token() {
        let m = read_meta(&meta_params(json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {},
            META_LOG_LEVEL: "loud",
            "progressToken": 1.5
        })))
        .unwrap();
        let e = m.log_level().unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS);
        assert!(e.message.contains("loud"));
        assert_eq!(m.progress_token, None);
    }

    #[test]
    fn version_header() {
        let ok = hdrs(&[("MCP-Protocol-Version", b"2026-07-28")]);
        assert!(check_version_header(&McpHeaders::read(&ok), "2026-07-28").is_ok());
        // Surrounding whitespace is framing.
        let ws = hdrs(&[("mcp-protocol-version", b"  2026-07-28 ")]);
        assert!(check_version_header(&McpHeaders::read(&ws), "2026-07-28").is_ok());

        let e =
            check_version_header(&McpHeaders::read(&HeaderMap::new()), "2026-07-28").unwrap_err();
        assert_eq!(e.code, HEADER_MISMATCH);
        assert!(e.message.contains("missing"), "{}", e.message);

        let e = check_version_header(&McpHeaders::read(&ok), "2025-11-25").unwrap_err();
        assert!(
            e.message.contains("'2026-07-28'") && e.message.contains("'2025-11-25'"),
            "{}",
            e.message
        );

        let bad = hdrs(&[("mcp-protocol-version", b"2026-07-28\xe9")]);
        let e = check_version_header(&McpHeaders::read(&bad), "2026-07-28").unwrap_err();
        assert!(e.message.contains("invalid characters"), "{}", e.message);
        // Bytes equal to the body's value are not enough: raw UTF-8 in a
        // header is refused whatever the body says.
        let raw_utf8 = hdrs(&[("mcp-protocol-version", "2026-07-28é".as_bytes())]);
        let e = check_version_header(&McpHeaders::read(&raw_utf8), "2026-07-28é").unwrap_err();
        assert!(e.message.contains("invalid characters"), "{}", e.message);
        let e = check_method_header(
            &McpHeaders::read(&hdrs(&[("mcp-method", "tools/callé".as_bytes())])),
            "tools/callé",
        )
        .unwrap_err();
        assert!(e.message.contains("invalid characters"), "{}", e.message);

        let twice = hdrs(&[
            ("mcp-protocol-version", b"2026-07-28"),
            ("mcp-protocol-version", b"2026-07-28"),
        ]);
        let e = check_version_header(&McpHeaders::read(&twice), "2026-07-28").unwrap_err();
        assert!(e.message.contains("more than once"), "{}", e.message);
    }

    #[test]
    fn the_three_headers_are_found_among_others_in_one_pass() {
        let p = params(json!({"name": "add"}));
        let h = hdrs(&[
            ("accept", b"application/json, text/event-stream"),
            ("Mcp-Name", b"add"),
            ("host", b"localhost"),
            ("MCP-Protocol-Version", b"2026-07-28"),
            ("mcp-param-a", b"1"),
            ("Mcp-Method", b"tools/call"),
        ]);
        let m = McpHeaders::read(&h);
        assert!(check_version_header(&m, "2026-07-28").is_ok());
        assert!(check_method_header(&m, "tools/call").is_ok());
        assert!(check_name_header(&m, "tools/call", &p).is_ok());
        // Each is judged by its own value, not another's.
        assert!(check_method_header(&m, "add").is_err());
        assert!(check_version_header(&m, "tools/call").is_err());
    }

    #[test]
    fn a_method_or_name_header_sent_twice_is_a_mismatch_wherever_the_second_is() {
        let p = params(json!({"name": "add"}));
        let h = hdrs(&[
            ("mcp-method", b"tools/call"),
            ("mcp-name", b"add"),
            ("host", b"localhost"),
            ("mcp-method", b"tools/call"),
            ("mcp-name", b"add"),
            ("mcp-name", b"add"),
        ]);
        let m = McpHeaders::read(&h);
        for e in [
            check_method_header(&m, "tools/call").unwrap_err(),
            check_name_header(&m, "tools/call", &p).unwrap_err(),
        ] {
            assert_eq!(e.code, HEADER_MISMATCH);
            assert!(e.message.contains("more than once"), "{}", e.message);
        }
    }

    #[test]
    fn method_header() {
        assert!(
            check_method_header(
                &McpHeaders::read(&hdrs(&[("MCP-METHOD", b"tools/call")])),
                "tools/call"
            )
            .is_ok()
        );
        let e =
            check_method_header(&McpHeaders::read(&HeaderMap::new()), "tools/call").unwrap_err();
        assert!(e.message.contains("missing"));
        // Values are case-sensitive.
        let e = check_method_header(
            &McpHeaders::read(&hdrs(&[("mcp-method", b"TOOLS/CALL")])),
            "tools/call",
        )
        .unwrap_err();
        assert_eq!(e.code, HEADER_MISMATCH);
        assert!(e.message.contains("does not match"));
        let e = check_method_header(
            &McpHeaders::read(&hdrs(&[("mcp-method", b"prompts/get")])),
            "tools/call",
        )
        .unwrap_err();
        assert!(e.message.contains("'prompts/get'"));
    }

    #[test]
    fn name_header() {
        let p = params(json!({"name": "get_weather"}));
        // The body's value, checked, is handed back.
        assert_eq!(
            check_name_header(
                &McpHeaders::read(&hdrs(&[("mcp-name", b"get_weather")])),
                "tools/call",
                &p
            )
            .unwrap()
            .as_deref(),
            Some("get_weather")
        );
        // Not required for other methods.
        assert_eq!(
            check_name_header(&McpHeaders::read(&HeaderMap::new()), "tools/list", &p).unwrap(),
            None
        );

        let e =
            check_name_header(&McpHeaders::read(&HeaderMap::new()), "tools/call", &p).unwrap_err();
        assert!(e.message.contains("missing"));
        let e = check_name_header(
            &McpHeaders::read(&hdrs(&[("mcp-name", b"foo")])),
            "tools/call",
            &p,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Header mismatch: Mcp-Name header value 'foo' does not match body value 'get_weather'"
        );
        // The body must carry the member.
        let e = check_name_header(
            &McpHeaders::read(&hdrs(&[("mcp-name", b"x")])),
            "prompts/get",
            &params(json!({})),
        )
        .unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS);

        // resources/read mirrors params.uri; URIs with query strings go plain.
        let uri = "https://example.com/resource?id=123";
        let p = params(json!({"uri": uri}));
        assert!(
            check_name_header(
                &McpHeaders::read(&hdrs(&[("mcp-name", uri.as_bytes())])),
                "resources/read",
                &p
            )
            .is_ok()
        );
    }

    #[test]
    fn name_header_base64_roundtrips() {
        for name in [
            "Hello, 世界",
            " padded ",
            "line1\nline2",
            "line1\r\nline2",
            "\tindented",
            "=?base64?literal?=",
            "日本語",
        ] {
            let p = params(json!({"name": name}));
            let enc = headers::encode_value(name);
            assert!(enc.starts_with("=?base64?"), "{name:?} -> {enc}");
            assert!(
                check_name_header(
                    &McpHeaders::read(&hdrs(&[("mcp-name", enc.as_bytes())])),
                    "tools/call",
                    &p
                )
                .is_ok(),
                "{name:?}"
            );
        }
        // A sentinel-looking plain value must not match the literal text:
        // the server decodes it.
        let p = params(json!({"name": "=?base64?aGk=?="}));
        let e = check_name_header(
            &McpHeaders::read(&hdrs(&[("mcp-name", b"=?base64?aGk=?=")])),
            "tools/call",
            &p,
        )
        .unwrap_err();
        assert!(e.message.contains("'hi'"), "{}", e.message);
        // Invalid Base64 (bad padding, bad characters) and raw non-ASCII.
        let p = params(json!({"name": "Hello"}));
        for bad in [
            &b"=?base64?SGVsbG8?="[..],
            b"=?base64?SGVs!!!bG8=?=",
            b"Hell\xc3\xb6",
        ] {
            let e = check_name_header(
                &McpHeaders::read(&hdrs(&[("mcp-name", bad)])),
                "tools/call",
                &p,
            )
            .unwrap_err();
            assert_eq!(e.code, HEADER_MISMATCH, "{bad:?}");
            assert!(e.message.contains("invalid"), "{}", e.message);
        }
        // A body name sent with escapes is the name it decodes to; one
        // that is not a string is no name.
        let p = parse_text(r#"{"name":"h\u0065llo"}"#);
        assert!(
            check_name_header(
                &McpHeaders::read(&hdrs(&[("mcp-name", b"hello")])),
                "tools/call",
                &p
            )
            .is_ok()
        );
        assert_eq!(p.string("name").as_deref(), Some("hello"));
        let p = parse_text(r#"{"name":["hello"]}"#);
        let e = check_name_header(
            &McpHeaders::read(&hdrs(&[("mcp-name", b"hello")])),
            "tools/call",
            &p,
        )
        .unwrap_err();
        assert_eq!(e.code, INVALID_PARAMS);
        // Case-sensitive markers: an upper-case sentinel is a literal value.
        let p = params(json!({"name": "=?BASE64?SGVsbG8=?="}));
        assert!(
            check_name_header(
                &McpHeaders::read(&hdrs(&[("mcp-name", b"=?BASE64?SGVsbG8=?=")])),
                "tools/call",
                &p
            )
            .is_ok()
        );
    }

    fn spec(name: &str, path: &[&str]) -> ParamHeader {
        ParamHeader::new(name, path.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn param_headers() {
        let specs = [
            spec("Region", &["region"]),
            spec("Count", &["count"]),
            spec("DryRun", &["dry_run"]),
            spec("Zone", &["target", "zone"]),
        ];
        let args = json!({
            "region": "us-west1", "count": 42, "dry_run": false,
            "target": {"zone": "b"}, "query": "SELECT 1"
        });
        let ok = hdrs(&[
            ("mcp-param-region", b"us-west1"),
            ("MCP-PARAM-COUNT", b"42.0"),
            ("Mcp-Param-DryRun", b"false"),
            ("mcp-param-zone", b"b"),
            ("mcp-param-unrelated", b"\xff ignored"),
        ]);
        assert!(check_param_headers(&ok, &specs, Some(&args)).is_ok());

        // Missing while the body has a value.
        let mut h = ok.clone();
        h.remove("mcp-param-zone");
        let e = check_param_headers(&h, &specs, Some(&args)).unwrap_err();
        assert_eq!(e.code, HEADER_MISMATCH);
        assert!(
            e.message.contains("Mcp-Param-Zone") && e.message.contains("target.zone"),
            "{}",
            e.message
        );

        // Null or absent values expect no header; one sent anyway mismatches.
        let args2 = json!({"region": null});
        assert!(check_param_headers(&HeaderMap::new(), &specs, Some(&args2)).is_ok());
        assert!(check_param_headers(&HeaderMap::new(), &specs, None).is_ok());
        let e = check_param_headers(&hdrs(&[("mcp-param-region", b"x")]), &specs, Some(&args2))
            .unwrap_err();
        assert!(e.message.contains("no value"), "{}", e.message);

        // Mismatches by type.
        for (name, bad) in [
            ("mcp-param-region", &b"us-east1"[..]),
            ("mcp-param-count", b"43"),
            ("mcp-param-count", b"forty-two"),
            ("mcp-param-dryrun", b"False"),
            ("mcp-param-dryrun", b"0"),
        ] {
            let mut h = ok.clone();
            h.insert(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(bad).unwrap(),
            );
            let e = check_param_headers(&h, &specs, Some(&args)).unwrap_err();
            assert!(
                e.message.contains("does not match"),
                "{name}: {}",
                e.message
            );
        }

        // A recognized header with invalid characters.
        let mut h = ok.clone();
        h.insert(
            "mcp-param-region",
            HeaderValue::from_bytes(b"us-w\xe9st").unwrap(),
        );
        let e = check_param_headers(&h, &specs, Some(&args)).unwrap_err();
        assert!(e.message.contains("invalid characters"), "{}", e.message);

        // Base64 values with non-ASCII and significant whitespace.
        let args3 = json!({"region": " Zürich\n"});
        let enc = headers::encode_value(" Zürich\n");
        let h = hdrs(&[("mcp-param-region", enc.as_bytes())]);
        assert!(check_param_headers(&h, &specs[..1], Some(&args3)).is_ok());

        // Non-primitive values cannot be mirrored.
        let args4 = json!({"region": ["a"]});
        let e = check_param_headers(
            &hdrs(&[("mcp-param-region", b"a")]),
            &specs[..1],
            Some(&args4),
        )
        .unwrap_err();
        assert!(e.message.contains("not a primitive"), "{}", e.message);
    }

    #[test]
    fn numeric_comparison() {
        let n = |v: Value| v;
        assert_eq!(value_matches("42", &n(json!(42))), Ok(true));
        assert_eq!(value_matches("42.0", &n(json!(42))), Ok(true));
        assert_eq!(value_matches("4.2e1", &n(json!(42))), Ok(true));
        assert_eq!(value_matches("-7", &n(json!(-7))), Ok(true));
        assert_eq!(value_matches("42", &n(json!(42.0))), Ok(true));
        assert_eq!(value_matches("2.5", &n(json!(2.5))), Ok(true));
        assert_eq!(
            value_matches("9007199254740991", &n(json!(9_007_199_254_740_991_i64))),
            Ok(true)
        );
        for bad in [
            "+42", "42 ", "0x2a", "inf", "NaN", "", "-", "4.", ".5", "1e",
        ] {
            assert_eq!(value_matches(bad, &n(json!(42))), Ok(false), "{bad:?}");
        }
        assert_eq!(value_matches("43", &n(json!(42))), Ok(false));
        // Strings compare exactly, even when numeric-looking.
        assert_eq!(value_matches("42.0", &n(json!("42"))), Ok(false));
        assert_eq!(value_matches("true", &n(json!(true))), Ok(true));
        assert_eq!(value_matches("TRUE", &n(json!(true))), Ok(false));
    }

    /// Texts outside the JSON number grammar are refused even where Rust's
    /// float parser would read them as the body's value (`"42."` is 42.0
    /// to `f64::from_str`).
    #[test]
    fn numbers_follow_the_json_grammar_not_the_float_parser() {
        assert_eq!(value_matches("42.", &json!(42)), Ok(false));
        assert_eq!(value_matches(".5", &json!(0.5)), Ok(false));
        assert_eq!(value_matches("-.5", &json!(-0.5)), Ok(false));
        assert_eq!(value_matches("1e", &json!(1)), Ok(false));
        assert_eq!(value_matches("1e+", &json!(1)), Ok(false));
        // Signed exponents are JSON numbers.
        assert_eq!(value_matches("4.2e+1", &json!(42)), Ok(true));
        assert_eq!(value_matches("4200E-2", &json!(42)), Ok(true));
        assert_eq!(value_matches("-4.2e+1", &json!(-42)), Ok(true));
    }

    /// Integers beyond `i64` compare exactly: as `f64` the two neighbours
    /// of `u64::MAX` below would be equal.
    #[test]
    fn large_integers_compare_exactly() {
        let max = json!(u64::MAX);
        assert_eq!(value_matches("18446744073709551615", &max), Ok(true));
        assert_eq!(value_matches("18446744073709551614", &max), Ok(false));
        let min = json!(i64::MIN);
        assert_eq!(value_matches("-9223372036854775808", &min), Ok(true));
        assert_eq!(value_matches("-9223372036854775807", &min), Ok(false));
        let big = json!(9_007_199_254_740_993_i64);
        assert_eq!(value_matches("9007199254740992", &big), Ok(false));
    }

    /// `progressToken` is a string or an integer (*Progress*: "Progress
    /// tokens MUST be a string or integer value"); anything else is
    /// dropped, not echoed.
    #[test]
    fn progress_tokens_are_strings_or_integers() {
        let token = |t: Value| {
            read_meta(&meta_params(json!({
                META_PROTOCOL_VERSION: "2026-07-28",
                META_CLIENT_CAPABILITIES: {},
                "progressToken": t
            })))
            .unwrap()
            .progress_token
        };
        assert_eq!(token(json!("job-1")), Some(json!("job-1")));
        assert_eq!(token(json!(-3)), Some(json!(-3)));
        assert_eq!(token(json!(u64::MAX)), Some(json!(u64::MAX)));
        assert_eq!(token(json!(true)), None);
        assert_eq!(token(json!({"a": 1})), None);
    }
}
