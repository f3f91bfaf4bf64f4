//! Checks of 2025-11-25 (SEP-1699 polling) and of resumption: the priming
//! event, `retry` before a server-initiated close, unique stream-naming
//! event ids, exclusive replay, and how a failed resume is answered. Also
//! the opposite rule for older sessions: no priming event.

use std::time::Duration;

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::sse::SseItem;
use serde_json::{Value, json};

use super::detect::LegacySession;
use super::wire::{Capture, Headers, Wire, short};
use super::{Check, Ctx, Outcome, id, spec};
use mcp_http_edge::headers;

/// A `Last-Event-ID` no server ever issued.
const FORGED_ID: &str = "mcp-compat-forged-event-id";
/// How long a resumed GET is read (it may stay open as a live stream).
const RESUME_READ: Duration = Duration::from_millis(1500);
/// How long a stream is still read after its response arrived.
const LINGER: Duration = Duration::from_millis(500);

/// One request the server was asked to answer on an SSE stream.
#[derive(Debug)]
pub(crate) enum Streamed {
    /// It did: the request id and what the connection delivered.
    Sse { request: i64, capture: Capture },
    /// It answered `tools/list` and `ping` as `application/json`.
    Json,
    /// It failed (HTTP error, no answer).
    Failed(String),
}

impl Streamed {
    fn sse(&self) -> Result<(i64, &Capture), Outcome> {
        match self {
            Streamed::Sse { request, capture } => Ok((*request, capture)),
            Streamed::Json => Err(Outcome::Inconclusive(
                "the server answered tools/list and ping as application/json, not as an SSE stream, so there was no stream to look at".into(),
            )),
            Streamed::Failed(e) => Err(Outcome::Inconclusive(e.clone())),
        }
    }
}

/// Sends `tools/list` (then `ping`, if that was JSON) in `session` and
/// reads the SSE stream of the first one answered with SSE.
pub(crate) async fn sse_request(wire: &Wire, session: &LegacySession) -> Streamed {
    for method in ["tools/list", "ping"] {
        let request = wire.id();
        let body = json!({ "jsonrpc": "2.0", "id": request, "method": method });
        let reply = match wire.post(&session.headers(), &body).await {
            Ok(r) => r,
            Err(e) => return Streamed::Failed(e),
        };
        if !reply.is_success() {
            let status = reply.status;
            let text = reply.text(wire.timeout).await;
            return Streamed::Failed(format!("{method} answered HTTP {status}: {}", short(&text)));
        }
        if reply.is_sse() {
            let capture = Capture::read(reply.sse(), Some(request), wire.timeout, LINGER).await;
            return Streamed::Sse { request, capture };
        }
    }
    Streamed::Json
}

/// The 2025-11-25 checks.
pub(crate) async fn run(cx: &Ctx<'_>, rev: &ProtocolVersion) -> Vec<Check> {
    let wire = cx.wire;
    let session = match LegacySession::open(wire, rev).await {
        Ok(s) => s,
        Err(e) => {
            let why = Outcome::Inconclusive(format!("no session could be opened: {e}"));
            return all()
                .into_iter()
                .map(|(i, t, s)| Check::new(i, rev, t, s, why.clone()))
                .collect();
        }
    };
    let a = sse_request(wire, &session).await;
    let b = sse_request(wire, &session).await;
    let mut out = vec![
        Check::new(
            id::PRIMING_EVENT,
            rev,
            T_PRIMING,
            spec::PRIMING,
            priming(&a),
        ),
        Check::new(
            id::EVENT_IDS_UNIQUE,
            rev,
            T_UNIQUE,
            spec::IDS_UNIQUE,
            ids_unique(&a, &b),
        ),
        Check::new(
            id::RESUME_SAME_STREAM,
            rev,
            T_SAME_STREAM,
            spec::SAME_STREAM,
            same_stream(wire, &session, &a, &b).await,
        ),
        Check::new(
            id::EXCLUSIVE_REPLAY,
            rev,
            T_EXCLUSIVE,
            spec::REPLAY_AFTER,
            exclusive(wire, &session, &b).await,
        ),
        Check::new(
            id::FAILED_RESUME_4XX,
            rev,
            T_FAILED,
            spec::FAILED_RESUME,
            failed_resume(wire, &session, &b).await,
        ),
    ];
    let slow = match &cx.opts.slow_tool {
        Some(tool) => Some(slow_call(wire, &session, &tool.name, &tool.arguments).await),
        None => None,
    };
    let mut watched: Vec<&Streamed> = vec![&a, &b];
    watched.extend(slow.as_ref());
    out.push(Check::new(
        id::RETRY_BEFORE_CLOSE,
        rev,
        T_RETRY,
        spec::RETRY,
        retry(&watched, cx.opts.slow_tool.is_some()),
    ));
    let resumed = match &slow {
        Some(slow) => resumed_close(wire, &session, slow).await,
        None => Outcome::Inconclusive(
            "needs a call the server closes early and a resume that finds nothing new: \
             --slow-tool gives it one"
                .into(),
        ),
    };
    out.push(Check::new(
        id::RESUMED_CLOSE_CARRIES_ID,
        rev,
        T_RESUMED_ID,
        spec::PRIMING_POLICY,
        resumed,
    ));
    if let Some(Streamed::Sse { request, .. }) = &slow {
        cancel(wire, &session, *request).await;
    }
    session.close(wire).await;
    out
}

