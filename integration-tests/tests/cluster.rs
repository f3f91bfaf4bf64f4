//! Issue 15: two session-engine instances sharing one real `redis-server`
//! (sessions, event log, signals) behind the round-robin [`Balancer`], so
//! every exchange of a session may land on either instance. The resume and
//! cancel cases also run with the in-process stores shared by two servers
//! in one process (`MemoryEventStore`, `MemorySessionStore`,
//! `LocalSignalBus`: the `EventStore::tail_after` default that does not
//! wait).
//!
//! * a `POST` answered on A under SEP-1699's `after-priming` policy, the
//!   client's resumes on B: B replays from the shared log and follows it
//!   live, so the client gets exactly the remaining events, once each and
//!   in order, including those A produced after the resume started;
//! * a session created on A is used and deleted through B, then 404 on both;
//! * a `notifications/cancelled` arriving at B stops the handler on A;
//! * a client's answer to A's `elicitation/create` POSTed to B reaches the
//!   handler waiting on A.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use mcp_rev_2025_11_25::{self as rev, DisconnectPolicy, PollingExt};
use mcp_session_engine::server::{LegacyServer, ServerConfig};
use mcp_store_redis::{
    RedisConnection, RedisConnectionConfig, RedisEventStore, RedisEventStoreConfig,
    RedisSessionStore, RedisSignalBus,
};
use mcp_test_support::handler::{Call, TestHandler, tool_fn, tools};
use mcp_test_support::sse::{Rec, SseReader};
use mcp_test_support::{Balancer, RedisServer, TestServer, eventually, within};
use mcp_transport_core::event_log::MemoryEventStore;
use mcp_transport_core::handler::{LogLevel, Outcome};
use mcp_transport_core::session_store::{
    LocalSignalBus, MemorySessionStore, MemorySessionStoreConfig,
};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// Two instances over one Redis behind a balancer (backend 0 is A, 1 is B).
struct Cluster {
    lb: Balancer,
    handlers: [Arc<TestHandler>; 2],
    _servers: [TestServer; 2],
    _buses: Vec<Arc<RedisSignalBus>>,
    _redis: Option<RedisServer>,
}

/// Where the instances share their state.
#[derive(Clone, Copy, Debug)]
enum Backend {
    /// A real `redis-server`: each instance its own connection-level
    /// stores and signal bus, as separate processes would have.
    Redis,
    /// One set of in-process stores and one `LocalSignalBus`, shared.
    Memory,
}

/// A handler whose `gated` tool logs `{"tick": i}` for i = 1..=3, each
/// after the test adds a permit to `gate`, then answers `{"done": 3}`.
fn handler(gate: Arc<Semaphore>) -> Arc<TestHandler> {
    let gated = tool_fn(move |c: Call| {
        let gate = gate.clone();
        async move {
            for i in 1..=3 {
                gate.acquire().await.expect("gate open").forget();
                let _ = c.cx.log(LogLevel::Info, None, json!({ "tick": i })).await;
            }
            Outcome::json(&json!({ "done": 3 }))
        }
    });
    Arc::new(
        TestHandler::builder("cluster")
            .tool("gated", gated)
            .tool("echo", tools::echo())
            .tool("countdown", tools::countdown())
            .tool("slow", tools::slow_announced(60_000))
            .tool(
                "ask",
                tools::ask(tools::Ask::elicitation(
                    "name",
                    json!({"message": "your name?", "requestedSchema": {"type": "object"}}),
                )),
            )
            .build(),
    )
}

async fn cluster(policy: DisconnectPolicy, gate: Arc<Semaphore>) -> Cluster {
    cluster_on(Backend::Redis, policy, gate).await
}

