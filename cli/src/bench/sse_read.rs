//! A whole SSE response body read with transport-core's WHATWG-exact
//! [`Decoder`] (not by substring: `retry: 05` is 5 ms, and an id is never
//! trimmed), for the benchmark's checks of what a stream carried.

use bytes::Bytes;
use http_body_util::BodyExt;
use mcp_transport_core::sse::{Decoder, Event, SseItem};

/// What a whole SSE body carried, decoded by the WHATWG-exact
/// [`Decoder`].
#[derive(Debug, Default)]
pub struct Stream {
    /// The events dispatched (the priming event's empty data included).
    pub events: Vec<Event>,
    /// The last event ID string at the end (what a resume sends).
    pub last_event_id: String,
    /// The last `retry` (ms), when there was one.
    pub retry: Option<u64>,
}

/// Reads `body` to its end, frame by frame; calls `first_message` once,
/// when the first event with data (a message, not a priming event) has
/// been decoded.
pub async fn read_sse<B>(body: B, first_message: impl FnOnce()) -> Result<Stream, String>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    let mut body = std::pin::pin!(body);
    let mut decoder = Decoder::new();
    let mut items = Vec::new();
    let mut first_message = Some(first_message);
    let mut stream = Stream::default();
    // The body's end needs no `Decoder::finish`: an event not ended by a
    // blank line is discarded (WHATWG), and nothing else is pending.
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| format!("body: {e}"))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        decoder.feed(&data, &mut items).map_err(|e| e.to_string())?;
        for item in items.drain(..) {
            if let SseItem::Event(event) = item {
                if let Some(noted) = first_message.take_if(|_| !event.data.is_empty()) {
                    noted();
                }
                stream.events.push(event);
            }
        }
    }
    stream.last_event_id = decoder.last_event_id().to_owned();
    stream.retry = decoder.retry();
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use futures_util::stream;
    use http_body_util::StreamBody;
    use hyper::body::Frame;

    use super::*;

    /// A body that yields `chunks` one frame each.
    fn body(chunks: &[&'static str]) -> impl hyper::body::Body<Data = Bytes, Error = String> {
        let frames: Vec<Result<Frame<Bytes>, String>> = chunks
            .iter()
            .map(|c| Ok(Frame::data(Bytes::from_static(c.as_bytes()))))
            .collect();
        StreamBody::new(stream::iter(frames))
    }

    #[tokio::test]
    async fn a_closed_posts_stream_gives_its_id_and_retry() {
        let mut called = false;
        let s = read_sse(body(&["id: s.1.0\ndata:\n\n", "retry: 0\n\n"]), || {
            called = true
        })
        .await
        .unwrap();
        assert_eq!((s.last_event_id.as_str(), s.retry), ("s.1.0", Some(0)));
        assert_eq!(s.events.len(), 1, "the priming event");
        assert!(!called, "a priming event is no message");
        // `retry: 05` is 5 ms, not 0.
        let s = read_sse(body(&["id: a\ndata:\n\nretry: 05\n\n"]), || {})
            .await
            .unwrap();
        assert_eq!(s.retry, Some(5));
    }

    #[tokio::test]
    async fn the_first_message_is_noted_once_as_it_arrives() {
        let events = std::cell::Cell::new(0);
        let seen = std::cell::Cell::new(None);
        let frames = [
            "id: s.1.1\nda",
            "ta: {\"a\":1}\n",
            "\nid: s.1.2\ndata: resumed\n\n",
        ];
        // The body counts the frames it has yielded.
        let counted = StreamBody::new(stream::iter(frames.iter().map(|c| {
            events.set(events.get() + 1);
            Ok::<_, String>(Frame::data(Bytes::from_static(c.as_bytes())))
        })));
        let s = read_sse(counted, || seen.set(Some(events.get())))
            .await
            .unwrap();
        assert_eq!(seen.get(), Some(3), "noted when the first event ended");
        assert_eq!(s.events.len(), 2);
        assert_eq!(s.last_event_id, "s.1.2");
        assert!(s.events[1].data.contains("resumed"));
    }
}
