//! The small live state of one SSE stream.
//!
//! The event store holds a stream's events; this holds only what a live
//! connection and the stream's producer need to coordinate:
//!
//! * [`Live`] (written by producers and by control calls): the last
//!   sequence number appended, whether the stream has ended, which
//!   connection generation currently owns the stream, and a counter of
//!   on-demand close requests. A connection waits on it for "something
//!   changed" ([`LiveReceiver`]).
//! * [`Delivery`] (written by the attached connection): which connection
//!   is attached and how far it has delivered. A producer waits on it when
//!   more than `stream_queue` events are undelivered (backpressure).
//!
//! Both halves live in the state itself, behind one lock, with a version
//! number and one `Notify` (a `watch` channel, as before, was a heap block
//! of ~400 bytes with nine `Notify`s, kept by every pending request's
//! stream). Each side's waits skip changes to the other side's half, and a
//! connection's progress wakes nobody unless a producer is waiting for
//! room.
//!
//! Appending goes store first, then `Live`: a connection that sees a new
//! `last_seq` always finds the event in the store. The one exception to
//! reading it there: a final message appended while a connection is
//! attached is also kept here ([`StreamState::take_final_after`]), so the
//! connection writes it without a read of the store (with Redis, a round
//! trip fewer for every answer on its own stream: docs/PERFORMANCE.md,
//! session 31).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use bytes::Bytes;
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::{EventStore, FinalAppend, Replay, StoreError, StoredEvent};
use tokio::sync::Notify;

use super::held_lease::HeldLease;

/// What producers and control calls publish to connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Live {
    /// The last sequence number appended (0: none).
    pub last_seq: u64,
    /// The stream has ended (its response is appended, or it was cancelled).
    pub finished: bool,
    /// The generation of the connection that owns the stream; a connection
    /// whose generation is older has been taken over and must stop.
    pub generation: u64,
    /// Incremented by `close_sse_stream`: the attached connection closes.
    pub close_requests: u64,
}

/// What the attached connection publishes to producers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Delivery {
    /// The generation of the attached connection, if any.
    pub attached: Option<u64>,
    /// The last sequence number that connection has handed to HTTP.
    pub delivered: u64,
}

/// Everything the stream's state carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Both {
    live: Live,
    delivery: Delivery,
    /// Producers waiting for room: only then does a connection's progress
    /// ([`StreamState::delivered`]) notify.
    waiting_for_room: u32,
}

/// [`Both`] and how many notifying changes it has had.
#[derive(Clone, Copy, Debug, Default)]
struct Versioned {
    both: Both,
    version: u64,
}

/// The stream's state is gone (every handle to it was dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the stream's state is gone")]
pub(crate) struct Gone;

/// A connection's view of a stream's [`Live`] state, whose
/// [`changed`](Self::changed) ignores what only the delivery side changed.
/// It does not keep the state alive between waits.
#[derive(Debug)]
pub(crate) struct LiveReceiver {
    stream: Weak<StreamState>,
    /// The version this receiver last saw.
    version: u64,
    /// The live state as this receiver last saw it.
    seen: Live,
}

/// A [`Live`] value read from a [`LiveReceiver`] (a copy: no lock held).
pub(crate) struct LiveRef(Live);

impl std::ops::Deref for LiveRef {
    type Target = Live;
    fn deref(&self) -> &Live {
        &self.0
    }
}

impl LiveReceiver {
    fn stream(&self) -> Result<Arc<StreamState>, Gone> {
        self.stream.upgrade().ok_or(Gone)
    }

    /// The current live state (the last one seen once the state is gone).
    pub fn borrow(&self) -> LiveRef {
        LiveRef(self.stream().map_or(self.seen, |s| s.lock().both.live))
    }

    /// The current live state, marked seen.
    pub fn borrow_and_update(&mut self) -> LiveRef {
        if let Ok(s) = self.stream() {
            let now = *s.lock();
            self.version = now.version;
            self.seen = now.both.live;
        }
        LiveRef(self.seen)
    }

