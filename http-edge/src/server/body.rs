//! Reading a request body up to a size limit.

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use http::header::CONTENT_LENGTH;
use http::{HeaderMap, StatusCode};

use super::Reject;

/// Reads the body, failing with 413 beyond `max` bytes (at once when
/// `Content-Length` already says so) and 400 when it cannot be read.
pub async fn read_body(body: Body, headers: &HeaderMap, max: usize) -> Result<Bytes, Reject> {
    let too_large = || {
        Reject::invalid(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Payload Too Large: the body exceeds the limit of {max} bytes"),
        )
    };
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let mut buf = BytesMut::new();
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            Reject::invalid(
                StatusCode::BAD_REQUEST,
                format!("Bad Request: cannot read the body: {e}"),
            )
        })?;
        if buf.len() + chunk.len() > max {
            return Err(too_large());
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn limits_declared_and_streamed_sizes() {
        let ok = read_body(Body::from("abc"), &HeaderMap::new(), 3).await;
        assert_eq!(ok.unwrap(), "abc");
        let long = read_body(Body::from("abcd"), &HeaderMap::new(), 3).await;
        assert_eq!(long.unwrap_err().status, StatusCode::PAYLOAD_TOO_LARGE);
        let mut h = HeaderMap::new();
        h.insert(CONTENT_LENGTH, "10".parse().unwrap());
        let declared = read_body(Body::empty(), &h, 3).await;
        assert_eq!(declared.unwrap_err().status, StatusCode::PAYLOAD_TOO_LARGE);
    }
}
