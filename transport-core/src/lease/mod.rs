//! Liveness across server instances: the [`LeaseStore`] trait, the
//! in-process [`MemoryLeaseStore`], and [`Leases`], the settings an engine
//! holds them with.
//!
//! Behind a load balancer a client may wait on a request through another
//! instance than the one running it: a `GET` with `Last-Event-ID` that
//! follows the request's stream in the shared event log, a `tasks/get` or
//! `tasks/result` on a task whose worker runs elsewhere. If the running
//! instance dies, nothing would ever be written again and the client would
//! wait forever. So the running instance holds a **lease** on the request:
//! a short-lived record it renews while it runs and releases at the end. An
//! instance serving a waiting client checks the lease; once it has
//! *lapsed* (not renewed within its TTL) the first instance to
//! [take it over](LeaseStore::take_over) — exactly one wins — ends the
//! request on the dead instance's behalf: a JSON-RPC error response
//! written to the stream, or the task `failed`.
//!
//! # Contract (for every implementation)
//!
//! * [`acquire`](LeaseStore::acquire) creates the lease `key` held by
//!   `holder` with opaque `data` (what a successor needs, e.g. the request
//!   ids); a key that exists (held, lapsed, or taken over) is refused.
//! * A lease is *held* while its holder renews it within `ttl`; otherwise
//!   it *lapses*. It stays readable, lapsed, with its data (so a successor
//!   can act on it) until released or long after.
//! * [`renew`](LeaseStore::renew) by the holder extends it (also a lapsed
//!   one nobody took over: the holder was only slow); by anyone else, or
//!   after a takeover or a release, it reports `false`: the lease is lost.
//! * [`take_over`](LeaseStore::take_over) succeeds only on a lapsed lease,
//!   atomically: of several instances trying at once exactly one gets the
//!   previous record; the lease is then held by the new holder.
//! * [`release`](LeaseStore::release) by the holder deletes it.
//!
//! Time is the store's own (one clock for every instance: Redis's, for the
//! Redis store). The in-process [`MemoryLeaseStore`] never lets a lease
//! lapse while the process lives — in one process a request's runner and
//! its waiters die together — except when a test says so
//! ([`MemoryLeaseStore::lapse_holder`]).

mod memory;

pub use memory::{DEFAULT_MAX_LEASES, MemoryLeaseStore};

use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::Duration;

use crate::event_log::BackendError;

/// A lease as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseInfo {
    /// Who holds (or held) it.
    pub holder: String,
    /// What its creator stored with it.
    pub data: String,
    /// `true` while renewed within its TTL; `false` once it has lapsed.
    pub held: bool,
}

/// Why a [`LeaseStore`] operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// The store holds its maximum number of leases.
    #[error("the lease store already holds its maximum of {max} leases")]
    Full {
        /// The configured maximum.
        max: usize,
    },
    /// The store's backend failed.
    #[error("lease store backend failed")]
    Backend(#[source] BackendError),
}

/// Storage for leases (see the [module documentation](self) for the
/// contract). Object safe; async so that a networked store can implement
/// it.
#[async_trait::async_trait]
pub trait LeaseStore: Send + Sync + 'static {
    /// Creates lease `key`, held by `holder` for `ttl`, with `data`.
    /// `Ok(false)` when the key exists.
    ///
    /// # Errors
    ///
    /// [`LeaseError::Full`], [`LeaseError::Backend`].
    async fn acquire(
        &self,
        key: &str,
        holder: &str,
        data: &str,
        ttl: Duration,
    ) -> Result<bool, LeaseError>;

    /// Extends `holder`'s lease by `ttl` from now. `Ok(false)`: the lease
    /// is not `holder`'s any more (taken over, released, or gone).
    ///
    /// # Errors
    ///
    /// [`LeaseError::Backend`].
    async fn renew(&self, key: &str, holder: &str, ttl: Duration) -> Result<bool, LeaseError>;

    /// Deletes `holder`'s lease; whether it was `holder`'s.
    ///
    /// # Errors
    ///
    /// [`LeaseError::Backend`].
    async fn release(&self, key: &str, holder: &str) -> Result<bool, LeaseError>;

    /// The lease, if it exists.
    ///
    /// # Errors
    ///
    /// [`LeaseError::Backend`].
    async fn get(&self, key: &str) -> Result<Option<LeaseInfo>, LeaseError>;

    /// Takes a lapsed lease over for `holder` (held for `ttl`), returning
    /// it as it was; `None` when it is held, or does not exist. Atomic:
    /// exactly one of several callers gets it.
    ///
    /// # Errors
    ///
    /// [`LeaseError::Backend`].
    async fn take_over(
        &self,
        key: &str,
        holder: &str,
        ttl: Duration,
    ) -> Result<Option<LeaseInfo>, LeaseError>;
}

