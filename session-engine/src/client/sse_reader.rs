//! One SSE connection: the HTTP body of a POST or GET answer turned, through
//! the core WHATWG [`Decoder`], into frames (events with the id their own
//! block set, id-only blocks, `retry` values) and, at the end, how the
//! connection ended.
//!
//! Every valid framing is accepted because the decoder is exact: CRLF (the
//! Python SDK), CR, LF, `data`/`id`/`retry` in any order within an event,
//! `data: ` values with a trailing space (the Rust SDK), comments and
//! keep-alives.
//!
//! # Which events carry an id of their own
//!
//! A decoded [`Event`](mcp_transport_core::sse::Event) carries the *last
//! event ID string in force*, which an event without an `id` line inherits
//! from the one before. To tell the two apart, each connection gets a fresh
//! decoder (so the string starts empty on every connection) and an event is
//! taken to carry its own id when the string changed at that event. A
//! resumed connection is therefore read without an inherited id, which is
//! what lets a server's replay of the `Last-Event-ID` event itself be seen
//! (and dropped) as a duplicate.

use std::collections::VecDeque;

use mcp_transport_core::sse::{Decoder, SseItem};
use mcp_transport_core::transport::TransportError;

use super::wire::error_chain;

/// Something the stream said.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A dispatched event. `id` is `Some` when the event's block set a new
    /// event id (`Some("")` resets it: WHATWG "last event ID string").
    Event {
        /// The id this event set, if it set one.
        id: Option<String>,
        /// The event type (`message` when none was given).
        event_type: String,
        /// The data.
        data: String,
    },
    /// A block without data set the event id (WHATWG "dispatch the event"
    /// step 1 applies even when no event fires).
    Id(String),
    /// A valid `retry` field: the reconnection time, in milliseconds.
    Retry(u64),
}

/// How a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The server ended the body.
    Eof,
    /// The connection broke (network error, aborted body).
    Broken(String),
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            End::Eof => f.write_str("the server ended the stream"),
            End::Broken(why) => write!(f, "the connection broke ({why})"),
        }
    }
}

/// What one read gave.
#[derive(Debug)]
pub(crate) enum Read {
    /// A frame.
    Frame(Frame),
    /// The connection ended.
    End(End),
}

/// One SSE connection being read.
pub(crate) struct SseConnection {
    response: reqwest::Response,
    decoder: Decoder,
    items: VecDeque<SseItem>,
    /// The last event ID string of this connection so far.
    last_id: String,
    ended: Option<End>,
}

impl SseConnection {
    /// Reads `response`'s body as an event stream, holding at most
    /// `max_event_bytes` for one event.
    pub(crate) fn new(response: reqwest::Response, max_event_bytes: usize) -> Self {
        SseConnection {
            response,
            decoder: Decoder::with_max_event_size(max_event_bytes),
            items: VecDeque::new(),
            last_id: String::new(),
            ended: None,
        }
    }

    /// The next frame, or how the connection ended (again on every later
    /// call). An event over the size limit is a `Limit` error.
    pub(crate) async fn next(&mut self) -> Result<Read, TransportError> {
        loop {
            if let Some(item) = self.items.pop_front() {
                return Ok(Read::Frame(self.frame(item)));
            }
            if let Some(end) = &self.ended {
                return Ok(Read::End(end.clone()));
            }
            let mut out = Vec::new();
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.decoder.feed(&bytes, &mut out).map_err(limit)?,
                Ok(None) => {
                    self.decoder.finish(&mut out).map_err(limit)?;
                    self.ended = Some(End::Eof);
                }
                Err(e) => self.ended = Some(End::Broken(error_chain(&e))),
            }
            self.items.extend(out);
        }
    }

    fn frame(&mut self, item: SseItem) -> Frame {
        match item {
            SseItem::Event(event) => {
                let id = if event.last_event_id != self.last_id {
                    self.last_id.clone_from(&event.last_event_id);
                    Some(event.last_event_id)
                } else {
                    None
                };
                Frame::Event {
                    id,
                    event_type: event.event_type,
                    data: event.data,
                }
            }
            SseItem::LastEventId(id) => {
                self.last_id.clone_from(&id);
                Frame::Id(id)
            }
            SseItem::Retry(ms) => Frame::Retry(ms),
        }
    }
}

fn limit(e: mcp_transport_core::sse::SseError) -> TransportError {
    TransportError::Limit(format!("{e} (ClientConfig::max_event_bytes)"))
}
