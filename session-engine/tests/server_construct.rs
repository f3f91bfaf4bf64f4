//! What a `LegacyServer` says about itself: its configuration
//! (`config`, `Debug`), its sessions (`session_ids`), and the warnings
//! `LegacyServer::new` logs for a configuration that cannot serve what it
//! names (a version without an implementation in `revisions`).

mod server_common;

use std::sync::Arc;

use mcp_session_engine::server::{LegacyServer, ServerConfig};
use mcp_test_support::trace::Logged;
use mcp_transport_core::ProtocolVersion;
use server_common::memory::initialized;
use server_common::{config, test_handler};
use tracing::Level;

fn server(config: ServerConfig) -> LegacyServer {
    LegacyServer::new(Arc::new(test_handler()), config)
}

/// The warnings `LegacyServer::new` logs for `config`.
fn warnings_for(config: ServerConfig) -> Vec<String> {
    let (logged, _guard) = Logged::install();
    drop(server(config));
    logged.take(Level::WARN)
}

#[test]
fn a_config_whose_every_version_has_an_implementation_logs_nothing() {
    assert_eq!(warnings_for(config()), Vec::<String>::new());
    // Every legacy revision served.
    let all = config().with_versions([
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
    ]);
    assert_eq!(warnings_for(all), Vec::<String>::new());
}

#[test]
fn a_version_without_an_implementation_is_named() {
    let config = mcp_rev_2025_11_25::server_config()
        .with_versions([ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_03_26]);
    let warnings = warnings_for(config);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("without an implementation")
            && warnings[0].ends_with("version=2025-03-26"),
        "{warnings:?}"
    );
}

#[test]
fn a_config_serving_no_legacy_version_says_every_initialize_will_fail() {
    // The default config names 2025-11-25 but registers no revision.
    let warnings = warnings_for(ServerConfig::default());
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("every initialize will fail") && warnings[0].contains("2025-11-25"),
        "{warnings:?}"
    );
    assert!(warnings[1].ends_with("version=2025-11-25"), "{warnings:?}");
    // A version of the modern era is not this engine's: it is not named
    // as one without an implementation.
    let modern = config().with_versions([ProtocolVersion::V2026_07_28]);
    let warnings = warnings_for(modern);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("every initialize will fail"),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn config_debug_and_session_ids_tell_what_the_server_is() {
    let server = server(config().with_json_response(true).with_max_sessions(7));
    assert!(server.config().json_response);
    assert_eq!(server.config().max_sessions, 7);
    assert!(server.session_ids().is_empty());
    let a = initialized(&server).await;
    let b = initialized(&server).await;
    let mut ids = server.session_ids();
    ids.sort();
    let mut want = vec![a.clone(), b];
    want.sort();
    assert_eq!(ids, want);
    let debug = format!("{server:?}");
    assert!(
        debug.starts_with("LegacyServer { config: ServerConfig {"),
        "{debug}"
    );
    assert!(debug.contains("json_response: true"), "{debug}");
    assert!(debug.ends_with("sessions: 2 }"), "{debug}");
    assert!(server.terminate_session(&a).await);
    assert_eq!(server.session_ids().len(), 1);
}

/// Where the revision defines `MCP-Protocol-Version` (2025-06-18 on), a
/// request of a session without it is served at the session's version and
/// the header's absence is logged (debug); on 2025-03-26, which has no such
/// header, it is served without a word.
#[tokio::test]
async fn a_missing_version_header_is_noted_only_where_the_revision_defines_it() {
    use server_common::memory::{initialized_as, post_as};
    use tower::ServiceExt;

    for (version, noted) in [("2025-11-25", true), ("2025-03-26", false)] {
        let both =
            config().with_versions([ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_03_26]);
        let server = server(both);
        let session = initialized_as(&server, version).await;
        let (logged, _guard) = Logged::install();
        let ping = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let mut request = post_as(version, &ping, Some(&session));
        request.headers_mut().remove("mcp-protocol-version");
        let response = server.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), 200, "{version}");
        let lines = logged.take(Level::DEBUG);
        let said = lines
            .iter()
            .any(|l| l.starts_with("request without MCP-Protocol-Version"));
        assert_eq!(said, noted, "{version}: {lines:?}");
    }
}
