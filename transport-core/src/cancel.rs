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

use event_listener::{Event, Listener};

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
    pub fn cancelled(&self) -> Pin<Box<dyn Future<Output = ()> + Send + 'static>> {
        let inner = self.inner.clone();
        Box::pin(async move {
            loop {
                if inner.cancelled.load(Ordering::SeqCst) {
                    return;
                }
                let listener = inner.event.listen();
                // Re-check after registering, so a cancel in between is not missed.
                if inner.cancelled.load(Ordering::SeqCst) {
                    return;
                }
                listener.await;
            }
        })
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
    pub fn drop_guard(&self) -> DropGuard {
        DropGuard {
            token: Some(self.clone()),
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

    #[test]
    fn drop_guard_cancels_unless_disarmed() {
        let t = CancellationToken::new();
        drop(t.drop_guard().disarm());
        assert!(!t.is_cancelled());
        drop(t.drop_guard());
        assert!(t.is_cancelled());
    }
}