const T_PRIMING: &str = "the first event of a POST SSE stream has an event id and empty data";
const T_UNIQUE: &str = "event ids of two streams of one session differ";
const T_SAME_STREAM: &str = "resuming stream A never replays events of stream B";
const T_EXCLUSIVE: &str = "resuming with Last-Event-ID X replays what came after X, never X itself";
const T_FAILED: &str = "a resume with an id the server never issued is refused with a 4xx, not a 200 with an empty stream";
const T_RETRY: &str = "a connection closed before its stream's response sends retry first";
const T_RESUMED_ID: &str = "a resumed connection closed before it carried any event still leaves an event id (a warning: clients that keep the last id per connection, such as the TypeScript SDK 1.32.2, otherwise reconnect without Last-Event-ID)";
/// Title of the older-session priming check.
pub(crate) const T_NO_PRIMING: &str = "no priming event on the streams of a pre-2025-11-25 session";

fn all() -> [(&'static str, &'static str, spec::Spec); 7] {
    [
        (id::PRIMING_EVENT, T_PRIMING, spec::PRIMING),
        (id::EVENT_IDS_UNIQUE, T_UNIQUE, spec::IDS_UNIQUE),
        (id::RESUME_SAME_STREAM, T_SAME_STREAM, spec::SAME_STREAM),
        (id::EXCLUSIVE_REPLAY, T_EXCLUSIVE, spec::REPLAY_AFTER),
        (id::FAILED_RESUME_4XX, T_FAILED, spec::FAILED_RESUME),
        (id::RETRY_BEFORE_CLOSE, T_RETRY, spec::RETRY),
        (
            id::RESUMED_CLOSE_CARRIES_ID,
            T_RESUMED_ID,
            spec::PRIMING_POLICY,
        ),
    ]
}

/// The first item that is not a `retry`.
fn first_block(c: &Capture) -> Option<&SseItem> {
    c.items.iter().find(|i| !matches!(i, SseItem::Retry(_)))
}

fn priming(a: &Streamed) -> Outcome {
    let (_, c) = match a.sse() {
        Ok(x) => x,
        Err(o) => return o,
    };
    match first_block(c) {
        Some(SseItem::Event(e)) if e.data.is_empty() && !e.last_event_id.is_empty() => {
            Outcome::Pass
        }
        Some(SseItem::Event(e)) if e.data.is_empty() => Outcome::Fail(
            "the first event has empty data but no id, so the client has no id to resume from"
                .into(),
        ),
        Some(SseItem::Event(e)) => Outcome::Fail(format!(
            "the first event already carries a message ({}); no priming event (an id and empty data) came before it",
            short(&e.data)
        )),
        Some(SseItem::LastEventId(id)) => Outcome::Fail(format!(
            "the first block sets id {id:?} but has no data field, so no event is dispatched; the sentence asks for an event with an empty data field"
        )),
        Some(SseItem::Retry(_)) | None if c.end == super::wire::End::StillOpen => {
            Outcome::Inconclusive("the stream stayed open without any event".into())
        }
        Some(SseItem::Retry(_)) | None => {
            Outcome::Fail("the SSE stream ended without any event".into())
        }
    }
}

fn ids_unique(a: &Streamed, b: &Streamed) -> Outcome {
    let ((ra, ca), (rb, cb)) = match (a.sse(), b.sse()) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(o), _) | (_, Err(o)) => return o,
    };
    let (ia, ib) = (ca.ids(), cb.ids());
    if ia.is_empty() || ib.is_empty() {
        return Outcome::NotApplicable(
            "the server attaches no id to its SSE events (ids are optional: \"Servers MAY attach an id field\")".into(),
        );
    }
    let shared: Vec<&String> = ia.iter().filter(|i| ib.contains(i)).collect();
    if shared.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "id {:?} was used on two different streams of one session (the streams of requests {ra} and {rb}), so Last-Event-ID cannot say which stream to resume",
            shared[0]
        ))
    }
}

/// GET with `Last-Event-ID: last` in `session`; `Err` is the outcome when
/// the server did not resume.
async fn resume(wire: &Wire, session: &LegacySession, last: &str) -> Result<Capture, Outcome> {
    let mut extra: Headers = session.headers();
    extra.push((headers::LAST_EVENT_ID, last.to_owned()));
    let reply = wire.get(&extra).await.map_err(Outcome::Inconclusive)?;
    if !reply.is_success() {
        return Err(Outcome::Inconclusive(format!(
            "the server did not resume from {last:?} (HTTP {}); resumption is optional, so nothing could be observed",
            reply.status
        )));
    }
    if !reply.is_sse() {
        return Err(Outcome::Inconclusive(format!(
            "the resume from {last:?} answered {} {:?}, not an SSE stream",
            reply.status,
            reply.media_type()
        )));
    }
    Ok(Capture::read(
        reply.sse(),
        None,
        RESUME_READ.min(wire.timeout),
        Duration::ZERO,
    )
    .await)
}

/// Whether `data` is a JSON-RPC message with id `request`.
fn is_for(data: &str, request: i64) -> bool {
    serde_json::from_str::<Value>(data).is_ok_and(|v| v.get("id") == Some(&json!(request)))
}

