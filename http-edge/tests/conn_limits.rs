//! `serve` over real sockets on 127.0.0.1:0: each connection timeout and
//! the connection cap (issue 13, item 1). Timeouts are configured short;
//! the tests wait for events (a close, an answer) with a generous guard,
//! never for a speed.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::routing::{get, post};
use bytes::Bytes;
use http::HeaderMap;
use mcp_http_edge::server::{ConnLimits, read_body, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// How long a test waits for something that must happen.
const GUARD: Duration = Duration::from_secs(20);

async fn upload(headers: HeaderMap, body: Body) -> http::Response<Body> {
    match read_body(body, &headers, 1024).await {
        Ok(b) => http::Response::new(Body::from(format!("got {}", b.len()))),
        Err(reject) => reject.response(),
    }
}

/// A body of `n` chunks, one per 50 ms.
fn slow_stream(n: usize) -> Body {
    let chunks = futures_util::stream::unfold(0, move |i| async move {
        if i == n {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        Some((
            Ok::<_, std::io::Error>(Bytes::from(format!("chunk{i}\n"))),
            i + 1,
        ))
    });
    Body::from_stream(chunks)
}

/// Notifies when dropped.
struct Dropped(Arc<Notify>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// An endless body of 64 KiB chunks; `dropped` is notified when the body
/// is dropped.
fn flood(dropped: Arc<Notify>) -> Body {
    let chunks = futures_util::stream::unfold(Dropped(dropped), |guard| async move {
        Some((
            Ok::<_, std::io::Error>(Bytes::from(vec![b'x'; 64 * 1024])),
            guard,
        ))
    });
    Body::from_stream(chunks)
}

async fn start(limits: ConnLimits) -> std::net::SocketAddr {
    start_with(limits, None).await
}

async fn start_with(
    limits: ConnLimits,
    flood_dropped: Option<Arc<Notify>>,
) -> std::net::SocketAddr {
    let app = Router::new()
        .route(
            "/flood",
            get(move || {
                let dropped = flood_dropped.clone().expect("a flood test");
                async move { flood(dropped) }
            }),
        )
        .route("/", get(|| async { "ok" }))
        .route("/stream", get(|| async { slow_stream(20) }))
        .route("/upload", post(upload))
        .route("/peer", get(peer));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(listener, app, limits));
    addr
}

/// The peer address the request carries (axum's `ConnectInfo`), or "none".
async fn peer(req: axum::extract::Request) -> String {
    req.extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map_or_else(|| "none".to_owned(), |c| format!("peer {}", c.0))
}

fn limits() -> ConnLimits {
    ConnLimits::default()
        .with_header_read_timeout(Duration::from_secs(600))
        .with_idle_timeout(Duration::from_secs(600))
        .with_body_read_timeout(Duration::from_secs(600))
        .with_write_timeout(Duration::from_secs(600))
}

/// Reads until the peer closes; what arrived.
async fn read_to_close(tcp: &mut TcpStream) -> String {
    let mut all = Vec::new();
    let read = tokio::time::timeout(GUARD, async {
        let mut buf = [0u8; 4096];
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server did not close the connection");
    String::from_utf8_lossy(&all).into_owned()
}

/// Reads one complete `Content-Length` answer.
async fn read_answer(tcp: &mut TcpStream) -> String {
    let mut all = Vec::new();
    tokio::time::timeout(GUARD, async {
        let mut buf = [0u8; 4096];
        loop {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "closed before the answer: {:?}",
                String::from_utf8_lossy(&all)
            );
            all.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&all);
            if let Some(head_end) = text.find("\r\n\r\n") {
                let len: usize = text[..head_end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if all.len() >= head_end + 4 + len {
                    return;
                }
            }
        }
    })
    .await
    .expect("no answer");
    String::from_utf8_lossy(&all).into_owned()
}

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";

#[tokio::test]
async fn the_peer_address_is_in_the_extensions_unless_turned_off() {
    for (on, expect_peer) in [(true, true), (false, false)] {
        let addr = start(limits().with_peer_address(on)).await;
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let local = tcp.local_addr().unwrap();
        tcp.write_all(b"GET /peer HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .unwrap();
        let answer = read_answer(&mut tcp).await;
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        if expect_peer {
            assert_eq!(body, format!("peer {local}"), "peer_address {on}");
        } else {
            assert_eq!(body, "none", "peer_address {on}");
        }
    }
    assert!(ConnLimits::default().peer_address, "on by default");
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed() {
    let addr = start(limits().with_header_read_timeout(Duration::from_millis(200))).await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    assert_eq!(read_to_close(&mut tcp).await, "");
}

#[tokio::test]
async fn trickled_headers_are_closed_without_an_answer() {
    let addr = start(limits().with_header_read_timeout(Duration::from_millis(300))).await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let (mut rd, mut wr) = tcp.split();
    let trickle = async {
        for b in b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".iter().cycle() {
            if wr.write_all(&[*b]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let mut got = Vec::new();
    tokio::select! {
        () = trickle => {}
        r = tokio::time::timeout(GUARD, rd.read_to_end(&mut got)) => {
            assert!(r.is_ok(), "the server did not close the trickling connection");
        }
    }
    assert!(
        got.is_empty(),
        "answered: {:?}",
        String::from_utf8_lossy(&got)
    );
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let addr = start(limits().with_idle_timeout(Duration::from_millis(200))).await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(GET).await.unwrap();
    let answer = read_answer(&mut tcp).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(read_to_close(&mut tcp).await, "");
}

#[tokio::test]
async fn a_kept_alive_connection_is_judged_by_the_idle_timeout_after_its_first_request() {
    // The header-read timeout (200 ms) passes between the two requests; the
    // idle timeout (60 s) is what applies once a request has been served.
    let addr = start(
        limits()
            .with_header_read_timeout(Duration::from_millis(200))
            .with_idle_timeout(Duration::from_secs(60)),
    )
    .await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(GET).await.unwrap();
    assert!(read_answer(&mut tcp).await.starts_with("HTTP/1.1 200"));
    tokio::time::sleep(Duration::from_millis(600)).await;
    tcp.write_all(GET).await.unwrap();
    let again = read_answer(&mut tcp).await;
    assert!(again.starts_with("HTTP/1.1 200"), "closed early: {again:?}");
}

#[tokio::test]
async fn activity_moves_the_idle_deadline() {
    // Requests every 150 ms against an idle timeout of 400 ms: the
    // connection outlives several timeouts, then closes once left idle.
    let addr = start(limits().with_idle_timeout(Duration::from_millis(400))).await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    for _ in 0..8 {
        tcp.write_all(GET).await.unwrap();
        let answer = read_answer(&mut tcp).await;
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "closed early: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    assert_eq!(read_to_close(&mut tcp).await, "");
}

#[tokio::test]
async fn a_streaming_answer_is_not_idle() {
    // 20 chunks 50 ms apart, against an idle timeout of 100 ms.
    let addr = start(limits().with_idle_timeout(Duration::from_millis(100))).await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let mut all = Vec::new();
    let whole = tokio::time::timeout(GUARD, async {
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&all).contains("chunk19") {
            let n = tcp.read(&mut buf).await.unwrap();
            assert!(
                n > 0,
                "closed mid-stream: {}",
                String::from_utf8_lossy(&all)
            );
            all.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    assert!(whole.is_ok(), "the stream did not finish");
}

#[tokio::test]
async fn a_stalled_body_gets_408() {
    let addr = start(limits().with_body_read_timeout(Duration::from_millis(200))).await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\nabc")
        .await
        .unwrap();
    let all = read_to_close(&mut tcp).await;
    assert!(all.starts_with("HTTP/1.1 408"), "{all}");
    assert!(all.contains("-32600"), "{all}");
}

#[tokio::test]
async fn an_oversized_expect_continue_gets_413_not_100() {
    let addr = start(limits()).await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n")
        .await
        .unwrap();
    let answer = read_answer(&mut tcp).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

#[tokio::test]
async fn the_cap_queues_the_excess_and_serves_the_accepted() {
    let addr = start(limits().with_max_connections(1)).await;
    let mut first = TcpStream::connect(addr).await.unwrap();
    first.write_all(GET).await.unwrap();
    assert!(read_answer(&mut first).await.starts_with("HTTP/1.1 200"));
    // The kernel completes the handshake; the server does not accept it.
    let mut second = TcpStream::connect(addr).await.unwrap();
    second.write_all(GET).await.unwrap();
    // The accepted connection is still served while the second waits...
    first.write_all(GET).await.unwrap();
    assert!(read_answer(&mut first).await.starts_with("HTTP/1.1 200"));
    let mut one = [0u8; 1];
    let waiting = tokio::time::timeout(Duration::from_millis(300), second.read(&mut one)).await;
    assert!(waiting.is_err(), "the connection over the cap was served");
    // ...and is served once the first closes.
    drop(first);
    assert!(read_answer(&mut second).await.starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn a_client_that_stops_reading_is_closed_after_the_write_timeout() {
    let dropped = Arc::new(Notify::new());
    let addr = start_with(
        limits().with_write_timeout(Duration::from_millis(300)),
        Some(dropped.clone()),
    )
    .await;
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /flood HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    // Never read: the socket buffers fill, the server's writes block, and
    // the connection (and so the endless body) is dropped.
    let closed = tokio::time::timeout(GUARD, dropped.notified()).await;
    assert!(closed.is_ok(), "the stalled connection was kept");
    drop(tcp);
}
