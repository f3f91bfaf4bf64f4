//! [`InPlace`]: a connection's service, called where it is when it is
//! ready, instead of cloned for every request.
//!
//! The usual way to call a `Clone` tower service from a shared reference
//! (`axum::serve`'s, and this crate's before session 47) is
//! `service.clone().oneshot(req)`: a clone a request, readiness awaited
//! on the clone. An engine handle's clone is an `Arc` reference count
//! shared by every connection's task, so every clone and drop moves that
//! count's cache line between the CPUs; with the endpoint's path and the
//! engine cloned again inside, that was ~1 % of the server's time on the
//! wire (docs/PERFORMANCE.md, session 47). hyper calls a connection's
//! service from that connection's task alone, one request at a time, so
//! the service can be borrowed there and called in place.
//!
//! Tower's contract is kept: `call` only follows a `poll_ready` that
//! returned `Ready(Ok)`. That poll has no task to wake (a no-op waker),
//! so a service that is not ready at once is cloned and awaited the usual
//! way instead, in the request's own future.

use std::cell::RefCell;
use std::task::{Context, Poll, Waker};

use futures_util::future::Either;
use tower::util::Oneshot;
use tower::{Service, ServiceExt};

/// A connection's service (see the [module documentation](self)).
#[derive(Debug)]
pub struct InPlace<S>(RefCell<S>);

impl<S> InPlace<S> {
    /// Wraps the connection's `service`.
    pub fn new(service: S) -> Self {
        Self(RefCell::new(service))
    }

    /// Calls the service with `req`: in place when it is ready now, through
    /// a clone that waits for readiness otherwise.
    ///
    /// # Panics
    ///
    /// When called again from within the service's own `poll_ready` or
    /// `call` (the borrow is held only for those).
    pub fn call<R>(&self, req: R) -> Either<S::Future, Oneshot<S, R>>
    where
        S: Service<R> + Clone,
    {
        let mut service = self.0.borrow_mut();
        let mut cx = Context::from_waker(Waker::noop());
        match service.poll_ready(&mut cx) {
            Poll::Ready(Ok(())) => Either::Left(service.call(req)),
            // Pending, or an error the clone's own poll will report.
            _ => Either::Right(service.clone().oneshot(req)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::future::{Ready, ready};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Answers each request with itself; counts its clones and its calls;
    /// ready after `pending` polls of its readiness.
    #[derive(Debug, Default)]
    struct Echo {
        clones: Arc<AtomicUsize>,
        calls: Arc<AtomicUsize>,
        pending: usize,
    }

    impl Clone for Echo {
        fn clone(&self) -> Self {
            self.clones.fetch_add(1, Ordering::SeqCst);
            Echo {
                clones: self.clones.clone(),
                calls: self.calls.clone(),
                pending: self.pending,
            }
        }
    }

    impl Service<u32> for Echo {
        type Response = u32;
        type Error = Infallible;
        type Future = Ready<Result<u32, Infallible>>;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            if self.pending == 0 {
                return Poll::Ready(Ok(()));
            }
            self.pending -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }

        fn call(&mut self, req: u32) -> Self::Future {
            assert_eq!(self.pending, 0, "called before it was ready");
            self.calls.fetch_add(1, Ordering::SeqCst);
            ready(Ok(req))
        }
    }

    #[tokio::test]
    async fn a_ready_service_is_called_where_it_is() {
        let echo = Echo::default();
        let (clones, calls) = (echo.clones.clone(), echo.calls.clone());
        let service = InPlace::new(echo);
        for n in 0..3 {
            assert_eq!(service.call(n).await, Ok(n));
        }
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(clones.load(Ordering::SeqCst), 0, "no clone a request");
    }

    #[tokio::test]
    async fn a_service_not_ready_is_cloned_and_awaited() {
        let echo = Echo {
            pending: 2,
            ..Echo::default()
        };
        let (clones, calls) = (echo.clones.clone(), echo.calls.clone());
        let service = InPlace::new(echo);
        assert_eq!(service.call(7).await, Ok(7));
        assert_eq!(clones.load(Ordering::SeqCst), 1);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
