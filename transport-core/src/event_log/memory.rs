//! [`MemoryEventStore`]: the bounded in-memory [`EventStore`].

use std::collections::VecDeque;
use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use super::{EventStore, FinalAppend, Replay, ReplayError, StoreError, StoredEvent};
use crate::event_id::{EventId, SessionTag, StreamId};

/// The default session cap, one number for the whole server: both
/// [`MemoryEventStoreConfig::max_sessions`] and the session engine's
/// `ServerConfig::max_sessions` default to it (a cap is 503 at
/// `initialize`). 4,096 sessions at the default 16 MiB per session bound
/// the store's retained payload at 64 GiB in the worst case; a server that
/// expects large results should lower one or the other.
pub const DEFAULT_MAX_SESSIONS: usize = 4096;

/// Limits of a [`MemoryEventStore`].
///
/// Retention is best effort within these bounds: when a bound is exceeded the
/// oldest data is evicted (and a replay that would need it is
/// [`ReplayError::Expired`]); only [`max_sessions`](Self::max_sessions), an
/// oversized single message and a session full of unfinished streams are
/// errors. Retained payload never exceeds `max_bytes_total` (after each
/// append), plus bookkeeping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryEventStoreConfig {
    /// Events retained per stream; beyond it the oldest are evicted.
    /// Default 1024. 0 retains nothing (ids are still issued).
    pub max_events_per_stream: usize,
    /// Payload bytes retained per stream; beyond it the oldest events are
    /// evicted. A single message larger than this is
    /// [`StoreError::MessageTooLarge`]. Default 4 MiB.
    pub max_bytes_per_stream: usize,
    /// Streams per session. Opening one more evicts the session's stream that
    /// finished longest ago, preferring one a replay has already read to its
    /// end; if no stream has finished, it is [`StoreError::TooManyStreams`].
    /// Default 256.
    pub max_streams_per_session: usize,
    /// Payload bytes retained per session. Beyond it, appending evicts the
    /// session's finished streams (those read to their end first, then
    /// longest finished first), then the oldest events of the stream being
    /// appended to. Default 16 MiB.
    pub max_bytes_per_session: usize,
    /// Sessions; opening one more is [`StoreError::TooManySessions`].
    /// Default [`DEFAULT_MAX_SESSIONS`] (4,096).
    pub max_sessions: usize,
    /// Payload bytes retained over every session: the server-wide budget.
    /// Beyond it, the oldest events of the whole store are evicted first,
    /// whichever session they belong to (a resume that needs them is
    /// [`ReplayError::Expired`]). Default [`DEFAULT_MAX_BYTES_TOTAL`]
    /// (512 MiB).
    pub max_bytes_total: usize,
}

/// The default [`MemoryEventStoreConfig::max_bytes_total`]: 512 MiB.
pub const DEFAULT_MAX_BYTES_TOTAL: usize = 512 * 1024 * 1024;

impl Default for MemoryEventStoreConfig {
    fn default() -> Self {
        MemoryEventStoreConfig {
            max_events_per_stream: 1024,
            max_bytes_per_stream: 4 * 1024 * 1024,
            max_streams_per_session: 256,
            max_bytes_per_session: 16 * 1024 * 1024,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_bytes_total: DEFAULT_MAX_BYTES_TOTAL,
        }
    }
}

/// The in-memory [`EventStore`]: per-stream ring buffers of `Bytes`, bounded
/// by a [`MemoryEventStoreConfig`].
///
/// Locking is two-level: a store-wide `std::sync::Mutex` is held only to find
/// (or insert, or remove) a session, and each session has its own mutex, held
/// for one operation on that session — appends of different sessions never
/// contend. Replay clones `Bytes` handles (a reference count each), never
/// payloads. No method ever awaits.
///
/// Evicted streams are remembered only as "at or below the highest stream
/// number opened in the session": a `Last-Event-ID` naming an absent stream
/// numbered at or below it is [`ReplayError::Expired`], above it
/// [`ReplayError::UnknownEventId`]. With stream numbers allocated in
/// increasing order that is exact, except that numbers the server skipped
/// also count as expired.
///
/// The server-wide byte budget ([`MemoryEventStoreConfig::max_bytes_total`])
/// is kept with a store-wide count of retained bytes and events, and a
/// queue of every append in order: over budget, the oldest append still
/// retained is evicted (with the events before it on its stream), whatever
/// its session. Entries of events evicted otherwise stay in the queue until
/// they reach its front or the queue is compacted (when it holds more than
/// twice the retained events). [`retained_bytes`](Self::retained_bytes) is
/// the store's own accounting, released by `remove_session`.
#[derive(Debug, Default)]
pub struct MemoryEventStore {
    config: MemoryEventStoreConfig,
    /// Keyed by tags the server minted, as the streams below by numbers it
    /// allocated: FxHash, not SipHash (a client chooses no key here, so
    /// there is no collision to craft; SipHash was ~1,300 instructions of
    /// an answered 2025-11-25 SSE request: docs/PERFORMANCE.md, session 21).
    sessions: Mutex<FxHashMap<SessionTag, Arc<Mutex<SessionLog>>>>,
    budget: Budget,
}

