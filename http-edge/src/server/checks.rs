//! The media-type checks of a POST, over `http` headers: `Accept` must list
//! both answer types, `Content-Type` must be JSON. The rules themselves
//! (`*/*`, `q=0`, parameters) are `mcp_transport_core::endpoint`'s; the
//! `Origin`/`Host` check is [`OriginPolicy::check`](crate::config::OriginPolicy::check).

use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, StatusCode};

pub use mcp_transport_core::endpoint::Accepts;

use super::Reject;

/// Reads every `Accept` header ([`mcp_transport_core::endpoint::accepts`]).
pub fn accepts(headers: &HeaderMap) -> Accepts {
    mcp_transport_core::endpoint::accepts(
        headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok()),
    )
}

/// Whether `Content-Type` is `application/json` (parameters such as
/// `charset` allowed, case-insensitive).
pub fn is_json_content_type(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(mcp_transport_core::endpoint::is_json_media_type)
}

/// The media types of a POST (*Transports*, "Sending Messages to the
/// Server" 2): 406 unless `Accept` lists both `application/json` and
/// `text/event-stream`, then 415 unless `Content-Type` is
/// `application/json`.
pub fn check_post_media(headers: &HeaderMap) -> Result<(), Reject> {
    let accepts = accepts(headers);
    if !(accepts.json && accepts.sse) {
        return Err(Reject::invalid(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: the Accept header must list both application/json and text/event-stream",
        ));
    }
    if !is_json_content_type(headers) {
        return Err(Reject::invalid(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
        ));
    }
    Ok(())
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

    #[test]
    fn post_media_order() {
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, "text/plain".parse().unwrap());
        let r = check_post_media(&h).unwrap_err();
        assert_eq!(r.status, StatusCode::NOT_ACCEPTABLE);
        h.insert(ACCEPT, "*/*".parse().unwrap());
        let r = check_post_media(&h).unwrap_err();
        assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        h.insert(CONTENT_TYPE, "application/json".parse().unwrap());
        assert!(check_post_media(&h).is_ok());
    }
}
