//! [`serve`]: an HTTP/1.1 server loop with connection timeouts and a
//! connection cap, for any engine (or axum `Router`).
//!
//! `axum::serve` has no header, body or idle timeouts and no connection
//! cap: a client that opens connections and sends nothing holds them for
//! ever. This loop is built on hyper's HTTP/1 connection and bounds each
//! phase of a connection with [`ConnLimits`]:
//!
//! * the cap is a semaphore taken *before* `accept`, so the excess waits in
//!   the kernel's accept queue and accepted connections keep being served;
//! * a connection with no request in flight (just accepted, or after its
//!   last response ended) is dropped — closed — when its head does not
//!   complete within the header-read timeout (first request) or the idle
//!   timeout (later ones); a request "in flight" lasts until its response
//!   body has ended, so an SSE stream is never idle;
//! * the request body is a [`TimedBody`]: no frame for the body-read
//!   timeout is an error, which the engines answer with 408;
//! * the socket is a [`WriteTimeout`]: a write blocked for the write
//!   timeout (a client that stopped reading, say an SSE stream's) closes
//!   the connection; the engine sees its response body dropped.
//!
//! [`serve_with_shutdown`] adds a graceful shutdown: when its signal
//! completes, the listener is closed (new connections are refused), every
//! connection is told to finish (hyper's `graceful_shutdown`: the request
//! in flight completes, then the connection closes instead of waiting for
//! another; an idle one closes at once), and the loop returns when the last
//! connection has closed or after [`ConnLimits::shutdown_grace`], dropping
//! those still open. Streams that never end by themselves (SSE) are the
//! engine's to end: `MultiServer::drain` in `mcp-negotiate`.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::Waker;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use futures_util::future::Either;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::future::Future;
use tokio::net::{TcpListener, TcpStream};

use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;
use tower::Service;

use super::in_place::InPlace;
use super::limits::ConnLimits;
use super::race::{ControlWake, Race};
use super::timed_body::{GuardedBody, TimedBody};
use super::timed_io::WriteTimeout;

/// Serves `service` on `listener` under `limits` until the listener fails
/// (it does not return otherwise). Every accepted socket gets
/// `TCP_NODELAY` (SSE events are small writes).
pub async fn serve<S>(listener: TcpListener, service: S, limits: ConnLimits) -> io::Result<()>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    serve_with_shutdown(listener, service, limits, std::future::pending()).await
}

/// [`serve`] until `signal` completes, then shuts down gracefully: the
/// listener is closed, each connection finishes the request in flight and
/// closes, and this returns `Ok` once every connection has closed or
/// [`ConnLimits::shutdown_grace`] has passed (the rest are dropped).
///
/// ```no_run
/// # async fn run(app: axum::Router) -> std::io::Result<()> {
/// use mcp_http_edge::server::{ConnLimits, serve_with_shutdown};
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let stop = async { let _ = tokio::signal::ctrl_c().await; };
/// serve_with_shutdown(listener, app, ConnLimits::default(), stop).await
/// # }
/// ```
pub async fn serve_with_shutdown<S, F>(
    listener: TcpListener,
    service: S,
    limits: ConnLimits,
    signal: F,
) -> io::Result<()>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    F: Future<Output = ()> + Send,
{
    let max = limits.max_connections.max(1);
    let slots = Arc::new(Semaphore::new(max));
    let (stop, stopping) = watch::channel(Phase::Serving);
    let mut signal = std::pin::pin!(signal);
    loop {
        let accepted = tokio::select! {
            () = signal.as_mut() => break,
            accepted = accept(&listener, &slots) => accepted?,
        };
        let Some((tcp, peer, permit)) = accepted else {
            continue;
        };
        let service = service.clone();
        let stopping = stopping.clone();
        tokio::spawn(async move {
            drive(tcp, peer, service, limits, stopping).await;
            drop(permit);
        });
    }
    drop(listener);
    let _ = stop.send(Phase::Finishing);
    let open = max - slots.available_permits();
    tracing::info!(open, grace = ?limits.shutdown_grace, "shutting down: listener closed, connections finishing");
    // Every connection holds a permit until it ends: all of them back means
    // none is left.
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    match tokio::time::timeout(limits.shutdown_grace, slots.acquire_many(all)).await {
        Ok(_) => tracing::info!("shut down: every connection finished"),
        Err(_) => {
            tracing::warn!(
                left = max - slots.available_permits(),
                "shut down: the grace period passed; closing the connections left"
            );
            let _ = stop.send(Phase::Closing);
        }
    }
    Ok(())
}

