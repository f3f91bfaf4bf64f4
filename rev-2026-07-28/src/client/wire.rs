//! HTTP plumbing: sending a POST, reading media types, bounded bodies and
//! the JSON-RPC error in an error body.

use std::error::Error as _;

use http::header::CONTENT_TYPE;
use mcp_transport_core::jsonrpc::{Message, Response, parse_message};
use mcp_transport_core::transport::TransportError;

use super::meta::{EVENT_STREAM, JSON};

/// The most bytes of an error (non-2xx) body read to find its JSON-RPC error.
pub(crate) const MAX_ERROR_BODY: usize = 64 * 1024;

/// Sends a request; a failure to get an answer is a `Connection` error.
pub(crate) async fn send(
    builder: reqwest::RequestBuilder,
    what: &str,
) -> Result<reqwest::Response, TransportError> {
    builder
        .send()
        .await
        .map_err(|e| TransportError::Connection(format!("{what}: {}", error_chain(&e))))
}

/// A reqwest error with its sources (reqwest's own text is terse).
pub(crate) fn error_chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The media type of an answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum MediaType {
    /// `application/json`.
    Json,
    /// `text/event-stream`.
    EventStream,
    /// Anything else (or none), as sent.
    Other(String),
}

/// Reads the media type of an answer (parameters such as `charset` ignored).
pub(crate) fn media_type(response: &reqwest::Response) -> MediaType {
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
pub(crate) enum BodyError {
    /// It is larger than allowed.
    Limit(TransportError),
    /// The connection broke before its end.
    Broken(String),
}

/// Reads a whole body, failing with `Limit` past `limit` bytes.
pub(crate) async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
    what: &str,
) -> Result<Vec<u8>, BodyError> {
    let too_large = || {
        BodyError::Limit(TransportError::Limit(format!(
            "{what}: the JSON answer body exceeds max_body_bytes ({limit} bytes)"
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

/// Reads at most `limit` bytes of a body (for error bodies; a broken
/// connection keeps what arrived).
pub(crate) async fn read_limited(mut response: reqwest::Response, limit: usize) -> Vec<u8> {
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

/// The JSON-RPC error response in an error body, if it holds one.
pub(crate) fn error_response(body: &[u8]) -> Option<Response> {
    let text = std::str::from_utf8(body).ok()?;
    match parse_message(text).ok()? {
        Message::Response(r) if r.is_error() => Some(r),
        _ => None,
    }
}

/// A short, printable excerpt of a non-JSON-RPC error body.
pub(crate) fn body_excerpt(body: &[u8], status: http::StatusCode) -> String {
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
