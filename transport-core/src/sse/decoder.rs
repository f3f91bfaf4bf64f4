//! The sans-IO `text/event-stream` decoder.
//!
//! Every rule below is the one in WHATWG HTML §9.2.6 "Interpreting an event
//! stream" (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>);
//! the doc comment next to each piece of code quotes the step it implements.

use memchr::{memchr, memchr2};

/// The default bound on the bytes held for one event: 4 MiB.
pub const DEFAULT_MAX_EVENT_SIZE: usize = 4 * 1024 * 1024;

/// The UTF-8 byte order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Data at least this long is moved (not copied) into the dispatched event.
const MOVE_DATA_THRESHOLD: usize = 64 * 1024;

/// Scratch buffers larger than this are released by [`Decoder::finish`].
const MAX_RETAINED_CAPACITY: usize = 64 * 1024;

/// One thing the decoder learned from the stream, in stream order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SseItem {
    /// A dispatched event.
    ///
    /// WHATWG dispatches an event whenever the data buffer is non-empty at the
    /// blank line, so a `data:` line with an empty value (or a bare `data`
    /// line) *does* dispatch an event, with data `""`.
    Event(Event),
    /// A block was dispatched with an empty data buffer (for example
    /// `id: 7\n\n`): WHATWG fires no event, but step 1 of "dispatch the event"
    /// still set the last event ID string.
    ///
    /// Emitted only when that block contained an `id` field that was not
    /// ignored, so callers learn the new id (it may be the empty string, which
    /// resets the id and means "send no `Last-Event-ID`").
    LastEventId(String),
    /// A valid `retry` field was processed; the value is the new reconnection
    /// time in milliseconds.
    ///
    /// Emitted as soon as the field line is processed, because that is when
    /// WHATWG sets the reconnection time — not at the blank line.
    Retry(u64),
}

/// A dispatched event (WHATWG: a `MessageEvent`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Event {
    /// The event type: the value of the last `event` field of the block, or
    /// `"message"` when there was none (or it was empty).
    pub event_type: String,
    /// The data: the values of the block's `data` fields joined with LF.
    pub data: String,
    /// The last event ID string at dispatch (possibly set by an earlier
    /// block; `""` when no id has been set or it was reset).
    pub last_event_id: String,
}

/// Why the decoder gave up.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SseError {
    /// The event being built (its data, event type and last event ID buffers
    /// plus the line being read) would hold more than `limit` bytes.
    #[error(
        "server-sent event exceeds the maximum event size of {limit} bytes \
         (data, event type and id buffers plus the line being read)"
    )]
    EventTooLarge {
        /// The configured maximum event size, in bytes.
        limit: usize,
    },
}

/// What is known about a line that has started but not yet ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Partial {
    /// At the start of a line: nothing is held.
    None,
    /// The raw bytes of the line so far are held in `Decoder::line`.
    Buffered,
    /// A `data` line: its value is appended straight to the data buffer.
    /// `prefix` is the number of raw bytes before the value (`data:` is 5,
    /// `data: ` is 6); `space_pending` means the line so far is exactly
    /// `data:`, so a space arriving next must still be stripped.
    Data { prefix: usize, space_pending: bool },
    /// A comment line being skipped; `len` is its length so far.
    Comment { len: usize },
}

