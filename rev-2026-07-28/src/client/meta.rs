//! The per-request metadata: `params._meta` and the HTTP headers that
//! mirror it.
//!
//! * `_meta` (*Overview*, "`_meta`", "Per-request protocol fields"):
//!   `io.modelcontextprotocol/protocolVersion` (always the transport's
//!   current version: it must equal the header), and — unless the caller
//!   already put them in its own `_meta` — `clientCapabilities` (required),
//!   `clientInfo` (when configured), `logLevel` (when configured) and a
//!   `progressToken` (when `RequestOptions::progress` asks for one). Other
//!   `_meta` keys of the caller (`traceparent`, vendor keys) are kept.
//! * Headers (*Streamable HTTP*, "Sending Messages" 2 and "Request
//!   Metadata"): `Accept: application/json, text/event-stream`,
//!   `Content-Type: application/json`, `MCP-Protocol-Version`, `Mcp-Method`,
//!   `Mcp-Name` for `tools/call` / `prompts/get` (`params.name`) and
//!   `resources/read` (`params.uri`), and `Mcp-Param-{Name}` for
//!   `tools/call` from the cached tool schemas
//!   ([`tool_cache`](super::tool_cache)). `Mcp-Name` and `Mcp-Param-*`
//!   values go through [`headers::encode_value`]. Never `Mcp-Session-Id`
//!   nor `Last-Event-ID` (no sessions, no resumption in this revision).

use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::transport::TransportError;
use serde_json::{Map, Value};

use mcp_http_edge::headers::{ACCEPT_POST, JSON};

use super::config::ModernClientConfig;
use super::tool_cache::ToolCache;
use crate::headers;

/// What the transport adds to `_meta` on each attempt.
pub(crate) struct MetaInputs<'a> {
    /// The protocol version of this attempt.
    pub(crate) version: &'a ProtocolVersion,
    /// The client's configuration (capabilities, info, log level).
    pub(crate) config: &'a ModernClientConfig,
    /// The progress token of the request, if progress was asked for.
    pub(crate) progress_token: Option<&'a Value>,
}

/// Sets the per-request `_meta` fields in `params`.
pub(crate) fn apply_meta(params: &mut Map<String, Value>, inputs: &MetaInputs<'_>) {
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        tracing::warn!("params._meta is not an object; replaced by the request metadata");
        *meta = Value::Object(Map::new());
    }
    let Value::Object(meta) = meta else {
        return;
    };
    meta.insert(
        headers::META_PROTOCOL_VERSION.to_owned(),
        Value::String(inputs.version.as_str().to_owned()),
    );
    meta.entry(headers::META_CLIENT_CAPABILITIES)
        .or_insert_with(|| inputs.config.capabilities.clone());
    if let Some(info) = &inputs.config.client_info {
        meta.entry(headers::META_CLIENT_INFO)
            .or_insert_with(|| info.clone());
    }
    if let Some(level) = inputs.config.log_level {
        meta.entry(headers::META_LOG_LEVEL)
            .or_insert_with(|| serde_json::to_value(level).unwrap_or(Value::Null));
    }
    if let Some(token) = inputs.progress_token {
        meta.entry("progressToken").or_insert_with(|| token.clone());
    }
}

fn header_value(name: &str, value: &str) -> Result<HeaderValue, TransportError> {
    HeaderValue::from_str(value).map_err(|_| TransportError::Unsupported {
        revision: ProtocolVersion::V2026_07_28,
        what: match name {
            headers::METHOD => "a method name that is not a valid HTTP header value (Mcp-Method mirrors it verbatim)",
            _ => "a value that is not a valid HTTP header value",
        },
    })
}

