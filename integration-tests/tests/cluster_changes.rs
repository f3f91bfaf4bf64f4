//! Issue 15: a change notification the application publishes on instance A
//! reaches the listeners instance B holds — 2025-11-25 and 2025-06-18
//! standalone `GET` streams and 2026-07-28 `subscriptions/listen` streams —
//! through the shared `SignalBus` (a broadcast signal), exactly once and
//! in the order A published them; A's own listeners get them once too.
//!
//! Two `MultiServer` instances (every revision) share their stores: once
//! in process (`MemoryEventStore`, `MemorySessionStore`, one
//! `LocalSignalBus`), once over a real `redis-server` (each instance its
//! own connection and `RedisSignalBus`, as two processes would have).
//! Each client talks to one instance directly, so where each stream is
//! held is known.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use mcp_compat::fixtures::ConformanceHandler;
use mcp_negotiate::client::{Connection, NegotiateConfig, connect};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_store_redis::{
    RedisConnection, RedisConnectionConfig, RedisEventStore, RedisEventStoreConfig,
    RedisSessionStore, RedisSignalBus,
};
use mcp_test_support::{RedisServer, TestServer, within};
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::event_log::{EventStore, MemoryEventStore};
use mcp_transport_core::jsonrpc::{Message, Notification};
use mcp_transport_core::session_store::{
    LocalSignalBus, MemorySessionStore, MemorySessionStoreConfig, SessionStore, SignalBus,
};
use mcp_transport_core::transport::{ListenFilter, ServerMessages, Transport};

/// What one instance shares.
struct Shared {
    events: Arc<dyn EventStore>,
    sessions: Arc<dyn SessionStore>,
    signals: Arc<dyn SignalBus>,
}

/// Two instances (A = 0, B = 1) sharing state, each served on its own
/// address.
struct Pair {
    servers: [MultiServer; 2],
    http: [TestServer; 2],
    _redis: Option<RedisServer>,
}

async fn pair(redis: bool) -> Pair {
    let server = redis.then(RedisServer::start);
    let shared: Vec<Shared> = match &server {
        None => {
            let events: Arc<dyn EventStore> = Arc::new(MemoryEventStore::default());
            let sessions: Arc<dyn SessionStore> =
                Arc::new(MemorySessionStore::new(MemorySessionStoreConfig::default()));
            let signals: Arc<dyn SignalBus> = Arc::new(LocalSignalBus::default());
            (0..2)
                .map(|_| Shared {
                    events: events.clone(),
                    sessions: sessions.clone(),
                    signals: signals.clone(),
                })
                .collect()
        }
        Some(r) => {
            let mut all = Vec::new();
            for _ in 0..2 {
                let conn = RedisConnection::connect(&RedisConnectionConfig::new(r.url()))
                    .await
                    .unwrap();
                let bus = RedisSignalBus::start(conn.clone());
                bus.ready().await.unwrap();
                all.push(Shared {
                    events: Arc::new(RedisEventStore::new(
                        conn.clone(),
                        RedisEventStoreConfig::default(),
                    )),
                    sessions: Arc::new(RedisSessionStore::new(
                        conn,
                        MemorySessionStoreConfig::default(),
                    )),
                    signals: Arc::new(bus),
                });
            }
            all
        }
    };
    // `serve`'s handler: it declares tools and prompts `listChanged`.
    let handler = Arc::new(ConformanceHandler::new());
    let mut servers = Vec::new();
    let mut http = Vec::new();
    for s in shared {
        let mut cfg = MultiConfig::all();
        cfg.legacy = cfg
            .legacy
            .with_keepalive(None)
            .with_event_store(s.events)
            .with_session_store(s.sessions)
            .with_signals(s.signals.clone());
        cfg.modern = cfg
            .modern
            .with_keepalive(None)
            .with_signals(Some(s.signals));
        let m = MultiServer::new(handler.clone(), cfg);
        http.push(TestServer::serve(m.route("/mcp")).await);
        servers.push(m);
    }
    Pair {
        servers: servers.try_into().unwrap_or_else(|_| unreachable!()),
        http: http.try_into().unwrap_or_else(|_| unreachable!()),
        _redis: server,
    }
}

