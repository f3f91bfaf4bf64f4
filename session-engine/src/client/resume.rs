//! The polling and resumption loop: one logical SSE stream read across as
//! many connections as it takes.
//!
//! *Transports* (2025-11-25), "Sending Messages to the Server" 6: after the
//! server "has sent an SSE event with an event ID", it "MAY close the
//! connection ... at any time", and "The client MUST respect the `retry`
//! field, waiting the given number of milliseconds before attempting to
//! reconnect" (SEP-1699). "Resumability and Redelivery" 2: the client
//! resumes with "an HTTP GET to the MCP endpoint" carrying `Last-Event-ID`,
//! "regardless of how the original stream was initiated (via POST or GET)".
//!
//! The loop behaves the same on every legacy revision (a 2025-06-18 server
//! that sends ids but no priming event and no `retry` is resumed after
//! [`ClientConfig::reconnect_backoff`](super::ClientConfig::reconnect_backoff)):
//!
//! - When a connection ends (EOF or a network error) the client waits
//!   exactly the last `retry` the server sent, else the backoff, then GETs
//!   with `Last-Event-ID: <last id>`.
//! - A request's stream that ends before any event id arrived cannot be
//!   resumed (a GET without `Last-Event-ID` would open the standalone
//!   stream instead): it fails at once with `ResumeFailure::NoEventId`. The standalone
//!   stream reconnects without `Last-Event-ID` then.
//! - Events carrying an id already delivered are dropped, so each message
//!   reaches the caller once even from a server that replays the
//!   `Last-Event-ID` event itself.
//! - A reconnection "makes progress" when a new event id, a message or a
//!   `retry` field arrives (a server that sends `retry` before closing is
//!   polling, SEP-1699, and may have nothing new for many polls: a long
//!   request, an idle standalone stream; a request's polls stay bounded
//!   by its deadline). At most `max_resume_attempts` reconnections in a
//!   row, during at most `max_resume_time`, may make none; then the stream
//!   fails with `ResumeFailure::AttemptsExhausted` or `TimeExhausted`,
//!   naming the attempts and the time spent.
//! - An HTTP error on the resumption GET ends the stream with that status
//!   and the JSON-RPC error message of the body (404 with a session id:
//!   `SessionExpired`).

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use mcp_transport_core::jsonrpc::{Message, RequestId};
use mcp_transport_core::transport::{Misbehaviour, ResumeFailure, TransportError};
use tokio::time::Instant;
use tracing::Instrument;

use super::config::ClientConfig;
use super::shared::Shared;
use super::sse_reader::{End, Frame, Read, SseConnection};
use super::state::Session;
use super::wire::{self, MediaType};

/// How many delivered event ids are remembered for de-duplication.
const SEEN_IDS: usize = 4096;

/// Which logical stream is being read.
#[derive(Clone, Debug)]
pub(crate) enum Mode {
    /// The SSE answer to the POST of this request.
    Request(RequestId),
    /// The standalone GET stream.
    Listen,
    /// The SSE answer to the POST of a JSON-RPC batch (2025-03-26) holding
    /// these requests.
    Batch(Vec<RequestId>),
}

/// A logical SSE stream, resumed across connections.
pub(crate) struct EventSource {
    shared: Arc<Shared>,
    session: Arc<Session>,
    mode: Mode,
    conn: Option<SseConnection>,
    last_end: End,
    last_event_id: Option<String>,
    retry: Option<Duration>,
    seen: SeenIds,
    resumer: Resumer,
    pending: VecDeque<Message>,
}

impl EventSource {
    /// Starts reading from the first connection's answer.
    pub(crate) fn new(
        shared: Arc<Shared>,
        session: Arc<Session>,
        mode: Mode,
        response: reqwest::Response,
    ) -> Self {
        let conn = SseConnection::new(response, shared.config.max_event_bytes);
        let resumer = Resumer::new(&shared.config);
        EventSource {
            shared,
            session,
            mode,
            conn: Some(conn),
            last_end: End::Eof,
            last_event_id: None,
            retry: None,
            seen: SeenIds::default(),
            resumer,
            pending: VecDeque::new(),
        }
    }

    /// The next message, each exactly once; `Ok(None)` when the server no
    /// longer offers the standalone stream (405 on reconnection).
    pub(crate) async fn next(&mut self) -> Result<Option<Message>, TransportError> {
        loop {
            if let Some(message) = self.pending.pop_front() {
                return Ok(Some(message));
            }
            let Some(conn) = self.conn.as_mut() else {
                if !self.reconnect().await? {
                    return Ok(None);
                }
                continue;
            };
            match conn.next().await? {
                Read::Frame(Frame::Retry(ms)) => {
                    self.retry = Some(Duration::from_millis(ms));
                    // The server is polling (SEP-1699: `retry` before it
                    // closes): an idle poll is an answer, not a failure.
                    self.resumer.progress();
                }
                Read::Frame(Frame::Id(id)) => self.set_id(id),
                Read::Frame(Frame::Event {
                    id,
                    event_type,
                    data,
                }) => {
                    let own_id = id.clone().filter(|i| !i.is_empty());
                    if let Some(id) = id {
                        self.set_id(id);
                    }
                    self.on_event(own_id, &event_type, &data)?;
                }
                Read::End(end) => {
                    tracing::debug!(stream = %self.what(), %end, last_event_id = ?self.last_event_id, "SSE connection ended");
                    self.conn = None;
                    self.last_end = end;
                }
            }
        }
    }