    /// Completes once the live state satisfies `f` (at once if it does
    /// now); an error once the stream's state is gone.
    pub async fn wait_for(&mut self, mut f: impl FnMut(&Live) -> bool) -> Result<LiveRef, Gone> {
        let s = self.stream()?;
        loop {
            let now = *s.lock();
            self.version = now.version;
            if f(&now.both.live) {
                self.seen = now.both.live;
                return Ok(LiveRef(self.seen));
            }
            s.newer_than(self.version).await;
        }
    }

    /// Completes when the live state differs from the one last marked
    /// seen; an error once the stream's state is gone.
    pub async fn changed(&mut self) -> Result<(), Gone> {
        let s = self.stream()?;
        loop {
            let now = *s.lock();
            if now.both.live != self.seen {
                return Ok(());
            }
            self.version = now.version;
            s.newer_than(self.version).await;
        }
    }
}

/// The live state of one stream of one session.
#[derive(Debug)]
pub(crate) struct StreamState {
    /// The stream's number.
    pub id: StreamId,
    /// Written by another instance: a connection here learns of new events
    /// from the event store (`EventStore::tail_after`), not from producers.
    pub remote: bool,
    state: Mutex<Versioned>,
    /// Wakes the waits of [`LiveReceiver`]s and of producers waiting for
    /// room after a change that notifies.
    changes: Notify,
    /// What few streams have ([`Rare`]), boxed: every stream would carry
    /// its size (a pending request's stream is kept between SEP-1699
    /// polls).
    rare: Mutex<Option<Box<Rare>>>,
}

/// What a stream has only with leases, or after a store failure.
#[derive(Debug, Default)]
struct Rare {
    /// This instance's lease on the stream while it writes it
    /// (`ServerConfig::leases`); released when the stream finishes.
    lease: Option<HeldLease>,
    /// The stream's final message when the event store refused it (Redis
    /// down during the answer): the attached connection delivers it
    /// without an id before it ends (`keep_unstored`).
    unstored: Option<Bytes>,
    /// The stream's final message, stored, when a connection was attached
    /// as it was appended: that connection writes it from here
    /// (`take_final_after`).
    kept_final: Option<StoredEvent>,
}

impl StreamState {
    /// The state of a stream just opened (nothing appended).
    pub fn new(id: StreamId) -> Arc<Self> {
        Arc::new(Self::with(id, false, Live::default()))
    }

    fn with(id: StreamId, remote: bool, live: Live) -> Self {
        StreamState {
            id,
            remote,
            state: Mutex::new(Versioned {
                both: Both {
                    live,
                    ..Both::default()
                },
                version: 0,
            }),
            changes: Notify::new(),
            rare: Mutex::new(None),
        }
    }

    /// A state standing in for a stream that has no live state any more
    /// (its request finished and the state was reaped): ended at `last_seq`.
    pub fn ended(id: StreamId, last_seq: u64) -> Arc<Self> {
        let live = Live {
            last_seq,
            finished: true,
            ..Live::default()
        };
        Arc::new(Self::with(id, false, live))
    }

    /// The state of a stream opened with its answer already in it
    /// ([`EventStore::open_answered`], what it did: `done`): ended, the
    /// answer kept for the connection ([`take_final_after`](Self::take_final_after)),
    /// or, when the store refused it, kept to be delivered without an id
    /// ([`keep_unstored`](Self::keep_unstored)).
    pub fn answered(id: StreamId, done: FinalAppend, message: Bytes) -> Arc<Self> {
        let FinalAppend { appended, finished } = done;
        if let Err(e) = &finished {
            tracing::debug!(stream = %id, error = %e, "the event store did not record the answered stream's end");
        }
        let last_seq = appended.as_ref().map_or(0, |a| a.seq);
        let state = Arc::new(Self::with(
            id,
            false,
            Live {
                last_seq,
                finished: true,
                ..Live::default()
            },
        ));
        match appended {
            Ok(id) => {
                state.rare().get_or_insert_default().kept_final =
                    Some(StoredEvent { id, data: message });
            }
            Err(_) => state.keep_unstored(message),
        }
        state
    }