/// A sans-IO decoder for `text/event-stream`, exact to WHATWG HTML §9.2.6.
///
/// Feed it bytes as they arrive, in chunks of any size (split anywhere, even
/// inside a CRLF pair, a UTF-8 character or the BOM); it appends what it
/// learns to a `Vec<SseItem>`. The result never depends on how the input was
/// split.
///
/// ```
/// use mcp_transport_core::sse::{Decoder, Event, SseItem};
///
/// let mut decoder = Decoder::new();
/// let mut items = Vec::new();
/// decoder.feed(b"id: 1\ndata: hel", &mut items).unwrap();
/// decoder.feed(b"lo\r\n\r\n", &mut items).unwrap();
/// decoder.finish(&mut items).unwrap();
/// assert_eq!(
///     items,
///     [SseItem::Event(Event {
///         event_type: "message".into(),
///         data: "hello".into(),
///         last_event_id: "1".into(),
///     })]
/// );
/// ```
///
/// # Size limit
///
/// The decoder holds at most `max_event_size` bytes for the event being
/// built, counted as: the data buffer (each value plus its LF), the event
/// type buffer, the last event ID buffer, and the raw bytes of the line being
/// read (without its line end; a `data:` line counts its `data:` prefix). The
/// count is checked line by line, so it does not depend on chunking. Every
/// line counts, comments and unknown fields included, so a line that never
/// ends is an error too.
///
/// # Errors
///
/// Exceeding the limit returns [`SseError::EventTooLarge`]. The decoder is
/// then *poisoned*: its buffers are released and every later call to
/// [`feed`](Self::feed) or [`finish`](Self::finish) returns the same error and
/// appends nothing. Items decoded before the offending line have already been
/// appended to `out`.
///
/// # Reuse
///
/// [`finish`](Self::finish) ends one stream (one HTTP response). The decoder
/// can then be fed the next stream of the same logical event source: it keeps
/// the last event ID string and the reconnection time, and starts the new
/// stream with its last event ID buffer set to the last event ID string (as
/// browsers do on reconnection), with the BOM rule applying afresh.
#[derive(Debug, Clone)]
pub struct Decoder {
    max_event_size: usize,
    /// WHATWG "data buffer", as raw bytes (decoded at dispatch).
    data: Vec<u8>,
    /// WHATWG "event type buffer".
    event_type: String,
    /// WHATWG "last event ID buffer".
    id_buffer: String,
    /// WHATWG "last event ID string" of the event source.
    last_event_id: String,
    /// WHATWG "reconnection time", once the stream set one.
    retry: Option<u64>,
    /// The raw bytes of an unfinished line, when `partial` is `Buffered`.
    line: Vec<u8>,
    partial: Partial,
    /// The previous chunk ended with CR: an LF starting the next chunk is the
    /// second half of a CRLF pair, not a line end of its own.
    skip_lf: bool,
    /// `Some(n)` while the stream's first bytes are still being compared with
    /// the BOM: `n` BOM bytes have been matched (and are held back).
    bom_matched: Option<usize>,
    /// The current block contained an `id` field that set the ID buffer.
    block_has_id: bool,
    error: Option<SseError>,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder with the default maximum event size, [`DEFAULT_MAX_EVENT_SIZE`]
    /// (4 MiB).
    pub fn new() -> Self {
        Self::with_max_event_size(DEFAULT_MAX_EVENT_SIZE)
    }

    /// A decoder that holds at most `limit` bytes for one event (see the
    /// [size limit](Self#size-limit) for what counts).
    pub fn with_max_event_size(limit: usize) -> Self {
        Self {
            max_event_size: limit,
            data: Vec::new(),
            event_type: String::new(),
            id_buffer: String::new(),
            last_event_id: String::new(),
            retry: None,
            line: Vec::new(),
            partial: Partial::None,
            skip_lf: false,
            bom_matched: Some(0),
            block_has_id: false,
            error: None,
        }
    }