async fn same_stream(wire: &Wire, session: &LegacySession, a: &Streamed, b: &Streamed) -> Outcome {
    let ((ra, ca), (rb, cb)) = match (a.sse(), b.sse()) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(o), _) | (_, Err(o)) => return o,
    };
    let (ia, ib) = (ca.ids(), cb.ids());
    let Some(from) = ia.first() else {
        return Outcome::NotApplicable(
            "the server attaches no event ids: there is nothing to resume from".into(),
        );
    };
    let replay = match resume(wire, session, from).await {
        Ok(c) => c,
        Err(o) => return o,
    };
    if replay.messages().is_empty() {
        // Nothing replayed at all: the rule never came into play.
        return match replay.end {
            super::wire::End::StillOpen => Outcome::Inconclusive(format!(
                "the resume from {from:?} replayed nothing and stayed open: the server seems to ignore Last-Event-ID (a standalone stream), so whether it would replay another stream's messages could not be seen"
            )),
            _ => Outcome::NotApplicable(format!(
                "the resume from {from:?} replayed nothing (replay is optional: \"The server MAY use this header to replay\"), so there was no replay to look at"
            )),
        };
    }
    let foreign: Vec<String> = replay
        .items
        .iter()
        .filter_map(|item| match item {
            SseItem::Event(e)
                if (ib.contains(&e.last_event_id) && !ia.contains(&e.last_event_id))
                    || is_for(&e.data, rb) =>
            {
                Some(if e.data.is_empty() {
                    format!("id {:?}", e.last_event_id)
                } else {
                    format!("id {:?}: {}", e.last_event_id, short(&e.data))
                })
            }
            _ => None,
        })
        .collect();
    if foreign.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(format!(
            "resuming the stream of request {ra} from {from:?} replayed {} event(s) of the stream of request {rb}: {}",
            foreign.len(),
            foreign.join("; ")
        ))
    }
}

async fn exclusive(wire: &Wire, session: &LegacySession, b: &Streamed) -> Outcome {
    let (_, cb) = match b.sse() {
        Ok(x) => x,
        Err(o) => return o,
    };
    let Some(last) = cb.ids().last().cloned() else {
        return Outcome::NotApplicable(
            "the server attaches no event ids: there is nothing to resume from".into(),
        );
    };
    let last_data: Option<String> = cb
        .messages()
        .into_iter()
        .find(|(id, _)| *id == last)
        .map(|(_, d)| d);
    let replay = match resume(wire, session, &last).await {
        Ok(c) => c,
        Err(o) => return o,
    };
    let repeated = replay.items.iter().any(|item| match item {
        SseItem::Event(e) => {
            e.last_event_id == last || (!e.data.is_empty() && Some(&e.data) == last_data.as_ref())
        }
        SseItem::LastEventId(id) => *id == last,
        SseItem::Retry(_) => false,
    });
    if repeated {
        Outcome::Fail(format!(
            "resuming with Last-Event-ID {last:?} sent the event {last:?} again: the client already has it, so it is delivered twice"
        ))
    } else {
        Outcome::Pass
    }
}

/// GET with `Last-Event-ID: id` in `session`: the status (the body is
/// dropped unread).
async fn resume_status(wire: &Wire, session: &LegacySession, id: &str) -> Result<u16, String> {
    let mut extra: Headers = session.headers();
    extra.push((headers::LAST_EVENT_ID, id.to_owned()));
    Ok(wire.get(&extra).await?.status)
}

/// The verdict on a 4xx for the forged id, from what the server answers a
/// resume with an id it did issue (`None`: it issued none): the 4xx is
/// about the forged id only when a real one is not refused the same way.
pub(crate) fn refusal_verdict(forged: u16, issued: Option<(&str, Result<u16, String>)>) -> Outcome {
    if forged == 405 {
        return Outcome::NotApplicable(format!(
            "GET with Last-Event-ID {FORGED_ID:?} answered 405 Method Not Allowed: the server offers no GET stream, so it resumes nothing and there is no resume to refuse"
        ));
    }
    match issued {
        None => Outcome::NotApplicable(format!(
            "the server attaches no event ids, so no resume is possible; the HTTP {forged} for {FORGED_ID:?} says nothing about how it treats an id it never issued"
        )),
        Some((id, Err(e))) => Outcome::Inconclusive(format!(
            "HTTP {forged} for {FORGED_ID:?}, but a resume from {id:?}, an id it issued, failed: {e}"
        )),
        Some((id, Ok(real))) if (400..=499).contains(&real) => Outcome::NotApplicable(format!(
            "HTTP {forged} for {FORGED_ID:?}, but also HTTP {real} for {id:?}, an id it issued: it refuses every resume, so the refusal is not about the unknown id"
        )),
        Some(_) => Outcome::Pass,
    }
}

async fn failed_resume(wire: &Wire, session: &LegacySession, issued_by: &Streamed) -> Outcome {
    let mut extra: Headers = session.headers();
    extra.push((headers::LAST_EVENT_ID, FORGED_ID.to_owned()));
    let reply = match wire.get(&extra).await {
        Ok(r) => r,
        Err(e) => return Outcome::Inconclusive(e),
    };
    let status = reply.status;
    match status {
        400..=499 => {
            drop(reply);
            let issued = match issued_by.sse() {
                Ok((_, c)) => c.ids().first().cloned(),
                Err(o) => return o,
            };
            let real = match &issued {
                Some(id) => Some((id.as_str(), resume_status(wire, session, id).await)),
                None => None,
            };
            return refusal_verdict(status, real);
        }
        200..=299 => {}
        _ => {
            return Outcome::Fail(format!(
                "answered HTTP {status}: an id the server never issued is the client's error, a 4xx"
            ));
        }
    }
    if !reply.is_sse() {
        return Outcome::Fail(format!(
            "answered HTTP {status} ({:?}) to a resume it cannot serve",
            reply.media_type()
        ));
    }
    let c = Capture::read(
        reply.sse(),
        None,
        RESUME_READ.min(wire.timeout),
        Duration::ZERO,
    )
    .await;
    let messages = c.messages().len();
    match (&c.end, messages) {
        (super::wire::End::StillOpen, 0) => Outcome::Inconclusive(format!(
            "answered HTTP {status} and kept an empty stream open: the server seems to ignore Last-Event-ID and open a standalone stream, so whether it resumes could not be told"
        )),
        (_, 0) => Outcome::Fail(format!(
            "answered HTTP {status} with an empty stream for Last-Event-ID {FORGED_ID:?}, an id it never issued: a client takes that for a successful resume and reconnects with the same id for ever"
        )),
        (_, n) => Outcome::Fail(format!(
            "answered HTTP {status} and sent {n} message(s) for Last-Event-ID {FORGED_ID:?}, an id it never issued"
        )),
    }
}