    /// The state of a stream another instance writes, unfinished, known
    /// up to `last_seq`.
    pub fn remote(id: StreamId, last_seq: u64) -> Arc<Self> {
        let live = Live {
            last_seq,
            ..Live::default()
        };
        Arc::new(Self::with(id, true, live))
    }

    fn lock(&self) -> MutexGuard<'_, Versioned> {
        // Every change is a few plain stores: a panic cannot leave one
        // half-done.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the state with `f`; when `f` says so (it returns `true`),
    /// a new version, and every wait wakes to look (`watch`'s
    /// `send_if_modified`). Returns what `f` returned.
    fn send_if_modified(&self, f: impl FnOnce(&mut Both) -> bool) -> bool {
        let notify = {
            let mut s = self.lock();
            let notify = f(&mut s.both);
            if notify {
                s.version += 1;
            }
            notify
        };
        if notify {
            self.changes.notify_waiters();
        }
        notify
    }

    /// Changes the state with `f`, and notifies.
    fn send_modify(&self, f: impl FnOnce(&mut Both)) {
        self.send_if_modified(|s| {
            f(s);
            true
        });
    }

    /// Completes once the state's version is past `version` (at once if it
    /// is now).
    async fn newer_than(&self, version: u64) {
        loop {
            let notified = self.changes.notified();
            tokio::pin!(notified);
            // Registered before the version is read: a change in between
            // wakes it.
            notified.as_mut().enable();
            if self.lock().version > version {
                return;
            }
            notified.await;
        }
    }

    /// Records what the event store says of a remote stream: appended up to
    /// `last_seq`, maybe finished. Connections waiting on it wake.
    pub fn observed(&self, last_seq: u64, finished: bool) {
        self.send_if_modified(|s| {
            let before = s.live;
            s.live.last_seq = s.live.last_seq.max(last_seq);
            s.live.finished |= finished;
            s.live != before
        });
    }

    /// The current live values.
    pub fn live(&self) -> Live {
        self.lock().both.live
    }

    /// A receiver of live changes.
    pub fn subscribe(self: &Arc<Self>) -> LiveReceiver {
        let now = *self.lock();
        LiveReceiver {
            stream: Arc::downgrade(self),
            version: now.version,
            seen: now.both.live,
        }
    }

    /// Attaches a connection that starts after `cursor`, taking the stream
    /// over from any connection attached before (that one sees a newer
    /// generation and stops). Returns the new connection's generation.
    pub fn attach(&self, cursor: u64) -> u64 {
        let mut generation = 0;
        self.send_modify(|s| {
            s.live.generation += 1;
            generation = s.live.generation;
            s.delivery = Delivery {
                attached: Some(generation),
                delivered: cursor,
            };
        });
        generation
    }

    /// Whether a connection is attached.
    pub fn is_attached(&self) -> bool {
        self.lock().both.delivery.attached.is_some()
    }

    /// Detaches connection `generation` if it is still the attached one.
    pub fn detach(&self, generation: u64) {
        self.send_if_modified(|s| {
            if s.delivery.attached == Some(generation) {
                s.delivery.attached = None;
                true
            } else {
                false
            }
        });
    }

    /// Records that connection `generation` has delivered through `seq`
    /// (waking producers only if one waits for room).
    pub fn delivered(&self, generation: u64, seq: u64) {
        self.send_if_modified(|s| {
            if s.delivery.attached == Some(generation) && s.delivery.delivered < seq {
                s.delivery.delivered = seq;
                s.waiting_for_room > 0
            } else {
                false
            }
        });
    }

    /// Whether every appended event has been delivered (or none is attached
    /// to deliver them).
    pub fn fully_delivered(&self) -> bool {
        let s = self.lock().both;
        s.delivery.attached.is_none() || s.delivery.delivered >= s.live.last_seq
    }

