//! A cancellation token with no async runtime behind it.
//!
//! `tokio_util::sync::CancellationToken` would pull tokio into this crate's
//! dependencies, which the sans-IO rule forbids; this one is built on
//! `event-listener` (runtime-agnostic) and an atomic flag. Clones share state:
//! cancelling any clone cancels all, and every waiter wakes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};

use event_listener::{Event, EventListener, Listener};

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    event: Event,
}

/// A shared "this request is cancelled" flag that can be awaited.
#[derive(Clone, Debug, Default)]
pub struct CancellationToken {
    inner: Arc<Inner>,
}

impl CancellationToken {
    /// A new, not yet cancelled token.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels: sets the flag and wakes every waiter. Idempotent.
    pub fn cancel(&self) {
        if !self.inner.cancelled.swap(true, Ordering::SeqCst) {
            self.inner.event.notify(usize::MAX);
        }
    }

    /// Whether [`cancel`](Self::cancel) has been called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Completes once the token is cancelled (at once if it already is).
    ///
    /// A named future (no box): a request pending for minutes between
    /// SEP-1699 polls waits on it twice (its task and its handler), so its
    /// size is kept small — the token and, once polled, one listener.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled {
            inner: self.inner.clone(),
            listener: None,
        }
    }

    /// Blocks the current thread until cancelled (for tests and sync code).
    pub fn wait_blocking(&self) {
        while !self.is_cancelled() {
            let listener = self.inner.event.listen();
            if self.is_cancelled() {
                return;
            }
            listener.wait();
        }
    }

    /// A guard that cancels this token when dropped, unless disarmed.
    /// Takes the token, as `tokio_util`'s does: a caller that keeps one
    /// clones it first, and one that does not pays no reference count.
    pub fn drop_guard(self) -> DropGuard {
        DropGuard { token: Some(self) }
    }
}

/// The future of [`CancellationToken::cancelled`]: completes once the token
/// is cancelled. `Unpin`; it registers a listener on its first poll, not
/// before.
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct Cancelled {
    inner: Arc<Inner>,
    listener: Option<EventListener>,
}

impl Future for Cancelled {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        loop {
            if this.inner.cancelled.load(Ordering::SeqCst) {
                this.listener = None;
                return Poll::Ready(());
            }
            match &mut this.listener {
                // Listen, then check the flag again (the loop's top), so a
                // cancel in between is not missed.
                None => this.listener = Some(this.inner.event.listen()),
                Some(listener) => {
                    ready!(Pin::new(listener).poll(cx));
                    this.listener = None;
                }
            }
        }
    }
}

/// Cancels its token on drop (used where "the stream was dropped" means cancel).
#[derive(Debug)]
pub struct DropGuard {
    token: Option<CancellationToken>,
}

impl DropGuard {
    /// Disarms the guard: dropping it no longer cancels.
    pub fn disarm(mut self) -> CancellationToken {
        self.token.take().unwrap_or_default()
    }
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if let Some(t) = self.token.take() {
            t.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_wakes_waiters_across_threads() {
        let t = CancellationToken::new();
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let t = t.clone();
                std::thread::spawn(move || t.wait_blocking())
            })
            .collect();
        assert!(!t.is_cancelled());
        t.cancel();
        t.cancel();
        for w in waiters {
            w.join().unwrap();
        }
        assert!(t.is_cancelled());
    }

    /// `wait_blocking` returns only once the token is cancelled: nothing
    /// comes back from the waiting thread before `cancel` (a wrong early
    /// return would show here; a correct wait can never fail this), and
    /// what comes back after it saw the token cancelled.
    #[test]
    fn wait_blocking_blocks_until_cancelled() {
        let t = CancellationToken::new();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let t = t.clone();
            std::thread::spawn(move || {
                t.wait_blocking();
                tx.send(t.is_cancelled()).unwrap();
            })
        };
        let early = rx.recv_timeout(std::time::Duration::from_millis(100));
        assert!(early.is_err(), "wait_blocking returned before cancel");
        t.cancel();
        assert_eq!(rx.recv(), Ok(true));
        waiter.join().unwrap();
    }

    #[test]
    fn drop_guard_cancels_unless_disarmed() {
        let t = CancellationToken::new();
        drop(t.clone().drop_guard().disarm());
        assert!(!t.is_cancelled());
        drop(t.clone().drop_guard());
        assert!(t.is_cancelled());
    }

    /// The named future: pending (with one listener) until cancelled, its
    /// waker woken by `cancel`, then ready; a second wait on an already
    /// cancelled token is ready on its first poll without listening.
    #[test]
    fn cancelled_future_wakes_its_waker() {
        use std::sync::atomic::AtomicUsize;
        use std::task::{Wake, Waker};

        struct Count(AtomicUsize);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);

        let t = CancellationToken::new();
        let mut wait = t.cancelled();
        assert!(wait.listener.is_none(), "listens before its first poll");
        assert!(Pin::new(&mut wait).poll(&mut cx).is_pending());
        assert!(Pin::new(&mut wait).poll(&mut cx).is_pending());
        assert!(wait.listener.is_some());
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        t.cancel();
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "cancel did not wake");
        assert!(Pin::new(&mut wait).poll(&mut cx).is_ready());
        assert!(wait.listener.is_none());

        let mut again = t.cancelled();
        assert!(Pin::new(&mut again).poll(&mut cx).is_ready());
        assert!(again.listener.is_none());
        // No box: the token and an optional listener.
        assert_eq!(std::mem::size_of::<Cancelled>(), 16);
    }
}
