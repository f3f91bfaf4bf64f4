//! Table-driven tests of the WHATWG `text/event-stream` decoder.
//!
//! Every vector is decoded whole, byte by byte (with empty chunks in
//! between), split in two at every point and, for short inputs, split in
//! three at every pair of points; all results must be identical.

use mcp_transport_core::sse::{Decoder, Event, SseError, SseItem};
use proptest::prelude::*;

/// Everything observable after decoding a whole stream.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    items: Vec<SseItem>,
    error: Option<SseError>,
    last_event_id: String,
    retry: Option<u64>,
}

/// Feeds `chunks` to a fresh decoder, then finishes it.
fn decode_chunks<'a>(limit: Option<usize>, chunks: impl IntoIterator<Item = &'a [u8]>) -> Outcome {
    let mut decoder = match limit {
        Some(limit) => Decoder::with_max_event_size(limit),
        None => Decoder::new(),
    };
    let mut items = Vec::new();
    let mut error = None;
    for chunk in chunks {
        if let Err(e) = decoder.feed(chunk, &mut items) {
            error = Some(e);
            break;
        }
    }
    if error.is_none() {
        error = decoder.finish(&mut items).err();
    }
    Outcome {
        items,
        error,
        last_event_id: decoder.last_event_id().to_owned(),
        retry: decoder.retry(),
    }
}

/// Decodes `input` fed whole, byte by byte, split in two at every point and
/// (for inputs up to 48 bytes) in three at every pair of points; asserts
/// that all agree and returns the outcome.
fn decode_every_way(limit: Option<usize>, input: &[u8]) -> Outcome {
    let whole = decode_chunks(limit, [input]);
    let label = String::from_utf8_lossy(input).into_owned();

    let bytes = decode_chunks(limit, input.chunks(1).flat_map(|byte| [byte, &[][..]]));
    assert_eq!(bytes, whole, "byte-by-byte feed of {label:?}");

    for split in 0..=input.len() {
        let (a, b) = input.split_at(split);
        let two = decode_chunks(limit, [a, b]);
        assert_eq!(two, whole, "split at {split} of {label:?}");
    }

    if input.len() <= 48 {
        for first in 0..=input.len() {
            for second in first..=input.len() {
                let three = decode_chunks(
                    limit,
                    [&input[..first], &input[first..second], &input[second..]],
                );
                assert_eq!(three, whole, "splits at {first},{second} of {label:?}");
            }
        }
    }
    whole
}

fn ev(event_type: &str, data: &str, last_event_id: &str) -> SseItem {
    SseItem::Event(Event {
        event_type: event_type.to_owned(),
        data: data.to_owned(),
        last_event_id: last_event_id.to_owned(),
    })
}

fn msg(data: &str) -> SseItem {
    ev("message", data, "")
}

fn id(id: &str) -> SseItem {
    SseItem::LastEventId(id.to_owned())
}

fn retry(ms: u64) -> SseItem {
    SseItem::Retry(ms)
}

struct Vector {
    name: &'static str,
    input: &'static [u8],
    items: Vec<SseItem>,
    last_event_id: &'static str,
    retry: Option<u64>,
}

fn v(name: &'static str, input: &'static [u8], items: Vec<SseItem>) -> Vector {
    Vector {
        name,
        input,
        items,
        last_event_id: "",
        retry: None,
    }
}

impl Vector {
    fn id(mut self, last_event_id: &'static str) -> Self {
        self.last_event_id = last_event_id;
        self
    }
    fn retry(mut self, ms: u64) -> Self {
        self.retry = Some(ms);
        self
    }
}

