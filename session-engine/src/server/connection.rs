//! One SSE connection: a cursor over one stream's event log.
//!
//! Live delivery and replay are one path. A connection remembers the last
//! sequence number it has delivered (its cursor); whenever the stream's
//! [`Live`](super::stream::Live) state says more was appended, it asks the
//! event store for everything after the cursor (`replay_after`) and writes
//! those events (but for a final message the stream kept for it, which it
//! writes without the read: `StreamState::take_final_after`). A resuming
//! connection simply starts with the cursor at the client's
//! `Last-Event-ID`, so resumption is exact by construction.
//!
//! Per connection, in order:
//!
//! 1. the priming event, on a *new* stream of a session whose revision has
//!    [`SessionRevision::polling`](crate::revision::SessionRevision::polling)
//!    (SEP-1699: "When a server starts an SSE stream, it MUST immediately
//!    send an SSE event consisting of an id and an empty data string");
//! 2. message events, each with its id (always on polling sessions, else
//!    when `ServerConfig::event_ids`), a short run of ready events written
//!    as one body chunk;
//! 3. the end: after the stream's last event (its response) the body ends.
//!    If the server ends the connection before that — the revision's
//!    [`ConnectionPolicy`], `close_sse_stream`, a takeover by a newer
//!    connection, or a stalled reader detached after
//!    `ServerConfig::sse_write_timeout` — a polling session first gets
//!    `retry: <retry_ms>` (SEP-1699: "the server SHOULD send an SSE event
//!    with a retry field"; on a takeover too, so the superseded
//!    connection's owner waits instead of reconnecting at once). A connection that
//!    has carried no event id by then (a resume that found nothing new) first
//!    gets an empty-data event with a fresh id naming its position
//!    ([`EventId::renewed`]): every early close leaves the client an id to
//!    resume from, also a client that remembers ids per connection.
//!
//! Keep-alive comments go out after `keepalive` of silence. Dropping the
//! connection (client gone) only detaches it: the request goes on, its
//! events stay in the log for a resume.
//!
//! Each connection runs in a span of its own, a child of the HTTP
//! request's `mcp.request`: `mcp.stream` for a stream's first connection,
//! `mcp.resume` for one that resumes it (`GET` + `Last-Event-ID`), with
//! the fields of [`mcp_http_edge::trace`]: `mcp.session_id`,
//! `mcp.stream_id`, `mcp.cursor` (the sequence number it starts after),
//! and, recorded when it ends, `sse.events` (message events written) and
//! `sse.end` (`finished`, `closed` early by the server, `detached`: the
//! client went away).

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use mcp_http_edge::faults::Fault;
use mcp_http_edge::trace::{self, SseEnd};
use mcp_transport_core::event_id::EventId;
use mcp_transport_core::event_log::{Replay, ReplayError, StoredEvent};
use mcp_transport_core::sse;
use tokio::time::Instant;
use tracing::Instrument;

use super::Shared;
use super::reply::{self, HttpResponse};
use super::session::{BusyGuard, Session};
use super::stream::{LiveReceiver, StreamState};
use crate::revision::ConnectionPolicy;

/// How long one [`EventStore::tail_after`] call may wait for a remote
/// stream's next event.
///
/// [`EventStore::tail_after`]: mcp_transport_core::event_log::EventStore::tail_after
const TAIL_WAIT: std::time::Duration = std::time::Duration::from_secs(1);
/// The pause between two `tail_after` calls that found nothing (a store
/// that does not wait answers at once).
const TAIL_PAUSE: std::time::Duration = std::time::Duration::from_millis(25);

/// At most this many events go into one body chunk.
const MAX_CHUNK_EVENTS: usize = 64;
/// A chunk stops growing once it holds this many bytes.
const MAX_CHUNK_BYTES: usize = 256 * 1024;

/// How a connection starts.
pub(crate) struct Plan {
    /// The generation returned by `StreamState::attach`.
    pub generation: u64,
    /// The priming event's id, for a new stream on a polling session.
    pub priming: Option<EventId>,
    /// The connection delivers the events after this sequence number.
    pub cursor: u64,
    /// Events already read from the store (a resume's `replay_after`).
    pub prefetched: Option<Replay>,
    /// Whether this connection resumes a stream (`GET` + `Last-Event-ID`).
    pub resuming: bool,
    /// Events of other streams to write first: only ever non-empty under
    /// the `LeakOtherStream` self-test fault.
    pub leak: Vec<StoredEvent>,
    /// The stream's first connection: it honours every close request since
    /// the stream opened (the handler is polled once before the response
    /// exists, `request::start`, and may ask for one then).
    pub first: bool,
}

