//! One SSE response stream read through the edge's [`SseBody`] (the core
//! WHATWG decoder over a reqwest response), bounded per event.
//!
//! Only the data of dispatched `message` events matters: comments
//! (keep-alives, *Streamable HTTP* "Receiving Messages", Note) never reach
//! this level, and `id` / `retry` fields are ignored because "Resumable SSE
//! streams via `Last-Event-ID` are not supported" in this revision. Events
//! with empty data (a legacy priming event) and events of other types are
//! skipped.

use mcp_http_edge::client::{SseBody, SseEnd, SseNext};
use mcp_transport_core::sse::SseItem;
use mcp_transport_core::transport::TransportError;

/// What one read gave.
#[derive(Debug)]
pub(crate) enum SseRead {
    /// The data of one `message` event.
    Data(String),
    /// The server ended the stream.
    End,
    /// The connection broke.
    Broken(String),
}

/// One SSE response being read.
pub(crate) struct SseReader {
    body: SseBody,
}

impl SseReader {
    /// Reads `response`'s body as an event stream, holding at most
    /// `max_event_bytes` for one event.
    pub(crate) fn new(response: reqwest::Response, max_event_bytes: usize) -> Self {
        SseReader {
            body: SseBody::new(response, max_event_bytes),
        }
    }

    /// The next event's data, or how the stream ended. An event over the
    /// size limit is a `Limit` error.
    pub(crate) async fn next(&mut self) -> Result<SseRead, TransportError> {
        loop {
            let next = self.body.next().await.map_err(|overflow| {
                overflow.limit_exceeded(
                    "ModernClientConfig::max_event_bytes",
                    "an SSE event of the answer",
                )
            })?;
            match next {
                SseNext::Item(SseItem::Event(event)) if event.event_type == "message" => {
                    if !event.data.is_empty() {
                        return Ok(SseRead::Data(event.data));
                    }
                }
                SseNext::Item(SseItem::Event(event)) => {
                    tracing::debug!(event_type = %event.event_type, "ignoring a non-message SSE event");
                }
                SseNext::Item(SseItem::LastEventId(_) | SseItem::Retry(_)) => {}
                SseNext::End(SseEnd::Eof) => return Ok(SseRead::End),
                SseNext::End(SseEnd::Broken(why)) => return Ok(SseRead::Broken(why)),
            }
        }
    }
}