fn vectors() -> Vec<Vector> {
    vec![
        // --- Framing: line ends LF, CR, CRLF. ---
        v("empty input", b"", vec![]),
        v("LF framing", b"data: hello\n\n", vec![msg("hello")]),
        v("CRLF framing", b"data: hello\r\n\r\n", vec![msg("hello")]),
        v("CR-only framing", b"data: hello\r\r", vec![msg("hello")]),
        v(
            "CR-only framing, two events",
            b"data: a\r\rdata: b\r\r",
            vec![msg("a"), msg("b")],
        ),
        v(
            "mixed line ends",
            b"data: a\r\ndata: b\rdata: c\n\r\n",
            vec![msg("a\nb\nc")],
        ),
        v(
            "LF then CR is two line ends",
            b"data: a\n\rdata: b\n\n",
            vec![msg("a"), msg("b")],
        ),
        v("trailing CR at EOF ends the blank line", b"data: x\n\r", vec![msg("x")]),
        v("trailing CR at EOF, CR framing", b"data: x\r\r", vec![msg("x")]),
        v(
            "CR then CRLF",
            b"data: x\r\r\ndata: y\r\n\r\n",
            vec![msg("x"), msg("y")],
        ),
        v("blank lines only", b"\n\n\r\n\r\r\n", vec![]),
        // --- BOM. ---
        v("BOM at start", b"\xEF\xBB\xBFdata: x\n\n", vec![msg("x")]),
        v("BOM at start then blank line", b"\xEF\xBB\xBF\ndata: x\n\n", vec![msg("x")]),
        v(
            "only one BOM is stripped (the second makes the field name unknown)",
            b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n",
            vec![msg("y")],
        ),
        v(
            "BOM mid-stream at line start is part of the field name",
            b"data: a\n\n\xEF\xBB\xBFdata: b\n\n",
            vec![msg("a")],
        ),
        v(
            "BOM mid-stream in a value is kept",
            b"data: \xEF\xBB\xBFx\n\n",
            vec![msg("\u{FEFF}x")],
        ),
        v(
            "BOM mid-stream after the first line",
            b"data: a\ndata: \xEF\xBB\xBF\n\n",
            vec![msg("a\n\u{FEFF}")],
        ),
        v(
            "almost a BOM at start is ordinary (invalid) input",
            b"\xEF\xBB\xBE\ndata: x\n\n",
            vec![msg("x")],
        ),
        v(
            "partial BOM at start then a comment",
            b"\xEF\xBB: x\ndata: y\n\n",
            vec![msg("y")],
        ),
        v(
            "a stream that is only part of a BOM",
            b"\xEF\xBB",
            vec![],
        ),
        // --- Comments. ---
        v("comment ignored", b":comment\ndata: x\n\n", vec![msg("x")]),
        v(
            "comment with space, between data lines",
            b"data: a\n: ping\ndata: b\n\n",
            vec![msg("a\nb")],
        ),
        v("comment-only block dispatches nothing", b": hi\n\n:\n\n", vec![]),
        v(
            "comment containing a colon and data:",
            b":data: x\n\n",
            vec![],
        ),
        // --- Fields without colon. ---
        v("data without colon", b"data\n\n", vec![msg("")]),
        v("two data without colon", b"data\ndata\n\n", vec![msg("\n")]),
        v(
            "field-without-colon unknown field",
            b"field-without-colon\ndata: x\n\n",
            vec![msg("x")],
        ),
        v(
            "event without colon resets type to message",
            b"event: a\nevent\ndata: x\n\n",
            vec![msg("x")],
        ),
        v(
            "WHATWG example: data / data data / unterminated data:",
            b"data\n\ndata\ndata\n\ndata:",
            vec![msg(""), msg("\n")],
        ),
        // --- Value: one leading space stripped. ---
        v("data: with empty value", b"data:\n\n", vec![msg("")]),
        v("data: with a single space", b"data: \n\n", vec![msg("")]),
        v("two spaces keep one", b"data:  x\n\n", vec![msg(" x")]),
        v("tab is not stripped", b"data:\tx\n\n", vec![msg("\tx")]),
        v("no space", b"data:x\n\n", vec![msg("x")]),
        v("trailing space kept", b"data: x \n\n", vec![msg("x ")]),
        v("trailing spaces only", b"data:   \n\n", vec![msg("  ")]),
        v("colon in value", b"data: a:b\n\n", vec![msg("a:b")]),
        v("value starting with colon", b"data::x\n\n", vec![msg(":x")]),
        v("NUL in data kept", b"data: a\0b\n\n", vec![msg("a\0b")]),
        v(
            "WHATWG example: data:test and data: test are identical",
            b"data:test\n\ndata: test\n\n",
            vec![msg("test"), msg("test")],
        ),
        // --- Unknown fields, case sensitivity. ---
        v("unknown field ignored", b"foo: bar\ndata: x\n\n", vec![msg("x")]),
        v("field names are case-sensitive", b"Data: x\n\nDATA: y\n\n", vec![]),
        v("field name with space", b"data : x\n\n", vec![]),
        v("unknown-only block", b"foo: bar\n\n", vec![]),
        // --- event. ---
        v(
            "event type",
            b"event: progress\ndata: x\n\n",
            vec![ev("progress", "x", "")],
        ),
        v(
            "last event line wins",
            b"event: a\nevent: b\ndata: x\n\n",
            vec![ev("b", "x", "")],
        ),
        v(
            "event after data still applies",
            b"data: x\nevent: late\n\n",
            vec![ev("late", "x", "")],
        ),
        v("empty event type means message", b"event:\ndata: x\n\n", vec![msg("x")]),
        v(
            "event type reset after dispatch",
            b"event: a\ndata: x\n\ndata: y\n\n",
            vec![ev("a", "x", ""), msg("y")],
        ),
        v(
            "event type reset by a block without data",
            b"event: a\n\ndata: y\n\n",
            vec![msg("y")],
        ),
        v(
            "event type with one space stripped",
            b"event:  spaced\ndata: x\n\n",
            vec![ev(" spaced", "x", "")],
        ),
        // --- data. ---
        v("multi-line data", b"data: a\ndata: b\ndata: c\n\n", vec![msg("a\nb\nc")]),
        v(
            "empty lines inside data",
            b"data: a\ndata:\ndata\ndata: b\n\n",
            vec![msg("a\n\n\nb")],
        ),
        v(
            "data reset after dispatch",
            b"data: a\n\ndata: b\n\n",
            vec![msg("a"), msg("b")],
        ),
        v(
            "extra blank lines dispatch nothing",
            b"data: a\n\n\n\ndata: b\n\n\n",
            vec![msg("a"), msg("b")],
        ),
        v(
            "WHATWG example: YHOO +2 10",
            b"data: YHOO\ndata: +2\ndata: 10\n\n",
            vec![msg("YHOO\n+2\n10")],
        ),
        // --- id. ---
        v("id only: LastEventId", b"id: 5\n\n", vec![id("5")]).id("5"),
        v("id carried by event", b"id: 1\ndata: a\n\n", vec![ev("message", "a", "1")]).id("1"),
        v(
            "id persists across events",
            b"id: 1\ndata: a\n\ndata: b\n\n",
            vec![ev("message", "a", "1"), ev("message", "b", "1")],
        )
        .id("1"),
        v(
            "id after data in the same block",
            b"data: a\nid: 9\n\n",
            vec![ev("message", "a", "9")],
        )
        .id("9"),
        v(
            "empty id resets",
            b"id: 1\ndata: a\n\nid\ndata: b\n\n",
            vec![ev("message", "a", "1"), msg("b")],
        ),
        v(
            "empty id with colon resets, id-only",
            b"id: 1\n\nid:\n\n",
            vec![id("1"), id("")],
        ),
        v("id with NUL ignored", b"id: a\0b\ndata: x\n\n", vec![msg("x")]),
        v(
            "id with NUL ignored keeps the previous id, no LastEventId",
            b"id: 1\n\nid: 2\0\n\ndata: x\n\n",
            vec![id("1"), ev("message", "x", "1")],
        )
        .id("1"),
        v(
            "last id line wins",
            b"id: 1\nid: 2\ndata: x\n\n",
            vec![ev("message", "x", "2")],
        )
        .id("2"),
        v("id keeps second space", b"id:  7\n\n", vec![id(" 7")]).id(" 7"),
        v(
            "unterminated id block is not dispatched",
            b"id: 1\n\nid: 2\n",
            vec![id("1")],
        )
        .id("1"),
        v(
            "id set in a block without data is carried to the next event",
            b"id: 3\n\ndata: x\n\n",
            vec![id("3"), ev("message", "x", "3")],
        )
        .id("3"),
        v(
            "the MCP priming event",
            b"id: abc\ndata:\n\n",
            vec![ev("message", "", "abc")],
        )
        .id("abc"),
        v(
            "WHATWG example: four blocks",
            b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
            vec![
                ev("message", "first event", "1"),
                msg("second event"),
                msg(" third event"),
            ],
        ),
        // --- retry. ---
        v("retry valid", b"retry: 5000\n\n", vec![retry(5000)]).retry(5000),
        v("retry zero", b"retry: 0\n\n", vec![retry(0)]).retry(0),
        v("retry no space", b"retry:250\n\n", vec![retry(250)]).retry(250),
        v("retry +100 ignored", b"retry: +100\n\n", vec![]),
        v("retry 1e3 ignored", b"retry: 1e3\n\n", vec![]),
        v("retry with two spaces ignored", b"retry:  100\n\n", vec![]),
        v("retry 100x ignored", b"retry: 100x\n\n", vec![]),
        v("retry -1 ignored", b"retry: -1\n\n", vec![]),
        v("retry empty ignored", b"retry:\n\n", vec![]),
        v("retry without colon ignored", b"retry\n\n", vec![]),
        v("retry trailing space ignored", b"retry: 100 \n\n", vec![]),
        v("retry 1.5 ignored", b"retry: 1.5\n\n", vec![]),
        v("retry non-ASCII digit ignored", b"retry: \xD9\xA1\n\n", vec![]),
        v(
            "retry u64::MAX",
            b"retry: 18446744073709551615\n\n",
            vec![retry(u64::MAX)],
        )
        .retry(u64::MAX),
        v("retry overflowing u64 ignored", b"retry: 18446744073709551616\n\n", vec![]),
        v(
            "retry leading zeros",
            b"retry: 000000000000000000000042\n\n",
            vec![retry(42)],
        )
        .retry(42),
        v(
            "retry emitted at once, before the event",
            b"data: x\nretry: 10\n\n",
            vec![retry(10), msg("x")],
        )
        .retry(10),
        v(
            "retry in an unterminated block still applies",
            b"retry: 10\ndata: x\n",
            vec![retry(10)],
        )
        .retry(10),
        v(
            "invalid retry keeps the previous value",
            b"retry: 10\n\nretry: x\n\n",
            vec![retry(10)],
        )
        .retry(10),
        v(
            "last valid retry wins",
            b"retry: 10\nretry: 20\n\n",
            vec![retry(10), retry(20)],
        )
        .retry(20),
        // --- End of stream. ---
        v(
            "unterminated last event discarded",
            b"data: a\n\ndata: b\n",
            vec![msg("a")],
        ),
        v("unterminated line discarded", b"data: a\n\ndata: b", vec![msg("a")]),
        v("single unterminated line", b"data: a", vec![]),
        v(
            "unterminated event type not applied",
            b"data: a\nevent: x",
            vec![],
        ),
        // --- Real servers. ---
        v(
            "Python SDK style (sse-starlette, CRLF, ping comments)",
            b": ping - 2025-01-01 00:00:00.000000+00:00\r\n\r\n\
              event: message\r\n\
              data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n\
              id: 7f1\r\nevent: message\r\n\
              data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\r\n\r\n",
            vec![
                msg("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"),
                ev(
                    "message",
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}",
                    "7f1",
                ),
            ],
        )
        .id("7f1"),
        v(
            "Rust SDK style (data, id, retry in that order)",
            b"data: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}} \nid: 0\nretry: 3000\n\n\
              data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 1\n\n",
            vec![
                retry(3000),
                ev("message", "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}} ", "0"),
                ev("message", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", "1"),
            ],
        )
        .id("1")
        .retry(3000),
        // --- UTF-8. ---
        v("invalid byte replaced", b"data: a\xFFb\n\n", vec![msg("a\u{FFFD}b")]),
        v(
            "truncated 3-byte sequence before the line end",
            b"data: \xE2\x82\n\n",
            vec![msg("\u{FFFD}")],
        ),
        v(
            "truncated sequence before the LF joining data lines",
            b"data: \xF0\x9F\ndata: x\n\n",
            vec![msg("\u{FFFD}\nx")],
        ),
        v(
            "overlong encoding replaced",
            b"data: \xC0\xAF\n\n",
            vec![msg("\u{FFFD}\u{FFFD}")],
        ),
        v(
            "invalid event type replaced",
            b"event: \xFE\ndata: x\n\n",
            vec![ev("\u{FFFD}", "x", "")],
        ),
        v("invalid id replaced", b"id: \xC3\n\n", vec![id("\u{FFFD}")]).id("\u{FFFD}"),
        v(
            "3-byte character",
            "data: 1 € 2\n\n".as_bytes(),
            vec![msg("1 € 2")],
        ),
        v(
            "4-byte character",
            "data: 😀\n\n".as_bytes(),
            vec![msg("😀")],
        ),
        v(
            "multi-byte characters in every field",
            "event: ü€😀\nid: ΩΩ\ndata: 😀€ü\n\n".as_bytes(),
            vec![ev("ü€😀", "😀€ü", "ΩΩ")],
        )
        .id("ΩΩ"),
        v(
            "BOM then multi-byte data",
            "\u{FEFF}data: 😀\n\n".as_bytes(),
            vec![msg("😀")],
        ),
    ]
}

