//! `RedisLeaseStore` against a real `redis-server` passes the same
//! `LeaseStore` suite as the in-memory store; its leases lapse by Redis's
//! clock.

use std::sync::Arc;
use std::time::Duration;

use mcp_store_redis::{RedisConnection, RedisConnectionConfig, RedisLeaseStore};
use mcp_test_support::conformance::lease_store::LeaseStoreMaker;
use mcp_test_support::{RedisServer, within};
use mcp_transport_core::lease::{LeaseError, LeaseStore};

mod common;
use common::Redis;

#[async_trait::async_trait]
impl LeaseStoreMaker for Redis {
    async fn make(&self) -> Arc<dyn LeaseStore> {
        let conn = self.conn().await;
        Arc::new(RedisLeaseStore::new(conn))
    }

    fn short_ttl(&self) -> Duration {
        Duration::from_millis(150)
    }

    /// Polls until the lease reads lapsed (bounded by `within`, which only
    /// keeps a broken store from hanging the test).
    async fn lapse(&self, store: &dyn LeaseStore, holder: &str, key: &str) {
        within("the lease lapses", async {
            loop {
                let l = store.get(key).await.unwrap().expect("the lease exists");
                assert_eq!(l.holder, holder);
                if !l.held {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
    }
}

mod suite {
    mcp_test_support::lease_store_suite!(super::Redis::start());
}

/// A lease's key lives its TTL plus `LEASE_KEEP` (24 h) past each write, so
/// that a lapsed lease (and the data a successor needs) stays readable for
/// a day.
#[tokio::test]
async fn a_lapsed_lease_stays_readable_for_a_day() {
    let redis = RedisServer::start();
    let conn = RedisConnection::connect(&RedisConnectionConfig::new(redis.url()))
        .await
        .unwrap();
    let s = RedisLeaseStore::new(conn);
    let day_ms: i64 = 24 * 60 * 60 * 1000;
    assert!(
        s.acquire("k", "a", "d", Duration::from_millis(150))
            .await
            .unwrap()
    );
    let ttl: i64 = redis
        .command("PTTL mcp:lease:{k}")
        .trim_start_matches(':')
        .parse()
        .unwrap();
    assert!(ttl > day_ms && ttl <= day_ms + 150, "{ttl} ms");
    assert!(s.renew("k", "a", Duration::from_secs(10)).await.unwrap());
    let ttl: i64 = redis
        .command("PTTL mcp:lease:{k}")
        .trim_start_matches(':')
        .parse()
        .unwrap();
    assert!(ttl > day_ms + 9_000 && ttl <= day_ms + 10_000, "{ttl} ms");
}

/// A lease record the script did not write (a holder without data, left
/// by another program under the prefix) is a backend error naming the
/// reply, not a lease with empty data.
#[tokio::test]
async fn a_lease_record_without_data_is_a_backend_error() {
    let redis = RedisServer::start();
    let conn = RedisConnection::connect(&RedisConnectionConfig::new(redis.url()))
        .await
        .unwrap();
    let s = RedisLeaseStore::new(conn);
    assert_eq!(redis.command("HSET mcp:lease:{k} h a u 1"), ":2");
    for got in [
        s.get("k").await,
        s.take_over("k", "b", Duration::from_secs(1)).await,
    ] {
        match got {
            Err(LeaseError::Backend(e)) => {
                assert!(e.to_string().contains("unexpected reply"), "{e}");
            }
            other => panic!("{other:?}"),
        }
    }
}
