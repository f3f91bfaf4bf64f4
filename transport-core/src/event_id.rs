//! Session-unique SSE event ids that name their stream and position.
//!
//! MCP 2025-11-25 ("Resumability and Redelivery") says an event id **MUST** be
//! globally unique across all streams within a session, and **SHOULD** encode
//! enough to identify the originating stream, so that a `Last-Event-ID` sent on
//! a resuming `GET` maps back to exactly one stream. The ids built here do so by
//! construction: an [`EventId`] is the triple
//!
//! ```text
//! {session tag}.{stream number}.{sequence number}
//! ```
//!
//! for example `k3Jx_9aQ-2Lm0pZb.7.12`: the 12th message event of stream 7 of
//! the session whose [`SessionTag`] is `k3Jx_9aQ-2Lm0pZb`. Both numbers are
//! written in canonical base 10 (no sign, no leading zeros), the separator is
//! `.` (which a tag never contains), and the whole string is at most
//! [`EventId::MAX_LEN`] visible ASCII bytes — no space, CR, LF or NUL, so it is
//! always a valid SSE `id` field and a valid HTTP header value.
//!
//! * The **session tag** is a short opaque token the server mints once per
//!   session (from random bytes it supplies: this crate has no RNG). It lets
//!   the server reject an id that was issued in another session
//!   ([`EventIdError::ForeignSession`]) before looking anything up. It is not a
//!   secret and not an authenticator: the session is authenticated by the
//!   `Mcp-Session-Id` header, and a store looks events up under *that*
//!   session, never under the tag a client sent.
//! * The **stream number** ([`StreamId`]) is allocated by the server, in
//!   increasing order within a session. [`StreamId::STANDALONE`] (0) is
//!   reserved for the standalone `GET` stream; request streams (one per `POST`
//!   answered with SSE) count up from [`StreamId::FIRST_REQUEST`] (1).
//! * The **sequence number** counts the events of one stream: the priming
//!   event that opens a stream (SEP-1699) has sequence number
//!   [`EventId::PRIMING_SEQ`] (0), message events count up from 1.
//! * An optional fourth part, the **renewal** (`{tag}.{stream}.{seq}.{n}`,
//!   n ≥ 1), names the same position as `{tag}.{stream}.{seq}` under a
//!   fresh, never-repeated id: a server that must end a connection before it
//!   carried any event id sends an empty-data event with such an id first,
//!   so that a client which remembers ids per connection still resumes from
//!   where it is ([`EventId::renewed`]). Resuming after it is resuming after
//!   [`EventId::position`].
//!
//! Parsing ([`EventId::parse`], [`str::parse`]) accepts exactly the strings
//! [`Display`](fmt::Display) produces and returns a typed [`EventIdError`] for
//! everything else; it never panics and never allocates.

use std::fmt;
use std::str::FromStr;

/// The characters a [`SessionTag`] may contain: the URL-safe base64 alphabet
/// (RFC 4648 §5), `[A-Za-z0-9_-]`.
const TAG_ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Number of decimal digits of `u64::MAX`.
const MAX_U64_DIGITS: usize = 20;
/// Number of decimal digits of `u32::MAX`.
const MAX_U32_DIGITS: usize = 10;

fn is_tag_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// A short opaque per-session token, the first part of every [`EventId`].
///
/// A tag is 1 to [`SessionTag::MAX_LEN`] characters from `[A-Za-z0-9_-]`. The
/// server mints one per session with [`SessionTag::from_random_bytes`] (16
/// characters from 96 caller-supplied random bits) or
/// [`SessionTag::from_u64`] (11 characters); servers that run streams without
/// a session use the fixed [`SessionTag::SESSIONLESS`], which is shorter than
/// any minted tag and so never equals one.
///
/// The type is `Copy` (an inline 16-byte buffer), cheap to hash and compare,
/// and suitable as a map key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionTag {
    // Invariant: `bytes[..len]` are tag bytes, `bytes[len..]` are zero,
    // 1 <= len <= MAX_LEN. The zero padding keeps the derived Eq/Hash exact.
    bytes: [u8; SessionTag::MAX_LEN],
    len: u8,
}