#[test]
fn whatwg_vectors_every_chunking() {
    for vector in vectors() {
        let outcome = decode_every_way(None, vector.input);
        let expected = Outcome {
            items: vector.items,
            error: None,
            last_event_id: vector.last_event_id.to_owned(),
            retry: vector.retry,
        };
        assert_eq!(outcome, expected, "vector {:?}", vector.name);
    }
}

/// A deliberately naive, obviously-WHATWG reference decoder: UTF-8 decode
/// the whole stream (stripping one leading BOM), split into lines, process.
fn reference_decode(input: &[u8]) -> Outcome {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let text = String::from_utf8_lossy(input);
    let mut lines = Vec::new();
    let mut rest: &str = &text;
    // Only lines that end are processed; the tail is "pending data".
    while let Some(end) = rest.find(['\r', '\n']) {
        lines.push(&rest[..end]);
        let skip = if rest[end..].starts_with("\r\n") {
            2
        } else {
            1
        };
        rest = &rest[end + skip..];
    }

    let mut items = Vec::new();
    let (mut data, mut event_type, mut id_buffer) = (String::new(), String::new(), String::new());
    let mut last_event_id = String::new();
    let mut reconnection = None;
    let mut block_has_id = false;
    for line in lines {
        if line.is_empty() {
            last_event_id = id_buffer.clone();
            if data.is_empty() {
                event_type.clear();
                if block_has_id {
                    items.push(SseItem::LastEventId(last_event_id.clone()));
                }
            } else {
                data.pop();
                items.push(SseItem::Event(Event {
                    event_type: if event_type.is_empty() {
                        "message".to_owned()
                    } else {
                        event_type.clone()
                    },
                    data: std::mem::take(&mut data),
                    last_event_id: last_event_id.clone(),
                }));
                event_type.clear();
            }
            block_has_id = false;
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => event_type = value.to_owned(),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "id" if !value.contains('\0') => {
                id_buffer = value.to_owned();
                block_has_id = true;
            }
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    reconnection = Some(ms);
                    items.push(SseItem::Retry(ms));
                }
            }
            _ => {}
        }
    }
    Outcome {
        items,
        error: None,
        last_event_id,
        retry: reconnection,
    }
}

