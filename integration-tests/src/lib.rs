//! The compatibility matrix as named tests: `tests/matrix.rs` has one test
//! per client configuration × server configuration × scenario
//! (`c_all::s_2025_11_25::network_drop`), each checking that what happens is
//! what the spec predicts (`mcp_compat::matrix::expect`). Run them with
//! `cargo test -p integration-tests`; `mcp-compat matrix` runs the same
//! cells and prints the table.

use mcp_compat::matrix::run::run_one;
use mcp_compat::matrix::{ClientKind, Scenario, ServerKind};

/// Runs one scenario of one cell and fails with the explanation on mismatch.
pub async fn check(client: ClientKind, server: ServerKind, scenario: Scenario) {
    let result = run_one(client, server, scenario).await;
    assert!(result.passed(), "{}", result.explain());
}