impl SessionTag {
    /// The longest accepted tag, in characters (= bytes).
    pub const MAX_LEN: usize = 16;

    /// The fixed tag for servers that run streams with no session
    /// (`"none"`). Minted tags are 11 or 16 characters long, so this never
    /// collides with one.
    pub const SESSIONLESS: SessionTag = SessionTag {
        bytes: *b"none\0\0\0\0\0\0\0\0\0\0\0\0",
        len: 4,
    };

    /// Mints a 16-character tag from 96 random bits supplied by the caller
    /// (URL-safe base64 of the 12 bytes). This is the recommended constructor:
    /// draw the bytes from a CSPRNG once per session.
    pub fn from_random_bytes(random: [u8; 12]) -> SessionTag {
        let mut bytes = [0u8; Self::MAX_LEN];
        for (group, out) in random.chunks_exact(3).zip(bytes.chunks_exact_mut(4)) {
            let n = (u32::from(group[0]) << 16) | (u32::from(group[1]) << 8) | u32::from(group[2]);
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = TAG_ALPHABET[((n >> (18 - 6 * i)) & 63) as usize];
            }
        }
        SessionTag { bytes, len: 16 }
    }

    /// Mints an 11-character tag from a 64-bit value (URL-safe base64 of its
    /// bits, most significant first). Distinct values give distinct tags.
    /// Useful with a random `u64`, or a counter when uniqueness within one
    /// process is all that is needed (tags are not secrets).
    pub fn from_u64(value: u64) -> SessionTag {
        let mut bytes = [0u8; Self::MAX_LEN];
        for (i, slot) in bytes.iter_mut().take(11).enumerate() {
            *slot = TAG_ALPHABET[((value >> (60 - 6 * i)) & 63) as usize];
        }
        SessionTag { bytes, len: 11 }
    }

    /// Parses a tag: 1 to [`SessionTag::MAX_LEN`] characters from
    /// `[A-Za-z0-9_-]`.
    ///
    /// # Errors
    ///
    /// [`EventIdError::Empty`] for `""`,
    /// [`Malformed::TagTooLong`] for more than [`SessionTag::MAX_LEN`]
    /// characters, [`Malformed::InvalidByte`] for any other character.
    pub fn parse(s: &str) -> Result<SessionTag, EventIdError> {
        if s.is_empty() {
            return Err(EventIdError::Empty);
        }
        if let Some(at) = s.bytes().position(|b| !is_tag_byte(b)) {
            return Err(Malformed::InvalidByte { at }.into());
        }
        Self::from_checked_bytes(s.as_bytes())
    }

    /// Builds a tag from bytes already known to be tag bytes; checks only the
    /// length.
    fn from_checked_bytes(src: &[u8]) -> Result<SessionTag, EventIdError> {
        if src.is_empty() {
            return Err(Malformed::EmptyPart.into());
        }
        if src.len() > Self::MAX_LEN {
            return Err(Malformed::TagTooLong.into());
        }
        let mut bytes = [0u8; Self::MAX_LEN];
        bytes[..src.len()].copy_from_slice(src);
        Ok(SessionTag {
            bytes,
            len: src.len() as u8,
        })
    }

    /// The tag as a string slice.
    pub fn as_str(&self) -> &str {
        // Every constructor stores ASCII only, so this never fails.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The tag's bytes (ASCII), without `as_str`'s check: for an
    /// [`EventId::text`], which checks the whole id once.
    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Display for SessionTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for SessionTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SessionTag").field(&self.as_str()).finish()
    }
}

impl FromStr for SessionTag {
    type Err = EventIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SessionTag::parse(s)
    }
}

/// The number of a stream within a session.
///
/// The server allocates stream numbers itself, in increasing order within a
/// session, starting at [`StreamId::FIRST_REQUEST`] for request streams.
/// [`StreamId::STANDALONE`] (0) is reserved for the standalone `GET` stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u64);