#[test]
fn reference_decoder_agrees_on_vectors() {
    for vector in vectors() {
        let expected = Outcome {
            items: vector.items,
            error: None,
            last_event_id: vector.last_event_id.to_owned(),
            retry: vector.retry,
        };
        assert_eq!(
            reference_decode(vector.input),
            expected,
            "vector {:?}",
            vector.name
        );
    }
}

// --- Decoder lifecycle. ---

#[test]
fn finish_discards_and_decoder_is_reusable_for_the_next_stream() {
    let mut decoder = Decoder::new();
    let mut items = Vec::new();
    decoder
        .feed(
            b"\xEF\xBB\xBFid: 1\nretry: 7\ndata: a\n\nevent: e\ndata: pending\nid: 2\n",
            &mut items,
        )
        .unwrap();
    decoder.finish(&mut items).unwrap();
    assert_eq!(items, [retry(7), ev("message", "a", "1")]);
    assert_eq!(decoder.last_event_id(), "1");
    assert_eq!(decoder.retry(), Some(7));

    // The next stream: the BOM rule applies again, the pending event, its
    // type and its unterminated id are gone, the last event ID is kept.
    items.clear();
    decoder
        .feed(b"\xEF\xBB\xBFdata: b\n\n", &mut items)
        .unwrap();
    decoder.finish(&mut items).unwrap();
    assert_eq!(items, [ev("message", "b", "1")]);
    assert_eq!(decoder.retry(), Some(7));
}

