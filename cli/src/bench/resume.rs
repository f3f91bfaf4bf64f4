//! Latency of a semantic edge: resumption after a server-initiated
//! disconnect on 2025-11-25 (*Transports*, "Resumability and Redelivery";
//! SEP-1699: the server MAY close a request's SSE connection after sending
//! a `retry`; the client reconnects with `GET` and `Last-Event-ID`, and the
//! server replays what the client missed). Issue 19 asks for its p50 and
//! p99 over at least 1,000 trials.
//!
//! `mcp-compat serve --revisions 2025-11-25 --retry-ms 0` runs in this
//! process behind the edge's accept loop on a loopback port. Each trial
//! calls the reference `close_stream {ms:0}` tool (it logs, asks the
//! engine to close its connection, logs again and answers): the POST's
//! stream ends with `retry: 0`; at that instant the client notes the time
//! and sends the `GET` with the last event id it saw, on the same
//! connection, and the figure is the time until the first message event of
//! the resumed stream has arrived (the events logged after the close,
//! replayed from the event log). The resumed stream is read to its end
//! and must carry the tool's answer. Trials run one at a time, a new
//! session every 100 trials (a session keeps at most 256 streams).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::Parser;
use http::{Method, Request, header};
use http_body_util::Full;
use mcp_http_edge::server::{ConnLimits, serve};

use super::latency::LatencyFigures;
use super::sse_read::read_sse;
use super::wire::{self, LEGACY, Sender, Template};
use crate::serve::{self as serve_cmd, ServeArgs};

/// How long one trial may take before the benchmark gives up.
const TRIAL_TIMEOUT: Duration = Duration::from_secs(10);
/// Trials per session.
const PER_SESSION: usize = 100;
/// The endpoint's path.
const PATH: &str = "/mcp";

#[derive(Parser)]
struct ServeCli {
    #[command(flatten)]
    args: ServeArgs,
}

/// Sends `req` and returns the body of its 200 answer.
async fn send(
    sender: &mut Sender,
    req: Request<Full<Bytes>>,
) -> Result<hyper::body::Incoming, String> {
    let resp = wire::send(sender, req).await?;
    if resp.status() != http::StatusCode::OK {
        return Err(format!("answered {}", resp.status()));
    }
    Ok(resp.into_body())
}

/// One trial in `session`: the latency from the disconnect to the first
/// resumed event.
async fn trial(
    sender: &mut Sender,
    addr: SocketAddr,
    session: &str,
    id: u64,
) -> Result<Duration, String> {
    let post =
        Template::legacy_call(addr, PATH, session, "close_stream", r#"{"ms":0}"#, None).request(id);
    let first = read_sse(send(sender, post).await?, || {}).await?;
    let closed = Instant::now();
    if first.retry != Some(0) {
        return Err(format!(
            "the POST's stream did not end with retry 0: {first:?}"
        ));
    }
    let last = first.last_event_id.as_str();
    if last.is_empty() {
        return Err(format!("no event id in {first:?}"));
    }
    let get = Request::builder()
        .method(Method::GET)
        .uri(PATH)
        .header(header::HOST, addr.to_string())
        .header(header::ACCEPT, "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", LEGACY)
        .header("last-event-id", last)
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    let mut arrived = None;
    let resumed = read_sse(send(sender, get).await?, || arrived = Some(Instant::now())).await?;
    if !resumed.events.iter().any(|e| e.data.contains("resumed")) {
        return Err(format!("the resumed stream lacks the answer: {resumed:?}"));
    }
    let arrived = arrived.ok_or("the resumed stream carried no event")?;
    Ok(arrived.saturating_duration_since(closed))
}

/// Runs `trials` resume trials.
pub async fn resume_after_disconnect(trials: usize) -> Result<LatencyFigures, String> {
    let args = ServeCli::try_parse_from(["serve", "--revisions", LEGACY, "--retry-ms", "0"])
        .map_err(|e| e.to_string())?
        .args;
    let server = serve_cmd::build(serve_cmd::config(&args)?)?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let accept = tokio::spawn(serve(
        listener,
        serve_cmd::app(&server, PATH),
        ConnLimits::default(),
    ));
    let mut latencies = Vec::with_capacity(trials);
    let mut sender = wire::connect(addr).await?;
    let mut session = String::new();
    for n in 0..trials {
        if n % PER_SESSION == 0 {
            sender = wire::connect(addr).await?;
            session = wire::open_session(&mut sender, addr, PATH).await?;
        }
        let took = tokio::time::timeout(
            TRIAL_TIMEOUT,
            trial(&mut sender, addr, &session, n as u64 + 1),
        )
        .await
        .map_err(|_| format!("trial {n}: no resumed event within {TRIAL_TIMEOUT:?}"))?
        .map_err(|e| format!("trial {n}: {e}"))?;
        latencies.push(took);
    }
    accept.abort();
    Ok(LatencyFigures::of(&latencies))
}
