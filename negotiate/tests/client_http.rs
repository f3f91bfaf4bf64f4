//! The negotiating client's HTTP settings reach every engine: one custom
//! `reqwest::Client` (`with_http_client`) and default headers
//! (`with_header`) are used by the modern probe, legacy `initialize`, the
//! HTTP+SSE fallback, every resume (`Last-Event-ID`) and DELETE; and the
//! clients speak TLS (a local rustls server with a certificate made in the
//! test).

mod support;

use std::sync::Arc;

use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use mcp_negotiate::client::{NegotiateConfig, NegotiateError, connect};
use mcp_negotiate::server::{MultiConfig, MultiServer, legacy_config};
use mcp_rev_2025_11_25::{DisconnectPolicy, PollingExt};
use mcp_rev_2026_07_28::server::ModernConfig;
use mcp_test_support::http_sse_server as old_server;
use mcp_test_support::server::Hit;
use mcp_test_support::{Hits, TestServer, TlsServer};
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::{RequestOptions, Transport};
use mcp_transport_core::{Era, ProtocolVersion as V};
use serde_json::{Value, json};

async fn echo(conn: &impl Transport, text: &str) -> String {
    let params = to_raw(&json!({ "name": "echo", "arguments": { "text": text } })).unwrap();
    let resp = conn
        .request("tools/call", Some(params), RequestOptions::default())
        .await
        .expect("request sent")
        .response()
        .await
        .expect("response");
    let v: Value = serde_json::from_str(resp.payload.expect("a result").get()).unwrap();
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// 2025-11-25 closing every connection right after its priming event (so
/// every answer is fetched by a resume), and 2026-07-28.
fn polling_and_modern() -> MultiServer {
    MultiServer::new(
        Arc::new(support::test_handler()),
        MultiConfig {
            revisions: vec![V::V2025_11_25, V::V2026_07_28],
            legacy: legacy_config()
                .with_disconnect(DisconnectPolicy::AfterPriming)
                .with_retry_ms(10),
            modern: ModernConfig::default(),
            running: Default::default(),
        },
    )
}

/// Calls `echo` in every era through `configure`d negotiating clients:
/// 2025-11-25 (with resumes and DELETE), 2026-07-28, and the HTTP+SSE
/// fallback. Returns every exchange the servers saw.
async fn every_era(configure: impl Fn(NegotiateConfig) -> NegotiateConfig) -> Vec<Hit> {
    let hits = Hits::default();
    let server = polling_and_modern();
    let http = TestServer::serve(hits.record(server.route("/mcp"))).await;
    for (revision, era) in [(V::V2025_11_25, Era::Legacy), (V::V2026_07_28, Era::Modern)] {
        let config =
            configure(NegotiateConfig::new(http.url()).with_revisions(vec![revision.clone()]));
        let conn = connect(config).await.expect("negotiated");
        assert_eq!(conn.negotiated().era, era);
        assert_eq!(echo(&conn, "hi").await, "hi");
        conn.close().await.expect("closed");
    }
    let old_hits = Hits::default();
    let (addr, _old) = old_server::spawn(old_server::Options {
        hits: Some(old_hits.clone()),
        ..Default::default()
    })
    .await;
    let conn = connect(configure(NegotiateConfig::new(format!(
        "http://{addr}/sse"
    ))))
    .await
    .expect("negotiated");
    assert_eq!(conn.negotiated().revision, V::V2024_11_05);
    assert_eq!(echo(&conn, "old").await, "old");
    conn.close().await.expect("closed");

    let mut all = hits.all();
    all.extend(old_hits.all());
    // What the headers must reach.
    let kinds = [
        ("a resume", all.iter().any(Hit::is_resume)),
        ("a DELETE", all.iter().any(|h| h.method == Method::DELETE)),
        (
            "a 2026-07-28 POST",
            all.iter()
                .any(|h| h.protocol_version.as_deref() == Some("2026-07-28")),
        ),
        (
            "the HTTP+SSE GET",
            old_hits.all().iter().any(|h| h.method == Method::GET),
        ),
        (
            "an HTTP+SSE POST",
            old_hits
                .all()
                .iter()
                .any(|h| h.method == Method::POST && h.status == 202),
        ),
    ];
    for (what, seen) in kinds {
        assert!(seen, "no {what} among {all:#?}");
    }
    all
}

fn lacking(all: &[Hit], name: &str, value: &str) -> Vec<String> {
    all.iter()
        .filter(|h| h.headers.get(name).and_then(|v| v.to_str().ok()) != Some(value))
        .map(|h| {
            format!(
                "{} {:?} last-event-id={:?}",
                h.method, h.rpc_method, h.last_event_id
            )
        })
        .collect()
}

#[tokio::test]
async fn default_headers_reach_every_request_of_every_era() {
    let all =
        every_era(|c| c.with_header(AUTHORIZATION, HeaderValue::from_static("Bearer s3cret")))
            .await;
    let missing = lacking(&all, "authorization", "Bearer s3cret");
    assert!(
        missing.is_empty(),
        "requests without the header: {missing:#?}"
    );
}

#[tokio::test]
async fn one_http_client_serves_every_era_including_the_http_sse_fallback() {
    let mut defaults = HeaderMap::new();
    defaults.insert(
        HeaderName::from_static("x-client"),
        HeaderValue::from_static("custom"),
    );
    let client = reqwest::Client::builder()
        .default_headers(defaults)
        .build()
        .unwrap();
    let all = every_era(|c| c.with_http_client(client.clone())).await;
    let missing = lacking(&all, "x-client", "custom");
    assert!(
        missing.is_empty(),
        "requests not sent by the custom client: {missing:#?}"
    );
}

#[tokio::test]
async fn headers_and_a_custom_client_together_are_a_configuration_error() {
    let config = NegotiateConfig::new("http://127.0.0.1:9/mcp")
        .with_http_client(reqwest::Client::new())
        .with_header(AUTHORIZATION, HeaderValue::from_static("Bearer x"));
    let Err(err) = connect(config).await else {
        panic!("headers and a custom client were accepted together");
    };
    assert!(matches!(err, NegotiateError::Config(_)), "{err}");
    assert!(err.to_string().contains("default_headers"), "{err}");
}

#[tokio::test]
async fn https_with_a_client_trusting_the_servers_certificate() {
    let server = polling_and_modern();
    let tls = TlsServer::serve(server.route("/mcp")).await;
    for revision in [V::V2025_11_25, V::V2026_07_28] {
        let config = NegotiateConfig::new(tls.url("/mcp"))
            .with_revisions(vec![revision.clone()])
            .with_http_client(tls.client());
        let conn = connect(config).await.expect("negotiated over https");
        assert_eq!(conn.revision(), revision);
        assert_eq!(echo(&conn, "secure").await, "secure");
        conn.close().await.expect("closed");
    }
    // Without the certificate among its roots the client refuses the
    // server: a TLS error, not "not http".
    let Err(err) = connect(NegotiateConfig::new(tls.url("/mcp"))).await else {
        panic!("an untrusted certificate was accepted");
    };
    assert!(matches!(err, NegotiateError::Transport { .. }), "{err}");
}
