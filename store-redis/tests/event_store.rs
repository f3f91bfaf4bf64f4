//! `RedisEventStore` against a real `redis-server` passes the same
//! `EventStore` suite as the in-memory store.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mcp_store_redis::{
    RedisConnection, RedisConnectionConfig, RedisEventStore, RedisEventStoreConfig,
};
use mcp_test_support::conformance::event_store::EventStoreMaker;
use mcp_test_support::{RedisServer, within};
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::{EventStore, MemoryEventStoreConfig};

mod common;
use common::Redis;

#[async_trait::async_trait]
impl EventStoreMaker for Redis {
    async fn make(&self, limits: MemoryEventStoreConfig) -> Arc<dyn EventStore> {
        let conn = self.conn().await;
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

/// A store on its own key prefix of `redis` with these settings.
async fn store_with(redis: &RedisServer, config: RedisEventStoreConfig) -> RedisEventStore {
    let conn = RedisConnection::connect(&RedisConnectionConfig::new(redis.url()))
        .await
        .unwrap();
    RedisEventStore::new(conn, config)
}

/// A store on its own key prefix of `redis` with these bounds.
async fn store_limited(redis: &RedisServer, limits: MemoryEventStoreConfig) -> RedisEventStore {
    store_with(
        redis,
        RedisEventStoreConfig {
            limits,
            ..Default::default()
        },
    )
    .await
}

/// Stream `n` of session `t` opened with `answer` in it
/// (`open_answered`): what the final append did.
async fn answered(
    store: &RedisEventStore,
    t: SessionTag,
    n: u64,
    answer: &'static [u8],
) -> mcp_transport_core::event_log::FinalAppend {
    let (_, done) = store
        .open_answered(&t, StreamId(n), Bytes::from_static(answer))
        .await
        .unwrap();
    done
}

/// How many script calls (`EVALSHA`) `redis` has run: each store
/// operation is one, so a test can tell that a `tail_after` has polled.
fn script_calls(redis: &RedisServer) -> u64 {
    redis.commands_run().get("evalsha").copied().unwrap_or(0)
}

/// The commands the store's scripts ran during `op`.
async fn commands_inside<F: std::future::Future<Output = ()>>(
    redis: &RedisServer,
    op: F,
) -> std::collections::BTreeMap<String, u64> {
    redis.reset_stats();
    op.await;
    redis.commands_in_scripts()
}

/// A request answered before its stream opened (`open_answered`, the
/// script's `open_final`) is one script of few commands: the session and
/// stream fields read in one `HMGET` (which also tells that the session
/// exists) and written in one `HSET`, the session's keys refreshed and
/// the store-wide total synced once, not once a step (docs/PERFORMANCE.md,
/// session 32: 38 commands before, 49 at the cap, and a command costs the
/// script about as much again as its own time). Counted on a fresh
/// session and on one at its stream cap, where a finished stream is
/// evicted first: its bytes read with its read mark, and the session's
/// counts written in the new stream's `HSET` (20 at the cap before
/// session 33).
#[tokio::test]
async fn open_answered_runs_few_commands() {
    let redis = RedisServer::start();
    let store = store_limited(
        &redis,
        MemoryEventStoreConfig {
            max_streams_per_session: 4,
            ..Default::default()
        },
    )
    .await;
    let t = SessionTag::from_u64(3);
    store.open_session(&t).await.unwrap();
    let answer = |n: u64| {
        let store = &store;
        async move {
            let done = answered(store, t, n, b"{}").await;
            done.appended.unwrap();
            done.finished.unwrap();
        }
    };
    let fresh: u64 = commands_inside(&redis, answer(1)).await.values().sum();
    for n in 2..=4 {
        answer(n).await;
    }
    let at_cap = commands_inside(&redis, answer(5)).await;
    assert_eq!(
        at_cap.get("lrange"),
        Some(&1),
        "a stream was evicted: {at_cap:?}"
    );
    let at_cap: u64 = at_cap.values().sum();
    assert!(fresh <= 14, "{fresh} commands for a quick answer");
    assert!(
        at_cap <= 18,
        "{at_cap} commands for a quick answer at the cap"
    );
}

/// An append (a progress notification on a running request's stream)
/// reads the stream's and the session's fields in one `HMGET` and writes
/// them in one `HSET`: with the event itself, the TTLs, the store-wide
/// total and the budget's queue, thirteen commands (21 before
/// session 32).
#[tokio::test]
async fn an_append_runs_thirteen_commands() {
    let redis = RedisServer::start();
    let store = store_with(&redis, RedisEventStoreConfig::default()).await;
    let t = SessionTag::from_u64(8);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, StreamId(1)).await.unwrap();
    let append = async {
        store
            .append(&t, StreamId(1), Bytes::from_static(b"progress"))
            .await
            .unwrap();
    };
    let run = commands_inside(&redis, append).await;
    assert_eq!(run.values().sum::<u64>(), 13, "{run:?}");
}

/// A replay, which is also `tail_after`'s poll of a stream another
/// instance writes (every 20 ms by default), reads the stream's fields and
/// checks the session in one `HMGET`, then reads the events: two commands
/// (seven before session 32: the clock, `EXISTS`, an `HGET` a field, the
/// read mark written on every replay of a finished stream). The mark is
/// written by the first replay that reads the finished stream to its end,
/// and only by it.
#[tokio::test]
async fn a_replay_runs_two_commands() {
    let redis = RedisServer::start();
    let store = store_with(&redis, RedisEventStoreConfig::default()).await;
    let t = SessionTag::from_u64(7);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, StreamId(1)).await.unwrap();
    for body in [&b"a"[..], b"b"] {
        store
            .append(&t, StreamId(1), Bytes::from_static(body))
            .await
            .unwrap();
    }
    let replay = |seq: u64| {
        let store = &store;
        async move {
            let r = store
                .replay_after(&t, &EventId::new(t, StreamId(1), seq))
                .await
                .unwrap();
            assert_eq!(r.events.len() as u64, 2 - seq);
        }
    };
    let running = commands_inside(&redis, replay(0)).await;
    assert_eq!(running.values().sum::<u64>(), 2, "{running:?}");
    store.finish_stream(&t, StreamId(1)).await.unwrap();
    let first = commands_inside(&redis, replay(1)).await;
    assert_eq!(first.get("hset"), Some(&1), "the read mark: {first:?}");
    assert_eq!(first.values().sum::<u64>(), 3, "{first:?}");
    let again = commands_inside(&redis, replay(1)).await;
    assert_eq!(again.values().sum::<u64>(), 2, "{again:?}");
}