/// The SSE response that opens a new request stream: its first connection,
/// attached as `generation`, delivers from the start, after the priming
/// event (`prefetched`: its events, when already read).
pub(crate) fn respond_new(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    stream: Arc<StreamState>,
    generation: u64,
    priming: EventId,
    prefetched: Option<Replay>,
) -> HttpResponse {
    let plan = Plan {
        generation,
        priming: Some(priming),
        cursor: 0,
        prefetched,
        resuming: false,
        leak: Vec::new(),
        first: true,
    };
    respond(shared, session, stream, plan)
}

/// The SSE response for an attached connection.
pub(crate) fn respond(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    stream: Arc<StreamState>,
    plan: Plan,
) -> HttpResponse {
    let span = if plan.resuming {
        tracing::info_span!(
            "mcp.resume",
            mcp.session_id = %session.id,
            mcp.stream_id = stream.id.0,
            mcp.cursor = plan.cursor,
            sse.events = tracing::field::Empty,
            sse.end = tracing::field::Empty,
        )
    } else {
        tracing::info_span!(
            "mcp.stream",
            mcp.session_id = %session.id,
            mcp.stream_id = stream.id.0,
            mcp.cursor = plan.cursor,
            sse.events = tracing::field::Empty,
            sse.end = tracing::field::Empty,
        )
    };
    let at_hand = plan.prefetched.is_some();
    let conn = Connection::new(shared, session, stream, plan, span);
    let body = futures_util::stream::unfold(conn, |mut c| async move {
        let span = c.span.clone();
        c.next_chunk()
            .instrument(span)
            .await
            .map(|chunk| (Ok::<Bytes, Infallible>(chunk), c))
    });
    if !at_hand {
        return reply::sse(Body::from_stream(body));
    }
    reply::sse(whole_if_ready(Box::pin(body)))
}

/// The body of a connection whose events are already read (a request
/// answered before its response was built): polled here, it is usually
/// whole at once — the priming event, the answer and the stream's end —
/// and is then sent as one buffer with a `Content-Length`, with no stream
/// for hyper to poll or chunked framing to write and for the client to
/// read. Otherwise what it gave so far goes first and the stream follows;
/// a stream polled here keeps its state, so nothing is lost when it was
/// not ready.
fn whole_if_ready<S>(mut body: std::pin::Pin<Box<S>>) -> Body
where
    S: futures_util::Stream<Item = Result<Bytes, Infallible>> + Send + 'static,
{
    use futures_util::{FutureExt, StreamExt};
    let Some(first) = body.next().now_or_never() else {
        return Body::from_stream(body);
    };
    let Some(Ok(first)) = first else {
        return Body::empty();
    };
    match body.next().now_or_never() {
        Some(None) => Body::from(first),
        Some(Some(Ok(second))) => {
            Body::from_stream(futures_util::stream::iter([Ok(first), Ok(second)]).chain(body))
        }
        None => Body::from_stream(futures_util::stream::once(async { Ok(first) }).chain(body)),
    }
}

struct Connection {
    shared: Arc<Shared>,
    session: Arc<Session>,
    stream: Arc<StreamState>,
    generation: u64,
    rx: LiveReceiver,
    cursor: u64,
    priming: Option<EventId>,
    prefetched: Option<Replay>,
    /// `retry` before an early close: `Some` on polling (SEP-1699) sessions.
    retry_ms: Option<u64>,
    with_ids: bool,
    /// The revision's early-close policy; `None`: never closed early.
    policy: Option<Box<dyn ConnectionPolicy>>,
    close_seen: u64,
    /// Whether an event id went out on this connection.
    sent_id: bool,
    /// Where in the chunk being built the last message event starts, and
    /// its id (for the `DropLastBeforeClose` self-test fault only).
    last_written: Option<(usize, EventId)>,
    /// Events of other streams written first (the `LeakOtherStream`
    /// self-test fault only; always empty otherwise).
    leak: Vec<StoredEvent>,
    done: bool,
    /// This connection's `mcp.stream` / `mcp.resume` span.
    span: tracing::Span,
    /// Message events written (recorded in the span as `sse.events`).
    events: u64,
    _busy: BusyGuard,
}

