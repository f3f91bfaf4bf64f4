//! Redis going away: every operation fails with the traits' `Backend`
//! error wrapping `RedisStoreError::Unavailable` (nothing panics, nothing
//! hangs past the response timeout), and the same store works again once
//! Redis is back, with no new connection made by the caller.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use mcp_store_redis::{
    RedisConnection, RedisConnectionConfig, RedisEventStore, RedisEventStoreConfig,
    RedisSessionStore, RedisStoreError, RedisTaskStore,
};
use mcp_test_support::{RedisServer, within};
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::{EventStore, ReplayError, StoreError};
use mcp_transport_core::session_store::{NewSession, SessionStore, SessionStoreError};
use mcp_transport_core::task_store::{NewTask, TaskStore, TaskStoreError};

fn unavailable(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<RedisStoreError>()
        .is_some_and(RedisStoreError::is_unavailable)
}

fn task(id: &str) -> NewTask {
    NewTask {
        id: id.to_owned(),
        scope: None,
        ttl_ms: Some(60_000),
        poll_interval_ms: None,
        status_message: None,
    }
}

/// Retries `op` until it succeeds (Redis is back), bounded.
async fn until_ok<T, E: std::fmt::Debug, F: std::future::Future<Output = Result<T, E>>>(
    what: &str,
    mut op: impl FnMut() -> F,
) -> T {
    for _ in 0..100 {
        if let Ok(v) = op().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} never succeeded after Redis came back");
}

#[tokio::test]
async fn operations_fail_typed_while_redis_is_down_and_recover_after() {
    let mut redis = RedisServer::start();
    let mut config = RedisConnectionConfig::new(redis.url());
    config.response_timeout = Duration::from_millis(500);
    let conn = RedisConnection::connect(&config).await.unwrap();
    let events = RedisEventStore::new(conn.clone(), RedisEventStoreConfig::default());
    let tasks = RedisTaskStore::new(conn.clone(), Default::default());
    let sessions = RedisSessionStore::new(conn, Default::default());
    let new_session = || NewSession {
        id: "s".into(),
        tag: "t".into(),
        version: "2025-11-25".into(),
        capabilities: serde_json::value::RawValue::from_string("{}".into()).unwrap(),
        client_info: None,
        principal: None,
        idle_timeout_ms: 60_000,
    };
    let t = SessionTag::from_u64(1);
    events.open_session(&t).await.unwrap();
    events.open_stream(&t, StreamId(1)).await.unwrap();
    events
        .append(&t, StreamId(1), Bytes::from_static(b"{}"))
        .await
        .unwrap();
    tasks.create(task("a"), 0).await.unwrap();

    redis.stop();
    within("operations against a stopped Redis", async {
        match events
            .append(&t, StreamId(1), Bytes::from_static(b"{}"))
            .await
        {
            Err(StoreError::Backend(e)) => assert!(unavailable(&*e), "{e:?}"),
            other => panic!("append: {other:?}"),
        }
        match events.open_session(&SessionTag::from_u64(2)).await {
            Err(StoreError::Backend(e)) => assert!(unavailable(&*e), "{e:?}"),
            other => panic!("open_session: {other:?}"),
        }
        match events
            .replay_after(&t, &EventId::priming(t, StreamId(1)))
            .await
        {
            Err(ReplayError::Backend(e)) => assert!(unavailable(&*e), "{e:?}"),
            other => panic!("replay: {other:?}"),
        }
        match tasks.get("a", None, 1).await {
            Err(TaskStoreError::Backend(e)) => assert!(unavailable(&*e), "{e:?}"),
            other => panic!("tasks get: {other:?}"),
        }
        match tasks.create(task("b"), 1).await {
            Err(TaskStoreError::Backend(e)) => assert!(unavailable(&*e), "{e:?}"),
            other => panic!("tasks create: {other:?}"),
        }
        match sessions.create(new_session(), 1).await {
            Err(SessionStoreError::Backend(e)) => assert!(unavailable(&*e), "{e:?}"),
            other => panic!("sessions create: {other:?}"),
        }
    })
    .await;

    // Back (empty: this Redis persists nothing). The same stores work
    // again, scripts reloaded, with no reconnect by the caller.
    redis.restart();
    within("recovery", async {
        let t2 = SessionTag::from_u64(3);
        until_ok("open_session", || events.open_session(&t2)).await;
        events.open_stream(&t2, StreamId(1)).await.unwrap();
        let id = events
            .append(&t2, StreamId(1), Bytes::from_static(b"x"))
            .await
            .unwrap();
        assert_eq!(id.seq, 1);
        let r = events
            .replay_after(&t2, &EventId::priming(t2, StreamId(1)))
            .await
            .unwrap();
        assert_eq!(r.events.len(), 1);
        tasks.create(task("c"), 2).await.unwrap();
        tasks
            .deliver_input("c", None, BTreeMap::new(), 3)
            .await
            .unwrap();
        assert!(tasks.get("c", None, 4).await.is_ok());
        sessions.create(new_session(), 4).await.unwrap();
        assert!(sessions.touch("s", 5).await.is_ok());
    })
    .await;
}

#[tokio::test]
async fn a_store_built_while_redis_is_down_starts_working_when_it_comes_up() {
    let mut redis = RedisServer::start();
    let url = redis.url();
    redis.stop();
    let mut config = RedisConnectionConfig::new(url);
    config.response_timeout = Duration::from_millis(500);
    assert!(
        RedisConnection::connect(&config)
            .await
            .is_err_and(|e| e.is_unavailable()),
        "connect checks that Redis answers"
    );
    let conn = RedisConnection::lazy(&config).unwrap();
    let events = RedisEventStore::new(conn, RedisEventStoreConfig::default());
    let t = SessionTag::from_u64(1);
    assert!(matches!(
        events.open_session(&t).await,
        Err(StoreError::Backend(_))
    ));
    redis.restart();
    within(
        "recovery",
        until_ok("open_session", || events.open_session(&t)),
    )
    .await;
}
