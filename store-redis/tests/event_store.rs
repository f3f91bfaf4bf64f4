//! `RedisEventStore` against a real `redis-server` passes the same
//! `EventStore` suite as the in-memory store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_store_redis::{
    RedisConnection, RedisConnectionConfig, RedisEventStore, RedisEventStoreConfig,
};
use mcp_test_support::RedisServer;
use mcp_test_support::conformance::event_store::EventStoreMaker;
use mcp_transport_core::event_log::{EventStore, MemoryEventStoreConfig};

/// One server per test; each store it makes gets its own key prefix.
struct Redis {
    server: RedisServer,
    next: AtomicU64,
}

impl Redis {
    fn start() -> Redis {
        Redis {
            server: RedisServer::start(),
            next: AtomicU64::new(0),
        }
    }
}

#[async_trait::async_trait]
impl EventStoreMaker for Redis {
    async fn make(&self, limits: MemoryEventStoreConfig) -> Arc<dyn EventStore> {
        let mut config = RedisConnectionConfig::new(self.server.url());
        config.prefix = format!("t{}", self.next.fetch_add(1, Ordering::Relaxed));
        let conn = RedisConnection::connect(&config).await.unwrap();
        Arc::new(RedisEventStore::new(
            conn,
            RedisEventStoreConfig {
                limits,
                ..Default::default()
            },
        ))
    }
}

mod suite {
    mcp_test_support::event_store_suite!(super::Redis::start());
}

/// Two instances (two connections, one key prefix) share one log: what one
/// appends the other replays, in order, with the same ids, and concurrent
/// appends from both to one stream get distinct consecutive sequence
/// numbers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_share_one_log() {
    use bytes::Bytes;
    use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};

    let redis = RedisServer::start();
    let config = RedisConnectionConfig::new(redis.url());
    let instance = || async {
        let conn = RedisConnection::connect(&config).await.unwrap();
        Arc::new(RedisEventStore::new(conn, RedisEventStoreConfig::default()))
    };
    let (a, b) = (instance().await, instance().await);
    let t = SessionTag::from_u64(9);
    let s = StreamId(1);
    a.open_session(&t).await.unwrap();
    a.open_stream(&t, s).await.unwrap();
    let mut writers = Vec::new();
    for (name, store) in [("a", a.clone()), ("b", b.clone())] {
        writers.push(tokio::spawn(async move {
            let mut seqs = Vec::new();
            for i in 0..50 {
                let id = store
                    .append(&t, s, Bytes::from(format!("{name}{i}")))
                    .await
                    .unwrap();
                seqs.push(id.seq);
            }
            seqs
        }));
    }
    let mut all = Vec::new();
    for w in writers {
        let seqs = w.await.unwrap();
        assert!(
            seqs.windows(2).all(|p| p[0] < p[1]),
            "each writer's ids rise"
        );
        all.extend(seqs);
    }
    all.sort_unstable();
    assert_eq!(
        all,
        (1..=100).collect::<Vec<u64>>(),
        "no id twice, none skipped"
    );
    b.finish_stream(&t, s).await.unwrap();
    let from_a = a.replay_after(&t, &EventId::priming(t, s)).await.unwrap();
    let from_b = b.replay_after(&t, &EventId::new(t, s, 40)).await.unwrap();
    assert!(from_a.finished && from_b.finished);
    assert_eq!(from_a.events.len(), 100);
    assert_eq!(from_a.events[40..], from_b.events[..]);
    // Each writer's messages appear in the order it wrote them.
    for name in ["a", "b"] {
        let mine: Vec<String> = from_a
            .events
            .iter()
            .map(|e| String::from_utf8(e.data.to_vec()).unwrap())
            .filter(|d| d.starts_with(name))
            .collect();
        let want: Vec<String> = (0..50).map(|i| format!("{name}{i}")).collect();
        assert_eq!(mine, want);
    }
    assert_eq!(b.last_seq(&t, s).await.unwrap(), 100);
}