impl Connection {
    fn new(
        shared: &Arc<Shared>,
        session: &Arc<Session>,
        stream: Arc<StreamState>,
        plan: Plan,
        span: tracing::Span,
    ) -> Self {
        // Revisions without SEP-1699 are never closed early.
        let polling = session.revision.polling();
        let policy = polling.map(|p| p.connection(Instant::now().into_std(), plan.resuming));
        let rx = stream.subscribe();
        let close_seen = if plan.first {
            0
        } else {
            rx.borrow().close_requests
        };
        Connection {
            shared: shared.clone(),
            session: session.clone(),
            _busy: session.busy(shared),
            stream,
            generation: plan.generation,
            rx,
            cursor: plan.cursor,
            priming: plan.priming.filter(|_| {
                polling.is_some() && !shared.config.http.faults.has(Fault::SkipPriming)
            }),
            prefetched: plan.prefetched,
            retry_ms: polling.map(|p| p.retry_ms()),
            with_ids: polling.is_some() || shared.config.event_ids,
            policy,
            close_seen,
            sent_id: false,
            last_written: None,
            leak: plan.leak,
            done: false,
            span,
            events: 0,
        }
    }

    /// Marks the connection over and records how in its span.
    fn end(&mut self, how: SseEnd) {
        if !self.done {
            trace::record_sse_end(&self.span, self.events, how);
        }
        self.done = true;
    }

    /// Ends the connection early; a polling client learns when to come back
    /// (`retry`), and from where (a fresh id, when none went out yet).
    fn close_with_retry(&mut self, buf: &mut BytesMut) {
        if self
            .shared
            .config
            .http
            .faults
            .has(Fault::DropLastBeforeClose)
            && let Some((start, id)) = self.last_written.take()
        {
            buf.truncate(start);
            let _ = sse::write_priming(buf, &id.text());
        }
        if let Some(ms) = self.retry_ms {
            if !self.sent_id {
                let id = EventId::new(self.session.tag, self.stream.id, self.cursor)
                    .renewed(self.session.next_renewal());
                let _ = sse::write_priming(buf, &id.text());
                self.sent_id = true;
            }
            sse::write_retry(buf, ms);
        }
        self.end(SseEnd::Closed);
    }

    fn finish(&mut self, mut buf: BytesMut) -> Option<Bytes> {
        self.end(SseEnd::Finished);
        // The response the event store refused (Redis down): delivered
        // here, without an id, since no resume could replay it.
        if let Some(message) = self.stream.take_unstored() {
            let data = data_text(&message);
            let _ = sse::write_event(&mut buf, None, None, &data);
        }
        (!buf.is_empty()).then(|| buf.freeze())
    }

