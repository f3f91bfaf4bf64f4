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

#[cfg(test)]
mod tests {
    use mcp_transport_core::sse::Event;

    use super::super::test_bodies::{answer, chunked};
    use super::*;

    fn event(data: &str, id: &str) -> SseItem {
        SseItem::Event(Event {
            event_type: "message".into(),
            data: data.into(),
            last_event_id: id.into(),
        })
    }

    async fn item(body: &mut SseBody) -> SseItem {
        match body.next().await.unwrap() {
            SseNext::Item(item) => item,
            SseNext::End(end) => panic!("ended: {end}"),
        }
    }

    async fn end(body: &mut SseBody) -> SseEnd {
        match body.next().await.unwrap() {
            SseNext::End(end) => end,
            SseNext::Item(item) => panic!("an item: {item:?}"),
        }
    }

    /// Items come out in order across chunk boundaries; those decoded from
    /// one chunk wait in the queue (`queued` takes them without reading);
    /// the end is told on every later call.
    #[tokio::test]
    async fn items_in_order_then_the_end_again_and_again() {
        let chunks = &[
            "retry: 5\nid: 1\ndata: a\n\nid: 2\nda",
            "ta: b\n\n",
            "data: c\n\n",
        ];
        let mut body = SseBody::new(answer(None, chunked(chunks, false)), 1024);
        assert_eq!(body.queued(), None, "nothing is read before next");
        assert_eq!(item(&mut body).await, SseItem::Retry(5));
        assert_eq!(body.queued(), Some(event("a", "1")));
        assert_eq!(body.queued(), None);
        assert_eq!(item(&mut body).await, event("b", "2"));
        assert_eq!(item(&mut body).await, event("c", "2"));
        assert_eq!(end(&mut body).await, SseEnd::Eof);
        assert_eq!(end(&mut body).await, SseEnd::Eof);
        let shown = format!("{body:?}");
        assert!(
            shown.starts_with("SseBody {") && shown.contains("ended: Some(Eof)"),
            "{shown}"
        );
    }

    /// A broken connection ends the body with reqwest's error chain, after
    /// what arrived before it; an event cut off by it is not dispatched.
    #[tokio::test]
    async fn a_broken_body_ends_with_its_error_chain() {
        let chunks = &["data: a\n\n", "data: cut"];
        let mut body = SseBody::new(answer(None, chunked(chunks, true)), 1024);
        assert_eq!(item(&mut body).await, event("a", ""));
        let SseEnd::Broken(why) = end(&mut body).await else {
            panic!("not broken")
        };
        assert!(why.contains("connection reset"), "{why}");
        let again = end(&mut body).await;
        assert_eq!(again, SseEnd::Broken(why.clone()));
        assert_eq!(again.to_string(), format!("the connection broke ({why})"));
        assert_eq!(SseEnd::Eof.to_string(), "the server ended the stream");
    }

    /// An event past the limit: the items of its chunk decoded before it
    /// come back with the error, which names the limit as a
    /// `TransportError::Limit` of the caller's setting.
    #[tokio::test]
    async fn an_oversized_event_is_a_limit_naming_the_setting() {
        let chunks = &["data: a\n\ndata: far too long for the limit\n\n"];
        let mut body = SseBody::new(answer(None, chunked(chunks, false)), 16);
        let Err(overflow) = body.next().await else {
            panic!("no overflow")
        };
        assert_eq!(overflow.error, SseError::EventTooLarge { limit: 16 });
        assert_eq!(overflow.decoded, [event("a", "")]);
        match overflow.limit_exceeded("max_event_bytes", "an event of the answer") {
            TransportError::Limit(l) => {
                assert_eq!((l.setting, l.limit), ("max_event_bytes", 16));
                assert_eq!(l.what, "an event of the answer");
            }
            other => panic!("{other:?}"),
        }
    }
}