impl StreamId {
    /// Stream 0: reserved for the session's standalone `GET` stream (the one
    /// a client opens to receive server-initiated messages).
    pub const STANDALONE: StreamId = StreamId(0);

    /// Stream 1: the first request stream (a `POST` answered with SSE).
    pub const FIRST_REQUEST: StreamId = StreamId(1);

    /// The stream number as an integer.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The next stream number, or `None` at `u64::MAX`.
    pub const fn next(self) -> Option<StreamId> {
        match self.0.checked_add(1) {
            Some(n) => Some(StreamId(n)),
            None => None,
        }
    }

    /// Whether this is [`StreamId::STANDALONE`].
    pub const fn is_standalone(self) -> bool {
        self.0 == Self::STANDALONE.0
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// An SSE event id: which session, which stream, which position.
///
/// See the [module documentation](self) for the format. Two ids are equal
/// exactly when their strings are equal, and
/// `EventId::parse(&id.to_string()) == Ok(id)` for every id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventId {
    /// The session the id was issued in.
    pub session: SessionTag,
    /// The stream within that session.
    pub stream: StreamId,
    /// The position within that stream: [`EventId::PRIMING_SEQ`] (0) for the
    /// priming event, 1, 2, … for message events.
    pub seq: u64,
    /// 0 for the id of an event in the log; n ≥ 1 for the n-th fresh id
    /// minted for the same position (see the [module docs](self)).
    pub renewal: u32,
}

impl EventId {
    /// The longest string [`Display`](fmt::Display) can produce, and the
    /// longest input [`EventId::parse`] looks at: a 16-character tag, two
    /// 20-digit numbers, a 10-digit renewal and three dots (69 bytes).
    /// Anything longer is [`EventIdError::TooLong`].
    pub const MAX_LEN: usize =
        SessionTag::MAX_LEN + 1 + MAX_U64_DIGITS + 1 + MAX_U64_DIGITS + 1 + MAX_U32_DIGITS;

    /// The sequence number of a stream's priming event.
    pub const PRIMING_SEQ: u64 = 0;

    /// Builds an id from its parts.
    pub const fn new(session: SessionTag, stream: StreamId, seq: u64) -> EventId {
        EventId {
            session,
            stream,
            seq,
            renewal: 0,
        }
    }

    /// The `n`-th fresh id for this id's position (`n` ≥ 1; 0 gives
    /// [`position`](Self::position)).
    pub const fn renewed(self, n: u32) -> EventId {
        EventId { renewal: n, ..self }
    }

    /// The id of the logged event at this position: the id without its
    /// renewal. Resuming after a renewed id resumes after this one.
    pub const fn position(self) -> EventId {
        self.renewed(0)
    }

    /// The id of the priming event of `stream` (sequence number 0).
    pub const fn priming(session: SessionTag, stream: StreamId) -> EventId {
        EventId::new(session, stream, Self::PRIMING_SEQ)
    }

    /// Whether this is a priming id (sequence number 0).
    pub const fn is_priming(&self) -> bool {
        self.seq == Self::PRIMING_SEQ
    }

