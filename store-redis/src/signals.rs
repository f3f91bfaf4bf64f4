//! [`RedisSignalBus`]: the `SignalBus` over Redis pub/sub.
//!
//! A signal for session `SID` is `PUBLISH PREFIX:sig:SID <message>`; every
//! instance holds one subscription connection with `PSUBSCRIBE
//! PREFIX:sig:*` and hands what it hears to its in-process fan-out. One
//! pattern for all sessions (not a channel per session) because signals
//! are rare and the instance holding the request is not known to the one
//! publishing: every instance hears every signal and acts only on the
//! sessions it holds. Pub/sub is fire-and-forget, as a signal may be: a
//! cancel or an answer that finds nobody is dropped, as it would be in one
//! process.
//!
//! On Redis Cluster, classic pub/sub reaches the subscribers of every
//! node, whichever node a `PUBLISH` reached: the subscription is held on
//! one configured node (the next one after a loss), and publishing goes
//! through the cluster connection.
//!
//! The subscription is re-established by itself after Redis went away
//! (every [`RESUBSCRIBE_PAUSE`]); signals published meanwhile are lost to
//! this instance. Publishing goes through the shared multiplexed
//! connection and fails as unavailable while Redis is down.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use mcp_transport_core::event_log::BackendError;
use mcp_transport_core::session_store::{
    SessionSignal, SignalBus, SignalFanout, SignalSubscription,
};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::connection::RedisConnection;
use crate::error::RedisStoreError;

/// The pause before subscribing again after the subscription connection
/// was lost (or could not be made).
pub const RESUBSCRIBE_PAUSE: Duration = Duration::from_millis(500);

/// The `SignalBus` over Redis pub/sub (see the module documentation).
/// Dropping it ends its subscription task.
#[derive(Debug)]
pub struct RedisSignalBus {
    conn: RedisConnection,
    fanout: Arc<SignalFanout>,
    subscribed: watch::Receiver<bool>,
    task: JoinHandle<()>,
}

impl RedisSignalBus {
    /// Starts the subscription task (needs a tokio runtime). Signals
    /// published before the subscription is in place are not heard: wait
    /// for [`ready`](Self::ready) where that matters.
    pub fn start(conn: RedisConnection) -> Self {
        let fanout = Arc::new(SignalFanout::default());
        let (tx, subscribed) = watch::channel(false);
        let task = tokio::spawn(listen(conn.clone(), fanout.clone(), tx));
        RedisSignalBus {
            conn,
            fanout,
            subscribed,
            task,
        }
    }

    /// Waits until the subscription is in place, at most the connection's
    /// connection timeout.
    ///
    /// # Errors
    ///
    /// [`RedisStoreError::Protocol`] naming the timeout when Redis could
    /// not be subscribed to in time.
    pub async fn ready(&self) -> Result<(), RedisStoreError> {
        let mut rx = self.subscribed.clone();
        let wait = self.conn.connection_timeout + RESUBSCRIBE_PAUSE;
        match tokio::time::timeout(wait, rx.wait_for(|s| *s)).await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(RedisStoreError::Protocol(format!(
                "not subscribed to the signal channel within {} ms",
                wait.as_millis()
            ))),
        }
    }

    fn channel(&self, session_id: &str) -> String {
        format!("{}:sig:{session_id}", self.conn.prefix)
    }
}

impl Drop for RedisSignalBus {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Subscribes, forwards every message to `fanout`, and subscribes again
/// after a loss.
async fn listen(conn: RedisConnection, fanout: Arc<SignalFanout>, subscribed: watch::Sender<bool>) {
    let prefix = format!("{}:sig:", conn.prefix);
    // On a cluster, each attempt tries the next configured node.
    for client in conn.clients.iter().cycle() {
        let ps = tokio::time::timeout(conn.connection_timeout, client.get_async_pubsub()).await;
        if let Ok(Ok(mut ps)) = ps
            && ps.psubscribe(format!("{prefix}*")).await.is_ok()
        {
            subscribed.send_replace(true);
            let mut messages = ps.into_on_message();
            while let Some(msg) = messages.next().await {
                if let Some(session_id) = msg.get_channel_name().strip_prefix(&prefix) {
                    fanout.deliver(&SessionSignal {
                        session_id: session_id.to_owned(),
                        message: bytes::Bytes::copy_from_slice(msg.get_payload_bytes()),
                    });
                }
            }
            // The subscription ended (Redis went away): subscribe again.
            subscribed.send_replace(false);
        }
        tokio::time::sleep(RESUBSCRIBE_PAUSE).await;
    }
}

#[async_trait::async_trait]
impl SignalBus for RedisSignalBus {
    async fn publish(&self, signal: SessionSignal) -> Result<(), BackendError> {
        let mut m = self.conn.manager.clone();
        let _: i64 = redis::cmd("PUBLISH")
            .arg(self.channel(&signal.session_id))
            .arg(signal.message.as_ref())
            .query_async(&mut m)
            .await
            .map_err(|e| Box::new(RedisStoreError::from(e)) as BackendError)?;
        Ok(())
    }

    fn subscribe(&self) -> SignalSubscription {
        self.fanout.subscribe()
    }
}