/// Where a graceful shutdown is, as the connections see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    /// No shutdown.
    Serving,
    /// Finish the request in flight, then close.
    Finishing,
    /// The grace period has passed: close now.
    Closing,
}

/// Takes a connection slot, then accepts one connection (`None` after an
/// accept error that is not worth stopping for).
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> io::Result<Option<(TcpStream, SocketAddr, tokio::sync::OwnedSemaphorePermit)>> {
    let permit = slots
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| io::Error::other("connection semaphore closed"))?;
    let (tcp, peer) = match listener.accept().await {
        Ok(accepted) => accepted,
        Err(e) => {
            accept_error(e).await;
            return Ok(None);
        }
    };
    let _ = tcp.set_nodelay(true);
    tracing::trace!(%peer, "accepted");
    Ok(Some((tcp, peer, permit)))
}

/// What an accept error costs: nothing for a connection aborted before it
/// was accepted; a pause for anything else (such as `EMFILE`), so a full
/// descriptor table does not spin the loop.
async fn accept_error(e: io::Error) {
    if matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!("accept error: {e}");
    tokio::time::sleep(Duration::from_millis(200)).await;
}

/// The requests in flight on one connection, as the idle clock reads them.
///
/// Only counters and a time: nothing here wakes the connection's task. The
/// idle timer is lazy (see [`drive`]): it is armed once, and when it fires
/// it reads these to decide whether to close or when to look again. (A
/// `Notify` per request start and end, with a fresh `Sleep` registered
/// and cancelled each time, cost two extra polls of the connection's task
/// and two timer-wheel insertions per request: about 4 % of the server's
/// samples in `docs/PERFORMANCE.md`'s session-9 profile.) Every field is
/// written and read by the connection's own task (hyper drops a response
/// body there), so only `active`'s two updates a request are atomic
/// read-modify-writes; the rest are plain stores, not the locked exchange
/// a sequentially consistent store is on x86 (session 47).
struct InFlight {
    /// Requests whose response has not ended.
    active: AtomicUsize,
    /// Whether a request has started on this connection.
    started: AtomicBool,
    /// When `active` last fell to 0, in nanoseconds after `epoch`.
    idle_since: AtomicU64,
    /// The connection's start: the origin of `idle_since`.
    epoch: Instant,
}

/// One request in flight; ends when dropped.
struct InFlightGuard(Arc<InFlight>);

/// What the idle clock says when its timer fires.
#[derive(Debug, PartialEq, Eq)]
enum IdleCheck {
    /// No request in flight for the whole limit: close the connection.
    Close,
    /// Look again at this time.
    Later(Instant),
}

impl InFlight {
    fn new(epoch: Instant) -> Self {
        InFlight {
            active: AtomicUsize::new(0),
            started: AtomicBool::new(false),
            idle_since: AtomicU64::new(0),
            epoch,
        }
    }

    fn start(self: &Arc<Self>) -> InFlightGuard {
        self.active.fetch_add(1, Ordering::AcqRel);
        self.started.store(true, Ordering::Release);
        InFlightGuard(self.clone())
    }

    /// The idle clock at `now`: a connection that never had a request
    /// gets `header_read` from its start; one that had, `idle` from the
    /// end of its last response; one with a request in flight is not idle.
    ///
    /// The next look is never more than `idle` away: a request that ends
    /// after `now` sets a deadline `idle` after its end, which must not
    /// come before the timer (a connection that is past its first request
    /// before the header-read timer fires, say).
    fn check(&self, now: Instant, header_read: Duration, idle: Duration) -> IdleCheck {
        if self.active.load(Ordering::Acquire) > 0 {
            return IdleCheck::Later(now + idle);
        }
        let deadline = if !self.started.load(Ordering::Acquire) {
            self.epoch + header_read
        } else {
            self.epoch + Duration::from_nanos(self.idle_since.load(Ordering::Acquire)) + idle
        };
        if now >= deadline {
            IdleCheck::Close
        } else {
            IdleCheck::Later(deadline.min(now + idle))
        }
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        let flight = &self.0;
        if flight.active.fetch_sub(1, Ordering::AcqRel) == 1 {
            let since = Instant::now().saturating_duration_since(flight.epoch);
            let nanos = u64::try_from(since.as_nanos()).unwrap_or(u64::MAX);
            flight.idle_since.store(nanos, Ordering::Release);
        }
    }
}

