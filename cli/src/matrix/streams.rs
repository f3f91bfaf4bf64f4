//! The scenarios about one call's stream: JSON and SSE answers, progress,
//! server-initiated disconnects, network drops and two concurrent streams.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use mcp_negotiate::client::Connection;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{Notification, Response};
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport};
use serde_json::{Value, json};

use super::checks::*;
use super::harness::{DISCONNECT_RETRY_MS, Harness, Observed};
use super::outcome::*;
use super::seen::Seen;
use super::wire::Exchange;
use mcp_test_support::Proxy;

pub(crate) async fn json_answer(conn: &Connection, harness: &Harness) -> Outcome {
    let text = call(conn, "echo", json!({ "text": "matrix" })).await?;
    ensure(text == "matrix", || format!("echo answered {text:?}"))?;
    let wire = harness.wire.exchanges();
    let post = call_post(&wire, "echo", None).ok_or_else(|| failed("no tools/call on the wire"))?;
    if http_sse(conn) {
        answered_on_the_stream(&wire, &post)?;
        return Ok(absent(
            "no JSON answers: the POST got 202 and the response came as an SSE message event",
        ));
    }
    let ct = answered_as_json(&post)?;
    no_session_id_minted(conn, harness)?;
    Ok(works(format!("echo answered as {ct}")))
}

/// The server in JSON mode answered `post` 200 `application/json`; its
/// Content-Type.
fn answered_as_json(post: &Exchange) -> Result<&str, Observed> {
    let ct = post.response_header("content-type").unwrap_or_default();
    ensure(
        post.status == Some(http::StatusCode::OK) && ct.starts_with("application/json"),
        || {
            format!(
                "the server in JSON mode answered {:?} with Content-Type {ct:?}",
                post.status
            )
        },
    )?;
    Ok(ct)
}

pub(crate) async fn streamed(conn: &Connection, harness: &Harness) -> Outcome {
    let run = countdown(conn, 2, 5, None).await?;
    let wire = harness.wire.exchanges();
    let post =
        call_post(&wire, "countdown", None).ok_or_else(|| failed("no tools/call on the wire"))?;
    if http_sse(conn) {
        answered_on_the_stream(&wire, &post)?;
        return Ok(works(format!(
            "{} messages, then the response, as SSE message events on the stream",
            run.progress.len() + run.logs
        )));
    }
    let ct = post.response_header("content-type").unwrap_or_default();
    ensure(post.is_sse(), || {
        format!("the answer's Content-Type is {ct:?}, not text/event-stream")
    })?;
    no_session_id_minted(conn, harness)?;
    Ok(works(format!(
        "{} messages streamed before the response, as {ct}",
        run.progress.len() + run.logs
    )))
}

/// What one countdown call delivered.
#[derive(Debug, Default)]
pub(crate) struct Countdown {
    /// `(progress, total, progressToken)` of each progress notification.
    progress: Vec<(f64, f64, Value)>,
    logs: usize,
    /// Over HTTP+SSE log messages carry no request: they go to the
    /// listener, not to the call.
    over_http_sse: bool,
    response: Option<Response>,
}

impl Countdown {
    /// Exactly `n` progress notifications, 1..=n in order, each with total
    /// `n` and one token (the request's); `n` logs; then `done`.
    fn check(&self, n: u64, token: Option<&Value>) -> Result<(), Observed> {
        let values: Vec<f64> = self.progress.iter().map(|p| p.0).collect();
        let want: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        ensure(values == want, || {
            format!("progress values {values:?}, expected {want:?} exactly once each, in order")
        })?;
        if let Some(bad) = self.progress.iter().find(|p| p.1 != n as f64) {
            return Err(failed(format!(
                "a progress notification of total {} (another request's) arrived on this request's stream",
                bad.1
            )));
        }
        if let Some(token) = token
            && let Some(bad) = self.progress.iter().find(|p| &p.2 != token)
        {
            return Err(failed(format!(
                "progressToken {} in a notification, the request sent {token}",
                bad.2
            )));
        }
        ensure(self.over_http_sse || self.logs as u64 == n, || {
            format!("{} log messages, expected {n}", self.logs)
        })?;
        let text = self
            .response
            .as_ref()
            .map(result_text)
            .unwrap_or_else(|| Err("no response".into()))
            .map_err(failed)?;
        ensure(text == "done", || format!("answered {text:?}"))
    }
}

