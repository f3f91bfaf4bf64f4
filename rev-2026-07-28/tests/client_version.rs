//! Version negotiation without a handshake (*Versioning*, "Protocol Version
//! Negotiation"): `UnsupportedProtocolVersionError` (-32022) and
//! `server/discover`.

mod client_common;

use client_common::*;
use http::StatusCode;
use mcp_rev_2026_07_28::client::ModernClient;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::negotiation::NegotiationError;
use mcp_transport_core::transport::{RequestOptions, Transport, TransportError};
use serde_json::json;

/// A server supporting exactly `supported`; checks header = `_meta`.
fn versioned(supported: &'static [&'static str]) -> impl Fn(&Seen) -> axum::response::Response {
    move |seen| {
        let version = seen.version().unwrap_or("");
        assert_eq!(seen.header("mcp-protocol-version"), Some(version));
        if !supported.contains(&version) {
            return status_json(
                StatusCode::BAD_REQUEST,
                &rpc_error(
                    &seen.id(),
                    -32022,
                    "Unsupported protocol version",
                    Some(json!({"supported": supported, "requested": version})),
                ),
            );
        }
        match seen.rpc_method() {
            Some("server/discover") => json_ok(&result(
                &seen.id(),
                json!({
                    "resultType": "complete",
                    "supportedVersions": supported,
                    "capabilities": {"tools": {}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "1"}},
                    "instructions": "be nice"
                }),
            )),
            _ => json_ok(&result(
                &seen.id(),
                json!({"resultType": "complete", "v": version}),
            )),
        }
    }
}

#[tokio::test]
async fn unsupported_version_is_retried_with_the_highest_mutual_one() {
    let fake = Fake::start(versioned(&["2026-07-28", "2025-11-25"])).await;
    let client = ModernClient::new(fake.config().with_versions(vec![
        ProtocolVersion::parse("2030-01-01"),
        ProtocolVersion::V2026_07_28,
    ]))
    .unwrap();
    assert_eq!(client.revision().as_str(), "2030-01-01");
    let response = answer(&client, "tools/list", None).await.unwrap();
    assert_eq!(result_of(&response)["v"], "2026-07-28");
    assert_eq!(client.revision(), ProtocolVersion::V2026_07_28);
    assert!(client.negotiated().reason.contains("2030-01-01"));
    // Later requests use the negotiated version directly.
    answer(&client, "tools/list", None).await.unwrap();
    let versions: Vec<String> = fake
        .seen()
        .iter()
        .map(|s| s.version().unwrap().to_owned())
        .collect();
    assert_eq!(versions, ["2030-01-01", "2026-07-28", "2026-07-28"]);
    let seen = fake.seen();
    assert_ne!(seen[0].id(), seen[1].id());
}

#[tokio::test]
async fn no_mutual_version_is_a_negotiation_error_naming_both_sides() {
    let fake = Fake::start(versioned(&["2025-11-25", "2025-06-18"])).await;
    let client = fake.client();
    let err = client
        .request("tools/list", None, RequestOptions::default())
        .await
        .unwrap_err();
    match &err {
        TransportError::Negotiation(NegotiationError::NoMutualVersion {
            client_supports,
            server_supports,
        }) => {
            assert_eq!(client_supports, &[ProtocolVersion::V2026_07_28]);
            assert_eq!(server_supports.len(), 2);
        }
        other => panic!("{other}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("2026-07-28") && text.contains("2025-11-25"),
        "{text}"
    );
    assert_eq!(fake.seen().len(), 1, "no retry without a mutual version");
}

#[tokio::test]
async fn version_error_inside_an_sse_answer_is_handled_too() {
    let fake = Fake::start(|seen| {
        if seen.version() == Some("2026-07-28") {
            return sse(&[result(&seen.id(), json!({}))]);
        }
        sse(&[rpc_error(
            &seen.id(),
            -32022,
            "Unsupported protocol version",
            Some(json!({"supported": ["2026-07-28"], "requested": seen.version()})),
        )])
    })
    .await;
    let client = ModernClient::new(fake.config().with_versions(vec![
        ProtocolVersion::parse("2027-01-01"),
        ProtocolVersion::V2026_07_28,
    ]))
    .unwrap();
    let response = answer(&client, "tools/list", None).await.unwrap();
    assert!(response.payload.is_ok());
    assert_eq!(fake.seen().len(), 2);
}

#[tokio::test]
async fn discover_returns_the_server_description_and_picks_a_version() {
    let fake = Fake::start(versioned(&["2026-07-28"])).await;
    // The first discover is sent with the preferred (unsupported) version,
    // negotiated inline, then the result confirms the choice.
    let client = ModernClient::new(fake.config().with_versions(vec![
        ProtocolVersion::parse("2028-01-01"),
        ProtocolVersion::V2026_07_28,
    ]))
    .unwrap();
    let d = client.discover().await.unwrap();
    assert_eq!(d.supported_versions, [ProtocolVersion::V2026_07_28]);
    assert_eq!(d.capabilities, json!({"tools": {}}));
    assert_eq!(d.server_info.unwrap()["name"], "fake");
    assert_eq!(d.instructions.as_deref(), Some("be nice"));
    assert_eq!(client.revision(), ProtocolVersion::V2026_07_28);
    assert_eq!(fake.rpc("server/discover").len(), 2);
}

#[tokio::test]
async fn other_http_errors_keep_status_and_rpc_error() {
    let fake = Fake::start(|_| status(StatusCode::UNAUTHORIZED, "no token")).await;
    let err = fake
        .client()
        .request("tools/list", None, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransportError::Http { status: 401, message, rpc: None } if message == "no token"),
        "{err}"
    );
    // A modern 404 + -32601 for this request is its JSON-RPC answer.
    let fake = Fake::start(|seen| {
        status_json(
            StatusCode::NOT_FOUND,
            &rpc_error(&seen.id(), -32601, "Method not found", None),
        )
    })
    .await;
    let response = answer(&fake.client(), "prompts/list", None).await.unwrap();
    assert_eq!(response.payload.unwrap_err().code, -32601);
}