/// Serves one connection until it ends, or until it has had no request in
/// flight for the header-read timeout (before its first request) or the
/// idle timeout (after), when it is dropped and so closed. When `stopping`
/// says [`Phase::Finishing`] the connection finishes its request in flight
/// and closes; at [`Phase::Closing`] it is dropped at once.
///
/// The idle timer is armed once and only moved when it fires
/// ([`InFlight::check`]): requests starting and ending do not wake this
/// task or touch the timer, so a busy keep-alive connection costs the
/// clock one `Instant::now()` per response.
async fn drive<S>(
    tcp: TcpStream,
    peer: SocketAddr,
    service: S,
    limits: ConnLimits,
    mut stopping: watch::Receiver<Phase>,
) where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let epoch = Instant::now();
    let flight = Arc::new(InFlight::new(epoch));
    let hyper_service = {
        let flight = flight.clone();
        let service = InPlace::new(service);
        hyper::service::service_fn(move |req: Request<Incoming>| {
            let guard = flight.start();
            let mut req = req.map(|b| Body::new(TimedBody::new(b, limits.body_read_timeout)));
            // The peer address, where axum's `ConnectInfo` extractor and
            // `RequestContext::http` look for it (unless turned off).
            if limits.peer_address {
                req.extensions_mut().insert(ConnectInfo(peer));
            }
            let call = service.call(req);
            async move {
                let response = match call.await {
                    Ok(r) => r,
                    Err(never) => match never {},
                };
                // Handed to hyper as it is: re-boxed into an axum `Body`, it would
                // cost an allocation and a `MapErr` layer a response.
                Ok::<_, Infallible>(response.map(|b| GuardedBody::new(b, guard)))
            }
        })
    };
    let conn = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(
            TokioIo::new(WriteTimeout::new(tcp, limits.write_timeout)),
            hyper_service,
        );
    let mut conn = std::pin::pin!(conn);
    // Never more than the idle timeout away (see `InFlight::check`).
    let first_look = epoch + limits.header_read_timeout.min(limits.idle_timeout);
    let mut idle_timer = std::pin::pin!(tokio::time::sleep_until(first_look));
    let mut told = false;
    let mut watching = true;
    // The controls (shutdown, idle timer) are polled only when they woke,
    // not at each of the connection's wake-ups (see `race`).
    let wake = Arc::new(ControlWake::default());
    let waker = Waker::from(wake.clone());
    loop {
        let phase = *stopping.borrow_and_update();
        if phase == Phase::Closing {
            return;
        }
        if !told && phase == Phase::Finishing {
            told = true;
            conn.as_mut().graceful_shutdown();
        }
        let event = {
            let control = std::pin::pin!(async {
                tokio::select! {
                    changed = stopping.changed(), if watching => Control::Phase(changed.is_ok()),
                    () = idle_timer.as_mut() => Control::Idle,
                }
            });
            Race::new(conn.as_mut(), control, &wake, &waker).await
        };
        match event {
            Either::Left(_) => return,
            // The sender gone (the loop returned): no phase comes again.
            Either::Right(Control::Phase(open)) => watching = open,
            Either::Right(Control::Idle) => {
                let check = flight.check(
                    Instant::now(),
                    limits.header_read_timeout,
                    limits.idle_timeout,
                );
                match check {
                    IdleCheck::Close => {
                        tracing::debug!(
                            first = !flight.started.load(Ordering::Acquire),
                            "closing a connection with no request in flight"
                        );
                        return;
                    }
                    IdleCheck::Later(at) => idle_timer.as_mut().reset(at),
                }
            }
        }
    }
}

