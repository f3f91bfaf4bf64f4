//! How a failed negotiation is classified, the `-32022` → retry path read
//! from the wire, against errors and wires built by hand, and the line a
//! result explains itself with.

use http::StatusCode;
use mcp_transport_core::transport::TransportError;
use serde_json::json;

use super::super::FUTURE_VERSION;
use super::super::test_wire::{get, post};
use super::super::wire::Exchange;
use super::*;

fn no_match(client: ClientKind, answers: &[&str]) -> NegotiateError {
    NegotiateError::NoMatch {
        url: "http://127.0.0.1:1/mcp".into(),
        offered: client.revisions(),
        answers: answers.iter().map(|a| (*a).to_owned()).collect(),
    }
}

fn classified(
    e: &NegotiateError,
    client: ClientKind,
    server: ServerKind,
) -> (Option<Failure>, String) {
    match classify_connect(e, client, server) {
        Observed::Failed { kind, message } => (kind, message),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_no_match_naming_both_sides_is_the_spec_named_failure() {
    let e = no_match(
        ClientKind::Modern,
        &["initialize: protocolVersion 2025-11-25"],
    );
    let (kind, message) = classified(&e, ClientKind::Modern, ServerKind::S1125);
    assert_eq!(kind, Some(Failure::NoMutualRevision));
    assert_eq!(message, e.to_string());
}

#[test]
fn a_no_match_that_does_not_name_the_server_is_not() {
    let e = no_match(ClientKind::Modern, &["HTTP 400"]);
    let (kind, message) = classified(&e, ClientKind::Modern, ServerKind::S1125);
    assert_eq!(kind, None);
    assert!(
        message.ends_with("(the error does not name both sides' versions: client's named true, server's named false)"),
        "{message}"
    );
}

#[test]
fn a_no_match_that_does_not_name_the_client_is_not() {
    let e = NegotiateError::NoMatch {
        url: "http://127.0.0.1:1/mcp".into(),
        offered: Vec::new(),
        answers: vec!["2025-11-25 only".into()],
    };
    let (kind, message) = classified(&e, ClientKind::Modern, ServerKind::S1125);
    assert_eq!(kind, None);
    assert!(
        message.contains("client's named false, server's named true"),
        "{message}"
    );
}

#[test]
fn a_modern_client_may_learn_only_that_the_server_is_not_modern() {
    let e = no_match(
        ClientKind::Modern,
        &["server/discover: not a modern server (-32601)"],
    );
    assert_eq!(
        classified(&e, ClientKind::Modern, ServerKind::Legacy).0,
        Some(Failure::NoMutualRevision)
    );
    // A client that also speaks a legacy revision has to name it.
    let e = no_match(
        ClientKind::C1125,
        &["server/discover: not a modern server (-32601)"],
    );
    let (kind, message) = classified(&e, ClientKind::C1125, ServerKind::S0728);
    assert_eq!(kind, None);
    assert!(message.contains("server's named false"), "{message}");
}

#[test]
fn an_http_sse_client_may_learn_only_that_the_url_is_no_http_sse_endpoint() {
    let answer = ["GET /mcp: not an HTTP+SSE endpoint (405)"];
    let e = no_match(ClientKind::C1105, &answer);
    assert_eq!(
        classified(&e, ClientKind::C1105, ServerKind::S0326).0,
        Some(Failure::NoMutualRevision)
    );
    let e = no_match(ClientKind::C0618, &answer);
    assert_eq!(classified(&e, ClientKind::C0618, ServerKind::S0326).0, None);
}

#[test]
fn an_error_that_is_no_no_match_is_kept_as_it_is() {
    let e = NegotiateError::Transport {
        url: "http://127.0.0.1:1/mcp (2025-11-25, 2026-07-28)".into(),
        error: TransportError::SessionExpired {
            session_id: "s".into(),
        },
    };
    let (kind, message) = classified(&e, ClientKind::Modern, ServerKind::S1125);
    assert_eq!(kind, None);
    assert_eq!(message, e.to_string());
}

/// A POST offering `version`, answered with `answer`.
fn offered(version: &str, answer: &serde_json::Value) -> Exchange {
    post(json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover"}))
        .with_header("mcp-protocol-version", version)
        .answered_json(StatusCode::BAD_REQUEST, answer)
}

fn unsupported(supported: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32022,
        "message": "unsupported protocol version", "data": {"supported": supported}}})
}

