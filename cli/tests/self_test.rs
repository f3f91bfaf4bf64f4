//! The matrix can fail: injected bugs in the 2025-11-25 and 2026-07-28
//! servers each turn a cell red in a scenario meant to catch it, while the
//! same cells are green without them. `mcp-compat matrix --self-test` runs
//! every fault.

use mcp_compat::matrix::selftest;
use mcp_http_edge::faults::Fault;

#[tokio::test]
async fn skip_priming_and_minted_session_ids_are_caught() {
    let report = selftest::run(&[Fault::SkipPriming, Fault::MintSessionId], |_| {}).await;
    assert!(report.passed(), "{}", report.render());
    let caught: Vec<Vec<String>> = report.runs.iter().map(|r| r.caught_by()).collect();
    // A missing priming event breaks SEP-1699 polling and leaves a silent
    // long call with no id to resume from.
    assert!(
        caught[0]
            .iter()
            .all(|c| c.ends_with("/ disconnect") || c.ends_with("/ long_running_drop")),
        "{caught:?}"
    );
    assert!(
        caught[0].iter().any(|c| c.ends_with("/ long_running_drop")),
        "{caught:?}"
    );
    assert!(!report.baseline.is_empty());
}

/// The session rules (DELETE ends the session, an ended session is 404),
/// the listen filter and the era cache: the scenarios that state them
/// (`delete`, `expiry`, `changes`, `era_cache`) read them off the wire,
/// where a client that hides a stray notification cannot mask it.
#[tokio::test]
async fn kept_sessions_400s_unfiltered_listens_and_an_unused_cache_are_caught() {
    let faults = [
        Fault::KeepDeletedSession,
        Fault::GoneSession400,
        Fault::ListenUnfiltered,
        Fault::ClientIgnoresEraCache,
    ];
    let report = selftest::run(&faults, |_| {}).await;
    assert!(report.passed(), "{}", report.render());
    let caught: Vec<Vec<String>> = report.runs.iter().map(|r| r.caught_by()).collect();
    // Every legacy revision's DELETE.
    assert_eq!(caught[0].len(), 3, "{caught:?}");
    assert!(
        caught[0].iter().all(|c| c.ends_with("/ delete")),
        "{caught:?}"
    );
    // Both the expiry (the client cannot tell a 400 from a failure) and
    // the request after DELETE.
    assert!(
        caught[1].iter().any(|c| c.ends_with("/ expiry")),
        "{caught:?}"
    );
    assert!(
        caught[1].iter().any(|c| c.ends_with("/ delete")),
        "{caught:?}"
    );
    assert_eq!(caught[2].len(), 2, "{caught:?}");
    assert!(
        caught[2].iter().all(|c| c.ends_with("/ changes")),
        "{caught:?}"
    );
    assert_eq!(caught[3].len(), 2, "{caught:?}");
    assert!(
        caught[3].iter().all(|c| c.ends_with("/ era_cache")),
        "{caught:?}"
    );
}
