//! `long_running_drop`: long-running work (`slow`, which the reference
//! handler marks [`Execution::MayBeLong`]) whose connection is cut mid-way
//! by the proxy. What must happen depends on the negotiated revision and on
//! who declares tasks (see `expect::on_tasks`); every branch is checked on
//! the wire:
//!
//! * both sides declare tasks: a `CreateTaskResult` answered the call, the
//!   task was polled after the cut (2026-07-28 `tasks/get`; 2025-11-25 a
//!   new `tasks/result` or `tasks/get`, or the blocking `tasks/result`'s
//!   stream resumed by GET), its result came back, nothing cancelled;
//! * 2025-11-25 without tasks: the client resumed the POST's stream by GET
//!   with the `Last-Event-ID` of its priming event (SEP-1699) and got the
//!   result, nothing cancelled;
//! * 2026-07-28 without tasks: a clear "not resumable" error, and the
//!   server treated the closed stream as cancellation;
//! * 2025-03-26 / 2025-06-18: the call sent no event before the cut, so
//!   there was no id to resume from: a clear "not resumable" error;
//! * 2024-11-05: the one SSE stream broke: a clear "not resumable" error.
//!
//! [`Execution::MayBeLong`]: mcp_transport_core::handler::Execution::MayBeLong

use std::time::Duration;

use futures_util::StreamExt;
use mcp_negotiate::client::Connection;
use mcp_test_support::Proxy;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::Response;
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport, TransportError};
use serde_json::json;
use tokio::time::Instant;

use super::checks::{call_post, http_sse, resumes};
use super::declared::{self, created_task};
use super::harness::{CUT_AFTER_MS, Harness, LONG_MS, Observed};
use super::outcome::*;
use super::seen::{Seen, wait_until};
use super::task::{augment, task_requests};
use super::wire::Exchange;

/// What the call delivered: its stream events and its response.
pub(crate) type Delivered = (Vec<StreamEvent>, Option<Response>);

/// The params of a call of `tool`, task-augmented (`params.task`) when
/// `augment`.
pub(crate) fn call_params(
    tool: &str,
    args: serde_json::Value,
    augment: bool,
) -> Option<Box<serde_json::value::RawValue>> {
    let mut params = json!({ "name": tool, "arguments": args });
    if augment {
        params["task"] = json!({});
    }
    mcp_transport_core::jsonrpc::to_raw(&params).ok()
}

/// Runs a call to its end (task-augmented when `augment`), keeping every
/// stream event.
pub(crate) async fn run_call(
    conn: Connection,
    tool: &'static str,
    args: serde_json::Value,
    augment: bool,
) -> Result<Delivered, TransportError> {
    let mut stream = conn
        .request(
            "tools/call",
            call_params(tool, args, augment),
            RequestOptions::default(),
        )
        .await?;
    let (mut events, mut response) = (Vec::new(), None);
    while let Some(item) = stream.next().await {
        match item? {
            StreamEvent::Response(r) => response = Some(r),
            other => events.push(other),
        }
    }
    Ok((events, response))
}

/// The scenario (see the module docs): `slow` for [`LONG_MS`], every
/// connection cut [`CUT_AFTER_MS`] after its POST arrived.
pub(crate) async fn drop_mid_way(
    conn: &Connection,
    harness: &Harness,
    proxy: Option<&Proxy>,
) -> Outcome {
    let Some(proxy) = proxy else {
        return Err(failed("no proxy to cut the network with"));
    };
    let before = harness.handler.cancelled_count();
    let augment = augment(conn, harness, "slow").await;
    let call = tokio::spawn(run_call(
        conn.clone(),
        "slow",
        json!({ "ms": LONG_MS }),
        augment,
    ));
    let on_wire = wait_until(Duration::from_secs(3), || {
        call_post(&harness.wire.exchanges(), "slow", None).is_some()
    })
    .await;
    ensure(on_wire, || "the call never reached the server".into())?;
    tokio::time::sleep(Duration::from_millis(CUT_AFTER_MS)).await;
    ensure(!call.is_finished(), || {
        format!("the {LONG_MS} ms call ended before its connection was cut")
    })?;
    let cut = Cut {
        at: Instant::now(),
        connections: proxy.cut(),
    };
    let result = call
        .await
        .map_err(|e| failed(format!("the call's task failed: {e}")))?;
    let seen = Seen::since(harness, before);
    verdict(&conn.revision(), http_sse(conn), result, cut, &seen).await
}

/// When the proxy cut the call's connections, and how many it cut.
#[derive(Clone, Copy, Debug)]
struct Cut {
    at: Instant,
    connections: usize,
}

/// The verdict once the call has ended (`result`), by what `rev` and the
/// declared capabilities say must happen (see the module docs).
async fn verdict(
    rev: &ProtocolVersion,
    over_http_sse: bool,
    result: Result<Delivered, TransportError>,
    cut: Cut,
    seen: &Seen<'_>,
) -> Outcome {
    ensure(cut.connections > 0, || "no connection was cut".into())?;
    let wire = seen.wire.exchanges();
    let post = call_post(&wire, "slow", None).ok_or_else(|| failed("no tools/call on the wire"))?;
    let task = post.messages().iter().find_map(created_task);
    if declared::revision_has_tasks(rev) && declared::on_wire(&wire, rev).both() {
        let id = task.ok_or_else(|| {
            failed(
                "both sides declare tasks, yet the call was not answered with a CreateTaskResult",
            )
        })?;
        return by_task(&id, result, &wire, cut, seen);
    }
    ensure(task.is_none(), || {
        "a CreateTaskResult came back although not both sides declare tasks".into()
    })?;
    if rev.is_modern() {
        return cancelled_by_close(result, cut, seen).await;
    }
    if rev.has(|f| f.sse_polling) {
        return by_resumption(result, &post, &wire, cut, seen);
    }
    not_resumable(result, &post, over_http_sse, seen).await
}

