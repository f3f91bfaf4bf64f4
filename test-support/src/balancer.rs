//! [`Balancer`]: a round-robin HTTP reverse proxy on 127.0.0.1:0 in front
//! of several server instances, for the many-instances tests (issue 15).
//!
//! Every *request* goes to the next backend in turn, whatever connection
//! it came on: there is no stickiness, neither by connection (keep-alive)
//! nor by session, so consecutive requests of one session land on
//! different instances — what a load balancer without sticky sessions
//! does, and what a cluster must survive. Bodies are streamed both ways as
//! they arrive (hyper's `Incoming` passed through, never collected), so an
//! SSE response reaches the client event by event.
//!
//! Bounds: at most [`MAX_CONNECTIONS`] client connections at once (one
//! more is closed at once), a request head must arrive within
//! [`HEADER_TIMEOUT`], connecting to a backend within
//! [`CONNECT_TIMEOUT`] (else 502), and the routing log keeps the last
//! [`MAX_LOG`] entries.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, Response, StatusCode, Uri};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// Most client connections served at once.
pub const MAX_CONNECTIONS: usize = 256;
/// How long a client may take to send a request head.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long connecting to a backend may take before the request is 502.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How many routing decisions [`Balancer::log`] keeps.
pub const MAX_LOG: usize = 4096;

/// One routing decision: which backend served a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routed {
    /// The request's method.
    pub method: http::Method,
    /// The index of the backend (into the list given to [`Balancer::start`]).
    pub backend: usize,
}

struct State {
    backends: Vec<SocketAddr>,
    next: AtomicUsize,
    log: Mutex<VecDeque<Routed>>,
    client: Client<HttpConnector, Incoming>,
}

impl State {
    /// The backend for the next request (round robin).
    fn pick(&self) -> usize {
        self.next.fetch_add(1, Ordering::SeqCst) % self.backends.len()
    }

    fn record(&self, method: &http::Method, backend: usize) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if log.len() >= MAX_LOG {
            log.pop_front();
        }
        log.push_back(Routed {
            method: method.clone(),
            backend,
        });
    }

    async fn forward(&self, mut req: Request<Incoming>) -> Response<BoxBody> {
        let backend = self.pick();
        self.record(req.method(), backend);
        let target = self.backends[backend];
        let path = req
            .uri()
            .path_and_query()
            .map_or("/", http::uri::PathAndQuery::as_str);
        let uri: Uri = match format!("http://{target}{path}").parse() {
            Ok(u) => u,
            Err(e) => return text(StatusCode::BAD_REQUEST, format!("bad target: {e}")),
        };
        *req.uri_mut() = uri;
        match self.client.request(req).await {
            Ok(resp) => resp.map(BoxBody::Backend),
            Err(e) => text(
                StatusCode::BAD_GATEWAY,
                format!("balancer: backend {backend} ({target}) failed: {e}"),
            ),
        }
    }
}

/// The response body: the backend's, streamed through, or the balancer's
/// own short error text.
pub enum BoxBody {
    /// The backend's body, frame by frame.
    Backend(Incoming),
    /// A body made here (a 502).
    Own(Option<bytes::Bytes>),
}

impl hyper::body::Body for BoxBody {
    type Data = bytes::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        match self.get_mut() {
            BoxBody::Backend(b) => std::pin::Pin::new(b).poll_frame(cx),
            BoxBody::Own(b) => {
                std::task::Poll::Ready(b.take().map(|d| Ok(hyper::body::Frame::data(d))))
            }
        }
    }
}

fn text(status: StatusCode, body: String) -> Response<BoxBody> {
    let mut r = Response::new(BoxBody::Own(Some(body.into())));
    *r.status_mut() = status;
    r
}

/// A running balancer; stops (dropping every connection) when dropped.
pub struct Balancer {
    addr: SocketAddr,
    state: Arc<State>,
    accept: JoinHandle<()>,
    conns: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl std::fmt::Debug for Balancer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Balancer")
            .field("addr", &self.addr)
            .field("backends", &self.state.backends)
            .finish_non_exhaustive()
    }
}

