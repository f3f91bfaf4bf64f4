//! `mcp-compat peer-client URL SCENARIO REVISION`: our negotiating client
//! as a peer client program (the peer client contract, README "Peers"):
//! it runs one peer scenario against the server at URL and prints one JSON
//! outcome line. So `check-client` can check our own client, and a peer
//! manifest can list it as a client row beside the SDKs'.
//!
//! REVISION picks the client configuration: a revision offers only that
//! one (`c-2025-11-25`, ...), a configuration name is taken as it is
//! (`c-legacy`, `c-all`), and `auto` is the dual-era client (`c-all`), the
//! name `check-client --dual-era auto` passes.

use mcp_transport_core::ProtocolVersion;

use crate::matrix::ClientKind;
use crate::matrix::peers::ours::observe_at;
use crate::matrix::peers::outcome::to_client_line;
use crate::matrix::peers::scenario::PeerScenario;

/// The client configuration REVISION names, if any.
pub fn client_of(revision: &str) -> Option<ClientKind> {
    if revision == "auto" {
        return Some(ClientKind::All);
    }
    let wanted = ProtocolVersion::parse(revision);
    ClientKind::ALL
        .into_iter()
        .find(|c| c.revisions() == [wanted.clone()])
        .or_else(|| ClientKind::by_name(revision))
}

/// Runs the scenario and returns the outcome line (a scenario this client
/// does not know is `n/a`).
pub async fn run(url: &str, scenario: &str, revision: &str) -> Result<String, String> {
    let client = client_of(revision).ok_or_else(|| {
        format!("{revision:?} is neither a revision, a client configuration nor auto")
    })?;
    let Some(scenario) = PeerScenario::ALL.into_iter().find(|s| s.name() == scenario) else {
        return Ok(serde_json::json!({
            "outcome": "n/a",
            "reason": format!("unknown scenario {scenario}"),
        })
        .to_string());
    };
    let (negotiated, observed) = observe_at(client, url, scenario).await;
    Ok(to_client_line(negotiated.as_ref(), &observed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_names_a_client_configuration() {
        assert_eq!(client_of("2025-11-25"), Some(ClientKind::C1125));
        assert_eq!(client_of("2026-07-28"), Some(ClientKind::Modern));
        assert_eq!(client_of("2024-11-05"), Some(ClientKind::C1105));
        assert_eq!(client_of("auto"), Some(ClientKind::All));
        assert_eq!(client_of("c-legacy"), Some(ClientKind::Legacy));
        assert_eq!(client_of("2030-01-01"), None);
        // Only a configuration offering that one revision and no other.
        assert_eq!(client_of(crate::matrix::FUTURE_VERSION), None);
        assert_eq!(client_of("c-future"), Some(ClientKind::Future));
    }

    #[tokio::test]
    async fn an_unknown_scenario_is_not_applicable_and_a_bad_revision_an_error() {
        let line = run("http://127.0.0.1:9/mcp", "teleport", "auto")
            .await
            .expect("a line");
        let v: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(v["outcome"], "n/a");
        assert_eq!(v["reason"], "unknown scenario teleport");
        let err = run("http://127.0.0.1:9/mcp", "call", "soon")
            .await
            .expect_err("no such client");
        assert!(err.contains("\"soon\""), "{err}");
    }
}
