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
    // Both headers found in one walk over the request's few headers rather
    // than by two hashed lookups (`header_scan`'s reasoning). Every
    // `Accept` counts, as in [`accepts`]; the first `Content-Type`, as
    // `HeaderMap::get` gives it. The values clients send are recognised by
    // their bytes before any is checked as text (`HeaderValue::to_str`
    // looks at each byte: ~150 instructions for the usual `Accept`).
    let mut accepts = Accepts::default();
    let mut content_type = None;
    for (name, value) in headers {
        if *name == ACCEPT {
            let this = if value.as_bytes() == USUAL_ACCEPT {
                Accepts {
                    json: true,
                    sse: true,
                }
            } else {
                mcp_transport_core::endpoint::accepts(value.to_str().ok())
            };
            accepts.json |= this.json;
            accepts.sse |= this.sse;
        } else if *name == CONTENT_TYPE && content_type.is_none() {
            content_type = Some(value);
        }
    }
    if !(accepts.json && accepts.sse) {
        return Err(Reject::invalid(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: the Accept header must list both application/json and text/event-stream",
        ));
    }
    let json = content_type.is_some_and(|v| {
        v.as_bytes() == b"application/json"
            || v.to_str()
                .is_ok_and(mcp_transport_core::endpoint::is_json_media_type)
    });
    if !json {
        return Err(Reject::invalid(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
        ));
    }
    Ok(())
}

/// The `Accept` value of the specification's own example, which clients
/// send as it is.
const USUAL_ACCEPT: &[u8] = b"application/json, text/event-stream";

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

    /// The one pass reads what `accepts` and `is_json_content_type` read:
    /// every `Accept` (two headers may list one type each), the first
    /// `Content-Type`.
    #[test]
    fn post_media_reads_every_accept_and_the_first_content_type() {
        let mut h = HeaderMap::new();
        h.append(ACCEPT, "application/json".parse().unwrap());
        h.append(CONTENT_TYPE, "application/json".parse().unwrap());
        h.append(ACCEPT, "text/event-stream;q=0".parse().unwrap());
        assert_eq!(
            check_post_media(&h).unwrap_err().status,
            StatusCode::NOT_ACCEPTABLE
        );
        h.append(ACCEPT, "text/event-stream".parse().unwrap());
        assert!(check_post_media(&h).is_ok());
        h.append(CONTENT_TYPE, "text/plain".parse().unwrap());
        assert!(check_post_media(&h).is_ok());
        let mut first_not_json = HeaderMap::new();
        first_not_json.append(ACCEPT, "*/*".parse().unwrap());
        first_not_json.append(CONTENT_TYPE, "text/plain".parse().unwrap());
        first_not_json.append(CONTENT_TYPE, "application/json".parse().unwrap());
        assert_eq!(
            check_post_media(&first_not_json).unwrap_err().status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        assert!(!is_json_content_type(&first_not_json));
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
        // Not the usual bytes, still JSON: the media-type rules decide.
        h.insert(
            CONTENT_TYPE,
            "Application/JSON; charset=utf-8".parse().unwrap(),
        );
        assert!(check_post_media(&h).is_ok());
    }
}
