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
    use super::*;

    #[test]
    fn error_bodies() {
        let e = rpc_error(br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"no"}}"#);
        assert_eq!(e.map(|e| e.code), Some(-32600));
        assert!(rpc_error(b"oops").is_none());
        assert_eq!(body_excerpt(b"  oops ", StatusCode::BAD_REQUEST), "oops");
        assert_eq!(body_excerpt(b"", StatusCode::NOT_FOUND), "Not Found");
    }
}
