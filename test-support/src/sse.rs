//! Reading SSE answers in raw-HTTP tests, with the workspace's own decoder
//! ([`mcp_transport_core::sse::Decoder`]) underneath.
//!
//! [`SseReader`] reads a `reqwest` response incrementally (every read
//! bounded by [`WAIT`]) and keeps the raw text for assertions on the
//! framing; [`read_all`], [`read_sse`] and the record helpers cover the
//! tests that read a body to its end.

use std::collections::VecDeque;
use std::pin::Pin;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use mcp_transport_core::sse::{Decoder, SseItem};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::wait::WAIT;

/// One thing read from an SSE body.
#[derive(Clone, Debug, PartialEq)]
pub enum Rec {
    /// An event: the id in force and the data.
    Event {
        /// The last event id in force at dispatch.
        id: String,
        /// The data.
        data: String,
    },
    /// A `retry` field.
    Retry(u64),
}

impl Rec {
    /// The event's data as JSON (panics for priming events and retries).
    pub fn json(&self) -> Value {
        match self {
            Rec::Event { data, .. } => serde_json::from_str(data).unwrap(),
            Rec::Retry(_) => panic!("not an event: {self:?}"),
        }
    }

    /// Whether this is a priming event (empty data).
    pub fn is_priming(&self) -> bool {
        matches!(self, Rec::Event { data, .. } if data.is_empty())
    }

    /// The event id (panics for retries).
    pub fn id(&self) -> &str {
        match self {
            Rec::Event { id, .. } => id,
            Rec::Retry(_) => panic!("not an event"),
        }
    }
}

/// One decoded SSE event.
#[derive(Clone, Debug)]
pub struct Ev {
    /// The last event id in force.
    pub id: String,
    /// The data.
    pub data: String,
}

type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// Reads an SSE response incrementally.
pub struct SseReader {
    stream: ByteStream,
    decoder: Decoder,
    queue: VecDeque<Rec>,
    no_ids: bool,
    /// Everything read so far, as text.
    pub raw: String,
    /// The body has ended.
    pub ended: bool,
}

impl SseReader {
    /// Wraps a 200 `text/event-stream` response (asserted).
    pub fn new(resp: reqwest::Response) -> Self {
        assert_eq!(resp.status(), 200, "expected an SSE stream");
        let ct = resp.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(ct.starts_with("text/event-stream"), "content-type {ct}");
        SseReader {
            stream: Box::pin(resp.bytes_stream()),
            decoder: Decoder::new(),
            queue: VecDeque::new(),
            no_ids: false,
            raw: String::new(),
            ended: false,
        }
    }

    /// [`new`](Self::new) for a revision whose events carry no id
    /// (2026-07-28): [`next_json`](Self::next_json) asserts it.
    pub fn without_ids(resp: reqwest::Response) -> Self {
        SseReader {
            no_ids: true,
            ..Self::new(resp)
        }
    }

    /// Reads one more chunk (bounded by [`WAIT`]) into the queue; returns
    /// `false` at the end of the body.
    async fn fill(&mut self) -> bool {
        let chunk = tokio::time::timeout(WAIT, self.stream.next())
            .await
            .expect("timed out waiting for the SSE body");
        let mut items = Vec::new();
        let more = match chunk {
            Some(Ok(bytes)) => {
                self.raw.push_str(&String::from_utf8_lossy(&bytes));
                self.decoder.feed(&bytes, &mut items).unwrap();
                true
            }
            Some(Err(_)) | None => {
                self.decoder.finish(&mut items).unwrap();
                self.ended = true;
                false
            }
        };
        for item in items {
            match item {
                SseItem::Event(e) => self.queue.push_back(Rec::Event {
                    id: e.last_event_id,
                    data: e.data,
                }),
                SseItem::Retry(ms) => self.queue.push_back(Rec::Retry(ms)),
                SseItem::LastEventId(_) => {}
            }
        }
        more
    }

    /// The next record, or `None` at the end of the body.
    pub async fn next(&mut self) -> Option<Rec> {
        loop {
            if let Some(r) = self.queue.pop_front() {
                return Some(r);
            }
            if self.ended {
                return None;
            }
            self.fill().await;
        }
    }

    /// The next event (priming events included, retries skipped), or
    /// `None` at the end of the body.
    pub async fn next_event(&mut self) -> Option<Ev> {
        loop {
            match self.next().await? {
                Rec::Event { id, data } => return Some(Ev { id, data }),
                Rec::Retry(_) => {}
            }
        }
    }