/// The headers of a request POST (see the module docs).
pub(crate) fn request_headers(
    method: &str,
    params: &Map<String, Value>,
    version: &ProtocolVersion,
    tools: &ToolCache,
) -> Result<HeaderMap, TransportError> {
    let mut map = notification_headers(method, version)?;
    if let Some(member) = headers::name_member(method) {
        match params.get(member).and_then(Value::as_str) {
            Some(name) => {
                map.insert(
                    HeaderName::from_static(headers::NAME),
                    header_value(headers::NAME, &headers::encode_value(name))?,
                );
            }
            None => tracing::debug!(
                method,
                member,
                "no string params.{member}: Mcp-Name omitted"
            ),
        }
    }
    if method == "tools/call"
        && let Some(tool) = params.get("name").and_then(Value::as_str)
    {
        for (name, value) in tools.headers_for(tool, params.get("arguments")) {
            // Names were validated as tokens and values encoded, so both parse.
            let Ok(name) = HeaderName::from_bytes(name.as_bytes()) else {
                continue;
            };
            map.insert(name, header_value("Mcp-Param", &value)?);
        }
    }
    Ok(map)
}

/// The headers of a notification POST, which are also the base set of a
/// request's: `Accept`, `Content-Type`, `MCP-Protocol-Version` and
/// `Mcp-Method`, without `Mcp-Name` ("header requirements for notification
/// POSTs are not defined by this revision"; SEP-2243 asks for `Mcp-Method`
/// on notifications too).
pub(crate) fn notification_headers(
    method: &str,
    version: &ProtocolVersion,
) -> Result<HeaderMap, TransportError> {
    let mut map = HeaderMap::new();
    map.insert(ACCEPT, HeaderValue::from_static(ACCEPT_POST));
    map.insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
    map.insert(
        HeaderName::from_static(headers::PROTOCOL_VERSION),
        header_value(headers::PROTOCOL_VERSION, version.as_str())?,
    );
    map.insert(
        HeaderName::from_static(headers::METHOD),
        header_value(headers::METHOD, method)?,
    );
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn meta_keeps_caller_keys_and_owns_the_version() {
        let config = ModernClientConfig {
            log_level: Some(mcp_transport_core::handler::LogLevel::Warning),
            ..Default::default()
        };
        let mut params = json!({"name": "x", "_meta": {
            "traceparent": "00-a-b-01",
            "io.modelcontextprotocol/protocolVersion": "1999-01-01",
            "io.modelcontextprotocol/clientCapabilities": {"roots": {}}
        }})
        .as_object()
        .unwrap()
        .clone();
        let token = json!("p1");
        apply_meta(
            &mut params,
            &MetaInputs {
                version: &ProtocolVersion::V2026_07_28,
                config: &config,
                progress_token: Some(&token),
            },
        );
        let meta = &params["_meta"];
        assert_eq!(meta["traceparent"], "00-a-b-01");
        assert_eq!(meta[headers::META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(
            meta[headers::META_CLIENT_CAPABILITIES],
            json!({"roots": {}})
        );
        assert_eq!(
            meta[headers::META_CLIENT_INFO]["name"],
            "mcp-rev-2026-07-28"
        );
        assert_eq!(meta[headers::META_LOG_LEVEL], "warning");
        assert_eq!(meta["progressToken"], "p1");
    }

    #[test]
    fn name_headers_are_encoded() {
        let tools = ToolCache::default();
        let params = json!({"uri": "file:///ü"}).as_object().unwrap().clone();
        let h = request_headers(
            "resources/read",
            &params,
            &ProtocolVersion::V2026_07_28,
            &tools,
        )
        .unwrap();
        assert_eq!(h[headers::NAME], "=?base64?ZmlsZTovLy/DvA==?=");
        assert_eq!(h[headers::METHOD], "resources/read");
        assert_eq!(h[ACCEPT], ACCEPT_POST);
        assert!(h.get(headers::SESSION_ID).is_none());
        let h = request_headers(
            "tools/list",
            &Map::new(),
            &ProtocolVersion::V2026_07_28,
            &tools,
        )
        .unwrap();
        assert!(h.get(headers::NAME).is_none());
    }
}
