//! Sending a request and describing reqwest errors.

use std::error::Error as _;

use mcp_transport_core::transport::TransportError;

/// Sends a request; a failure to get an answer is a `Connection` error
/// `"{what}: {error chain}"`.
pub async fn send(
    builder: reqwest::RequestBuilder,
    what: &str,
) -> Result<reqwest::Response, TransportError> {
    builder
        .send()
        .await
        .map_err(|e| TransportError::Connection(format!("{what}: {}", error_chain(&e))))
}

/// A reqwest error with its sources (reqwest's own text is terse).
pub fn error_chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
