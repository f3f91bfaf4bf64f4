//! `RedisSignalBus`: a signal published through one instance's bus is
//! heard by every instance's subscriptions (its own too), with the session
//! id and the message intact; after Redis is stopped and started again the
//! subscription comes back by itself.

use mcp_store_redis::{RedisConnection, RedisConnectionConfig, RedisSignalBus};
use mcp_test_support::{RedisServer, within};
use mcp_transport_core::session_store::{SessionSignal, SignalBus};

fn signal(n: u32) -> SessionSignal {
    SessionSignal {
        session_id: format!("sess-{n}"),
        message: format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{n}}}}}"#
        )
        .into(),
    }
}

async fn bus(redis: &RedisServer) -> RedisSignalBus {
    let conn = RedisConnection::connect(&RedisConnectionConfig::new(redis.url()))
        .await
        .unwrap();
    let bus = RedisSignalBus::start(conn);
    bus.ready().await.unwrap();
    bus
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_instance_hears_every_signal_and_resubscribes_after_a_restart() {
    let mut redis = RedisServer::start();
    let (a, b) = (bus(&redis).await, bus(&redis).await);
    let (mut on_a, mut on_b) = (a.subscribe(), b.subscribe());
    a.publish(signal(1)).await.unwrap();
    assert_eq!(within("B hears", on_b.recv()).await, signal(1));
    assert_eq!(within("A hears its own", on_a.recv()).await, signal(1));
    assert_eq!(on_b.try_recv(), None, "once");

    redis.stop();
    assert!(a.publish(signal(2)).await.is_err(), "Redis is down");
    redis.restart();
    // Publish until B's resubscribed connection hears one (each attempt
    // after the subscription is back is heard; earlier ones are lost, as
    // pub/sub loses what nobody listens to).
    let heard = within("B hears again after the restart", async {
        let mut n = 10;
        loop {
            n += 1;
            if a.publish(signal(n)).await.is_ok() {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                if let Some(s) = on_b.try_recv() {
                    return s;
                }
            } else {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    })
    .await;
    // One of those published after the restart (numbered from 11; how
    // many it takes depends on the resubscribe pause and the machine's
    // load, so not a prefix: "sess-1…" failed once the count reached 20).
    let n: u32 = heard
        .session_id
        .strip_prefix("sess-")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a test signal: {heard:?}"));
    assert!(n > 10, "a signal from before the restart: {heard:?}");
    assert_eq!(heard, signal(n), "intact");
}

/// `ready` on a Redis that is down gives up after the connection timeout
/// plus one resubscribe pause, and says so.
#[tokio::test]
async fn ready_gives_up_after_the_connection_timeout_and_a_pause() {
    let mut redis = RedisServer::start();
    let mut config = RedisConnectionConfig::new(redis.url());
    redis.stop();
    config.connection_timeout = std::time::Duration::from_millis(300);
    let bus = RedisSignalBus::start(RedisConnection::lazy(&config).unwrap());
    match within("ready", bus.ready()).await {
        Err(e) => assert!(e.to_string().contains("within 800 ms"), "{e}"),
        Ok(()) => panic!("subscribed to a stopped Redis"),
    }
}

/// Dropping the bus ends its subscription: Redis is left with no pattern
/// subscribed.
#[tokio::test]
async fn dropping_the_bus_ends_its_subscription() {
    let redis = RedisServer::start();
    let b = bus(&redis).await;
    assert_eq!(redis.command("PUBSUB NUMPAT"), ":1");
    drop(b);
    within("the subscription ends", async {
        while redis.command("PUBSUB NUMPAT") != ":0" {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
}