/// `(progress, total, progressToken)` of a progress notification's
/// params; a number missing reads as -1, which no count matches.
fn progress_of(params: &Value) -> (f64, f64, Value) {
    (
        params["progress"].as_f64().unwrap_or(-1.0),
        params["total"].as_f64().unwrap_or(-1.0),
        params["progressToken"].clone(),
    )
}

/// Runs `countdown` with progress; `on_progress` is told of each progress
/// notification (with how many arrived so far).
pub(crate) async fn countdown(
    conn: &Connection,
    n: u64,
    interval_ms: u64,
    mut on_progress: Option<&mut (dyn FnMut(usize) + Send)>,
) -> Result<Countdown, Observed> {
    let options = RequestOptions {
        progress: true,
        ..RequestOptions::default()
    };
    let mut stream = conn
        .request(
            "tools/call",
            tool_params("countdown", json!({ "n": n, "interval_ms": interval_ms })),
            options,
        )
        .await
        .map_err(|e| from_error(&e))?;
    let mut out = Countdown {
        over_http_sse: http_sse(conn),
        ..Countdown::default()
    };
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamEvent::Notification(Notification { method, params })) => {
                let p: Value = params
                    .as_deref()
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or(Value::Null);
                match method.as_str() {
                    "notifications/progress" => {
                        out.progress.push(progress_of(&p));
                        if let Some(f) = on_progress.as_mut() {
                            f(out.progress.len());
                        }
                    }
                    "notifications/message" => out.logs += 1,
                    other => {
                        return Err(failed(format!(
                            "unexpected notification {other} on the request's stream"
                        )));
                    }
                }
            }
            Ok(StreamEvent::ServerRequest(r)) => {
                return Err(failed(format!(
                    "unexpected server request {} on the request's stream",
                    r.method
                )));
            }
            Ok(StreamEvent::Response(resp)) => out.response = Some(resp),
            Err(e) => return Err(from_error(&e)),
        }
    }
    if out.response.is_none() {
        return Err(failed("the stream ended without a response"));
    }
    Ok(out)
}

/// The progress token a countdown POST sent (from the wire).
pub(crate) fn sent_token(post: &Exchange) -> Option<Value> {
    let t = post.json()["params"]["_meta"]["progressToken"].clone();
    (!t.is_null()).then_some(t)
}

pub(crate) async fn progress(conn: &Connection, harness: &Harness) -> Outcome {
    let n = 4;
    let run = countdown(conn, n, 10, None).await?;
    let wire = harness.wire.exchanges();
    let post =
        call_post(&wire, "countdown", None).ok_or_else(|| failed("no tools/call on the wire"))?;
    let token = sent_token(&post).ok_or_else(|| failed("the request sent no progressToken"))?;
    run.check(n, Some(&token))?;
    if !http_sse(conn) {
        let mut connections = vec![post.clone()];
        connections.extend(resumes(&wire));
        nothing_after_response(&connections, &post.json()["id"])?;
    }
    let after = if http_sse(conn) {
        "one shared SSE stream"
    } else {
        "nothing after the response"
    };
    Ok(works(format!(
        "{n} progress (token {token}, 1..{n} of {n}) and {} log notifications exactly once, in order; {after}",
        run.logs
    )))
}

/// SEP-1699 on 2025-11-25: priming event, `retry` before every early close,
/// resumption with the last id after at least `retry`, every event once.
/// Elsewhere: none of that happens, and the call completes on its POST.
pub(crate) async fn disconnect(conn: &Connection, harness: &Harness) -> Outcome {
    let n = 4;
    let run = countdown(conn, n, 10, None).await?;
    let wire = harness.wire.exchanges();
    let post =
        call_post(&wire, "countdown", None).ok_or_else(|| failed("no tools/call on the wire"))?;
    run.check(n, sent_token(&post).as_ref())?;
    polled(&wire, &post, &conn.revision(), http_sse(conn), n)
}

