//! Latency of a semantic edge: cancellation by close on 2026-07-28
//! (*Streamable HTTP*: closing a request's response stream cancels the
//! request; issue 19 asks for its p50 and p99 over at least 1,000 trials).
//!
//! The server runs in this process, so the handler's moment of
//! cancellation and the client's moment of closing are read from one clock:
//! a 2026-07-28 engine (default configuration) behind the edge's accept
//! loop (`mcp_http_edge::server::serve`, as `serve` uses) on a loopback
//! port, with a handler whose `wait` tool sends one progress notification
//! (which opens the SSE stream) and then waits for its cancellation token,
//! noting the instant it fires. Each trial opens a TCP connection, writes
//! the `tools/call`, reads until that notification has arrived, notes the
//! instant and closes the socket; the figure is the time from the close to
//! the handler's token firing. Trials run one at a time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mcp_http_edge::server::{ConnLimits, serve};
use mcp_rev_2026_07_28::server::{ModernConfig, ModernServer};
use mcp_transport_core::handler::{Handler, Outcome, RequestContext, ServerDescription};
use mcp_transport_core::jsonrpc::{ErrorObject, Request};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use super::latency::LatencyFigures;
use super::wire::Template;

/// How long one trial may take before the benchmark gives up.
const TRIAL_TIMEOUT: Duration = Duration::from_secs(10);

/// The handler: `wait` reports when its request is cancelled.
struct Waiter {
    cancelled: mpsc::UnboundedSender<Instant>,
}

#[async_trait]
impl Handler for Waiter {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({"name": "mcp-compat-bench-edges", "version": "1"}),
            capabilities: json!({"tools": {}}),
            instructions: None,
        }
    }

    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome {
        match request.method.as_str() {
            "tools/call" => {
                if cx.progress(0.0, None, Some("waiting")).await.is_err() {
                    return Outcome::Error(ErrorObject::internal("the stream closed early"));
                }
                cx.cancelled().await;
                let _ = self.cancelled.send(Instant::now());
                Outcome::Error(ErrorObject::internal("cancelled"))
            }
            _ => Outcome::Error(ErrorObject::new(
                mcp_transport_core::jsonrpc::METHOD_NOT_FOUND,
                "Method not found",
            )),
        }
    }
}

/// The `tools/call wait` request as HTTP/1.1 bytes.
fn request_bytes(addr: std::net::SocketAddr) -> Vec<u8> {
    let template = Template::modern_call(addr, "/mcp", "wait", "{}", "{}", Some("edge"));
    let req = template.request(1);
    let body = template.body_bytes(1);
    let mut out = format!("POST {} HTTP/1.1\r\n", req.uri()).into_bytes();
    for (name, value) in req.headers() {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(&body);
    out
}

/// Runs `trials` cancel-by-close trials: each figure is the time from the
/// client's close to the handler's cancellation token firing.
pub async fn cancel_by_close(trials: usize) -> Result<LatencyFigures, String> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let server = ModernServer::new(Arc::new(Waiter { cancelled: tx }), ModernConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let accept = tokio::spawn(serve(
        listener,
        server.endpoint("/mcp"),
        ConnLimits::default(),
    ));
    let request = request_bytes(addr);
    let mut latencies = Vec::with_capacity(trials);
    for trial in 0..trials {
        let one = async {
            let mut tcp = tokio::net::TcpStream::connect(addr)
                .await
                .map_err(|e| format!("connect: {e}"))?;
            let _ = tcp.set_nodelay(true);
            tcp.write_all(&request)
                .await
                .map_err(|e| format!("write: {e}"))?;
            // Read until the progress event (the stream is open and the
            // handler is waiting).
            let mut seen = Vec::with_capacity(1024);
            let mut buf = [0u8; 1024];
            while memchr::memmem::find(&seen, b"notifications/progress").is_none() {
                let n = tcp.read(&mut buf).await.map_err(|e| format!("read: {e}"))?;
                if n == 0 {
                    return Err(format!(
                        "the server closed before the progress event: {}",
                        String::from_utf8_lossy(&seen)
                    ));
                }
                seen.extend_from_slice(&buf[..n]);
            }
            let closed = Instant::now();
            drop(tcp);
            let cancelled = rx.recv().await.ok_or("the handler is gone")?;
            Ok::<_, String>(cancelled.saturating_duration_since(closed))
        };
        let took = tokio::time::timeout(TRIAL_TIMEOUT, one)
            .await
            .map_err(|_| format!("trial {trial}: no cancellation within {TRIAL_TIMEOUT:?}"))?
            .map_err(|e| format!("trial {trial}: {e}"))?;
        latencies.push(took);
    }
    accept.abort();
    Ok(LatencyFigures::of(&latencies))
}
