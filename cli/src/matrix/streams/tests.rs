//! `Countdown::check`, the stream scenarios' judge of one call's
//! notifications, against deliveries built by hand: each names a stream
//! that lost, repeated, reordered or mixed up messages and must not pass.

use mcp_transport_core::ProtocolVersion as V;
use serde_json::json;

use super::super::test_wire::{failure, get, handler, post, said, seen, text_answer};
use super::super::wire::Wire;
use super::*;

/// A countdown of `n` done right: progress 1..=n of `n` under `token`, `n`
/// logs, then `done`.
fn delivered(n: u64, token: &Value) -> Countdown {
    Countdown {
        progress: (1..=n)
            .map(|i| (i as f64, n as f64, token.clone()))
            .collect(),
        logs: n as usize,
        over_http_sse: false,
        response: Some(text_answer(1, "done")),
    }
}

#[test]
fn a_countdown_delivered_right_passes() {
    let token = json!("p1");
    assert_eq!(delivered(3, &token).check(3, Some(&token)), Ok(()));
    // No token to compare when the request's is unknown.
    assert_eq!(delivered(3, &json!(7)).check(3, None), Ok(()));
}

#[test]
fn a_lost_repeated_or_reordered_progress_fails() {
    let token = json!("p1");
    let mut lost = delivered(3, &token);
    lost.progress.remove(1);
    let m = failure(lost.check(3, Some(&token)));
    assert_eq!(
        m,
        "progress values [1.0, 3.0], expected [1.0, 2.0, 3.0] exactly once each, in order"
    );
    let mut repeated = delivered(3, &token);
    repeated.progress.insert(1, (1.0, 3.0, token.clone()));
    assert!(failure(repeated.check(3, Some(&token))).starts_with("progress values [1.0, 1.0"));
    let mut reordered = delivered(3, &token);
    reordered.progress.swap(0, 1);
    assert!(failure(reordered.check(3, Some(&token))).starts_with("progress values [2.0, 1.0"));
}

#[test]
fn another_requests_progress_fails() {
    let token = json!("p1");
    let mut mixed = delivered(3, &token);
    mixed.progress[2].1 = 6.0;
    assert_eq!(
        failure(mixed.check(3, Some(&token))),
        "a progress notification of total 6 (another request's) arrived on this request's stream"
    );
    let mut other_token = delivered(3, &token);
    other_token.progress[1].2 = json!("p2");
    assert_eq!(
        failure(other_token.check(3, Some(&token))),
        "progressToken \"p2\" in a notification, the request sent \"p1\""
    );
}

#[test]
fn logs_are_counted_except_over_http_sse() {
    let token = json!("p1");
    let mut short = delivered(3, &token);
    short.logs = 2;
    assert_eq!(
        failure(short.check(3, Some(&token))),
        "2 log messages, expected 3"
    );
    // Over HTTP+SSE the logs go to the listener, not to the call.
    short.over_http_sse = true;
    assert_eq!(short.check(3, Some(&token)), Ok(()));
}

#[test]
fn the_answer_must_be_done() {
    let token = json!("p1");
    let mut wrong = delivered(2, &token);
    wrong.response = Some(text_answer(1, "not yet"));
    assert_eq!(
        failure(wrong.check(2, Some(&token))),
        "answered \"not yet\""
    );
    wrong.response = None;
    assert_eq!(failure(wrong.check(2, Some(&token))), "no response");
}

// ---- `disconnect`'s wire: SEP-1699 exactly where the revision has it ----

/// The countdown's request id on the wire.
const CALL_ID: i64 = 1;

fn progress_event(i: u64) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "p1", "progress": i, "total": 2}})
    .to_string()
}

fn done_event() -> String {
    json!({"jsonrpc": "2.0", "id": CALL_ID,
        "result": {"content": [{"type": "text", "text": "done"}]}})
    .to_string()
}

fn countdown_post(sse: &str) -> Exchange {
    post(
        json!({"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call",
        "params": {"name": "countdown", "arguments": {"n": 2, "interval_ms": 10},
            "_meta": {"progressToken": "p1"}}}),
    )
    .answered_sse(sse)
}

/// A resume `after` the POST started, with `Last-Event-ID: last`.
fn resume(post: &Exchange, after_ms: u64, last: &str, sse: &str) -> Exchange {
    get()
        .with_header("last-event-id", last)
        .started_at(post.started + Duration::from_millis(after_ms))
        .answered_sse(sse)
}