/// The wire of `disconnect`'s countdown of `n` (its POST `post`) on `rev`:
/// SEP-1699's priming event, `retry` and resumptions exactly where the
/// revision has them (see [`disconnect`]).
fn polled(
    wire: &[Exchange],
    post: &Exchange,
    rev: &ProtocolVersion,
    over_http_sse: bool,
    n: u64,
) -> Outcome {
    let gets = resumes(wire);
    let items = post.sse();
    let primed = matches!(items.first(), Some(mcp_transport_core::sse::SseItem::Event(e))
        if e.data.is_empty() && !e.last_event_id.is_empty());
    let retries = post.retries();
    if !rev.has(|f| f.sse_polling) {
        ensure(!primed && retries.is_empty() && gets.is_empty(), || {
            format!(
                "revision {rev} has no SEP-1699 polling, yet: priming event {primed}, retry fields {retries:?}, {} resume(s)",
                gets.len()
            )
        })?;
        if !over_http_sse {
            nothing_after_response(std::slice::from_ref(post), &post.json()["id"])?;
        }
        return Ok(absent(if over_http_sse {
            "the call completed on the HTTP+SSE stream, every event once: no priming event, no retry, no early close"
        } else {
            "the call completed on its POST stream, every event once: no priming event, no retry, no early close"
        }));
    }
    ensure(primed, || {
        format!(
            "the POST's SSE stream did not start with a priming event (id, empty data): first item {:?}",
            items.first()
        )
    })?;
    ensure(!gets.is_empty(), || {
        "the server never closed the connection early (no resume with Last-Event-ID)".into()
    })?;
    let mut connections = vec![post.clone()];
    connections.extend(gets.iter().cloned());
    for pair in connections.windows(2) {
        let (prev, next) = (&pair[0], &pair[1]);
        let last_id = prev.sse_ids().last().map(|(id, _)| id.clone());
        ensure(
            next.header("last-event-id").map(str::to_owned) == last_id,
            || {
                format!(
                    "resumed with Last-Event-ID {:?}, the closed connection's last id was {last_id:?}",
                    next.header("last-event-id")
                )
            },
        )?;
        ensure(prev.retries().contains(&DISCONNECT_RETRY_MS), || {
            format!(
                "a connection was closed early without retry: {DISCONNECT_RETRY_MS} (retry fields {:?})",
                prev.retries()
            )
        })?;
        let gap = next.started.duration_since(prev.started);
        ensure(gap >= Duration::from_millis(DISCONNECT_RETRY_MS), || {
            format!(
                "the client reconnected {gap:?} after the previous connection opened, before retry ({DISCONNECT_RETRY_MS} ms) had passed since its close"
            )
        })?;
    }
    let ids = ids_unique(wire)?;
    nothing_after_response(&connections, &post.json()["id"])?;
    Ok(works(format!(
        "priming event; {} early close(s) each with retry: {DISCONNECT_RETRY_MS}; each resumed with the last id, after at least the retry; {ids} event ids once each; {n} progress exactly once, in order",
        gets.len()
    )))
}

pub(crate) async fn network_drop(
    conn: &Connection,
    harness: &Harness,
    proxy: Option<&Proxy>,
) -> Outcome {
    let Some(proxy) = proxy else {
        return Err(failed("no proxy to cut the network with"));
    };
    let n = 6;
    let before = harness.handler.cancelled_count();
    let cut = Arc::new(AtomicUsize::new(0));
    let cut2 = cut.clone();
    let mut on_progress = move |count: usize| {
        if count == 2 {
            cut2.fetch_add(proxy.cut(), Ordering::SeqCst);
        }
    };
    let result = countdown(conn, n, 40, Some(&mut on_progress)).await;
    let seen = Seen::since(harness, before);
    let cuts = cut.load(Ordering::SeqCst);
    dropped(result, cuts, &conn.revision(), http_sse(conn), &seen, n).await
}

