//! The SSE decoder (WHATWG HTML §9.2.6): never panics; any chunking gives
//! the items of one chunk (and the same error); the result equals a naive
//! line-by-line reference decoder written from the spec text; an event
//! never holds more than the size limit.
//!
//! Input: byte 0 picks the size limit, byte 1 seeds the chunk splits, the
//! rest is the stream.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_transport_core::sse::{Decoder, Event, SseError, SseItem};

fuzz_target!(|input: &[u8]| {
    if input.len() < 2 {
        return;
    }
    let limit = match input[0] % 4 {
        0 => 8,
        1 => 64,
        2 => 1024,
        _ => usize::MAX,
    };
    let stream = &input[2..];
    let whole = decode(stream, limit, &[stream.len()]);
    let splits = splits(input[1], stream.len());
    let chunked = decode(stream, limit, &splits);
    assert_eq!(
        whole, chunked,
        "chunking changed the result (splits {splits:?})"
    );
    let byte_at_a_time = decode(stream, limit, &vec![1; stream.len()]);
    assert_eq!(whole, byte_at_a_time, "byte-at-a-time changed the result");

    let (items, error) = &whole;
    if limit == usize::MAX {
        assert!(error.is_none());
        assert_eq!(
            items,
            &reference(stream),
            "differs from the reference decoder"
        );
    } else if std::str::from_utf8(stream).is_ok() {
        // Valid UTF-8: the decoded buffers are the raw ones, so the bound
        // is exact (data + its LF + id + an explicit event type).
        for item in items {
            if let SseItem::Event(e) = item {
                let event_type = if e.event_type == "message" {
                    0
                } else {
                    e.event_type.len()
                };
                let held = e.data.len() + 1 + e.last_event_id.len() + event_type;
                assert!(
                    held <= limit,
                    "event of {held} bytes passed a limit of {limit}"
                );
            }
        }
    }
});

/// Decodes `stream` fed in chunks of the given lengths (the last chunk
/// takes the rest).
fn decode(stream: &[u8], limit: usize, lengths: &[usize]) -> (Vec<SseItem>, Option<SseError>) {
    let mut decoder = Decoder::with_max_event_size(limit);
    let mut items = Vec::new();
    let mut rest = stream;
    for &len in lengths {
        let (chunk, tail) = rest.split_at(len.min(rest.len()));
        rest = tail;
        if let Err(e) = decoder.feed(chunk, &mut items) {
            // Poisoned: every later call fails the same way, appending nothing.
            let before = items.len();
            assert_eq!(decoder.feed(b"data: x\n\n", &mut items), Err(e.clone()));
            assert_eq!(decoder.finish(&mut items), Err(e.clone()));
            assert_eq!(items.len(), before);
            return (items, Some(e));
        }
    }
    if !rest.is_empty() {
        if let Err(e) = decoder.feed(rest, &mut items) {
            return (items, Some(e));
        }
    }
    let before = items.len();
    decoder.finish(&mut items).unwrap();
    assert_eq!(items.len(), before, "finish appends nothing");
    (items, None)
}

/// Chunk lengths from a seed (a small xorshift), covering `len` bytes.
fn splits(seed: u8, len: usize) -> Vec<usize> {
    let mut state = u32::from(seed).wrapping_mul(2_654_435_761) | 1;
    let mut out = Vec::new();
    let mut covered = 0;
    while covered < len {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let n = (state % 7) as usize + usize::from(state % 3 == 0) * (state % 64) as usize;
        out.push(n);
        covered += n;
    }
    out
}

/// WHATWG "Interpreting an event stream", literally: decode the whole
/// stream as UTF-8 (replacing errors, stripping one leading BOM), split
/// into lines, process complete lines in order; the unterminated tail is
/// discarded.
fn reference(stream: &[u8]) -> Vec<SseItem> {
    let text = String::from_utf8_lossy(stream);
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(std::mem::take(&mut line));
            }
            '\n' => lines.push(std::mem::take(&mut line)),
            c => line.push(c),
        }
    }
    let mut out = Vec::new();
    let (mut data, mut event_type, mut id_buffer, mut last_id) =
        (String::new(), String::new(), String::new(), String::new());
    let mut block_has_id = false;
    for line in lines {
        if line.is_empty() {
            last_id.clone_from(&id_buffer);
            let had_id = std::mem::take(&mut block_has_id);
            if data.is_empty() {
                event_type.clear();
                if had_id {
                    out.push(SseItem::LastEventId(last_id.clone()));
                }
                continue;
            }
            data.pop();
            out.push(SseItem::Event(Event {
                event_type: if event_type.is_empty() {
                    "message".into()
                } else {
                    event_type.clone()
                },
                data: std::mem::take(&mut data),
                last_event_id: last_id.clone(),
            }));
            event_type.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
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
                    out.push(SseItem::Retry(ms));
                }
            }
            _ => {}
        }
    }
    out
}
