//! The verdicts of `long_running_drop` against wires and cancellation
//! counts built by hand: each names a server or client that gets the
//! long-running rules wrong and must not pass.

use std::time::Duration;

use http::StatusCode;
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::transport::{ResumeFailure, TransportError};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::super::failure::Failure;
use super::super::test_wire::{get, handler, post, said, seen, text_answer};
use super::super::wire::Wire;
use super::*;

/// The call's id on the wire.
const CALL_ID: i64 = 3;

/// The `slow` call's POST.
fn call() -> Exchange {
    post(
        json!({"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": LONG_MS}}}),
    )
}

/// What the client got: the answer `text`.
fn answered(text: &str) -> Result<Delivered, TransportError> {
    Ok((Vec::new(), Some(text_answer(CALL_ID, text))))
}

/// The right answer.
fn slept() -> Result<Delivered, TransportError> {
    answered(&format!("slept {LONG_MS} ms"))
}

/// What the client got when its stream could not be resumed.
fn unresumable() -> Result<Delivered, TransportError> {
    Err(TransportError::ResumeFailed(ResumeFailure::NotResumable {
        revision: V::V2025_06_18,
        what: "the answer to tools/call (request 3)".into(),
        why: "the connection broke".into(),
    }))
}

fn cut_now() -> Cut {
    Cut {
        at: Instant::now(),
        connections: 1,
    }
}

fn kind(outcome: &Outcome) -> Option<Failure> {
    match outcome {
        Err(Observed::Failed { kind, .. }) => *kind,
        _ => None,
    }
}

// ---- the verdict's own checks ----

#[tokio::test]
async fn a_cut_that_cut_nothing_is_a_failure() {
    let h = handler(false).await;
    let wire = Wire::recorded(vec![call().answered_sse("data: \n\n")]);
    let seen = seen(&h, &wire);
    let cut = Cut {
        at: Instant::now(),
        connections: 0,
    };
    let out = verdict(&V::V2025_11_25, false, slept(), cut, &seen).await;
    assert!(out.is_err());
    assert_eq!(said(&out), "no connection was cut");
}

#[tokio::test]
async fn a_task_answer_without_both_sides_declaring_tasks_is_a_failure() {
    let h = handler(false).await;
    let created = json!({"jsonrpc": "2.0", "id": CALL_ID,
        "result": {"task": {"taskId": "t1", "status": "working"}}});
    let wire =
        Wire::recorded(vec![call().answered_sse(&format!(
            "id: p1\ndata: \n\nid: e1\ndata: {created}\n\n"
        ))]);
    let seen = seen(&h, &wire);
    let out = verdict(&V::V2025_06_18, false, slept(), cut_now(), &seen).await;
    assert!(said(&out).contains("CreateTaskResult came back"), "{out:?}");
}

// ---- 2025-11-25 without tasks: resumed from the priming event ----

/// The POST primed with `p1`, then cut; the resume with `last_event_id`
/// carries the answer.
fn resumed(last_event_id: &str) -> Vec<Exchange> {
    let answer = json!({"jsonrpc": "2.0", "id": CALL_ID,
        "result": {"content": [{"type": "text", "text": "slept 2000 ms"}]}});
    vec![
        call().answered_sse("id: p1\ndata: \n\n"),
        get()
            .with_header("last-event-id", last_event_id)
            .answered_sse(&format!("id: e1\ndata: {answer}\n\n")),
    ]
}

async fn judge_resumption(
    exchanges: Vec<Exchange>,
    result: Result<Delivered, TransportError>,
    cancelled: bool,
) -> Outcome {
    let h = handler(cancelled).await;
    let wire = Wire::recorded(exchanges);
    let seen = seen(&h, &wire);
    verdict(&V::V2025_11_25, false, result, cut_now(), &seen).await
}

#[tokio::test]
async fn a_resume_from_the_priming_event_with_the_answer_works() {
    let out = judge_resumption(resumed("p1"), slept(), false).await;
    assert!(matches!(out, Ok(Observed::Works(_))), "{out:?}");
    let m = said(&out);
    assert!(
        m.contains("1 resume(s), the first with the priming event's id"),
        "{m}"
    );
    assert!(m.contains("\"slept 2000 ms\""), "{m}");
}

#[tokio::test]
async fn a_resume_from_another_id_is_a_failure() {
    let out = judge_resumption(resumed("e0"), slept(), false).await;
    assert!(
        said(&out).contains("the first resume sent Last-Event-ID Some(\"e0\")"),
        "{out:?}"
    );
}

#[tokio::test]
async fn a_wrong_answer_after_the_resume_is_a_failure() {
    let out = judge_resumption(resumed("p1"), answered("slept 1 ms"), false).await;
    assert!(out.is_err());
    assert_eq!(
        said(&out),
        "answered \"slept 1 ms\", expected \"slept 2000 ms\""
    );
}

#[tokio::test]
async fn a_server_that_cancelled_on_the_drop_fails_even_when_resumed() {
    let out = judge_resumption(resumed("p1"), slept(), true).await;
    assert!(said(&out).contains("Disconnection SHOULD NOT"), "{out:?}");
}

// ---- both sides declare tasks: polled after the cut ----

/// A `tasks/get` of task `t1` that started at `at` and saw `result`.
fn poll(at: Instant, result: Value) -> Exchange {
    post(json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/get",
        "params": {"taskId": "t1"}}))
    .started_at(at)
    .answered_json(
        StatusCode::OK,
        &json!({"jsonrpc": "2.0", "id": 9, "result": result}),
    )
}