    /// Feeds bytes; complete items are appended to `out`.
    ///
    /// # Errors
    ///
    /// [`SseError::EventTooLarge`] when the event being built exceeds the
    /// limit; the decoder is poisoned afterwards (see [`Decoder`]).
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseItem>) -> Result<(), SseError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let result = self.feed_inner(chunk, out);
        if let Err(error) = &result {
            self.poison(error.clone());
        }
        result
    }

    /// End of stream: any unterminated event is discarded.
    ///
    /// WHATWG: "Once the end of the file is reached, any pending data must be
    /// discarded. (If the file ends in the middle of an event, before the
    /// final empty line, the incomplete event is not dispatched.)"
    ///
    /// Nothing is ever appended to `out` (a line ended by a CR at the very
    /// end of the stream was already processed by [`feed`](Self::feed)); the
    /// parameter keeps the call shape of `feed`. The decoder is then ready
    /// for the next stream (see [reuse](Self#reuse)).
    ///
    /// # Errors
    ///
    /// The stored error, if the decoder was poisoned by an earlier `feed`.
    pub fn finish(&mut self, out: &mut Vec<SseItem>) -> Result<(), SseError> {
        let _ = out;
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        self.data.clear();
        self.event_type.clear();
        self.line.clear();
        if self.data.capacity() > MAX_RETAINED_CAPACITY {
            self.data = Vec::new();
        }
        if self.line.capacity() > MAX_RETAINED_CAPACITY {
            self.line = Vec::new();
        }
        self.partial = Partial::None;
        self.skip_lf = false;
        self.bom_matched = Some(0);
        self.block_has_id = false;
        self.id_buffer.clone_from(&self.last_event_id);
        Ok(())
    }

    /// The last event ID string: the id in force at the last dispatch (what a
    /// client sends as `Last-Event-ID` when it reconnects; `""` means none).
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// The last valid `retry` value seen (the reconnection time), in
    /// milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    fn poison(&mut self, error: SseError) {
        self.error = Some(error);
        self.data = Vec::new();
        self.line = Vec::new();
        self.event_type = String::new();
        self.partial = Partial::None;
    }

    /// The BOM rule, then the line rules.
    ///
    /// WHATWG: "Streams must be decoded using the UTF-8 decode algorithm. The
    /// UTF-8 decode algorithm strips one leading UTF-8 Byte Order Mark (BOM),
    /// if any." Only the very first bytes of the stream are compared with the
    /// BOM (they may arrive split over several chunks); a BOM anywhere else is
    /// an ordinary U+FEFF character.
    fn feed_inner(&mut self, mut chunk: &[u8], out: &mut Vec<SseItem>) -> Result<(), SseError> {
        if let Some(matched) = self.bom_matched {
            let take = (BOM.len() - matched).min(chunk.len());
            if chunk[..take] == BOM[matched..matched + take] {
                let matched = matched + take;
                chunk = &chunk[take..];
                if matched < BOM.len() {
                    // Every byte so far matches; wait for the rest.
                    self.bom_matched = Some(matched);
                    return Ok(());
                }
                self.bom_matched = None;
            } else {
                // Not a BOM: the bytes held back are ordinary input.
                self.bom_matched = None;
                self.process(&BOM[..matched], out)?;
            }
        }
        self.process(chunk, out)
    }

    /// Splits the input into lines.
    ///
    /// WHATWG: "The stream must then be parsed by reading everything line by
    /// line, with a U+000D CARRIAGE RETURN U+000A LINE FEED (CRLF) character
    /// pair, a single U+000A LINE FEED (LF) character not preceded by a U+000D
    /// CARRIAGE RETURN (CR) character, and a single U+000D CARRIAGE RETURN (CR)
    /// character not followed by a U+000A LINE FEED (LF) character being the
    /// ways in which a line can end."
    ///
    /// A CR ends its line at once (so a CR at the very end of the stream ends
    /// that line); an LF right after it, even at the start of the next chunk,
    /// is then skipped as the rest of the CRLF pair.
    fn process(&mut self, mut input: &[u8], out: &mut Vec<SseItem>) -> Result<(), SseError> {
        if input.is_empty() {
            return Ok(());
        }
        if self.skip_lf {
            self.skip_lf = false;
            if input[0] == b'\n' {
                input = &input[1..];
            }
        }
        if self.partial != Partial::None {
            input = self.continue_partial(input, out)?;
        }
        while let Some(end) = memchr2(b'\n', b'\r', input) {
            let line = &input[..end];
            self.check_size(line.len())?;
            self.process_line(line, out)?;
            input = self.after_line_end(input, end);
        }
        if !input.is_empty() {
            self.start_partial(input)?;
        }
        Ok(())
    }

    /// The input after the line end at `end`, skipping the LF of a CRLF pair.
    #[inline]
    fn after_line_end<'a>(&mut self, input: &'a [u8], end: usize) -> &'a [u8] {
        let rest = &input[end + 1..];
        if input[end] == b'\r' {
            match rest.first() {
                Some(b'\n') => return &rest[1..],
                None => self.skip_lf = true,
                Some(_) => {}
            }
        }
        rest
    }

    /// The bytes held for the event apart from the line being read.
    #[inline]
    fn buffered(&self) -> usize {
        self.data.len() + self.event_type.len() + self.id_buffer.len()
    }

    /// Errors if the buffers plus a line of `line_len` bytes exceed the limit.
    #[inline]
    fn check_size(&self, line_len: usize) -> Result<(), SseError> {
        if self.buffered().saturating_add(line_len) > self.max_event_size {
            Err(SseError::EventTooLarge {
                limit: self.max_event_size,
            })
        } else {
            Ok(())
        }
    }

    /// Continues the unfinished line with the start of `input`; returns the
    /// input left after that line (empty if it still has not ended).
    fn continue_partial<'a>(
        &mut self,
        input: &'a [u8],
        out: &mut Vec<SseItem>,
    ) -> Result<&'a [u8], SseError> {
        let end = memchr2(b'\n', b'\r', input);
        let segment = match end {
            Some(end) => &input[..end],
            None => input,
        };
        match self.partial {
            Partial::None => unreachable!("continue_partial without a partial line"),
            Partial::Comment { len } => {
                let len = len + segment.len();
                self.check_size(len)?;
                self.partial = match end {
                    Some(_) => Partial::None,
                    None => Partial::Comment { len },
                };
            }
            Partial::Data {
                mut prefix,
                mut space_pending,
            } => {
                let mut value = segment;
                if space_pending && !value.is_empty() {
                    space_pending = false;
                    if value[0] == b' ' {
                        value = &value[1..];
                        prefix += 1;
                    }
                }
                self.check_size(prefix + value.len())?;
                self.data.extend_from_slice(value);
                self.partial = match end {
                    Some(_) => {
                        self.data.push(b'\n');
                        Partial::None
                    }
                    None => Partial::Data {
                        prefix,
                        space_pending,
                    },
                };
            }
            Partial::Buffered => {
                self.check_size(self.line.len() + segment.len())?;
                if end.is_some() {
                    let mut line = std::mem::take(&mut self.line);
                    line.extend_from_slice(segment);
                    self.partial = Partial::None;
                    let result = self.process_line(&line, out);
                    line.clear();
                    self.line = line;
                    result?;
                } else {
                    self.line.extend_from_slice(segment);
                    self.classify_partial();
                }
            }
        }
        Ok(match end {
            Some(end) => self.after_line_end(input, end),
            None => &[],
        })
    }

    /// Holds the start of a line that did not end in this chunk.
    fn start_partial(&mut self, tail: &[u8]) -> Result<(), SseError> {
        self.check_size(tail.len())?;
        self.line.extend_from_slice(tail);
        self.partial = Partial::Buffered;
        self.classify_partial();
        Ok(())
    }

    /// Once an unfinished line is known to be a comment or a `data` line,
    /// stop holding its raw bytes: skip a comment, and append a data value
    /// straight to the data buffer (so a 1 MiB data line is copied once).
    fn classify_partial(&mut self) {
        if self.line.first() == Some(&b':') {
            self.partial = Partial::Comment {
                len: self.line.len(),
            };
            self.line.clear();
        } else if let Some(rest) = self.line.strip_prefix(b"data:") {
            let (prefix, space_pending, value) = match rest.first() {
                None => (5, true, rest),
                Some(b' ') => (6, false, &rest[1..]),
                Some(_) => (5, false, rest),
            };
            self.data.extend_from_slice(value);
            self.line.clear();
            self.partial = Partial::Data {
                prefix,
                space_pending,
            };
        }
    }

    /// Processes one complete line (without its line end).
    ///
    /// WHATWG: "Lines must be processed, in the order they are received, as
    /// follows:
    /// - If the line is empty (a blank line): Dispatch the event, as defined
    ///   below.
    /// - If the line starts with a U+003A COLON character (:): Ignore the line.
    /// - If the line contains a U+003A COLON character (:): Collect the
    ///   characters on the line before the first U+003A COLON character (:),
    ///   and let field be that string. Collect the characters on the line after
    ///   the first U+003A COLON character (:), and let value be that string. If
    ///   value starts with a U+0020 SPACE character, remove it from value.
    ///   Process the field using the steps described below, using field as the
    ///   field name and value as the field value.
    /// - Otherwise, the string is not empty but does not contain a U+003A COLON
    ///   character (:): Process the field using the steps described below,
    ///   using the whole line as the field name, and the empty string as the
    ///   field value."
    ///
    /// Lines are split on the raw bytes: CR, LF, `:` and space are ASCII and
    /// never occur inside a multi-byte UTF-8 sequence, so this is the same as
    /// splitting the decoded text.
    #[inline]
    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseItem>) -> Result<(), SseError> {
        // The common case first: `data:` lines.
        if let Some(value) = line.strip_prefix(b"data:") {
            self.process_data(strip_one_space(value));
            return Ok(());
        }
        match line.first() {
            None => {
                self.dispatch(out);
                Ok(())
            }
            Some(b':') => Ok(()),
            Some(_) => match memchr(b':', line) {
                Some(colon) => {
                    self.process_field(&line[..colon], strip_one_space(&line[colon + 1..]), out)
                }
                None => self.process_field(line, b"", out),
            },
        }
    }

    /// WHATWG: "If the field name is "data": Append the field value to the
    /// data buffer, then append a single U+000A LINE FEED (LF) character to
    /// the data buffer."
    #[inline]
    fn process_data(&mut self, value: &[u8]) {
        self.data.extend_from_slice(value);
        self.data.push(b'\n');
    }

    /// WHATWG: "The steps to process the field given a field name and a
    /// field value depend on the field name, as given in the following list.
    /// Field names must be compared literally, with no case folding
    /// performed." Unknown fields: "Otherwise: The field is ignored."
    fn process_field(
        &mut self,
        name: &[u8],
        value: &[u8],
        out: &mut Vec<SseItem>,
    ) -> Result<(), SseError> {
        match name {
            b"data" => self.process_data(value),
            // WHATWG: "If the field name is "event": Set the event type buffer
            // to the field value."
            b"event" => {
                self.event_type.clear();
                push_lossy(&mut self.event_type, value);
                // Replacement characters can make the decoded value longer
                // than its raw bytes: keep the bound exact.
                self.check_size(0)?;
            }
            // WHATWG: "If the field name is "id": If the field value does not
            // contain U+0000 NULL, then set the last event ID buffer to the
            // field value. Otherwise, ignore the field."
            b"id" if memchr(0, value).is_none() => {
                self.id_buffer.clear();
                push_lossy(&mut self.id_buffer, value);
                self.block_has_id = true;
                self.check_size(0)?;
            }
            // WHATWG: "If the field name is "retry": If the field value
            // consists of only ASCII digits, then interpret the field value as
            // an integer in base ten, and set the event stream's reconnection
            // time to that integer. Otherwise, ignore the field."
            b"retry" => {
                if let Some(ms) = parse_retry(value) {
                    self.retry = Some(ms);
                    out.push(SseItem::Retry(ms));
                }
            }
            // An `id` containing NUL, and every unknown field.
            _ => {}
        }
        Ok(())
    }

    /// Dispatches the event at a blank line.
    ///
    /// WHATWG "dispatch the event" (the steps for web browsers; for other
    /// user agents they are "implementation dependent, but at a minimum they
    /// must set the data and event type buffers to the empty string before
    /// returning"):
    ///
    /// 1. "Set the last event ID string of the event source to the value of
    ///    the last event ID buffer. The buffer does not get reset, so the last
    ///    event ID string of the event source remains set to this value until
    ///    the next time it is set by the server."
    /// 2. "If the data buffer is an empty string, set the data buffer and the
    ///    event type buffer to the empty string and return."
    /// 3. "If the data buffer's last character is a U+000A LINE FEED (LF)
    ///    character, then remove the last character from the data buffer."
    /// 5. "Initialize event's type attribute to "message", its data attribute
    ///    to data, [...] and its lastEventId attribute to the last event ID
    ///    string of the event source."
    /// 6. "If the event type buffer has a value other than the empty string,
    ///    change the type of the newly created event to equal the value of the
    ///    event type buffer."
    /// 7. "Set the data buffer and the event type buffer to the empty string."
    fn dispatch(&mut self, out: &mut Vec<SseItem>) {
        // Step 1.
        if self.last_event_id != self.id_buffer {
            self.last_event_id.clone_from(&self.id_buffer);
        }
        let block_has_id = std::mem::take(&mut self.block_has_id);
        // Step 2.
        if self.data.is_empty() {
            self.event_type.clear();
            if block_has_id {
                out.push(SseItem::LastEventId(self.last_event_id.clone()));
            }
            return;
        }
        // Step 3: every data value is followed by an LF, so the last byte is
        // always one.
        self.data.pop();
        // Steps 5 and 7 (the data buffer).
        let data = if self.data.len() >= MOVE_DATA_THRESHOLD {
            decode_owned(std::mem::take(&mut self.data))
        } else {
            let data = decode(&self.data);
            self.data.clear();
            data
        };
        // Steps 5, 6 and 7 (the event type buffer).
        let event_type = if self.event_type.is_empty() {
            String::from("message")
        } else {
            std::mem::take(&mut self.event_type)
        };
        out.push(SseItem::Event(Event {
            event_type,
            data,
            last_event_id: self.last_event_id.clone(),
        }));
    }
}

