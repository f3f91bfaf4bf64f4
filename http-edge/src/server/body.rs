//! Reading a request body up to a size limit.
//!
//! A body of one chunk is returned as it is (no copy). A longer body is
//! copied into one buffer as it arrives and each chunk is dropped at once,
//! so what a body costs is proportional to its size (at
//! most twice the limit while the buffer grows), whatever its chunking:
//! a body of one-byte chunks does not keep one allocation per chunk alive,
//! as collecting the chunks first would.

use axum::body::Body;
use bytes::Bytes;
use futures_util::StreamExt;
use http::header::CONTENT_LENGTH;
use http::{HeaderMap, StatusCode};

use mcp_transport_core::jsonrpc::Parsed;

use super::Reject;
use super::timed_body::is_body_timeout;

/// The first buffer of a body without `Content-Length`; it doubles as
/// needed, up to the limit.
const INITIAL_CAPACITY: usize = 8 * 1024;

/// The length a request declares in `Content-Length`, when it is a number.
pub fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
}

/// The 413 of a body larger than `max`.
pub fn too_large(max: usize) -> Reject {
    Reject::invalid(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("Payload Too Large: the body exceeds the limit of {max} bytes"),
    )
}

/// Reads the body, failing with 413 beyond `max` bytes (before reading
/// anything when its length is declared larger — the body's exact size,
/// which is hyper's reading of `Content-Length`, or for a body that knows
/// none the `Content-Length` header — so a client sending
/// `Expect: 100-continue` gets the 413 instead of `100 Continue`), 408
/// when the body stalls past the connection's body-read timeout (see
/// [`serve`](super::serve)), and 400 when it cannot be read.
pub async fn read_body(body: Body, headers: &HeaderMap, max: usize) -> Result<Bytes, Reject> {
    // The length hyper read from `Content-Length` is the body's exact size
    // hint, so the header is parsed here only for a body that knows no
    // exact size (a wrapper that does not pass the hint on, or a chunked
    // body, which has no `Content-Length` anyway): ~450 instructions a
    // request fewer (docs/PERFORMANCE.md, session 16). Only an exact hint
    // counts: an upper bound (`http_body_util::Limited`'s, say) is not a
    // declared length.
    let declared = http_body::Body::size_hint(&body)
        .exact()
        .or_else(|| declared_length(headers));
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large(max));
    }
    let first = declared.map_or(INITIAL_CAPACITY, |n| n as usize).min(max);
    // A body that arrives as one chunk (a request read in one go, or one
    // already in memory) is that chunk: no copy. A second chunk starts the
    // buffer, copying the first; from then on each chunk is dropped once
    // copied.
    let mut only: Option<Bytes> = None;
    let mut buf: Vec<u8> = Vec::new();
    let mut first_chunk = true;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            if is_body_timeout(&e) {
                Reject::invalid(StatusCode::REQUEST_TIMEOUT, format!("Request Timeout: {e}"))
            } else {
                Reject::invalid(
                    StatusCode::BAD_REQUEST,
                    format!("Bad Request: cannot read the body: {e}"),
                )
            }
        })?;
        let held = only.as_ref().map_or(buf.len(), Bytes::len);
        let needed = held + chunk.len();
        if needed > max {
            return Err(too_large(max));
        }
        if first_chunk {
            first_chunk = false;
            only = Some(chunk);
            continue;
        }
        if let Some(earlier) = only.take() {
            buf.reserve_exact(first.max(needed));
            buf.extend_from_slice(&earlier);
        }
        if needed > buf.capacity() {
            let target = needed.max(buf.capacity() * 2).min(max);
            buf.reserve_exact(target - buf.len());
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(only.unwrap_or_else(|| Bytes::from(buf)))
}

/// [`read_body`] for an engine handed this body's message already (a
/// dispatcher in front read and parsed it: `mcp_negotiate`'s
/// `MultiServer`). With `parsed`, the body is not read again (a second
/// read of a body in memory cost ~240 instructions a request,
/// docs/PERFORMANCE.md, session 25) but held to `max` (413 beyond, as
/// `read_body` answers) and empty bytes are returned, which the engine does
/// not look at: by the length the message was parsed from
/// ([`Parsed::body_len`]; `MultiServer` then hands on no body, sparing an
/// allocation a request: session 48), else by the body's exact size (one
/// in memory knows it). Without `parsed`, or for a parsed body of unknown
/// size, [`read_body`].
pub async fn read_body_unless_parsed(
    body: Body,
    headers: &HeaderMap,
    max: usize,
    parsed: Option<&Parsed>,
) -> Result<Bytes, Reject> {
    if let Some(parsed) = parsed {
        let known = parsed.body_len().or_else(|| {
            http_body::Body::size_hint(&body)
                .exact()
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
        });
        if let Some(n) = known {
            return if n > max {
                Err(too_large(max))
            } else {
                Ok(Bytes::new())
            };
        }
    }
    read_body(body, headers, max).await
}

