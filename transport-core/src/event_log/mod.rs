//! The bounded per-stream replay log behind the [`EventStore`] trait.
//!
//! A legacy (2025-03-26 … 2025-11-25) server writes every SSE message event
//! it sends — or would have sent, had the connection still been there —
//! through an [`EventStore`]. When a client resumes with `GET` and a
//! `Last-Event-ID`, the server asks [`EventStore::replay_after`] for exactly
//! the events that followed that id *on that id's stream* (the spec's "MUST
//! NOT replay messages that would have been delivered on a different
//! stream"), sends them, and — if the request behind the stream is still
//! running — continues live. Live continuation is the server's job; this
//! module only stores and replays, and (for a resume that landed on another
//! server instance than the one writing the stream) lets the server follow
//! the stream with [`EventStore::tail_after`].
//!
//! # Lifecycle
//!
//! ```text
//! open_session(s)                          once per session (initialize)
//!   open_stream(s, n)      -> priming id   s.n.0, sent as the priming event
//!   append(s, n, json)     -> s.n.1, s.n.2, …  one per message event
//!   finish_stream(s, n)                    after the final response
//!     (or append_final(s, n, json): the final response and the end in one call;
//!      append_final_delivered when the caller hands it to its reader itself;
//!      open_answered(s, n, json): open_stream and append_final_delivered at once)
//!   replay_after(s, id)    -> Replay       on GET + Last-Event-ID
//! remove_session(s)                        DELETE or expiry
//! ```
//!
//! Stream numbers are allocated by the server (see
//! [`StreamId`]); sequence numbers by the store.
//!
//! # Replay contract (for every implementation)
//!
//! For `replay_after(expected, last)`:
//!
//! * `last` from another session than `expected` → [`ReplayError::ForeignSession`];
//! * no stream `last.stream` ever opened in the session, or `last.seq` beyond
//!   the last sequence number issued on it → [`ReplayError::UnknownEventId`];
//! * some event after `last` no longer retained → [`ReplayError::Expired`];
//! * otherwise [`Replay`] with *exactly* the events `last.seq + 1 ..=
//!   last_seq` of that stream, in order — never `last` itself, never an event
//!   of another stream.
//!
//! The in-memory implementation is [`MemoryEventStore`].

mod memory;

pub use memory::{
    DEFAULT_MAX_BYTES_TOTAL, DEFAULT_MAX_SESSIONS, MemoryEventStore, MemoryEventStoreConfig,
};

use bytes::Bytes;

use crate::event_id::{EventId, SessionTag, StreamId};

