//! `serve_with_shutdown` over real sockets on 127.0.0.1:0: after the
//! signal the listener is closed, an idle keep-alive connection is closed,
//! a response in flight completes, and a body that never ends is dropped
//! when the grace period passes, after which the call returns.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::routing::get;
use bytes::Bytes;
use mcp_http_edge::server::{ConnLimits, serve_with_shutdown};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, oneshot};

/// How long a test waits for something that must happen.
const GUARD: Duration = Duration::from_secs(20);

/// A body that sends one chunk, then waits for `release`, then ends.
fn held(release: Arc<Notify>) -> Body {
    let chunks = futures_util::stream::unfold(0, move |i| {
        let release = release.clone();
        async move {
            match i {
                0 => Some((Ok::<_, std::io::Error>(Bytes::from_static(b"first\n")), 1)),
                1 => {
                    release.notified().await;
                    Some((Ok(Bytes::from_static(b"last\n")), 2))
                }
                _ => None,
            }
        }
    });
    Body::from_stream(chunks)
}

/// A body that never ends after its first chunk.
fn endless() -> Body {
    let chunks = futures_util::stream::unfold(0, |i| async move {
        if i > 0 {
            std::future::pending::<()>().await;
        }
        Some((
            Ok::<_, std::io::Error>(Bytes::from_static(b"tick\n")),
            i + 1,
        ))
    });
    Body::from_stream(chunks)
}

struct Server {
    addr: std::net::SocketAddr,
    stop: oneshot::Sender<()>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start(grace: Duration, release: Arc<Notify>) -> Server {
    let app = Router::new()
        .route("/", get(|| async { "ok" }))
        .route(
            "/held",
            get(move || {
                let release = release.clone();
                async move { held(release) }
            }),
        )
        .route("/endless", get(|| async { endless() }));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let limits = ConnLimits::default().with_shutdown_grace(grace);
    let done = tokio::spawn(serve_with_shutdown(listener, app, limits, async {
        let _ = stopped.await;
    }));
    Server { addr, stop, done }
}

async fn request(addr: std::net::SocketAddr, path: &str) -> TcpStream {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").as_bytes())
        .await
        .unwrap();
    tcp
}

/// Reads until `needle` has arrived.
async fn read_until(tcp: &mut TcpStream, needle: &str) -> String {
    let mut all = Vec::new();
    tokio::time::timeout(GUARD, async {
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&all).contains(needle) {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "closed before {needle:?}: {:?}",
                String::from_utf8_lossy(&all)
            );
            all.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("timed out");
    String::from_utf8_lossy(&all).into_owned()
}

/// Reads until the peer closes; what arrived.
async fn read_to_close(tcp: &mut TcpStream) -> String {
    let mut all = Vec::new();
    tokio::time::timeout(GUARD, async {
        let mut buf = [0u8; 4096];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .expect("the server did not close the connection");
    String::from_utf8_lossy(&all).into_owned()
}

#[tokio::test]
async fn in_flight_response_completes_idle_connection_closes_listener_refuses() {
    let release = Arc::new(Notify::new());
    let server = start(Duration::from_secs(600), release.clone()).await;
    // An idle keep-alive connection: one answered request.
    let mut idle = request(server.addr, "/").await;
    read_until(&mut idle, "ok").await;
    // A response in flight.
    let mut busy = request(server.addr, "/held").await;
    read_until(&mut busy, "first").await;

    server.stop.send(()).unwrap();
    let closed = read_to_close(&mut idle).await;
    assert!(closed.is_empty(), "the idle connection got {closed:?}");
    // The listener is gone: connecting fails (eventually, once the loop
    // has seen the signal).
    tokio::time::timeout(GUARD, async {
        while TcpStream::connect(server.addr).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("still accepting after the signal");
    assert!(
        !server.done.is_finished(),
        "returned with a request in flight"
    );

    release.notify_one();
    let rest = read_to_close(&mut busy).await;
    assert!(
        rest.contains("last"),
        "the response in flight was cut: {rest:?}"
    );
    assert!(
        rest.ends_with("0\r\n\r\n"),
        "not a complete chunked body: {rest:?}"
    );
    let result = tokio::time::timeout(GUARD, server.done).await;
    assert!(matches!(result, Ok(Ok(Ok(())))), "{result:?}");
}

#[tokio::test]
async fn a_body_that_never_ends_is_dropped_after_the_grace_period() {
    let server = start(Duration::from_millis(200), Arc::new(Notify::new())).await;
    let mut stream = request(server.addr, "/endless").await;
    read_until(&mut stream, "tick").await;
    server.stop.send(()).unwrap();
    let result = tokio::time::timeout(GUARD, server.done).await;
    assert!(matches!(result, Ok(Ok(Ok(())))), "{result:?}");
    let rest = read_to_close(&mut stream).await;
    assert!(!rest.ends_with("0\r\n\r\n"), "ended, not dropped: {rest:?}");
}
