//! [`MemoryEventStore`]: the bounded in-memory [`EventStore`].

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use super::{EventStore, Replay, ReplayError, StoreError, StoredEvent};
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
/// errors. Worst-case memory is about `max_sessions × max_bytes_per_session`
/// of payload plus bookkeeping, so a server should bound its sessions well
/// below `max_sessions` itself.
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
    /// finished longest ago; if no stream has finished, it is
    /// [`StoreError::TooManyStreams`]. Default 256.
    pub max_streams_per_session: usize,
    /// Payload bytes retained per session. Beyond it, appending evicts the
    /// session's finished streams (longest finished first), then the oldest
    /// events of the stream being appended to. Default 16 MiB.
    pub max_bytes_per_session: usize,
    /// Sessions; opening one more is [`StoreError::TooManySessions`].
    /// Default [`DEFAULT_MAX_SESSIONS`] (4,096).
    pub max_sessions: usize,
}

impl Default for MemoryEventStoreConfig {
    fn default() -> Self {
        MemoryEventStoreConfig {
            max_events_per_stream: 1024,
            max_bytes_per_stream: 4 * 1024 * 1024,
            max_streams_per_session: 256,
            max_bytes_per_session: 16 * 1024 * 1024,
            max_sessions: DEFAULT_MAX_SESSIONS,
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
#[derive(Debug, Default)]
pub struct MemoryEventStore {
    config: MemoryEventStoreConfig,
    sessions: Mutex<HashMap<SessionTag, Arc<Mutex<SessionLog>>>>,
}

#[derive(Debug, Default)]
struct SessionLog {
    streams: HashMap<StreamId, StreamLog>,
    /// Finished streams still present, in the order they finished.
    finished_order: VecDeque<StreamId>,
    /// The highest stream number ever opened in the session.
    high_water: Option<StreamId>,
    /// Payload bytes retained over all streams.
    bytes: usize,
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
        }
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
        f(&mut log)
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
            let Some(victim) = log.finished_order.pop_front() else {
                return Err(StoreError::TooManyStreams {
                    session: *session,
                    max: self.config.max_streams_per_session,
                });
            };
            if let Some(gone) = log.streams.remove(&victim) {
                log.bytes -= gone.bytes;
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
        let mut freed = 0;
        while s.events.len() > cfg.max_events_per_stream || s.bytes > cfg.max_bytes_per_stream {
            match s.evict_front() {
                Some(n) => freed += n,
                None => break,
            }
        }
        log.bytes = log.bytes + size - freed;

        // Per-session bound: finished streams first, then this stream's
        // oldest events.
        while log.bytes > cfg.max_bytes_per_session {
            if let Some(victim) = log.finished_order.pop_front() {
                if let Some(gone) = log.streams.remove(&victim) {
                    log.bytes -= gone.bytes;
                }
            } else if let Some(n) = log
                .streams
                .get_mut(&stream)
                .and_then(StreamLog::evict_front)
            {
                log.bytes -= n;
            } else {
                break;
            }
        }
        Ok(EventId::new(*session, stream, seq))
    }
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
        self.with_session(session, |log| self.do_append(log, session, stream, message))
    }

    async fn finish_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<(), StoreError> {
        self.with_session(session, |log| {
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
        })
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
        let log = lock(&log);
        if log.removed {
            return Err(ReplayError::UnknownEventId { id: *last });
        }
        do_replay(&log, last)
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
            // Free the payloads now rather than when the last `Arc` goes.
            log.streams.clear();
            log.finished_order.clear();
            log.bytes = 0;
        }
        Ok(())
    }
}
