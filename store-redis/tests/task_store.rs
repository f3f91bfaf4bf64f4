//! `RedisTaskStore` against a real `redis-server` passes the same
//! `TaskStore` suite as the in-memory store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_store_redis::{RedisConnection, RedisConnectionConfig, RedisTaskStore};
use mcp_test_support::RedisServer;
use mcp_test_support::conformance::task_store::TaskStoreMaker;
use mcp_transport_core::task_store::{MemoryTaskStoreConfig, TaskStore};

/// One server per test; each store it makes gets its own key prefix.
struct Redis {
    server: RedisServer,
    next: AtomicU64,
}

impl Redis {
    fn start() -> Redis {
        Redis {
            server: RedisServer::start(),
            next: AtomicU64::new(0),
        }
    }
}

#[async_trait::async_trait]
impl TaskStoreMaker for Redis {
    async fn make(&self, limits: MemoryTaskStoreConfig) -> Arc<dyn TaskStore> {
        let mut config = RedisConnectionConfig::new(self.server.url());
        config.prefix = format!("t{}", self.next.fetch_add(1, Ordering::Relaxed));
        let conn = RedisConnection::connect(&config).await.unwrap();
        Arc::new(RedisTaskStore::new(conn, limits))
    }
}

mod suite {
    mcp_test_support::task_store_suite!(super::Redis::start());
}
