//! The Redis stores on a real three-master Redis Cluster
//! (`redis+cluster://…`, the [`Layout::Cluster`] key layout).
//!
//! Every script of that layout touches one hash slot, and the cluster
//! itself refuses a script whose keys span slots (`CROSSSLOT`): so every
//! shared-suite case that passes here shows that its operations never
//! cross slots. The cases run are the suites' per-stream, per-session,
//! per-task, per-scope and lease cases; the ones **not run** test the
//! store-wide bounds the cluster layout does not keep (the store-wide bound
//! is Redis's `maxmemory` with a `volatile-*` policy there):
//!
//! * event store `store_errors` (its `TooManySessions` step: `max_sessions`),
//!   `the_byte_budget_evicts_the_oldest_across_sessions` and
//!   `append_final_counts_against_the_byte_budget` (`max_bytes_total`) — the per-session errors of `store_errors` are
//!   checked by [`event_store_errors_but_the_session_count`];
//! * task store `count_bound_refuses_until_something_expires`
//!   (`max_tasks`), `byte_bounds_per_task_and_in_total` (its total part:
//!   `max_total_bytes`; the per-task part is checked below),
//!   `a_full_store_refuses_new_tasks_until_some_expire` (`max_total_bytes`),
//!   `purge_drops_only_expired_tasks` (no store-wide index to purge: Redis
//!   expires the keys) and `ttl_is_capped_and_unlimited_only_when_allowed`
//!   (its unlimited half: every key must have a TTL);
//! * session store `bounds_refuse_and_free` (`max_sessions`) and
//!   `purge_drops_only_expired_sessions`.
//!
//! [`store_wide_bounds_are_not_kept_and_every_key_has_a_ttl`] observes
//! those differences, and [`the_single_layout_is_refused_by_the_cluster`]
//! that the single-Redis layout does cross slots (so the passing suites
//! are not vacuous).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use mcp_store_redis::{
    Layout, RedisConnection, RedisConnectionConfig, RedisEventStore, RedisEventStoreConfig,
    RedisLeaseStore, RedisSessionStore, RedisSignalBus, RedisTaskStore,
};
use mcp_test_support::conformance::event_store::{self as es, EventStoreMaker};
use mcp_test_support::conformance::lease_store::{self as ls, LeaseStoreMaker};
use mcp_test_support::conformance::session_store::{self as ss, SessionStoreMaker};
use mcp_test_support::conformance::task_store::{self as ts, TaskStoreMaker};
use mcp_test_support::{RedisCluster, within};
use mcp_transport_core::event_id::{SessionTag, StreamId};
use mcp_transport_core::event_log::{EventStore, MemoryEventStoreConfig, StoreError};
use mcp_transport_core::lease::LeaseStore;
use mcp_transport_core::session_store::{
    MemorySessionStoreConfig, NewSession, SessionSignal, SessionStore, SignalBus,
};
use mcp_transport_core::task_store::{MemoryTaskStoreConfig, NewTask, TaskStore, TaskStoreError};

/// One cluster per test; each store it makes gets its own key prefix.
struct Cluster {
    cluster: RedisCluster,
    next: AtomicU64,
}

impl Cluster {
    fn start() -> Cluster {
        Cluster {
            cluster: RedisCluster::start(),
            next: AtomicU64::new(0),
        }
    }

    async fn conn(&self) -> RedisConnection {
        let mut config = RedisConnectionConfig::new(self.cluster.url());
        config.prefix = format!("t{}", self.next.fetch_add(1, Ordering::Relaxed));
        let conn = RedisConnection::connect(&config).await.unwrap();
        assert_eq!(conn.layout(), Layout::Cluster);
        conn
    }
}

#[async_trait::async_trait]
impl EventStoreMaker for Cluster {
    async fn make(&self, limits: MemoryEventStoreConfig) -> Arc<dyn EventStore> {
        Arc::new(RedisEventStore::new(
            self.conn().await,
            RedisEventStoreConfig {
                limits,
                ..Default::default()
            },
        ))
    }
}

#[async_trait::async_trait]
impl TaskStoreMaker for Cluster {
    async fn make(&self, limits: MemoryTaskStoreConfig) -> Arc<dyn TaskStore> {
        Arc::new(RedisTaskStore::new(self.conn().await, limits))
    }
}

