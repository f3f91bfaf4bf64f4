//! A task whose worker ran on another instance that then died: the state
//! two instances sharing a task store and a lease store would leave, made
//! directly in the stores, for the liveness tests of both revisions'
//! tasks (`mcp_transport_core::task_store::liveness`).

use std::sync::Arc;
use std::time::Duration;

use mcp_transport_core::lease::{LeaseStore, Leases, MemoryLeaseStore};
use mcp_transport_core::task_store::{NewTask, TaskStore, now_ms};

/// The holder name of the instance that dies.
pub const DEAD: &str = "instance-a";

/// Shared stores, as a second instance ("instance-b", the server under
/// test) would see them.
pub struct Orphans {
    /// The task store both instances share.
    pub store: Arc<dyn TaskStore>,
    /// The lease store both instances share.
    pub leases: Arc<MemoryLeaseStore>,
}

impl Orphans {
    /// Fresh in-memory stores.
    pub fn new() -> Self {
        Orphans {
            store: Arc::new(mcp_transport_core::task_store::MemoryTaskStore::default()),
            leases: Arc::new(MemoryLeaseStore::default()),
        }
    }

    /// The server under test's [`Leases`]: holder `holder`, in the shared
    /// lease store.
    pub fn leases_for(&self, holder: &str) -> Leases {
        Leases {
            holder: holder.to_owned(),
            ..Leases::new(self.leases.clone() as Arc<dyn LeaseStore>)
        }
    }

    /// A `working` task `id` visible to `scope` whose worker runs on
    /// [`DEAD`] (its lease held, until [`die`](Self::die)).
    ///
    /// # Panics
    ///
    /// When a store refuses.
    pub async fn task(&self, id: &str, scope: Option<String>) {
        self.store
            .create(
                NewTask {
                    id: id.to_owned(),
                    scope,
                    ttl_ms: Some(60_000),
                    poll_interval_ms: None,
                    status_message: None,
                },
                now_ms(),
            )
            .await
            .expect("the task is stored");
        let held = self
            .leases
            .acquire(&Leases::task_key(id), DEAD, "", Duration::from_secs(60))
            .await
            .expect("the lease store answers");
        assert!(held, "the worker's lease is new");
    }

    /// [`DEAD`] dies: its leases lapse. Returns how many.
    pub fn die(&self) -> usize {
        self.leases.lapse_holder(DEAD)
    }
}

impl Default for Orphans {
    fn default() -> Self {
        Self::new()
    }
}