async fn judge_task(polls: Vec<Exchange>, cut: Cut, cancelled: bool) -> Outcome {
    let h = handler(cancelled).await;
    let wire = Wire::recorded(Vec::new());
    let seen = seen(&h, &wire);
    by_task("t1", slept(), &polls, cut, &seen)
}

#[tokio::test]
async fn a_task_seen_completed_after_the_cut_works() {
    let cut = cut_now();
    let later = cut.at + Duration::from_millis(5);
    let completed = json!({"taskId": "t1", "status": "completed"});
    let out = judge_task(vec![poll(later, completed)], cut, false).await;
    assert!(matches!(out, Ok(Observed::Works(_))), "{out:?}");
    assert!(said(&out).contains("1 poll(s) or resume(s) after the cut"));
}

#[tokio::test]
async fn a_poll_at_the_cut_is_not_after_it() {
    let cut = cut_now();
    let completed = json!({"taskId": "t1", "status": "completed"});
    let out = judge_task(vec![poll(cut.at, completed)], cut, false).await;
    assert!(said(&out).contains("neither polled"), "{out:?}");
}

#[tokio::test]
async fn a_task_seen_only_working_after_the_cut_is_a_failure() {
    let cut = cut_now();
    let later = cut.at + Duration::from_millis(5);
    let working = json!({"taskId": "t1", "status": "working"});
    let out = judge_task(vec![poll(later, working)], cut, false).await;
    assert!(
        said(&out).contains("nothing after the cut saw task t1 completed"),
        "{out:?}"
    );
}

#[tokio::test]
async fn a_task_whose_work_was_cancelled_on_the_drop_is_a_failure() {
    let cut = cut_now();
    let later = cut.at + Duration::from_millis(5);
    let completed = json!({"taskId": "t1", "status": "completed"});
    let out = judge_task(vec![poll(later, completed)], cut, true).await;
    assert!(said(&out).contains("Disconnection SHOULD NOT"), "{out:?}");
}

// ---- 2026-07-28 without tasks: closing the stream cancels ----

async fn judge_close(cancelled: bool) -> Outcome {
    let h = handler(cancelled).await;
    let wire = Wire::recorded(Vec::new());
    let seen = seen(&h, &wire);
    cancelled_by_close(unresumable(), cut_now(), &seen).await
}

#[tokio::test(start_paused = true)]
async fn a_closed_stream_the_server_cancelled_is_the_spec_named_failure() {
    let out = judge_close(true).await;
    assert_eq!(kind(&out), Some(Failure::NotResumable), "{out:?}");
    assert!(said(&out).ends_with("1 connection(s) cut; the server cancelled the work"));
}

#[tokio::test(start_paused = true)]
async fn a_closed_stream_the_server_did_not_cancel_is_a_failure() {
    let out = judge_close(false).await;
    assert_eq!(kind(&out), None, "{out:?}");
    assert!(said(&out).contains("never treated the closed stream as cancellation"));
}

// ---- 2025-03-26 / 2025-06-18: nothing to resume from ----

/// `not_resumable` over a wire of the unprimed POST and `more`, after the
/// handler cancelled (or not).
async fn judge_unresumable(more: Vec<Exchange>, cancelled: bool) -> Outcome {
    let h = handler(cancelled).await;
    let post = call().answered_sse(": keep-alive\n\n");
    let mut exchanges = vec![post.clone()];
    exchanges.extend(more);
    let wire = Wire::recorded(exchanges);
    let seen = seen(&h, &wire);
    not_resumable(unresumable(), &post, false, &seen).await
}

fn cancelled_note(request_id: i64) -> Exchange {
    post(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "gave up"}}),
    )
}

#[tokio::test(start_paused = true)]
async fn an_unresumable_stream_left_running_is_the_spec_named_failure() {
    let out = judge_unresumable(Vec::new(), false).await;
    assert_eq!(kind(&out), Some(Failure::NotResumable), "{out:?}");
    assert!(said(&out).contains("no event id went out before the cut"));
}

#[tokio::test(start_paused = true)]
async fn cancelling_on_the_drop_alone_is_a_failure() {
    let out = judge_unresumable(Vec::new(), true).await;
    assert_eq!(kind(&out), None, "{out:?}");
    assert!(said(&out).contains("with no notifications/cancelled"));
}

#[tokio::test(start_paused = true)]
async fn a_cancellation_of_another_request_does_not_excuse_it() {
    let out = judge_unresumable(vec![cancelled_note(CALL_ID + 1)], true).await;
    assert!(
        said(&out).contains("with no notifications/cancelled"),
        "{out:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_on_the_clients_notification_is_allowed() {
    let out = judge_unresumable(vec![cancelled_note(CALL_ID)], true).await;
    assert_eq!(kind(&out), Some(Failure::NotResumable), "{out:?}");
}

#[tokio::test(start_paused = true)]
async fn a_primed_stream_the_client_did_not_resume_is_a_failure() {
    let h = handler(false).await;
    let post = call().answered_sse("id: p1\ndata: \n\n");
    let wire = Wire::recorded(vec![post.clone()]);
    let seen = seen(&h, &wire);
    let out = not_resumable(unresumable(), &post, false, &seen).await;
    assert!(said(&out).contains("carried event id(s)"), "{out:?}");
}