/// A boxed error from a store's backend (network, serialization, …).
pub type BackendError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Storage for the SSE message events of every stream of every session, so
/// a client reconnecting with `Last-Event-ID` gets exactly what followed.
///
/// Object safe: servers hold it as `Arc<dyn EventStore>`. The methods are
/// async so that a networked store (Redis, …) can implement it and a resume
/// can land on another server instance; the in-memory
/// [`MemoryEventStore`] never actually waits.
///
/// See the [module documentation](self) for the lifecycle and the replay
/// contract every implementation must keep.
#[async_trait::async_trait]
pub trait EventStore: Send + Sync + 'static {
    /// Registers a session. Streams can only be opened in a registered
    /// session.
    ///
    /// # Errors
    ///
    /// [`StoreError::SessionExists`] if the tag is already registered (a tag
    /// collision: mint another), [`StoreError::TooManySessions`] if the store
    /// is full, [`StoreError::Backend`].
    async fn open_session(&self, session: &SessionTag) -> Result<(), StoreError>;

    /// Registers stream `stream` of `session` and returns its priming id
    /// (sequence number 0), which the server sends as the stream's priming
    /// event. The priming event itself is not stored.
    ///
    /// # Errors
    ///
    /// [`StoreError::UnknownSession`], [`StoreError::StreamExists`],
    /// [`StoreError::TooManyStreams`] (if the implementation bounds streams
    /// per session and cannot make room), [`StoreError::Backend`].
    async fn open_stream(
        &self,
        session: &SessionTag,
        stream: StreamId,
    ) -> Result<EventId, StoreError>;

    /// Stores one message event — the JSON text of one JSON-RPC message, as
    /// it goes into the SSE `data` field — and returns its id, whose sequence
    /// number is one more than the previous one on this stream (1 for the
    /// first message).
    ///
    /// # Errors
    ///
    /// [`StoreError::UnknownSession`], [`StoreError::UnknownStream`],
    /// [`StoreError::StreamFinished`], [`StoreError::MessageTooLarge`] (the
    /// message alone exceeds the per-stream retention bound),
    /// [`StoreError::SequenceExhausted`], [`StoreError::Backend`].
    async fn append(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> Result<EventId, StoreError>;

    /// Marks the stream as ended: its final event (the JSON-RPC response)
    /// has been appended and nothing more will be. A later replay of it
    /// reports [`Replay::finished`]. Idempotent.
    ///
    /// # Errors
    ///
    /// [`StoreError::UnknownSession`], [`StoreError::UnknownStream`],
    /// [`StoreError::Backend`].
    async fn finish_stream(&self, session: &SessionTag, stream: StreamId)
    -> Result<(), StoreError>;

    /// Stores the stream's final message (its JSON-RPC response) and marks
    /// the stream as ended: [`append`](Self::append) then
    /// [`finish_stream`](Self::finish_stream), in one call, so that a store
    /// can do both under one lock or in one round trip (a server answering
    /// a request on its own stream does this once per request). Each step's
    /// result is returned as the two methods would have returned it; in
    /// particular the stream is ended even when the message is refused
    /// ([`StoreError::MessageTooLarge`], …), as `finish_stream` after a
    /// failed `append` ends it.
    ///
    /// The default calls the two methods in turn; [`MemoryEventStore`] and
    /// the Redis store override it. A store wrapping another should pass
    /// the call on, or its inner store's single call is lost.
    async fn append_final(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> FinalAppend {
        let appended = self.append(session, stream, message).await;
        let finished = self.finish_stream(session, stream).await;
        FinalAppend { appended, finished }
    }

    /// [`append_final`](Self::append_final) for a caller that delivers the
    /// message itself, from its own copy, to the connection attached to
    /// the stream, so that no [`replay_after`](Self::replay_after) reads the
    /// stream's end for it: the store also records the stream as read to
    /// its end, as such a replay would have. A store whose bounds evict
    /// streams read to their end first (as [`MemoryEventStore`] and the
    /// Redis store do: an unread finished stream is most likely an answer
    /// about to be read) keeps that order this way without the read.
    ///
    /// The default is `append_final` (a store that does not order eviction
    /// by reads has nothing more to record). A store wrapping another
    /// should pass the call on.
    async fn append_final_delivered(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> FinalAppend {
        self.append_final(session, stream, message).await
    }

    /// Opens stream `stream` with its final message already in it:
    /// [`open_stream`](Self::open_stream), then
    /// [`append_final_delivered`](Self::append_final_delivered), in one
    /// call, so that a store can do both in one round trip (a server whose
    /// handler answered before the stream was opened does this once per
    /// request, and a stream born finished needs no lease). Returns the
    /// priming id and what the final append did.
    ///
    /// The default calls the two methods in turn; the Redis store
    /// overrides it. A store wrapping another should pass the call on.
    ///
    /// # Errors
    ///
    /// As [`open_stream`](Self::open_stream); nothing is appended then.
    async fn open_answered(
        &self,
        session: &SessionTag,
        stream: StreamId,
        message: Bytes,
    ) -> Result<(EventId, FinalAppend), StoreError> {
        let priming = self.open_stream(session, stream).await?;
        let done = self.append_final_delivered(session, stream, message).await;
        Ok((priming, done))
    }

    /// The events after `last` on `last`'s stream, for a client resuming
    /// with `Last-Event-ID: last` in the session `expected_session` (the one
    /// its `Mcp-Session-Id` names). See the [module documentation](self) for
    /// the exact contract.
    ///
    /// # Errors
    ///
    /// [`ReplayError::ForeignSession`], [`ReplayError::UnknownEventId`],
    /// [`ReplayError::Expired`], [`ReplayError::Backend`].
    async fn replay_after(
        &self,
        expected_session: &SessionTag,
        last: &EventId,
    ) -> Result<Replay, ReplayError>;

    /// The live tail of a stream written by another server instance: like
    /// [`replay_after`](Self::replay_after), but when nothing follows `last`
    /// yet and the stream has not finished, the store may wait up to `wait`
    /// for an append (or the stream's end) before answering. An answer with
    /// no events and `finished == false` means "nothing yet": the caller
    /// asks again (after a pause of its own, since a store may not wait at
    /// all).
    ///
    /// A resume that lands on an instance other than the one running the
    /// stream's request has no in-process signal of new events; it follows
    /// the stream with this until the stream finishes (*Transports*,
    /// "Resumability and Redelivery": the server "MAY use this header to
    /// replay messages that would have been sent after the last event ID,
    /// on the stream that was disconnected"). Same errors and contract as
    /// `replay_after`.
    ///
    /// The default does not wait: it is `replay_after`. That is right for a
    /// store whose writers all live in the caller's process (they signal new
    /// events in-process); a shared store should override it (the Redis
    /// store polls; see its documentation).
    ///
    /// # Errors
    ///
    /// As [`replay_after`](Self::replay_after).
    async fn tail_after(
        &self,
        expected_session: &SessionTag,
        last: &EventId,
        wait: std::time::Duration,
    ) -> Result<Replay, ReplayError> {
        let _ = wait;
        self.replay_after(expected_session, last).await
    }

    /// The last sequence number issued on the stream (0 if only the priming
    /// id was): a resumed connection has caught up once it has delivered this
    /// one.
    ///
    /// # Errors
    ///
    /// [`StoreError::UnknownSession`], [`StoreError::UnknownStream`] (also
    /// for a stream the store has evicted), [`StoreError::Backend`].
    async fn last_seq(&self, session: &SessionTag, stream: StreamId) -> Result<u64, StoreError>;

    /// Drops the session and everything stored for it (on `DELETE` or
    /// expiry). Afterwards every operation on it fails as for a session never
    /// opened; replay reports [`ReplayError::UnknownEventId`]. Removing an
    /// unknown session is not an error.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] only.
    async fn remove_session(&self, session: &SessionTag) -> Result<(), StoreError>;
}

/// What [`EventStore::append_final`] did, step by step.
#[derive(Debug)]
#[must_use]
pub struct FinalAppend {
    /// The final message's id, or why it was not stored (what
    /// [`EventStore::append`] would have returned).
    pub appended: Result<EventId, StoreError>,
    /// Whether the stream's end was recorded (what
    /// [`EventStore::finish_stream`] would have returned).
    pub finished: Result<(), StoreError>,
}

/// One stored message event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event's id (its SSE `id` field).
    pub id: EventId,
    /// The JSON text of the message (its SSE `data`).
    pub data: Bytes,
}

/// What [`EventStore::replay_after`] returns: the events that followed the
/// client's `Last-Event-ID` on its stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The stream being resumed (the one the `Last-Event-ID` names).
    pub stream: StreamId,
    /// Exactly the events after the `Last-Event-ID`, in order, with
    /// consecutive sequence numbers; empty if the client had everything.
    pub events: Vec<StoredEvent>,
    /// The last sequence number issued on the stream when the replay was
    /// taken (the last event's, or the `Last-Event-ID`'s if `events` is
    /// empty). Live events with a higher sequence number are new to the
    /// client.
    pub last_seq: u64,
    /// Whether the stream has ended ([`EventStore::finish_stream`]): after
    /// sending `events` the server closes the response instead of waiting for
    /// more.
    pub finished: bool,
}

