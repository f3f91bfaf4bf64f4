//! The wire verdicts of `cancel`, `changes`, `expiry` and `delete`, and
//! `get_405`'s reading of the answer, against wires and answers built by
//! hand: each names a client or server that gets the rule wrong and must
//! not pass.

use http::StatusCode;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::super::test_wire::{failure, get, post, said};
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

/// A notification as an SSE event.
fn event(method: &str) -> String {
    format!("data: {}\n\n", json!({"jsonrpc": "2.0", "method": method}))
}

const ACK: &str = "notifications/subscriptions/acknowledged";
const TOOLS: &str = "notifications/tools/list_changed";
const PROMPTS: &str = "notifications/prompts/list_changed";

/// The `subscriptions/listen` POST answered with `sse`.
fn listen(sse: &str) -> Exchange {
    post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}}}),
    )
    .answered_sse(sse)
}

#[test]
fn a_listen_stream_carries_its_acknowledgment_then_only_what_was_asked() {
    let right = [listen(&(event(ACK) + &event(TOOLS)))];
    assert_eq!(listened(&right, true), Ok(()));
    // The type the client did not ask for, which the scenario publishes
    // first: a client may hide it, the wire does not.
    let unasked = [listen(&(event(ACK) + &event(PROMPTS) + &event(TOOLS)))];
    assert_eq!(
        failure(listened(&unasked, true)),
        "the server sent [\"notifications/prompts/list_changed\", \"notifications/tools/list_changed\"] on the 1 listening stream(s), where only one notifications/tools/list_changed was for them"
    );
    let twice = [listen(&(event(ACK) + &event(TOOLS) + &event(TOOLS)))];
    assert!(failure(listened(&twice, true)).starts_with("the server sent [\"notifications/tools/list_changed\", \"notifications/tools/list_changed\"]"));
    let unacknowledged = [listen(&event(TOOLS))];
    assert!(
        failure(listened(&unacknowledged, true))
            .starts_with("the subscriptions/listen stream began with Some(")
    );
    // Sent on another request's stream, it did not reach the listener.
    let elsewhere = [
        listen(&event(ACK)),
        post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call"}))
            .answered_sse(&event(TOOLS)),
    ];
    assert!(
        failure(listened(&elsewhere, true)).starts_with("the server sent [] on the 1 listening")
    );
    assert!(failure(listened(&[], true)).ends_with(
        "on the 0 listening stream(s), where only one notifications/tools/list_changed was for them"
    ));
}

#[test]
fn a_legacy_notification_goes_once_over_the_get_streams() {
    let priming = "id: s0.0\ndata:\n\n";
    let right = [get().answered_sse(&(priming.to_owned() + &event(TOOLS)))];
    assert_eq!(listened(&right, false), Ok(()));
    // Polled: the first stream closed after priming, the next replays it.
    let polled = [
        get().answered_sse(priming),
        get()
            .with_header("last-event-id", "s0.0")
            .answered_sse(&event(TOOLS)),
    ];
    assert_eq!(listened(&polled, false), Ok(()));
    // A request of the server's own (a ping) is no notification; a refused
    // GET is no stream.
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"});
    let with_ping = [
        get().answered_json(StatusCode::METHOD_NOT_ALLOWED, &Value::Null),
        get().answered_sse(&(format!("data: {ping}\n\n") + &event(TOOLS))),
    ];
    assert_eq!(listened(&with_ping, false), Ok(()));
    let silent = [
        get().answered_json(StatusCode::METHOD_NOT_ALLOWED, &Value::Null),
        get().answered_sse(&format!("data: {ping}\n\n")),
    ];
    assert!(failure(listened(&silent, false)).starts_with("the server sent [] on the 1 listening"));
    let replayed_twice = [
        get().answered_sse(&event(TOOLS)),
        get()
            .with_header("last-event-id", "s0.0")
            .answered_sse(&event(TOOLS)),
    ];
    assert!(failure(listened(&replayed_twice, false)).contains("on the 2 listening stream(s)"));
    // On a POST's stream it is no standalone notification.
    let on_post = [
        post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call"}))
            .answered_sse(&event(TOOLS)),
    ];
    assert!(failure(listened(&on_post, false)).starts_with("the server sent [] on the 0"));
}

#[test]
fn a_client_may_say_the_get_stream_is_not_offered_only_after_a_405() {
    let refused = [get().answered_json(StatusCode::METHOD_NOT_ALLOWED, &Value::Null)];
    let out = get_refused(&refused, "the GET stream");
    assert_eq!(
        out,
        Ok(absent(
            "GET answered 405: the client reports the GET stream not offered, no hang"
        ))
    );
    let want = "the client says the GET stream is not offered, but no GET was answered 405";
    for wrong in [
        get()
            .with_header("last-event-id", "s0.1")
            .answered_json(StatusCode::METHOD_NOT_ALLOWED, &Value::Null),
        get().answered_json(StatusCode::NOT_FOUND, &Value::Null),
        post(json!({"jsonrpc": "2.0", "method": "x"}))
            .answered_json(StatusCode::METHOD_NOT_ALLOWED, &Value::Null),
    ] {
        assert_eq!(said(&get_refused(&[wrong], "the GET stream")), want);
    }
}

