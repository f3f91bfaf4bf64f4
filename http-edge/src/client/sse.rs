//! [`SseBody`]: the body of a reqwest response read as an event stream
//! through the core WHATWG [`Decoder`], bounded per event.
//!
//! What the items mean is the caller's: the session engine tracks event ids
//! and `retry` for resumption, the 2026-07-28 client keeps only `message`
//! data, the HTTP+SSE client routes messages from one long stream. This is
//! the part they share: body chunks in, decoded items out, and how the body
//! ended.

use std::collections::VecDeque;
use std::fmt;

use mcp_transport_core::sse::{Decoder, SseError, SseItem};
use mcp_transport_core::transport::{LimitExceeded, TransportError};

use super::send::error_chain;

/// How a body ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseEnd {
    /// The server ended the body.
    Eof,
    /// The connection broke (network error, aborted body): the reqwest
    /// error chain.
    Broken(String),
}

impl fmt::Display for SseEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseEnd::Eof => f.write_str("the server ended the stream"),
            SseEnd::Broken(why) => write!(f, "the connection broke ({why})"),
        }
    }
}

/// What one read gave.
#[derive(Debug)]
pub enum SseNext {
    /// A decoded item (an event, an id-only block, a `retry`).
    Item(SseItem),
    /// The body ended (again on every later call).
    End(SseEnd),
}

/// An event larger than the decoder's limit: the decoder is poisoned and
/// the stream unusable.
#[derive(Debug)]
pub struct SseOverflow {
    /// The decoder's error.
    pub error: SseError,
    /// Items decoded from the same chunk before the oversized event (most
    /// callers drop them with the stream).
    pub decoded: Vec<SseItem>,
}

impl SseOverflow {
    /// The [`TransportError::Limit`] for this overflow: `what` (an event of
    /// which stream) exceeded `setting`, the decoder's event size limit.
    pub fn limit_exceeded(&self, setting: &'static str, what: impl Into<String>) -> TransportError {
        // The decoder's only error today; a future one keeps its text.
        let limit = match &self.error {
            SseError::EventTooLarge { limit } => *limit as u64,
            _ => 0,
        };
        TransportError::Limit(LimitExceeded::new(setting, limit, what))
    }
}

/// A response body being read as SSE.
pub struct SseBody {
    response: reqwest::Response,
    decoder: Decoder,
    items: VecDeque<SseItem>,
    ended: Option<SseEnd>,
}

impl fmt::Debug for SseBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SseBody")
            .field("url", &self.response.url().as_str())
            .field("queued", &self.items.len())
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl SseBody {
    /// Reads `response`'s body with a fresh decoder holding at most
    /// `max_event_bytes` for one event.
    pub fn new(response: reqwest::Response, max_event_bytes: usize) -> Self {
        SseBody {
            response,
            decoder: Decoder::with_max_event_size(max_event_bytes),
            items: VecDeque::new(),
            ended: None,
        }
    }

    /// The next item already decoded, without reading the body.
    pub fn queued(&mut self) -> Option<SseItem> {
        self.items.pop_front()
    }

    /// The next item, reading the body when none is decoded yet, or how the
    /// body ended. Cancel-safe between chunks: dropping the future while it
    /// waits for a chunk loses nothing already decoded.
    pub async fn next(&mut self) -> Result<SseNext, SseOverflow> {
        loop {
            if let Some(item) = self.items.pop_front() {
                return Ok(SseNext::Item(item));
            }
            if let Some(end) = &self.ended {
                return Ok(SseNext::End(end.clone()));
            }
            let mut out = Vec::new();
            let fed = match self.response.chunk().await {
                Ok(Some(bytes)) => self.decoder.feed(&bytes, &mut out),
                Ok(None) => {
                    let finished = self.decoder.finish(&mut out);
                    if finished.is_ok() {
                        self.ended = Some(SseEnd::Eof);
                    }
                    finished
                }
                Err(e) => {
                    self.ended = Some(SseEnd::Broken(error_chain(&e)));
                    Ok(())
                }
            };
            if let Err(error) = fed {
                return Err(SseOverflow {
                    error,
                    decoded: out,
                });
            }
            self.items.extend(out);
        }
    }
}
