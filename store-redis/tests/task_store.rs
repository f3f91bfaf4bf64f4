//! `RedisTaskStore` against a real `redis-server` passes the same
//! `TaskStore` suite as the in-memory store.

use std::sync::Arc;

use mcp_store_redis::RedisTaskStore;
use mcp_test_support::conformance::task_store::TaskStoreMaker;
use mcp_transport_core::task_store::{MemoryTaskStoreConfig, TaskStore};

mod common;
use common::Redis;

#[async_trait::async_trait]
impl TaskStoreMaker for Redis {
    async fn make(&self, limits: MemoryTaskStoreConfig) -> Arc<dyn TaskStore> {
        let conn = self.conn().await;
        Arc::new(RedisTaskStore::new(conn, limits))
    }
}

mod suite {
    mcp_test_support::task_store_suite!(super::Redis::start());
}