#[test]
fn finish_after_partial_bom_and_cr() {
    let mut decoder = Decoder::new();
    let mut items = Vec::new();
    decoder.feed(b"\xEF\xBB", &mut items).unwrap();
    decoder.finish(&mut items).unwrap();
    decoder.feed(b"data: x\r", &mut items).unwrap();
    decoder.finish(&mut items).unwrap();
    // A new stream: its leading LF is a blank line, not half of a CRLF.
    decoder.feed(b"\n", &mut items).unwrap();
    decoder.feed(b"data: y\n\n", &mut items).unwrap();
    assert_eq!(items, [msg("y")]);
}

#[test]
fn items_appear_as_soon_as_the_blank_line_arrives() {
    let mut decoder = Decoder::new();
    let mut items = Vec::new();
    decoder.feed(b"data: x\n", &mut items).unwrap();
    assert!(items.is_empty());
    decoder.feed(b"\r", &mut items).unwrap();
    // A CR at the end of a chunk already ends the line.
    assert_eq!(items, [msg("x")]);
    decoder.feed(b"\n", &mut items).unwrap();
    decoder.feed(b"data: y\n", &mut items).unwrap();
    decoder.feed(b"retry: 5", &mut items).unwrap();
    assert_eq!(items, [msg("x")]);
    decoder.feed(b"\n", &mut items).unwrap();
    assert_eq!(items, [msg("x"), retry(5)]);
}