/// The default [`Leases::ttl`]: 10 s.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(10);
/// The default [`Leases::renew_every`]: 3 s.
pub const DEFAULT_LEASE_RENEW: Duration = Duration::from_secs(3);

/// How a server holds leases: the store, its own holder name, the TTL and
/// the renewal interval. Cheap to clone.
///
/// The defaults (TTL 10 s, renewed every 3 s) let one renewal fail (a
/// Redis response timeout is 2 s by default) and the next still land before
/// the lease lapses, so a busy or briefly partitioned instance is not taken
/// for dead; a dead one is noticed by a waiting client's instance within
/// about TTL + one renewal interval (≈ 13 s). Shorter means faster
/// detection and more writes (one per running request per interval).
#[derive(Clone)]
pub struct Leases {
    /// Where leases live (shared by every instance).
    pub store: Arc<dyn LeaseStore>,
    /// This instance's name as a holder: unique per process.
    pub holder: String,
    /// How long a lease lives without renewal.
    pub ttl: Duration,
    /// How often a running request's lease is renewed, and how often an
    /// instance following another's request checks its lease. Keep it well
    /// under [`ttl`](Self::ttl).
    pub renew_every: Duration,
}

impl std::fmt::Debug for Leases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leases")
            .field("holder", &self.holder)
            .field("ttl", &self.ttl)
            .field("renew_every", &self.renew_every)
            .finish_non_exhaustive()
    }
}

impl Leases {
    /// Leases in `store` with the default timing and a fresh holder name.
    pub fn new(store: Arc<dyn LeaseStore>) -> Self {
        Leases {
            store,
            holder: fresh_holder(),
            ttl: DEFAULT_LEASE_TTL,
            renew_every: DEFAULT_LEASE_RENEW,
        }
    }

    /// Sets the TTL and the renewal interval.
    ///
    /// # Errors
    ///
    /// When `renew_every` is zero or not shorter than `ttl`.
    pub fn with_timing(mut self, ttl: Duration, renew_every: Duration) -> Result<Self, String> {
        if renew_every.is_zero() || renew_every >= ttl {
            return Err(format!(
                "a lease's renewal interval ({renew_every:?}) must be above zero and below its TTL ({ttl:?})"
            ));
        }
        self.ttl = ttl;
        self.renew_every = renew_every;
        Ok(self)
    }

    /// The lease key of stream `stream` of the session tagged `tag`.
    pub fn stream_key(tag: &impl std::fmt::Display, stream: &impl std::fmt::Display) -> String {
        format!("s:{tag}:{stream}")
    }

    /// The lease key of task `id`.
    pub fn task_key(id: &str) -> String {
        format!("t:{id}")
    }

    /// Renews `key` every [`renew_every`](Self::renew_every) (waiting with
    /// the caller's `sleep`) until the lease is lost — taken over by
    /// another instance, which then ends the work on this one's behalf —
    /// and returns then. A renewal that fails (the store out of reach) is
    /// retried at the next interval. Run it beside the work and stop the
    /// work when it returns.
    pub async fn keep<S, F>(&self, key: &str, sleep: S)
    where
        S: Fn(Duration) -> F,
        F: Future<Output = ()>,
    {
        loop {
            sleep(self.renew_every).await;
            if let Ok(false) = self.store.renew(key, &self.holder, self.ttl).await {
                return;
            }
        }
    }
}

