//! Signals between server instances that share sessions: the
//! [`SignalBus`] trait and its in-process implementation,
//! [`LocalSignalBus`].
//!
//! A request runs on the instance that received its `POST`, and what
//! concerns it — its cancellation token, a server-to-client request waiting
//! for the client's answer — lives in that process. Behind a load balancer
//! without sticky sessions the client's next message may reach another
//! instance: a `notifications/cancelled` naming the request (*Cancellation*:
//! "the receiver SHOULD stop processing"), or the client's response to an
//! `elicitation/create` the request sent. That instance finds nothing to
//! give it to locally and publishes it as a [`SessionSignal`]; every
//! instance receives every signal and the one holding the request acts on
//! it. Signals are rare (one per cancel or per answer), so fan-out to every
//! instance is cheap and needs no routing table.
//!
//! Delivery is at most once and best effort, like the messages themselves
//! (a cancel that arrives after the request finished is ignored, as
//! *Cancellation* says; a response nobody waits for is dropped). Each
//! subscriber's queue is bounded ([`SignalFanout::QUEUE`]); a subscriber
//! that falls that far behind loses the oldest signals (counted).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use bytes::Bytes;
use event_listener::Event;

use crate::event_log::BackendError;

/// One message for a session, handed from the instance that received it to
/// the one that can act on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSignal {
    /// The `Mcp-Session-Id`.
    pub session_id: String,
    /// The JSON text of the client's JSON-RPC message (a
    /// `notifications/cancelled`, or a response to a server-to-client
    /// request).
    pub message: Bytes,
}

/// The first character of a broadcast signal's [`SessionSignal::session_id`]:
/// session ids are visible ASCII minted by the server (`initialize`), never
/// starting with `*`, so a broadcast is never taken for a session's signal.
pub const BROADCAST_MARK: char = '*';

impl SessionSignal {
    /// A signal for every instance rather than one session: a server
    /// notification (a `notifications/tools/list_changed`, a
    /// `notifications/resources/updated`, ...) that the listeners held by
    /// every instance should receive. `scope` names the engine kind it is
    /// for (`legacy`, `modern`), `origin` the publishing instance (which
    /// has delivered it locally already and skips it). The session id
    /// becomes `*SCOPE/ORIGIN`.
    pub fn broadcast(scope: &str, origin: &str, message: Bytes) -> SessionSignal {
        SessionSignal {
            session_id: format!("{BROADCAST_MARK}{scope}/{origin}"),
            message,
        }
    }

    /// `(scope, origin)` of a [`broadcast`](Self::broadcast), `None` for a
    /// session's signal.
    pub fn broadcast_parts(&self) -> Option<(&str, &str)> {
        self.session_id
            .strip_prefix(BROADCAST_MARK)
            .and_then(|rest| rest.split_once('/'))
    }
}

/// A bus every instance of a cluster publishes to and hears from.
/// Object safe; `publish` is async so that a networked bus (Redis pub/sub)
/// can implement it.
#[async_trait::async_trait]
pub trait SignalBus: Send + Sync + 'static {
    /// Sends `signal` to every subscriber of every instance (this one's
    /// too).
    ///
    /// # Errors
    ///
    /// The backend's, when the signal could not be handed to it.
    async fn publish(&self, signal: SessionSignal) -> Result<(), BackendError>;

    /// A new subscription: every signal published from now on, by any
    /// instance.
    fn subscribe(&self) -> SignalSubscription;
}

/// The in-process fan-out behind a [`SignalSubscription`]: a networked bus
/// feeds what it receives into one of these
/// ([`deliver`](Self::deliver)); [`LocalSignalBus`] is nothing else.
#[derive(Debug, Default)]
pub struct SignalFanout {
    subscribers: Mutex<Vec<Weak<Subscriber>>>,
}

#[derive(Debug, Default)]
struct Subscriber {
    queue: Mutex<VecDeque<SessionSignal>>,
    event: Event,
    lost: AtomicU64,
}

impl SignalFanout {
    /// At most this many signals wait in one subscription's queue; older
    /// ones are dropped to make room.
    pub const QUEUE: usize = 1024;

    /// Hands `signal` to every live subscription.
    pub fn deliver(&self, signal: &SessionSignal) {
        let mut subs = self
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subs.retain(|w| w.strong_count() > 0);
        for sub in subs.iter().filter_map(Weak::upgrade) {
            {
                let mut q = sub.queue.lock().unwrap_or_else(PoisonError::into_inner);
                if q.len() >= Self::QUEUE {
                    q.pop_front();
                    sub.lost.fetch_add(1, Ordering::Relaxed);
                }
                q.push_back(signal.clone());
            }
            sub.event.notify(usize::MAX);
        }
    }