#[test]
fn default_is_new() {
    let mut a = Decoder::default();
    let mut b = Decoder::new();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    a.feed(b"data: hi\n\n", &mut x).unwrap();
    b.feed(b"data: hi\n\n", &mut y).unwrap();
    assert_eq!(x, y);
}

// --- Max event size. ---

fn too_large(limit: usize) -> Option<SseError> {
    Some(SseError::EventTooLarge { limit })
}

/// `data: ` + `n` times `x` + the blank line.
fn data_event(n: usize) -> Vec<u8> {
    let mut input = b"data: ".to_vec();
    input.extend(std::iter::repeat_n(b'x', n));
    input.extend_from_slice(b"\n\n");
    input
}

#[test]
fn default_limit_is_4_mib() {
    let limit = 4 * 1024 * 1024;
    let ok = decode_chunks(None, [data_event(limit - 6).as_slice()]);
    assert_eq!(ok.error, None);
    assert_eq!(ok.items.len(), 1);
    let err = decode_chunks(None, [data_event(limit - 5).as_slice()]);
    assert_eq!(err.error, too_large(limit));
    assert!(err.items.is_empty());
}

#[test]
fn data_line_exactly_at_limit_ok_one_over_errors() {
    let limit = 40;
    // The line `data: xxx…` is 6 + n bytes; the data buffer then holds n + 1.
    let ok = decode_every_way(Some(limit), &data_event(limit - 6));
    assert_eq!(ok.error, None);
    assert_eq!(ok.items, [msg(&"x".repeat(limit - 6))]);

    let err = decode_every_way(Some(limit), &data_event(limit - 5));
    assert_eq!(err.error, too_large(limit));
    assert_eq!(err.items, []);
}

#[test]
fn data_without_space_exactly_at_limit() {
    let limit = 16;
    let ok = decode_every_way(Some(limit), b"data:12345678901\n\n");
    assert_eq!(ok.items, [msg("12345678901")]);
    let err = decode_every_way(Some(limit), b"data:123456789012\n\n");
    assert_eq!(err.error, too_large(limit));
}

#[test]
fn multi_line_event_counts_the_data_buffer() {
    // After `data: aaaa` the data buffer holds 5 bytes (`aaaa` + LF); the
    // next line may then be 15 bytes long.
    let limit = 20;
    let ok = decode_every_way(Some(limit), b"data: aaaa\ndata: bbbbbbbbb\n\n");
    assert_eq!(ok.error, None);
    assert_eq!(ok.items, [msg("aaaa\nbbbbbbbbb")]);
    let err = decode_every_way(Some(limit), b"data: aaaa\ndata: bbbbbbbbbb\n\n");
    assert_eq!(err.error, too_large(limit));
}

