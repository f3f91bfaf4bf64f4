//! What each scenario does, through the era-independent `Transport`, and
//! what it checks on the wire ([`super::wire`]): each scenario asserts what
//! its name promises, and where the negotiated revision lacks the mechanism
//! it checks the absence (reported as [`Observed::Absent`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use mcp_negotiate::client::Connection;
use mcp_transport_core::jsonrpc::{ErrorObject, Message, Notification, Response, to_raw};
use mcp_transport_core::transport::{
    InputHandler, ListenFilter, RequestOptions, StreamEvent, Transport, TransportError,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::expect::Failure;
use super::run::{DISCONNECT_RETRY_MS, Harness, Observed, classify_error};
use super::scenario::Scenario;
use super::wire::Exchange;
use mcp_http_edge::headers;
use mcp_test_support::Proxy;

/// The matrix client's input handler: answers every elicitation with "Ada".
#[derive(Debug)]
pub struct Ada;

#[async_trait]
impl InputHandler for Ada {
    async fn handle(
        &self,
        method: &str,
        _params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match method {
            "elicitation/create" => {
                to_raw(&json!({ "action": "accept", "content": { "name": "Ada" } }))
                    .map_err(ErrorObject::internal)
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

type Outcome = Result<Observed, Observed>;

fn works(detail: impl Into<String>) -> Observed {
    Observed::Works(detail.into())
}

fn absent(detail: impl Into<String>) -> Observed {
    Observed::Absent(detail.into())
}

fn failed(message: impl Into<String>) -> Observed {
    Observed::Failed {
        kind: None,
        message: message.into(),
    }
}

fn from_error(e: &TransportError) -> Observed {
    Observed::Failed {
        kind: classify_error(e),
        message: e.to_string(),
    }
}

/// `Err(failed(msg))` unless `ok`.
fn ensure(ok: bool, msg: impl FnOnce() -> String) -> Result<(), Observed> {
    if ok { Ok(()) } else { Err(failed(msg())) }
}

fn tool_params(name: &str, args: Value) -> Option<Box<RawValue>> {
    to_raw(&json!({ "name": name, "arguments": args })).ok()
}

fn result_value(resp: &Response) -> Result<Value, String> {
    match &resp.payload {
        Ok(raw) => serde_json::from_str(raw.get()).map_err(|e| e.to_string()),
        Err(e) => Err(format!("JSON-RPC error {e}")),
    }
}

/// The first text content of a tool result.
fn result_text(resp: &Response) -> Result<String, String> {
    let v = result_value(resp)?;
    v["content"][0]["text"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("no text content in {v}"))
}

/// Calls a tool; the transport's error is kept for the caller to match.
async fn call_raw(conn: &Connection, tool: &str, args: Value) -> Result<Response, TransportError> {
    let stream = conn
        .request(
            "tools/call",
            tool_params(tool, args),
            RequestOptions::default(),
        )
        .await?;
    stream.response().await
}

async fn call(conn: &Connection, tool: &str, args: Value) -> Result<String, Observed> {
    let resp = call_raw(conn, tool, args)
        .await
        .map_err(|e| from_error(&e))?;
    result_text(&resp).map_err(failed)
}

/// Runs one scenario; the connection is already negotiated.
pub(crate) async fn run(
    scenario: Scenario,
    conn: &Connection,
    harness: &Harness,
    proxy: Option<&Proxy>,
) -> Observed {
    let outcome = match scenario {
        Scenario::Json => json_answer(conn, harness).await,
        Scenario::Sse => streamed(conn, harness).await,
        Scenario::Progress => progress(conn, harness).await,
        Scenario::Disconnect => disconnect(conn, harness).await,
        Scenario::NetworkDrop => network_drop(conn, harness, proxy).await,
        Scenario::TwoStreams => two_streams(conn, harness, proxy).await,
        Scenario::Input => input(conn).await,
        Scenario::Cancel => cancel(conn, harness).await,
        Scenario::Changes => changes(conn, harness).await,
        Scenario::Expiry => expiry(conn, harness).await,
        Scenario::Delete => delete(conn, harness).await,
        Scenario::Get405 => get_405(conn, harness).await,
        Scenario::EraCache => era_cache(conn, harness).await,
    };
    outcome.unwrap_or_else(|o| o)
}

// ---------------------------------------------------------------- wire checks

/// Whether the connection speaks the deprecated HTTP+SSE transport
/// (2024-11-05): answers go down one SSE stream, POSTs get 202.
fn http_sse(conn: &Connection) -> bool {
    conn.revision() == mcp_transport_core::ProtocolVersion::V2024_11_05
}

/// HTTP+SSE: the POST was accepted (202) and its response came down the
/// SSE stream (a GET answered `text/event-stream`).
fn answered_on_the_stream(wire: &[Exchange], post: &Exchange) -> Result<(), Observed> {
    ensure(post.status == Some(http::StatusCode::ACCEPTED), || {
        format!("the POST was answered {:?}, not 202", post.status)
    })?;
    let id = post.json()["id"].clone();
    let on_stream = wire.iter().any(|e| {
        e.method == http::Method::GET
            && e.is_sse()
            && e.messages()
                .iter()
                .any(|m| m["id"] == id && m.get("result").is_some())
    });
    ensure(on_stream, || {
        format!("the response to request {id} did not come down the SSE stream")
    })
}

/// 2026-07-28: "do not mint or echo session IDs". Legacy: nothing to check.
fn no_session_id_minted(conn: &Connection, harness: &Harness) -> Result<(), Observed> {
    if !conn.revision().is_modern() {
        return Ok(());
    }
    match harness
        .wire
        .exchanges()
        .iter()
        .find(|e| e.response_header(headers::SESSION_ID).is_some())
    {
        Some(e) => Err(failed(format!(
            "a 2026-07-28 answer to {} {} carries Mcp-Session-Id: {:?}",
            e.method,
            e.rpc_method().unwrap_or_default(),
            e.response_header(headers::SESSION_ID).unwrap_or_default()
        ))),
        None => Ok(()),
    }
}

/// The POST of the `tools/call` of `tool` (the first such, or the one whose
/// arguments match `args` when given).
fn call_post(exchanges: &[Exchange], tool: &str, args: Option<&Value>) -> Option<Exchange> {
    exchanges
        .iter()
        .find(|e| e.is_call_of(tool) && args.is_none_or(|a| &e.json()["params"]["arguments"] == a))
        .cloned()
}

/// Every message event id on the wire is used once: "the ID MUST be
/// globally unique across all streams within that session", and a resume
/// replays only what followed `Last-Event-ID`.
fn ids_unique(exchanges: &[Exchange]) -> Result<usize, Observed> {
    let mut seen = std::collections::HashMap::new();
    for e in exchanges.iter().filter(|e| e.is_sse()) {
        for (id, data) in e.sse_ids() {
            if data.trim().is_empty() {
                continue;
            }
            if let Some(first) = seen.insert(id.clone(), data.clone()) {
                return Err(failed(format!(
                    "event id {id} went out twice on the wire (first {}, again {}): replayed or broadcast",
                    short(&first),
                    short(&data)
                )));
            }
        }
    }
    Ok(seen.len())
}

/// Every resume replays only what followed its `Last-Event-ID`: no event
/// the client had by then (that id and the ones before it on the closed
/// connection) goes out again — "replay messages that would have been sent
/// after the last event ID". (After a network cut, events the server wrote
/// into the dead connection after that id may rightly go out again.)
fn replays_exclusive(exchanges: &[Exchange]) -> Result<usize, Observed> {
    let mut checked = 0;
    for (i, g) in exchanges.iter().enumerate() {
        let Some(last) = g
            .header("last-event-id")
            .filter(|_| g.method == http::Method::GET)
        else {
            continue;
        };
        let Some(before) = exchanges[..i].iter().find_map(|e| {
            let ids = e.sse_ids();
            let at = ids.iter().position(|(id, _)| id == last)?;
            Some(
                ids[..=at]
                    .iter()
                    .map(|(id, _)| id.clone())
                    .collect::<Vec<_>>(),
            )
        }) else {
            continue;
        };
        for (id, data) in g.sse_ids() {
            if !data.trim().is_empty() && before.contains(&id) {
                return Err(failed(format!(
                    "the resume after Last-Event-ID {last} replayed event {id}, which the client already had: {}",
                    short(&data)
                )));
            }
        }
        checked += 1;
    }
    Ok(checked)
}

fn short(s: &str) -> String {
    let s: String = s.chars().take(120).collect();
    s
}

/// The GETs resuming with `Last-Event-ID`, in order.
fn resumes(exchanges: &[Exchange]) -> Vec<Exchange> {
    exchanges
        .iter()
        .filter(|e| e.method == http::Method::GET && e.header("last-event-id").is_some())
        .cloned()
        .collect()
}

/// No message follows the response on the request's connections: "After
/// the JSON-RPC response has been sent, the server SHOULD terminate the SSE
/// stream", and nothing for another request.
fn nothing_after_response(connections: &[Exchange], id: &Value) -> Result<(), Observed> {
    let msgs: Vec<Value> = connections.iter().flat_map(Exchange::messages).collect();
    let Some(at) = msgs
        .iter()
        .position(|m| &m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()))
    else {
        return Err(failed(format!("no response to request {id} on the wire")));
    };
    match msgs.get(at + 1) {
        Some(m) => Err(failed(format!(
            "a message followed the response on its stream: {}",
            short(&m.to_string())
        ))),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------- scenarios

async fn json_answer(conn: &Connection, harness: &Harness) -> Outcome {
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
    no_session_id_minted(conn, harness)?;
    Ok(works(format!("echo answered as {ct}")))
}

async fn streamed(conn: &Connection, harness: &Harness) -> Outcome {
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
struct Countdown {
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

/// Runs `countdown` with progress; `on_progress` is told of each progress
/// notification (with how many arrived so far).
async fn countdown(
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
                        out.progress.push((
                            p["progress"].as_f64().unwrap_or(-1.0),
                            p["total"].as_f64().unwrap_or(-1.0),
                            p["progressToken"].clone(),
                        ));
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
fn sent_token(post: &Exchange) -> Option<Value> {
    let t = post.json()["params"]["_meta"]["progressToken"].clone();
    (!t.is_null()).then_some(t)
}

async fn progress(conn: &Connection, harness: &Harness) -> Outcome {
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
async fn disconnect(conn: &Connection, harness: &Harness) -> Outcome {
    let n = 4;
    let run = countdown(conn, n, 10, None).await?;
    let wire = harness.wire.exchanges();
    let post =
        call_post(&wire, "countdown", None).ok_or_else(|| failed("no tools/call on the wire"))?;
    run.check(n, sent_token(&post).as_ref())?;
    let gets = resumes(&wire);
    let items = post.sse();
    let primed = matches!(items.first(), Some(mcp_transport_core::sse::SseItem::Event(e))
        if e.data.is_empty() && !e.last_event_id.is_empty());
    let retries = post.retries();
    let polling = conn.revision().has(|f| f.sse_polling);
    if !polling {
        ensure(!primed && retries.is_empty() && gets.is_empty(), || {
            format!(
                "revision {} has no SEP-1699 polling, yet: priming event {primed}, retry fields {retries:?}, {} resume(s)",
                conn.revision(),
                gets.len()
            )
        })?;
        if !http_sse(conn) {
            nothing_after_response(std::slice::from_ref(&post), &post.json()["id"])?;
        }
        return Ok(absent(if http_sse(conn) {
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
    let ids = ids_unique(&wire)?;
    nothing_after_response(&connections, &post.json()["id"])?;
    Ok(works(format!(
        "priming event; {} early close(s) each with retry: {DISCONNECT_RETRY_MS}; each resumed with the last id, after at least the retry; {ids} event ids once each; {n} progress exactly once, in order",
        gets.len()
    )))
}

async fn network_drop(conn: &Connection, harness: &Harness, proxy: Option<&Proxy>) -> Outcome {
    let Some(proxy) = proxy else {
        return Err(failed("no proxy to cut the network with"));
    };
    let n = 6;
    let cut = Arc::new(AtomicUsize::new(0));
    let cut2 = cut.clone();
    let mut on_progress = move |count: usize| {
        if count == 2 {
            cut2.fetch_add(proxy.cut(), Ordering::SeqCst);
        }
    };
    let result = countdown(conn, n, 40, Some(&mut on_progress)).await;
    let cuts = cut.load(Ordering::SeqCst);
    if http_sse(conn) {
        return Err(match result {
            Ok(_) if cuts == 0 => failed("no connection was cut"),
            Ok(_) => failed("the call completed although its stream was cut"),
            Err(e) => e,
        });
    }
    if conn.revision().is_modern() {
        let err = match result {
            Ok(_) if cuts == 0 => return Err(failed("no connection was cut")),
            Ok(_) => return Err(failed("the call completed although its stream was cut")),
            Err(e) => e,
        };
        // "Closing the SSE response stream MUST be treated by the server as
        // cancellation of that request."
        for _ in 0..300 {
            if harness.handler.cancelled_count() > 0 {
                return Err(match err {
                    Observed::Failed { kind, message } => Observed::Failed {
                        kind,
                        message: format!("{message}; the server cancelled the request"),
                    },
                    other => other,
                });
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        return Err(failed(format!(
            "the client failed ({}), but the server never treated the dropped stream as cancellation",
            match err {
                Observed::Failed { message, .. } => message,
                _ => String::new(),
            }
        )));
    }
    let run = result?;
    ensure(cuts > 0, || "no connection was cut".into())?;
    let wire = harness.wire.exchanges();
    let post =
        call_post(&wire, "countdown", None).ok_or_else(|| failed("no tools/call on the wire"))?;
    run.check(n, sent_token(&post).as_ref())?;
    let gets = resumes(&wire);
    ensure(!gets.is_empty(), || {
        "the call completed without a resume by GET with Last-Event-ID".into()
    })?;
    replays_exclusive(&wire)?;
    ensure(harness.handler.cancelled_count() == 0, || {
        "the server cancelled the request when the network dropped (\"Disconnection SHOULD NOT be interpreted as the client cancelling its request\")".into()
    })?;
    Ok(works(format!(
        "{cuts} connection(s) cut mid-call; {} resume(s) with Last-Event-ID, each replaying only what followed it; {n} progress exactly once, in order; not cancelled",
        gets.len()
    )))
}

/// Two concurrent calls; on legacy revisions the network drops once both
/// have streamed, and both resume. Each must get only its own messages.
async fn two_streams(conn: &Connection, harness: &Harness, proxy: Option<&Proxy>) -> Outcome {
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
    let cuts = cuts.load(Ordering::SeqCst);
    ensure(cuts > 0, || "no connection was cut".into())?;
    let gets = resumes(&wire);
    ensure(!gets.is_empty(), || "neither stream was resumed".into())?;
    replays_exclusive(&wire)?;
    Ok(works(format!(
        "two concurrent streams, {cuts} connection(s) cut, {} resume(s) each replaying only what followed its Last-Event-ID: {na} and {nb} progress, each only its own",
        gets.len()
    )))
}

async fn input(conn: &Connection) -> Outcome {
    let resp = call_raw(conn, "ask_name", json!({}))
        .await
        .map_err(|e| from_error(&e))?;
    let v = result_value(&resp).map_err(failed)?;
    let text = v["content"][0]["text"].as_str().unwrap_or_default();
    if v["isError"] == true {
        return Err(Observed::Failed {
            kind: Some(Failure::InputUnavailable),
            message: format!("tool error: {text}"),
        });
    }
    ensure(text == "hello, Ada", || format!("answered {v}"))?;
    Ok(works(
        "the input request was answered and the call completed",
    ))
}

/// Legacy: `notifications/cancelled` naming the call's id, no response
/// after it. 2026-07-28: the stream closed, no `notifications/cancelled`,
/// no response. Both: the handler saw the cancellation.
async fn cancel(conn: &Connection, harness: &Harness) -> Outcome {
    let before = harness.handler.cancelled_count();
    // The call runs in a task so that it can be dropped wherever it is: before
    // or after the response headers (a server may hold them until the handler
    // first emits). Dropping it is the caller's "cancel".
    let conn2 = conn.clone();
    let call = tokio::spawn(async move {
        let stream = conn2
            .request(
                "tools/call",
                tool_params("slow", json!({ "ms": 10_000 })),
                RequestOptions::default(),
            )
            .await?;
        stream.response().await
    });
    // Wait until the call is on the wire (its POST has arrived).
    for _ in 0..300 {
        if call_post(&harness.wire.exchanges(), "slow", None).is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    if call.is_finished() {
        return Err(failed("the slow call ended before it was cancelled"));
    }
    call.abort();
    let mut seen = false;
    for _ in 0..300 {
        if harness.handler.cancelled_count() > before {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    ensure(seen, || "the handler never saw the cancellation".into())?;
    // Let anything the server would still send go out.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let wire = harness.wire.exchanges();
    let post = call_post(&wire, "slow", None).ok_or_else(|| failed("no tools/call on the wire"))?;
    let id = post.json()["id"].clone();
    let notes: Vec<&Exchange> = wire
        .iter()
        .filter(|e| e.rpc_method().as_deref() == Some("notifications/cancelled"))
        .collect();
    let responded = wire
        .iter()
        .flat_map(Exchange::messages)
        .any(|m| m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()));
    ensure(!responded, || {
        format!("the server answered request {id} after it was cancelled")
    })?;
    if conn.revision().is_modern() {
        ensure(notes.is_empty(), || {
            "the client sent notifications/cancelled on 2026-07-28 (closing the stream is the cancellation)".into()
        })?;
        // Closed: the body was dropped, or the POST was abandoned before
        // its answer's head.
        let closed = post.ended.is_some() || post.status.is_none();
        ensure(closed, || "the call's response stream is still open".into())?;
        return Ok(works(
            "the client closed the response stream (no notifications/cancelled); the handler saw the cancellation; no response followed",
        ));
    }
    let named = notes.iter().any(|e| e.json()["params"]["requestId"] == id);
    ensure(named, || {
        format!(
            "no notifications/cancelled naming request {id} ({} cancellation notification(s) sent)",
            notes.len()
        )
    })?;
    Ok(works(format!(
        "notifications/cancelled for request {id}; the handler saw it; no response followed"
    )))
}

async fn changes(conn: &Connection, harness: &Harness) -> Outcome {
    let modern = conn.revision().is_modern();
    let filter = ListenFilter {
        tools_list_changed: true,
        ..ListenFilter::default()
    };
    let mut messages = match conn.listen(filter).await {
        Ok(m) => m,
        Err(TransportError::NotOffered { what }) if !modern => {
            let wire = harness.wire.exchanges();
            let refused = wire.iter().any(|e| {
                e.method == http::Method::GET
                    && e.header("last-event-id").is_none()
                    && e.status == Some(http::StatusCode::METHOD_NOT_ALLOWED)
            });
            ensure(refused, || {
                format!("the client says {what} is not offered, but no GET was answered 405")
            })?;
            return Ok(absent(format!(
                "GET answered 405: the client reports {what} not offered, no hang"
            )));
        }
        Err(e) => return Err(from_error(&e)),
    };
    let wanted = Notification {
        method: "notifications/tools/list_changed".into(),
        params: None,
    };
    // 2026-07-28: a type the client did not ask for goes first; "MUST NOT
    // send notification types the client has not explicitly requested".
    let unrequested = Notification {
        method: "notifications/prompts/list_changed".into(),
        params: None,
    };
    // Publish once a listener is attached (publishing returns where it went).
    let mut queued = 0;
    for _ in 0..100 {
        if modern {
            harness.server.publish(&unrequested).await;
        }
        queued = harness.server.publish(&wanted).await;
        if queued > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    ensure(queued > 0, || {
        "no listener was ever attached on the server".into()
    })?;
    let first = loop {
        match tokio::time::timeout(Duration::from_secs(3), messages.next()).await {
            Ok(Some(Ok(Message::Notification(n))))
                if n.method == "notifications/subscriptions/acknowledged" =>
            {
                continue;
            }
            Ok(Some(Ok(m))) => break m,
            Ok(Some(Err(e))) => return Err(from_error(&e)),
            Ok(None) => return Err(failed("the listen stream ended")),
            Err(_) => return Err(failed("tools/list_changed did not arrive")),
        }
    };
    match &first {
        Message::Notification(n) if n.method == wanted.method => {}
        other => {
            return Err(failed(format!(
                "the listen stream delivered {} before (or instead of) tools/list_changed",
                describe(other)
            )));
        }
    }
    // Nothing else arrives (the unrequested type, a duplicate, a response).
    if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(200), messages.next()).await {
        return Err(failed(format!(
            "after tools/list_changed the listen stream delivered {}",
            match m {
                Ok(m) => describe(&m),
                Err(e) => e.to_string(),
            }
        )));
    }
    Ok(works(if modern {
        "only the requested tools/list_changed arrived on subscriptions/listen (prompts/list_changed, not requested, did not)"
    } else {
        "tools/list_changed arrived once on the GET stream, nothing else"
    }))
}

fn describe(m: &Message) -> String {
    match m {
        Message::Notification(n) => n.method.clone(),
        Message::Request(r) => format!("a request {}", r.method),
        Message::Response(r) => format!("a response to {:?}", r.id),
    }
}

/// The session id the client used (from the wire).
fn session_id(harness: &Harness) -> Option<String> {
    harness
        .wire
        .exchanges()
        .iter()
        .rev()
        .find_map(|e| e.header(headers::SESSION_ID).map(str::to_owned))
}

/// 2026-07-28 answers older-client traffic as the spec says: DELETE (and
/// GET) 405; no session id is minted; and, on a server that supports only
/// this revision (the spec's precondition: a dual-era server rightly treats
/// a session id as legacy traffic), a stray `Mcp-Session-Id` and
/// `Last-Event-ID` on a request are ignored (the request works).
async fn modern_legacy_traffic(
    conn: &Connection,
    harness: &Harness,
    method: http::Method,
) -> Outcome {
    let url = format!("http://{}/mcp", harness.addr);
    let resp = reqwest::Client::new()
        .request(method.clone(), &url)
        .header("accept", headers::EVENT_STREAM)
        .header(headers::PROTOCOL_VERSION, "2026-07-28")
        .send()
        .await
        .map_err(|e| failed(e.to_string()))?;
    ensure(resp.status() == 405, || {
        format!("{method} answered {} (2026-07-28: 405)", resp.status())
    })?;
    if harness.server.legacy().is_some() {
        no_session_id_minted(conn, harness)?;
        return Ok(absent(format!(
            "no sessions: {method} answered 405, no session id minted (dual-era server: stray legacy headers are legacy traffic there, not checked)"
        )));
    }
    // The same client with stray legacy headers on every request.
    let mut stray = http::HeaderMap::new();
    stray.insert(
        headers::SESSION_ID,
        http::HeaderValue::from_static("stray-session"),
    );
    stray.insert("last-event-id", http::HeaderValue::from_static("stray.0.1"));
    let http_client = reqwest::Client::builder()
        .default_headers(stray)
        .build()
        .map_err(|e| failed(e.to_string()))?;
    let mut cfg = super::run::client_config(
        super::ClientKind::Modern,
        harness.addr,
        mcp_http_edge::faults::Faults::NONE,
    );
    cfg.modern.http.http_client = Some(http_client);
    let conn2 = mcp_negotiate::client::connect(cfg)
        .await
        .map_err(|e| failed(format!("with stray Mcp-Session-Id/Last-Event-ID: {e}")))?;
    let text = call(&conn2, "echo", json!({ "text": "stray" })).await?;
    ensure(text == "stray", || format!("echo answered {text:?}"))?;
    let _ = conn.close().await;
    no_session_id_minted(conn, harness)?;
    Ok(absent(format!(
        "no sessions: {method} answered 405, a stray Mcp-Session-Id and Last-Event-ID were ignored, no session id minted"
    )))
}

/// HTTP+SSE has no session management: no `Mcp-Session-Id` on any answer,
/// and DELETE is not a method of the transport (405).
async fn http_sse_no_sessions(harness: &Harness) -> Outcome {
    let url = format!("http://{}/mcp", harness.addr);
    let resp = reqwest::Client::new()
        .delete(&url)
        .send()
        .await
        .map_err(|e| failed(e.to_string()))?;
    ensure(resp.status() == 405, || {
        format!("DELETE answered {}", resp.status())
    })?;
    let minted = harness
        .wire
        .exchanges()
        .iter()
        .any(|e| e.response_header(headers::SESSION_ID).is_some());
    ensure(!minted, || {
        "an HTTP+SSE answer carries Mcp-Session-Id".into()
    })?;
    Ok(absent(
        "no session management: no Mcp-Session-Id on any answer, DELETE answered 405",
    ))
}

async fn expiry(conn: &Connection, harness: &Harness) -> Outcome {
    if http_sse(conn) {
        return http_sse_no_sessions(harness).await;
    }
    if conn.revision().is_modern() {
        return modern_legacy_traffic(conn, harness, http::Method::DELETE).await;
    }
    let first = call(conn, "echo", json!({ "text": "before" })).await?;
    ensure(first == "before", || format!("echo answered {first:?}"))?;
    let old = session_id(harness).ok_or_else(|| failed("no session id on the wire"))?;
    let Some(legacy) = harness.server.legacy() else {
        return Err(failed("no legacy engine to expire a session on"));
    };
    legacy.terminate_all().await;
    // The client may report the expiry (then the next call re-initializes)
    // or re-initialize transparently: both are what the spec asks.
    let reported = match call_raw(conn, "echo", json!({ "text": "after" })).await {
        Err(TransportError::SessionExpired { .. }) => true,
        Ok(r) => {
            let t = result_text(&r).map_err(failed)?;
            ensure(t == "after", || format!("echo answered {t:?}"))?;
            false
        }
        Err(e) => return Err(from_error(&e)),
    };
    let text = call(conn, "echo", json!({ "text": "again" })).await?;
    ensure(text == "again", || {
        format!("after re-initialize echo answered {text:?}")
    })?;
    let wire = harness.wire.exchanges();
    let got_404 = wire.iter().any(|e| {
        e.header(headers::SESSION_ID) == Some(old.as_str())
            && e.status == Some(http::StatusCode::NOT_FOUND)
    });
    ensure(got_404, || {
        "no request with the terminated session id was answered 404".into()
    })?;
    let reinit = wire.iter().rposition(|e| {
        e.rpc_method().as_deref() == Some("initialize") && e.header(headers::SESSION_ID).is_none()
    });
    let first_init = wire
        .iter()
        .position(|e| e.rpc_method().as_deref() == Some("initialize"));
    ensure(reinit.is_some() && reinit != first_init, || {
        "no new initialize without a session id after the 404".into()
    })?;
    let new = session_id(harness).unwrap_or_default();
    ensure(new != old, || {
        "the client still uses the terminated session id".into()
    })?;
    Ok(works(format!(
        "404 for the terminated session{}; a new initialize without a session id; a new session",
        if reported {
            ", reported as session expired"
        } else {
            ", re-initialized transparently"
        }
    )))
}

async fn delete(conn: &Connection, harness: &Harness) -> Outcome {
    if http_sse(conn) {
        return http_sse_no_sessions(harness).await;
    }
    if conn.revision().is_modern() {
        return modern_legacy_traffic(conn, harness, http::Method::DELETE).await;
    }
    let text = call(conn, "echo", json!({ "text": "before" })).await?;
    ensure(text == "before", || format!("echo answered {text:?}"))?;
    let old = session_id(harness).ok_or_else(|| failed("no session id on the wire"))?;
    let Some(legacy) = harness.server.legacy() else {
        return Err(failed("no legacy engine"));
    };
    let before = legacy.session_count();
    conn.close().await.map_err(|e| from_error(&e))?;
    let wire = harness.wire.exchanges();
    let del = wire
        .iter()
        .find(|e| e.method == http::Method::DELETE)
        .ok_or_else(|| failed("close() sent no DELETE"))?;
    ensure(
        del.header(headers::SESSION_ID) == Some(old.as_str()),
        || {
            format!(
                "the DELETE named session {:?}, not {old:?}",
                del.header(headers::SESSION_ID)
            )
        },
    )?;
    let revision = conn.revision();
    let on_old_session = || {
        reqwest::Client::new()
            .post(format!("http://{}/mcp", harness.addr))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header(headers::SESSION_ID, &old)
            .header(headers::PROTOCOL_VERSION, revision.as_str())
            .body(r#"{"jsonrpc":"2.0","id":99,"method":"tools/list"}"#)
            .send()
    };
    if del.status == Some(http::StatusCode::METHOD_NOT_ALLOWED) {
        // "The server MAY respond to this request with HTTP 405": the
        // session stays; close() must not fail over it.
        let resp = on_old_session().await.map_err(|e| failed(e.to_string()))?;
        ensure(resp.status().is_success(), || {
            format!(
                "after a refused DELETE the session answered {}",
                resp.status()
            )
        })?;
        return Ok(absent(
            "DELETE answered 405; close() returned cleanly; the session still answers",
        ));
    }
    ensure(legacy.session_count() < before, || {
        format!(
            "the server still has {} session(s) after DELETE",
            legacy.session_count()
        )
    })?;
    // "MUST respond to requests containing that session ID with HTTP 404".
    let resp = on_old_session().await.map_err(|e| failed(e.to_string()))?;
    ensure(resp.status() == 404, || {
        format!(
            "a request on the deleted session got {}, not 404",
            resp.status()
        )
    })?;
    Ok(works(format!(
        "DELETE ({}) ended the session; a later request with its id got 404",
        del.status.map(|s| s.as_u16()).unwrap_or_default()
    )))
}

async fn get_405(conn: &Connection, harness: &Harness) -> Outcome {
    let url = format!("http://{}/mcp", harness.addr);
    if http_sse(conn) {
        // GET is how an HTTP+SSE client connects: the stream, its endpoint
        // event first.
        let mut resp = reqwest::Client::new()
            .get(&url)
            .header("accept", headers::EVENT_STREAM)
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        let first = resp.chunk().await.map_err(|e| failed(e.to_string()))?;
        let first = String::from_utf8_lossy(first.as_deref().unwrap_or_default()).into_owned();
        ensure(
            resp.status() == 200 && first.starts_with("event: endpoint"),
            || format!("GET answered {} starting {first:?}", resp.status()),
        )?;
        return Ok(absent(
            "no 405 rule: GET opened the HTTP+SSE stream, its endpoint event first",
        ));
    }
    let modern = conn.revision().is_modern();
    let mut get = reqwest::Client::new()
        .get(&url)
        .header("accept", headers::EVENT_STREAM)
        .header(headers::PROTOCOL_VERSION, conn.revision().as_str());
    if modern && harness.server.legacy().is_none() {
        // Stray legacy headers change nothing on a modern-only server.
        get = get
            .header(headers::SESSION_ID, "stray-session")
            .header("last-event-id", "stray.0.1");
    } else if !modern {
        // A legacy GET needs the session (the client has one by now).
        let _ = call(conn, "echo", json!({ "text": "x" })).await?;
        let id = session_id(harness).ok_or_else(|| failed("no session id on the wire"))?;
        get = get.header(headers::SESSION_ID, id);
    }
    let resp = get.send().await.map_err(|e| failed(e.to_string()))?;
    let status = resp.status();
    let allow = resp
        .headers()
        .get("allow")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    drop(resp);
    if status == 405 && !modern && allow.contains("DELETE") {
        // Allow lists "the methods the target resource currently supports"
        // (RFC 9110, 10.2.1): a DELETE it names is not refused.
        let id = session_id(harness).unwrap_or_default();
        let del = reqwest::Client::new()
            .delete(&url)
            .header(headers::SESSION_ID, id)
            .header(headers::PROTOCOL_VERSION, conn.revision().as_str())
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        ensure(del.status() != 405, || {
            format!("GET's 405 says Allow: {allow}, but DELETE is answered 405 too")
        })?;
    }
    if status == 405 && allow.contains("POST") {
        Ok(works(format!("GET answered 405 with Allow: {allow}")))
    } else if !modern && status == 200 && ct.starts_with("text/event-stream") {
        Ok(absent(
            "GET opened the standalone SSE stream (200 text/event-stream)",
        ))
    } else {
        Err(failed(format!(
            "GET answered {status} (Content-Type {ct:?}, Allow {allow:?})"
        )))
    }
}

/// Several connections of one client sharing one era cache: each
/// negotiates the revision the first found, a call works on each, and only
/// the first probes the origin (`server/discover`; a `-32022` retry is part
/// of that one probe).
async fn era_cache(conn: &Connection, harness: &Harness) -> Outcome {
    let want = conn.revision();
    let _ = conn.close().await;
    let mut after_first = harness.wire.exchanges().len();
    let cache = mcp_negotiate::client::EraCache::new();
    for round in 1..=3 {
        let cfg = super::run::client_config(harness.client, harness.addr, harness.faults)
            .with_cache(cache.clone());
        let c = mcp_negotiate::client::connect(cfg)
            .await
            .map_err(|e| failed(format!("connection {round} with the cache: {e}")))?;
        ensure(c.revision() == want, || {
            format!(
                "connection {round} with the cache negotiated {}, the first {want}",
                c.revision()
            )
        })?;
        let text = call(&c, "echo", json!({ "text": "cached" })).await?;
        ensure(text == "cached", || format!("echo answered {text:?}"))?;
        let _ = c.close().await;
        if round == 1 {
            after_first = harness.wire.exchanges().len();
        }
    }
    let wire = harness.wire.exchanges();
    let probes = wire[after_first..]
        .iter()
        .filter(|e| e.rpc_method().as_deref() == Some("server/discover"))
        .count();
    ensure(probes == 0, || {
        format!(
            "{probes} server/discover probe(s) by the connections after the first, sharing its cache"
        )
    })?;
    Ok(works(format!(
        "three connections sharing the cache all negotiated {want}; only the first probed the origin"
    )))
}
