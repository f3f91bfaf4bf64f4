//! Endpoint checks that come before the body is read: `Origin`, `Host`,
//! `Accept`, `Content-Type` (*Streamable HTTP*, "Security & Endpoint" and
//! "Sending Messages"). Pure functions over header values; the same rules
//! as the legacy engine.

use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE};

pub(crate) use mcp_transport_core::endpoint::{Accepts, host_allowed, origin_allowed};

/// Reads every `Accept` header ([`mcp_transport_core::endpoint::accepts`]).
pub(crate) fn accepts(headers: &HeaderMap) -> Accepts {
    mcp_transport_core::endpoint::accepts(
        headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    )
}

/// Whether `Content-Type` is `application/json` (parameters such as
/// `charset` allowed, case-insensitive).
pub(crate) fn is_json_content_type(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(mcp_transport_core::endpoint::is_json_media_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(v: &str) -> Accepts {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, v.parse().unwrap());
        accepts(&h)
    }

    #[test]
    fn accept_headers_are_read() {
        assert!(acc("application/json, text/event-stream").sse);
        assert!(!acc("application/json").sse);
    }

    #[test]
    fn content_type() {
        let mut h = HeaderMap::new();
        assert!(!is_json_content_type(&h));
        h.insert(
            CONTENT_TYPE,
            "Application/JSON; charset=utf-8".parse().unwrap(),
        );
        assert!(is_json_content_type(&h));
        h.insert(CONTENT_TYPE, "text/plain".parse().unwrap());
        assert!(!is_json_content_type(&h));
    }
}