    /// The next message event (skipping priming events and retries).
    pub async fn next_message(&mut self) -> Option<Rec> {
        while let Some(r) = self.next().await {
            if matches!(&r, Rec::Event { data, .. } if !data.is_empty()) {
                return Some(r);
            }
        }
        None
    }

    /// The next event's data as JSON (asserting it has no id when made
    /// with [`without_ids`](Self::without_ids)).
    pub async fn next_json(&mut self) -> Option<Value> {
        let e = self.next_event().await?;
        if self.no_ids {
            assert_eq!(e.id, "", "events carry no id on 2026-07-28");
        }
        Some(serde_json::from_str(&e.data).unwrap_or_else(|_| panic!("not JSON: {:?}", e.data)))
    }

    /// Everything until the end of the body.
    pub async fn rest(&mut self) -> Vec<Rec> {
        let mut out = Vec::new();
        while let Some(r) = self.next().await {
            out.push(r);
        }
        out
    }

    /// Waits until the raw text contains `needle` (or fails after
    /// [`WAIT`]); what it reads stays queued.
    pub async fn wait_raw(&mut self, needle: &str) {
        let start = Instant::now();
        while !self.raw.contains(needle) {
            assert!(
                start.elapsed() < WAIT,
                "never saw {needle:?} in {:?}",
                self.raw
            );
            assert!(
                !self.ended && self.fill().await,
                "the stream ended before {needle:?} appeared"
            );
        }
    }
}

/// Reads a whole SSE response: its records and its raw text.
pub async fn read_all(resp: reqwest::Response) -> (Vec<Rec>, String) {
    let mut r = SseReader::new(resp);
    let recs = r.rest().await;
    (recs, r.raw)
}

/// The message events of `recs`, as JSON.
pub fn messages(recs: &[Rec]) -> Vec<Value> {
    recs.iter()
        .filter(|r| matches!(r, Rec::Event { data, .. } if !data.is_empty()))
        .map(Rec::json)
        .collect()
}

/// Whether `recs` contains a `retry`.
pub fn has_retry(recs: &[Rec]) -> bool {
    recs.iter().any(|r| matches!(r, Rec::Retry(_)))
}

/// The last event id in `recs`.
pub fn last_id(recs: &[Rec]) -> String {
    recs.iter()
        .rev()
        .find_map(|r| match r {
            Rec::Event { id, .. } => Some(id.clone()),
            Rec::Retry(_) => None,
        })
        .expect("no event with an id")
}

/// Whether a message is the response to request `id`.
pub fn is_response(m: &Value, id: i64) -> bool {
    m["id"] == json!(id) && (m.get("result").is_some() || m.get("error").is_some())
}

/// Everything an SSE body says, as the decoder's items, read to its end
/// (bounded by [`WAIT`]; the content type is asserted).
pub async fn read_sse(mut resp: reqwest::Response) -> Vec<SseItem> {
    assert_eq!(
        content_type(&resp),
        "text/event-stream",
        "status {}",
        resp.status()
    );
    let mut decoder = Decoder::new();
    let mut items = Vec::new();
    let work = async {
        while let Some(chunk) = resp.chunk().await.expect("the body reads") {
            decoder.feed(&chunk, &mut items).unwrap();
        }
        decoder.finish(&mut items).unwrap();
    };
    tokio::time::timeout(WAIT, work)
        .await
        .expect("the SSE body ended in time");
    items
}

/// The JSON-RPC messages of decoder items (each event's data parsed;
/// events with empty data skipped).
pub fn sse_messages(items: &[SseItem]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|i| match i {
            SseItem::Event(e) if !e.data.is_empty() => {
                Some(serde_json::from_str(&e.data).expect("event data is JSON"))
            }
            _ => None,
        })
        .collect()
}

/// The media type of an answer (without parameters).
pub fn content_type(resp: &reqwest::Response) -> String {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_owned()
}

/// The message events (lines `data:` with something after them) in the
/// next `limit` frames of a body (fewer when it ends first), for tests
/// that drive a router in memory and read its body frame by frame.
pub async fn message_events<S>(body: &mut S, limit: usize) -> u64
where
    S: Stream<Item = Bytes> + Unpin,
{
    let mut text = String::new();
    for _ in 0..limit {
        let Some(frame) = body.next().await else {
            break;
        };
        text.push_str(std::str::from_utf8(&frame).expect("SSE is UTF-8"));
    }
    text.lines()
        .filter(|l| {
            l.strip_prefix("data:")
                .is_some_and(|d| !d.trim().is_empty())
        })
        .count() as u64
}
