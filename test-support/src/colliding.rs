//! [`Colliding`]: an in-memory task store whose first creates answer
//! `Exists`, as if the minted task id were already taken — for the tests
//! of both revisions' tasks that a taken id is minted again, a bounded
//! number of times.

use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use mcp_transport_core::task_store::{
    Changed, MemoryTaskStore, NewTask, TaskChange, TaskPage, TaskRecord, TaskStore, TaskStoreError,
};

/// Answers `Exists` to the next `n` creates, then stores as
/// [`MemoryTaskStore`] does; every other method is the memory store's.
pub struct Colliding {
    inner: MemoryTaskStore,
    collide: AtomicUsize,
}

impl Colliding {
    /// A store whose next `n` creates collide.
    pub fn new(n: usize) -> Self {
        Colliding {
            inner: MemoryTaskStore::default(),
            collide: AtomicUsize::new(n),
        }
    }

    /// How many collisions are still to come.
    pub fn left(&self) -> usize {
        self.collide.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl TaskStore for Colliding {
    async fn create(&self, task: NewTask, now_ms: u64) -> Result<TaskRecord, TaskStoreError> {
        let taken = self
            .collide
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if taken {
            return Err(TaskStoreError::Exists { id: task.id });
        }
        self.inner.create(task, now_ms).await
    }

    async fn get(
        &self,
        id: &str,
        scope: Option<&str>,
        now_ms: u64,
    ) -> Result<TaskRecord, TaskStoreError> {
        self.inner.get(id, scope, now_ms).await
    }

    async fn change(
        &self,
        id: &str,
        change: TaskChange<'_>,
        now_ms: u64,
    ) -> Result<Changed, TaskStoreError> {
        self.inner.change(id, change, now_ms).await
    }

    async fn purge_expired(&self, now_ms: u64) -> Result<usize, TaskStoreError> {
        self.inner.purge_expired(now_ms).await
    }

    async fn list(
        &self,
        scope: &str,
        cursor: Option<&str>,
        limit: usize,
        now_ms: u64,
    ) -> Result<TaskPage, TaskStoreError> {
        self.inner.list(scope, cursor, limit, now_ms).await
    }
}