/// An error from the writing side of an [`EventStore`] or from
/// [`EventStore::last_seq`]. These are server-side conditions (a 5xx or a
/// message sent without an id), never the client's fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The session was never opened, or has been removed.
    #[error("session {session} is not open in the event store")]
    UnknownSession {
        /// The session.
        session: SessionTag,
    },
    /// [`EventStore::open_session`] for a tag already registered.
    #[error("session {session} is already open in the event store")]
    SessionExists {
        /// The session.
        session: SessionTag,
    },
    /// [`EventStore::open_session`] when the store holds its maximum number of
    /// sessions.
    #[error("the event store already holds its maximum of {max} sessions")]
    TooManySessions {
        /// The configured maximum.
        max: usize,
    },
    /// The stream was never opened in the session, or has been evicted.
    #[error("stream {stream} of session {session} is not open in the event store")]
    UnknownStream {
        /// The session.
        session: SessionTag,
        /// The stream.
        stream: StreamId,
    },
    /// [`EventStore::open_stream`] for a stream number already in use.
    #[error("stream {stream} of session {session} is already open")]
    StreamExists {
        /// The session.
        session: SessionTag,
        /// The stream.
        stream: StreamId,
    },
    /// [`EventStore::append`] after [`EventStore::finish_stream`].
    #[error("stream {stream} of session {session} has already finished")]
    StreamFinished {
        /// The session.
        session: SessionTag,
        /// The stream.
        stream: StreamId,
    },
    /// [`EventStore::open_stream`] when the session holds its maximum number
    /// of streams and none can be evicted.
    #[error("session {session} already holds its maximum of {max} unfinished streams")]
    TooManyStreams {
        /// The session.
        session: SessionTag,
        /// The configured maximum.
        max: usize,
    },
    /// [`EventStore::append`] of a message larger than a stream may retain.
    #[error("message of {size} bytes exceeds the event store's limit of {max} bytes per stream")]
    MessageTooLarge {
        /// The message size in bytes.
        size: usize,
        /// The per-stream byte limit.
        max: usize,
    },
    /// The stream has used every sequence number up to `u64::MAX`.
    #[error("stream {stream} of session {session} has run out of sequence numbers")]
    SequenceExhausted {
        /// The session.
        session: SessionTag,
        /// The stream.
        stream: StreamId,
    },
    /// The store's backend failed.
    #[error("event store backend failed")]
    Backend(#[source] BackendError),
}

/// Why [`EventStore::replay_after`] cannot resume from a `Last-Event-ID`.
///
/// The first three are the client's problem and each deserves its own 4xx;
/// the `Display` text is written to be shown to the client. A suggested
/// mapping is `UnknownEventId` → 400, `ForeignSession` → 409, `Expired` →
/// 410 — but not 404, which MCP reserves for "session not found, start a new
/// one". [`ReplayError::Backend`] is a 5xx.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The id is well-formed and of this session, but names no stream the
    /// session ever had, or a sequence number beyond what was issued on it
    /// (or the session is gone).
    #[error("Last-Event-ID {id} does not name an event of this session")]
    UnknownEventId {
        /// The id the client sent.
        id: EventId,
    },
    /// The id was issued in a different session.
    #[error("Last-Event-ID {id} was issued in a different session")]
    ForeignSession {
        /// The id the client sent.
        id: EventId,
    },
    /// Events after the id have been evicted from the retained window (or
    /// its whole stream has been), so an exact replay is impossible.
    #[error("the events after Last-Event-ID {id} are no longer retained")]
    Expired {
        /// The id the client sent.
        id: EventId,
    },
    /// The store's backend failed.
    #[error("event store backend failed")]
    Backend(#[source] BackendError),
}
