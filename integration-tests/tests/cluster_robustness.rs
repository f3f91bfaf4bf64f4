//! Issue 15's robustness items on the session engine, in process:
//!
//! * **Redis stopped during an answer**: a request whose events can no
//!   longer be logged still gets its response on the attached connection
//!   (delivered without an id, since no resume could replay it), nothing
//!   panics, requests meanwhile get 503, and once Redis is back the same
//!   instance serves new sessions with no restart.
//! * **Leases** with the in-process `MemoryLeaseStore` shared by two
//!   engines: when instance A "dies" (cut off from the store, its leases
//!   lapse: `MemoryLeaseStore::cut_off`), the client following A's stream
//!   through B gets one `-32603` error response and the stream ends; A,
//!   back and finding its lease taken over, cancels the request. The same
//!   for a 2025-03-26 batch's stream (one error per unanswered request of
//!   the batch), in SSE and in `json_response` mode.
//! * **Graceful shutdown** with leases: instance A, shutting down, lets a
//!   request finish within the grace period (B's follower gets the
//!   result), and abandons one still running after it — B's follower gets
//!   A's `-32603` error at once, with a lease TTL of an hour, so only the
//!   abandonment (not the lease lapsing) can have ended it.

use std::sync::Arc;
use std::time::Duration;

use mcp_rev_2025_03_26 as rev_2025_03_26;
use mcp_rev_2025_11_25::{self as rev};
use mcp_session_engine::server::{LegacyServer, ServerConfig};
use mcp_store_redis::{
    RedisConnection, RedisConnectionConfig, RedisEventStore, RedisEventStoreConfig,
    RedisSessionStore,
};
use mcp_test_support::handler::{Call, TestHandler, tool_fn};
use mcp_test_support::sse::{Rec, SseReader};
use mcp_test_support::{RedisServer, TestServer, eventually, within};
use mcp_transport_core::event_log::MemoryEventStore;
use mcp_transport_core::handler::{LogLevel, Outcome};
use mcp_transport_core::lease::{Leases, MemoryLeaseStore};
use mcp_transport_core::session_store::{
    LocalSignalBus, MemorySessionStore, MemorySessionStoreConfig,
};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// A handler whose `gated` tool logs `{"tick": i}` for i = 1..=3, each
/// after the test adds a permit to `gate`, then answers `{"done": 3}`;
/// `cancelled` gets a permit when a run sees its cancellation.
fn handler(gate: Arc<Semaphore>, cancelled: Arc<Semaphore>) -> Arc<TestHandler> {
    let gated = tool_fn(move |c: Call| {
        let (gate, cancelled) = (gate.clone(), cancelled.clone());
        async move {
            for i in 1..=3 {
                tokio::select! {
                    p = gate.acquire() => p.expect("gate open").forget(),
                    () = c.cx.cancelled() => {
                        cancelled.add_permits(1);
                        return Outcome::json(&json!({ "cancelled": i }));
                    }
                }
                let _ = c.cx.log(LogLevel::Info, None, json!({ "tick": i })).await;
            }
            Outcome::json(&json!({ "done": 3 }))
        }
    });
    Arc::new(
        TestHandler::builder("robustness")
            .tool("gated", gated)
            .build(),
    )
}

async fn serve(config: ServerConfig, h: Arc<TestHandler>) -> TestServer {
    serve_engine(rev::server(h, config)).await
}

async fn serve_engine(server: LegacyServer) -> TestServer {
    TestServer::serve(axum::Router::new().nest_service("/mcp", server.router())).await
}

fn post(url: &str, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
    post_at("2025-11-25", url, session, body)
}

/// A POST at protocol revision `version`.
fn post_at(
    version: &str,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut r = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", version)
        .body(body.to_string());
    if let Some(s) = session {
        r = r.header("mcp-session-id", s);
    }
    r
}

fn initialize() -> Value {
    initialize_at("2025-11-25")
}

fn initialize_at(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "robustness-test", "version": "1"}}})
}

/// `initialize` on `url`: the session id (`None` when not 200).
async fn session(url: &str) -> Option<String> {
    session_at("2025-11-25", url).await
}

/// `initialize` at `version` on `url`: the session id (`None` when not 200).
async fn session_at(version: &str, url: &str) -> Option<String> {
    let r = post_at(version, url, None, &initialize_at(version))
        .send()
        .await
        .unwrap();
    (r.status() == 200).then(|| r.headers()["mcp-session-id"].to_str().unwrap().to_owned())
}

