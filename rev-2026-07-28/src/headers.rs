//! Request-metadata headers and their value encoding (2026-07-28 *Streamable
//! HTTP*, "Request Metadata"; SEP-2243).
//!
//! Header names are case-insensitive; values are case-sensitive ("Case
//! Sensitivity"). `Mcp-Name` and `Mcp-Param-{Name}` values that cannot be
//! carried as plain header text are sent as `=?base64?{Base64}?=` ("Value
//! Encoding").

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// The header names, defined once at the edge: `MCP-Protocol-Version`
/// (required on every POST, must equal `_meta`'s version), `Mcp-Method`,
/// `Mcp-Name`, the `Mcp-Param-` prefix, and `Mcp-Session-Id` and
/// `Last-Event-ID`, which this revision ignores (never minted or echoed;
/// streams are not resumable).
pub use mcp_http_edge::headers::{
    LAST_EVENT_ID, METHOD, NAME, PARAM_PREFIX, PROTOCOL_VERSION, SESSION_ID, name,
};

/// `_meta` key carrying the protocol version.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key carrying the client capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key carrying the client info.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key carrying the requested log level.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key tagging notifications on a listen stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// The methods whose `Mcp-Name` header is required, and the params member it
/// mirrors: SEP-2243's `tools/call`, `prompts/get` and `resources/read`, and
/// the Tasks extension's `tasks/get`, `tasks/update` and `tasks/cancel`
/// (*Tasks*, "Streamable HTTP: Routing Headers": "the client MUST set the
/// `Mcp-Name` header to the value of `params.taskId`").
pub fn name_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// Whether `value` may be sent as a plain header value: visible ASCII,
/// space and tab only (RFC 9110 field values), no leading or trailing
/// whitespace, and not shaped like the Base64 sentinel.
pub fn is_plain_safe(value: &str) -> bool {
    let bytes = value.as_bytes();
    let allowed = |b: &u8| matches!(b, 0x21..=0x7e | b' ' | b'\t');
    bytes.iter().all(allowed)
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t'])
        && !looks_encoded(value)
}

fn looks_encoded(value: &str) -> bool {
    value.len() >= SENTINEL_PREFIX.len() + SENTINEL_SUFFIX.len()
        && value.starts_with(SENTINEL_PREFIX)
        && value.ends_with(SENTINEL_SUFFIX)
}

/// Encodes a value for `Mcp-Name` / `Mcp-Param-*`: as-is when plain-safe,
/// else `=?base64?{Base64 of the UTF-8}?=` ("Value Encoding").
pub fn encode_value(value: &str) -> String {
    if is_plain_safe(value) {
        value.to_owned()
    } else {
        format!(
            "{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}",
            STANDARD.encode(value)
        )
    }
}

/// Why a header value could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderValueError {
    /// The value holds bytes a header value may not hold.
    #[error("header value contains invalid characters")]
    InvalidCharacters,
    /// The `=?base64?…?=` payload is not valid Base64.
    #[error("invalid Base64 in =?base64?…?= header value")]
    InvalidBase64,
    /// The decoded Base64 is not UTF-8.
    #[error("Base64 header value does not decode to UTF-8")]
    NotUtf8,
}

/// Decodes a received `Mcp-Name` / `Mcp-Param-*` value: the sentinel form is
/// Base64-decoded (markers are case-sensitive), anything else must be plain
/// header text and is returned as-is.
pub fn decode_value(raw: &[u8]) -> Result<String, HeaderValueError> {
    decode(raw).map(Cow::into_owned)
}

/// [`decode_value`], borrowing a plain value from `raw` (only an encoded
/// one is decoded into a new string).
pub fn decode(raw: &[u8]) -> Result<Cow<'_, str>, HeaderValueError> {
    if !raw.iter().all(|b| matches!(b, 0x21..=0x7e | b' ' | b'\t')) {
        return Err(HeaderValueError::InvalidCharacters);
    }
    // Checked above: only ASCII, so this is valid UTF-8.
    let text = std::str::from_utf8(raw).map_err(|_| HeaderValueError::InvalidCharacters)?;
    if looks_encoded(text) {
        let inner = &text[SENTINEL_PREFIX.len()..text.len() - SENTINEL_SUFFIX.len()];
        let bytes = STANDARD
            .decode(inner)
            .map_err(|_| HeaderValueError::InvalidBase64)?;
        return String::from_utf8(bytes)
            .map(Cow::Owned)
            .map_err(|_| HeaderValueError::NotUtf8);
    }
    Ok(Cow::Borrowed(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        // The table in "Value Encoding".
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(
            encode_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn roundtrip() {
        for v in [
            "",
            "plain",
            "Hello, 世界",
            " lead",
            "trail ",
            "a\nb",
            "tab\tinside",
            "=?base64?x?=",
            "\u{0}",
        ] {
            assert_eq!(
                decode_value(encode_value(v).as_bytes()).unwrap(),
                v,
                "{v:?}"
            );
        }
    }

    /// The methods whose `Mcp-Name` mirrors a params member, and which.
    #[test]
    fn the_name_header_mirrors_its_methods_member() {
        for (method, member) in [
            ("tools/call", Some("name")),
            ("prompts/get", Some("name")),
            ("resources/read", Some("uri")),
            ("tasks/get", Some("taskId")),
            ("tasks/update", Some("taskId")),
            ("tasks/cancel", Some("taskId")),
            ("tools/list", None),
            ("tasks/list", None),
        ] {
            assert_eq!(name_member(method), member, "{method}");
        }
    }

    /// A value that only starts with the prefix and ends with the suffix
    /// because they overlap (`=?base64?=`, 10 bytes) is plain text, not an
    /// encoded value with a negative-length payload.
    #[test]
    fn overlapping_markers_are_plain_text() {
        assert_eq!(decode_value(b"=?base64?=").unwrap(), "=?base64?=");
        assert!(is_plain_safe("=?base64?="));
        assert_eq!(encode_value("=?base64?="), "=?base64?=");
        assert_eq!(decode_value(b"=?base64??=").unwrap(), "");
    }

    #[test]
    fn decode_errors() {
        assert_eq!(
            decode_value(b"=?base64?***?="),
            Err(HeaderValueError::InvalidBase64)
        );
        assert_eq!(
            decode_value(b"=?base64?/w==?="),
            Err(HeaderValueError::NotUtf8)
        );
        assert_eq!(
            decode_value("é".as_bytes()),
            Err(HeaderValueError::InvalidCharacters)
        );
        // Markers are case-sensitive: an upper-case sentinel is a plain value.
        assert_eq!(decode_value(b"=?BASE64?eA==?=").unwrap(), "=?BASE64?eA==?=");
    }
}