/// `network_drop`'s verdict once the countdown of `n` ended (`result`)
/// with `cuts` connections cut: HTTP+SSE cannot resume; on 2026-07-28 the
/// closed stream cancels the request; before it, the client resumes with
/// `Last-Event-ID`, each replay holds only what followed it, and nothing is
/// cancelled.
async fn dropped(
    result: Result<Countdown, Observed>,
    cuts: usize,
    rev: &ProtocolVersion,
    over_http_sse: bool,
    seen: &Seen<'_>,
    n: u64,
) -> Outcome {
    if over_http_sse || rev.is_modern() {
        let err = match result {
            Ok(_) if cuts == 0 => return Err(failed("no connection was cut")),
            Ok(_) => return Err(failed("the call completed although its stream was cut")),
            Err(e) => e,
        };
        if over_http_sse {
            return Err(err);
        }
        return seen.cancelled_by_close(err, cuts).await;
    }
    let run = result?;
    ensure(cuts > 0, || "no connection was cut".into())?;
    let wire = seen.wire.exchanges();
    let post =
        call_post(&wire, "countdown", None).ok_or_else(|| failed("no tools/call on the wire"))?;
    run.check(n, sent_token(&post).as_ref())?;
    let gets = resumes(&wire);
    ensure(!gets.is_empty(), || {
        "the call completed without a resume by GET with Last-Event-ID".into()
    })?;
    replays_exclusive(&wire)?;
    seen.not_cancelled()?;
    Ok(works(format!(
        "{cuts} connection(s) cut mid-call; {} resume(s) with Last-Event-ID, each replaying only what followed it; {n} progress exactly once, in order; not cancelled",
        gets.len()
    )))
}

/// Two concurrent calls; on legacy revisions the network drops once both
/// have streamed, and both resume. Each must get only its own messages.
pub(crate) async fn two_streams(
    conn: &Connection,
    harness: &Harness,
    proxy: Option<&Proxy>,
) -> Outcome {
    // No resumption on 2026-07-28 or over HTTP+SSE: nothing to cut there.
    let modern = conn.revision().is_modern() || http_sse(conn);
    let (na, nb) = (4u64, 6u64);
    let counts = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let cut_done = Arc::new(AtomicBool::new(false));
    let cuts = Arc::new(AtomicUsize::new(0));
    let on = |slot: usize| {
        let (counts, cut_done, cuts) = (counts.clone(), cut_done.clone(), cuts.clone());
        move |count: usize| {
            counts[slot].store(count, Ordering::SeqCst);
            let both = counts.iter().all(|c| c.load(Ordering::SeqCst) >= 2);
            if both
                && !modern
                && let Some(p) = proxy
                && !cut_done.swap(true, Ordering::SeqCst)
            {
                cuts.fetch_add(p.cut(), Ordering::SeqCst);
            }
        }
    };
    let (mut fa, mut fb) = (on(0), on(1));
    let (a, b) = tokio::join!(
        countdown(conn, na, 30, Some(&mut fa)),
        countdown(conn, nb, 30, Some(&mut fb))
    );
    let (a, b) = (a?, b?);
    let wire = harness.wire.exchanges();
    let pa = call_post(
        &wire,
        "countdown",
        Some(&json!({ "n": na, "interval_ms": 30 })),
    );
    let pb = call_post(
        &wire,
        "countdown",
        Some(&json!({ "n": nb, "interval_ms": 30 })),
    );
    a.check(na, pa.as_ref().and_then(sent_token).as_ref())?;
    b.check(nb, pb.as_ref().and_then(sent_token).as_ref())?;
    if modern {
        return Ok(works(format!(
            "two concurrent calls: {na} and {nb} progress, each only its own"
        )));
    }
    both_resumed(&wire, cuts.load(Ordering::SeqCst), na, nb)
}

/// `two_streams` before 2026-07-28, once both calls delivered their own
/// `na` and `nb` progress: `cuts` connections were cut, and each resume
/// replayed only what followed its `Last-Event-ID`.
fn both_resumed(wire: &[Exchange], cuts: usize, na: u64, nb: u64) -> Outcome {
    ensure(cuts > 0, || "no connection was cut".into())?;
    let gets = resumes(wire);
    ensure(!gets.is_empty(), || "neither stream was resumed".into())?;
    replays_exclusive(wire)?;
    Ok(works(format!(
        "two concurrent streams, {cuts} connection(s) cut, {} resume(s) each replaying only what followed its Last-Event-ID: {na} and {nb} progress, each only its own",
        gets.len()
    )))
}

#[cfg(test)]
mod tests;
