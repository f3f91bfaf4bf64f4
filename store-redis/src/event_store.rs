//! [`RedisEventStore`]: the `EventStore` in Redis, one Redis Stream per SSE
//! stream.
//!
//! Every operation is one call of `event_store.lua`: `XADD` with our own
//! sequence numbers as stream ids (`0-SEQ`), `XRANGE` from `0-(SEQ+1)` for
//! replay, and the bounds of [`MemoryEventStoreConfig`] kept with the same
//! meaning and the same eviction order as the in-memory store (the shared
//! conformance suite checks both): per stream (events, bytes), per session
//! (streams, bytes), sessions, and the store-wide byte budget (oldest
//! append first, whichever session). An evicted event is reported as
//! `ReplayError::Expired`, as is one whose key Redis expired.
//!
//! On the [`Layout::Cluster`] layout (a `redis+cluster://` connection)
//! each call touches the session's `{SID}` keys only: the per-stream and
//! per-session bounds hold, the session count and the byte budget
//! (`max_sessions`, `max_bytes_total`) are left to Redis's `maxmemory`
//! with a `volatile-*` policy (every key has the session TTL).

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use bytes::Bytes;
use mcp_transport_core::event_id::{EventId, SessionTag, StreamId};
use mcp_transport_core::event_log::{
    EventStore, FinalAppend, MemoryEventStoreConfig, Replay, ReplayError, StoreError, StoredEvent,
};
use redis::Value;

use crate::connection::{Layout, RedisConnection};
use crate::error::RedisStoreError;

static SCRIPT: LazyLock<redis::Script> =
    LazyLock::new(|| redis::Script::new(include_str!("event_store.lua")));

/// Settings of a [`RedisEventStore`].
#[derive(Clone, Debug)]
pub struct RedisEventStoreConfig {
    /// The bounds, with the in-memory store's meaning (per stream, per
    /// session, sessions, `max_bytes_total` over the whole key prefix).
    /// On [`Layout::Cluster`] `max_sessions` and `max_bytes_total` are not
    /// kept: bound the cluster with `maxmemory` and a `volatile-*` eviction
    /// policy (every key has [`session_ttl`](Self::session_ttl)).
    pub limits: MemoryEventStoreConfig,
    /// The TTL of every key of a session, renewed on each write: a session
    /// left without `remove_session` (its instance died) disappears after
    /// it. Keep it above the server's session idle timeout. Default 24 h.
    pub session_ttl: Duration,
    /// The store-wide budget remembers this many appends, oldest first; an
    /// event older than that is evicted. Default 1 000 000.
    pub max_budget_entries: usize,
    /// How often [`EventStore::tail_after`] asks Redis whether a stream
    /// another instance writes has grown (a bounded poll, see
    /// [`RedisEventStore`]). Default 20 ms.
    pub tail_poll: Duration,
}

impl Default for RedisEventStoreConfig {
    fn default() -> Self {
        RedisEventStoreConfig {
            limits: MemoryEventStoreConfig::default(),
            session_ttl: Duration::from_secs(24 * 60 * 60),
            max_budget_entries: 1_000_000,
            tail_poll: Duration::from_millis(20),
        }
    }
}

/// The `EventStore` in Redis: a resume that lands on another instance
/// finds every event this one stored.
///
/// # Live tail
///
/// [`EventStore::tail_after`] is a bounded poll: the replay script every
/// [`RedisEventStoreConfig::tail_poll`] until something follows the id,
/// the stream finishes, or the wait ends. Not `XREAD BLOCK`: a blocking
/// command holds the connection it runs on, and every operation of an
/// instance shares one multiplexed connection, so a blocked read would
/// stall them all; a dedicated connection per followed stream would cost a
/// socket and a Redis client each, and `XREAD` does not see the stream's
/// end (a flag, not an entry) anyway. The poll costs one script call per
/// interval per resumed connection that follows another instance's stream
/// (streams this instance writes are followed in-process) and adds at most
/// one interval of latency.
#[derive(Clone, Debug)]
pub struct RedisEventStore {
    conn: RedisConnection,
    config: Arc<RedisEventStoreConfig>,
}