async fn cluster_on(backend: Backend, policy: DisconnectPolicy, gate: Arc<Semaphore>) -> Cluster {
    let redis = matches!(backend, Backend::Redis).then(RedisServer::start);
    let conn = match &redis {
        Some(r) => Some(
            RedisConnection::connect(&RedisConnectionConfig::new(r.url()))
                .await
                .unwrap(),
        ),
        None => None,
    };
    let memory_events = Arc::new(MemoryEventStore::default());
    let memory_sessions = Arc::new(MemorySessionStore::new(MemorySessionStoreConfig::default()));
    let local_bus = Arc::new(LocalSignalBus::default());
    let mut servers = Vec::new();
    let mut handlers = Vec::new();
    let mut buses = Vec::new();
    for _ in 0..2 {
        let config: ServerConfig = rev::server_config().with_disconnect(policy);
        let config = match &conn {
            // Each instance has its own stores over the one Redis, as
            // separate processes would.
            Some(conn) => {
                let bus = Arc::new(RedisSignalBus::start(conn.clone()));
                bus.ready().await.unwrap();
                buses.push(bus.clone());
                config
                    .with_event_store(Arc::new(RedisEventStore::new(
                        conn.clone(),
                        RedisEventStoreConfig::default(),
                    )))
                    .with_session_store(Arc::new(RedisSessionStore::new(
                        conn.clone(),
                        MemorySessionStoreConfig::default(),
                    )))
                    .with_signals(bus)
            }
            None => config
                .with_event_store(memory_events.clone())
                .with_session_store(memory_sessions.clone())
                .with_signals(local_bus.clone()),
        };
        let h = handler(gate.clone());
        let server: LegacyServer = rev::server(h.clone(), config);
        servers.push(
            TestServer::serve(axum::Router::new().nest_service("/mcp", server.router())).await,
        );
        handlers.push(h);
    }
    let lb = Balancer::start(servers.iter().map(TestServer::addr).collect())
        .await
        .unwrap();
    let [a, b]: [TestServer; 2] = servers.try_into().unwrap();
    let hb = handlers.pop().unwrap();
    let ha = handlers.pop().unwrap();
    Cluster {
        lb,
        handlers: [ha, hb],
        _servers: [a, b],
        _buses: buses,
        _redis: redis,
    }
}

impl Cluster {
    /// A POST through the balancer to instance `to`.
    async fn post(&self, to: usize, session: Option<&str>, body: &Value) -> reqwest::Response {
        self.lb.route_next_to(to);
        let resp = self.post_rr(session, body).await;
        assert_eq!(self.lb.log().last().unwrap().backend, to);
        resp
    }

    /// A POST through the balancer to whichever instance is next.
    async fn post_rr(&self, session: Option<&str>, body: &Value) -> reqwest::Response {
        let mut r = reqwest::Client::new()
            .post(self.lb.url())
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string());
        if let Some(s) = session {
            r = r.header("mcp-session-id", s);
        }
        r.send().await.unwrap()
    }

    /// `initialize` (declaring elicitation) on instance `to`; the session id.
    async fn initialize(&self, to: usize) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "cluster-test", "version": "1"}}});
        let r = self.post(to, None, &body).await;
        assert_eq!(r.status(), 200);
        r.headers()["mcp-session-id"].to_str().unwrap().to_owned()
    }

    /// A resume (`GET` + `Last-Event-ID`) on instance `to`.
    async fn resume(&self, to: usize, session: &str, last: &str) -> reqwest::Response {
        self.lb.route_next_to(to);
        let r = self.resume_rr(session, last).await;
        assert_eq!(self.lb.log().last().unwrap().backend, to);
        r
    }

    /// A resume on whichever instance is next.
    async fn resume_rr(&self, session: &str, last: &str) -> reqwest::Response {
        reqwest::Client::new()
            .get(self.lb.url())
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session)
            .header("last-event-id", last)
            .send()
            .await
            .unwrap()
    }
}

fn call(id: i64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
}

/// The message events of a record list, with their ids.
fn events(recs: &[Rec]) -> Vec<(String, Value)> {
    recs.iter()
        .filter(|r| matches!(r, Rec::Event { data, .. } if !data.is_empty()))
        .map(|r| (r.id().to_owned(), r.json()))
        .collect()
}