    /// Parses an id in the canonical form `{tag}.{stream}.{seq}` or
    /// `{tag}.{stream}.{seq}.{renewal}` (renewal ≥ 1).
    ///
    /// Accepts exactly the strings [`Display`](fmt::Display) produces. Never
    /// panics, never allocates, looks at no more than [`EventId::MAX_LEN`]
    /// bytes.
    ///
    /// # Errors
    ///
    /// * [`EventIdError::Empty`] for `""`;
    /// * [`EventIdError::TooLong`] for more than [`EventId::MAX_LEN`] bytes;
    /// * [`EventIdError::Malformed`] for anything else that is not canonical:
    ///   a byte outside `[A-Za-z0-9_.-]` (space, `+`, CR, LF, NUL, non-ASCII),
    ///   fewer than three or more than four parts, an empty part, a tag
    ///   longer than [`SessionTag::MAX_LEN`], a non-digit, a leading zero, a
    ///   number beyond `u64::MAX` (a renewal beyond `u32::MAX`) or a renewal
    ///   of 0 — see [`Malformed`].
    ///
    /// Whether the id belongs to the expected session is a separate check:
    /// [`EventId::check_session`] or [`EventId::parse_in_session`].
    pub fn parse(s: &str) -> Result<EventId, EventIdError> {
        let b = s.as_bytes();
        if b.is_empty() {
            return Err(EventIdError::Empty);
        }
        if b.len() > Self::MAX_LEN {
            return Err(EventIdError::TooLong {
                len: b.len(),
                max: Self::MAX_LEN,
            });
        }
        if let Some(at) = b.iter().position(|&c| !(is_tag_byte(c) || c == b'.')) {
            return Err(Malformed::InvalidByte { at }.into());
        }
        let mut parts = b.split(|&c| c == b'.');
        // `split` always yields at least one part.
        let tag = parts.next().unwrap_or_default();
        let (Some(stream), Some(seq)) = (parts.next(), parts.next()) else {
            return Err(Malformed::MissingPart.into());
        };
        let renewal = parts.next();
        if parts.next().is_some() {
            return Err(Malformed::ExtraPart.into());
        }
        let session = SessionTag::from_checked_bytes(tag)?;
        let stream = StreamId(parse_canonical_u64(stream)?);
        let seq = parse_canonical_u64(seq)?;
        let renewal = match renewal {
            None => 0,
            Some(n) => match u32::try_from(parse_canonical_u64(n)?) {
                Ok(0) => return Err(Malformed::ZeroRenewal.into()),
                Ok(n) => n,
                Err(_) => return Err(Malformed::Overflow.into()),
            },
        };
        Ok(EventId {
            session,
            stream,
            seq,
            renewal,
        })
    }

    /// Parses an id and checks that it was issued in `expected`'s session.
    ///
    /// # Errors
    ///
    /// Everything [`EventId::parse`] returns, and
    /// [`EventIdError::ForeignSession`] for a well-formed id of another
    /// session.
    pub fn parse_in_session(s: &str, expected: &SessionTag) -> Result<EventId, EventIdError> {
        let id = EventId::parse(s)?;
        id.check_session(expected)?;
        Ok(id)
    }

    /// Checks that this id was issued in the session tagged `expected`.
    ///
    /// # Errors
    ///
    /// [`EventIdError::ForeignSession`] if the tags differ.
    pub fn check_session(&self, expected: &SessionTag) -> Result<(), EventIdError> {
        if self.session == *expected {
            Ok(())
        } else {
            Err(EventIdError::ForeignSession)
        }
    }
}

/// Parses canonical base-10: digits only, no leading zero (except `"0"`), at
/// most `u64::MAX`.
fn parse_canonical_u64(digits: &[u8]) -> Result<u64, EventIdError> {
    match digits {
        [] => return Err(Malformed::EmptyPart.into()),
        [b'0', _, ..] => {
            // Report a non-digit in preference to the leading zero: "0x1" is
            // not a number at all.
            return Err(if digits.iter().all(u8::is_ascii_digit) {
                Malformed::LeadingZero
            } else {
                Malformed::NotADigit
            }
            .into());
        }
        _ => {}
    }
    let mut n: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(Malformed::NotADigit.into());
        }
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(d - b'0')))
            .ok_or(Malformed::Overflow)?;
    }
    Ok(n)
}

impl EventId {
    /// The id's text (what [`Display`](fmt::Display) writes), on the
    /// stack: no allocation and no formatting machinery. An SSE stream
    /// writes one for every event it sends (`id:`); through `write!` each
    /// cost ~800 instructions (two an answered 2025-11-25 request:
    /// docs/PERFORMANCE.md, session 21).
    pub fn text(&self) -> IdText {
        let mut t = IdText {
            bytes: [0; EventId::MAX_LEN],
            len: 0,
        };
        let mut digits = itoa::Buffer::new();
        t.push_bytes(self.session.as_bytes());
        t.push(".");
        t.push(digits.format(self.stream.0));
        t.push(".");
        t.push(digits.format(self.seq));
        if self.renewal > 0 {
            t.push(".");
            t.push(digits.format(self.renewal));
        }
        t
    }
}