#[test]
fn limit_applies_per_event_not_per_stream() {
    let limit = 16;
    let input = b"data: 0123456789\n\ndata: 0123456789\n\ndata: 0123456789\n\n";
    let outcome = decode_every_way(Some(limit), input);
    assert_eq!(outcome.error, None);
    assert_eq!(outcome.items.len(), 3);
}

#[test]
fn event_type_and_id_buffers_count() {
    let limit = 20;
    // id buffer 4 + event type 4 + `data: 123456` (12) = 20.
    let ok = decode_every_way(Some(limit), b"id: abcd\nevent: type\ndata: 123456\n\n");
    assert_eq!(ok.items, [ev("type", "123456", "abcd")]);
    let err = decode_every_way(Some(limit), b"id: abcd\nevent: type\ndata: 1234567\n\n");
    assert_eq!(err.error, too_large(limit));
}

#[test]
fn events_before_the_oversized_line_are_delivered() {
    let limit = 32;
    let mut input = b"id: 1\ndata: small\n\nretry: 9\n".to_vec();
    input.extend(data_event(100));
    let outcome = decode_every_way(Some(limit), &input);
    assert_eq!(outcome.items, [ev("message", "small", "1"), retry(9)]);
    assert_eq!(outcome.error, too_large(limit));
    assert_eq!(outcome.last_event_id, "1");
    assert_eq!(outcome.retry, Some(9));
}

#[test]
fn long_comment_and_unknown_lines_count_too() {
    let limit = 10;
    let err = decode_every_way(Some(limit), b": 3456789012\n\ndata: x\n\n");
    assert_eq!(err.error, too_large(limit));
    let err = decode_every_way(Some(limit), b"foo: 56789012\n\ndata: x\n\n");
    assert_eq!(err.error, too_large(limit));
    let ok = decode_every_way(Some(limit), b": 34567890\n\ndata: x\n\n");
    assert_eq!(ok.items, [msg("x")]);
}

#[test]
fn unbounded_lines_without_newline_error() {
    let limit = 64 * 1024;
    for start in [&b"data: "[..], b"data:", b":", b"id: ", b"unknown", b"d"] {
        let mut decoder = Decoder::with_max_event_size(limit);
        let mut items = Vec::new();
        decoder.feed(start, &mut items).unwrap();
        let chunk = [b'x'; 1000];
        let mut fed = start.len();
        let error = loop {
            match decoder.feed(&chunk, &mut items) {
                Ok(()) => fed += chunk.len(),
                Err(error) => break error,
            }
            assert!(fed <= limit, "line starting {start:?} grew past the limit");
        };
        assert_eq!(error, SseError::EventTooLarge { limit });
        assert!(items.is_empty());
    }
}

#[test]
fn poisoned_after_error() {
    let mut decoder = Decoder::with_max_event_size(8);
    let mut items = Vec::new();
    let error = decoder
        .feed(b"data: 123456789\n\n", &mut items)
        .unwrap_err();
    assert_eq!(error, SseError::EventTooLarge { limit: 8 });
    assert_eq!(decoder.feed(b"data: x\n\n", &mut items), Err(error.clone()));
    assert_eq!(decoder.finish(&mut items), Err(error.clone()));
    assert!(items.is_empty());
    assert_eq!(
        error.to_string(),
        "server-sent event exceeds the maximum event size of 8 bytes \
         (data, event type and id buffers plus the line being read)"
    );
}

#[test]
fn zero_limit_allows_only_blank_lines() {
    let ok = decode_every_way(Some(0), b"\n\r\n\r");
    assert_eq!(ok.error, None);
    let err = decode_every_way(Some(0), b"\n:\n");
    assert_eq!(err.error, too_large(0));
}

