//! Every client configuration against every server configuration, with the
//! outcome the spec's compatibility matrix predicts (2026-07-28
//! *Versioning*, "Compatibility Matrix", and each legacy revision's
//! *Lifecycle*, "Version Negotiation").
//!
//! Expected outcomes are written out per cell, not computed:
//! * a legacy client offers its newest revision in `initialize`; the server
//!   answers it when supported, else its own newest legacy revision; the
//!   client accepts only a revision it has (*Lifecycle*, "Version
//!   Negotiation"). So a single-revision legacy client works only where
//!   its revision is served;
//! * Legacy client vs modern-only server: fails ("Legacy | Modern | Fails");
//! * Modern client vs legacy server: fails ("Modern | Legacy | Fails");
//! * Dual-era client vs modern: modern; vs legacy: falls back to
//!   `initialize` ("Dual-era | Legacy | Works");
//! * Legacy client vs dual-era server: works at the negotiated legacy
//!   revision ("Legacy | Dual-era | Works").

mod support;

use mcp_negotiate::client::{NegotiateConfig, NegotiateError, connect};
use mcp_test_support::client::answer;
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::Transport;
use serde_json::json;

const C_0326: &[V] = &[V::V2025_03_26];
const C_0618: &[V] = &[V::V2025_06_18];
const C_1125: &[V] = &[V::V2025_11_25];
const C_MODERN: &[V] = &[V::V2026_07_28];
const C_LEGACY: &[V] = &[V::V2025_11_25, V::V2025_06_18, V::V2025_03_26];
const C_ALL: &[V] = &[
    V::V2026_07_28,
    V::V2025_11_25,
    V::V2025_06_18,
    V::V2025_03_26,
];

const S_0326: &[V] = &[V::V2025_03_26];
const S_0618: &[V] = &[V::V2025_06_18];
const S_1125: &[V] = &[V::V2025_11_25];
const S_0728: &[V] = &[V::V2026_07_28];
const S_LEGACY: &[V] = &[V::V2025_03_26, V::V2025_06_18, V::V2025_11_25];
const S_ALL: &[V] = &[
    V::V2025_03_26,
    V::V2025_06_18,
    V::V2025_11_25,
    V::V2026_07_28,
];

async fn run_cell(client: &[V], server: &[V], expected: Option<V>) {
    let running = support::spawn(server).await;
    let outcome =
        connect(NegotiateConfig::new(running.url.clone()).with_revisions(client.to_vec())).await;
    match (outcome, expected) {
        (Ok(conn), Some(want)) => {
            let n = conn.negotiated();
            eprintln!("negotiated {}: {}", n.revision, n.reason);
            assert_eq!(n.revision, want, "chosen revision; reason: {}", n.reason);
            assert_eq!(n.era, want.era());
            assert!(!n.reason.is_empty());
            // The connection works: one tool call.
            let params = to_raw(&json!({ "name": "echo", "arguments": { "text": "hi" } })).unwrap();
            let resp = answer(&conn, "tools/call", Some(params)).await.unwrap();
            let result = resp.payload.expect("tool call result");
            assert!(result.get().contains("\"hi\""), "{}", result.get());
            conn.close().await.unwrap();
        }
        (
            Err(NegotiateError::NoMatch {
                offered, answers, ..
            }),
            None,
        ) => {
            eprintln!("no match: {}", answers.join("; "));
            assert_eq!(offered, client);
            assert!(!answers.is_empty());
            let text = answers.join("; ");
            // The error names what the server answered.
            assert!(
                server.iter().any(|v| text.contains(v.as_str())) || text.contains("HTTP 4"),
                "answers should say what the server speaks: {text}"
            );
        }
        (Ok(conn), None) => panic!(
            "expected no mutual revision, but negotiated {} ({})",
            conn.revision(),
            conn.negotiated().reason
        ),
        (Err(e), want) => panic!("expected {want:?}, got error: {e}"),
    }
}

macro_rules! cells {
    ($($name:ident: $client:ident x $server:ident => $expected:expr;)*) => {
        $(
            #[tokio::test]
            async fn $name() {
                run_cell($client, $server, $expected).await;
            }
        )*
    };
}

const NONE: Option<V> = None;
const fn v(x: V) -> Option<V> {
    Some(x)
}

cells! {
    c0326_x_s0326: C_0326 x S_0326 => v(V::V2025_03_26);
    c0326_x_s0618: C_0326 x S_0618 => NONE;
    c0326_x_s1125: C_0326 x S_1125 => NONE;
    c0326_x_s0728: C_0326 x S_0728 => NONE;
    c0326_x_slegacy: C_0326 x S_LEGACY => v(V::V2025_03_26);
    c0326_x_sall: C_0326 x S_ALL => v(V::V2025_03_26);

    c0618_x_s0326: C_0618 x S_0326 => NONE;
    c0618_x_s0618: C_0618 x S_0618 => v(V::V2025_06_18);
    c0618_x_s1125: C_0618 x S_1125 => NONE;
    c0618_x_s0728: C_0618 x S_0728 => NONE;
    c0618_x_slegacy: C_0618 x S_LEGACY => v(V::V2025_06_18);
    c0618_x_sall: C_0618 x S_ALL => v(V::V2025_06_18);

    c1125_x_s0326: C_1125 x S_0326 => NONE;
    c1125_x_s0618: C_1125 x S_0618 => NONE;
    c1125_x_s1125: C_1125 x S_1125 => v(V::V2025_11_25);
    c1125_x_s0728: C_1125 x S_0728 => NONE;
    c1125_x_slegacy: C_1125 x S_LEGACY => v(V::V2025_11_25);
    c1125_x_sall: C_1125 x S_ALL => v(V::V2025_11_25);

    cmodern_x_s0326: C_MODERN x S_0326 => NONE;
    cmodern_x_s0618: C_MODERN x S_0618 => NONE;
    cmodern_x_s1125: C_MODERN x S_1125 => NONE;
    cmodern_x_s0728: C_MODERN x S_0728 => v(V::V2026_07_28);
    cmodern_x_slegacy: C_MODERN x S_LEGACY => NONE;
    cmodern_x_sall: C_MODERN x S_ALL => v(V::V2026_07_28);

    clegacy_x_s0326: C_LEGACY x S_0326 => v(V::V2025_03_26);
    clegacy_x_s0618: C_LEGACY x S_0618 => v(V::V2025_06_18);
    clegacy_x_s1125: C_LEGACY x S_1125 => v(V::V2025_11_25);
    clegacy_x_s0728: C_LEGACY x S_0728 => NONE;
    clegacy_x_slegacy: C_LEGACY x S_LEGACY => v(V::V2025_11_25);
    clegacy_x_sall: C_LEGACY x S_ALL => v(V::V2025_11_25);

    call_x_s0326: C_ALL x S_0326 => v(V::V2025_03_26);
    call_x_s0618: C_ALL x S_0618 => v(V::V2025_06_18);
    call_x_s1125: C_ALL x S_1125 => v(V::V2025_11_25);
    call_x_s0728: C_ALL x S_0728 => v(V::V2026_07_28);
    call_x_slegacy: C_ALL x S_LEGACY => v(V::V2025_11_25);
    call_x_sall: C_ALL x S_ALL => v(V::V2026_07_28);
}
