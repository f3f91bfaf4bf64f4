//! `cancel`'s wire verdict against wires built by hand: each names a
//! client or server that cancels wrongly and must not pass.

use http::StatusCode;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::super::test_wire::post;
use super::*;

/// The `slow` call's id on the wire.
const CALL_ID: i64 = 4;

fn slow_call() -> Exchange {
    post(
        json!({"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"ms": 10000}}}),
    )
}

/// The call's SSE stream, open (`ended` unset) or closed.
fn streamed(closed: bool, sse: &str) -> Exchange {
    let mut e = slow_call().answered_sse(sse);
    e.ended = closed.then(Instant::now);
    e
}

fn cancelled_note(request_id: Value) -> Exchange {
    post(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "dropped"}}),
    )
    .answered_json(StatusCode::ACCEPTED, &Value::Null)
}

fn message(out: Outcome) -> String {
    match out {
        Ok(Observed::Works(m)) | Err(Observed::Failed { message: m, .. }) => m,
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_legacy_cancel_names_the_call() {
    let wire = [streamed(true, ": open\n\n"), cancelled_note(json!(CALL_ID))];
    let out = cancelled_on_wire(&wire, false);
    assert!(matches!(out, Ok(Observed::Works(_))), "{out:?}");
    let wire = [
        streamed(true, ": open\n\n"),
        cancelled_note(json!(CALL_ID + 1)),
    ];
    assert_eq!(
        message(cancelled_on_wire(&wire, false)),
        "no notifications/cancelled naming request 4 (1 cancellation notification(s) sent)"
    );
    let wire = [streamed(true, ": open\n\n")];
    assert!(
        message(cancelled_on_wire(&wire, false)).ends_with("(0 cancellation notification(s) sent)")
    );
}

#[test]
fn no_response_may_follow_a_cancellation() {
    for answer in [
        json!({"jsonrpc": "2.0", "id": CALL_ID, "result": {"content": []}}),
        json!({"jsonrpc": "2.0", "id": CALL_ID, "error": {"code": -32800, "message": "cancelled"}}),
    ] {
        let sse = format!("data: {answer}\n\n");
        for modern in [false, true] {
            let wire = [streamed(true, &sse), cancelled_note(json!(CALL_ID))];
            assert_eq!(
                message(cancelled_on_wire(&wire, modern)),
                "the server answered request 4 after it was cancelled"
            );
        }
    }
    // Another request's answer is not this one's.
    let other = json!({"jsonrpc": "2.0", "id": CALL_ID + 1, "result": {}});
    let wire = [
        streamed(true, &format!("data: {other}\n\n")),
        cancelled_note(json!(CALL_ID)),
    ];
    assert!(matches!(
        cancelled_on_wire(&wire, false),
        Ok(Observed::Works(_))
    ));
}

#[test]
fn a_modern_cancel_is_closing_the_stream_alone() {
    let closed = [streamed(true, ": open\n\n")];
    let out = cancelled_on_wire(&closed, true);
    assert!(matches!(out, Ok(Observed::Works(_))), "{out:?}");
    // Abandoned before the answer's head: closed too.
    let abandoned = [slow_call()];
    assert!(matches!(
        cancelled_on_wire(&abandoned, true),
        Ok(Observed::Works(_))
    ));
    let open = [streamed(false, ": open\n\n")];
    assert_eq!(
        message(cancelled_on_wire(&open, true)),
        "the call's response stream is still open"
    );
    let told = [streamed(true, ": open\n\n"), cancelled_note(json!(CALL_ID))];
    assert!(
        message(cancelled_on_wire(&told, true))
            .starts_with("the client sent notifications/cancelled on 2026-07-28")
    );
}

#[test]
fn a_cancel_with_no_call_on_the_wire_fails() {
    assert_eq!(
        message(cancelled_on_wire(&[], false)),
        "no tools/call on the wire"
    );
}