    /// An event: priming events (empty data) only set the id; duplicates
    /// are dropped; the rest is JSON-RPC.
    fn on_event(
        &mut self,
        own_id: Option<String>,
        event_type: &str,
        data: &str,
    ) -> Result<(), TransportError> {
        if event_type != "message" {
            tracing::debug!(
                event_type,
                "ignoring an SSE event that is not of type message"
            );
            return Ok(());
        }
        // SEP-1699: a client records the priming event's id "but otherwise
        // ignore[s] the event".
        if data.trim_matches([' ', '\t', '\r', '\n']).is_empty() {
            return Ok(());
        }
        if let Some(id) = &own_id
            && !self.seen.insert(id)
        {
            tracing::debug!(id, "dropping a replayed SSE event already delivered");
            return Ok(());
        }
        let what = format!("an SSE event on {}", self.what());
        let messages = wire::parse_messages(data.as_bytes(), &self.session.features, &what)?;
        self.resumer.progress();
        self.pending.extend(messages);
        Ok(())
    }

    /// Records the last event ID string (`""` resets it: no `Last-Event-ID`).
    fn set_id(&mut self, id: String) {
        let id = (!id.is_empty()).then_some(id);
        if id.is_some() && id != self.last_event_id {
            self.resumer.progress();
        }
        self.last_event_id = id;
    }

    /// Waits, then opens the next connection. `Ok(false)`: the standalone
    /// stream is no longer offered.
    async fn reconnect(&mut self) -> Result<bool, TransportError> {
        let what = self.what();
        if matches!(self.mode, Mode::Request(_) | Mode::Batch(_)) && self.last_event_id.is_none() {
            return Err(TransportError::ResumeFailed(ResumeFailure::NoEventId {
                what,
                end: self.last_end.to_string(),
            }));
        }
        let retry = if self
            .shared
            .config
            .http
            .faults
            .has(mcp_http_edge::faults::Fault::ClientIgnoresRetry)
        {
            Some(Duration::ZERO)
        } else {
            self.retry
        };
        let wait = self
            .resumer
            .next_wait(Instant::now(), retry, &what, &self.last_end)?;
        tokio::time::sleep(wait).await;
        // One `mcp.client.resume` span per reconnection (mcp_http_edge::trace).
        let span = tracing::info_span!(
            "mcp.client.resume",
            mcp.session_id = self.session.id.as_deref(),
            mcp.last_event_id = self.last_event_id.as_deref(),
            mcp.attempt = self.resumer.attempts(),
            http.status = tracing::field::Empty,
        );
        tracing::debug!(parent: &span, stream = %what, ?wait, "reconnecting by GET");
        let get = wire::get(&self.shared, &self.session, self.last_event_id.as_deref());
        let sent = wire::send(get, &format!("GET resuming {what}"))
            .instrument(span.clone())
            .await;
        if let Ok(response) = &sent {
            span.record("http.status", response.status().as_u16());
        }
        let response = match sent {
            Ok(response) => response,
            Err(TransportError::Connection(why)) => {
                self.last_end = End::Broken(why);
                return Ok(true);
            }
            Err(e) => return Err(e),
        };
        let status = response.status();
        if status == http::StatusCode::METHOD_NOT_ALLOWED && matches!(self.mode, Mode::Listen) {
            tracing::info!("the server stopped offering the standalone GET stream (405)");
            return Ok(false);
        }
        if !status.is_success() {
            return Err(wire::status_error(
                response,
                &self.session,
                &format!("GET resuming {what}"),
            )
            .await);
        }
        match wire::media_type(&response) {
            MediaType::EventStream => {
                self.conn = Some(SseConnection::new(
                    response,
                    self.shared.config.max_event_bytes,
                ));
                Ok(true)
            }
            other => Err(TransportError::PeerMisbehaved(
                Misbehaviour::WrongContentType {
                    what: format!("GET resuming {what}"),
                    got: match other {
                        MediaType::Json => Some("application/json".into()),
                        MediaType::EventStream => Some("text/event-stream".into()),
                        MediaType::Other(ct) => Some(ct).filter(|ct| !ct.is_empty()),
                    },
                    expected: "text/event-stream",
                },
            )),
        }
    }

    fn what(&self) -> String {
        match &self.mode {
            Mode::Request(id) => format!("the stream of request {id}"),
            Mode::Listen => "the standalone GET stream".to_owned(),
            Mode::Batch(ids) => {
                let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
                format!("the stream of the batch of requests {}", ids.join(", "))
            }
        }
    }
}