/// `key`'s value, or a field of it, read with `cmd` (0 when missing).
async fn number(redis: &RedisServer, cmd: &str, key: &str, field: Option<&str>) -> i64 {
    let client = redis::Client::open(redis.url()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let mut q = redis::cmd(cmd);
    q.arg(key);
    if let Some(f) = field {
        q.arg(f);
    }
    let v: Option<i64> = q.query_async(&mut c).await.unwrap();
    v.unwrap_or(0)
}

/// The store-wide byte count (`PREFIX:bytes`, what `max_bytes_total` is
/// checked against) and the session's entry in `PREFIX:sbytes` follow the
/// session's own count through every kind of write, including a quick
/// answer refused as too large after its open evicted a stream at the cap
/// (the script syncs the count once at its end, so each way out of it must).
#[tokio::test]
async fn the_store_wide_byte_count_follows_every_write() {
    let redis = RedisServer::start();
    let store = store_limited(
        &redis,
        MemoryEventStoreConfig {
            max_streams_per_session: 2,
            max_bytes_per_stream: 8,
            ..Default::default()
        },
    )
    .await;
    let t = SessionTag::from_u64(4);
    let meta = format!("mcp:{{{t}}}:meta");
    let check = |want: i64| {
        let (redis, meta) = (&redis, &meta);
        async move {
            let own = number(redis, "HGET", meta, Some("bytes")).await;
            let entry = number(redis, "HGET", "mcp:sbytes", Some(&t.to_string())).await;
            let total = number(redis, "GET", "mcp:bytes", None).await;
            assert_eq!((own, entry, total), (want, want, want));
        }
    };
    store.open_session(&t).await.unwrap();
    answered(&store, t, 1, b"aaaa").await.appended.unwrap();
    check(4).await;
    answered(&store, t, 2, b"bb").await.appended.unwrap();
    check(6).await;
    // At the cap stream 1 goes; the answer (9 bytes > 8) is refused, the
    // stream ended empty.
    let refused = answered(&store, t, 3, b"ccccccccc").await;
    assert!(refused.appended.is_err());
    refused.finished.unwrap();
    check(2).await;
    store.open_stream(&t, StreamId(4)).await.unwrap();
    check(0).await;
    store
        .append(&t, StreamId(4), Bytes::from_static(b"ddd"))
        .await
        .unwrap();
    check(3).await;
}

/// The session's list of finished streams has the session's TTL from the
/// moment a final append creates it: a session whose instance died with no
/// write after its first answer leaves no key behind (the cluster layout
/// has no index to prune it by). Each final append's script used to
/// refresh the TTLs before pushing to the list, which it created then.
#[tokio::test]
async fn a_final_append_leaves_no_key_without_a_ttl() {
    let redis = RedisServer::start();
    let store = store_with(&redis, RedisEventStoreConfig::default()).await;
    for (t, opened) in [
        (SessionTag::from_u64(5), false),
        (SessionTag::from_u64(6), true),
    ] {
        store.open_session(&t).await.unwrap();
        if opened {
            store.open_stream(&t, StreamId(1)).await.unwrap();
            let done = store
                .append_final_delivered(&t, StreamId(1), Bytes::from_static(b"{}"))
                .await;
            done.finished.unwrap();
        } else {
            answered(&store, t, 1, b"{}").await.finished.unwrap();
        }
        let fin = format!("mcp:{{{t}}}:fin");
        assert_eq!(redis.command(&format!("EXISTS {fin}")), ":1", "{fin}");
        let ttl = redis.command(&format!("PTTL {fin}"));
        assert!(
            ttl.strip_prefix(':')
                .and_then(|n| n.parse::<i64>().ok())
                .is_some_and(|n| n > 0),
            "{fin} has no TTL: {ttl}"
        );
    }
}

/// A stream evicted whole, at the stream cap or for the session's bytes,
/// leaves nothing in Redis: neither its Redis Stream nor its fields in the
/// session's hash. (Nothing the store answers shows a key left behind; it
/// would hold its events until the session's TTL, a day by default.)
#[tokio::test]
async fn an_evicted_stream_leaves_no_key_and_no_field() {
    let redis = RedisServer::start();
    for (i, limits) in [
        MemoryEventStoreConfig {
            max_streams_per_session: 2,
            ..Default::default()
        },
        MemoryEventStoreConfig {
            max_bytes_per_session: 5,
            ..Default::default()
        },
    ]
    .into_iter()
    .enumerate()
    {
        let store = store_limited(&redis, limits).await;
        let t = SessionTag::from_u64(40 + i as u64);
        store.open_session(&t).await.unwrap();
        for n in 1..=3 {
            answered(&store, t, n, b"\"ab\"").await.appended.unwrap();
        }
        let gone = format!("mcp:{{{t}}}:s:1");
        assert_eq!(redis.command(&format!("EXISTS {gone}")), ":0", "{gone}");
        let meta = format!("mcp:{{{t}}}:meta");
        for field in ["last", "ev", "bytes", "n", "fin", "read"] {
            let left = redis.command(&format!("HEXISTS {meta} s:1:{field}"));
            assert_eq!(left, ":0", "{i}: s:1:{field}");
            let kept = redis.command(&format!("HEXISTS {meta} s:3:{field}"));
            assert_eq!(kept, ":1", "{i}: s:3:{field}");
        }
        let kept = format!("mcp:{{{t}}}:s:3");
        assert_eq!(redis.command(&format!("EXISTS {kept}")), ":1", "{kept}");
    }
}

/// `config` answers the settings the store was made with.
#[tokio::test]
async fn config_reports_the_settings_given() {
    let redis = RedisServer::start();
    let store = store_with(
        &redis,
        RedisEventStoreConfig {
            limits: MemoryEventStoreConfig {
                max_events_per_stream: 3,
                ..Default::default()
            },
            session_ttl: Duration::from_secs(5),
            max_budget_entries: 10,
            tail_poll: Duration::from_millis(7),
        },
    )
    .await;
    let c = store.config();
    assert_eq!(c.limits.max_events_per_stream, 3);
    assert_eq!(c.session_ttl, Duration::from_secs(5));
    assert_eq!(c.max_budget_entries, 10);
    assert_eq!(c.tail_poll, Duration::from_millis(7));
}

/// `append_final` is one script call (one round trip), where `append` and
/// `finish_stream` are two; the conformance suite checks what it does.
#[tokio::test]
async fn append_final_is_one_script_call() {
    let redis = RedisServer::start();
    let store = store_with(&redis, RedisEventStoreConfig::default()).await;
    let t = SessionTag::from_u64(1);
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, StreamId(1)).await.unwrap();
    let before = script_calls(&redis);
    let done = store
        .append_final(&t, StreamId(1), Bytes::from_static(b"{}"))
        .await;
    assert_eq!(done.appended.unwrap(), EventId::new(t, StreamId(1), 1));
    done.finished.unwrap();
    assert_eq!(script_calls(&redis) - before, 1);
}