    /// The next body chunk, or `None` when the connection ends.
    async fn next_chunk(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        let mut buf = BytesMut::new();
        self.last_written = None;
        for ev in std::mem::take(&mut self.leak) {
            let data = data_text(&ev.data);
            let _ = sse::write_event(&mut buf, None, Some(&ev.id.text()), &data);
        }
        if let Some(id) = self.priming.take() {
            // Ids are visible ASCII without CR, LF or NUL: this cannot fail.
            // The priming event, and room for a `retry` line after it, or
            // for the events already read that go in the same chunk (one
            // allocation for the whole chunk of a quick answer).
            let ahead: usize = self.prefetched.as_ref().map_or(0, |r| {
                r.events
                    .iter()
                    .take(MAX_CHUNK_EVENTS)
                    .map(|e| e.data.len() + EVENT_ROOM)
                    .sum()
            });
            buf.reserve(PRIMING_ROOM + ahead.min(MAX_CHUNK_BYTES));
            let _ = sse::write_priming(&mut buf, &id.text());
            self.sent_id = true;
            if self
                .policy
                .as_ref()
                .is_some_and(|p| p.close_after_priming())
            {
                self.close_with_retry(&mut buf);
                return Some(buf.freeze());
            }
            // Events already read (a request that answered before its
            // response was built: `request::prefetch_finished`) go in the
            // same chunk: the priming event, the answer and the end of the
            // stream are one body frame, not two. Anything else may take a
            // wait, and the priming event must not wait for it.
            if self.prefetched.is_none() {
                return Some(buf.freeze());
            }
        }
        loop {
            let live = *self.rx.borrow_and_update();
            if self.session.shutdown.is_cancelled() {
                return self.finish(buf);
            }
            if live.generation != self.generation {
                // Taken over by a newer connection.
                self.close_with_retry(&mut buf);
                return Some(buf.freeze());
            }
            if live.close_requests != self.close_seen
                || (self.retry_ms.is_some()
                    && self
                        .shared
                        .draining
                        .load(std::sync::atomic::Ordering::SeqCst))
            {
                self.close_with_retry(&mut buf);
                return Some(buf.freeze());
            }
            let prefetched = self.prefetched.is_some();
            let replay = match self.prefetched.take() {
                Some(r) => Some(r),
                None if live.last_seq > self.cursor => match self.fetch().await {
                    Ok(r) => Some(r),
                    Err(e) => {
                        tracing::warn!(
                            session = %self.session.id,
                            stream = %self.stream.id,
                            error = %e,
                            "cannot read the stream's log; closing the connection"
                        );
                        self.close_with_retry(&mut buf);
                        return Some(buf.freeze());
                    }
                },
                None => None,
            };
            if let Some(replay) = replay {
                if self.rx.borrow().generation != self.generation {
                    // Taken over while reading the log: the new connection
                    // delivers these.
                    self.close_with_retry(&mut buf);
                    return Some(buf.freeze());
                }
                let written = self.write_events(&mut buf, &replay.events);
                let caught_up = self.cursor >= replay.last_seq;
                // A resume's prefetched replay may predate the stream's
                // last events: `live` finished says nothing about events
                // after the replay, so it ends the connection only once
                // the cursor has reached what `live` has seen.
                if (replay.finished && caught_up) || (live.finished && self.cursor >= live.last_seq)
                {
                    return self.finish(buf);
                }
                if self.remaining() == Some(0) {
                    self.close_with_retry(&mut buf);
                    return Some(buf.freeze());
                }
                if caught_up && self.close_when_caught_up() {
                    self.close_with_retry(&mut buf);
                    return Some(buf.freeze());
                }
                if written > 0 {
                    return Some(buf.freeze());
                }
                if prefetched && self.cursor < live.last_seq {
                    // The stale replay had nothing new, but `live` has
                    // seen more (already marked seen, so `wait` would not
                    // wake for it): read it now.
                    continue;
                }
            } else if live.finished {
                return self.finish(buf);
            } else if self.close_when_caught_up() {
                self.close_with_retry(&mut buf);
                return Some(buf.freeze());
            }
            if !buf.is_empty() {
                // Written already (the priming event): out before waiting.
                return Some(buf.freeze());
            }
            if !self.wait(&mut buf).await || (self.done && buf.is_empty()) {
                return self.finish(buf);
            }
            if !buf.is_empty() {
                return Some(buf.freeze());
            }
        }
    }

    /// What the policy allows before closing (`None`: no limit).
    fn remaining(&self) -> Option<u64> {
        self.policy.as_ref().and_then(|p| p.remaining())
    }

    /// Whether the policy closes a connection that has delivered everything
    /// ready.
    fn close_when_caught_up(&self) -> bool {
        self.policy
            .as_ref()
            .is_some_and(|p| p.close_when_caught_up(Instant::now().into_std()))
    }