/// The POST primed (`a0`), one progress (`a1`), then `retry` and closed
/// early.
fn primed_post(retry: u64) -> Exchange {
    countdown_post(&format!(
        "id: a0\ndata: \n\nid: a1\ndata: {}\n\nretry: {retry}\n\n",
        progress_event(1)
    ))
}

/// The resumed rest: the second progress (`a2`) and the answer (`a3`).
fn rest() -> String {
    format!(
        "id: a2\ndata: {}\n\nid: a3\ndata: {}\n\n",
        progress_event(2),
        done_event()
    )
}

/// A SEP-1699 wire done right, the resume `gap_ms` after the POST.
fn polling_wire(gap_ms: u64) -> Vec<Exchange> {
    let post = primed_post(DISCONNECT_RETRY_MS);
    let get = resume(&post, gap_ms, "a1", &rest());
    vec![post, get]
}

fn judge(wire: &[Exchange], rev: V, over_http_sse: bool) -> Outcome {
    polled(wire, &wire[0], &rev, over_http_sse, 2)
}

#[test]
fn sep_1699_done_right_works() {
    let out = judge(&polling_wire(DISCONNECT_RETRY_MS), V::V2025_11_25, false);
    assert!(matches!(out, Ok(Observed::Works(_))), "{out:?}");
    assert!(said(&out).contains("1 early close(s)"));
}

#[test]
fn a_stream_without_its_priming_event_fails() {
    let post = countdown_post(&format!(
        "retry: 150\nid: a1\ndata: {}\n\n",
        progress_event(1)
    ));
    let get = resume(&post, 200, "a1", &rest());
    let m = said(&judge(&[post, get], V::V2025_11_25, false));
    assert!(
        m.starts_with("the POST's SSE stream did not start with a priming event"),
        "{m}"
    );
}

#[test]
fn a_polling_server_that_never_closed_early_fails() {
    let post = countdown_post(&format!(
        "id: a0\ndata: \n\nid: a1\ndata: {}\n\n{}",
        progress_event(1),
        rest()
    ));
    let m = said(&judge(&[post], V::V2025_11_25, false));
    assert_eq!(
        m,
        "the server never closed the connection early (no resume with Last-Event-ID)"
    );
}

#[test]
fn a_resume_from_another_id_fails() {
    let post = primed_post(DISCONNECT_RETRY_MS);
    let get = resume(&post, 200, "a0", &rest());
    let m = said(&judge(&[post, get], V::V2025_11_25, false));
    assert_eq!(
        m,
        "resumed with Last-Event-ID Some(\"a0\"), the closed connection's last id was Some(\"a1\")"
    );
}

#[test]
fn an_early_close_without_the_retry_fails() {
    let post = primed_post(DISCONNECT_RETRY_MS - 50);
    let get = resume(&post, 200, "a1", &rest());
    let m = said(&judge(&[post, get], V::V2025_11_25, false));
    assert!(
        m.starts_with("a connection was closed early without retry: 150"),
        "{m}"
    );
}

#[test]
fn a_client_that_came_back_before_the_retry_fails() {
    let m = said(&judge(
        &polling_wire(DISCONNECT_RETRY_MS - 1),
        V::V2025_11_25,
        false,
    ));
    assert!(m.starts_with("the client reconnected 149ms after"), "{m}");
}

#[test]
fn an_event_id_sent_twice_fails() {
    let post = primed_post(DISCONNECT_RETRY_MS);
    let again = format!("id: a1\ndata: {}\n\n{}", progress_event(1), rest());
    let get = resume(&post, 200, "a1", &again);
    let m = said(&judge(&[post, get], V::V2025_11_25, false));
    assert!(
        m.starts_with("event id a1 went out twice on the wire"),
        "{m}"
    );
}

#[test]
fn a_message_after_the_answer_fails() {
    let post = primed_post(DISCONNECT_RETRY_MS);
    let late = format!("{}id: a4\ndata: {}\n\n", rest(), progress_event(3));
    let get = resume(&post, 200, "a1", &late);
    let m = said(&judge(&[post, get], V::V2025_11_25, false));
    assert!(
        m.starts_with("a message followed the response on its stream"),
        "{m}"
    );
}

/// A plain stream: two progress notifications, then the answer.
fn plain_sse() -> String {
    format!(
        "data: {}\n\ndata: {}\n\ndata: {}\n\n",
        progress_event(1),
        progress_event(2),
        done_event()
    )
}

