//! A JSON object checked to be valid JSON and split into its members in
//! one pass: the fast path of the JSON-RPC envelope parser
//! ([`crate::jsonrpc`]).
//!
//! The envelope parse used to be `serde_json` deriving a struct of the
//! envelope's members, each kept as a `RawValue`: to keep `params` raw,
//! `serde_json` validates its text byte by byte and token by token
//! (~4,100 instructions of a stateless `tools/call`, two thirds of them in
//! the params: docs/PERFORMANCE.md, session 24). This walk checks the same
//! grammar (RFC 8259, section 2 onwards) looking for a string's end eight
//! bytes at a time, and on the way hands out the top-level members and
//! those of one named member's object, so that the `params` index is not
//! a second walk.
//!
//! It is written here because no JSON crate checks a text and keeps its
//! members' spans in one pass (`serde_json`'s `RawValue` members check
//! every byte again, one nesting level at a time; the SIMD parsers build
//! a tape). It is **only ever a fast path**: whatever it does not accept
//! (nesting deeper than [`MAX_DEPTH`], or any invalid text, or a member
//! its caller declines, or an inner object whose offsets do not fit a
//! [`Span`]'s `u32`) the caller parses with `serde_json`
//! as before, so its errors are `serde_json`'s. What it must never do is
//! accept what `serde_json` refuses; the property tests and the
//! `jsonrpc_body` fuzz target compare the two on that.

use std::ops::Range;

use super::{Member, ONES, SPANS_CAPACITY, Span, Valid, below, first_hit, skip_ws, zeros};

/// Nesting deeper than this (counting the object itself) is left to the
/// slow path. `serde_json` refuses nesting of 128 levels; a request's
/// params nest a handful.
pub(crate) const MAX_DEPTH: usize = 64;

/// The members of an object's member named `inner`, from a text that
/// [`object`] found to be one valid JSON object.
#[derive(Debug, Default)]
pub(crate) struct Checked<'a> {
    /// The value of the top-level member named `inner` (sent without
    /// escapes) when it is an object (the last such member's when the
    /// name is repeated), and what the walk found in it.
    inner: Option<(&'a str, InnerSpans)>,
}

/// The members of the `inner` object (offsets into its text), in order,
/// and those of its member named `nested` when that is an object, known
/// only when no member name of `inner` has escapes (so the last member
/// named `nested` is the one a reader of `inner` sees).
#[derive(Debug, Default)]
pub(crate) struct InnerSpans {
    /// The members of `inner`.
    pub members: Vec<Span>,
    /// The members of the last member of `inner` named `nested` (offsets
    /// into `inner`'s text), when it is an object and the names are plain.
    pub nested: Option<Vec<Span>>,
}

impl<'a> Checked<'a> {
    /// What the walk found in the `inner` member, when it is an object.
    pub fn into_inner(self) -> Option<InnerSpans> {
        self.inner.map(|(_, spans)| spans)
    }

    /// The `inner` member's members, when there is one.
    #[cfg(test)]
    fn inner_members(&self) -> Vec<Member<'a>> {
        self.inner.as_ref().map_or_else(Vec::new, |(text, spans)| {
            spans.members.iter().map(|s| s.member(text)).collect()
        })
    }

    /// The `nested` member's members, when the walk knows them.
    #[cfg(test)]
    fn nested_members(&self) -> Option<Vec<Member<'a>>> {
        let (text, spans) = self.inner.as_ref()?;
        let nested = spans.nested.as_ref()?;
        Some(nested.iter().map(|s| s.member(text)).collect())
    }
}