#[async_trait::async_trait]
impl SessionStoreMaker for Cluster {
    async fn make(&self, limits: MemorySessionStoreConfig) -> Arc<dyn SessionStore> {
        Arc::new(RedisSessionStore::new(self.conn().await, limits))
    }
}

#[async_trait::async_trait]
impl LeaseStoreMaker for Cluster {
    async fn make(&self) -> Arc<dyn LeaseStore> {
        Arc::new(RedisLeaseStore::new(self.conn().await))
    }

    fn short_ttl(&self) -> Duration {
        Duration::from_millis(150)
    }

    async fn lapse(&self, store: &dyn LeaseStore, holder: &str, key: &str) {
        within("the lease lapses", async {
            loop {
                let l = store.get(key).await.unwrap().expect("the lease exists");
                assert_eq!(l.holder, holder);
                if !l.held {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
    }
}

/// The event store's per-stream and per-session cases (all but the three
/// store-wide ones, see the module documentation), and the model-based
/// property on its own runtime.
#[test]
fn event_store_suite_on_the_cluster() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let m = Cluster::start();
    es::replay_matches_model(&rt, &m, 32);
    rt.block_on(async {
        es::ids_are_sequential_and_priming_is_zero(&m).await;
        es::replay_is_exclusive(&m).await;
        es::replay_after_priming_returns_everything_in_order(&m).await;
        es::replay_is_per_stream(&m).await;
        es::finished_flag(&m).await;
        es::unknown_event_id(&m).await;
        es::foreign_session(&m).await;
        es::eviction_by_event_count(&m).await;
        es::eviction_by_bytes(&m).await;
        es::message_too_large(&m).await;
        es::zero_retention_still_issues_ids(&m).await;
        es::remove_session_then_unknown(&m).await;
        es::stream_limit_evicts_longest_finished_stream(&m).await;
        es::a_stream_read_to_its_end_is_evicted_first(&m).await;
        es::session_byte_limit_evicts_finished_streams_first(&m).await;
        es::session_bytes_stay_exact_through_evictions(&m).await;
        es::a_stream_evicted_for_count_releases_its_bytes(&m).await;
        es::through_arc_dyn(&m).await;
        es::tail_after_follows_appends_and_the_end(&m).await;
        es::append_final_delivered_counts_as_read_to_the_end(&m).await;
        es::a_read_stream_deep_in_the_finished_list_is_evicted_first(&m).await;
        es::open_answered_opens_a_finished_stream(&m).await;
        es::append_final_stores_the_answer_and_ends_the_stream(&m).await;
        es::append_final_ends_the_stream_when_the_message_is_refused(&m).await;
        es::a_refused_delivered_answer_still_counts_as_read(&m).await;
        es::a_stream_evicted_for_bytes_frees_its_place_under_the_cap(&m).await;
        event_store_errors_but_the_session_count(&m).await;
    });
}

/// `store_errors` without its `max_sessions` step.
async fn event_store_errors_but_the_session_count(m: &Cluster) {
    let store = EventStoreMaker::make(m, MemoryEventStoreConfig::default()).await;
    let t = SessionTag::from_u64(1);
    let (s1, s2) = (StreamId(1), StreamId(2));
    assert!(matches!(
        store.open_stream(&t, s1).await,
        Err(StoreError::UnknownSession { .. })
    ));
    store.open_session(&t).await.unwrap();
    assert!(matches!(
        store.open_session(&t).await,
        Err(StoreError::SessionExists { .. })
    ));
    store.open_stream(&t, s1).await.unwrap();
    assert!(matches!(
        store.open_stream(&t, s1).await,
        Err(StoreError::StreamExists { .. })
    ));
    assert!(matches!(
        store.append(&t, s2, Bytes::from_static(b"x")).await,
        Err(StoreError::UnknownStream { .. })
    ));
    assert!(matches!(
        store.finish_stream(&t, s2).await,
        Err(StoreError::UnknownStream { .. })
    ));
}

/// The task store's per-task and per-scope cases (see the module
/// documentation for the four left out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_store_suite_on_the_cluster() {
    let m = Cluster::start();
    ts::created_task_is_working_and_readable(&m).await;
    ts::working_to_completed_keeps_the_result(&m).await;
    ts::working_to_failed_keeps_the_error(&m).await;
    ts::input_round_trip_partial_then_complete(&m).await;
    ts::terminal_states_never_change(&m).await;
    ts::cancel_from_working_and_from_input_required(&m).await;
    ts::cancel_racing_completion_first_terminal_transition_wins(&m).await;
    ts::ttl_expiry_is_exact_and_reported(&m).await;
    ts::scoped_tasks_are_invisible_to_other_scopes(&m).await;
    ts::the_workers_changes_need_no_scope(&m).await;
    ts::status_message_updates_touch_last_updated(&m).await;
    ts::list_pages_by_scope_in_creation_order(&m).await;
    // The per-task half of byte_bounds_per_task_and_in_total.
    let s = TaskStoreMaker::make(
        &m,
        MemoryTaskStoreConfig {
            max_task_bytes: 100,
            ..Default::default()
        },
    )
    .await;
    s.create(new_task("a", None), 0).await.unwrap();
    let big =
        serde_json::value::RawValue::from_string(format!(r#""{}""#, "x".repeat(120))).unwrap();
    assert!(matches!(
        s.finish(
            "a",
            mcp_transport_core::task_store::Terminal::Completed(big),
            None,
            1
        )
        .await,
        Err(TaskStoreError::TooLarge { max: 100, .. })
    ));
}

/// The session store's per-session cases.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_store_suite_on_the_cluster() {
    let m = Cluster::start();
    ss::created_sessions_read_back_exactly(&m).await;
    ss::idle_expiry_counts_from_the_last_touch(&m).await;
    ss::removed_sessions_are_gone(&m).await;
}

/// The whole lease suite (a lease is one key: nothing differs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_store_suite_on_the_cluster() {
    let m = Cluster::start();
    ls::only_the_holder_renews_and_releases(&m).await;
    ls::a_lapsed_lease_is_taken_over_exactly_once(&m).await;
    ls::a_slow_holder_renews_a_lapsed_lease(&m).await;
}

fn new_task(id: &str, scope: Option<&str>) -> NewTask {
    NewTask {
        id: id.to_owned(),
        scope: scope.map(str::to_owned),
        ttl_ms: None,
        poll_interval_ms: None,
        status_message: None,
    }
}

fn new_session(id: &str) -> NewSession {
    NewSession {
        id: id.to_owned(),
        tag: format!("tag-{id}"),
        version: "2025-11-25".into(),
        capabilities: serde_json::value::RawValue::from_string("{}".into()).unwrap(),
        client_info: None,
        principal: None,
        idle_timeout_ms: 60_000,
    }
}

/// What the cluster layout does differently, observed: the store-wide
/// bounds refuse nothing, `purge_expired` has nothing to purge, an
/// unlimited task gets the 24 h cap, and every key the stores wrote has a
/// TTL (so `maxmemory` with a `volatile-*` policy can evict any of them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_wide_bounds_are_not_kept_and_every_key_has_a_ttl() {
    let m = Cluster::start();
    let events = EventStoreMaker::make(
        &m,
        MemoryEventStoreConfig {
            max_sessions: 1,
            max_bytes_total: 10,
            ..Default::default()
        },
    )
    .await;
    for n in 1..=3 {
        let t = SessionTag::from_u64(n);
        events.open_session(&t).await.unwrap();
        events.open_stream(&t, StreamId(1)).await.unwrap();
        events
            .append(&t, StreamId(1), Bytes::from(vec![b'x'; 8]))
            .await
            .unwrap();
        events.finish_stream(&t, StreamId(1)).await.unwrap();
    }
    for n in 1..=3 {
        let t = SessionTag::from_u64(n);
        let r = events
            .replay_after(
                &t,
                &mcp_transport_core::event_id::EventId::priming(t, StreamId(1)),
            )
            .await
            .unwrap();
        assert_eq!(
            r.events.len(),
            1,
            "session {n}: nothing evicted by the budget"
        );
    }
    let tasks = TaskStoreMaker::make(
        &m,
        MemoryTaskStoreConfig {
            max_tasks: 1,
            max_ttl_ms: None,
            ..Default::default()
        },
    )
    .await;
    for id in ["a", "b", "c"] {
        let t = tasks.create(new_task(id, Some("s")), 0).await.unwrap();
        assert_eq!(t.ttl_ms, Some(mcp_store_redis::CLUSTER_MAX_TTL_MS));
    }
    assert_eq!(tasks.purge_expired(u64::MAX - 1).await.unwrap(), 0);
    let sessions = SessionStoreMaker::make(
        &m,
        MemorySessionStoreConfig {
            max_sessions: 1,
            ..Default::default()
        },
    )
    .await;
    for id in ["s1", "s2"] {
        sessions.create(new_session(id), 0).await.unwrap();
    }
    assert_eq!(sessions.purge_expired(u64::MAX - 1).await.unwrap(), 0);
    let leases = LeaseStoreMaker::make(&m).await;
    leases
        .acquire("k", "me", "", Duration::from_secs(5))
        .await
        .unwrap();

    let mut keys = 0;
    for port in m.cluster.ports().collect::<Vec<_>>() {
        let out = m.cluster.node_command(port, &["KEYS", "*"]);
        for key in out.lines().filter(|k| !k.is_empty()) {
            keys += 1;
            let ttl = m.cluster.node_command(port, &["PTTL", key]);
            let ttl: i64 = ttl.trim().parse().unwrap();
            assert!(ttl > 0, "key {key} on node {port} has no TTL ({ttl})");
        }
    }
    // Three sessions' meta, fin and stream keys, three tasks, their
    // scope's index (two keys), two sessions, one lease.
    let least = 3 * 3 + 3 + 2 + 2 + 1;
    assert!(keys >= least, "only {keys} of at least {least} keys");
}

/// The single-Redis layout's scripts do cross slots: against one node of
/// the cluster they are refused (so the suites above, which pass, do
/// exercise the difference), and a cross-slot script is refused outright.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_single_layout_is_refused_by_the_cluster() {
    let m = Cluster::start();
    let port = m.cluster.ports().next().unwrap();
    let out = m.cluster.node_command(
        port,
        &[
            "EVAL",
            "redis.call('SET', KEYS[1], 1) redis.call('SET', KEYS[2], 1)",
            "2",
            "{a}x",
            "{b}x",
        ],
    );
    assert!(out.contains("CROSSSLOT"), "{out}");
    let conn = RedisConnection::connect(&RedisConnectionConfig::new(format!(
        "redis://127.0.0.1:{port}/0"
    )))
    .await
    .unwrap();
    assert_eq!(conn.layout(), Layout::Single);
    let store = RedisEventStore::new(conn, RedisEventStoreConfig::default());
    let mut refused = 0;
    for n in 0..8 {
        match store.open_session(&SessionTag::from_u64(n)).await {
            Err(StoreError::Backend(e)) => {
                let text = format!("{e}").to_lowercase();
                assert!(
                    text.contains("crossslot") || text.contains("moved"),
                    "{text}"
                );
                refused += 1;
            }
            other => panic!("the single layout on a cluster: {other:?}"),
        }
    }
    assert_eq!(refused, 8);
}