/// Found by the conformance suite's `request-metadata` scenario: its server
/// rejects the first request with `-32022` whose `supported` lists the very
/// version the client sent. That version is the highest mutual one, so the
/// client retries once with it instead of giving up — and only once.
#[tokio::test]
async fn a_rejected_version_the_server_lists_as_supported_is_retried_once() {
    let rejections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reject = |seen: &Seen| {
        status_json(
            StatusCode::BAD_REQUEST,
            &rpc_error(
                &seen.id(),
                -32022,
                "Unsupported protocol version",
                Some(json!({"supported": ["2026-07-28"], "requested": seen.version()})),
            ),
        )
    };
    let count = rejections.clone();
    let fake = Fake::start(move |seen| {
        if count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            return reject(seen);
        }
        json_ok(&result(
            &seen.id(),
            json!({"resultType": "complete", "tools": []}),
        ))
    })
    .await;
    let client = fake.client();
    let response = answer(&client, "tools/list", None).await.unwrap();
    assert!(response.payload.is_ok());
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].version(), Some("2026-07-28"));
    assert_eq!(seen[1].header("mcp-protocol-version"), Some("2026-07-28"));
    assert_ne!(seen[0].id(), seen[1].id());

    // A server that keeps rejecting it gets one retry, then the error.
    let fake = Fake::start(reject).await;
    let response = answer(&fake.client(), "tools/list", None).await.unwrap();
    assert_eq!(response.payload.unwrap_err().code, -32022);
    assert_eq!(fake.seen().len(), 2);
}

#[tokio::test]
async fn discover_switches_when_the_current_version_is_not_listed() {
    // A lenient server: it answers whatever version a request carries, but
    // server/discover lists only 2026-07-28.
    let fake = Fake::start(|seen| match seen.rpc_method() {
        Some("server/discover") => json_ok(&result(
            &seen.id(),
            json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}}),
        )),
        _ => json_ok(&result(&seen.id(), json!({"resultType": "complete"}))),
    })
    .await;
    let client = ModernClient::new(fake.config().with_versions(vec![
        ProtocolVersion::parse("2028-01-01"),
        ProtocolVersion::V2026_07_28,
    ]))
    .unwrap();
    assert!(
        format!("{client:?}").contains("2028-01-01"),
        "Debug shows the version the next request carries: {client:?}"
    );
    let (logged, guard) = mcp_test_support::trace::Logged::install();
    client.discover().await.unwrap();
    drop(guard);
    let switched: Vec<String> = logged
        .take(tracing::Level::INFO)
        .into_iter()
        .filter(|l| l.contains("switching protocol version"))
        .collect();
    assert!(
        switched.len() == 1 && switched[0].contains("from=2028-01-01 to=2026-07-28"),
        "the switch is logged once, with both versions: {switched:?}"
    );
    assert_eq!(fake.rpc("server/discover").len(), 1, "nothing was refused");
    assert_eq!(client.revision(), ProtocolVersion::V2026_07_28);
    answer(&client, "tools/list", None).await.unwrap();
    assert_eq!(fake.rpc("tools/list")[0].version(), Some("2026-07-28"));
    let debug = format!("{client:?}");
    assert!(
        debug.contains(&fake.url) && debug.contains(&format!("{:?}", ProtocolVersion::V2026_07_28)),
        "{debug}"
    );
    let config = fake.config().with_max_input_rounds(7);
    let debug = format!("{config:?}");
    assert!(
        debug.contains(&fake.url) && debug.contains("max_input_rounds: 7"),
        "{debug}"
    );
}