/// Checks that `text` is exactly one valid JSON object (whitespace around
/// it allowed) nested at most [`MAX_DEPTH`] deep, handing each top-level
/// member to `each` in the order sent (which may decline the text by
/// returning `None`), and, when `inner` names a member `(name, nested)`
/// whose value is an object, finding its members and those of its own
/// member `nested` ([`InnerSpans`]). `None` for anything else, which the
/// caller parses the slow way.
pub(crate) fn object<'a>(
    text: &'a str,
    inner: Option<(&str, &str)>,
    mut each: impl FnMut(Member<'a>) -> Option<()>,
) -> Option<Checked<'a>> {
    let bytes = text.as_bytes();
    let start = skip_ws(bytes, 0);
    if bytes.get(start) != Some(&b'{') {
        return None;
    }
    let mut checked = Checked::default();
    let mut walk = Walk { bytes, depth: 0 };
    let end = walk.object(start, |w, found| {
        let at = found.value_start;
        let end = match inner {
            Some((name, nested)) if found.is(bytes, name) && bytes.get(at) == Some(&b'{') => {
                let (end, spans) = w.inner(at, nested)?;
                checked.inner = Some((&text[at..end], spans));
                end
            }
            _ => w.value(at)?,
        };
        each(found.member(text, end))?;
        Some(end)
    })?;
    (skip_ws(bytes, end) == bytes.len()).then_some(checked)
}

/// A member as the walk meets it: its name's span (quotes included) and
/// where its value starts.
struct Found {
    quoted: Range<usize>,
    escaped: bool,
    value_start: usize,
}

impl Found {
    /// Whether the member's name, sent without escapes, is `name`.
    fn is(&self, bytes: &[u8], name: &str) -> bool {
        !self.escaped
            && bytes.get(self.quoted.start + 1..self.quoted.end - 1) == Some(name.as_bytes())
    }

    /// The member, its value ending at `value_end`.
    fn member(self, text: &str, value_end: usize) -> Member<'_> {
        Member {
            quoted: &text[self.quoted],
            escaped: self.escaped,
            // Checked by the walk: valid JSON.
            value: Valid::assume(&text[self.value_start..value_end]),
        }
    }

    /// The member's span, its value ending at `value_end`, as offsets
    /// from `base`; `None` when they do not fit a [`Span`] (the text is
    /// then left to the slow path).
    fn span(self, value_end: usize, base: usize) -> Option<Span> {
        Span::new(
            self.quoted.start - base..self.quoted.end - base,
            self.escaped,
            self.value_start - base..value_end - base,
        )
    }
}

/// The walk: the text and how deep it is.
struct Walk<'a> {
    bytes: &'a [u8],
    depth: usize,
}

