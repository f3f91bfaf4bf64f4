//! The `s-cluster` column over a real three-master Redis Cluster
//! (test-support's `RedisCluster`, the stores' `redis+cluster://` layout):
//! what `mcp-compat matrix --store redis+cluster://…` runs, through the
//! library (`cluster::set_store`). Two rows, every scenario: `c-all`
//! (2026-07-28: MRTR rounds, tasks, `subscriptions/listen` across the
//! instances) and `c-legacy` (2025-11-25: sessions adopted, resumes
//! followed from the other instance, cancels and answers signalled, the
//! experimental tasks and their `tasks/list`), with the predictions of
//! `s-all`, as over one Redis (`tests/matrix_cluster_redis.rs`).

use mcp_compat::matrix::cluster;
use mcp_compat::matrix::run::run_one;
use mcp_compat::matrix::{ClientKind, Scenario, ServerKind};
use mcp_test_support::RedisCluster;

async fn row(url: &str, client: ClientKind) {
    cluster::set_store(url).unwrap();
    assert_eq!(ServerKind::Cluster.name(), "s-cluster-redis");
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
async fn the_cluster_column_over_a_redis_cluster_matches_for_c_all_and_c_legacy() {
    let redis = RedisCluster::start();
    let url = redis.url();
    tokio::join!(row(&url, ClientKind::All), row(&url, ClientKind::Legacy));
}
