//! [`WriteTimeout`]: a socket whose writes fail when they cannot make
//! progress for a while (a client that stopped reading).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Wraps a socket so that a write (or flush) that stays blocked for
/// `timeout` fails with `TimedOut`; hyper then closes the connection and
/// drops the response body. Reads are untouched, and an idle connection
/// (nothing to write) never times out here.
pub struct WriteTimeout<T> {
    inner: T,
    timeout: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl<T> WriteTimeout<T> {
    /// Wraps `inner`.
    pub fn new(inner: T, timeout: Duration) -> Self {
        WriteTimeout {
            inner,
            timeout,
            sleep: None,
        }
    }

    /// The outcome of a write attempt: progress resets the clock, a blocked
    /// write waits until the clock runs out.
    fn outcome<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        match polled {
            Poll::Ready(r) => {
                self.sleep = None;
                Poll::Ready(r)
            }
            Poll::Pending => {
                let timeout = self.timeout;
                let sleep = self.sleep.get_or_insert_with(|| {
                    Box::pin(tokio::time::sleep_until(Instant::now() + timeout))
                });
                match sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("the peer took nothing for {} ms", timeout.as_millis()),
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteTimeout<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteTimeout<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.outcome(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.outcome(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.outcome(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.outcome(cx, polled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const LIMIT: Duration = Duration::from_secs(5);

    /// An inner socket on which nothing ever makes progress.
    struct Stuck;

    impl AsyncRead for Stuck {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Poll::Pending
        }
    }

    impl AsyncWrite for Stuck {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &[u8],
        ) -> Poll<io::Result<usize>> {
            Poll::Pending
        }
        fn poll_write_vectored(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &[io::IoSlice<'_>],
        ) -> Poll<io::Result<usize>> {
            Poll::Pending
        }
        fn is_write_vectored(&self) -> bool {
            false
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Pending
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Pending
        }
    }

    fn is_timeout(e: &io::Error) -> bool {
        e.kind() == io::ErrorKind::TimedOut && e.to_string() == "the peer took nothing for 5000 ms"
    }

    /// A write blocked by a peer that stopped reading fails `timeout` after
    /// it blocked; a peer that reads in time resets the clock.
    #[tokio::test(start_paused = true)]
    async fn a_blocked_write_fails_after_the_timeout_and_progress_resets_it() {
        let (ours, mut peer) = tokio::io::duplex(4);
        let mut w = WriteTimeout::new(ours, LIMIT);
        let start = Instant::now();
        w.write_all(b"abcd").await.unwrap();
        let reader = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(4)).await;
            let mut got = [0u8; 4];
            peer.read_exact(&mut got).await.unwrap();
            (got, peer)
        });
        // Blocked for 4 s, under the limit: it goes through.
        w.write_all(b"efgh").await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(4));
        let (got, mut peer) = reader.await.unwrap();
        assert_eq!(&got, b"abcd");
        // Nobody reads any more: the next write fails 5 s after it blocked.
        let err = w.write_all(b"ijkl").await.unwrap_err();
        assert!(is_timeout(&err), "{err}");
        assert_eq!(start.elapsed(), Duration::from_secs(9));
        let mut rest = [0u8; 4];
        peer.read_exact(&mut rest).await.unwrap();
        assert_eq!(&rest, b"efgh");
    }

    /// Bytes go through both ways, vectored writes included, and a
    /// shutdown reaches the peer as the end of the stream.
    #[tokio::test(start_paused = true)]
    async fn bytes_reads_and_shutdown_pass_through() {
        let (ours, mut peer) = tokio::io::duplex(64);
        let mut w = WriteTimeout::new(ours, LIMIT);
        assert!(w.is_write_vectored(), "as the duplex stream says");
        w.write_all(b"hello").await.unwrap();
        let slices = [io::IoSlice::new(b" wor"), io::IoSlice::new(b"ld")];
        let n = w.write_vectored(&slices).await.unwrap();
        assert!(n > 0);
        w.flush().await.unwrap();
        peer.write_all(b"hi").await.unwrap();
        let mut two = [0u8; 2];
        w.read_exact(&mut two).await.unwrap();
        assert_eq!(&two, b"hi");
        w.shutdown().await.unwrap();
        let mut got = Vec::new();
        tokio::time::timeout(LIMIT, peer.read_to_end(&mut got))
            .await
            .expect("the shutdown reached the peer")
            .unwrap();
        assert_eq!(got, &b"hello world"[..5 + n]);
    }

    /// Every way of writing times out on a socket that makes no progress;
    /// whether writes are vectored is the socket's answer.
    #[tokio::test(start_paused = true)]
    async fn every_write_path_times_out() {
        let mut w = WriteTimeout::new(Stuck, LIMIT);
        assert!(!w.is_write_vectored());
        let err = w.write(b"x").await.unwrap_err();
        assert!(is_timeout(&err), "write: {err}");
        let err = w
            .write_vectored(&[io::IoSlice::new(b"x")])
            .await
            .unwrap_err();
        assert!(is_timeout(&err), "write_vectored: {err}");
        let err = w.flush().await.unwrap_err();
        assert!(is_timeout(&err), "flush: {err}");
        let err = w.shutdown().await.unwrap_err();
        assert!(is_timeout(&err), "shutdown: {err}");
    }
}
