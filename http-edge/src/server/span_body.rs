//! [`SpanBody`]: a response body polled inside a tracing span, so that what
//! an SSE stream does while it is sent (long after the handler returned
//! the response head) is logged under its request's span.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use bytes::Bytes;
use http_body::{Frame, SizeHint};

/// `inner`, each poll inside `span`.
pub struct SpanBody {
    inner: Body,
    span: tracing::Span,
}

impl SpanBody {
    /// Wraps `inner`.
    pub fn new(inner: Body, span: tracing::Span) -> Self {
        SpanBody { inner, span }
    }

    /// `response` with its body wrapped in `span`; `response` as it is when
    /// the span is disabled (no subscriber wants it: `mcp-compat serve`
    /// without `RUST_LOG`), since entering a disabled span does nothing and
    /// the wrapper would cost an allocation a response and a dynamic call
    /// a body frame for nothing (docs/PERFORMANCE.md, session 29).
    pub fn wrap(response: http::Response<Body>, span: tracing::Span) -> http::Response<Body> {
        if span.is_disabled() {
            return response;
        }
        response.map(|b| Body::new(SpanBody::new(b, span)))
    }
}

impl http_body::Body for SpanBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        let _entered = this.span.enter();
        Pin::new(&mut this.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body::Body as _;

    use super::*;

    /// The wrapper says what its body says about its end and size (hyper
    /// reads both: an empty body gets `Content-Length: 0` and no frame
    /// poll; a full one gets its exact length).
    #[test]
    fn end_and_size_are_the_inner_bodys() {
        let full = SpanBody::new(Body::from("answer"), tracing::Span::none());
        assert!(!full.is_end_stream());
        assert_eq!(full.size_hint().exact(), Some(6));
        let empty = SpanBody::new(Body::empty(), tracing::Span::none());
        assert!(empty.is_end_stream());
        assert_eq!(empty.size_hint().exact(), Some(0));
    }
}
