//! The scenarios about everything around a call: client input,
//! cancellation, change notifications, sessions (expiry, DELETE), GET, and
//! the era cache.

use std::time::Duration;

use futures_util::StreamExt;
use mcp_negotiate::client::Connection;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{Message, Notification};
use mcp_transport_core::transport::{ListenFilter, RequestOptions, Transport, TransportError};
use serde_json::{Value, json};

use super::checks::*;
use super::expect::Failure;
use super::harness::{Harness, Observed};
use super::outcome::*;
use super::seen::Seen;
use super::wire::Exchange;
use mcp_http_edge::headers;

pub(crate) async fn input(conn: &Connection) -> Outcome {
    let resp = call_raw(conn, "ask_name", json!({}))
        .await
        .map_err(|e| from_error(&e))?;
    // A JSON-RPC error instead of a question: what a server without a
    // back-channel answers (a tool error is the other form).
    let v = result_value(&resp).map_err(|message| Observed::Failed {
        kind: Some(Failure::NoBackChannel),
        message,
    })?;
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
pub(crate) async fn cancel(conn: &Connection, harness: &Harness) -> Outcome {
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
    ensure(Seen::since(harness, before).saw_cancel().await, || {
        "the handler never saw the cancellation".into()
    })?;
    // Let anything the server would still send go out.
    tokio::time::sleep(Duration::from_millis(100)).await;
    cancelled_on_wire(&harness.wire.exchanges(), conn.revision().is_modern())
}

/// The wire of `cancel`'s call (`slow`) once the handler saw the
/// cancellation: no response to it; 2026-07-28 (`modern`) closed its
/// stream and sent no `notifications/cancelled`; the older revisions sent
/// one naming the call.
fn cancelled_on_wire(wire: &[Exchange], modern: bool) -> Outcome {
    let post = call_post(wire, "slow", None).ok_or_else(|| failed("no tools/call on the wire"))?;
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
    if modern {
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

pub(crate) async fn changes(conn: &Connection, harness: &Harness) -> Outcome {
    let modern = conn.revision().is_modern();
    let filter = ListenFilter {
        tools_list_changed: true,
        ..ListenFilter::default()
    };
    let mut messages = match conn.listen(filter).await {
        Ok(m) => m,
        Err(TransportError::NotOffered { what }) if !modern => {
            return get_refused(&harness.wire.exchanges(), what);
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
    listened(&harness.wire.exchanges(), modern)?;
    Ok(works(if modern {
        "only the requested tools/list_changed arrived on subscriptions/listen (prompts/list_changed, not requested, did not)"
    } else {
        "tools/list_changed arrived once on the GET stream, nothing else"
    }))
}

/// `changes` on a server without the standalone GET stream: the client
/// reported `what` not offered, which it may only after a GET (not a
/// resume) was answered 405 ("the server MUST either return Content-Type:
/// text/event-stream in response to this HTTP GET, or else return HTTP 405
/// Method Not Allowed"; *Transports*, Listening for Messages from the
/// Server).
fn get_refused(wire: &[Exchange], what: &str) -> Outcome {
    let refused = wire.iter().any(|e| {
        e.method == http::Method::GET
            && e.header("last-event-id").is_none()
            && e.status == Some(http::StatusCode::METHOD_NOT_ALLOWED)
    });
    ensure(refused, || {
        format!("the client says {what} is not offered, but no GET was answered 405")
    })?;
    Ok(absent(format!(
        "GET answered 405: the client reports {what} not offered, no hang"
    )))
}

/// `changes`' reading of the wire once `tools/list_changed` was received
/// and nothing followed it: the notifications the server sent on the
/// listening stream(s) (2026-07-28: the `subscriptions/listen` response,
/// after its acknowledgment; before: the GET streams) are that one
/// notification and nothing else. The client's API shows only what the
/// client chose to deliver (ours skips a type it did not ask for), so the
/// server's part is read here: on 2026-07-28 it "MUST NOT send notification
/// types the client has not explicitly requested" (*Subscriptions*), and
/// the scenario published one such type first.
fn listened(wire: &[Exchange], modern: bool) -> Result<(), Observed> {
    let streams: Vec<&Exchange> = wire
        .iter()
        .filter(|e| {
            if modern {
                e.rpc_method().as_deref() == Some("subscriptions/listen")
            } else {
                e.method == http::Method::GET && e.is_sse()
            }
        })
        .collect();
    let mut sent = Vec::new();
    for stream in &streams {
        let mut messages = stream.messages().into_iter();
        if modern {
            let first = messages.next();
            let method = first.as_ref().and_then(|m| m.get("method"));
            ensure(
                method.and_then(Value::as_str) == Some("notifications/subscriptions/acknowledged"),
                || {
                    format!(
                        "the subscriptions/listen stream began with {first:?}, not its acknowledgment"
                    )
                },
            )?;
        }
        sent.extend(
            messages
                .filter(|m| m.get("id").is_none())
                .filter_map(|m| m.get("method").and_then(Value::as_str).map(str::to_owned)),
        );
    }
    ensure(sent == ["notifications/tools/list_changed"], || {
        format!(
            "the server sent {sent:?} on the {} listening stream(s), where only one notifications/tools/list_changed was for them",
            streams.len()
        )
    })
}

pub(crate) fn describe(m: &Message) -> String {
    match m {
        Message::Notification(n) => n.method.clone(),
        Message::Request(r) => format!("a request {}", r.method),
        Message::Response(r) => format!("a response to {:?}", r.id),
    }
}

/// The session id the client used last (from the wire).
pub(crate) fn session_id(harness: &Harness) -> Option<String> {
    last_session_id(&harness.wire.exchanges()).map(str::to_owned)
}

/// The session id of the last request on `wire` that carried one.
fn last_session_id(wire: &[Exchange]) -> Option<&str> {
    wire.iter()
        .rev()
        .find_map(|e| e.header(headers::SESSION_ID))
}

/// 2026-07-28 answers older-client traffic as the spec says: DELETE (and
/// GET) 405; no session id is minted; and, on a server that supports only
/// this revision (the spec's precondition: a dual-era server rightly treats
/// a session id as legacy traffic), a stray `Mcp-Session-Id` and
/// `Last-Event-ID` on a request are ignored (the request works).
pub(crate) async fn modern_legacy_traffic(
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
    let mut cfg = super::harness::client_config(
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
pub(crate) async fn http_sse_no_sessions(harness: &Harness) -> Outcome {
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

pub(crate) async fn expiry(conn: &Connection, harness: &Harness) -> Outcome {
    if http_sse(conn) {
        return http_sse_no_sessions(harness).await;
    }
    if conn.revision().is_modern() {
        return modern_legacy_traffic(conn, harness, http::Method::DELETE).await;
    }
    let first = call(conn, "echo", json!({ "text": "before" })).await?;
    ensure(first == "before", || format!("echo answered {first:?}"))?;
    let old = session_id(harness).ok_or_else(|| failed("no session id on the wire"))?;
    if harness.server.legacy().is_none() {
        return Err(failed("no legacy engine to expire a session on"));
    }
    let ended = harness.server.terminate_all().await;
    ensure(ended > 0, || "the server held no session to end".into())?;
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
    reinitialized(&harness.wire.exchanges(), &old)?;
    Ok(works(format!(
        "{ended} session record(s) ended; 404 for the terminated session{}; a new initialize without a session id; a new session",
        if reported {
            ", reported as session expired"
        } else {
            ", re-initialized transparently"
        }
    )))
}

/// `expiry`'s reading of the wire once the server ended session `old` and
/// the client called again: a request naming `old` answered 404 (the server
/// "MUST respond to requests containing that session ID with HTTP 404 Not
/// Found"), a new `initialize` without a session id after it (the client
/// "MUST start a new session by sending a new `InitializeRequest` without a
/// session ID attached"), and the client on another session since
/// (*Transports*, Session Management).
fn reinitialized(wire: &[Exchange], old: &str) -> Result<(), Observed> {
    let refused = wire.iter().position(|e| {
        e.header(headers::SESSION_ID) == Some(old) && e.status == Some(http::StatusCode::NOT_FOUND)
    });
    let refused = refused
        .ok_or_else(|| failed("no request with the terminated session id was answered 404"))?;
    let reinit = wire[refused..].iter().any(|e| {
        e.rpc_method().as_deref() == Some("initialize") && e.header(headers::SESSION_ID).is_none()
    });
    ensure(reinit, || {
        "no new initialize without a session id after the 404".into()
    })?;
    ensure(last_session_id(wire) != Some(old), || {
        "the client still uses the terminated session id".into()
    })
}

pub(crate) async fn delete(conn: &Connection, harness: &Harness) -> Outcome {
    if http_sse(conn) {
        return http_sse_no_sessions(harness).await;
    }
    if conn.revision().is_modern() {
        return modern_legacy_traffic(conn, harness, http::Method::DELETE).await;
    }
    let text = call(conn, "echo", json!({ "text": "before" })).await?;
    ensure(text == "before", || format!("echo answered {text:?}"))?;
    let old = session_id(harness).ok_or_else(|| failed("no session id on the wire"))?;
    if harness.server.legacy().is_none() {
        return Err(failed("no legacy engine"));
    }
    let before = harness.server.session_count();
    conn.close().await.map_err(|e| from_error(&e))?;
    let wire = harness.wire.exchanges();
    let del = deleted(&wire, &old)?;
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
    ensure(harness.server.session_count() < before, || {
        format!(
            "the server still has {} session(s) after DELETE",
            harness.server.session_count()
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

/// The DELETE `close()` sent, which must name the session it ends, `old`
/// (the client "SHOULD send an HTTP DELETE to the MCP endpoint with the
/// `Mcp-Session-Id` header, to explicitly terminate the session";
/// *Transports*, Session Management).
fn deleted<'w>(wire: &'w [Exchange], old: &str) -> Result<&'w Exchange, Observed> {
    let del = wire
        .iter()
        .find(|e| e.method == http::Method::DELETE)
        .ok_or_else(|| failed("close() sent no DELETE"))?;
    ensure(del.header(headers::SESSION_ID) == Some(old), || {
        format!(
            "the DELETE named session {:?}, not {old:?}",
            del.header(headers::SESSION_ID)
        )
    })?;
    Ok(del)
}

pub(crate) async fn get_405(conn: &Connection, harness: &Harness) -> Outcome {
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
    get_answered(status, &allow, &ct, modern)
}

/// What `get_405`'s GET was answered (`status`, `Allow`, `Content-Type`):
/// 405 naming POST, or, before 2026-07-28 (not `modern`), the standalone
/// SSE stream.
fn get_answered(status: http::StatusCode, allow: &str, ct: &str, modern: bool) -> Outcome {
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
pub(crate) async fn era_cache(conn: &Connection, harness: &Harness) -> Outcome {
    let want = conn.revision();
    let _ = conn.close().await;
    let cache = mcp_negotiate::client::EraCache::new();
    let mut probes = Vec::new();
    for round in 1..=3 {
        let before = harness.wire.exchanges().len();
        let cfg = super::harness::client_config(harness.client, harness.addr, harness.faults)
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
        probes.push(discover_probes(&harness.wire.exchanges()[before..]));
    }
    cached(&probes, &want)
}

/// The `server/discover` probes on `wire`.
fn discover_probes(wire: &[Exchange]) -> usize {
    wire.iter()
        .filter(|e| e.rpc_method().as_deref() == Some("server/discover"))
        .count()
}

/// `era_cache`'s verdict on the probes each connection sharing one cache
/// sent: none after the first, whose answer the cache holds ("Clients
/// SHOULD cache the result for the lifetime of the … origin"; 2026-07-28
/// *Versioning*).
fn cached(probes: &[usize], want: &ProtocolVersion) -> Outcome {
    let later: usize = probes.iter().skip(1).sum();
    ensure(later == 0, || {
        format!(
            "{later} server/discover probe(s) by the connections after the first, sharing its cache"
        )
    })?;
    Ok(works(format!(
        "{} connections sharing the cache all negotiated {want}; the first sent {} server/discover probe(s), the others none",
        probes.len(),
        probes.first().copied().unwrap_or_default()
    )))
}

#[cfg(test)]
mod tests;