/// An [`EventId`]'s text, held inline ([`EventId::text`]); derefs to
/// `str`.
#[derive(Clone, Copy)]
pub struct IdText {
    // Invariant: `bytes[..len]` is the concatenation of whole `str`s and
    // of session tags' ASCII bytes.
    bytes: [u8; EventId::MAX_LEN],
    len: u8,
}

impl IdText {
    /// Appends `s`. The parts of an id never exceed
    /// [`EventId::MAX_LEN`] together (that constant is their sum).
    fn push(&mut self, s: &str) {
        self.push_bytes(s.as_bytes());
    }

    /// Appends ASCII bytes (a session tag's: `deref` checks them).
    fn push_bytes(&mut self, b: &[u8]) {
        let at = usize::from(self.len);
        self.bytes[at..at + b.len()].copy_from_slice(b);
        // At most MAX_LEN (69): fits a u8.
        self.len = (at + b.len()) as u8;
    }
}

impl std::ops::Deref for IdText {
    type Target = str;

    fn deref(&self) -> &str {
        // Whole `str`s and ASCII were copied in, so this never fails.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl fmt::Debug for IdText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl FromStr for EventId {
    type Err = EventIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EventId::parse(s)
    }
}

/// Why a string is not an [`EventId`] (or [`SessionTag`]) of this session.
///
/// A server answers a `Last-Event-ID` that fails to parse with a 4xx; the
/// `Display` text is meant to be shown to the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EventIdError {
    /// The string is empty.
    #[error("event id is empty")]
    Empty,
    /// The string is longer than any id this server issues.
    #[error("event id is {len} bytes long; at most {max} are accepted")]
    TooLong {
        /// The length of the rejected input, in bytes.
        len: usize,
        /// The accepted maximum ([`EventId::MAX_LEN`]).
        max: usize,
    },
    /// The string is not in the canonical `{tag}.{stream}.{seq}` form.
    #[error("malformed event id: {reason}")]
    Malformed {
        /// What exactly is wrong.
        reason: Malformed,
    },
    /// The id is well-formed but was issued in a different session.
    #[error("event id was issued in a different session")]
    ForeignSession,
}

/// The specific defect behind [`EventIdError::Malformed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Malformed {
    /// A byte outside `[A-Za-z0-9_.-]` (for a tag: outside `[A-Za-z0-9_-]`),
    /// such as a space, `+`, CR, LF, NUL or any non-ASCII byte.
    #[error("byte {at} is not allowed (only A-Z a-z 0-9 - _ and . are)")]
    InvalidByte {
        /// The byte offset of the first offending byte.
        at: usize,
    },
    /// Fewer than three `.`-separated parts.
    #[error("expected three parts `tag.stream.seq` (or four, with a renewal), found fewer")]
    MissingPart,
    /// More than four `.`-separated parts.
    #[error("expected three parts `tag.stream.seq` (or four, with a renewal), found more")]
    ExtraPart,
    /// A fourth part (renewal) of `0`: the id without it is the canonical
    /// form.
    #[error("a renewal must be at least 1 (without one, leave the part out)")]
    ZeroRenewal,
    /// One of the parts is empty.
    #[error("a part is empty")]
    EmptyPart,
    /// The session tag is longer than [`SessionTag::MAX_LEN`].
    #[error("session tag is longer than {} characters", SessionTag::MAX_LEN)]
    TagTooLong,
    /// A number contains something other than the digits 0-9.
    #[error("stream and sequence numbers must be decimal digits")]
    NotADigit,
    /// A number has a leading zero (non-canonical).
    #[error("numbers must not have leading zeros")]
    LeadingZero,
    /// A number is larger than `u64::MAX` (a renewal larger than
    /// `u32::MAX`).
    #[error("number is too large")]
    Overflow,
}

impl From<Malformed> for EventIdError {
    fn from(reason: Malformed) -> Self {
        EventIdError::Malformed { reason }
    }
}