fn retried(exchanges: Vec<Exchange>) -> Result<(), String> {
    future_version_retried(&Wire::recorded(exchanges))
}

#[test]
fn the_future_version_is_refused_with_32022_then_retried() {
    let refused = offered(FUTURE_VERSION, &unsupported(json!(["2026-07-28"])));
    let retry = offered(
        "2026-07-28",
        &json!({"jsonrpc": "2.0", "id": 0, "result": {}}),
    );
    assert_eq!(retried(vec![refused.clone(), retry.clone()]), Ok(()));
    // A retry before the refusal is no retry.
    let early = get().with_header("mcp-protocol-version", "2026-07-28");
    assert_eq!(
        retried(vec![early, refused.clone()]),
        Err("no request retried with a version from [\"2026-07-28\"] after -32022".into())
    );
    // Nor is a request with a version the server did not list.
    let elsewhere = offered("2025-11-25", &json!({}));
    assert!(retried(vec![refused, elsewhere]).is_err());
}

#[test]
fn anything_else_on_the_future_path_is_named() {
    assert_eq!(retried(Vec::new()), Err("no request on the wire".into()));
    let plain = offered("2026-07-28", &json!({}));
    assert_eq!(
        retried(vec![plain]),
        Err("the first request offered \"2026-07-28\", not 2099-01-01".into())
    );
    let other_code = json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32600,
        "message": "bad", "data": {"supported": ["2026-07-28"]}}});
    let e = retried(vec![offered(FUTURE_VERSION, &other_code)]).unwrap_err();
    assert!(e.ends_with("not -32022 with data.supported"), "{e}");
    let no_list = offered(FUTURE_VERSION, &unsupported(json!("2026-07-28")));
    let e = retried(vec![no_list]).unwrap_err();
    assert!(e.ends_with("not -32022 with data.supported"), "{e}");
}

#[test]
fn every_client_version_and_one_server_version_must_be_named() {
    // The c-legacy client offered three; an error naming one is not enough.
    let e = NegotiateError::NoMatch {
        url: "http://127.0.0.1:1/mcp".into(),
        offered: vec![ProtocolVersion::V2025_11_25],
        answers: vec!["the server speaks 2026-07-28".into()],
    };
    let (kind, message) = classified(&e, ClientKind::Legacy, ServerKind::S0728);
    assert_eq!(kind, None);
    assert!(
        message.contains("client's named false, server's named true"),
        "{message}"
    );
    // One of the s-legacy server's three is enough.
    let e = no_match(
        ClientKind::Modern,
        &["initialize: protocolVersion 2025-11-25"],
    );
    assert_eq!(
        classified(&e, ClientKind::Modern, ServerKind::Legacy).0,
        Some(Failure::NoMutualRevision)
    );
    // "not a modern server" names the server only to a modern-only client.
    let e = NegotiateError::NoMatch {
        url: "http://127.0.0.1:1/mcp".into(),
        offered: Vec::new(),
        answers: vec!["not a modern server".into()],
    };
    let (_, message) = classified(&e, ClientKind::All, ServerKind::Legacy);
    assert!(message.contains("server's named false"), "{message}");
}

#[test]
fn only_requests_after_the_refusal_count_as_its_retry() {
    let early = || get().with_header("mcp-protocol-version", "2026-07-28");
    let refused = offered(FUTURE_VERSION, &unsupported(json!(["2026-07-28"])));
    assert!(retried(vec![early(), early(), refused]).is_err());
    // A refusal that lists the refused version is not retried by itself.
    let odd = offered(
        FUTURE_VERSION,
        &unsupported(json!([FUTURE_VERSION, "2026-07-28"])),
    );
    assert!(retried(vec![odd]).is_err());
}

