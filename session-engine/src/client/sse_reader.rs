//! One SSE connection: the HTTP body of a POST or GET answer turned, through
//! the edge's [`SseBody`] (the core WHATWG decoder over a reqwest response),
//! into frames (events with the id their own
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

use mcp_http_edge::client::{SseBody, SseNext};
use mcp_transport_core::sse::SseItem;
use mcp_transport_core::transport::TransportError;

/// How a connection ended: the server ended the body (`Eof`) or the
/// connection broke (`Broken`, with the reqwest error chain).
pub(crate) use mcp_http_edge::client::SseEnd as End;

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
    body: SseBody,
    /// The last event ID string of this connection so far.
    last_id: String,
}

impl SseConnection {
    /// Reads `response`'s body as an event stream, holding at most
    /// `max_event_bytes` for one event.
    pub(crate) fn new(response: reqwest::Response, max_event_bytes: usize) -> Self {
        SseConnection {
            body: SseBody::new(response, max_event_bytes),
            last_id: String::new(),
        }
    }

    /// The next frame, or how the connection ended (again on every later
    /// call). An event over the size limit is a `Limit` error.
    pub(crate) async fn next(&mut self) -> Result<Read, TransportError> {
        match self.body.next().await {
            Ok(SseNext::Item(item)) => Ok(Read::Frame(self.frame(item))),
            Ok(SseNext::End(end)) => Ok(Read::End(end)),
            Err(overflow) => Err(overflow.limit_exceeded(
                "ClientConfig::max_event_bytes",
                "an SSE event of the answer",
            )),
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