/// The last event id in `recs`, if any.
fn last_id(recs: &[Rec]) -> Option<String> {
    recs.iter().rev().find_map(|r| match r {
        Rec::Event { id, .. } if !id.is_empty() => Some(id.clone()),
        _ => None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_on_b_replays_and_follows_a_stream_a_writes() {
    resume_on_b_follows_a(Backend::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_stores_a_resume_on_b_follows_a_stream_a_writes() {
    resume_on_b_follows_a(Backend::Memory).await;
}

async fn resume_on_b_follows_a(backend: Backend) {
    let gate = Arc::new(Semaphore::new(0));
    let c = cluster_on(backend, DisconnectPolicy::AfterPriming, gate.clone()).await;
    let sid = c.initialize(0).await;

    // The call runs on A; after-priming: its POST gets the priming event
    // and `retry`, then the connection closes.
    let resp = c.post(0, Some(&sid), &call(1, "gated", json!({}))).await;
    assert_eq!(resp.status(), 200);
    let recs = within("the POST's priming", SseReader::new(resp).rest()).await;
    assert!(recs.iter().any(|r| matches!(r, Rec::Retry(_))), "{recs:?}");
    assert!(events(&recs).is_empty(), "{recs:?}");
    let mut last = last_id(&recs).expect("a priming id");

    // A resume on B, before A has produced anything: B holds it, then
    // delivers what A appends afterwards.
    let resp = c.resume(1, &sid, &last).await;
    assert_eq!(resp.status(), 200);
    let mut reader = SseReader::new(resp);
    gate.add_permits(1);
    let first = within("tick 1 through B", reader.next_message())
        .await
        .unwrap();
    assert_eq!(
        first.json()["params"]["data"],
        json!({"tick": 1}),
        "{first:?}"
    );
    let mut got = vec![(first.id().to_owned(), first.json())];
    let rest = within("the rest of the resume", reader.rest()).await;
    got.extend(events(&rest));
    last = last_id(&rest).unwrap_or_else(|| first.id().to_owned());

    // The rest, through B only, however the policy cuts the connections.
    gate.add_permits(2);
    for _ in 0..20 {
        if got.iter().any(|(_, m)| m["id"] == 1) {
            break;
        }
        let resp = c.resume(1, &sid, &last).await;
        assert_eq!(resp.status(), 200);
        let recs = within("a resume on B", SseReader::new(resp).rest()).await;
        got.extend(events(&recs));
        if let Some(id) = last_id(&recs) {
            last = id;
        }
    }
    let messages: Vec<&Value> = got.iter().map(|(_, m)| m).collect();
    assert_eq!(
        messages.len(),
        4,
        "exactly the remaining events: {messages:?}"
    );
    for (i, m) in messages.iter().take(3).enumerate() {
        assert_eq!(m["params"]["data"], json!({"tick": i + 1}), "{messages:?}");
    }
    assert_eq!(messages[3]["result"], json!({"done": 3}));
    // Every event once, with consecutive sequence numbers of one stream.
    let seqs: Vec<u64> = got
        .iter()
        .map(|(id, _)| id.split('.').nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4], "{got:?}");
    // The handler ran on A only.
    assert_eq!(c.handlers[0].started.load(Ordering::SeqCst), 1);
    assert_eq!(c.handlers[1].started.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_created_on_a_is_used_and_deleted_through_b() {
    let c = cluster(DisconnectPolicy::Never, Arc::new(Semaphore::new(0))).await;
    let sid = c.initialize(0).await;

    let resp = c
        .post(1, Some(&sid), &call(1, "echo", json!({"x": 1})))
        .await;
    assert_eq!(resp.status(), 200);
    let recs = within("echo on B", SseReader::new(resp).rest()).await;
    let answer = &events(&recs)[0].1;
    assert_eq!(answer["result"], json!({"x": 1}), "{answer}");
    assert_eq!(c.handlers[1].started.load(Ordering::SeqCst), 1);

    // A still serves it too.
    let resp = c
        .post(0, Some(&sid), &call(2, "echo", json!({"x": 2})))
        .await;
    assert_eq!(resp.status(), 200);

    // DELETE through B ends it everywhere.
    c.lb.route_next_to(1);
    let r = reqwest::Client::new()
        .delete(c.lb.url())
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    for to in [0, 1] {
        let r = c.post(to, Some(&sid), &call(3, "echo", json!({}))).await;
        assert_eq!(r.status(), 404, "instance {to} after DELETE");
        let body: Value = r.json().await.unwrap();
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("session")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_arriving_at_b_stops_the_handler_on_a() {
    cancel_at_b_stops_a(Backend::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_stores_a_cancel_arriving_at_b_stops_the_handler_on_a() {
    cancel_at_b_stops_a(Backend::Memory).await;
}

async fn cancel_at_b_stops_a(backend: Backend) {
    let c = cluster_on(
        backend,
        DisconnectPolicy::Never,
        Arc::new(Semaphore::new(0)),
    )
    .await;
    let sid = c.initialize(0).await;
    let mut slow = call(7, "slow", json!({}));
    slow["params"]["_meta"] = json!({"progressToken": "p7"});
    let resp = c.post(0, Some(&sid), &slow).await;
    let mut reader = SseReader::new(resp);
    let priming = within("the priming event", reader.next()).await.unwrap();
    assert!(priming.is_priming(), "{priming:?}");
    // The tool has started (its "started" progress).
    within("the slow tool's start", reader.next_message()).await;
    // A second connection to the same stream, on B (following A's writes).
    let mut on_b = SseReader::new(c.resume(1, &sid, priming.id()).await);
    let started = within("the start, replayed on B", on_b.next_message())
        .await
        .unwrap();
    assert_eq!(started.json()["method"], "notifications/progress");

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 7, "reason": "changed my mind"}});
    let r = c.post(1, Some(&sid), &cancel).await;
    assert_eq!(r.status(), 202);
    let ha = c.handlers[0].clone();
    eventually("the handler on A sees the cancel", || {
        ha.cancellations.load(Ordering::SeqCst) == 1
    })
    .await;
    // No response after the cancel: A's stream ends without one.
    let rest = within("A's stream ends", reader.rest()).await;
    assert!(
        events(&rest).iter().all(|(_, m)| m.get("id").is_none()),
        "{rest:?}"
    );
    // B's connection learns from the log that the stream ended, and ends
    // too, without a response.
    let rest = within("B's resume ends", on_b.rest()).await;
    assert!(events(&rest).is_empty(), "{rest:?}");
    assert_eq!(c.handlers[1].cancellations.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_posted_to_b_reaches_the_handler_waiting_on_a() {
    let c = cluster(DisconnectPolicy::Never, Arc::new(Semaphore::new(0))).await;
    let sid = c.initialize(0).await;
    let resp = c.post(0, Some(&sid), &call(9, "ask", json!({}))).await;
    let mut reader = SseReader::new(resp);
    let ask = within("the elicitation request", reader.next_message())
        .await
        .unwrap()
        .json();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");

    let answer = json!({"jsonrpc": "2.0", "id": ask["id"],
                        "result": {"action": "accept", "content": {"name": "Ada"}}});
    let r = c.post(1, Some(&sid), &answer).await;
    assert_eq!(r.status(), 202);
    let result = within("the tool's result on A", reader.next_message())
        .await
        .unwrap()
        .json();
    assert_eq!(result["id"], 9, "{result}");
    assert_eq!(
        result["result"]["answer"]["content"],
        json!({"name": "Ada"}),
        "{result}"
    );
}

/// One request of the exactly-once test: `countdown` (n ticks, each a
/// progress and a log message, then the response) started on the
/// balancer's next instance, its connection dropped by the client after a
/// random number of events again and again, every resume on the next
/// instance (the requests run concurrently, so which instance is next is
/// up to their interleaving), until the response. Returns the message
/// events received, in order, with their sequence numbers.
async fn cut_and_resume(c: &Cluster, sid: &str, id: i64, n: u64, seed: u64) -> Vec<(u64, Value)> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut body = call(id, "countdown", json!({"n": n, "interval_ms": 5}));
    body["params"]["_meta"] = json!({"progressToken": format!("p{id}")});
    let mut resp = c.post_rr(Some(sid), &body).await;
    let mut got: Vec<(u64, Value)> = Vec::new();
    let mut last: Option<String> = None;
    for _round in 0..200 {
        assert_eq!(resp.status(), 200, "request {id}");
        let mut reader = SseReader::new(resp);
        let budget = rng.random_range(1..=4);
        let mut taken = 0;
        let mut done = false;
        while taken < budget {
            let Some(rec) = within("an event", reader.next()).await else {
                break;
            };
            let Rec::Event { id: eid, data } = rec else {
                continue;
            };
            last = Some(eid.clone());
            if data.is_empty() {
                continue;
            }
            let seq: u64 = eid.split('.').nth(2).unwrap().parse().unwrap();
            let m: Value = serde_json::from_str(&data).unwrap();
            done = m["id"] == id;
            got.push((seq, m));
            taken += 1;
            if done {
                break;
            }
        }
        if done {
            return got;
        }
        // The client cuts the connection (drops it mid-stream) and resumes
        // on a random instance.
        drop(reader);
        let from = last.clone().expect("a priming id first");
        resp = c.resume_rr(sid, &from).await;
    }
    panic!("request {id} never got its response: {got:?}");
}

/// Exactly once, in order, under random instances and random cuts: many
/// requests of two sessions at once, every exchange on the balancer's next
/// instance (no stickiness; the interleaving decides),
/// every connection cut by the client at a random point; each request gets
/// every event of its stream once, with consecutive sequence numbers, ticks
/// in order, and its response last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_exactly_once_under_random_instances_and_cuts() {
    let seed: u64 = std::env::var("CLUSTER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("CLUSTER_SEED={seed}");
    let c = Arc::new(cluster(DisconnectPolicy::Never, Arc::new(Semaphore::new(0))).await);
    let sessions = [c.initialize(0).await, c.initialize(1).await];
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..16_i64 {
        let (c, sid) = (c.clone(), sessions[usize::try_from(i).unwrap() % 2].clone());
        let n = 2 + u64::try_from(i).unwrap() % 4;
        tasks.spawn(async move {
            let got = cut_and_resume(&c, &sid, 100 + i, n, seed.wrapping_add(i as u64)).await;
            (i, n, got)
        });
    }
    let mut results = Vec::new();
    while let Some(r) = tasks.join_next().await {
        results.push(r);
    }
    // Resumes landed on both instances.
    let log = c.lb.log();
    for b in [0, 1] {
        assert!(
            log.iter().any(|r| r.method == "GET" && r.backend == b),
            "no resume on instance {b}"
        );
    }
    for r in results {
        let (i, n, got) = r.unwrap();
        let seqs: Vec<u64> = got.iter().map(|(s, _)| *s).collect();
        let want: Vec<u64> = (1..=2 * n + 1).collect();
        assert_eq!(
            seqs, want,
            "request {i}: every event once, in order (seed {seed})"
        );
        let ticks: Vec<&Value> = got
            .iter()
            .filter(|(_, m)| m["method"] == "notifications/message")
            .map(|(_, m)| &m["params"]["data"]["tick"])
            .collect();
        assert_eq!(
            ticks,
            (1..=n)
                .map(Value::from)
                .collect::<Vec<_>>()
                .iter()
                .collect::<Vec<_>>()
        );
        assert_eq!(got.last().unwrap().1["result"]["done"], n, "request {i}");
    }
}
