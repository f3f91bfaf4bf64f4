//! The matrix can fail: two injected bugs (one in the 2025-11-25 server,
//! one in the 2026-07-28 server) each turn a cell red in a scenario meant
//! to catch it, while the same cells are green without them.
//! `mcp-compat matrix --self-test` runs every fault.

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