impl Pair {
    /// A client of `revision` on instance `on`, listening for list changes
    /// (a standalone GET or `subscriptions/listen`), once the instance
    /// holds the listener.
    async fn listener(&self, on: usize, revision: V) -> (Connection, ServerMessages) {
        let cfg = NegotiateConfig::new(self.http[on].url()).with_revisions(vec![revision.clone()]);
        let conn = connect(cfg).await.unwrap();
        assert_eq!(conn.revision(), revision);
        let filter = ListenFilter {
            tools_list_changed: true,
            prompts_list_changed: true,
            ..ListenFilter::default()
        };
        let before = self.held(on).await;
        let messages = conn.listen(filter).await.unwrap();
        within("the listener to be held", async {
            while self.held(on).await == before {
                tokio::task::yield_now().await;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        (conn, messages)
    }

    /// The listeners instance `on` holds (both eras).
    async fn held(&self, on: usize) -> usize {
        let s = &self.servers[on];
        s.modern().map_or(0, |m| m.active_listen_streams())
            + match s.legacy() {
                Some(l) => l.standalone_streams().await,
                None => 0,
            }
    }
}

fn note(method: &str) -> Notification {
    Notification {
        method: method.into(),
        params: None,
    }
}

/// The next notification on `messages` that is not the listen stream's
/// acknowledgment.
async fn next_method(messages: &mut ServerMessages) -> String {
    within("the next notification", async {
        loop {
            match messages.next().await {
                Some(Ok(Message::Notification(n)))
                    if n.method == "notifications/subscriptions/acknowledged" => {}
                Some(Ok(Message::Notification(n))) => return n.method,
                other => panic!("expected a notification, got {other:?}"),
            }
        }
    })
    .await
}

/// Nothing more arrives on `messages` for a while (a duplicate would).
/// Not a timing assertion: a slow machine can only make it pass.
async fn quiet(messages: &mut ServerMessages, what: &str) {
    if let Ok(m) = tokio::time::timeout(Duration::from_millis(300), messages.next()).await {
        panic!("{what}: nothing more was expected, got {m:?}");
    }
}

/// Listeners of every era on B and one on A; two notifications published
/// on A reach each listener once, in order (a duplicate of the first
/// would arrive where the second is expected, or after it).
async fn published_on_a_reaches_b(redis: bool) {
    let p = pair(redis).await;
    let mut on_b = Vec::new();
    for rev in [V::V2025_11_25, V::V2025_06_18, V::V2026_07_28] {
        on_b.push((rev.clone(), p.listener(1, rev).await));
    }
    let mut on_a = Vec::new();
    for rev in [V::V2025_11_25, V::V2026_07_28] {
        on_a.push((rev.clone(), p.listener(0, rev).await));
    }
    // A holds two listeners, B three: A's count is its own.
    assert_eq!(
        p.servers[0]
            .publish(&note("notifications/tools/list_changed"))
            .await,
        2
    );
    p.servers[0]
        .publish(&note("notifications/prompts/list_changed"))
        .await;
    for (on, listeners) in [("B", &mut on_b), ("A", &mut on_a)] {
        for (rev, (_conn, messages)) in listeners.iter_mut() {
            for method in [
                "notifications/tools/list_changed",
                "notifications/prompts/list_changed",
            ] {
                assert_eq!(next_method(messages).await, method, "{rev} on {on}");
            }
            quiet(messages, &format!("{rev} on {on}")).await;
        }
    }
}

#[tokio::test]
async fn a_change_published_on_a_reaches_listeners_on_b_in_process() {
    published_on_a_reaches_b(false).await;
}

#[tokio::test]
async fn a_change_published_on_a_reaches_listeners_on_b_over_redis() {
    published_on_a_reaches_b(true).await;
}
