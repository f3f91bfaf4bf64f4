//! What the store test targets share: one `redis-server` per test, and a
//! connection on a key prefix of its own for each store a test makes (so
//! the stores of one test never see each other's keys).

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_store_redis::{RedisConnection, RedisConnectionConfig};
use mcp_test_support::RedisServer;

/// One server per test; each store it makes gets its own key prefix.
pub struct Redis {
    /// The server.
    pub server: RedisServer,
    next: AtomicU64,
}

impl Redis {
    /// Starts the test's server.
    pub fn start() -> Redis {
        Redis {
            server: RedisServer::start(),
            next: AtomicU64::new(0),
        }
    }

    /// A connection to the server on a key prefix no other store of this
    /// test uses.
    pub async fn conn(&self) -> RedisConnection {
        let mut config = RedisConnectionConfig::new(self.server.url());
        config.prefix = format!("t{}", self.next.fetch_add(1, Ordering::Relaxed));
        RedisConnection::connect(&config).await.unwrap()
    }
}