#[tokio::test]
async fn dropping_the_harness_stops_its_server() {
    let harness = spawn_server(
        ClientKind::All,
        ServerKind::Legacy,
        Scenario::Json,
        Faults::default(),
    )
    .await
    .expect("server");
    let addr = harness.addr;
    tokio::net::TcpStream::connect(addr)
        .await
        .expect("the server accepts connections while the harness lives");
    drop(harness);
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("{addr} still accepts connections after the harness was dropped");
}

/// What a report prints for a result: cell, scenario, prediction and
/// revision against what happened, and the spec sentence.
#[test]
fn a_result_explains_the_cell_the_prediction_and_what_happened() {
    let result = |expected, negotiated, observed| ScenarioResult {
        client: ClientKind::Modern,
        server: ServerKind::S1125,
        scenario: Scenario::Json,
        prediction: Prediction {
            revision: Some(ProtocolVersion::V2025_11_25),
            expected,
            spec: "Transports",
        },
        negotiated,
        observed,
    };
    let r = result(
        Expected::Works,
        None,
        Observed::Failed {
            kind: None,
            message: "broken".into(),
        },
    );
    assert_eq!(
        r.explain(),
        "c-2026-07-28 x s-2025-11-25 / json: expected works on 2025-11-25, got failed: broken on no revision [spec: Transports]"
    );
    let r = result(
        Expected::Fails(Failure::NoMutualRevision),
        Some(ProtocolVersion::V2025_06_18),
        Observed::Works("answered".into()),
    );
    assert_eq!(
        r.explain(),
        "c-2026-07-28 x s-2025-11-25 / json: expected fails: no mutually supported revision on 2025-11-25, got worked (answered) on 2025-06-18 [spec: Transports]"
    );
    let r = result(
        Expected::NotApplicable,
        Some(ProtocolVersion::V2025_11_25),
        Observed::Absent("no GET".into()),
    );
    assert!(
        r.explain().contains(
            "expected not applicable on 2025-11-25, got absent, as checked (no GET) on 2025-11-25"
        ),
        "{}",
        r.explain()
    );
}

/// `s-legacy-200`'s front: only a sessionless `server/discover` POST is
/// answered there (200, `-32601`, its id echoed); everything else reaches
/// the legacy engine behind it, body intact.
#[tokio::test]
async fn s_legacy_200_answers_only_a_sessionless_discover_itself() {
    use axum::body::Body;
    use tower::ServiceExt;
    let app = axum::Router::new()
        .fallback(|body: String| async move { format!("engine: {body}") })
        .layer(axum::middleware::from_fn(discover_answered_200));
    let send = |method: http::Method, session: Option<&str>, body: serde_json::Value| {
        let mut req = http::Request::builder().method(method).uri("/mcp");
        if let Some(id) = session {
            req = req.header("mcp-session-id", id);
        }
        let req = req.body(Body::from(body.to_string())).expect("request");
        let app = app.clone();
        async move {
            let resp = app.oneshot(req).await.expect("infallible");
            let status = resp.status();
            let ct = resp
                .headers()
                .get("content-type")
                .map(|v| v.to_str().unwrap_or_default().to_owned());
            let body = axum::body::to_bytes(resp.into_body(), 4 << 20)
                .await
                .expect("body");
            (status, ct, String::from_utf8_lossy(&body).into_owned())
        }
    };
    let discover = json!({"jsonrpc": "2.0", "id": 7, "method": "server/discover"});
    let (status, ct, body) = send(http::Method::POST, None, discover.clone()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ct.as_deref(), Some("application/json"));
    let answer: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 7,
            "error": {"code": -32601, "message": "Method not found: server/discover"}})
    );
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"});
    // A body of 1.5 MiB passes whole (the front reads up to 4 MiB; the
    // stand-in engine, axum's default 2 MiB).
    let big = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x".repeat(3 << 19)}}});
    for (method, session, body) in [
        (http::Method::POST, Some("s1"), discover.clone()),
        (http::Method::POST, None, init),
        (http::Method::POST, Some("s1"), big),
        (http::Method::GET, None, discover),
    ] {
        let sent = body.to_string();
        let (status, _, got) = send(method.clone(), session, body).await;
        assert_eq!(
            (status, got),
            (StatusCode::OK, format!("engine: {sent}")),
            "{method} {session:?}"
        );
    }
}
