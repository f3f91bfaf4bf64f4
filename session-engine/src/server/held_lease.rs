//! [`HeldLease`]: a lease this instance holds on a stream it writes (taken
//! and renewed by `lease.rs`, kept in the stream's state until it
//! finishes). Its own module so the stream state does not depend on the
//! lease logic, which depends on the stream state.

use mcp_transport_core::jsonrpc::RequestId;
use mcp_transport_core::lease::Leases;
use tokio::task::AbortHandle;

/// A lease this instance holds on a stream it writes; released when the
/// stream finishes (`StreamState::finish`).
#[derive(Debug)]
pub(crate) struct HeldLease {
    leases: Leases,
    key: String,
    /// The requests on the stream (the lease's data); empty for a
    /// standalone stream.
    ids: Vec<RequestId>,
    renewer: AbortHandle,
}

impl HeldLease {
    /// A lease taken on `key` for the requests `ids`, kept alive by the
    /// task behind `renewer`.
    pub fn new(leases: Leases, key: String, ids: Vec<RequestId>, renewer: AbortHandle) -> Self {
        HeldLease {
            leases,
            key,
            ids,
            renewer,
        }
    }

    /// The requests on the stream.
    pub fn ids(&self) -> &[RequestId] {
        &self.ids
    }

    /// Stops renewing and deletes the lease.
    pub async fn release(self) {
        self.renewer.abort();
        if let Err(e) = self
            .leases
            .store
            .release(&self.key, &self.leases.holder)
            .await
        {
            tracing::debug!(lease = %self.key, error = %e, "could not release a lease; it will lapse");
        }
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        self.renewer.abort();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use mcp_transport_core::lease::{Leases, MemoryLeaseStore};

    use super::HeldLease;

    /// A lease dropped without [`HeldLease::release`] (its stream state
    /// gone without finishing) stops its renewer: a lease no one writes
    /// under lapses instead of being renewed for as long as the session
    /// lives.
    #[tokio::test]
    async fn dropping_a_held_lease_stops_its_renewer() {
        let leases = Leases::new(Arc::new(MemoryLeaseStore::default()));
        let renewer = tokio::spawn(std::future::pending::<()>());
        let held = HeldLease::new(leases, "k".into(), Vec::new(), renewer.abort_handle());
        assert!(held.ids().is_empty());
        drop(held);
        let ended = tokio::time::timeout(std::time::Duration::from_secs(5), renewer)
            .await
            .expect("the renewer was stopped")
            .expect_err("cancelled, not finished");
        assert!(ended.is_cancelled());
    }
}
