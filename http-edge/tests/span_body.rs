//! `SpanBody::wrap`: a response body polled inside its request's span when
//! a subscriber wants the span, and left as it is (no allocation, no
//! wrapper) when the span is disabled.
//!
//! One test in this binary: the allocation count is global, and a second
//! test running beside it would be counted too.

use std::alloc::System;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use bytes::Bytes;
use http_body::Frame;
use http_body_util::BodyExt;
use mcp_http_edge::server::span_body::SpanBody;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// A one-frame body that records the span current when it is polled.
struct Probe {
    seen: std::sync::Arc<std::sync::Mutex<Option<Option<tracing::Id>>>>,
    done: bool,
}

impl http_body::Body for Probe {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.done {
            return Poll::Ready(None);
        }
        self.done = true;
        *self.seen.lock().unwrap() = Some(tracing::Span::current().id());
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"answer")))))
    }
}

#[tokio::test]
async fn a_body_is_wrapped_only_in_a_span_someone_wants() {
    // No subscriber: the span is disabled, and the response comes back
    // untouched — no allocation for a wrapper.
    let span = tracing::info_span!("mcp.request");
    assert!(span.is_disabled());
    let response = http::Response::new(Body::from("answer"));
    let region = Region::new(GLOBAL);
    let response = SpanBody::wrap(response, span);
    let stats = region.change();
    assert_eq!(stats.allocations, 0, "a disabled span's body was wrapped");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "answer");

    // A subscriber that wants the span: the body is polled inside it.
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry());
    let span = tracing::info_span!("mcp.request");
    assert!(!span.is_disabled());
    let seen = std::sync::Arc::default();
    let probe = Probe {
        seen: std::sync::Arc::clone(&seen),
        done: false,
    };
    let response = SpanBody::wrap(http::Response::new(Body::new(probe)), span.clone());
    assert_eq!(
        tracing::Span::current().id(),
        None,
        "not inside the span here"
    );
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "answer");
    assert_eq!(
        *seen.lock().unwrap(),
        Some(span.id()),
        "the body was not polled inside its span"
    );
}
