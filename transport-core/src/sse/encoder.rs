//! Writing `text/event-stream` blocks.
//!
//! All functions write LF line ends and take any [`bytes::BufMut`] (a
//! `Vec<u8>` or a `bytes::BytesMut`). Each one validates its arguments
//! first, so on error nothing at all has been written.

use bytes::BufMut;
use memchr::{memchr2, memchr3};

/// Why a field could not be written.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The event type contains CR or LF, which would end the `event:` line.
    #[error("SSE event type must not contain CR or LF")]
    InvalidEventType,
    /// The id contains CR or LF (which would end the `id:` line) or NUL
    /// (which makes a WHATWG client ignore the `id` field).
    #[error("SSE event id must not contain CR, LF or NUL")]
    InvalidId,
    /// The comment text contains CR or LF, which would end the comment line.
    #[error("SSE comment must not contain CR or LF")]
    InvalidComment,
}

/// Writes one event: `event:` and `id:` lines when given, the data as
/// `data:` lines, then the blank line that dispatches it.
///
/// ```text
/// event: <event_type>
/// id: <id>
/// data: <first line of data>
/// data: <second line of data>
///
/// ```
///
/// `data` is split on CRLF, CR and LF, and every line becomes its own `data:`
/// line, so no CR or LF ever appears inside a field. A WHATWG decoder joins
/// the lines with LF, so the round trip gives back `data` with every CRLF and
/// lone CR normalised to LF; LF-only data comes back unchanged (including a
/// trailing LF or empty lines). An empty `data` is written as one `data:`
/// line, which dispatches an event with empty data.
///
/// # Errors
///
/// [`EncodeError::InvalidEventType`] if `event_type` contains CR or LF;
/// [`EncodeError::InvalidId`] if `id` contains CR, LF or NUL. Nothing is
/// written then.
pub fn write_event<B: BufMut + ?Sized>(
    buf: &mut B,
    event_type: Option<&str>,
    id: Option<&str>,
    data: &str,
) -> Result<(), EncodeError> {
    write_event_with_retry(buf, event_type, id, None, data)
}

/// [`write_event`] with an optional `retry: <ms>` line in the same block
/// (after `event:`/`id:`, before the `data:` lines).
///
/// A decoder applies the retry value when it reads that line, before it
/// dispatches the event at the blank line.
///
/// # Errors
///
/// As [`write_event`].
pub fn write_event_with_retry<B: BufMut + ?Sized>(
    buf: &mut B,
    event_type: Option<&str>,
    id: Option<&str>,
    retry_ms: Option<u64>,
    data: &str,
) -> Result<(), EncodeError> {
    if let Some(event_type) = event_type {
        validate_event_type(event_type)?;
    }
    if let Some(id) = id {
        validate_id(id)?;
    }
    if let Some(event_type) = event_type {
        put_field(buf, b"event", event_type.as_bytes());
    }
    if let Some(id) = id {
        put_field(buf, b"id", id.as_bytes());
    }
    if let Some(ms) = retry_ms {
        put_retry_line(buf, ms);
    }
    put_data(buf, data.as_bytes());
    buf.put_u8(b'\n');
    Ok(())
}

/// Writes the MCP priming event: `id: <id>\ndata:\n\n`.
///
/// MCP 2025-11-25 has the server start an SSE stream with "an SSE event
/// consisting of an event ID and an empty data field", so the client has an
/// id to resume from (`Last-Event-ID`) even before the first real message.
/// A WHATWG decoder dispatches it as a `message` event with data `""`.
///
/// # Errors
///
/// [`EncodeError::InvalidId`] if `id` contains CR, LF or NUL; nothing is
/// written then.
pub fn write_priming<B: BufMut + ?Sized>(buf: &mut B, id: &str) -> Result<(), EncodeError> {
    validate_id(id)?;
    put_field(buf, b"id", id.as_bytes());
    buf.put_slice(b"data:\n\n");
    Ok(())
}

/// Writes a block that only sets the reconnection time: `retry: <ms>\n\n`.
///
/// A block without `data` dispatches no event (WHATWG "dispatch the event",
/// step 2), so this only sets the client's reconnection time. To set it
/// together with an event, use [`write_event_with_retry`].
pub fn write_retry<B: BufMut + ?Sized>(buf: &mut B, ms: u64) {
    put_retry_line(buf, ms);
    buf.put_u8(b'\n');
}

/// Writes a comment line: `: <text>\n` (or `:\n` for empty text), e.g. as a
/// keep-alive.
///
/// WHATWG ignores lines starting with `:`, and a comment line needs no blank
/// line after it; writing none means a comment can never end an event by
/// accident. Write it only between events (every event this module writes
/// already ends with its blank line).
///
/// # Errors
///
/// [`EncodeError::InvalidComment`] if `text` contains CR or LF; nothing is
/// written then.
pub fn write_comment<B: BufMut + ?Sized>(buf: &mut B, text: &str) -> Result<(), EncodeError> {
    if memchr2(b'\r', b'\n', text.as_bytes()).is_some() {
        return Err(EncodeError::InvalidComment);
    }
    if text.is_empty() {
        buf.put_slice(b":\n");
    } else {
        buf.put_slice(b": ");
        buf.put_slice(text.as_bytes());
        buf.put_u8(b'\n');
    }
    Ok(())
}

fn validate_event_type(event_type: &str) -> Result<(), EncodeError> {
    match memchr2(b'\r', b'\n', event_type.as_bytes()) {
        Some(_) => Err(EncodeError::InvalidEventType),
        None => Ok(()),
    }
}

fn validate_id(id: &str) -> Result<(), EncodeError> {
    match memchr3(b'\r', b'\n', 0, id.as_bytes()) {
        Some(_) => Err(EncodeError::InvalidId),
        None => Ok(()),
    }
}

/// `<name>: <value>\n`. The decoder strips exactly one space after the
/// colon, so a value that itself starts with a space survives.
fn put_field<B: BufMut + ?Sized>(buf: &mut B, name: &[u8], value: &[u8]) {
    buf.put_slice(name);
    buf.put_slice(b": ");
    buf.put_slice(value);
    buf.put_u8(b'\n');
}

/// `retry: <ms>\n`.
fn put_retry_line<B: BufMut + ?Sized>(buf: &mut B, ms: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    let mut rest = ms;
    loop {
        start -= 1;
        // `rest % 10` is a single digit, so the cast cannot truncate.
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    put_field(buf, b"retry", &digits[start..]);
}

/// One `data:` line per line of `data` (split on CRLF, CR or LF); an empty
/// line is written as a bare `data:`.
fn put_data<B: BufMut + ?Sized>(buf: &mut B, mut data: &[u8]) {
    loop {
        let end = memchr2(b'\r', b'\n', data);
        let line = &data[..end.unwrap_or(data.len())];
        if line.is_empty() {
            buf.put_slice(b"data:\n");
        } else {
            put_field(buf, b"data", line);
        }
        let Some(end) = end else { break };
        let skip = if data[end] == b'\r' && data.get(end + 1) == Some(&b'\n') {
            2
        } else {
            1
        };
        data = &data[end + skip..];
    }
}