/// A holder name unique to this process: its id and 64 random bits (std's
/// randomly seeded hasher, so no RNG crate is needed).
fn fresh_holder() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{}-{:016x}", std::process::id(), h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_must_renew_within_the_ttl() {
        let l = Leases::new(Arc::new(MemoryLeaseStore::default()));
        assert!(
            l.clone()
                .with_timing(Duration::from_secs(1), Duration::from_secs(1))
                .is_err()
        );
        assert!(
            l.clone()
                .with_timing(Duration::from_secs(1), Duration::ZERO)
                .is_err()
        );
        let l = l
            .with_timing(Duration::from_secs(1), Duration::from_millis(300))
            .unwrap();
        assert_eq!(l.renew_every, Duration::from_millis(300));
        let other = Leases::new(Arc::new(MemoryLeaseStore::default()));
        assert_ne!(l.holder, other.holder, "holder names are unique");
    }

    #[test]
    fn defaults_keys_and_debug() {
        let l = Leases::new(Arc::new(MemoryLeaseStore::default()));
        assert_eq!(
            (l.ttl, l.renew_every),
            (Duration::from_secs(10), Duration::from_secs(3))
        );
        let l = l
            .with_timing(Duration::from_secs(4), Duration::from_secs(1))
            .unwrap();
        assert_eq!(
            (l.ttl, l.renew_every),
            (Duration::from_secs(4), Duration::from_secs(1))
        );
        let pid = std::process::id().to_string();
        let (id, random) = l.holder.split_once('-').unwrap();
        assert_eq!(id, pid);
        assert_eq!(random.len(), 16);
        assert_eq!(Leases::stream_key(&"tag", &3), "s:tag:3");
        assert_eq!(Leases::task_key("t1"), "t:t1");
        let shown = format!("{l:?}");
        assert!(
            shown.starts_with("Leases {") && shown.contains(&l.holder),
            "{shown}"
        );
    }

    /// `keep` renews at every interval while the lease is still this
    /// holder's, through a renewal that fails, and waits the interval
    /// before each.
    #[test]
    fn keep_renews_until_the_lease_is_lost() {
        use std::sync::Mutex;

        struct Flaky {
            inner: MemoryLeaseStore,
            renewals: Mutex<u32>,
        }
        #[async_trait::async_trait]
        impl LeaseStore for Flaky {
            async fn acquire(
                &self,
                k: &str,
                h: &str,
                d: &str,
                t: Duration,
            ) -> Result<bool, LeaseError> {
                self.inner.acquire(k, h, d, t).await
            }
            async fn renew(&self, k: &str, h: &str, t: Duration) -> Result<bool, LeaseError> {
                assert_eq!(t, Duration::from_secs(4), "renewed for the TTL");
                let n = {
                    let mut n = self.renewals.lock().unwrap();
                    *n += 1;
                    *n
                };
                match n {
                    2 => Err(LeaseError::Full { max: 0 }),
                    4 => self.inner.release(k, h).await.map(|_| false),
                    _ => self.inner.renew(k, h, t).await,
                }
            }
            async fn release(&self, k: &str, h: &str) -> Result<bool, LeaseError> {
                self.inner.release(k, h).await
            }
            async fn get(&self, k: &str) -> Result<Option<LeaseInfo>, LeaseError> {
                self.inner.get(k).await
            }
            async fn take_over(
                &self,
                k: &str,
                h: &str,
                t: Duration,
            ) -> Result<Option<LeaseInfo>, LeaseError> {
                self.inner.take_over(k, h, t).await
            }
        }
        let store = Arc::new(Flaky {
            inner: MemoryLeaseStore::default(),
            renewals: Mutex::new(0),
        });
        let l = Leases::new(store.clone())
            .with_timing(Duration::from_secs(4), Duration::from_millis(1_500))
            .unwrap();
        let waits = Mutex::new(Vec::new());
        futures::executor::block_on(async {
            assert!(store.acquire("k", &l.holder, "", l.ttl).await.unwrap());
            l.keep("k", |d| {
                waits.lock().unwrap().push(d);
                async {}
            })
            .await;
        });
        // Renewed, failed (retried), renewed, lost: four waits, four renewals.
        assert_eq!(*store.renewals.lock().unwrap(), 4);
        assert_eq!(*waits.lock().unwrap(), [Duration::from_millis(1_500); 4]);
    }

    #[test]
    fn keep_returns_once_the_lease_is_taken_over() {
        let store = Arc::new(MemoryLeaseStore::default());
        let l = Leases::new(store.clone());
        futures::executor::block_on(async {
            assert!(store.acquire("k", &l.holder, "", l.ttl).await.unwrap());
            store.lapse_holder(&l.holder);
            let taken = store.take_over("k", "other", l.ttl).await.unwrap();
            assert!(taken.is_some());
            // Returns at the first renewal: the lease is not ours.
            l.keep("k", |_| async {}).await;
        });
    }
}
