//! [`MemoryLeaseStore`]: the in-process [`LeaseStore`].

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::{LeaseError, LeaseInfo, LeaseStore};

/// The default bound of a [`MemoryLeaseStore`]: 100,000 leases (one per
/// running request or task).
pub const DEFAULT_MAX_LEASES: usize = 100_000;

/// The in-process [`LeaseStore`]: a lease never lapses while the process
/// lives (the TTL is ignored) — in one process a request's runner and the
/// clients waiting on it go together — unless a test calls
/// [`lapse_holder`](Self::lapse_holder) or [`cut_off`](Self::cut_off) to
/// play the death of an instance. One mutex over a map; bounded
/// ([`DEFAULT_MAX_LEASES`] by default).
#[derive(Debug)]
pub struct MemoryLeaseStore {
    max: usize,
    leases: Mutex<HashMap<String, LeaseInfo>>,
    /// Holders whose calls fail (see [`cut_off`](Self::cut_off)).
    cut: Mutex<HashSet<String>>,
}

impl Default for MemoryLeaseStore {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LEASES)
    }
}

impl MemoryLeaseStore {
    /// A store holding at most `max` leases.
    pub fn new(max: usize) -> Self {
        MemoryLeaseStore {
            max,
            leases: Mutex::default(),
            cut: Mutex::default(),
        }
    }

    /// Lets `holder`'s leases lapse and makes its calls fail from now on,
    /// as if its process were gone: it cannot renew them back (for tests
    /// of what other instances then do). Returns how many lapsed.
    pub fn cut_off(&self, holder: &str) -> usize {
        self.cut
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(holder.to_owned());
        self.lapse_holder(holder)
    }

    /// Undoes [`cut_off`](Self::cut_off): `holder`'s calls work again (it
    /// then learns which of its leases it lost).
    pub fn reconnect(&self, holder: &str) {
        self.cut
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(holder);
    }

    fn check(&self, holder: &str) -> Result<(), LeaseError> {
        if self
            .cut
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(holder)
        {
            return Err(LeaseError::Backend(
                format!("holder {holder} is cut off from the lease store").into(),
            ));
        }
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, LeaseInfo>> {
        self.leases.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lets every lease of `holder` lapse, as if its process had died (for
    /// tests of what other instances then do). Returns how many.
    pub fn lapse_holder(&self, holder: &str) -> usize {
        let mut n = 0;
        for l in self.lock().values_mut().filter(|l| l.holder == holder) {
            l.held = false;
            n += 1;
        }
        n
    }

    /// Leases stored.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is stored.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

#[async_trait::async_trait]
impl LeaseStore for MemoryLeaseStore {
    async fn acquire(
        &self,
        key: &str,
        holder: &str,
        data: &str,
        _ttl: Duration,
    ) -> Result<bool, LeaseError> {
        self.check(holder)?;
        let mut m = self.lock();
        if m.contains_key(key) {
            return Ok(false);
        }
        if m.len() >= self.max {
            return Err(LeaseError::Full { max: self.max });
        }
        m.insert(
            key.to_owned(),
            LeaseInfo {
                holder: holder.to_owned(),
                data: data.to_owned(),
                held: true,
            },
        );
        Ok(true)
    }

    async fn renew(&self, key: &str, holder: &str, _ttl: Duration) -> Result<bool, LeaseError> {
        self.check(holder)?;
        Ok(match self.lock().get_mut(key) {
            Some(l) if l.holder == holder => {
                l.held = true;
                true
            }
            _ => false,
        })
    }

    async fn release(&self, key: &str, holder: &str) -> Result<bool, LeaseError> {
        self.check(holder)?;
        let mut m = self.lock();
        if m.get(key).is_some_and(|l| l.holder == holder) {
            m.remove(key);
            return Ok(true);
        }
        Ok(false)
    }

    async fn get(&self, key: &str) -> Result<Option<LeaseInfo>, LeaseError> {
        Ok(self.lock().get(key).cloned())
    }

    async fn take_over(
        &self,
        key: &str,
        holder: &str,
        _ttl: Duration,
    ) -> Result<Option<LeaseInfo>, LeaseError> {
        self.check(holder)?;
        Ok(match self.lock().get_mut(key) {
            Some(l) if !l.held => {
                let before = l.clone();
                l.holder = holder.to_owned();
                l.held = true;
                Some(before)
            }
            _ => None,
        })
    }
}