/// A request on session `id` (none: no header) answered `status`.
fn on_session(id: Option<&str>, method: &str, status: StatusCode) -> Exchange {
    let e = post(json!({"jsonrpc": "2.0", "id": 1, "method": method}));
    let e = match id {
        Some(id) => e.with_header("mcp-session-id", id),
        None => e,
    };
    e.answered_json(status, &Value::Null)
}

#[test]
fn an_ended_session_is_refused_with_404_and_the_client_starts_another() {
    let ok = StatusCode::OK;
    let gone = StatusCode::NOT_FOUND;
    let init = |status| on_session(None, "initialize", status);
    let right = [
        init(ok),
        on_session(Some("old"), "tools/call", ok),
        on_session(Some("old"), "tools/call", gone),
        init(ok),
        on_session(Some("new"), "tools/call", ok),
    ];
    assert_eq!(reinitialized(&right, "old"), Ok(()));
    assert_eq!(last_session_id(&right), Some("new"));
    assert_eq!(last_session_id(&[init(ok)]), None);
    // Refused, but not with 404.
    let mut bad_request = right.clone();
    bad_request[2].status = Some(StatusCode::BAD_REQUEST);
    assert_eq!(
        failure(reinitialized(&bad_request, "old")),
        "no request with the terminated session id was answered 404"
    );
    // Another session's 404 is not this one's.
    let mut other = right.clone();
    other[2] = on_session(Some("older"), "tools/call", gone);
    assert!(failure(reinitialized(&other, "old")).starts_with("no request with"));
    // The only initialize without a session id is the first one.
    let never = [
        init(ok),
        on_session(Some("old"), "tools/call", gone),
        on_session(Some("old"), "tools/call", gone),
    ];
    assert_eq!(
        failure(reinitialized(&never, "old")),
        "no new initialize without a session id after the 404"
    );
    // An initialize that still names the old session is no new one.
    let mut named = right.clone();
    named[3] = on_session(Some("old"), "initialize", ok);
    assert_eq!(
        failure(reinitialized(&named, "old")),
        "no new initialize without a session id after the 404"
    );
    // Re-initialized, then went on with the old id.
    let mut stale = right.clone();
    stale[4] = on_session(Some("old"), "tools/call", gone);
    assert_eq!(
        failure(reinitialized(&stale, "old")),
        "the client still uses the terminated session id"
    );
}

#[test]
fn close_deletes_the_session_it_ends() {
    let delete = |id: Option<&str>| {
        let mut e = get();
        e.method = http::Method::DELETE;
        match id {
            Some(id) => e.with_header("mcp-session-id", id),
            None => e,
        }
    };
    let call = on_session(Some("s1"), "tools/call", StatusCode::OK);
    let wire = [call.clone(), delete(Some("s1"))];
    let del = deleted(&wire, "s1").expect("the DELETE");
    assert_eq!(del.method, http::Method::DELETE);
    assert_eq!(failure(deleted(&[call], "s1")), "close() sent no DELETE");
    assert_eq!(
        failure(deleted(&[delete(Some("s2"))], "s1")),
        "the DELETE named session Some(\"s2\"), not \"s1\""
    );
    assert_eq!(
        failure(deleted(&[delete(None)], "s1")),
        "the DELETE named session None, not \"s1\""
    );
}

#[test]
fn a_message_is_described_by_what_it_is() {
    use mcp_transport_core::jsonrpc::{Notification, Request};
    let n = Notification::new::<Value>(PROMPTS, None).expect("notification");
    assert_eq!(describe(&Message::Notification(n)), PROMPTS);
    let r = Request::new::<Value>(3, "ping", None).expect("request");
    assert_eq!(describe(&Message::Request(r)), "a request ping");
    let answer = super::super::test_wire::text_answer(5, "x");
    assert_eq!(
        describe(&Message::Response(answer)),
        "a response to Some(Number(5))"
    );
}

#[test]
fn connections_sharing_the_era_cache_probe_only_once() {
    let v = ProtocolVersion::V2026_07_28;
    assert_eq!(
        cached(&[1, 0, 0], &v),
        Ok(works(
            "3 connections sharing the cache all negotiated 2026-07-28; the first sent 1 server/discover probe(s), the others none"
        ))
    );
    // A legacy-only client probes with initialize, never server/discover.
    assert!(said(&cached(&[0, 0, 0], &v)).contains("the first sent 0 server/discover"));
    for ignored in [[1, 1, 0], [1, 0, 1], [0, 2, 0]] {
        assert!(
            said(&cached(&ignored, &v)).ends_with(
                "server/discover probe(s) by the connections after the first, sharing its cache"
            ),
            "{ignored:?}"
        );
    }
    assert!(said(&cached(&[1, 1, 1], &v)).starts_with("2 server/discover probe(s)"));
    let discover = post(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}));
    let other = post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(discover_probes(&[discover.clone(), other, discover]), 2);
}
