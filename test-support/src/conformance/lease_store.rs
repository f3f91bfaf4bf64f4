//! The [`LeaseStore`] contract as a suite every implementation runs: the
//! in-memory store (`transport-core/tests/memory_stores.rs`) and the Redis
//! store (`store-redis/tests/lease_store.rs`).
//!
//! A lease lapses by the store's own means: the maker's
//! [`lapse`](LeaseStoreMaker::lapse) makes it happen (the memory store is
//! told; the Redis store is given a short TTL and waited on, bounded).
//! [`lease_store_suite!`](crate::lease_store_suite) expands to one
//! `#[tokio::test]` per case.

use std::sync::Arc;
use std::time::Duration;

use mcp_transport_core::lease::{LeaseInfo, LeaseStore};

/// Builds fresh stores for the suite and lets a holder's leases lapse.
#[async_trait::async_trait]
pub trait LeaseStoreMaker: Send + Sync {
    /// A new store, sharing nothing with earlier ones.
    async fn make(&self) -> Arc<dyn LeaseStore>;
    /// The TTL the suite gives leases that it will let lapse.
    fn short_ttl(&self) -> Duration;
    /// Returns once every lease `holder` holds in `store` (acquired with
    /// [`short_ttl`](Self::short_ttl) and not renewed since) has lapsed.
    async fn lapse(&self, store: &dyn LeaseStore, holder: &str, key: &str);
}

const LONG: Duration = Duration::from_secs(600);

/// A lease is created once, read back, renewed and released only by its
/// holder.
pub async fn only_the_holder_renews_and_releases(m: &dyn LeaseStoreMaker) {
    let s = m.make().await;
    assert!(s.acquire("k", "a", r#"[1,"x"]"#, LONG).await.unwrap());
    assert!(
        !s.acquire("k", "b", "", LONG).await.unwrap(),
        "an existing key is refused"
    );
    assert_eq!(
        s.get("k").await.unwrap(),
        Some(LeaseInfo {
            holder: "a".into(),
            data: r#"[1,"x"]"#.into(),
            held: true
        })
    );
    assert!(s.renew("k", "a", LONG).await.unwrap());
    assert!(!s.renew("k", "b", LONG).await.unwrap(), "not b's");
    assert!(!s.release("k", "b").await.unwrap(), "not b's");
    assert!(s.get("k").await.unwrap().is_some());
    assert!(s.release("k", "a").await.unwrap());
    assert_eq!(s.get("k").await.unwrap(), None);
    assert!(!s.renew("k", "a", LONG).await.unwrap(), "released: lost");
    assert!(!s.release("k", "a").await.unwrap());
    assert_eq!(s.get("missing").await.unwrap(), None);
    assert_eq!(s.take_over("missing", "b", LONG).await.unwrap(), None);
}

/// A held lease cannot be taken over; a lapsed one can, once, keeping its
/// data, and its former holder has lost it.
pub async fn a_lapsed_lease_is_taken_over_exactly_once(m: &dyn LeaseStoreMaker) {
    let s = m.make().await;
    assert!(s.acquire("k", "a", "d", m.short_ttl()).await.unwrap());
    assert!(s.acquire("other", "z", "", LONG).await.unwrap());
    assert_eq!(
        s.take_over("k", "b", LONG).await.unwrap(),
        None,
        "held: not taken"
    );
    m.lapse(s.as_ref(), "a", "k").await;
    let got = s
        .get("k")
        .await
        .unwrap()
        .expect("a lapsed lease stays readable");
    assert!(!got.held);
    assert_eq!((got.holder.as_str(), got.data.as_str()), ("a", "d"));
    // Several instances at once: exactly one wins.
    let tries = (0..8).map(|i| {
        let s = s.clone();
        async move { s.take_over("k", &format!("b{i}"), LONG).await.unwrap() }
    });
    let won: Vec<LeaseInfo> = futures_util::future::join_all(tries)
        .await
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(won.len(), 1, "exactly one takeover: {won:?}");
    assert_eq!((won[0].holder.as_str(), won[0].data.as_str()), ("a", "d"));
    let now = s.get("k").await.unwrap().unwrap();
    assert!(now.held);
    assert!(now.holder.starts_with('b'));
    assert!(
        !s.renew("k", "a", LONG).await.unwrap(),
        "the former holder has lost it"
    );
    assert!(!s.release("k", "a").await.unwrap());
    // Another holder's lease is untouched.
    assert!(s.get("other").await.unwrap().unwrap().held);
}

/// A holder that was only slow renews its lapsed lease while nobody took
/// it over: held again, and no takeover succeeds.
pub async fn a_slow_holder_renews_a_lapsed_lease(m: &dyn LeaseStoreMaker) {
    let s = m.make().await;
    assert!(s.acquire("k", "a", "", m.short_ttl()).await.unwrap());
    m.lapse(s.as_ref(), "a", "k").await;
    assert!(s.renew("k", "a", LONG).await.unwrap());
    assert!(s.get("k").await.unwrap().unwrap().held);
    assert_eq!(s.take_over("k", "b", LONG).await.unwrap(), None);
}

/// Expands to one `#[tokio::test]` per case of this suite, with the
/// [`LeaseStoreMaker`] `$maker`.
#[macro_export]
macro_rules! lease_store_suite {
    ($maker:expr) => {
        $crate::__store_cases!(lease_store, $maker, [tokio::test];
            only_the_holder_renews_and_releases,
            a_lapsed_lease_is_taken_over_exactly_once,
            a_slow_holder_renews_a_lapsed_lease,
        );
    };
}
