//! One SSE response stream read through the core WHATWG
//! [`Decoder`](mcp_transport_core::sse::Decoder), bounded per event.
//!
//! Only the data of dispatched `message` events matters: comments
//! (keep-alives, *Streamable HTTP* "Receiving Messages", Note) never reach
//! this level, and `id` / `retry` fields are ignored because "Resumable SSE
//! streams via `Last-Event-ID` are not supported" in this revision. Events
//! with empty data (a legacy priming event) and events of other types are
//! skipped.

use std::collections::VecDeque;

use mcp_transport_core::sse::{Decoder, SseError, SseItem};
use mcp_transport_core::transport::TransportError;

use super::wire::error_chain;

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
    response: reqwest::Response,
    decoder: Decoder,
    items: VecDeque<SseItem>,
    ended: Option<SseEnd>,
}

#[derive(Clone, Debug)]
enum SseEnd {
    Eof,
    Broken(String),
}

impl SseReader {
    /// Reads `response`'s body as an event stream, holding at most
    /// `max_event_bytes` for one event.
    pub(crate) fn new(response: reqwest::Response, max_event_bytes: usize) -> Self {
        SseReader {
            response,
            decoder: Decoder::with_max_event_size(max_event_bytes),
            items: VecDeque::new(),
            ended: None,
        }
    }

    /// The next event's data, or how the stream ended. An event over the
    /// size limit is a `Limit` error.
    pub(crate) async fn next(&mut self) -> Result<SseRead, TransportError> {
        loop {
            while let Some(item) = self.items.pop_front() {
                match item {
                    SseItem::Event(event) if event.event_type == "message" => {
                        if event.data.is_empty() {
                            continue;
                        }
                        return Ok(SseRead::Data(event.data));
                    }
                    SseItem::Event(event) => {
                        tracing::debug!(event_type = %event.event_type, "ignoring a non-message SSE event");
                    }
                    SseItem::LastEventId(_) | SseItem::Retry(_) => {}
                }
            }
            match &self.ended {
                Some(SseEnd::Eof) => return Ok(SseRead::End),
                Some(SseEnd::Broken(why)) => return Ok(SseRead::Broken(why.clone())),
                None => {}
            }
            let mut out = Vec::new();
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.decoder.feed(&bytes, &mut out).map_err(limit)?,
                Ok(None) => {
                    self.decoder.finish(&mut out).map_err(limit)?;
                    self.ended = Some(SseEnd::Eof);
                }
                Err(e) => self.ended = Some(SseEnd::Broken(error_chain(&e))),
            }
            self.items.extend(out);
        }
    }
}

fn limit(e: SseError) -> TransportError {
    TransportError::Limit(format!("{e} (ModernClientConfig::max_event_bytes)"))
}