/// The store-wide accounting of the byte budget.
#[derive(Debug, Default)]
struct Budget {
    /// Payload bytes retained over every session.
    bytes: AtomicUsize,
    /// Events retained over every session.
    events: AtomicUsize,
    /// Every append, oldest first (some already evicted otherwise).
    order: Mutex<VecDeque<Appended>>,
}

/// One appended event, as the budget's queue remembers it.
#[derive(Clone, Copy, Debug)]
struct Appended {
    session: SessionTag,
    stream: StreamId,
    seq: u64,
}

#[derive(Debug, Default)]
struct SessionLog {
    streams: FxHashMap<StreamId, StreamLog>,
    /// Finished streams still present, in the order they finished.
    finished_order: VecDeque<StreamId>,
    /// The highest stream number ever opened in the session.
    high_water: Option<StreamId>,
    /// Payload bytes retained over all streams.
    bytes: usize,
    /// Events retained over all streams.
    events: usize,
    /// Set by `remove_session`, for operations holding the session's `Arc`
    /// from before the removal.
    removed: bool,
}

#[derive(Debug, Default)]
struct StreamLog {
    /// Events `evicted_through + 1 ..= last_seq`, oldest first.
    events: VecDeque<Bytes>,
    /// Every sequence number up to this one has been evicted (0: none).
    evicted_through: u64,
    /// The last sequence number issued (0: only the priming id).
    last_seq: u64,
    /// Payload bytes in `events`.
    bytes: usize,
    finished: bool,
    /// A replay returned the stream's end after it finished: whoever was
    /// reading it has had everything, so it is evicted before finished
    /// streams nobody has read to the end (see [`take_victim`]).
    read_out: bool,
}