    /// Waits while a connection is attached and more than `limit` events are
    /// undelivered. Returns at once when no connection is attached.
    ///
    /// A connection that delivers nothing for `stall` while the queue is
    /// full is a stalled reader (a client that stopped reading): it is
    /// detached and asked to close (with `retry` on polling sessions, when
    /// it is next written to), and the wait ends. The producer then goes on
    /// into the event log, up to its bounds, and the client resumes from
    /// its last id. `None` waits as long as the connection stays.
    pub async fn wait_for_room(&self, limit: usize, stall: Option<std::time::Duration>) {
        let limit = u64::try_from(limit.max(1)).unwrap_or(u64::MAX);
        let room = |s: &Both| {
            s.delivery.attached.is_none()
                || s.live.last_seq.saturating_sub(s.delivery.delivered) < limit
        };
        if room(&self.lock().both) {
            return;
        }
        // Counted while waiting, so that deliveries notify (they do not
        // otherwise); uncounted on every way out, a cancelled wait included.
        self.send_if_modified(|s| {
            s.waiting_for_room += 1;
            false
        });
        let _waiting = WaitingForRoom(self);
        loop {
            let (seen, version) = {
                let s = *self.lock();
                if room(&s.both) {
                    return;
                }
                (s.both.delivery, s.version)
            };
            let changed = async {
                let mut version = version;
                loop {
                    self.newer_than(version).await;
                    let now = *self.lock();
                    if now.both.delivery != seen || room(&now.both) {
                        return;
                    }
                    version = now.version;
                }
            };
            match stall {
                Some(t) => {
                    if tokio::time::timeout(t, changed).await.is_err()
                        && let Some(generation) = seen.attached
                    {
                        self.stalled(generation, seen.delivered);
                    }
                }
                None => changed.await,
            }
        }
    }

    /// Detaches connection `generation`, and asks it to close, if it is
    /// still attached and has delivered nothing past `delivered`.
    fn stalled(&self, generation: u64, delivered: u64) {
        let detached = self.send_if_modified(|s| {
            if s.delivery.attached == Some(generation) && s.delivery.delivered == delivered {
                s.delivery.attached = None;
                true
            } else {
                false
            }
        });
        if detached {
            tracing::debug!(stream = %self.id, generation, "stalled SSE reader detached");
            self.request_close();
        }
    }

    /// Appends one message event: to the store first, then published.
    pub async fn append(
        &self,
        store: &dyn EventStore,
        tag: &SessionTag,
        message: Bytes,
    ) -> Result<EventId, StoreError> {
        let id = store.append(tag, self.id, message).await?;
        self.send_modify(|s| s.live.last_seq = s.live.last_seq.max(id.seq));
        Ok(id)
    }

    /// Ends the stream (after its last event was appended), and releases
    /// this instance's lease on it.
    ///
    /// When the store cannot record the end (Redis down), the lease is not
    /// released but left to lapse: the stream is unfinished in the log, so
    /// a client resuming it later, anywhere, gets the lapsed lease's error
    /// instead of following it forever.
    pub async fn finish(&self, store: &dyn EventStore, tag: &SessionTag) {
        let recorded = store.finish_stream(tag, self.id).await;
        self.end(recorded, None).await;
    }

    /// Appends the stream's final message and ends the stream, in one call
    /// to the store ([`EventStore::append_final`]): as [`append`](Self::append)
    /// then [`finish`](Self::finish), with one change published for both.
    /// A message the store refuses (Redis out of reach) is kept for the
    /// attached connection to deliver without an id
    /// ([`keep_unstored`](Self::keep_unstored)), before the end is
    /// published: a connection that sees the end finds it. Returns the
    /// append's result; the stream is ended either way.
    ///
    /// With a connection attached, the message is also kept for it
    /// ([`take_final_after`](Self::take_final_after)) before the end is
    /// published, and the store is told that it is delivered
    /// ([`EventStore::append_final_delivered`]: it counts as read to its
    /// end for the store's eviction order, as the read it saves would have).
    pub async fn append_final(
        &self,
        store: &dyn EventStore,
        tag: &SessionTag,
        message: Bytes,
    ) -> Result<EventId, StoreError> {
        let attached = self.is_attached();
        let FinalAppend { appended, finished } = if attached {
            store
                .append_final_delivered(tag, self.id, message.clone())
                .await
        } else {
            store.append_final(tag, self.id, message.clone()).await
        };
        let seq = match &appended {
            Ok(id) => {
                if attached {
                    self.rare().get_or_insert_default().kept_final = Some(StoredEvent {
                        id: *id,
                        data: message,
                    });
                }
                Some(id.seq)
            }
            Err(_) => {
                self.keep_unstored(message);
                None
            }
        };
        self.end(finished, seq).await;
        appended
    }