    /// Waits for a change, the policy's wake-up time or the keep-alive
    /// time. Returns `false` when the session ended; writes a keep-alive
    /// comment into `buf` when that is due.
    async fn wait(&mut self, buf: &mut BytesMut) -> bool {
        let deadline = self
            .policy
            .as_ref()
            .and_then(|p| p.wake_at(Instant::now().into_std()))
            .map(Instant::from_std);
        let keepalive = self.shared.config.keepalive;
        let tail = self.stream.remote;
        let (shared, session, stream, cursor) =
            (&self.shared, &self.session, &self.stream, self.cursor);
        tokio::select! {
            changed = self.rx.changed() => changed.is_ok(),
            tailed = async {
                if tail {
                    follow(shared, session, stream, cursor).await
                } else {
                    std::future::pending().await
                }
            } => {
                match tailed {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::warn!(
                            session = %self.session.id,
                            stream = %self.stream.id,
                            error = %e,
                            "cannot follow the stream in the event log; closing the connection"
                        );
                        self.close_with_retry(buf);
                        true
                    }
                }
            }
            () = self.session.shutdown.cancelled() => false,
            () = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            } => true,
            () = async {
                match keepalive {
                    Some(k) => tokio::time::sleep(k).await,
                    None => std::future::pending().await,
                }
            } => {
                let _ = sse::write_comment(buf, "keep-alive");
                true
            }
        }
    }

    /// The events after the cursor: the stream's final message when the
    /// stream kept it for this connection (`StreamState::take_final_after`),
    /// else read from the event store.
    async fn fetch(&self) -> Result<Replay, ReplayError> {
        if let Some(replay) = self.stream.take_final_after(self.cursor) {
            return Ok(replay);
        }
        let last = EventId::new(self.session.tag, self.stream.id, self.cursor);
        self.shared
            .config
            .event_store
            .replay_after(&self.session.tag, &last)
            .await
    }

    /// Writes events after the cursor (at most a chunk's worth, and no more
    /// than the policy allows); returns how many.
    fn write_events(&mut self, buf: &mut BytesMut, events: &[StoredEvent]) -> usize {
        let budget = self
            .remaining()
            .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let mut written = 0;
        let start = self.cursor;
        for ev in events.iter().filter(|e| e.id.seq > start) {
            if written >= budget.min(MAX_CHUNK_EVENTS) || buf.len() >= MAX_CHUNK_BYTES {
                break;
            }
            let data = data_text(&ev.data);
            let start_at = buf.len();
            // One `data:` line (JSON text has no line breaks), the id and
            // the field names: reserved at once, not grown field by field.
            buf.reserve(data.len() + EVENT_ROOM);
            if self.with_ids {
                let _ = sse::write_event(buf, None, Some(&ev.id.text()), &data);
                self.last_written = Some((start_at, ev.id));
            } else {
                let _ = sse::write_event(buf, None, None, &data);
                self.last_written = None;
            }
            self.cursor = ev.id.seq;
            written += 1;
        }
        self.events += written as u64;
        if written > 0 {
            self.sent_id |= self.with_ids;
            if let Some(p) = self.policy.as_mut() {
                p.on_sent(written as u64, Instant::now().into_std());
            }
            self.stream.delivered(self.generation, self.cursor);
        }
        written
    }
}

/// Bytes reserved for a chunk's priming event (`id: <id>\ndata:\n\n`)
/// and a `retry` line after it.
const PRIMING_ROOM: usize = EventId::MAX_LEN + 32;
/// Bytes reserved for one message event besides its data: `id: <id>\n`,
/// `data: `, the line ends.
const EVENT_ROOM: usize = EventId::MAX_LEN + 16;

/// An event's data as text. It is JSON the engine wrote (or a store kept
/// for it), so UTF-8: checked by `str::from_utf8`, whose ASCII fast path
/// costs a fraction of `String::from_utf8_lossy`'s walk of each character
/// (~300 instructions an answer: docs/PERFORMANCE.md, session 21), which
/// is kept for bytes that are not.
fn data_text(data: &[u8]) -> Cow<'_, str> {
    std::str::from_utf8(data).map_or_else(|_| String::from_utf8_lossy(data), Cow::Borrowed)
}

/// Waits until the event store has something after `cursor` on a stream
/// another instance writes, or the stream finished, and publishes that to
/// the stream's live state (which wakes the connection). While nothing
/// comes, checks the writer's lease (`lease`): a dead writer's stream is
/// ended with an error here.
async fn follow(
    shared: &Shared,
    session: &Session,
    stream: &StreamState,
    cursor: u64,
) -> Result<(), ReplayError> {
    let last = EventId::new(session.tag, stream.id, cursor);
    let mut checked = Instant::now();
    loop {
        let r = shared
            .config
            .event_store
            .tail_after(&session.tag, &last, TAIL_WAIT)
            .await?;
        if r.finished || r.last_seq > cursor {
            stream.observed(r.last_seq, r.finished);
            return Ok(());
        }
        // The writer's lease lapsed (it died): end the stream for it.
        if super::lease::check_due(shared, &mut checked)
            && super::lease::end_if_writer_gone(shared, session, stream.id).await
        {
            continue;
        }
        tokio::time::sleep(TAIL_PAUSE).await;
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.end(SseEnd::Detached);
        if self
            .shared
            .config
            .http
            .faults
            .has(Fault::CancelOnDisconnect)
            && self.session.revision.polling().is_some()
            && !self.stream.live().finished
        {
            self.session.cancel_all_requests();
        }
        self.stream.detach(self.generation);
        self.session.reap(&self.stream);
        self.session.forget_remote(&self.stream);
    }
}