    /// How many subscriptions are live (not yet dropped): one per
    /// listening engine of each instance this fan-out feeds, so a count
    /// that only grows is a leak.
    pub fn subscriptions(&self) -> usize {
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|w| w.strong_count() > 0)
            .count()
    }

    /// A new subscription.
    pub fn subscribe(&self) -> SignalSubscription {
        let sub = Arc::new(Subscriber::default());
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::downgrade(&sub));
        SignalSubscription { sub }
    }
}

/// The receiving end of a [`SignalBus`] subscription; dropping it
/// unsubscribes.
#[derive(Debug)]
pub struct SignalSubscription {
    sub: Arc<Subscriber>,
}

impl SignalSubscription {
    /// The next signal, waiting for one.
    pub async fn recv(&mut self) -> SessionSignal {
        loop {
            if let Some(s) = self.pop() {
                return s;
            }
            let listener = self.sub.event.listen();
            // Re-check after registering, so a signal in between is not missed.
            if let Some(s) = self.pop() {
                return s;
            }
            listener.await;
        }
    }

    /// The next signal if one is waiting.
    pub fn try_recv(&mut self) -> Option<SessionSignal> {
        self.pop()
    }

    /// How many signals this subscription lost to its queue bound.
    pub fn lost(&self) -> u64 {
        self.sub.lost.load(Ordering::Relaxed)
    }

    fn pop(&self) -> Option<SessionSignal> {
        self.sub
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
    }
}

/// The in-process [`SignalBus`]: for several servers in one process
/// sharing sessions (tests, or engines behind one dispatcher). Cheap to
/// clone: clones are one bus.
#[derive(Clone, Debug, Default)]
pub struct LocalSignalBus {
    fanout: Arc<SignalFanout>,
}

impl LocalSignalBus {
    /// How many subscriptions are live ([`SignalFanout::subscriptions`]).
    pub fn subscriptions(&self) -> usize {
        self.fanout.subscriptions()
    }
}

#[async_trait::async_trait]
impl SignalBus for LocalSignalBus {
    async fn publish(&self, signal: SessionSignal) -> Result<(), BackendError> {
        self.fanout.deliver(&signal);
        Ok(())
    }

    fn subscribe(&self) -> SignalSubscription {
        self.fanout.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(n: usize) -> SessionSignal {
        SessionSignal {
            session_id: format!("s{n}"),
            message: Bytes::from(format!("{{\"n\":{n}}}")),
        }
    }

    #[test]
    fn broadcasts_are_told_apart_from_session_signals() {
        let b = SessionSignal::broadcast("legacy", "abc", Bytes::from_static(b"{}"));
        assert_eq!(b.broadcast_parts(), Some(("legacy", "abc")));
        assert_eq!(signal(1).broadcast_parts(), None);
    }

    #[test]
    fn every_subscriber_hears_every_signal_in_order() {
        let bus = LocalSignalBus::default();
        let (mut a, mut b) = (bus.subscribe(), bus.subscribe());
        futures::executor::block_on(async {
            bus.publish(signal(1)).await.unwrap();
            bus.publish(signal(2)).await.unwrap();
            assert_eq!(a.recv().await, signal(1));
            assert_eq!(a.recv().await, signal(2));
            assert_eq!(b.recv().await, signal(1));
            assert_eq!(b.recv().await, signal(2));
        });
        assert_eq!(a.try_recv(), None);
        // A subscription made later hears only what follows.
        let mut c = bus.subscribe();
        futures::executor::block_on(bus.publish(signal(3))).unwrap();
        assert_eq!(c.try_recv(), Some(signal(3)));
        assert_eq!(c.try_recv(), None);
    }

    #[test]
    fn a_waiting_receiver_wakes_and_a_slow_one_loses_the_oldest() {
        let bus = LocalSignalBus::default();
        let mut waiting = bus.subscribe();
        let publisher = bus.clone();
        let t = std::thread::spawn(move || {
            futures::executor::block_on(publisher.publish(signal(7))).unwrap();
        });
        assert_eq!(futures::executor::block_on(waiting.recv()), signal(7));
        t.join().unwrap();

        let mut slow = bus.subscribe();
        for n in 0..SignalFanout::QUEUE + 3 {
            futures::executor::block_on(bus.publish(signal(n))).unwrap();
        }
        assert_eq!(slow.lost(), 3);
        assert_eq!(slow.try_recv(), Some(signal(3)));
    }

    #[test]
    fn a_dropped_subscription_is_forgotten() {
        let bus = LocalSignalBus::default();
        let kept = bus.subscribe();
        drop(bus.subscribe());
        assert_eq!(bus.subscriptions(), 1);
        drop(kept);
        assert_eq!(bus.subscriptions(), 0);
        futures::executor::block_on(bus.publish(signal(1))).unwrap();
        let subs = bus.fanout.subscribers.lock().unwrap();
        assert!(subs.is_empty());
    }
}
