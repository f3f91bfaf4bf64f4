//! Responses for the client modules' unit tests, built without a server
//! (`reqwest::Response` from an `http::Response`): a body in chunks, one
//! that breaks, one that claims a length.

use bytes::Bytes;
use http::header::CONTENT_TYPE;

/// A `reqwest::Response` with `content_type` and `body`.
pub(crate) fn answer(content_type: Option<&str>, body: reqwest::Body) -> reqwest::Response {
    let mut r = http::Response::new(body);
    if let Some(ct) = content_type {
        r.headers_mut().insert(CONTENT_TYPE, ct.parse().unwrap());
    }
    reqwest::Response::from(r)
}

/// A body of `chunks` with no `Content-Length` (a chunked answer), broken
/// after them ("connection reset") when `broken`.
pub(crate) fn chunked(chunks: &[&'static str], broken: bool) -> reqwest::Body {
    let mut items: Vec<Result<Bytes, std::io::Error>> = chunks
        .iter()
        .map(|c| Ok(Bytes::from_static(c.as_bytes())))
        .collect();
    if broken {
        items.push(Err(std::io::Error::other("connection reset")));
    }
    reqwest::Body::wrap_stream(futures_util::stream::iter(items))
}

/// A body whose length is `len` and which breaks when read.
pub(crate) fn claimed(len: u64) -> reqwest::Body {
    struct Claimed(u64);
    impl http_body::Body for Claimed {
        type Data = Bytes;
        type Error = std::io::Error;
        fn poll_frame(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
            std::task::Poll::Ready(Some(Err(std::io::Error::other("read"))))
        }
        fn size_hint(&self) -> http_body::SizeHint {
            http_body::SizeHint::with_exact(self.0)
        }
    }
    reqwest::Body::wrap(Claimed(len))
}
