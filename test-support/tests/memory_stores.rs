//! The in-memory stores pass the store traits' shared suites (the Redis
//! store runs the same ones in `store-redis/tests/`).

use std::sync::Arc;

use mcp_test_support::conformance::event_store::EventStoreMaker;
use mcp_test_support::conformance::session_store::SessionStoreMaker;
use mcp_test_support::conformance::task_store::TaskStoreMaker;
use mcp_transport_core::event_log::{EventStore, MemoryEventStore, MemoryEventStoreConfig};
use mcp_transport_core::session_store::{
    MemorySessionStore, MemorySessionStoreConfig, SessionStore,
};
use mcp_transport_core::task_store::{MemoryTaskStore, MemoryTaskStoreConfig, TaskStore};

struct Memory;

#[async_trait::async_trait]
impl EventStoreMaker for Memory {
    async fn make(&self, limits: MemoryEventStoreConfig) -> Arc<dyn EventStore> {
        Arc::new(MemoryEventStore::new(limits))
    }
}

mod event_store {
    mcp_test_support::event_store_suite!(super::Memory);
}

#[async_trait::async_trait]
impl TaskStoreMaker for Memory {
    async fn make(&self, limits: MemoryTaskStoreConfig) -> Arc<dyn TaskStore> {
        Arc::new(MemoryTaskStore::new(limits))
    }
}

mod task_store {
    mcp_test_support::task_store_suite!(super::Memory);
}

#[async_trait::async_trait]
impl SessionStoreMaker for Memory {
    async fn make(&self, limits: MemorySessionStoreConfig) -> Arc<dyn SessionStore> {
        Arc::new(MemorySessionStore::new(limits))
    }
}

mod session_store {
    mcp_test_support::session_store_suite!(super::Memory);
}