impl Walk<'_> {
    /// Just past the value that starts at `at`, which must be one.
    fn value(&mut self, at: usize) -> Option<usize> {
        let bytes = self.bytes;
        match *bytes.get(at)? {
            b'"' => string(bytes, at).map(|(end, _)| end),
            b'{' => self.object(at, |w, m| w.value(m.value_start)),
            b'[' => self.array(at),
            b't' => literal(bytes, at, b"true"),
            b'f' => literal(bytes, at, b"false"),
            b'n' => literal(bytes, at, b"null"),
            b'-' | b'0'..=b'9' => number(bytes, at),
            _ => None,
        }
    }

    /// Just past the object whose `{` is at `at`, with its members' spans
    /// and those of its member `nested` (offsets from `at`; see
    /// [`InnerSpans`]).
    fn inner(&mut self, at: usize, nested: &str) -> Option<(usize, InnerSpans)> {
        let bytes = self.bytes;
        let mut members = Vec::with_capacity(SPANS_CAPACITY);
        let mut found_nested = None;
        let mut plain = true;
        let end = self.object(at, |w, found| {
            plain &= !found.escaped;
            let start = found.value_start;
            let end = if found.is(bytes, nested) {
                if bytes.get(start) == Some(&b'{') {
                    let mut spans = Vec::with_capacity(SPANS_CAPACITY);
                    let end = w.object(start, |w, f| {
                        let end = w.value(f.value_start)?;
                        spans.push(f.span(end, at)?);
                        Some(end)
                    })?;
                    found_nested = Some(spans);
                    end
                } else {
                    // The last one is the one read: not an object.
                    found_nested = None;
                    w.value(start)?
                }
            } else {
                w.value(start)?
            };
            members.push(found.span(end, at)?);
            Some(end)
        })?;
        let nested = found_nested.filter(|_| plain);
        Some((end, InnerSpans { members, nested }))
    }

    /// One level deeper, unless that is too deep.
    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// Just past the object whose `{` is at `at`; `member` reads each
    /// member's value (and returns just past it).
    fn object(
        &mut self,
        at: usize,
        mut member: impl FnMut(&mut Self, Found) -> Option<usize>,
    ) -> Option<usize> {
        self.enter()?;
        let bytes = self.bytes;
        let mut i = skip_ws(bytes, at + 1);
        if bytes.get(i) == Some(&b'}') {
            self.depth -= 1;
            return Some(i + 1);
        }
        loop {
            if bytes.get(i) != Some(&b'"') {
                return None;
            }
            let (name_end, escaped) = string(bytes, i)?;
            let colon = skip_ws(bytes, name_end);
            if bytes.get(colon) != Some(&b':') {
                return None;
            }
            let found = Found {
                quoted: i..name_end,
                escaped,
                value_start: skip_ws(bytes, colon + 1),
            };
            i = skip_ws(bytes, member(self, found)?);
            match bytes.get(i) {
                Some(b',') => i = skip_ws(bytes, i + 1),
                Some(b'}') => {
                    self.depth -= 1;
                    return Some(i + 1);
                }
                _ => return None,
            }
        }
    }

    /// Just past the array whose `[` is at `at`.
    fn array(&mut self, at: usize) -> Option<usize> {
        self.enter()?;
        let bytes = self.bytes;
        let mut i = skip_ws(bytes, at + 1);
        if bytes.get(i) == Some(&b']') {
            self.depth -= 1;
            return Some(i + 1);
        }
        loop {
            i = skip_ws(bytes, self.value(i)?);
            match bytes.get(i) {
                Some(b',') => i = skip_ws(bytes, i + 1),
                Some(b']') => {
                    self.depth -= 1;
                    return Some(i + 1);
                }
                _ => return None,
            }
        }
    }
}

/// Just past the string whose opening quote is at `at`, and whether it
/// has escapes, when it is a valid JSON string: no control character
/// (U+0000 to U+001F) unescaped, and only the escapes JSON defines
/// (`\uXXXX` with any four hex digits: a lone surrogate is valid JSON
/// text, which `serde_json` accepts in a value it does not decode).
fn string(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
    const QUOTE: u64 = ONES * b'"' as u64;
    const BACKSLASH: u64 = ONES * b'\\' as u64;
    let mut i = at + 1;
    let mut escaped = false;
    loop {
        i = first_hit(
            bytes,
            i,
            |x| zeros(x ^ QUOTE) | zeros(x ^ BACKSLASH) | below(x, 0x20),
            |x| x == b'"' || x == b'\\' || x < 0x20,
        )?;
        match bytes[i] {
            b'"' => return Some((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                i += match *bytes.get(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                    b'u' if bytes.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) => 6,
                    _ => return None,
                };
            }
            // A control character.
            _ => return None,
        }
    }
}

/// Just past `word` when it is at `at`.
fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    (bytes.get(at..at + word.len())? == word).then_some(at + word.len())
}

/// Just past the number at `at`:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` (RFC 8259, section 6). What follows it is the
/// caller's to check (`01` is `0` then a stray `1`).
fn number(bytes: &[u8], at: usize) -> Option<usize> {
    let digits = |from: usize| {
        from + bytes
            .get(from..)
            .map_or(0, |t| t.iter().take_while(|b| b.is_ascii_digit()).count())
    };
    let mut i = at + usize::from(bytes.get(at) == Some(&b'-'));
    i = match bytes.get(i)? {
        b'0' => i + 1,
        // The first digit is one of the run `digits` counts.
        b'1'..=b'9' => digits(i),
        _ => return None,
    };
    if bytes.get(i) == Some(&b'.') {
        let end = digits(i + 1);
        if end == i + 1 {
            return None;
        }
        i = end;
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = bytes.get(i) {
            i += 1;
        }
        let end = digits(i);
        if end == i {
            return None;
        }
        i = end;
    }
    Some(i)
}

#[cfg(test)]
mod tests;
