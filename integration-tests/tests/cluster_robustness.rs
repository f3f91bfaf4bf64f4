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
//!   back and finding its lease taken over, cancels the request.

use std::sync::Arc;
use std::time::Duration;

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
    let server: LegacyServer = rev::server(h, config);
    TestServer::serve(axum::Router::new().nest_service("/mcp", server.router())).await
}

fn post(url: &str, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
    let mut r = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string());
    if let Some(s) = session {
        r = r.header("mcp-session-id", s);
    }
    r
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "robustness-test", "version": "1"}}})
}

/// `initialize` on `url`: the session id (`None` when not 200).
async fn session(url: &str) -> Option<String> {
    let r = post(url, None, &initialize()).send().await.unwrap();
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
    let events = Arc::new(MemoryEventStore::default());
    let sessions = Arc::new(MemorySessionStore::new(MemorySessionStoreConfig::default()));
    let bus = Arc::new(LocalSignalBus::default());
    let mut instances = Vec::new();
    let mut holders = Vec::new();
    for _ in 0..2 {
        let l = Leases::new(leases.clone())
            .with_timing(Duration::from_secs(1), Duration::from_millis(50))
            .unwrap();
        holders.push(l.holder.clone());
        let config = rev::server_config()
            .with_event_store(events.clone())
            .with_session_store(sessions.clone())
            .with_signals(bus.clone())
            .with_leases(l)
            .with_json_response(json_response);
        instances.push(serve(config, handler(gate.clone(), cancelled.clone())).await);
    }
    (instances, holders)
}

/// A resume (`GET` + `Last-Event-ID`) on `url`.
async fn resume(url: &str, sid: &str, last: &str) -> SseReader {
    let r = reqwest::Client::new()
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
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
