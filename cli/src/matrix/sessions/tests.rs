//! `cancel`'s wire verdict and `get_405`'s reading of the answer, against
//! wires and answers built by hand: each names a client or server that
//! gets the rule wrong and must not pass.

use http::StatusCode;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::super::test_wire::{post, said};
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
        said(&cancelled_on_wire(&wire, false)),
        "no notifications/cancelled naming request 4 (1 cancellation notification(s) sent)"
    );
    let wire = [streamed(true, ": open\n\n")];
    assert!(
        said(&cancelled_on_wire(&wire, false)).ends_with("(0 cancellation notification(s) sent)")
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
                said(&cancelled_on_wire(&wire, modern)),
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
        said(&cancelled_on_wire(&open, true)),
        "the call's response stream is still open"
    );
    let told = [streamed(true, ": open\n\n"), cancelled_note(json!(CALL_ID))];
    assert!(
        said(&cancelled_on_wire(&told, true))
            .starts_with("the client sent notifications/cancelled on 2026-07-28")
    );
}

#[test]
fn a_cancel_with_no_call_on_the_wire_fails() {
    assert_eq!(
        said(&cancelled_on_wire(&[], false)),
        "no tools/call on the wire"
    );
}

#[test]
fn a_get_is_refused_with_405_naming_post_or_opens_the_legacy_stream() {
    use http::StatusCode as S;
    let sse = "text/event-stream";
    for modern in [false, true] {
        let out = get_answered(S::METHOD_NOT_ALLOWED, "POST, DELETE", "", modern);
        assert_eq!(out, Ok(works("GET answered 405 with Allow: POST, DELETE")));
        // Allow must name what the endpoint takes.
        let out = get_answered(S::METHOD_NOT_ALLOWED, "DELETE", "", modern);
        assert_eq!(
            said(&out),
            "GET answered 405 Method Not Allowed (Content-Type \"\", Allow \"DELETE\")"
        );
    }
    let out = get_answered(S::OK, "", sse, false);
    assert!(matches!(out, Ok(Observed::Absent(_))), "{out:?}");
    // 2026-07-28 has no GET stream.
    assert!(said(&get_answered(S::OK, "", sse, true)).starts_with("GET answered 200 OK"));
    // A 200 that is not a stream is no stream.
    let out = get_answered(S::OK, "", "application/json", false);
    assert!(said(&out).starts_with("GET answered 200 OK"));
    let out = get_answered(S::NOT_FOUND, "POST", sse, false);
    assert!(said(&out).starts_with("GET answered 404 Not Found"));
}
