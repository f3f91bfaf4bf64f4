//! A cross-section of the compatibility matrix run by `cargo test`: one
//! cell per era pairing and failure mode (the main job, `mcp-compat
//! matrix`, runs all of them). Every scenario of these cells must match the
//! spec's prediction, and together they must show each kind of outcome
//! (works, fails as predicted, absent where the revision lacks the
//! mechanism), so that a prediction or a scenario check that goes wrong in
//! the matrix's own code turns this test red, not only the main job.

use mcp_compat::matrix::{
    ClientKind as C, Expected, Scenario, ServerKind as S, run::Observed, run_matrix,
};
use mcp_http_edge::faults::Faults;

const CELLS: [(C, S); 8] = [
    // Dual-era on both sides: 2026-07-28 with tasks.
    (C::All, S::All),
    // A dual-era client falls back to initialize on a legacy server.
    (C::All, S::Legacy),
    // The deprecated HTTP+SSE transport.
    (C::All, S::S1105),
    // 2025-03-26 (batches) on a server of every revision.
    (C::C0326, S::All),
    // A future version first: -32022, then 2026-07-28.
    (C::Future, S::S0728),
    // The two cross-era failures of the compatibility matrix.
    (C::Modern, S::S1125),
    (C::Legacy, S::S0728),
    // Two instances sharing their state behind a balancer.
    (C::C1125, S::Cluster),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_section_of_the_matrix_matches_the_spec() {
    let cells = run_matrix(
        |c, s, _| CELLS.contains(&(c, s)),
        CELLS.len(),
        Faults::default(),
        |_| {},
    )
    .await;
    assert_eq!(cells.len(), CELLS.len());
    let mut kinds = [false; 3];
    for cell in &cells {
        assert_eq!(cell.scenarios.len(), Scenario::ALL.len(), "{}", cell.client);
        for s in &cell.scenarios {
            assert!(s.passed(), "{}", s.explain());
            let kind = match (&s.prediction.expected, &s.observed) {
                (Expected::Works, Observed::Works(_)) => 0,
                (Expected::Fails(_), Observed::Failed { kind: Some(_), .. }) => 1,
                (Expected::NotApplicable, Observed::Absent(_)) => 2,
                other => panic!("a passing scenario observed {other:?}"),
            };
            kinds[kind] = true;
        }
    }
    assert_eq!(kinds, [true; 3], "works, fails, absent");
}

/// A server without the standalone GET stream (`s-legacy-405`, which the
/// cross-section above leaves out): `changes` must report the stream absent
/// after the 405, on every legacy revision, and `get_405` must see the 405.
/// Only the full matrix reached these branches before.
#[tokio::test]
async fn a_server_without_the_get_stream_is_absent_not_failed() {
    use mcp_compat::matrix::run::run_one;
    for client in [C::C0326, C::C0618, C::C1125] {
        for scenario in [Scenario::Changes, Scenario::Get405] {
            let r = run_one(client, S::Legacy405, scenario).await;
            assert!(r.passed(), "{}", r.explain());
            let detail = match (&r.observed, scenario) {
                (Observed::Absent(d), Scenario::Changes)
                | (Observed::Works(d), Scenario::Get405) => d,
                other => panic!("{client} / {scenario}: {other:?}"),
            };
            assert!(detail.contains("405"), "{detail}");
        }
    }
}