/// What woke a connection's controls.
enum Control {
    /// The shutdown phase changed (`true`), or its sender is gone (`false`).
    Phase(bool),
    /// The idle timer fired.
    Idle,
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: Duration = Duration::from_secs(2);
    const IDLE: Duration = Duration::from_secs(10);

    fn flight() -> (Arc<InFlight>, Instant) {
        let epoch = Instant::now();
        (Arc::new(InFlight::new(epoch)), epoch)
    }

    /// A connection the peer gave up before it was accepted costs nothing;
    /// any other accept error (such as a full descriptor table) pauses the
    /// loop 200 ms rather than spinning it.
    #[tokio::test(start_paused = true)]
    async fn an_accept_error_pauses_the_loop_unless_the_peer_gave_up() {
        for (kind, pause) in [
            (io::ErrorKind::ConnectionAborted, Duration::ZERO),
            (io::ErrorKind::ConnectionReset, Duration::ZERO),
            (io::ErrorKind::ConnectionRefused, Duration::ZERO),
            (io::ErrorKind::Other, Duration::from_millis(200)),
        ] {
            let start = tokio::time::Instant::now();
            accept_error(io::Error::from(kind)).await;
            assert_eq!(start.elapsed(), pause, "{kind:?}");
        }
    }

    #[test]
    fn a_connection_without_a_request_gets_the_header_read_timeout_from_its_start() {
        let (f, epoch) = flight();
        let at = epoch + Duration::from_secs(1);
        assert_eq!(f.check(at, HEADER, IDLE), IdleCheck::Later(epoch + HEADER));
        assert_eq!(f.check(epoch + HEADER, HEADER, IDLE), IdleCheck::Close);
    }

    #[test]
    fn the_next_look_is_never_more_than_the_idle_timeout_away() {
        // A header-read timeout longer than the idle timeout: a request
        // may come and end before it, and its idle deadline would then
        // fall before a timer set for the header-read one.
        let (f, epoch) = flight();
        let (header, idle) = (Duration::from_secs(600), Duration::from_secs(1));
        let at = epoch + Duration::from_millis(10);
        assert_eq!(f.check(at, header, idle), IdleCheck::Later(at + idle));
    }

    #[test]
    fn a_request_in_flight_is_never_idle() {
        let (f, epoch) = flight();
        let _guard = f.start();
        let late = epoch + IDLE * 100;
        assert_eq!(f.check(late, HEADER, IDLE), IdleCheck::Later(late + IDLE));
    }

    #[test]
    fn the_idle_clock_runs_from_the_end_of_the_last_response() {
        let (f, epoch) = flight();
        let request = f.start();
        std::thread::sleep(Duration::from_millis(50));
        drop(request);
        let ended = epoch + Duration::from_nanos(f.idle_since.load(Ordering::SeqCst));
        assert!(
            ended >= epoch + Duration::from_millis(50),
            "the end is the drop's time"
        );
        // Past the header-read timeout, but a request came: the idle
        // timeout applies, from the response's end (not the connection's
        // start: idle for IDLE since the start, not since the end).
        let at = epoch + HEADER;
        assert_eq!(f.check(at, HEADER, IDLE), IdleCheck::Later(ended + IDLE));
        let since_start = epoch + IDLE + Duration::from_millis(10);
        assert_eq!(
            f.check(since_start, HEADER, IDLE),
            IdleCheck::Later(ended + IDLE)
        );
        assert_eq!(f.check(ended + IDLE, HEADER, IDLE), IdleCheck::Close);
    }

    #[test]
    fn only_the_last_of_overlapping_requests_starts_the_idle_clock() {
        let (f, epoch) = flight();
        let first = f.start();
        let second = f.start();
        drop(first);
        assert_eq!(
            f.idle_since.load(Ordering::SeqCst),
            0,
            "one still in flight"
        );
        let late = epoch + IDLE * 3;
        assert_eq!(f.check(late, HEADER, IDLE), IdleCheck::Later(late + IDLE));
        drop(second);
        assert!(matches!(
            f.check(epoch, HEADER, IDLE),
            IdleCheck::Later(at) if at >= epoch + IDLE
        ));
    }
}