#[cfg(test)]
mod tests {
    use mcp_transport_core::jsonrpc::{Message, Notification};

    use super::*;

    #[tokio::test]
    async fn limits_declared_and_streamed_sizes() {
        let ok = read_body(Body::from("abc"), &HeaderMap::new(), 3).await;
        assert_eq!(ok.unwrap(), "abc");
        let long = read_body(Body::from("abcd"), &HeaderMap::new(), 3).await;
        assert_eq!(long.unwrap_err().status, StatusCode::PAYLOAD_TOO_LARGE);
        let mut h = HeaderMap::new();
        h.insert(CONTENT_LENGTH, "10".parse().unwrap());
        // A body that knows no size of its own (a stream): `Content-Length`
        // says it is too large, and nothing is read (the stream would fail).
        let unread = Body::from_stream(futures_util::stream::once(async {
            Err::<Bytes, _>(std::io::Error::other("read"))
        }));
        let declared = read_body(unread, &h, 3).await;
        assert_eq!(declared.unwrap_err().status, StatusCode::PAYLOAD_TOO_LARGE);
    }

    /// The buffer of a body in several chunks, its capacity read back from
    /// the `Vec` the `Bytes` was made of.
    async fn buffered(chunks: &[usize], max: usize) -> (usize, usize) {
        let chunks: Vec<Result<Bytes, std::io::Error>> = chunks
            .iter()
            .map(|&n| Ok(Bytes::from(vec![b'x'; n])))
            .collect();
        let body = Body::from_stream(futures_util::stream::iter(chunks));
        let bytes = read_body(body, &HeaderMap::new(), max).await.unwrap();
        let len = bytes.len();
        (len, Vec::from(bytes).capacity())
    }

    /// The memory rule of the module docs: the buffer starts at 8 KiB (or
    /// what the body needs), grows by doubling to what it needs, never
    /// past the limit, and never holds more than twice what was read.
    #[tokio::test]
    async fn the_buffer_starts_small_doubles_and_stops_at_the_limit() {
        // Small chunks: the first buffer, 8 KiB.
        assert_eq!(buffered(&[100, 100, 100], 100_000).await, (300, 8 * 1024));
        // 10 KB chunks: 20 000 at the second, doubled to 40 000 at the
        // third, kept at the fourth, doubled to 80 000 at the fifth.
        assert_eq!(buffered(&[10_000; 5], 100_000).await, (50_000, 80_000));
        // Doubling is cut at the limit.
        assert_eq!(buffered(&[10_000; 5], 60_000).await, (50_000, 60_000));
        assert_eq!(
            buffered(&[10_000, 10_000, 15_000], 35_000).await,
            (35_000, 35_000)
        );
        // A buffer exactly full is not grown.
        assert_eq!(buffered(&[10_000, 10_000], 100_000).await, (20_000, 20_000));
    }