fn answer_text(result: Result<Delivered, TransportError>) -> Result<String, Observed> {
    let (_, response) = result.map_err(|e| from_error(&e))?;
    let response = response.ok_or_else(|| failed("the stream ended without a response"))?;
    let text = result_text(&response).map_err(failed)?;
    let want = format!("slept {LONG_MS} ms");
    ensure(text == want, || {
        format!("answered {text:?}, expected {want:?}")
    })?;
    Ok(text)
}

/// Both sides declare tasks: the task outlived the cut and its result
/// came by polling after it.
fn by_task(
    id: &str,
    result: Result<Delivered, TransportError>,
    wire: &[Exchange],
    cut: Cut,
    seen: &Seen<'_>,
) -> Outcome {
    let text = answer_text(result)?;
    let polls = task_requests(wire, id);
    // After the cut: a new tasks/* request, or (2025-11-25) the blocking
    // tasks/result's stream resumed by GET with Last-Event-ID.
    let gets = resumes(wire);
    let after: Vec<&Exchange> = polls
        .iter()
        .chain(gets.iter())
        .filter(|e| e.started > cut.at)
        .collect();
    ensure(!after.is_empty(), || {
        format!("task {id} was neither polled nor its tasks/result stream resumed after the cut")
    })?;
    let completed = after.iter().flat_map(|e| e.messages()).any(|m| {
        let r = &m["result"];
        r["status"] == "completed" || r["content"].is_array() || r["result"]["content"].is_array()
    });
    ensure(completed, || {
        format!("nothing after the cut saw task {id} completed")
    })?;
    ensure(
        !polls
            .iter()
            .any(|e| e.rpc_method().as_deref() == Some("tasks/cancel")),
        || format!("task {id} was cancelled"),
    )?;
    seen.not_cancelled()?;
    Ok(works(format!(
        "CreateTaskResult {id}; {} connection(s) cut {CUT_AFTER_MS} ms in; {} poll(s) or resume(s) after the cut, one saw it completed; {text:?}; nothing cancelled",
        cut.connections,
        after.len()
    )))
}

/// 2025-11-25 without tasks: resumed from the priming event's id.
fn by_resumption(
    result: Result<Delivered, TransportError>,
    post: &Exchange,
    wire: &[Exchange],
    cut: Cut,
    seen: &Seen<'_>,
) -> Outcome {
    let text = answer_text(result)?;
    let gets = resumes(wire);
    let first = gets
        .first()
        .ok_or_else(|| failed("the call completed without a resume by GET with Last-Event-ID"))?;
    let primed = post.sse_ids().first().map(|(id, _)| id.clone());
    ensure(
        primed.is_some() && first.header("last-event-id") == primed.as_deref(),
        || {
            format!(
                "the first resume sent Last-Event-ID {:?}; the POST's first event id was {primed:?}",
                first.header("last-event-id")
            )
        },
    )?;
    seen.not_cancelled()?;
    Ok(works(format!(
        "{} connection(s) cut {CUT_AFTER_MS} ms in; {} resume(s), the first with the priming event's id; {text:?}; not cancelled",
        cut.connections,
        gets.len()
    )))
}

/// 2026-07-28 without tasks: a clear error, and the server cancelled.
async fn cancelled_by_close(
    result: Result<Delivered, TransportError>,
    cut: Cut,
    seen: &Seen<'_>,
) -> Outcome {
    match result {
        Ok(_) => Err(failed("the call completed although its stream was cut")),
        Err(e) => {
            seen.cancelled_by_close(from_error(&e), cut.connections)
                .await
        }
    }
}

/// 2025-03-26, 2025-06-18, 2024-11-05: nothing to resume from.
async fn not_resumable(
    result: Result<Delivered, TransportError>,
    post: &Exchange,
    over_http_sse: bool,
    seen: &Seen<'_>,
) -> Outcome {
    let err = match result {
        Ok(_) => return Err(failed("the call completed although its stream was cut")),
        Err(e) => from_error(&e),
    };
    if !over_http_sse {
        // Why it cannot resume: no event id went out before the cut.
        let ids = post.sse_ids();
        ensure(ids.is_empty(), || {
            format!("the POST's stream carried event id(s) {ids:?}, yet the client did not resume")
        })?;
        // Give a wrongly cancelling server a moment to show it. A client
        // that gave up may say so (`notifications/cancelled` naming the
        // call); the server must not cancel on the drop alone.
        tokio::time::sleep(Duration::from_millis(100)).await;
        if seen.cancelled() {
            let id = post.json()["id"].clone();
            let told = seen.wire.exchanges().iter().any(|e| {
                e.rpc_method().as_deref() == Some("notifications/cancelled")
                    && e.json()["params"]["requestId"] == id
            });
            ensure(told, || {
                "the server cancelled the work when the connection dropped, with no notifications/cancelled (\"Disconnection SHOULD NOT be interpreted as the client cancelling its request\")".into()
            })?;
        }
    }
    Err(match err {
        Observed::Failed { kind, message } => Observed::Failed {
            kind,
            message: if over_http_sse {
                format!("{message}; the HTTP+SSE stream has no event ids")
            } else {
                format!(
                    "{message}; no event id went out before the cut; the server cancelled only on notifications/cancelled, if at all"
                )
            },
        },
        other => other,
    })
}

#[cfg(test)]
mod tests;
