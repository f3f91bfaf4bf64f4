//! `RedisEventStore` against a real `redis-server` passes the same
//! `EventStore` suite as the in-memory store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_store_redis::{
    RedisConnection, RedisConnectionConfig, RedisEventStore, RedisEventStoreConfig,
};
use mcp_test_support::RedisServer;
use mcp_test_support::conformance::event_store::EventStoreMaker;
use mcp_transport_core::event_log::{EventStore, MemoryEventStoreConfig};

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
impl EventStoreMaker for Redis {
    async fn make(&self, limits: MemoryEventStoreConfig) -> Arc<dyn EventStore> {
        let mut config = RedisConnectionConfig::new(self.server.url());
        config.prefix = format!("t{}", self.next.fetch_add(1, Ordering::Relaxed));
        let conn = RedisConnection::connect(&config).await.unwrap();
        Arc::new(RedisEventStore::new(
            conn,
            RedisEventStoreConfig {
                limits,
                ..Default::default()
            },
        ))
    }
}

mod suite {
    mcp_test_support::event_store_suite!(super::Redis::start());
}
