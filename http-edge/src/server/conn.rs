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

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tower::{Service, ServiceExt};

use super::limits::ConnLimits;
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
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    loop {
        let permit = slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| io::Error::other("connection semaphore closed"))?;
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                accept_error(e).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        tracing::trace!(%peer, "accepted");
        let service = service.clone();
        tokio::spawn(async move {
            drive(tcp, service, limits).await;
            drop(permit);
        });
    }
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

/// The requests in flight on one connection.
#[derive(Default)]
struct InFlight {
    active: AtomicUsize,
    started: AtomicUsize,
    changed: Notify,
}

/// One request in flight; ends when dropped.
struct InFlightGuard(Arc<InFlight>);

impl InFlight {
    fn start(self: &Arc<Self>) -> InFlightGuard {
        self.active.fetch_add(1, Ordering::SeqCst);
        self.started.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_one();
        InFlightGuard(self.clone())
    }
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_one();
    }
}

/// Serves one connection until it ends, or until it has had no request in
/// flight for the header-read timeout (before its first request) or the
/// idle timeout (after), when it is dropped and so closed.
async fn drive<S>(tcp: TcpStream, service: S, limits: ConnLimits)
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let flight = Arc::new(InFlight::default());
    let hyper_service = {
        let flight = flight.clone();
        hyper::service::service_fn(move |req: Request<Incoming>| {
            let guard = flight.start();
            let req = req.map(|b| Body::new(TimedBody::new(b, limits.body_read_timeout)));
            let service = service.clone();
            async move {
                let response = match service.oneshot(req).await {
                    Ok(r) => r,
                    Err(never) => match never {},
                };
                Ok::<_, Infallible>(response.map(|b| Body::new(GuardedBody::new(b, guard))))
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
    loop {
        let changed = flight.changed.notified();
        if flight.active.load(Ordering::SeqCst) > 0 {
            tokio::select! {
                _ = conn.as_mut() => return,
                () = changed => {}
            }
            continue;
        }
        let started = flight.started.load(Ordering::SeqCst);
        let limit = if started == 0 {
            limits.header_read_timeout
        } else {
            limits.idle_timeout
        };
        tokio::select! {
            _ = conn.as_mut() => return,
            () = changed => {}
            () = tokio::time::sleep(limit) => {
                if flight.active.load(Ordering::SeqCst) == 0
                    && flight.started.load(Ordering::SeqCst) == started
                {
                    tracing::debug!(?limit, first = started == 0, "closing a connection with no request in flight");
                    return;
                }
            }
        }
    }
}