#[test]
fn large_event_in_chunks() {
    // A 1 MiB data line and a multi-line variant, in 16 KiB chunks.
    let line = "y".repeat(1 << 20);
    let mut single = format!("id: big\ndata: {line}\n\n").into_bytes();
    single.extend_from_slice(b"data: after\n\n");
    let outcome = decode_chunks(None, single.chunks(16 * 1024));
    assert_eq!(
        outcome.items,
        [ev("message", &line, "big"), ev("message", "after", "big")]
    );

    let lines: Vec<String> = (0..1024).map(|i| format!("{i:01023}")).collect();
    let mut multi = String::new();
    for l in &lines {
        multi.push_str("data: ");
        multi.push_str(l);
        multi.push('\n');
    }
    multi.push('\n');
    let outcome = decode_chunks(None, multi.as_bytes().chunks(16 * 1024));
    assert_eq!(outcome.items, [msg(&lines.join("\n"))]);
    // Odd chunk sizes too.
    let outcome = decode_chunks(None, multi.as_bytes().chunks(4093));
    assert_eq!(outcome.items, [msg(&lines.join("\n"))]);
}

// --- Property tests. ---

/// Bytes biased towards the ones that matter to the grammar.
fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
    let interesting = prop::sample::select(
        b"\r\n\n\n: :datdataeventidretry0123456789 \xEF\xBB\xBF\xE2\x82\xAC\x00+\xFF".to_vec(),
    );
    let tokens = prop_oneof![
        4 => interesting.prop_map(|b| vec![b]),
        1 => any::<u8>().prop_map(|b| vec![b]),
        3 => prop::sample::select(vec![
            &b"data: "[..], b"data:", b"data", b"id: ", b"id", b"event: ", b"retry: ",
            b"retry: 100", b"\r\n", b"\n\n", b"\xEF\xBB\xBF", b": c", b"\0",
        ])
        .prop_map(<[u8]>::to_vec),
    ];
    prop::collection::vec(tokens, 0..60).prop_map(|tokens| tokens.concat())
}

/// Cut `input` at the given (sorted, deduplicated) positions.
fn cut(input: &[u8], cuts: &[prop::sample::Index]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|i| i.index(input.len() + 1)).collect();
    points.sort_unstable();
    points.dedup();
    let mut chunks = Vec::new();
    let mut start = 0;
    for p in points {
        chunks.push(input[start..p].to_vec());
        start = p;
    }
    chunks.push(input[start..].to_vec());
    chunks
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic_and_whole_equals_chunked(
        input in prop::collection::vec(any::<u8>(), 0..300),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
        limit in prop::option::of(0usize..64),
    ) {
        let whole = decode_chunks(limit, [input.as_slice()]);
        let chunks = cut(&input, &cuts);
        let chunked = decode_chunks(limit, chunks.iter().map(Vec::as_slice));
        prop_assert_eq!(&chunked, &whole);
        let bytes = decode_chunks(limit, input.chunks(1));
        prop_assert_eq!(&bytes, &whole);
    }

    #[test]
    fn whole_equals_chunked(
        input in sse_bytes(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
    ) {
        let whole = decode_chunks(None, [input.as_slice()]);
        let chunks = cut(&input, &cuts);
        let chunked = decode_chunks(None, chunks.iter().map(Vec::as_slice));
        prop_assert_eq!(&chunked, &whole);
        let bytes = decode_chunks(None, input.chunks(1));
        prop_assert_eq!(&bytes, &whole);
    }

    #[test]
    fn whole_equals_chunked_with_small_limit(
        input in sse_bytes(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
        limit in 0usize..40,
    ) {
        let whole = decode_chunks(Some(limit), [input.as_slice()]);
        let chunks = cut(&input, &cuts);
        let chunked = decode_chunks(Some(limit), chunks.iter().map(Vec::as_slice));
        prop_assert_eq!(&chunked, &whole);
        let bytes = decode_chunks(Some(limit), input.chunks(1));
        prop_assert_eq!(&bytes, &whole);
    }

    #[test]
    fn agrees_with_reference_decoder(
        input in sse_bytes(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
    ) {
        let chunks = cut(&input, &cuts);
        let ours = decode_chunks(None, chunks.iter().map(Vec::as_slice));
        prop_assert_eq!(ours, reference_decode(&input));
    }

    #[test]
    fn agrees_with_reference_decoder_on_arbitrary_bytes(
        input in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        prop_assert_eq!(decode_chunks(None, input.chunks(5)), reference_decode(&input));
    }
}
