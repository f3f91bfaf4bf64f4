//! The in-memory stores pass the store traits' shared suites (the Redis
//! store runs the same ones in `store-redis/tests/`).

use std::sync::Arc;

use mcp_test_support::conformance::event_store::EventStoreMaker;
use mcp_test_support::conformance::lease_store::LeaseStoreMaker;
use mcp_test_support::conformance::session_store::SessionStoreMaker;
use mcp_test_support::conformance::task_store::TaskStoreMaker;
use mcp_transport_core::event_log::{EventStore, MemoryEventStore, MemoryEventStoreConfig};
use mcp_transport_core::lease::{LeaseStore, MemoryLeaseStore};
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

/// Makes [`MemoryLeaseStore`]s and remembers the last, to tell it which
/// holder "died".
#[derive(Default)]
struct MemoryLeases {
    last: std::sync::Mutex<Option<Arc<MemoryLeaseStore>>>,
}

#[async_trait::async_trait]
impl LeaseStoreMaker for MemoryLeases {
    async fn make(&self) -> Arc<dyn LeaseStore> {
        let s = Arc::new(MemoryLeaseStore::default());
        *self.last.lock().unwrap() = Some(s.clone());
        s
    }

    fn short_ttl(&self) -> std::time::Duration {
        std::time::Duration::from_secs(1)
    }

    async fn lapse(&self, _store: &dyn LeaseStore, holder: &str, _key: &str) {
        let s = self.last.lock().unwrap().clone().unwrap();
        assert!(s.lapse_holder(holder) > 0);
    }
}

mod lease_store {
    mcp_test_support::lease_store_suite!(super::MemoryLeases::default());

    /// The in-process store never lets a lease lapse by itself, and is
    /// bounded.
    #[tokio::test]
    async fn memory_leases_never_lapse_by_themselves_and_are_bounded() {
        use mcp_transport_core::lease::{LeaseError, LeaseStore, MemoryLeaseStore};
        use std::time::Duration;
        let s = MemoryLeaseStore::new(2);
        assert!(s.acquire("a", "h", "", Duration::ZERO).await.unwrap());
        assert!(s.acquire("b", "h", "", Duration::ZERO).await.unwrap());
        assert!(matches!(
            s.acquire("c", "h", "", Duration::ZERO).await,
            Err(LeaseError::Full { max: 2 })
        ));
        assert!(
            s.get("a").await.unwrap().unwrap().held,
            "a zero TTL is ignored"
        );
        assert_eq!(s.take_over("a", "x", Duration::ZERO).await.unwrap(), None);
        assert!(s.release("a", "h").await.unwrap());
        assert!(s.acquire("c", "h", "", Duration::ZERO).await.unwrap());
    }

    /// `cut_off` plays an instance's death: its leases lapse (counted),
    /// its calls fail naming it, another instance takes over; once
    /// reconnected its calls work again and it learns what it lost.
    /// `len` and `is_empty` count what is stored.
    #[tokio::test]
    async fn a_cut_off_holder_loses_its_leases_until_it_reconnects() {
        use mcp_transport_core::lease::{LeaseError, LeaseStore, MemoryLeaseStore};
        use std::time::Duration;
        let t = Duration::from_secs(1);
        let s = MemoryLeaseStore::default();
        assert_eq!((s.len(), s.is_empty()), (0, true));
        for key in ["a", "b"] {
            assert!(s.acquire(key, "dead", "", t).await.unwrap());
        }
        assert!(s.acquire("c", "alive", "", t).await.unwrap());
        assert_eq!((s.len(), s.is_empty()), (3, false));

        assert_eq!(s.cut_off("dead"), 2);
        let err = s.renew("a", "dead", t).await.unwrap_err();
        assert!(
            matches!(&err, LeaseError::Backend(e) if e.to_string().contains("holder dead is cut off")),
            "{err:?}"
        );
        assert!(s.acquire("d", "dead", "", t).await.is_err());
        assert!(s.release("b", "dead").await.is_err());
        assert!(s.take_over("c", "dead", t).await.is_err());
        assert!(s.renew("c", "alive", t).await.unwrap(), "others unaffected");
        let before = s.take_over("a", "alive", t).await.unwrap().unwrap();
        assert_eq!((before.holder.as_str(), before.held), ("dead", false));

        s.reconnect("dead");
        assert!(!s.renew("a", "dead", t).await.unwrap(), "a was taken over");
        assert!(s.renew("b", "dead", t).await.unwrap(), "b was not");
        assert!(s.get("b").await.unwrap().unwrap().held);
        assert_eq!(s.lapse_holder("alive"), 2);
        assert_eq!(s.len(), 3);
    }
}