    /// After the store was asked to end the stream (`recorded`, the last
    /// sequence number appended with it if any): publishes the end and
    /// releases the lease, or leaves it to lapse when the end is not in the
    /// log (see [`finish`](Self::finish)).
    async fn end(&self, recorded: Result<(), StoreError>, last_seq: Option<u64>) {
        if let Err(e) = &recorded {
            tracing::debug!(stream = %self.id, error = %e, "finish_stream failed");
        }
        self.send_modify(|s| {
            if let Some(seq) = last_seq {
                s.live.last_seq = s.live.last_seq.max(seq);
            }
            s.live.finished = true;
        });
        let held = self.take_lease();
        if let Some(held) = held
            && recorded.is_ok()
        {
            held.release().await;
        }
    }

    /// Keeps the stream's final message, which the event store refused,
    /// for the attached connection to deliver directly.
    pub fn keep_unstored(&self, message: Bytes) {
        self.rare().get_or_insert_default().unstored = Some(message);
    }

    /// The final message the event store refused, if any (taken once).
    pub fn take_unstored(&self) -> Option<Bytes> {
        self.rare().as_mut().and_then(|r| r.unstored.take())
    }

    /// The stream's kept final message ([`append_final`](Self::append_final))
    /// as the replay of a finished stream after `cursor`, when it is the one
    /// event after `cursor` (taken once; a kept message that `cursor` has
    /// passed is dropped). `None` otherwise: the connection reads the store.
    pub fn take_final_after(&self, cursor: u64) -> Option<Replay> {
        let mut rare = self.rare();
        let kept = &mut rare.as_mut()?.kept_final;
        let seq = kept.as_ref()?.id.seq;
        if seq <= cursor {
            *kept = None;
        }
        if seq != cursor + 1 {
            return None;
        }
        let event = kept.take()?;
        Some(Replay {
            stream: self.id,
            last_seq: seq,
            finished: true,
            events: vec![event],
        })
    }

    /// Keeps `held`, this instance's lease on the stream, until it
    /// finishes.
    pub fn set_lease(&self, held: HeldLease) {
        self.rare().get_or_insert_default().lease = Some(held);
    }

    /// The request ids of this instance's lease on the stream (empty for a
    /// standalone stream); `None` when it holds none (another instance
    /// writes the stream, or it has finished). For the shutdown
    /// (`LegacyServer::abandon_after`).
    pub fn lease_ids(&self) -> Option<Vec<mcp_transport_core::jsonrpc::RequestId>> {
        self.rare()
            .as_ref()
            .and_then(|r| r.lease.as_ref())
            .map(|held| held.ids().to_vec())
    }

    /// Takes this instance's lease on the stream out, so that finishing the
    /// stream no longer releases it (`lease::abandon_stream`).
    pub fn take_lease(&self) -> Option<HeldLease> {
        self.rare().as_mut().and_then(|r| r.lease.take())
    }

    /// The rare members, locked.
    fn rare(&self) -> MutexGuard<'_, Option<Box<Rare>>> {
        self.rare.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks the attached connection (if any) to close after a `retry`.
    pub fn request_close(&self) {
        self.send_modify(|s| s.live.close_requests += 1);
    }
}

/// Uncounts a producer that waited for room ([`StreamState::wait_for_room`]).
struct WaitingForRoom<'a>(&'a StreamState);

impl Drop for WaitingForRoom<'_> {
    fn drop(&mut self) {
        self.0.send_if_modified(|s| {
            s.waiting_for_room -= 1;
            false
        });
    }
}

#[cfg(test)]
mod tests;