/// `tail_after` keeps polling through its wait: an event appended after
/// its first (empty) poll is what it answers, and it answers with it
/// without waiting for the rest of the wait (an hour here; `within` only
/// keeps a broken store from hanging the test).
#[tokio::test]
async fn tail_after_answers_an_append_made_while_it_waits() {
    let redis = RedisServer::start();
    let store = Arc::new(
        store_with(
            &redis,
            RedisEventStoreConfig {
                tail_poll: Duration::from_millis(10),
                ..Default::default()
            },
        )
        .await,
    );
    let (t, s) = (SessionTag::from_u64(1), StreamId(1));
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, s).await.unwrap();
    let before = script_calls(&redis);
    let tail = {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .tail_after(&t, &EventId::priming(t, s), Duration::from_secs(3600))
                .await
        })
    };
    within("the tail's first poll", async {
        while script_calls(&redis) == before {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    // The first poll found nothing; this append comes after it.
    store
        .append(&t, s, Bytes::from_static(b"late"))
        .await
        .unwrap();
    let r = within("the tail answers", tail).await.unwrap().unwrap();
    assert_eq!(r.events.len(), 1, "{r:?}");
    assert_eq!(r.events[0].id, EventId::new(t, s, 1));
    assert_eq!(&r.events[0].data[..], b"late");
    assert!(!r.finished);
}

/// A wait shorter than one poll interval is one look: nothing new, an
/// empty answer at once, not after a poll interval (an hour here).
#[tokio::test]
async fn tail_after_with_a_wait_shorter_than_a_poll_looks_once() {
    let redis = RedisServer::start();
    let store = store_with(
        &redis,
        RedisEventStoreConfig {
            tail_poll: Duration::from_secs(3600),
            ..Default::default()
        },
    )
    .await;
    let (t, s) = (SessionTag::from_u64(1), StreamId(1));
    store.open_session(&t).await.unwrap();
    store.open_stream(&t, s).await.unwrap();
    store.append(&t, s, Bytes::from_static(b"a")).await.unwrap();
    let r = within(
        "a short tail",
        store.tail_after(&t, &EventId::new(t, s, 1), Duration::from_millis(10)),
    )
    .await
    .unwrap();
    assert!(
        r.events.is_empty() && !r.finished && r.last_seq == 1,
        "{r:?}"
    );
}