/// A script's answer: its status word and the values after it.
struct Reply {
    status: String,
    rest: Vec<Value>,
}

impl Reply {
    /// The reply whose status is the first of `values`.
    fn read(values: impl IntoIterator<Item = Value>) -> Result<Reply, RedisStoreError> {
        let mut it = values.into_iter();
        let status = match it.next() {
            Some(Value::BulkString(s)) => String::from_utf8_lossy(&s).into_owned(),
            Some(Value::SimpleString(s)) => s,
            other => return Err(bad(&format!("expected a status, got {other:?}"))),
        };
        Ok(Reply {
            status,
            rest: it.collect(),
        })
    }

    fn int(&self, i: usize) -> Result<u64, RedisStoreError> {
        match self.rest.get(i) {
            Some(Value::Int(n)) => u64::try_from(*n).map_err(|_| bad("negative integer")),
            other => Err(bad(&format!("expected an integer, got {other:?}"))),
        }
    }
}

fn bad(what: &str) -> RedisStoreError {
    RedisStoreError::Protocol(what.to_owned())
}

fn backend(e: RedisStoreError) -> StoreError {
    StoreError::Backend(Box::new(e))
}

impl RedisEventStore {
    /// A store over `conn` with these settings.
    pub fn new(conn: RedisConnection, config: RedisEventStoreConfig) -> Self {
        RedisEventStore {
            conn,
            config: Arc::new(config),
        }
    }

    /// The settings.
    pub fn config(&self) -> &RedisEventStoreConfig {
        &self.config
    }

    fn key(&self, session: &SessionTag, suffix: &str) -> String {
        format!("{}:{{{session}}}:{suffix}", self.conn.prefix)
    }

    /// Runs one operation of the script on `session` (and `stream`'s key,
    /// if any) with `args` after the common ones.
    async fn call(
        &self,
        op: &str,
        session: &SessionTag,
        stream: Option<StreamId>,
        args: &[&[u8]],
    ) -> Result<Reply, RedisStoreError> {
        let p = &self.conn.prefix;
        let meta = self.key(session, "meta");
        let stream_key = match stream {
            Some(s) => self.key(session, &format!("s:{}", s.0)),
            None => meta.clone(),
        };
        let ttl = u64::try_from(self.config.session_ttl.as_millis()).unwrap_or(u64::MAX);
        let mut inv = SCRIPT.prepare_invoke();
        inv.key(&meta).key(self.key(session, "fin")).key(stream_key);
        if self.conn.layout() == Layout::Single {
            inv.key(format!("{p}:sessions"))
                .key(format!("{p}:sbytes"))
                .key(format!("{p}:bytes"))
                .key(format!("{p}:budget"));
        }
        inv.arg(p.as_str())
            .arg(op)
            .arg(session.to_string())
            .arg(ttl);
        for a in args {
            inv.arg(*a);
        }
        let mut m = self.conn.manager.clone();
        let value: Vec<Value> = inv.invoke_async(&mut m).await?;
        Reply::read(value)
    }

    /// Runs `append`, `append_final`, `append_final_read` or `open_final`
    /// (which take the same arguments, and `open_final` the stream cap
    /// after them).
    async fn call_append(
        &self,
        op: &str,
        session: &SessionTag,
        stream: StreamId,
        message: &[u8],
    ) -> Result<Reply, RedisStoreError> {
        let l = &self.config.limits;
        let args: [&[u8]; 8] = [
            &num(stream.0),
            message,
            &num(l.max_events_per_stream),
            &num(l.max_bytes_per_stream),
            &num(l.max_bytes_per_session),
            &num(l.max_bytes_total),
            &num(self.config.max_budget_entries),
            &num(l.max_streams_per_session),
        ];
        let args = if op == "open_final" {
            &args[..]
        } else {
            &args[..7]
        };
        self.call(op, session, Some(stream), args).await
    }