impl Balancer {
    /// Starts a balancer on 127.0.0.1:0 over `backends` (loopback
    /// addresses; at least one).
    ///
    /// # Errors
    ///
    /// When the listener cannot be bound.
    ///
    /// # Panics
    ///
    /// When `backends` is empty.
    pub async fn start(backends: Vec<SocketAddr>) -> std::io::Result<Balancer> {
        assert!(!backends.is_empty(), "a balancer needs a backend");
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        connector.set_nodelay(true);
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(8)
            .build(connector);
        let state = Arc::new(State {
            backends,
            next: AtomicUsize::new(0),
            log: Mutex::default(),
            client,
        });
        let conns: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let limit = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        let accept = {
            let state = state.clone();
            let conns = conns.clone();
            tokio::spawn(async move {
                while let Ok((tcp, _)) = listener.accept().await {
                    let Ok(permit) = limit.clone().try_acquire_owned() else {
                        drop(tcp); // over the bound: closed at once
                        continue;
                    };
                    let _ = tcp.set_nodelay(true);
                    let state = state.clone();
                    let conn = tokio::spawn(async move {
                        let _permit = permit;
                        let service = hyper::service::service_fn(move |req| {
                            let state = state.clone();
                            async move { Ok::<_, Infallible>(state.forward(req).await) }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .timer(TokioTimer::new())
                            .header_read_timeout(HEADER_TIMEOUT)
                            .serve_connection(TokioIo::new(tcp), service)
                            .await;
                    });
                    let mut live = conns.lock().unwrap_or_else(|e| e.into_inner());
                    live.retain(|h| !h.is_finished());
                    live.push(conn);
                }
            })
        };
        Ok(Balancer {
            addr,
            state,
            accept,
            conns,
        })
    }

    /// The balancer's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint (`/mcp`) through the balancer.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Makes the next request go to backend `index` (the rotation goes on
    /// from there), so a test can say where each exchange lands.
    pub fn route_next_to(&self, index: usize) {
        self.state
            .next
            .store(index % self.state.backends.len(), Ordering::SeqCst);
    }

    /// The routing decisions so far (the last [`MAX_LOG`]), oldest first.
    pub fn log(&self) -> Vec<Routed> {
        let log = self.state.log.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().cloned().collect()
    }

    /// Drops every client connection now (a network drop between client
    /// and balancer); new connections are served again. Returns how many
    /// were live.
    pub fn cut(&self) -> usize {
        let conns: Vec<_> = {
            let mut live = self.conns.lock().unwrap_or_else(|e| e.into_inner());
            live.drain(..).collect()
        };
        let live = conns.iter().filter(|h| !h.is_finished()).count();
        for c in conns {
            c.abort();
        }
        live
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::get;

    use crate::server::TestServer;

    /// A backend that names itself on `/who`, and on `/stream` sends one
    /// chunk, then the rest only once `go` has a permit.
    async fn backend(name: &'static str, go: Arc<Semaphore>) -> TestServer {
        let app = Router::new()
            .route("/who", get(move || async move { name }))
            .route(
                "/stream",
                get(move || async move {
                    let (tx, mut rx) =
                        tokio::sync::mpsc::channel::<Result<bytes::Bytes, Infallible>>(1);
                    tokio::spawn(async move {
                        let _ = tx.send(Ok("data: 0\n\n".into())).await;
                        let _ = go.acquire().await.map(|p| p.forget());
                        for i in 1..3 {
                            let _ = tx.send(Ok(format!("data: {i}\n\n").into())).await;
                        }
                    });
                    axum::body::Body::from_stream(futures_util::stream::poll_fn(move |cx| {
                        rx.poll_recv(cx)
                    }))
                }),
            );
        TestServer::serve(app).await
    }

    #[tokio::test]
    async fn every_request_goes_to_the_next_backend_even_on_one_connection() {
        let go = Arc::new(Semaphore::new(0));
        let (a, b, c) = (
            backend("a", go.clone()).await,
            backend("b", go.clone()).await,
            backend("c", go).await,
        );
        let lb = Balancer::start(vec![a.addr(), b.addr(), c.addr()])
            .await
            .unwrap();
        // One keep-alive client: its connection to the balancer is reused.
        let http = reqwest::Client::new();
        let mut seen = Vec::new();
        for _ in 0..6 {
            let r = http
                .get(format!("http://{}/who", lb.addr()))
                .send()
                .await
                .unwrap();
            seen.push(r.text().await.unwrap());
        }
        assert_eq!(seen, ["a", "b", "c", "a", "b", "c"]);
        let backends: Vec<usize> = lb.log().iter().map(|r| r.backend).collect();
        assert_eq!(backends, [0, 1, 2, 0, 1, 2]);
        lb.route_next_to(2);
        let r = http.get(format!("http://{}/who", lb.addr())).send().await;
        assert_eq!(r.unwrap().text().await.unwrap(), "c");
    }

    #[tokio::test]
    async fn streamed_bodies_pass_through_unbuffered() {
        let go = Arc::new(Semaphore::new(0));
        let a = backend("a", go.clone()).await;
        let lb = Balancer::start(vec![a.addr()]).await.unwrap();
        let mut r = reqwest::get(format!("http://{}/stream", lb.addr()))
            .await
            .unwrap();
        // The first chunk arrives while the backend still holds the rest
        // (it sends more only after this): nothing waits for the whole body.
        let first = crate::within("the first chunk", r.chunk()).await;
        assert_eq!(&first.unwrap().unwrap()[..], b"data: 0\n\n");
        go.add_permits(1);
        let mut rest = Vec::new();
        while let Some(c) = r.chunk().await.unwrap() {
            rest.extend_from_slice(&c);
        }
        assert_eq!(rest, b"data: 1\n\ndata: 2\n\n");
    }

    #[tokio::test]
    async fn a_dead_backend_is_a_502_and_the_rotation_goes_on() {
        let a = backend("a", Arc::new(Semaphore::new(0))).await;
        let dead = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        let lb = Balancer::start(vec![dead, a.addr()]).await.unwrap();
        let r = reqwest::get(format!("http://{}/who", lb.addr()))
            .await
            .unwrap();
        assert_eq!(r.status(), 502);
        let r = reqwest::get(format!("http://{}/who", lb.addr()))
            .await
            .unwrap();
        assert_eq!(r.text().await.unwrap(), "a");
    }
}