impl StreamLog {
    /// Evicts the oldest retained event; returns its size, `None` if empty.
    fn evict_front(&mut self) -> Option<usize> {
        let size = self.events.pop_front()?.len();
        self.evicted_through += 1;
        self.bytes -= size;
        Some(size)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No code here panics while holding a lock, and every invariant is
    // restored before a guard is dropped, so a poisoned lock is still sound.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MemoryEventStore {
    /// A store with the given limits.
    pub fn new(config: MemoryEventStoreConfig) -> Self {
        MemoryEventStore {
            config,
            sessions: Mutex::default(),
            budget: Budget::default(),
        }
    }

    /// Payload bytes retained over every session (the store's own
    /// accounting, which the byte budget bounds).
    pub fn retained_bytes(&self) -> usize {
        self.budget.bytes.load(Ordering::SeqCst)
    }

    /// Events retained over every session.
    pub fn retained_events(&self) -> usize {
        self.budget.events.load(Ordering::SeqCst)
    }

    /// The store's limits.
    pub fn config(&self) -> &MemoryEventStoreConfig {
        &self.config
    }

    /// The number of open sessions.
    pub fn session_count(&self) -> usize {
        lock(&self.sessions).len()
    }

    fn session(&self, session: &SessionTag) -> Option<Arc<Mutex<SessionLog>>> {
        lock(&self.sessions).get(session).cloned()
    }

    /// Runs `f` on the session's log if it is open.
    fn with_session<R>(
        &self,
        session: &SessionTag,
        f: impl FnOnce(&mut SessionLog) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let unknown = || StoreError::UnknownSession { session: *session };
        let log = self.session(session).ok_or_else(unknown)?;
        let mut log = lock(&log);
        if log.removed {
            return Err(unknown());
        }
        let before = (log.bytes, log.events);
        let result = f(&mut log);
        self.account(before, (log.bytes, log.events));
        result
    }

    /// Moves the store-wide counts by a session's change.
    fn account(&self, before: (usize, usize), after: (usize, usize)) {
        let b = &self.budget;
        if after.0 >= before.0 {
            b.bytes.fetch_add(after.0 - before.0, Ordering::SeqCst);
        } else {
            b.bytes.fetch_sub(before.0 - after.0, Ordering::SeqCst);
        }
        if after.1 >= before.1 {
            b.events.fetch_add(after.1 - before.1, Ordering::SeqCst);
        } else {
            b.events.fetch_sub(before.1 - after.1, Ordering::SeqCst);
        }
    }

    /// `append_final`'s two steps under one lock of the session's log; with
    /// `read_out`, the stream is also marked read to its end
    /// (`append_final_delivered`) once its end is recorded.
    fn final_steps(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
        read_out: bool,
    ) -> FinalAppend {
        let steps = self.with_session(session, |log| {
            let appended = self.do_append(log, session, stream, message);
            let finished = do_finish(log, session, stream);
            if read_out
                && finished.is_ok()
                && let Some(s) = log.streams.get_mut(&stream)
            {
                s.read_out = true;
            }
            Ok((appended, finished))
        });
        let (appended, finished) = match steps {
            Ok(steps) => steps,
            Err(unknown) => (
                Err(unknown),
                Err(StoreError::UnknownSession { session: *session }),
            ),
        };
        if let Ok(id) = &appended {
            self.after_append(Appended {
                session: *session,
                stream,
                seq: id.seq,
            });
        }
        FinalAppend { appended, finished }
    }

    /// Records an append in the budget's queue, then evicts the oldest
    /// appends still retained while the store is over budget. Called with
    /// no session lock held (the queue's lock is taken before a session's).
    fn after_append(&self, appended: Appended) {
        let mut order = lock(&self.budget.order);
        order.push_back(appended);
        while self.retained_bytes() > self.config.max_bytes_total {
            let Some(oldest) = order.pop_front() else {
                break;
            };
            self.evict_through(oldest);
        }
        if order.len() > 2 * self.retained_events() + 1024 {
            self.compact(&mut order);
        }
    }

    /// Evicts `a`'s event and the older ones of its stream, if retained.
    fn evict_through(&self, a: Appended) {
        let Some(log) = self.session(&a.session) else {
            return;
        };
        let mut log = lock(&log);
        if log.removed {
            return;
        }
        let before = (log.bytes, log.events);
        let (mut bytes, mut events) = (0, 0);
        if let Some(s) = log.streams.get_mut(&a.stream) {
            while s.evicted_through < a.seq {
                match s.evict_front() {
                    Some(n) => {
                        bytes += n;
                        events += 1;
                    }
                    None => break,
                }
            }
        }
        log.bytes -= bytes;
        log.events -= events;
        self.account(before, (log.bytes, log.events));
    }

    /// Drops the queue's entries of events no longer retained.
    fn compact(&self, order: &mut VecDeque<Appended>) {
        order.retain(|a| {
            self.session(&a.session).is_some_and(|log| {
                let log = lock(&log);
                !log.removed
                    && log
                        .streams
                        .get(&a.stream)
                        .is_some_and(|s| s.evicted_through < a.seq)
            })
        });
    }

    fn do_open_stream(
        &self,
        log: &mut SessionLog,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<EventId, StoreError> {
        if log.streams.contains_key(&stream) {
            return Err(StoreError::StreamExists {
                session: *session,
                stream,
            });
        }
        if log.streams.len() >= self.config.max_streams_per_session {
            let Some(victim) = take_victim(log) else {
                return Err(StoreError::TooManyStreams {
                    session: *session,
                    max: self.config.max_streams_per_session,
                });
            };
            if let Some(gone) = log.streams.remove(&victim) {
                log.bytes -= gone.bytes;
                log.events -= gone.events.len();
            }
        }
        log.streams.insert(stream, StreamLog::default());
        log.high_water = log.high_water.max(Some(stream));
        Ok(EventId::priming(*session, stream))
    }

    fn do_append(
        &self,
        log: &mut SessionLog,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> Result<EventId, StoreError> {
        let cfg = &self.config;
        let size = message.len();
        let Some(s) = log.streams.get_mut(&stream) else {
            return Err(StoreError::UnknownStream {
                session: *session,
                stream,
            });
        };
        if s.finished {
            return Err(StoreError::StreamFinished {
                session: *session,
                stream,
            });
        }
        if size > cfg.max_bytes_per_stream {
            return Err(StoreError::MessageTooLarge {
                size,
                max: cfg.max_bytes_per_stream,
            });
        }
        let Some(seq) = s.last_seq.checked_add(1) else {
            return Err(StoreError::SequenceExhausted {
                session: *session,
                stream,
            });
        };
        s.last_seq = seq;
        s.events.push_back(message);
        s.bytes += size;
        let (mut freed, mut dropped) = (0, 0);
        while s.events.len() > cfg.max_events_per_stream || s.bytes > cfg.max_bytes_per_stream {
            match s.evict_front() {
                Some(n) => {
                    freed += n;
                    dropped += 1;
                }
                None => break,
            }
        }
        log.bytes = log.bytes + size - freed;
        log.events = log.events + 1 - dropped;

        // Per-session bound: finished streams first, then this stream's
        // oldest events.
        while log.bytes > cfg.max_bytes_per_session {
            if let Some(victim) = take_victim(log) {
                if let Some(gone) = log.streams.remove(&victim) {
                    log.bytes -= gone.bytes;
                    log.events -= gone.events.len();
                }
            } else if let Some(n) = log
                .streams
                .get_mut(&stream)
                .and_then(StreamLog::evict_front)
            {
                log.bytes -= n;
                log.events -= 1;
            } else {
                break;
            }
        }
        Ok(EventId::new(*session, stream, seq))
    }
}

/// The finished stream the bounds evict next: the one that finished longest
/// ago among those already read to their end, else the one that finished
/// longest ago. A stream that finished but has not been read yet is most
/// likely a quick answer whose connection is about to read it; evicting it
/// first lost answers under load (docs/PERFORMANCE.md, session 10).
fn take_victim(log: &mut SessionLog) -> Option<StreamId> {
    let read = log
        .finished_order
        .iter()
        .position(|id| log.streams.get(id).is_some_and(|s| s.read_out));
    match read {
        Some(i) => log.finished_order.remove(i),
        None => log.finished_order.pop_front(),
    }
}

/// Marks `stream` ended (idempotent), queueing it for eviction.
fn do_finish(
    log: &mut SessionLog,
    session: &SessionTag,
    stream: StreamId,
) -> Result<(), StoreError> {
    let Some(s) = log.streams.get_mut(&stream) else {
        return Err(StoreError::UnknownStream {
            session: *session,
            stream,
        });
    };
    if !s.finished {
        s.finished = true;
        log.finished_order.push_back(stream);
    }
    Ok(())
}

fn do_replay(log: &SessionLog, last: &EventId) -> Result<Replay, ReplayError> {
    let id = *last;
    let Some(s) = log.streams.get(&last.stream) else {
        return Err(if log.high_water.is_some_and(|hw| last.stream <= hw) {
            ReplayError::Expired { id }
        } else {
            ReplayError::UnknownEventId { id }
        });
    };
    if last.seq > s.last_seq {
        return Err(ReplayError::UnknownEventId { id });
    }
    if last.seq < s.evicted_through {
        return Err(ReplayError::Expired { id });
    }
    // evicted_through <= last.seq <= last_seq = evicted_through + len, so the
    // skip is at most `events.len()` and fits in usize.
    let skip = usize::try_from(last.seq - s.evicted_through).unwrap_or(usize::MAX);
    let events = s
        .events
        .iter()
        .skip(skip)
        .zip(last.seq + 1..)
        .map(|(data, seq)| StoredEvent {
            id: EventId::new(last.session, last.stream, seq),
            data: data.clone(),
        })
        .collect();
    Ok(Replay {
        stream: last.stream,
        events,
        last_seq: s.last_seq,
        finished: s.finished,
    })
}

#[async_trait::async_trait]
impl EventStore for MemoryEventStore {
    async fn open_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        let mut sessions = lock(&self.sessions);
        let len = sessions.len();
        match sessions.entry(*session) {
            Entry::Occupied(_) => Err(StoreError::SessionExists { session: *session }),
            Entry::Vacant(_) if len >= self.config.max_sessions => {
                Err(StoreError::TooManySessions {
                    max: self.config.max_sessions,
                })
            }
            Entry::Vacant(v) => {
                v.insert(Arc::default());
                Ok(())
            }
        }
    }

    async fn open_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<EventId, StoreError> {
        self.with_session(session, |log| self.do_open_stream(log, session, stream))
    }

    async fn append(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> Result<EventId, StoreError> {
        let id = self.with_session(session, |log| self.do_append(log, session, stream, message))?;
        self.after_append(Appended {
            session: *session,
            stream,
            seq: id.seq,
        });
        Ok(id)
    }

    async fn finish_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<(), StoreError> {
        self.with_session(session, |log| do_finish(log, session, stream))
    }

    /// Both steps under one lock of the session's log (one lookup of the
    /// session instead of two).
    async fn append_final(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> FinalAppend {
        self.final_steps(session, stream, message, false)
    }

    /// As `append_final`, and the stream is marked read to its end under
    /// the same lock (see `take_victim`).
    async fn append_final_delivered(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> FinalAppend {
        self.final_steps(session, stream, message, true)
    }

    async fn replay_after(
        &self,
        expected_session: &SessionTag,
        last: &EventId,
    ) -> Result<Replay, ReplayError> {
        if last.session != *expected_session {
            return Err(ReplayError::ForeignSession { id: *last });
        }
        let Some(log) = self.session(expected_session) else {
            return Err(ReplayError::UnknownEventId { id: *last });
        };
        let mut log = lock(&log);
        if log.removed {
            return Err(ReplayError::UnknownEventId { id: *last });
        }
        let replay = do_replay(&log, last)?;
        if replay.finished
            && let Some(s) = log.streams.get_mut(&last.stream)
        {
            s.read_out = true;
        }
        Ok(replay)
    }

    async fn last_seq(&self, session: &SessionTag, stream: StreamId) -> Result<u64, StoreError> {
        self.with_session(session, |log| {
            log.streams
                .get(&stream)
                .map(|s| s.last_seq)
                .ok_or(StoreError::UnknownStream {
                    session: *session,
                    stream,
                })
        })
    }

    async fn remove_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        let removed = lock(&self.sessions).remove(session);
        if let Some(log) = removed {
            let mut log = lock(&log);
            log.removed = true;
            // Free the payloads now rather than when the last `Arc` goes,
            // and give their bytes back to the budget.
            self.account((log.bytes, log.events), (0, 0));
            log.streams.clear();
            log.finished_order.clear();
            log.bytes = 0;
            log.events = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(store: &MemoryEventStore) -> usize {
        lock(&store.budget.order).len()
    }

    /// The budget's queue holds at most twice the retained events plus
    /// 1024 (the type's docs), also after many retained events go at once:
    /// here a finished stream of 3,000 events evicted for the session's
    /// byte bound leaves 3,000 stale entries, which the next append drops.
    #[tokio::test]
    async fn the_budget_queue_is_compacted_after_a_mass_eviction() {
        let store = MemoryEventStore::new(MemoryEventStoreConfig {
            max_events_per_stream: 4096,
            max_bytes_per_session: 3000,
            ..Default::default()
        });
        let t = SessionTag::from_u64(1);
        let (s1, s2) = (StreamId(1), StreamId(2));
        store.open_session(&t).await.unwrap();
        store.open_stream(&t, s1).await.unwrap();
        for _ in 0..3000 {
            store
                .append(&t, s1, Bytes::from_static(b"x"))
                .await
                .unwrap();
        }
        assert_eq!((store.retained_events(), queued(&store)), (3000, 3000));
        store.finish_stream(&t, s1).await.unwrap();
        store.open_stream(&t, s2).await.unwrap();
        let big = Bytes::from(vec![b'y'; 1000]);
        for n in 1..=2000 {
            store.append(&t, s2, big.clone()).await.unwrap();
            let bound = 2 * store.retained_events() + 1024;
            assert!(
                queued(&store) <= bound,
                "after append {n}: {} > {bound}",
                queued(&store)
            );
        }
        // Three 1000-byte events fit in the session's 3000 bytes.
        assert_eq!(store.retained_events(), 3);
    }
}
