//! The `s-cluster` column over a real `redis-server` (test-support's
//! fixture): what `mcp-compat matrix --store redis://…` runs, through the
//! library (`cluster::set_store`). Two rows, every scenario: `c-all`
//! (2026-07-28: MRTR rounds, tasks, `subscriptions/listen` across the
//! instances) and `c-legacy` (2025-11-25: sessions adopted, resumes
//! followed from the other instance, cancels and answers signalled, the
//! experimental tasks). The in-process column runs in `tests/matrix.rs`.

use mcp_compat::matrix::cluster;
use mcp_compat::matrix::run::run_one;
use mcp_compat::matrix::{ClientKind, Scenario, ServerKind};
use mcp_test_support::RedisServer;

async fn row(redis: &RedisServer, client: ClientKind) {
    cluster::set_store(&redis.url()).unwrap();
    assert_eq!(ServerKind::Cluster.name(), "s-cluster-redis");
    // One scenario after the other, as the matrix runs a cell (the cuts of
    // the drop scenarios are timed against the work).
    let mut results = Vec::new();
    for s in Scenario::ALL {
        results.push(run_one(client, ServerKind::Cluster, s).await);
    }
    let failed: Vec<String> = results
        .iter()
        .filter(|r| !r.passed())
        .map(|r| r.explain())
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert_eq!(results.len(), Scenario::ALL.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_column_over_redis_matches_for_c_all_and_c_legacy() {
    let redis = RedisServer::start();
    tokio::join!(
        row(&redis, ClientKind::All),
        row(&redis, ClientKind::Legacy)
    );
}
