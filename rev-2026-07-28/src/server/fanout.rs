//! Change notifications across instances: what one instance publishes
//! reaches the `subscriptions/listen` streams every instance holds.
//!
//! *Subscriptions* lets a client hold its listen stream on whichever
//! instance the load balancer picked, while the application may emit a
//! `notifications/tools/list_changed` or `notifications/resources/updated`
//! on any instance. With [`ModernConfig::signals`](super::ModernConfig)
//! set, [`ModernServer::publish`](super::ModernServer::publish) delivers to
//! this instance's streams and publishes the notification as a broadcast
//! [`SessionSignal`] (scope [`SCOPE`], origin this instance); every other
//! instance's listener task delivers it to its own streams, filtered by
//! each stream's subscription exactly as a local publication is. The
//! origin skips its own broadcast, so each stream gets it once.
//!
//! Delivery is at most once, like the signal bus (a bus subscription that
//! overflows loses the oldest signals, counted there); a notification is a
//! hint to re-fetch, so a lost one costs freshness, not correctness of
//! what the client later reads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use mcp_transport_core::jsonrpc::{self, Message, Notification};
use mcp_transport_core::session_store::SessionSignal;

use tokio::sync::mpsc;

use super::Shared;

/// The broadcast scope of 2026-07-28 listen streams (legacy engines use
/// their own, so an engine of each era behind one endpoint delivers once).
pub(crate) const SCOPE: &str = "modern";

/// How often the listener task checks that its server still exists when
/// no signal arrives (it ends soon after the server is dropped).
const ALIVE_CHECK: Duration = Duration::from_secs(1);

/// At most this many broadcasts wait to be handed to the bus; more are
/// dropped (and logged), like a bus subscription that overflows.
const OUTBOX: usize = 1024;

/// This instance's identity on the bus, its outbox and its listener's state.
#[derive(Debug)]
pub(crate) struct Fanout {
    /// A random id naming this instance in its broadcasts.
    origin: String,
    /// Whether the listener task runs.
    listening: AtomicBool,
    /// The queue of the task that publishes broadcasts in order (started
    /// by the first one).
    outbox: OnceLock<mpsc::Sender<SessionSignal>>,
}

impl Default for Fanout {
    fn default() -> Self {
        Fanout {
            origin: format!("{:032x}", rand::random::<u128>()),
            listening: AtomicBool::new(false),
            outbox: OnceLock::new(),
        }
    }
}

/// Delivers `n` to this instance's listen streams; how many queued it.
pub(crate) fn deliver_local(shared: &Shared, n: &Notification) -> usize {
    if n.method == "notifications/tools/list_changed" {
        shared.catalog.invalidate();
    }
    shared
        .listeners
        .publish(n, shared.config.listen_queue.max(1))
}

/// Publishes `n` to the other instances (no-op without a bus), in the
/// order of the calls: one task per server hands the queued broadcasts to
/// the bus one after the other.
pub(crate) fn broadcast(shared: &Shared, n: &Notification) {
    let Some(bus) = &shared.config.signals else {
        return;
    };
    let outbox = shared.fanout.outbox.get_or_init(|| {
        let (tx, mut rx) = mpsc::channel::<SessionSignal>(OUTBOX);
        let bus = bus.clone();
        // Ends when the server (the sender's owner) is dropped.
        tokio::spawn(async move {
            while let Some(signal) = rx.recv().await {
                if let Err(e) = bus.publish(signal).await {
                    tracing::warn!(error = %e, "could not publish a change notification to the other instances");
                }
            }
        });
        tx
    });
    let signal = SessionSignal::broadcast(
        SCOPE,
        &shared.fanout.origin,
        Message::Notification(n.clone()).to_json().into(),
    );
    if outbox.try_send(signal).is_err() {
        tracing::warn!(method = %n.method, "change notification not sent to the other instances: the outbox is full");
    }
}

/// Starts the task that delivers other instances' broadcasts here, unless
/// it runs (one per server; it ends soon after the server is dropped).
pub(crate) fn ensure_listener(shared: &Arc<Shared>) {
    let Some(bus) = &shared.config.signals else {
        return;
    };
    if shared.fanout.listening.swap(true, Ordering::AcqRel) {
        return;
    }
    // Subscribed before this returns: nothing published after is missed.
    let mut sub = bus.subscribe();
    let weak: Weak<Shared> = Arc::downgrade(shared);
    tokio::spawn(async move {
        loop {
            let signal = match tokio::time::timeout(ALIVE_CHECK, sub.recv()).await {
                Ok(s) => s,
                Err(_) if weak.strong_count() == 0 => return,
                Err(_) => continue,
            };
            let Some(shared) = weak.upgrade() else { return };
            on_signal(&shared, &signal);
        }
    });
}

/// Delivers a broadcast of [`SCOPE`] from another instance.
fn on_signal(shared: &Shared, signal: &SessionSignal) {
    let Some((scope, origin)) = signal.broadcast_parts() else {
        return;
    };
    if scope != SCOPE || origin == shared.fanout.origin {
        return;
    }
    if let Ok(jsonrpc::Body::Single(Message::Notification(n))) =
        jsonrpc::parse_body(&signal.message, false)
    {
        deliver_local(shared, &n);
    }
}

#[cfg(test)]
mod tests {
    use mcp_test_support::handler::TestHandler;
    use mcp_transport_core::session_store::LocalSignalBus;

    use super::super::{ModernConfig, ModernServer};
    use super::*;

    /// One bus subscription per server, held while the server lives (a
    /// quiet bus is not a reason to stop), let go soon after it is dropped.
    #[tokio::test(start_paused = true)]
    async fn the_listener_lives_as_long_as_its_server() {
        let bus = LocalSignalBus::default();
        let config = ModernConfig::default().with_signals(Some(Arc::new(bus.clone())));
        let server = ModernServer::new(Arc::new(TestHandler::builder("quiet").build()), config);
        ensure_listener(&server.shared);
        ensure_listener(&server.shared);
        assert_eq!(bus.subscriptions(), 1);
        tokio::time::sleep(ALIVE_CHECK * 3).await;
        assert_eq!(
            bus.subscriptions(),
            1,
            "the listener stopped on a quiet bus"
        );
        drop(server);
        tokio::time::sleep(ALIVE_CHECK * 2).await;
        assert_eq!(bus.subscriptions(), 0, "the listener outlived its server");
    }
}