fn gated_call(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "gated", "arguments": {}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stopped_during_an_answer_the_response_still_arrives_then_service_resumes() {
    let mut redis = RedisServer::start();
    let conn = RedisConnection::connect(&RedisConnectionConfig::new(redis.url()))
        .await
        .unwrap();
    let config = rev::server_config()
        .with_event_store(Arc::new(RedisEventStore::new(
            conn.clone(),
            RedisEventStoreConfig::default(),
        )))
        .with_session_store(Arc::new(RedisSessionStore::new(
            conn,
            MemorySessionStoreConfig::default(),
        )));
    let gate = Arc::new(Semaphore::new(0));
    let server = serve(config, handler(gate.clone(), Arc::new(Semaphore::new(0)))).await;
    let url = server.url();
    let sid = session(&url).await.expect("a session");

    let mut answer = SseReader::new(post(&url, Some(&sid), &gated_call(1)).send().await.unwrap());
    assert!(within("priming", answer.next()).await.unwrap().is_priming());
    gate.add_permits(1);
    let tick = within("tick 1", answer.next_message()).await.unwrap();
    assert_eq!(tick.json()["params"]["data"]["tick"], 1);
    let logged_id = tick.id().to_owned();

    // Redis goes away while the tool runs: ticks 2 and 3 cannot be logged,
    // nor the response.
    redis.stop();
    gate.add_permits(2);
    let rest = within("the answer ends", answer.rest()).await;
    let messages: Vec<&Rec> = rest
        .iter()
        .filter(|r| matches!(r, Rec::Event { data, .. } if !data.is_empty()))
        .collect();
    assert_eq!(messages.len(), 1, "only the response arrives: {rest:?}");
    let response = messages[0].json();
    assert_eq!(response["id"], 1, "{response}");
    assert_eq!(response["result"]["done"], 3, "{response}");
    assert_eq!(
        messages[0].id(),
        logged_id,
        "delivered directly, without a new id (the log refused it)"
    );

    // Meanwhile a request that needs Redis is 503 with a JSON-RPC body.
    let r = post(&url, None, &initialize()).send().await.unwrap();
    assert_eq!(r.status(), 503);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32603, "{v}");

    // Redis is back (empty: nothing was persisted): the same instance
    // serves a new session end to end.
    redis.restart();
    let sid = within("initialize works again", async {
        loop {
            if let Some(s) = session(&url).await {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let answer = post(&url, Some(&sid), &gated_call(2)).send().await.unwrap();
    gate.add_permits(3);
    let recs = within("a full answer", SseReader::new(answer).rest()).await;
    let last = recs
        .iter()
        .rev()
        .find(|r| matches!(r, Rec::Event { data, .. } if !data.is_empty()))
        .unwrap();
    assert_eq!(last.json()["result"]["done"], 3);
}

/// Two engines sharing in-process stores and one `MemoryLeaseStore`
/// (each its own holder, renewing every 50 ms): the servers and holders.
async fn leased_pair(
    leases: &Arc<MemoryLeaseStore>,
    gate: &Arc<Semaphore>,
    cancelled: &Arc<Semaphore>,
    json_response: bool,
) -> (Vec<TestServer>, Vec<String>) {
    let pair = Pair::start(leases, gate, cancelled, Era::V2025_11_25, |c| {
        c.with_json_response(json_response)
    })
    .await;
    (pair.servers, pair.holders)
}

/// Which engine a [`Pair`] runs.
#[derive(Clone, Copy)]
enum Era {
    V2025_11_25,
    V2025_03_26,
}

/// Two leased engines sharing in-process stores, with their `LegacyServer`
/// handles (for the shutdown).
struct Pair {
    servers: Vec<TestServer>,
    engines: Vec<LegacyServer>,
    holders: Vec<String>,
}

impl Pair {
    /// Lease TTL 1 s, renewed every 50 ms, unless `configure` says
    /// otherwise.
    async fn start(
        leases: &Arc<MemoryLeaseStore>,
        gate: &Arc<Semaphore>,
        cancelled: &Arc<Semaphore>,
        era: Era,
        configure: impl Fn(ServerConfig) -> ServerConfig,
    ) -> Pair {
        let events = Arc::new(MemoryEventStore::default());
        let sessions = Arc::new(MemorySessionStore::new(MemorySessionStoreConfig::default()));
        let bus = Arc::new(LocalSignalBus::default());
        let mut pair = Pair {
            servers: Vec::new(),
            engines: Vec::new(),
            holders: Vec::new(),
        };
        for _ in 0..2 {
            let l = Leases::new(leases.clone())
                .with_timing(Duration::from_secs(1), Duration::from_millis(50))
                .unwrap();
            let base = match era {
                Era::V2025_11_25 => rev::server_config(),
                Era::V2025_03_26 => rev_2025_03_26::server_config(rev_2025_03_26::Profile::Both),
            };
            let config = configure(
                base.with_event_store(events.clone())
                    .with_session_store(sessions.clone())
                    .with_signals(bus.clone())
                    .with_leases(l),
            );
            let holder = config.leases.as_ref().unwrap().holder.clone();
            let h = handler(gate.clone(), cancelled.clone());
            let engine = match era {
                Era::V2025_11_25 => rev::server(h, config),
                Era::V2025_03_26 => rev_2025_03_26::server(h, config),
            };
            pair.holders.push(holder);
            pair.servers.push(serve_engine(engine.clone()).await);
            pair.engines.push(engine);
        }
        pair
    }

    fn url(&self, i: usize) -> String {
        self.servers[i].url()
    }
}

/// A resume (`GET` + `Last-Event-ID`) on `url`.
async fn resume(url: &str, sid: &str, last: &str) -> SseReader {
    resume_at("2025-11-25", url, sid, last).await
}

/// A resume at protocol revision `version`.
async fn resume_at(version: &str, url: &str, sid: &str, last: &str) -> SseReader {
    let r = reqwest::Client::new()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", version)
        .header("mcp-session-id", sid)
        .header("last-event-id", last)
        .send()
        .await
        .unwrap();
    SseReader::new(r)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_leases_a_dead_writer_s_stream_ends_with_one_error_on_b() {
    let leases = Arc::new(MemoryLeaseStore::default());
    let gate = Arc::new(Semaphore::new(0));
    let cancelled = Arc::new(Semaphore::new(0));
    let (instances, holders) = leased_pair(&leases, &gate, &cancelled, false).await;
    let url = |i: usize| instances[i].url();
    let sid = session(&url(0)).await.unwrap();

    // A runs the request (held at the gate); the client resumes on B.
    let mut on_a = SseReader::new(
        post(&url(0), Some(&sid), &gated_call(7))
            .send()
            .await
            .unwrap(),
    );
    let priming = within("priming", on_a.next()).await.unwrap();
    let priming = priming.id().to_owned();
    drop(on_a);
    assert_eq!(leases.len(), 1, "A holds the stream's lease");
    let mut on_b = resume(&url(1), &sid, &priming).await;

    // A "dies": cut off from the lease store, its lease lapses. B takes
    // it over and ends the stream.
    assert_eq!(leases.cut_off(&holders[0]), 1);
    let rest = within("B's stream ends", on_b.rest()).await;
    let messages: Vec<Value> = rest
        .iter()
        .filter(|r| matches!(r, Rec::Event { data, .. } if !data.is_empty()))
        .map(Rec::json)
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["id"], 7);
    assert_eq!(messages[0]["error"]["code"], -32603);
    // A (alive after all) reaches the store again, finds its lease taken
    // over and cancels the run.
    leases.reconnect(&holders[0]);
    within("A's run is cancelled", cancelled.acquire())
        .await
        .unwrap()
        .forget();
    eventually("the lease is released", || leases.is_empty()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_leases_a_dead_writer_s_standalone_stream_just_ends_on_b() {
    let leases = Arc::new(MemoryLeaseStore::default());
    let (gate, cancelled) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    let (instances, holders) = leased_pair(&leases, &gate, &cancelled, false).await;
    let sid = session(&instances[0].url()).await.unwrap();
    let get = reqwest::Client::new()
        .get(instances[0].url())
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    let mut on_a = SseReader::new(get);
    let priming = within("priming", on_a.next())
        .await
        .unwrap()
        .id()
        .to_owned();
    drop(on_a);
    assert_eq!(leases.len(), 1, "A holds the standalone stream's lease");
    let mut on_b = resume(&instances[1].url(), &sid, &priming).await;
    assert_eq!(leases.cut_off(&holders[0]), 1);
    let rest = within("B's stream ends", on_b.rest()).await;
    assert!(
        rest.iter()
            .all(|r| !matches!(r, Rec::Event { data, .. } if !data.is_empty())),
        "no message: {rest:?}"
    );
}

/// In `json_response` mode the stream opens when the handler first
/// streams; it is leased all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_leases_a_json_mode_stream_opened_late_is_leased_too() {
    let leases = Arc::new(MemoryLeaseStore::default());
    let (gate, cancelled) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    let (instances, holders) = leased_pair(&leases, &gate, &cancelled, true).await;
    let sid = session(&instances[0].url()).await.unwrap();
    let answer = post(&instances[0].url(), Some(&sid), &gated_call(9));
    let answer = tokio::spawn(answer.send());
    gate.add_permits(1); // tick 1 makes the answer an SSE stream
    let mut on_a = SseReader::new(answer.await.unwrap().unwrap());
    let priming = within("priming", on_a.next())
        .await
        .unwrap()
        .id()
        .to_owned();
    drop(on_a);
    assert_eq!(leases.len(), 1, "A holds the late stream's lease");
    let mut on_b = resume(&instances[1].url(), &sid, &priming).await;
    assert_eq!(leases.cut_off(&holders[0]), 1);
    let rest = within("B's stream ends", on_b.rest()).await;
    let last = rest
        .iter()
        .rev()
        .find(|r| matches!(r, Rec::Event { data, .. } if !data.is_empty()))
        .map(Rec::json)
        .expect("a message");
    assert_eq!(last["id"], 9, "{last}");
    assert_eq!(last["error"]["code"], -32603, "{last}");
}

/// The messages of `recs` (events with data).
fn messages_of(recs: &[Rec]) -> Vec<Value> {
    recs.iter()
        .filter(|r| matches!(r, Rec::Event { data, .. } if !data.is_empty()))
        .map(Rec::json)
        .collect()
}

/// The ids of `messages` that are `-32603` error responses, sorted.
fn errored_ids(messages: &[Value]) -> Vec<i64> {
    let mut ids: Vec<i64> = messages
        .iter()
        .filter(|m| m["error"]["code"] == -32603)
        .filter_map(|m| m["id"].as_i64())
        .collect();
    ids.sort_unstable();
    ids
}

/// A 2025-03-26 batch: two `gated` calls (7, 8) and a `ping` (9).
fn gated_batch() -> Value {
    json!([gated_call(7), gated_call(8), {"jsonrpc": "2.0", "id": 9, "method": "ping"}])
}

/// A 2025-03-26 batch's SSE stream is leased with the ids of its handler
/// requests: when its writer dies, a follower on B writes one error for
/// each of them (none for the `ping` answered already) and ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_leases_a_dead_writer_s_batch_stream_ends_with_one_error_per_request_on_b() {
    let leases = Arc::new(MemoryLeaseStore::default());
    let (gate, cancelled) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    let pair = Pair::start(&leases, &gate, &cancelled, Era::V2025_03_26, |c| c).await;
    let v = "2025-03-26";
    let sid = session_at(v, &pair.url(0)).await.unwrap();
    let answer = post_at(v, &pair.url(0), Some(&sid), &gated_batch())
        .send()
        .await
        .unwrap();
    let mut on_a = SseReader::new(answer);
    let first = within("the ping's response", on_a.next_message())
        .await
        .unwrap();
    assert_eq!(first.json()["id"], 9, "{:?}", first.json());
    let last = first.id().to_owned();
    assert!(!last.is_empty(), "the batch's events carry ids");
    drop(on_a);
    assert_eq!(leases.len(), 1, "A holds the batch stream's lease");
    let mut on_b = resume_at(v, &pair.url(1), &sid, &last).await;
    assert_eq!(leases.cut_off(&pair.holders[0]), 1);
    let rest = within("B's stream ends", on_b.rest()).await;
    let messages = messages_of(&rest);
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(errored_ids(&messages), [7, 8], "{messages:?}");
    // A, back, finds its lease taken over and cancels both runs.
    leases.reconnect(&pair.holders[0]);
    within("A's runs are cancelled", cancelled.acquire_many(2))
        .await
        .unwrap()
        .forget();
}

/// In `json_response` mode a batch's stream opens when a request first
/// streams; it is leased all the same, with every request of the batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_leases_a_json_mode_batch_stream_opened_late_is_leased_too() {
    let leases = Arc::new(MemoryLeaseStore::default());
    let (gate, cancelled) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    let pair = Pair::start(&leases, &gate, &cancelled, Era::V2025_03_26, |c| {
        c.with_json_response(true)
    })
    .await;
    let v = "2025-03-26";
    let sid = session_at(v, &pair.url(0)).await.unwrap();
    let batch = json!([gated_call(7), gated_call(8)]);
    let answer = tokio::spawn(post_at(v, &pair.url(0), Some(&sid), &batch).send());
    gate.add_permits(1); // one tick makes the answer an SSE stream
    let mut on_a = SseReader::new(answer.await.unwrap().unwrap());
    let tick = within("a tick", on_a.next_message()).await.unwrap();
    assert_eq!(
        tick.json()["params"]["data"]["tick"],
        1,
        "{:?}",
        tick.json()
    );
    let last = tick.id().to_owned();
    drop(on_a);
    assert_eq!(leases.len(), 1, "A holds the late batch stream's lease");
    let mut on_b = resume_at(v, &pair.url(1), &sid, &last).await;
    assert_eq!(leases.cut_off(&pair.holders[0]), 1);
    let rest = within("B's stream ends", on_b.rest()).await;
    let messages = messages_of(&rest);
    assert_eq!(errored_ids(&messages), [7, 8], "{messages:?}");
}

/// Instance A shuts down while a request runs; the client follows its
/// stream through B. A's lease TTL is an hour: B could only notice a dead
/// writer after it. `abandon_after` lets the request finish if it can,
/// and otherwise ends the stream with A's error at once.
async fn shutdown_pair(
    leases: &Arc<MemoryLeaseStore>,
    gate: &Arc<Semaphore>,
    cancelled: &Arc<Semaphore>,
) -> (Pair, String, SseReader) {
    let pair = Pair::start(leases, gate, cancelled, Era::V2025_11_25, |c| {
        let l = c.leases.clone().unwrap();
        c.with_leases(
            l.with_timing(Duration::from_secs(3600), Duration::from_millis(50))
                .unwrap(),
        )
    })
    .await;
    let sid = session(&pair.url(0)).await.unwrap();
    let mut on_a = SseReader::new(
        post(&pair.url(0), Some(&sid), &gated_call(7))
            .send()
            .await
            .unwrap(),
    );
    let priming = within("priming", on_a.next()).await.unwrap();
    let priming = priming.id().to_owned();
    // The drain closes A's connection; the client resumes on B.
    assert_eq!(pair.engines[0].drain().await, 1);
    let closed = within("A's connection closes", on_a.rest()).await;
    assert!(messages_of(&closed).is_empty(), "{closed:?}");
    let on_b = resume(&pair.url(1), &sid, &priming).await;
    (pair, sid, on_b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_shutdown_abandons_a_request_still_running_and_b_s_follower_errors_at_once() {
    let leases = Arc::new(MemoryLeaseStore::default());
    let (gate, cancelled) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    let (pair, _sid, mut on_b) = shutdown_pair(&leases, &gate, &cancelled).await;
    assert_eq!(leases.len(), 1, "A holds the stream's lease");
    // The grace period is over: A abandons the request.
    assert_eq!(pair.engines[0].abandon_after(Duration::ZERO).await, 1);
    let rest = within("B's stream ends", on_b.rest()).await;
    let messages = messages_of(&rest);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["id"], 7);
    assert_eq!(messages[0]["error"]["code"], -32603);
    let text = messages[0]["error"]["message"].as_str().unwrap();
    assert!(text.contains("shut down"), "{text}");
    // A's run saw the cancellation; the lease is released, not left to lapse.
    within("A's run is cancelled", cancelled.acquire())
        .await
        .unwrap()
        .forget();
    assert!(leases.is_empty(), "the lease was released");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_shutdown_lets_a_request_finish_within_the_grace_period() {
    let leases = Arc::new(MemoryLeaseStore::default());
    let (gate, cancelled) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    let (pair, _sid, mut on_b) = shutdown_pair(&leases, &gate, &cancelled).await;
    let mut settling = Box::pin(pair.engines[0].abandon_after(Duration::from_secs(3600)));
    assert!(
        futures_util::poll!(&mut settling).is_pending(),
        "A waits for the request"
    );
    gate.add_permits(3);
    let rest = within("B's stream ends", on_b.rest()).await;
    let messages = messages_of(&rest);
    let last = messages.last().expect("a message");
    assert_eq!(last["id"], 7, "{last}");
    assert_eq!(last["result"]["done"], 3, "{last}");
    let abandoned = within("A's shutdown ends", settling).await;
    assert_eq!(abandoned, 0, "nothing was left to abandon");
    assert!(leases.is_empty());
    assert_eq!(cancelled.available_permits(), 0, "not cancelled");
}