#[test]
fn without_polling_a_plain_stream_is_the_mechanism_absent() {
    let out = judge(&[countdown_post(&plain_sse())], V::V2025_06_18, false);
    assert!(matches!(out, Ok(Observed::Absent(_))), "{out:?}");
    assert!(said(&out).starts_with("the call completed on its POST stream"));
    let out = judge(&[countdown_post(&plain_sse())], V::V2025_06_18, true);
    assert!(said(&out).starts_with("the call completed on the HTTP+SSE stream"));
}

#[test]
fn without_polling_any_mark_of_sep_1699_fails() {
    let primed = countdown_post(&format!("id: a0\ndata: \n\n{}", plain_sse()));
    let m = said(&judge(&[primed], V::V2025_06_18, false));
    assert!(
        m.starts_with("revision 2025-06-18 has no SEP-1699 polling, yet: priming event true"),
        "{m}"
    );
    let retry = countdown_post(&format!("retry: 150\n\n{}", plain_sse()));
    let m = said(&judge(&[retry], V::V2025_06_18, false));
    assert!(m.contains("retry fields [150]"), "{m}");
    let post = countdown_post(&plain_sse());
    let get = resume(&post, 200, "a1", "");
    let m = said(&judge(&[post, get], V::V2025_06_18, false));
    assert!(m.ends_with("1 resume(s)"), "{m}");
}

#[test]
fn without_polling_a_message_after_the_answer_fails_except_over_http_sse() {
    let late = countdown_post(&format!("{}data: {}\n\n", plain_sse(), progress_event(3)));
    let m = said(&judge(std::slice::from_ref(&late), V::V2025_06_18, false));
    assert!(
        m.starts_with("a message followed the response on its stream"),
        "{m}"
    );
    // Over HTTP+SSE the one stream carries every request's messages.
    let out = judge(&[late], V::V2024_11_05, true);
    assert!(matches!(out, Ok(Observed::Absent(_))), "{out:?}");
}

// ---- `network_drop`'s verdict ----

/// A countdown of `n` = 6 done right, as the client delivered it.
fn six() -> Result<Countdown, Observed> {
    Ok(delivered(6, &json!("p1")))
}

/// The countdown POST, cut after two progress events (`b1`, `b2`), and the
/// resume after `b2` with the rest: only what followed it, when not
/// `replaying`.
fn dropped_wire(replaying: bool) -> Vec<Exchange> {
    let ev = |i: u64| format!("id: b{i}\ndata: {}\n\n", progress_event(i));
    let post = post(
        json!({"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call",
        "params": {"name": "countdown", "arguments": {"n": 6, "interval_ms": 40},
            "_meta": {"progressToken": "p1"}}}),
    )
    .answered_sse(&format!("id: b0\ndata: \n\n{}{}", ev(1), ev(2)));
    let first = if replaying { 2 } else { 3 };
    let rest: String = (first..=6).map(ev).collect();
    let get = resume(
        &post,
        50,
        "b2",
        &format!("{rest}id: b7\ndata: {}\n\n", done_event()),
    );
    vec![post, get]
}

async fn judge_drop(
    result: Result<Countdown, Observed>,
    cuts: usize,
    rev: V,
    over_http_sse: bool,
    exchanges: Vec<Exchange>,
    cancelled: bool,
) -> Outcome {
    let h = handler(cancelled).await;
    let wire = Wire::recorded(exchanges);
    dropped(result, cuts, &rev, over_http_sse, &seen(&h, &wire), 6).await
}

/// The client's error when its stream could not be resumed.
fn cannot_resume() -> Observed {
    Observed::Failed {
        kind: Some(super::super::failure::Failure::NotResumable),
        message: "the stream cannot be resumed".into(),
    }
}

fn unresumable() -> Result<Countdown, Observed> {
    Err(cannot_resume())
}

#[tokio::test]
async fn a_legacy_drop_resumed_exactly_works() {
    let out = judge_drop(six(), 1, V::V2025_11_25, false, dropped_wire(false), false).await;
    assert!(matches!(out, Ok(Observed::Works(_))), "{out:?}");
    assert!(said(&out).starts_with("1 connection(s) cut mid-call; 1 resume(s)"));
}

