//! The in-memory stores pass the store traits' shared suites (the Redis
//! store runs the same ones in `store-redis/tests/`).

use std::sync::Arc;

use mcp_test_support::conformance::event_store::EventStoreMaker;
use mcp_transport_core::event_log::{EventStore, MemoryEventStore, MemoryEventStoreConfig};

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