/// WHATWG: "If value starts with a U+0020 SPACE character, remove it from
/// value." Exactly one space; never a tab.
#[inline]
fn strip_one_space(value: &[u8]) -> &[u8] {
    value.strip_prefix(b" ").unwrap_or(value)
}

/// "Consists of only ASCII digits" (and at least one), in base ten; a value
/// that does not fit in a `u64` is ignored too.
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    value.iter().try_fold(0u64, |acc, &digit| {
        acc.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
    })
}

/// UTF-8 decode with U+FFFD for invalid sequences, as the WHATWG UTF-8
/// decode algorithm does. Decoding line by line gives the same text as
/// decoding the whole stream: a line end is ASCII, which ends any incomplete
/// sequence in both cases.
#[inline]
fn decode(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// [`decode`] without a copy when the bytes are valid UTF-8.
fn decode_owned(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// Appends the decoded `bytes` to `dst`.
#[inline]
fn push_lossy(dst: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => dst.push_str(text),
        Err(_) => dst.push_str(&String::from_utf8_lossy(bytes)),
    }
}

/// The scratch buffers' memory rules, which the stream of items cannot
/// show: small events reuse the data buffer, large ones take it; `finish`
/// keeps scratch capacity up to [`MAX_RETAINED_CAPACITY`] and releases more.
#[cfg(test)]
mod capacity_tests {
    use super::*;

    fn event_of(d: &mut Decoder, data: &str) -> String {
        let mut out = Vec::new();
        d.feed(format!("data: {data}\n\n").as_bytes(), &mut out)
            .unwrap();
        match out.pop() {
            Some(SseItem::Event(e)) => e.data,
            other => panic!("no event: {other:?}"),
        }
    }

    #[test]
    fn small_events_reuse_the_data_buffer_and_large_ones_take_it() {
        let mut d = Decoder::new();
        let small = "x".repeat(2_000);
        assert_eq!(event_of(&mut d, &small), small);
        assert!(d.data.capacity() >= 2_000, "a small event keeps the buffer");
        let large = "y".repeat(MOVE_DATA_THRESHOLD + 1);
        assert_eq!(event_of(&mut d, &large), large);
        assert_eq!(d.data.capacity(), 0, "a large event takes the buffer");
    }

    #[test]
    fn finish_releases_only_scratch_capacity_beyond_the_bound() {
        for (capacity, kept) in [
            (4_096, true),
            (MAX_RETAINED_CAPACITY, true),
            (MAX_RETAINED_CAPACITY + 1, false),
        ] {
            let mut d = Decoder::new();
            d.data = Vec::with_capacity(capacity);
            d.line = Vec::with_capacity(capacity);
            d.finish(&mut Vec::new()).unwrap();
            assert_eq!(d.data.capacity() != 0, kept, "data, capacity {capacity}");
            assert_eq!(d.line.capacity() != 0, kept, "line, capacity {capacity}");
        }
    }
}