#[tokio::test]
async fn a_legacy_drop_that_is_wrong_in_one_way_fails() {
    let v = V::V2025_11_25;
    let out = judge_drop(six(), 0, v.clone(), false, dropped_wire(false), false).await;
    assert_eq!(said(&out), "no connection was cut");
    let out = judge_drop(six(), 1, v.clone(), false, dropped_wire(true), false).await;
    assert!(said(&out).starts_with("the resume after Last-Event-ID b2 replayed event b2"));
    let out = judge_drop(six(), 1, v.clone(), false, dropped_wire(false), true).await;
    assert!(said(&out).contains("Disconnection SHOULD NOT"), "{out:?}");
    let unresumed = vec![dropped_wire(false).remove(0)];
    let out = judge_drop(six(), 1, v.clone(), false, unresumed, false).await;
    assert_eq!(
        said(&out),
        "the call completed without a resume by GET with Last-Event-ID"
    );
    let mut short = delivered(6, &json!("p1"));
    short.progress.pop();
    let out = judge_drop(Ok(short), 1, v.clone(), false, dropped_wire(false), false).await;
    assert!(said(&out).starts_with("progress values"));
    let out = judge_drop(unresumable(), 1, v, false, dropped_wire(false), false).await;
    assert_eq!(said(&out), "the stream cannot be resumed");
}

#[tokio::test(start_paused = true)]
async fn a_modern_drop_must_be_a_cancellation() {
    let v = V::V2026_07_28;
    let out = judge_drop(unresumable(), 1, v.clone(), false, Vec::new(), true).await;
    assert!(
        matches!(out, Err(Observed::Failed { kind: Some(_), .. })),
        "{out:?}"
    );
    assert!(said(&out).ends_with("1 connection(s) cut; the server cancelled the work"));
    let out = judge_drop(unresumable(), 1, v.clone(), false, Vec::new(), false).await;
    assert!(said(&out).contains("never treated the closed stream as cancellation"));
    let out = judge_drop(six(), 1, v.clone(), false, Vec::new(), true).await;
    assert_eq!(said(&out), "the call completed although its stream was cut");
    let out = judge_drop(six(), 0, v, false, Vec::new(), true).await;
    assert_eq!(said(&out), "no connection was cut");
}

#[tokio::test]
async fn an_http_sse_drop_is_the_clients_error_as_it_is() {
    let v = V::V2024_11_05;
    let out = judge_drop(unresumable(), 1, v.clone(), true, Vec::new(), false).await;
    assert_eq!(out, Err(cannot_resume()));
    let out = judge_drop(six(), 1, v.clone(), true, Vec::new(), false).await;
    assert_eq!(said(&out), "the call completed although its stream was cut");
    let out = judge_drop(six(), 0, v, true, Vec::new(), false).await;
    assert_eq!(said(&out), "no connection was cut");
}

#[test]
fn a_json_mode_answer_is_200_application_json() {
    let call = || post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}));
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
    let json_200 = call().answered_json(http::StatusCode::OK, &answer);
    assert_eq!(answered_as_json(&json_200), Ok("application/json"));
    let sse = call().answered_sse(&format!("data: {answer}\n\n"));
    assert_eq!(
        failure(answered_as_json(&sse)),
        "the server in JSON mode answered Some(200) with Content-Type \"text/event-stream\""
    );
    let json_202 = call().answered_json(http::StatusCode::ACCEPTED, &answer);
    assert!(failure(answered_as_json(&json_202)).contains("Some(202)"));
}

#[test]
fn a_progress_notification_without_its_numbers_matches_no_count() {
    assert_eq!(
        progress_of(&json!({"progressToken": "p1", "progress": 2, "total": 4})),
        (2.0, 4.0, json!("p1"))
    );
    assert_eq!(
        progress_of(&json!({"progressToken": "p1"})),
        (-1.0, -1.0, json!("p1"))
    );
    assert_eq!(progress_of(&Value::Null), (-1.0, -1.0, Value::Null));
}

#[test]
fn two_streams_must_be_cut_and_resumed_exactly() {
    let out = both_resumed(&dropped_wire(false), 1, 4, 6);
    assert!(matches!(out, Ok(Observed::Works(_))), "{out:?}");
    assert!(said(&out).starts_with("two concurrent streams, 1 connection(s) cut, 1 resume(s)"));
    assert_eq!(
        said(&both_resumed(&dropped_wire(false), 0, 4, 6)),
        "no connection was cut"
    );
    let unresumed = [dropped_wire(false).remove(0)];
    assert_eq!(
        said(&both_resumed(&unresumed, 1, 4, 6)),
        "neither stream was resumed"
    );
    let out = both_resumed(&dropped_wire(true), 1, 4, 6);
    assert!(said(&out).starts_with("the resume after Last-Event-ID b2 replayed event b2"));
}