    /// `append_final` or `append_final_read` (the script's two final
    /// appends), as [`FinalAppend`].
    async fn final_append(
        &self,
        op: &str,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> FinalAppend {
        let reply = match self.call_append(op, session, stream, &message).await {
            Ok(reply) => reply,
            Err(e) => {
                // Neither step is known to have happened: both fail.
                let again = StoreError::Backend(e.to_string().into());
                return FinalAppend {
                    appended: Err(backend(e)),
                    finished: Err(again),
                };
            }
        };
        // The script's session check answers before either step.
        if reply.rest.is_empty() {
            return FinalAppend {
                appended: Err(self.store_error(&reply, session, stream)),
                finished: Err(self.store_error(&reply, session, stream)),
            };
        }
        self.final_reply(reply, session, stream)
    }

    /// A final append's reply (the end's status, then the append's reply)
    /// as [`FinalAppend`].
    fn final_reply(&self, reply: Reply, session: &SessionTag, stream: StreamId) -> FinalAppend {
        let finished = if reply.status == "ok" {
            Ok(())
        } else {
            Err(self.store_error(&reply, session, stream))
        };
        let appended = Reply::read(reply.rest)
            .map_err(backend)
            .and_then(|a| self.appended(&a, session, stream));
        FinalAppend { appended, finished }
    }

    /// An appending operation's reply as `append`'s result.
    fn appended(
        &self,
        reply: &Reply,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<EventId, StoreError> {
        if reply.status != "ok" {
            return Err(self.store_error(reply, session, stream));
        }
        let seq = reply.int(0).map_err(backend)?;
        Ok(EventId::new(*session, stream, seq))
    }

    /// Maps a writing operation's non-`ok` status to its error.
    fn store_error(&self, reply: &Reply, session: &SessionTag, stream: StreamId) -> StoreError {
        let (session, limits) = (*session, &self.config.limits);
        match reply.status.as_str() {
            "unknown_session" => StoreError::UnknownSession { session },
            "session_exists" => StoreError::SessionExists { session },
            "too_many_sessions" => StoreError::TooManySessions {
                max: limits.max_sessions,
            },
            "unknown_stream" => StoreError::UnknownStream { session, stream },
            "stream_exists" => StoreError::StreamExists { session, stream },
            "stream_finished" => StoreError::StreamFinished { session, stream },
            "too_many_streams" => StoreError::TooManyStreams {
                session,
                max: limits.max_streams_per_session,
            },
            "message_too_large" => StoreError::MessageTooLarge {
                size: reply
                    .int(0)
                    .ok()
                    .and_then(|n| usize::try_from(n).ok())
                    .unwrap_or(usize::MAX),
                max: limits.max_bytes_per_stream,
            },
            "sequence_exhausted" => StoreError::SequenceExhausted { session, stream },
            other => backend(bad(&format!("unexpected status {other}"))),
        }
    }

    /// Runs a writing operation that answers `ok` and maybe a number.
    async fn write(
        &self,
        op: &str,
        session: &SessionTag,
        stream: StreamId,
        args: &[&[u8]],
    ) -> Result<Reply, StoreError> {
        let reply = self
            .call(op, session, Some(stream), args)
            .await
            .map_err(backend)?;
        if reply.status == "ok" {
            Ok(reply)
        } else {
            Err(self.store_error(&reply, session, stream))
        }
    }
}

fn num(n: impl ToString) -> Vec<u8> {
    n.to_string().into_bytes()
}

#[async_trait::async_trait]
impl EventStore for RedisEventStore {
    async fn open_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        let max = num(self.config.limits.max_sessions);
        let reply = self
            .call("open_session", session, None, &[&max])
            .await
            .map_err(backend)?;
        if reply.status == "ok" {
            Ok(())
        } else {
            Err(self.store_error(&reply, session, StreamId::STANDALONE))
        }
    }

    async fn open_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<EventId, StoreError> {
        let (n, max) = (
            num(stream.0),
            num(self.config.limits.max_streams_per_session),
        );
        self.write("open_stream", session, stream, &[&n, &max])
            .await?;
        Ok(EventId::priming(*session, stream))
    }

    async fn append(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> Result<EventId, StoreError> {
        let reply = self
            .call_append("append", session, stream, &message)
            .await
            .map_err(backend)?;
        self.appended(&reply, session, stream)
    }

    /// One script call for both steps (`append_final` in the script): one
    /// round trip fewer for every request answered on its own stream.
    async fn append_final(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> FinalAppend {
        self.final_append("append_final", session, stream, message)
            .await
    }

    /// The same script call, which also marks the stream read to its end
    /// (`append_final_read` in the script).
    async fn append_final_delivered(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> FinalAppend {
        self.final_append("append_final_read", session, stream, message)
            .await
    }

    /// One script call for the three steps (`open_final` in the script):
    /// a request answered before its stream was opened costs one round
    /// trip, not two.
    async fn open_answered(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> Result<(EventId, FinalAppend), StoreError> {
        let reply = self
            .call_append("open_final", session, stream, &message)
            .await
            .map_err(backend)?;
        // The open's (or the session check's) refusal comes alone.
        if reply.rest.is_empty() {
            return Err(self.store_error(&reply, session, stream));
        }
        let done = self.final_reply(reply, session, stream);
        Ok((EventId::priming(*session, stream), done))
    }

    async fn finish_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<(), StoreError> {
        self.write("finish_stream", session, stream, &[&num(stream.0)])
            .await
            .map(drop)
    }

    async fn replay_after(
        &self,
        expected_session: &SessionTag,
        last: &EventId,
    ) -> Result<Replay, ReplayError> {
        let id = *last;
        if last.session != *expected_session {
            return Err(ReplayError::ForeignSession { id });
        }
        let reply = self
            .call(
                "replay",
                expected_session,
                Some(last.stream),
                &[&num(last.stream.0), &num(last.seq)],
            )
            .await
            .map_err(|e| ReplayError::Backend(Box::new(e)))?;
        match reply.status.as_str() {
            "ok" => {}
            "unknown_event_id" => return Err(ReplayError::UnknownEventId { id }),
            "expired" => return Err(ReplayError::Expired { id }),
            other => {
                return Err(ReplayError::Backend(Box::new(bad(&format!(
                    "unexpected status {other}"
                )))));
            }
        }
        let as_backend = |e| ReplayError::Backend(Box::new(e));
        let last_seq = reply.int(0).map_err(as_backend)?;
        let finished = reply.int(1).map_err(as_backend)? == 1;
        let events = reply.rest[2..]
            .iter()
            .zip(last.seq + 1..)
            .map(|(v, seq)| match v {
                Value::BulkString(data) => Ok(StoredEvent {
                    id: EventId::new(last.session, last.stream, seq),
                    data: Bytes::copy_from_slice(data),
                }),
                other => Err(as_backend(bad(&format!(
                    "expected event data, got {other:?}"
                )))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Replay {
            stream: last.stream,
            events,
            last_seq,
            finished,
        })
    }

    async fn tail_after(
        &self,
        expected_session: &SessionTag,
        last: &EventId,
        wait: Duration,
    ) -> Result<Replay, ReplayError> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let r = self.replay_after(expected_session, last).await?;
            let poll = self.config.tail_poll;
            if !r.events.is_empty() || r.finished || tokio::time::Instant::now() + poll >= deadline
            {
                return Ok(r);
            }
            tokio::time::sleep(poll).await;
        }
    }

    async fn last_seq(&self, session: &SessionTag, stream: StreamId) -> Result<u64, StoreError> {
        let reply = self
            .write("last_seq", session, stream, &[&num(stream.0)])
            .await?;
        reply.int(0).map_err(backend)
    }

    async fn remove_session(&self, session: &SessionTag) -> Result<(), StoreError> {
        self.call("remove_session", session, None, &[])
            .await
            .map_err(backend)
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    /// A replay (also `tail_after`'s poll, every 20 ms per followed
    /// stream) is answered before the script defines the writing ops'
    /// functions, which it does not use: defining them is ~1 µs of a
    /// replay's ~6 (docs/PERFORMANCE.md, session 33). What it does is
    /// tested through the store; this keeps it where it is.
    #[test]
    fn a_replay_is_answered_before_the_writing_ops_are_defined() {
        let script = include_str!("event_store.lua");
        let replay = script.find("if op == 'replay' then").unwrap();
        let first_writer = script.find("local function account").unwrap();
        assert!(replay < first_writer);
        let before = &script[..replay];
        assert_eq!(before.matches("local function").count(), 5, "{before}");
    }
}