/// Calls the slow tool in `session`, reads its stream for a while (a
/// polling server may close it early), then cancels it.
async fn slow_call(wire: &Wire, session: &LegacySession, name: &str, args: &Value) -> Streamed {
    let request = wire.id();
    let body = json!({
        "jsonrpc": "2.0", "id": request, "method": "tools/call",
        "params": { "name": name, "arguments": args }
    });
    let streamed = match wire.post(&session.headers(), &body).await {
        Err(e) => Streamed::Failed(e),
        Ok(r) if !r.is_success() => {
            Streamed::Failed(format!("tools/call {name} answered HTTP {}", r.status))
        }
        Ok(r) if r.is_sse() => {
            let window = Duration::from_secs(2).min(wire.timeout);
            Streamed::Sse {
                request,
                capture: Capture::read(r.sse(), Some(request), window, LINGER).await,
            }
        }
        Ok(_) => Streamed::Json,
    };
    if !matches!(streamed, Streamed::Sse { .. }) {
        cancel(wire, session, request).await;
    }
    streamed
}

/// Tells the server check-server no longer waits for `request`.
async fn cancel(wire: &Wire, session: &LegacySession, request: i64) {
    let cancel = json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": request, "reason": "check-server is done watching" }
    });
    let _ = wire.post(&session.headers(), &cancel).await;
}

/// The last event id `c` set (an event's or an id-only block's), if any.
fn last_id(c: &Capture) -> Option<&str> {
    c.items.iter().rev().find_map(|i| match i {
        SseItem::Event(e) if !e.last_event_id.is_empty() => Some(e.last_event_id.as_str()),
        SseItem::LastEventId(id) if !id.is_empty() => Some(id.as_str()),
        _ => None,
    })
}

/// After the slow call's connection was closed early, resumes it at once:
/// a poll that finds nothing new. When the server closes that connection
/// too before the response, it should leave an id on it.
async fn resumed_close(wire: &Wire, session: &LegacySession, slow: &Streamed) -> Outcome {
    let (request, capture) = match slow.sse() {
        Ok(x) => x,
        Err(o) => return o,
    };
    if !capture.closed_early() {
        return Outcome::Inconclusive(format!(
            "the server did not close the slow call's stream (request {request}) early, so no resume came into play"
        ));
    }
    let Some(last) = last_id(capture) else {
        return Outcome::Inconclusive(format!(
            "the slow call's stream (request {request}) closed early without any event id, so it cannot be resumed"
        ));
    };
    let resumed = match resume(wire, session, last).await {
        Ok(c) => c,
        Err(o) => return o,
    };
    evaluate_resumed_close(&resumed, last)
}

/// The verdict on a resumed connection (see [`resumed_close`]).
fn evaluate_resumed_close(resumed: &Capture, last: &str) -> Outcome {
    if !resumed.closed_early() {
        return Outcome::NotApplicable(format!(
            "the resume from {last:?} was not closed before its response (held open, or answered), so the rule never came into play"
        ));
    }
    if last_id(resumed).is_some() {
        return Outcome::Pass;
    }
    Outcome::Warn(format!(
        "the resume from {last:?} was closed before the response without carrying any event id; \
         the spec lets the client resume from {last:?} again, but a client that keeps the last \
         id per connection (the TypeScript SDK 1.32.2) reconnects without Last-Event-ID and \
         never gets its answer: send an empty-data event with a fresh id before closing"
    ))
}

fn retry(watched: &[&Streamed], slow_tool: bool) -> Outcome {
    let mut closed = 0;
    for s in watched {
        if let Streamed::Sse { request, capture } = s
            && capture.closed_early()
        {
            if !capture.saw_retry() {
                return Outcome::Fail(format!(
                    "the server closed the stream of request {request} before its response without sending a retry field first"
                ));
            }
            closed += 1;
        }
    }
    if closed > 0 {
        return Outcome::Pass;
    }
    let hint = if slow_tool {
        ""
    } else {
        " (--slow-tool gives it a long call to close)"
    };
    Outcome::Inconclusive(format!(
        "the server closed none of the {} stream(s) watched before its response, so the rule never came into play{hint}",
        watched.len()
    ))
}