/// The bounds on reconnecting without progress.
#[derive(Debug)]
pub(crate) struct Resumer {
    backoff: Duration,
    max_attempts: u32,
    max_time: Duration,
    /// Reconnections since the last progress.
    attempts: u32,
    /// When the first connection without progress ended.
    since: Option<Instant>,
}

impl Resumer {
    pub(crate) fn new(config: &ClientConfig) -> Self {
        Resumer {
            backoff: config.reconnect_backoff,
            max_attempts: config.max_resume_attempts,
            max_time: config.max_resume_time,
            attempts: 0,
            since: None,
        }
    }

    /// Reconnections since the last progress (this one included, once
    /// `next_wait` allowed it).
    pub(crate) fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Something new arrived: the bounds start afresh.
    pub(crate) fn progress(&mut self) {
        self.attempts = 0;
        self.since = None;
    }

    /// The wait before the next reconnection, asked at `now` (the server's
    /// `retry`, else the backoff), or `ResumeFailed` when the bounds are
    /// spent. Pure: time is an argument, so the bounds are tested with
    /// explicit instants.
    pub(crate) fn next_wait(
        &mut self,
        now: Instant,
        retry: Option<Duration>,
        what: &str,
        end: &End,
    ) -> Result<Duration, TransportError> {
        let since = *self.since.get_or_insert(now);
        let elapsed = now.duration_since(since);
        let wait = retry.unwrap_or(self.backoff);
        if self.attempts >= self.max_attempts {
            return Err(TransportError::ResumeFailed(
                ResumeFailure::AttemptsExhausted {
                    what: what.to_owned(),
                    attempts: self.attempts,
                    elapsed,
                    max_attempts: self.max_attempts,
                    last: end.to_string(),
                },
            ));
        }
        if elapsed + wait > self.max_time {
            return Err(TransportError::ResumeFailed(ResumeFailure::TimeExhausted {
                what: what.to_owned(),
                attempts: self.attempts,
                elapsed,
                wait,
                max_time: self.max_time,
                last: end.to_string(),
            }));
        }
        self.attempts += 1;
        Ok(wait)
    }
}

/// The event ids already delivered (bounded; oldest forgotten first).
#[derive(Debug, Default)]
struct SeenIds {
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl SeenIds {
    /// `false` when `id` was delivered before.
    fn insert(&mut self, id: &str) -> bool {
        if self.set.contains(id) {
            return false;
        }
        if self.order.len() == SEEN_IDS
            && let Some(old) = self.order.pop_front()
        {
            self.set.remove(&old);
        }
        self.set.insert(id.to_owned());
        self.order.push_back(id.to_owned());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_ids_are_bounded_and_detect_repeats() {
        let mut seen = SeenIds::default();
        assert!(seen.insert("a"));
        assert!(!seen.insert("a"));
        for i in 0..SEEN_IDS {
            assert!(seen.insert(&i.to_string()));
        }
        assert_eq!(seen.order.len(), SEEN_IDS);
        // "a" was the oldest and has been forgotten.
        assert!(seen.insert("a"));
    }

    #[test]
    fn resumer_bounds_attempts_and_time() {
        let config = ClientConfig::default()
            .with_max_resume_attempts(2)
            .with_max_resume_time(Duration::from_secs(10));
        let mut r = Resumer::new(&config);
        let end = End::Eof;
        let t0 = Instant::now();
        let s = Duration::from_secs;
        // No retry: the backoff (1 s by default); a retry: exactly it.
        assert_eq!(r.next_wait(t0, None, "s", &end).unwrap(), s(1));
        assert_eq!(
            r.next_wait(t0 + s(1), Some(Duration::from_millis(250)), "s", &end)
                .unwrap(),
            Duration::from_millis(250)
        );
        let err = r.next_wait(t0 + s(2), None, "s", &end).unwrap_err();
        assert!(
            matches!(
                &err,
                TransportError::ResumeFailed(ResumeFailure::AttemptsExhausted {
                    attempts: 2,
                    max_attempts: 2,
                    elapsed,
                    ..
                }) if *elapsed == s(2)
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("2 reconnection attempts"), "{err}");
        // Progress starts the bounds afresh, the clock too.
        r.progress();
        let t1 = t0 + s(100);
        assert!(r.next_wait(t1, None, "s", &end).is_ok());
        // 9 s without progress: a 1 s wait still fits exactly in 10 s ...
        let mut fits = Resumer::new(&config);
        assert!(fits.next_wait(t1, None, "s", &end).is_ok());
        assert_eq!(
            fits.next_wait(t1 + s(9), Some(s(1)), "s", &end).unwrap(),
            s(1)
        );
        // ... a 2 s wait would pass max_resume_time.
        let err = r.next_wait(t1 + s(9), Some(s(2)), "s", &end).unwrap_err();
        assert!(
            matches!(
                &err,
                TransportError::ResumeFailed(ResumeFailure::TimeExhausted { wait, max_time, elapsed, .. })
                    if *wait == s(2) && *max_time == s(10) && *elapsed == s(9)
            ),
            "{err:?}"
        );
    }
}
