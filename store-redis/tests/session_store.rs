//! `RedisSessionStore` against a real `redis-server` passes the same
//! `SessionStore` suite as the in-memory store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_store_redis::{RedisConnection, RedisConnectionConfig, RedisSessionStore};
use mcp_test_support::RedisServer;
use mcp_test_support::conformance::session_store::SessionStoreMaker;
use mcp_transport_core::session_store::{MemorySessionStoreConfig, SessionStore};

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
impl SessionStoreMaker for Redis {
    async fn make(&self, limits: MemorySessionStoreConfig) -> Arc<dyn SessionStore> {
        let mut config = RedisConnectionConfig::new(self.server.url());
        config.prefix = format!("t{}", self.next.fetch_add(1, Ordering::Relaxed));
        let conn = RedisConnection::connect(&config).await.unwrap();
        Arc::new(RedisSessionStore::new(conn, limits))
    }
}

mod suite {
    mcp_test_support::session_store_suite!(super::Redis::start());
}
