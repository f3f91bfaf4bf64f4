//! The two body wrappers of [`serve`](super::serve): [`TimedBody`] (a
//! request body whose reads time out) and [`GuardedBody`] (a response body
//! that holds something until it ends or is dropped).

use std::error::Error as StdError;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::BoxError;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// The error of a [`TimedBody`] whose next piece did not arrive in time.
/// [`read_body`](super::read_body) answers it with 408.
#[derive(Debug, Clone, Copy)]
pub struct BodyReadTimeout(pub Duration);

impl fmt::Display for BodyReadTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no part of the request body arrived for {} ms",
            self.0.as_millis()
        )
    }
}

impl StdError for BodyReadTimeout {}

/// Whether `e` (or an error it wraps) is a [`BodyReadTimeout`].
pub fn is_body_timeout(e: &(dyn StdError + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err.is::<BodyReadTimeout>() {
            return true;
        }
        cur = err.source();
    }
    false
}

/// A request body that fails with [`BodyReadTimeout`] when no frame
/// arrives for `timeout` (the clock restarts at every frame).
pub struct TimedBody<B> {
    inner: B,
    timeout: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl<B> TimedBody<B> {
    /// Wraps `inner`.
    pub fn new(inner: B, timeout: Duration) -> Self {
        TimedBody {
            inner,
            timeout,
            sleep: None,
        }
    }
}

impl<B> Body for TimedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.sleep = None;
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => {
                let timeout = this.timeout;
                let sleep = this.sleep.get_or_insert_with(|| {
                    Box::pin(tokio::time::sleep_until(Instant::now() + timeout))
                });
                match sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyReadTimeout(timeout))))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps `guard` alive until the body has ended or is
/// dropped (what [`serve`](super::serve) counts as "a request in flight").
pub struct GuardedBody<B, G> {
    inner: B,
    guard: Option<G>,
}

impl<B, G> GuardedBody<B, G> {
    /// Wraps `inner`.
    pub fn new(inner: B, guard: G) -> Self {
        GuardedBody {
            inner,
            guard: Some(guard),
        }
    }
}

impl<B, G> Body for GuardedBody<B, G>
where
    B: Body + Unpin,
    G: Unpin,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) {
            this.guard = None;
        }
        polled
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
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test(start_paused = true)]
    async fn a_silent_body_times_out_and_a_flowing_one_does_not() {
        let (mut tx, rx) = futures_channel_body();
        let mut body = TimedBody::new(rx, Duration::from_secs(5));
        tx.send(Bytes::from_static(b"a"));
        let first = body.frame().await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), "a");
        let err = body.frame().await.unwrap().unwrap_err();
        assert!(is_body_timeout(&*err), "{err}");
    }

    /// The clock restarts at every frame: frames 4 s apart pass a 5 s
    /// timeout, and the error comes 5 s after the last frame, not before.
    #[tokio::test(start_paused = true)]
    async fn the_timeout_counts_from_the_last_frame() {
        let (mut tx, rx) = futures_channel_body();
        let mut body = TimedBody::new(rx, Duration::from_secs(5));
        let start = Instant::now();
        let feeder = tokio::spawn(async move {
            for piece in ["a", "b"] {
                tokio::time::sleep(Duration::from_secs(4)).await;
                tx.send(Bytes::from_static(piece.as_bytes()));
            }
            tx
        });
        for piece in ["a", "b"] {
            let frame = body.frame().await.unwrap().unwrap();
            assert_eq!(frame.into_data().unwrap(), piece);
        }
        assert_eq!(start.elapsed(), Duration::from_secs(8));
        let err = body.frame().await.unwrap().unwrap_err();
        assert_eq!(start.elapsed(), Duration::from_secs(13));
        assert_eq!(
            err.to_string(),
            "no part of the request body arrived for 5000 ms"
        );
        drop(feeder.await.unwrap());
    }

    /// Only a timeout is a timeout, found through the errors that wrap it.
    #[test]
    fn a_timeout_is_found_through_its_wrappers() {
        #[derive(Debug)]
        struct Wrapper(BodyReadTimeout);
        impl fmt::Display for Wrapper {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("wrapped")
            }
        }
        impl StdError for Wrapper {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(&self.0)
            }
        }
        let timeout = BodyReadTimeout(Duration::from_millis(1));
        assert!(is_body_timeout(&timeout));
        assert!(is_body_timeout(&Wrapper(timeout)));
        let other = std::io::Error::other("reset");
        assert!(!is_body_timeout(&other));
    }

    /// Both wrappers report the end and the size of the body they wrap,
    /// and a guarded body lets its guard go once it has ended.
    #[tokio::test]
    async fn the_wrappers_report_the_inner_bodys_end_and_size() {
        let empty = TimedBody::new(axum::body::Body::empty(), Duration::from_secs(1));
        assert!(empty.is_end_stream());
        assert_eq!(empty.size_hint().exact(), Some(0));
        let full = TimedBody::new(axum::body::Body::from("abc"), Duration::from_secs(1));
        assert!(!full.is_end_stream());
        assert_eq!(full.size_hint().exact(), Some(3));

        let guard = std::sync::Arc::new(());
        let empty = GuardedBody::new(axum::body::Body::empty(), guard.clone());
        assert!(empty.is_end_stream());
        assert_eq!(empty.size_hint().exact(), Some(0));
        let mut full = GuardedBody::new(axum::body::Body::from("abc"), guard.clone());
        assert!(!full.is_end_stream());
        assert_eq!(full.size_hint().exact(), Some(3));
        assert_eq!(std::sync::Arc::strong_count(&guard), 3);
        drop(empty);
        assert_eq!(std::sync::Arc::strong_count(&guard), 2);
        let frame = full.frame().await.unwrap().unwrap();
        assert_eq!(frame.into_data().unwrap(), "abc");
        assert!(full.frame().await.is_none());
        assert_eq!(std::sync::Arc::strong_count(&guard), 1, "let go at the end");
    }

    /// A body fed by hand (an `axum` body over a channel stream).
    fn futures_channel_body() -> (Feeder, axum::body::Body) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Result<Bytes, std::io::Error>>();
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        (Feeder(tx), axum::body::Body::from_stream(stream))
    }

    struct Feeder(tokio::sync::mpsc::UnboundedSender<Result<Bytes, std::io::Error>>);

    impl Feeder {
        fn send(&mut self, b: Bytes) {
            self.0.send(Ok(b)).unwrap();
        }
    }
}