    /// A body's exact size (what hyper read from `Content-Length`) is its
    /// declared length: too large is 413 before anything is read, and the
    /// header is not consulted.
    #[tokio::test]
    async fn an_exact_size_is_the_declared_length() {
        /// Ten bytes by its size hint, an error if polled.
        struct Sized;
        impl http_body::Body for Sized {
            type Data = Bytes;
            type Error = std::io::Error;
            fn poll_frame(
                self: std::pin::Pin<&mut Self>,
                _: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>>
            {
                std::task::Poll::Ready(Some(Err(std::io::Error::other("read"))))
            }
            fn size_hint(&self) -> http_body::SizeHint {
                http_body::SizeHint::with_exact(10)
            }
        }
        let mut h = HeaderMap::new();
        h.insert(CONTENT_LENGTH, "1".parse().unwrap());
        let e = read_body(Body::new(Sized), &h, 3).await.unwrap_err();
        assert_eq!(e.status, StatusCode::PAYLOAD_TOO_LARGE);
        // An upper bound is not a declared length: read, and within the limit.
        let limited = Body::new(http_body_util::Limited::new(
            Body::from_stream(futures_util::stream::iter([Ok::<_, std::io::Error>(
                Bytes::from_static(b"ab"),
            )])),
            100,
        ));
        assert_eq!(
            read_body(limited, &HeaderMap::new(), 3).await.unwrap(),
            "ab"
        );
    }

    /// A body whose message was parsed in front is not read again when it
    /// knows its size, but still held to the limit; one of unknown size,
    /// or one nobody parsed, is read.
    #[tokio::test]
    async fn a_parsed_body_of_known_size_is_only_held_to_the_limit() {
        let h = HeaderMap::new();
        // Parsed elsewhere (no length known): the body's size decides.
        let parsed = Parsed::from(Message::Notification(Notification {
            method: "m".into(),
            params: None,
        }));
        let skipped = read_body_unless_parsed(Body::from("abc"), &h, 3, Some(&parsed)).await;
        assert_eq!(skipped.unwrap(), "");
        let over = read_body_unless_parsed(Body::from("abcd"), &h, 3, Some(&parsed)).await;
        assert_eq!(over.unwrap_err().status, StatusCode::PAYLOAD_TOO_LARGE);
        let unparsed = read_body_unless_parsed(Body::from("abc"), &h, 3, None).await;
        assert_eq!(unparsed.unwrap(), "abc");
        let stream = || {
            Body::from_stream(futures_util::stream::iter([Ok::<_, std::io::Error>(
                Bytes::from_static(b"abcd"),
            )]))
        };
        let unknown = read_body_unless_parsed(stream(), &h, 4, Some(&parsed)).await;
        assert_eq!(unknown.unwrap(), "abcd");
        let unknown_over = read_body_unless_parsed(stream(), &h, 3, Some(&parsed)).await;
        assert_eq!(
            unknown_over.unwrap_err().status,
            StatusCode::PAYLOAD_TOO_LARGE
        );
    }

    /// A message parsed with its body's length is held to the limit by
    /// that length, whatever body comes with it (a dispatcher hands on
    /// none), and nothing is read.
    #[tokio::test]
    async fn a_parsed_length_is_held_to_the_limit() {
        let h = HeaderMap::new();
        let text = br#"{"jsonrpc":"2.0","method":"m"}"#;
        let parsed = mcp_transport_core::jsonrpc::parse_single(text).unwrap();
        let n = text.len();
        for body in [Body::empty(), Body::from("x")] {
            let over = read_body_unless_parsed(body, &h, n - 1, Some(&parsed)).await;
            let over = over.unwrap_err();
            assert_eq!(over.status, StatusCode::PAYLOAD_TOO_LARGE);
            assert!(over.message.contains(&format!("limit of {} bytes", n - 1)));
        }
        let at = read_body_unless_parsed(Body::from("x"), &h, n, Some(&parsed)).await;
        assert_eq!(at.unwrap(), "");
    }

    /// Live chunk allocations of a body made of one-byte chunks, each
    /// owning a 4 KiB block (as a chunk sliced out of a socket read
    /// buffer does).
    #[derive(Clone, Default)]
    struct Live(std::sync::Arc<std::sync::atomic::AtomicUsize>);

    struct Block(Live, Box<[u8]>);

    impl AsRef<[u8]> for Block {
        fn as_ref(&self) -> &[u8] {
            &self.1[..1]
        }
    }

    impl Drop for Block {
        fn drop(&mut self) {
            self.0.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    fn one_byte_chunks(n: usize, live: Live, peak: Live) -> Body {
        use std::sync::atomic::Ordering::SeqCst;
        let chunks = futures_util::stream::iter(0..n).map(move |_| {
            let now = live.0.fetch_add(1, SeqCst) + 1;
            peak.0.fetch_max(now, SeqCst);
            Ok::<_, std::io::Error>(Bytes::from_owner(Block(
                live.clone(),
                vec![b'x'; 4096].into_boxed_slice(),
            )))
        });
        Body::from_stream(chunks)
    }

    #[tokio::test]
    async fn tiny_chunks_are_copied_not_kept() {
        let (live, peak) = (Live::default(), Live::default());
        let body = read_body(
            one_byte_chunks(10_000, live.clone(), peak.clone()),
            &HeaderMap::new(),
            64 * 1024,
        )
        .await
        .unwrap();
        assert_eq!(body.len(), 10_000);
        let kept = peak.0.load(std::sync::atomic::Ordering::SeqCst);
        assert!(kept <= 2, "{kept} chunks of 4 KiB were alive at once");
        let (live, peak) = (Live::default(), Live::default());
        let err = read_body(
            one_byte_chunks(100_000, live, peak.clone()),
            &HeaderMap::new(),
            1000,
        )
        .await
        .unwrap_err();
        assert_eq!(err.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(peak.0.load(std::sync::atomic::Ordering::SeqCst) <= 2);
    }
}