/// Signals published through one cluster connection reach a subscriber of
/// another (classic pub/sub reaches every node): one session's signals in
/// order (a `PUBLISH` goes to its channel's slot, so one session's always
/// to the same node), and every session's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signals_cross_the_cluster() {
    let m = Cluster::start();
    let a = RedisSignalBus::start(m.conn().await);
    let mut config = RedisConnectionConfig::new(m.cluster.url());
    config.prefix = "t0".into();
    let b = RedisSignalBus::start(RedisConnection::connect(&config).await.unwrap());
    a.ready().await.unwrap();
    b.ready().await.unwrap();
    let mut sub = b.subscribe();
    let publish = |session: String, message: String| {
        a.publish(SessionSignal {
            session_id: session,
            message: Bytes::from(message),
        })
    };
    for i in 0..5 {
        publish("one".into(), format!("m{i}")).await.unwrap();
    }
    for i in 0..5 {
        let s = within("a signal arrives", sub.recv()).await;
        assert_eq!(
            (s.session_id.as_str(), &s.message[..]),
            ("one", format!("m{i}").as_bytes())
        );
    }
    for i in 0..8 {
        publish(format!("sess-{i}"), "x".into()).await.unwrap();
    }
    let mut seen = Vec::new();
    for _ in 0..8 {
        seen.push(within("a signal arrives", sub.recv()).await.session_id);
    }
    seen.sort();
    assert_eq!(
        seen,
        (0..8).map(|i| format!("sess-{i}")).collect::<Vec<_>>()
    );
}