/// Older sessions (2025-03-26, 2025-06-18): the first event of a POST
/// stream must not be a priming event, which a client of that revision
/// would parse as a (broken) message.
pub(crate) async fn no_priming_for_older(wire: &Wire, session: &LegacySession) -> Outcome {
    let streamed = sse_request(wire, session).await;
    let (_, c) = match streamed.sse() {
        Ok(x) => x,
        Err(o) => return o,
    };
    match first_block(c) {
        Some(SseItem::Event(e)) if e.data.is_empty() => Outcome::Fail(format!(
            "the first event of a {} stream is a priming event (id {:?}, empty data), which a {} client parses as a JSON-RPC message and fails on",
            session.version, e.last_event_id, session.version
        )),
        Some(_) => Outcome::Pass,
        None => Outcome::Inconclusive(format!(
            "the {} stream carried no event at all, so its first event could not be seen",
            session.version
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_fake::session;
    use super::super::wire::End;
    use super::*;
    use mcp_test_support::fake::{Ending, SseBody};
    use mcp_transport_core::sse::Event;

    fn ev(id: &str, data: &str) -> SseItem {
        SseItem::Event(Event {
            event_type: "message".into(),
            data: data.into(),
            last_event_id: id.into(),
        })
    }

    fn sse(items: Vec<SseItem>, end: End) -> Streamed {
        Streamed::Sse {
            request: 1,
            capture: Capture {
                items,
                response: None,
                end,
            },
        }
    }

    #[test]
    fn priming_verdicts() {
        let ok = sse(
            vec![SseItem::Retry(5), ev("s.1.0", ""), ev("s.1.1", "{}")],
            End::Closed,
        );
        assert_eq!(priming(&ok), Outcome::Pass);
        assert!(priming(&sse(vec![ev("s.1.1", "{}")], End::Closed)).is_fail());
        assert!(priming(&sse(vec![ev("", "")], End::Closed)).is_fail());
        assert!(priming(&sse(vec![SseItem::LastEventId("x".into())], End::Closed)).is_fail());
        assert!(matches!(priming(&Streamed::Json), Outcome::Inconclusive(_)));
    }

    #[test]
    fn a_refusal_counts_only_when_a_real_resume_is_not_refused() {
        assert_eq!(
            refusal_verdict(404, Some(("s.1.0", Ok(200)))),
            Outcome::Pass
        );
        // A stateless server without GET (rmcp's stateless mode): not a pass.
        assert!(matches!(
            refusal_verdict(405, Some(("s.1.0", Ok(405)))),
            Outcome::NotApplicable(_)
        ));
        assert!(matches!(
            refusal_verdict(405, None),
            Outcome::NotApplicable(_)
        ));
        assert!(matches!(
            refusal_verdict(400, Some(("s.1.0", Ok(400)))),
            Outcome::NotApplicable(_)
        ));
        assert!(matches!(
            refusal_verdict(404, None),
            Outcome::NotApplicable(_)
        ));
        assert!(matches!(
            refusal_verdict(404, Some(("s.1.0", Err("reset".into())))),
            Outcome::Inconclusive(_)
        ));
    }

    #[test]
    fn unique_ids() {
        let a = sse(vec![ev("0", ""), ev("a1", "{}")], End::Closed);
        let b = sse(vec![ev("0", ""), ev("b1", "{}")], End::Closed);
        assert!(ids_unique(&a, &b).is_fail());
        let c = sse(vec![ev("c0", ""), ev("c1", "{}")], End::Closed);
        assert_eq!(ids_unique(&a, &c), Outcome::Pass);
    }

    fn capture(items: Vec<SseItem>, end: End) -> Capture {
        Capture {
            items,
            response: None,
            end,
        }
    }

    #[test]
    fn an_empty_resumed_close_without_an_id_is_a_warning() {
        // Closed early with only `retry`: the client is left without an id.
        let bare = capture(vec![SseItem::Retry(50)], End::Closed);
        let verdict = evaluate_resumed_close(&bare, "s.1.0");
        assert!(
            matches!(&verdict, Outcome::Warn(r) if r.contains("s.1.0")),
            "{verdict:?}"
        );
        assert!(!verdict.is_fail());
        // A fresh id first (an empty-data event, or an id-only block): fine.
        let renewed = capture(vec![ev("s.1.0.1", ""), SseItem::Retry(50)], End::Closed);
        assert_eq!(evaluate_resumed_close(&renewed, "s.1.0"), Outcome::Pass);
        let id_only = capture(vec![SseItem::LastEventId("s.1.0.2".into())], End::Closed);
        assert_eq!(evaluate_resumed_close(&id_only, "s.1.0"), Outcome::Pass);
        // Held open (a long poll): the rule never came into play.
        let held = capture(vec![], End::StillOpen);
        assert!(matches!(
            evaluate_resumed_close(&held, "s.1.0"),
            Outcome::NotApplicable(_)
        ));
    }

    #[test]
    fn the_last_id_of_a_connection() {
        let c = capture(
            vec![ev("a", ""), ev("b", "{}"), SseItem::Retry(5)],
            End::Closed,
        );
        assert_eq!(last_id(&c), Some("b"));
        // A block without an id, or with an empty one, leaves the id as is.
        let c = capture(
            vec![
                ev("a", ""),
                ev("", "{}"),
                SseItem::LastEventId(String::new()),
            ],
            End::Closed,
        );
        assert_eq!(last_id(&c), Some("a"));
        assert_eq!(
            last_id(&capture(vec![SseItem::Retry(5)], End::Closed)),
            None
        );
    }

    /// A scripted server's answer.
    type Answer = fn() -> axum::response::Response;
    /// A scripted server's answer to the request with this id.
    type AnswerTo = fn(&Value) -> axum::response::Response;

    /// The reason of a failure (panics on anything else).
    fn failure(o: Outcome) -> String {
        match o {
            Outcome::Fail(r) => r,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn each_way_of_missing_the_priming_event_is_named() {
        // Empty data without an id: the client has nothing to resume from.
        let no_id = failure(priming(&sse(vec![ev("", "")], End::Closed)));
        assert!(no_id.contains("no id"), "{no_id}");
        // A message first: no priming event before it.
        let message = failure(priming(&sse(vec![ev("s.1.1", "{}")], End::Closed)));
        assert!(message.contains("already carries a message"), "{message}");
        let message = failure(priming(&sse(vec![ev("", "{}")], End::Closed)));
        assert!(message.contains("already carries a message"), "{message}");
        // No event at all: a failure when the stream ended, nothing to
        // judge while it is still open (`retry` alone is no event).
        for items in [vec![], vec![SseItem::Retry(5)]] {
            let ended = failure(priming(&sse(items.clone(), End::Closed)));
            assert!(ended.contains("ended without any event"), "{ended}");
            assert!(matches!(
                priming(&sse(items, End::StillOpen)),
                Outcome::Inconclusive(_)
            ));
        }
    }

    #[test]
    fn ids_on_one_stream_only_are_not_judged() {
        let with = sse(vec![ev("a0", ""), ev("a1", "{}")], End::Closed);
        let without = sse(vec![ev("", "{}")], End::Closed);
        for (a, b) in [(&with, &without), (&without, &with)] {
            assert!(matches!(ids_unique(a, b), Outcome::NotApplicable(_)));
        }
    }

    #[test]
    fn a_message_is_for_a_request_by_its_id() {
        assert!(is_for(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#, 7));
        assert!(!is_for(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#, 7));
        assert!(!is_for(r#"{"jsonrpc":"2.0","id":"7","result":{}}"#, 7));
        assert!(!is_for(r#"{"jsonrpc":"2.0","method":"ping"}"#, 7));
        assert!(!is_for("not json", 7));
    }

    /// A server answering every request (the resuming GET) with `replay`,
    /// then `ending`, and a session on it.
    async fn replaying(
        replay: Vec<SseItem>,
        ending: Ending,
    ) -> (mcp_test_support::fake::Fake, Wire, LegacySession) {
        let text: String = replay
            .iter()
            .map(|item| match item {
                SseItem::Event(e) => format!("id: {}\ndata: {}\n\n", e.last_event_id, e.data),
                SseItem::LastEventId(id) => format!("id: {id}\n\n"),
                SseItem::Retry(ms) => format!("retry: {ms}\n\n"),
            })
            .collect();
        let (fake, wire) = super::super::test_fake::serving(move |_| {
            SseBody::new(vec![text.clone()]).ending(ending).response()
        })
        .await;
        let session = session(Some("s"));
        (fake, wire, session)
    }

    const FOR_2: &str = r#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
    const NOTE: &str = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;

    /// `same_stream` with streams `a` (request 1, ids a0, a1) and `b`
    /// (request 2, ids b0, b1), the resume from a0 replaying `replay`.
    async fn same_stream_replaying(replay: Vec<SseItem>, ending: Ending) -> Outcome {
        let a = sse(vec![ev("a0", ""), ev("a1", "{}")], End::Closed);
        let b = Streamed::Sse {
            request: 2,
            capture: capture(vec![ev("b0", ""), ev("b1", FOR_2)], End::Closed),
        };
        let (fake, wire, session) = replaying(replay, ending).await;
        let verdict = same_stream(&wire, &session, &a, &b).await;
        let resumes = fake.seen_where(|s| s.method == http::Method::GET);
        assert_eq!(resumes.len(), 1);
        assert_eq!(resumes[0].headers["last-event-id"], "a0");
        assert_eq!(resumes[0].headers["mcp-session-id"], "s");
        verdict
    }

    #[tokio::test]
    async fn a_resume_that_replays_another_streams_event_fails() {
        // The other stream's id, even on a notification.
        let by_id = failure(same_stream_replaying(vec![ev("b1", NOTE)], Ending::Eof).await);
        assert!(by_id.contains("\"b1\""), "{by_id}");
        // The other request's answer, under an id of neither stream.
        let by_answer = failure(same_stream_replaying(vec![ev("x9", FOR_2)], Ending::Eof).await);
        assert!(by_answer.contains("\"x9\""), "{by_answer}");
        // The resumed stream's own events: a pass.
        let own = vec![ev("a1", r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)];
        assert_eq!(same_stream_replaying(own, Ending::Eof).await, Outcome::Pass);
    }

    #[tokio::test]
    async fn a_resume_that_replays_nothing_is_not_judged() {
        assert!(matches!(
            same_stream_replaying(vec![], Ending::Eof).await,
            Outcome::NotApplicable(_)
        ));
        // Held open with nothing: Last-Event-ID looks ignored.
        assert!(matches!(
            same_stream_replaying(vec![], Ending::Hang).await,
            Outcome::Inconclusive(_)
        ));
    }

    #[tokio::test]
    async fn a_resume_refused_or_answered_without_a_stream_shows_nothing() {
        let a = sse(vec![ev("a0", ""), ev("a1", "{}")], End::Closed);
        let session = session(Some("s"));
        let answers: [(Answer, &str); 2] = [
            (|| super::super::test_fake::bare(404), "did not resume"),
            (
                || mcp_test_support::fake::json_ok(&json!({})),
                "not an SSE stream",
            ),
        ];
        for (answer, why) in answers {
            let (_fake, wire) = super::super::test_fake::serving(move |_| answer()).await;
            for verdict in [
                same_stream(&wire, &session, &a, &a).await,
                exclusive(&wire, &session, &a).await,
            ] {
                assert!(
                    matches!(&verdict, Outcome::Inconclusive(r) if r.contains(why)),
                    "{verdict:?}"
                );
            }
        }
    }

    /// `exclusive` on stream `b` (ids b0, b1, b2; b2 the last), the resume
    /// from b2 replaying `replay`.
    async fn exclusive_replaying(replay: Vec<SseItem>) -> Outcome {
        let b = sse(
            vec![ev("b0", ""), ev("b1", NOTE), ev("b2", FOR_2)],
            End::Closed,
        );
        let (fake, wire, session) = replaying(replay, Ending::Eof).await;
        let verdict = exclusive(&wire, &session, &b).await;
        let resumes = fake.seen_where(|s| s.method == http::Method::GET);
        assert_eq!(resumes[0].headers["last-event-id"], "b2");
        verdict
    }

    #[tokio::test]
    async fn a_resume_must_not_send_the_last_event_again() {
        // Under its own id, even with empty data.
        assert!(exclusive_replaying(vec![ev("b2", "")]).await.is_fail());
        assert!(
            exclusive_replaying(vec![SseItem::LastEventId("b2".into())])
                .await
                .is_fail()
        );
        // Its message again, under a new id.
        assert!(exclusive_replaying(vec![ev("b3", FOR_2)]).await.is_fail());
        // What came before it, or something new: a pass.
        assert_eq!(
            exclusive_replaying(vec![ev("b3", NOTE)]).await,
            Outcome::Pass
        );
        assert_eq!(exclusive_replaying(vec![ev("b1", "")]).await, Outcome::Pass);
    }

    /// `failed_resume` against a server answering a resume from the forged
    /// id with `forged` and one from any other id with HTTP `real`; the
    /// session's stream issued `issued`.
    async fn failed_resume_with(
        forged: impl Fn() -> axum::response::Response + Send + Sync + 'static,
        real: u16,
        issued: Vec<SseItem>,
    ) -> Outcome {
        let (fake, wire) = super::super::test_fake::serving(move |seen| {
            if seen.headers["last-event-id"] == FORGED_ID {
                forged()
            } else {
                super::super::test_fake::bare(real)
            }
        })
        .await;
        let session = session(Some("s"));
        let verdict = failed_resume(&wire, &session, &sse(issued, End::Closed)).await;
        let ids: Vec<String> = fake
            .seen()
            .iter()
            .map(|s| s.headers["last-event-id"].to_str().unwrap().to_owned())
            .collect();
        assert_eq!(ids[0], FORGED_ID);
        verdict
    }

    fn bare(code: u16) -> impl Fn() -> axum::response::Response + Send + Sync + 'static {
        move || super::super::test_fake::bare(code)
    }

    #[tokio::test]
    async fn a_forged_id_is_refused_with_a_4xx_that_a_real_id_does_not_get() {
        let issued = || vec![ev("s.1.0", ""), ev("s.1.1", "{}")];
        assert_eq!(
            failed_resume_with(bare(404), 200, issued()).await,
            Outcome::Pass
        );
        // Every resume refused alike: the refusal says nothing.
        assert!(matches!(
            failed_resume_with(bare(404), 404, issued()).await,
            Outcome::NotApplicable(_)
        ));
        // No id issued: no real resume to compare with.
        assert!(matches!(
            failed_resume_with(bare(400), 200, vec![ev("", "{}")]).await,
            Outcome::NotApplicable(_)
        ));
        // Anything but a 2xx or 4xx: a failure.
        let server_error = failure(failed_resume_with(bare(500), 200, issued()).await);
        assert!(server_error.contains("HTTP 500"), "{server_error}");
    }

    #[tokio::test]
    async fn a_forged_id_answered_as_a_resume_fails() {
        let issued = || vec![ev("s.1.0", ""), ev("s.1.1", "{}")];
        // 200 with JSON, an empty stream, or messages: the client takes
        // each for a resume.
        let json = failure(
            failed_resume_with(
                || mcp_test_support::fake::json_ok(&json!({})),
                200,
                issued(),
            )
            .await,
        );
        assert!(json.contains("cannot serve"), "{json}");
        let empty =
            failure(failed_resume_with(|| SseBody::new(vec![]).response(), 200, issued()).await);
        assert!(empty.contains("empty stream"), "{empty}");
        let sent = failure(
            failed_resume_with(
                || SseBody::new(vec![format!("id: x\ndata: {NOTE}\n\n")]).response(),
                200,
                issued(),
            )
            .await,
        );
        assert!(sent.contains("sent 1 message"), "{sent}");
        // An empty stream held open: Last-Event-ID seems ignored.
        assert!(matches!(
            failed_resume_with(
                || SseBody::new(vec![]).ending(Ending::Hang).response(),
                200,
                issued()
            )
            .await,
            Outcome::Inconclusive(_)
        ));
    }

    /// An SSE answer carrying `events` (`(id, data)`), then `ending`.
    fn stream_of(events: &[(&str, &str)], ending: Ending) -> axum::response::Response {
        let chunks = events
            .iter()
            .map(|(id, data)| format!("id: {id}\ndata: {data}\n\n"))
            .collect();
        SseBody::new(chunks).ending(ending).response()
    }

    /// The answer to request `id`, as SSE data.
    fn answer_to(id: &Value) -> String {
        json!({ "jsonrpc": "2.0", "id": id, "result": {} }).to_string()
    }

    #[tokio::test]
    async fn the_slow_call_is_cancelled_unless_it_streams() {
        let cases: [(AnswerTo, &str); 3] = [
            (|_| super::super::test_fake::bare(500), "failed"),
            (|_| mcp_test_support::fake::json_ok(&json!({})), "json"),
            (
                |id| stream_of(&[("s0", ""), ("s1", &answer_to(id))], Ending::Eof),
                "sse",
            ),
        ];
        for (answer, kind) in cases {
            let (fake, wire) = super::super::test_fake::serving(move |seen| {
                answer(&seen.body.as_ref().map_or(Value::Null, |b| b["id"].clone()))
            })
            .await;
            let streamed = slow_call(&wire, &session(Some("s")), "slow", &json!({ "ms": 5 })).await;
            let call = &fake.rpc("tools/call")[0];
            let body = call.body.as_ref().unwrap();
            assert_eq!(
                body["params"],
                json!({ "name": "slow", "arguments": { "ms": 5 } })
            );
            let request = body["id"].as_i64().unwrap();
            let cancels = fake.rpc("notifications/cancelled");
            match (&streamed, kind) {
                (Streamed::Failed(e), "failed") => assert!(e.contains("HTTP 500"), "{e}"),
                (Streamed::Json, "json") => {}
                (
                    Streamed::Sse {
                        request: r,
                        capture,
                    },
                    "sse",
                ) => {
                    assert_eq!(*r, request);
                    assert!(capture.response.is_some());
                    assert!(cancels.is_empty(), "a streamed call is not cancelled");
                    continue;
                }
                (other, _) => panic!("{kind}: {other:?}"),
            }
            assert_eq!(cancels.len(), 1, "{kind}");
            let params = &cancels[0].body.as_ref().unwrap()["params"];
            assert_eq!(params["requestId"], request, "{kind}");
        }
    }

    #[tokio::test]
    async fn a_resumed_close_is_judged_only_after_an_early_close_with_an_id() {
        let (fake, wire) =
            super::super::test_fake::serving(|_| stream_of(&[("s.1.1", "")], Ending::Eof)).await;
        let closed = sse(vec![ev("s.1.0", ""), SseItem::Retry(5)], End::Closed);
        assert_eq!(
            resumed_close(&wire, &session(Some("s")), &closed).await,
            Outcome::Pass
        );
        let resumes = fake.seen();
        assert_eq!(resumes.len(), 1);
        assert_eq!(resumes[0].headers["last-event-id"], "s.1.0");
        // Answered, held open, or closed without an id: nothing to resume.
        let answered = Streamed::Sse {
            request: 1,
            capture: Capture {
                items: vec![ev("s.1.0", "")],
                response: Some(json!({})),
                end: End::Closed,
            },
        };
        let held = sse(vec![ev("s.1.0", "")], End::StillOpen);
        let no_id = sse(vec![SseItem::Retry(5)], End::Closed);
        for slow in [answered, held, no_id, Streamed::Json] {
            assert!(matches!(
                resumed_close(&wire, &session(Some("s")), &slow).await,
                Outcome::Inconclusive(_)
            ));
        }
        assert_eq!(fake.seen().len(), 1, "no other resume");
    }

    #[tokio::test]
    async fn a_stream_is_looked_for_in_tools_list_then_ping() {
        // tools/list as JSON, ping as SSE: ping's stream.
        let (fake, wire) = super::super::test_fake::serving(|seen| {
            let body = seen.body.clone().unwrap_or_default();
            if body["method"] == "ping" {
                stream_of(&[("p0", &answer_to(&body["id"]))], Ending::Eof)
            } else {
                mcp_test_support::fake::json_ok(&json!({}))
            }
        })
        .await;
        let Streamed::Sse { request, capture } = sse_request(&wire, &session(Some("s"))).await
        else {
            panic!("no stream")
        };
        let ping = &fake.rpc("ping")[0];
        assert_eq!(ping.body.as_ref().unwrap()["id"], request);
        assert_eq!(ping.headers["mcp-session-id"], "s");
        assert!(capture.response.is_some());
        assert_eq!(fake.rpc("tools/list").len(), 1);
        // Both as JSON; a refusal.
        let (_fake, wire) =
            super::super::test_fake::serving(|_| mcp_test_support::fake::json_ok(&json!({}))).await;
        assert!(matches!(
            sse_request(&wire, &session(Some("s"))).await,
            Streamed::Json
        ));
        let (fake, wire) =
            super::super::test_fake::serving(|_| super::super::test_fake::bare(404)).await;
        let Streamed::Failed(e) = sse_request(&wire, &session(Some("s"))).await else {
            panic!("not a failure")
        };
        assert!(e.contains("tools/list answered HTTP 404"), "{e}");
        assert!(fake.rpc("ping").is_empty());
    }

    #[tokio::test]
    async fn an_older_session_must_not_be_primed() {
        let older = LegacySession {
            id: Some("s".into()),
            version: ProtocolVersion::V2025_06_18,
        };
        let primed = |seen: &mcp_test_support::server::Seen| {
            let id = seen.body.as_ref().unwrap()["id"].clone();
            stream_of(&[("p0", ""), ("p1", &answer_to(&id))], Ending::Eof)
        };
        let plain = |seen: &mcp_test_support::server::Seen| {
            let id = seen.body.as_ref().unwrap()["id"].clone();
            stream_of(&[("p1", &answer_to(&id))], Ending::Eof)
        };
        let (_f, wire) = super::super::test_fake::serving(primed).await;
        let why = failure(no_priming_for_older(&wire, &older).await);
        assert!(why.contains("2025-06-18"), "{why}");
        let (_f, wire) = super::super::test_fake::serving(plain).await;
        assert_eq!(no_priming_for_older(&wire, &older).await, Outcome::Pass);
        let (_f, wire) =
            super::super::test_fake::serving(|_| SseBody::new(vec![]).response()).await;
        assert!(matches!(
            no_priming_for_older(&wire, &older).await,
            Outcome::Inconclusive(_)
        ));
    }

    #[test]
    fn retry_needs_an_early_close() {
        let open = sse(vec![ev("0", "")], End::Closed);
        // Closed with no response and no retry: a failure.
        assert!(retry(&[&open], false).is_fail());
        let with_retry = sse(vec![ev("0", ""), SseItem::Retry(50)], End::Closed);
        assert_eq!(retry(&[&with_retry], false), Outcome::Pass);
        let done = Streamed::Sse {
            request: 1,
            capture: Capture {
                items: vec![],
                response: Some(json!({})),
                end: End::Closed,
            },
        };
        assert!(matches!(retry(&[&done], false), Outcome::Inconclusive(_)));
    }
}
