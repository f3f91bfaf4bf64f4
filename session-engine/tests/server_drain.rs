//! A graceful shutdown's two steps, and what each returns: `drain` (the
//! SSE streams asked to close) and `abandon_after` (the leased streams
//! still unfinished once the grace period is over).

mod server_common;

use std::sync::Arc;
use std::time::Duration;

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::lease::{Leases, MemoryLeaseStore};
use serde_json::json;
use server_common::*;

/// Every legacy revision, with in-memory leases.
async fn start_leased() -> TestServer {
    start(
        config()
            .with_versions([ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25])
            .with_leases(Leases::new(Arc::new(MemoryLeaseStore::default()))),
    )
    .await
}

/// The drain asks each attached stream to close and counts them: on a
/// 2025-11-25 session every SSE stream (here a running request's, which
/// closes with `retry`, SEP-1699), on an earlier one the standalone GET
/// stream.
#[tokio::test]
async fn a_drain_closes_and_counts_the_attached_streams() {
    let t =
        start(config().with_versions([ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25]))
            .await;
    let polling = t.init("2025-11-25").await;
    let mut running = SseReader::new(t.call(&polling, 1, "slow", json!({"ms": 60_000})).await);
    assert!(running.next().await.unwrap().is_priming());
    let plain = t.init("2025-06-18").await;
    let mut get = SseReader::new(t.get_in(&plain).send().await.unwrap());
    // Attached as it is answered (a 2025-06-18 GET stream sends nothing
    // before its first message).
    assert!(!t.server.is_draining());
    assert_eq!(t.server.drain().await, 2);
    assert!(t.server.is_draining());
    let rest = within("the request stream's close", running.rest()).await;
    assert!(has_retry(&rest), "closed with retry: {rest:?}");
    let rest = within("the GET stream's end", get.rest()).await;
    assert!(messages(&rest).is_empty(), "{rest:?}");
}

/// With leases, the end of the shutdown waits for running requests up to
/// the grace period: one that finishes in time keeps its answer and
/// nothing is abandoned.
#[tokio::test]
async fn a_request_that_finishes_within_the_grace_period_is_not_abandoned() {
    let t = start_leased().await;
    let s = t.init("2025-11-25").await;
    let mut running = SseReader::new(t.call(&s, 1, "slow", json!({"ms": 300})).await);
    assert!(running.next().await.unwrap().is_priming());
    assert_eq!(t.server.abandon_after(WAIT).await, 0);
    let rest = running.rest().await;
    assert_eq!(messages(&rest).last().unwrap()["result"]["slept"], 300);
}

/// Once the grace period is over, every leased stream still unfinished is
/// abandoned and counted: a running request's, whose client reads a
/// `-32603` when it resumes, and a standalone GET stream's.
#[tokio::test]
async fn what_still_runs_after_the_grace_period_is_abandoned_and_counted() {
    let t = start_leased().await;
    let s = t.init("2025-11-25").await;
    let mut running = SseReader::new(t.call(&s, 1, "slow", json!({"ms": 60_000})).await);
    let priming = running.next().await.unwrap();
    drop(running);
    let plain = t.init("2025-06-18").await;
    let get = t.get_in(&plain).send().await.unwrap();
    assert_eq!(get.status(), 200);
    assert_eq!(t.server.abandon_after(Duration::ZERO).await, 2);
    let (recs, _) = read_all(t.resume(&s, priming.id()).send().await.unwrap()).await;
    let answer = messages(&recs).last().unwrap().clone();
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert_eq!(
        t.server.abandon_after(Duration::ZERO).await,
        0,
        "nothing left"
    );
}

/// Without leases no other instance follows this one's streams: nothing
/// is waited for or abandoned.
#[tokio::test]
async fn without_leases_nothing_is_abandoned() {
    let t = start(config()).await;
    let s = t.init("2025-11-25").await;
    let mut running = SseReader::new(t.call(&s, 1, "slow", json!({"ms": 60_000})).await);
    assert!(running.next().await.unwrap().is_priming());
    assert_eq!(t.server.abandon_after(Duration::ZERO).await, 0);
}
