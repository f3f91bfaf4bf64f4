//! Reading an answer: its media type, its body within a bound, and what an
//! error body says.

use http::StatusCode;
use http::header::CONTENT_TYPE;
use mcp_transport_core::jsonrpc::ErrorObject;
use mcp_transport_core::transport::{LimitExceeded, TransportError};
use serde::Deserialize;

use super::send::error_chain;
use crate::headers::{EVENT_STREAM, JSON};

/// The media type of an answer.
#[derive(Debug, PartialEq, Eq)]
pub enum MediaType {
    /// `application/json`.
    Json,
    /// `text/event-stream`.
    EventStream,
    /// Anything else (or none), as sent.
    Other(String),
}

/// Reads the media type of an answer (parameters such as `charset` ignored).
pub fn media_type(response: &reqwest::Response) -> MediaType {
    let raw = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = raw.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case(JSON) {
        MediaType::Json
    } else if essence.eq_ignore_ascii_case(EVENT_STREAM) {
        MediaType::EventStream
    } else {
        MediaType::Other(raw.to_owned())
    }
}

/// Why a body could not be read whole.
#[derive(Debug)]
pub enum BodyError {
    /// It is larger than allowed: a `TransportError::Limit` naming
    /// `max_body_bytes`.
    Limit(TransportError),
    /// The connection broke before its end (the reqwest error chain).
    Broken(String),
}

/// Reads a whole body, failing with `Limit` past `limit` bytes (at once
/// when `Content-Length` already says so).
pub async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
    what: &str,
) -> Result<Vec<u8>, BodyError> {
    let too_large = || {
        BodyError::Limit(TransportError::Limit(LimitExceeded::new(
            "max_body_bytes",
            limit as u64,
            format!("{what}: the JSON answer body"),
        )))
    };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| BodyError::Broken(error_chain(&e)))?
    {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The most bytes of an error (non-2xx) body a client reads to find its
/// JSON-RPC error or message: enough for any real error, small enough that
/// a misbehaving server cannot make a refusal costly.
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// Reads at most `limit` bytes of a body (for error bodies; a broken
/// connection keeps what arrived).
pub async fn read_limited(mut response: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = limit.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= limit {
            break;
        }
    }
    body
}

/// The JSON-RPC error in an error body, if it holds one (a response with no
/// `id`, as the *Transports* page allows, or with one).
pub fn rpc_error(body: &[u8]) -> Option<ErrorObject> {
    #[derive(Deserialize)]
    struct ErrorBody {
        error: ErrorObject,
    }
    serde_json::from_slice::<ErrorBody>(body)
        .ok()
        .map(|b| b.error)
}

/// A short, printable excerpt of an error body that holds no JSON-RPC
/// error: its first 500 characters, trimmed, or the status's reason when it
/// is empty.
pub fn body_excerpt(body: &[u8], status: StatusCode) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("no reason given")
            .to_owned()
    } else {
        text.chars().take(500).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_bodies::{answer, chunked, claimed};
    use super::*;

    #[test]
    fn error_bodies() {
        let e = rpc_error(br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"no"}}"#);
        assert_eq!(e.map(|e| e.code), Some(-32600));
        assert!(rpc_error(b"oops").is_none());
        assert_eq!(body_excerpt(b"  oops ", StatusCode::BAD_REQUEST), "oops");
        assert_eq!(body_excerpt(b"", StatusCode::NOT_FOUND), "Not Found");
        // No text and a status with no reason phrase.
        let odd = StatusCode::from_u16(599).unwrap();
        assert_eq!(body_excerpt(b" \n ", odd), "no reason given");
        // At most 500 characters (not bytes) of a long body.
        let long = "é".repeat(600);
        assert_eq!(
            body_excerpt(long.as_bytes(), StatusCode::BAD_REQUEST),
            "é".repeat(500)
        );
        // An error body that is not a JSON-RPC error object.
        assert!(rpc_error(br#"{"error":"no"}"#).is_none());
    }

    #[test]
    fn media_types() {
        let of = |ct| media_type(&answer(ct, reqwest::Body::from("")));
        assert_eq!(of(Some("application/json")), MediaType::Json);
        assert_eq!(
            of(Some("Application/JSON ; charset=utf-8")),
            MediaType::Json
        );
        assert_eq!(of(Some("text/event-stream")), MediaType::EventStream);
        assert_eq!(
            of(Some("TEXT/Event-Stream;charset=utf-8")),
            MediaType::EventStream
        );
        assert_eq!(
            of(Some("text/plain; charset=utf-8")),
            MediaType::Other("text/plain; charset=utf-8".into())
        );
        assert_eq!(of(None), MediaType::Other(String::new()));
    }

    fn limit_of(e: BodyError) -> LimitExceeded {
        match e {
            BodyError::Limit(TransportError::Limit(l)) => l,
            other => panic!("not a limit: {other:?}"),
        }
    }

    #[tokio::test]
    async fn bodies_are_read_within_their_bound() {
        // Exactly the limit is allowed, with or without a length.
        let whole = read_body(answer(None, reqwest::Body::from("12345")), 5, "ping")
            .await
            .unwrap();
        assert_eq!(whole, b"12345");
        let parts = read_body(answer(None, chunked(&["12", "345"], false)), 5, "ping")
            .await
            .unwrap();
        assert_eq!(parts, b"12345");

        // One byte more: refused, naming the setting and the request, both
        // from `Content-Length` and while counting chunks.
        for body in [
            reqwest::Body::from("123456"),
            chunked(&["123", "456"], false),
        ] {
            let e = read_body(answer(None, body), 5, "tools/call").await;
            let limit = limit_of(e.unwrap_err());
            assert_eq!(limit.setting, "max_body_bytes");
            assert_eq!(limit.limit, 5);
            assert_eq!(limit.what, "tools/call: the JSON answer body");
        }

        // A length past the limit is refused before any of the body is
        // read; a length within it is read (here: found broken).
        let e = read_body(answer(None, claimed(7)), 5, "ping").await;
        assert_eq!(limit_of(e.unwrap_err()).limit, 5);
        let e = read_body(answer(None, claimed(5)), 5, "ping").await;
        assert!(matches!(e, Err(BodyError::Broken(_))), "{e:?}");

        // A broken connection is not a limit.
        let e = read_body(answer(None, chunked(&["12"], true)), 5, "ping").await;
        match e.unwrap_err() {
            BodyError::Broken(text) => assert!(text.contains("connection reset"), "{text}"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn error_bodies_are_read_up_to_their_bound() {
        assert_eq!(MAX_ERROR_BODY, 65_536);
        let cut = read_limited(answer(None, chunked(&["abc", "defg", "hij"], false)), 5).await;
        assert_eq!(cut, b"abcde");
        let exact = read_limited(answer(None, chunked(&["abc", "de", "fg"], false)), 5).await;
        assert_eq!(exact, b"abcde");
        let short = read_limited(answer(None, chunked(&["ab", "c"], false)), 5).await;
        assert_eq!(short, b"abc");
        // A broken connection keeps what arrived.
        let broken = read_limited(answer(None, chunked(&["ab", "c"], true)), 5).await;
        assert_eq!(broken, b"abc");
    }
}
