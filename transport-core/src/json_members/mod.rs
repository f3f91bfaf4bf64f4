//! The members of a JSON object that has been validated already, located
//! without parsing it again.
//!
//! A request's `params` is validated once, when the JSON-RPC envelope is
//! parsed (it is kept as a [`RawValue`], which `serde_json` only builds
//! from valid JSON). What reads it afterwards (the engine's header checks,
//! a tool registry looking for `name` and `arguments`, the result
//! decoration looking for `resultType` and `_meta`) wants where each member
//! is, not the members parsed: running `serde_json` again for that
//! re-validated every byte, three times per `tools/call` (about 6,000
//! instructions of a stateless request: docs/PERFORMANCE.md, session 12).
//! This module walks the text once, looking for quotes and brackets eight
//! bytes at a time, and hands out each member's name and its value's
//! exact text.
//!
//! It is written here rather than taken from a crate because none of the
//! JSON crates offers this: `serde_json`'s borrowed `RawValue` members
//! re-validate, and the SIMD parsers validate too (that is their job).
//!
//! Soundness of the shortcut rests on the input being valid JSON, so the
//! entry points take what guarantees it: a [`RawValue`], or a member's
//! value found by this module (a part of valid JSON that is itself a JSON
//! value is valid), or, where a span was kept as a plain `&str`, the
//! caller's word ([`Valid::assume`]). On valid input the spans are exact,
//! which the property tests compare with `serde_json`'s own reading;
//! nothing here panics on any input (also tested).

use std::borrow::Cow;

use serde_json::value::RawValue;

mod index;
pub(crate) mod strict;

pub use index::ObjectIndex;

/// A JSON value's text, valid JSON by construction (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Valid<'a>(&'a str);

impl<'a> From<&'a RawValue> for Valid<'a> {
    fn from(raw: &'a RawValue) -> Valid<'a> {
        Valid(raw.get())
    }
}

impl<'a> Valid<'a> {
    /// The value's text, exactly as it was sent (no surrounding
    /// whitespace when it is a member's value).
    pub fn text(self) -> &'a str {
        self.0
    }

    /// The same value without the whitespace around it (JSON allows some
    /// before and after a value; a `RawValue` built from text keeps it).
    pub fn trimmed(self) -> Valid<'a> {
        Valid(self.0.trim_matches([' ', '\t', '\n', '\r']))
    }

    /// The value as a string when it is a JSON string: borrowed when it
    /// was sent without escapes, decoded otherwise; `None` for any other
    /// value.
    pub fn as_str(self) -> Option<Cow<'a, str>> {
        let inner = self.0.strip_prefix('"')?.strip_suffix('"')?;
        if inner.contains('\\') {
            serde_json::from_str(self.0).ok().map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(inner))
        }
    }

    /// The members of this value, in the order they were sent, when it is
    /// a JSON object; `None` for any other value.
    pub fn object(self) -> Option<Members<'a>> {
        let start = skip_ws(self.0.as_bytes(), 0);
        (self.0.as_bytes().get(start) == Some(&b'{')).then_some(Members {
            text: self.0,
            pos: start + 1,
        })
    }

    /// Text the caller knows to be valid JSON without a type to show it:
    /// a span this module handed out and that was kept as a `&str` (a
    /// member's value stored by offsets, say). On text that is not valid
    /// JSON the walk's answers are unspecified, but it never panics.
    pub fn assume(text: &'a str) -> Valid<'a> {
        Valid(text)
    }
}

/// One member of an object: its name as sent and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member<'a> {
    /// The name with its quotes.
    quoted: &'a str,
    /// Whether the name has a backslash (found by the walk).
    escaped: bool,
    value: Valid<'a>,
}

impl<'a> Member<'a> {
    /// The name as sent, between its quotes: escapes not decoded.
    pub fn raw_name(&self) -> &'a str {
        &self.quoted[1..self.quoted.len() - 1]
    }

    /// Whether the name was sent with escapes (`"n\u0061me"`), so that
    /// [`raw_name`](Self::raw_name) is not the name.
    pub fn is_escaped(&self) -> bool {
        self.escaped
    }

    /// The name, decoded: borrowed unless it was sent with escapes.
    ///
    /// A name whose escapes are not Unicode text (a lone surrogate such as
    /// `"\uDD61"`, which JSON's grammar allows and `serde_json` accepts
    /// in a `RawValue` but will not decode) is its text as sent, quotes
    /// included: it equals a decoded name only if that name holds those
    /// very quotes and backslashes (never a name this workspace looks
    /// for), and two such names are the same only when sent alike. Found
    /// by the `json_members` fuzz target.
    pub fn name(&self) -> Cow<'a, str> {
        if self.is_escaped() {
            match serde_json::from_str::<String>(self.quoted) {
                Ok(name) => Cow::Owned(name),
                Err(_) => Cow::Borrowed(self.quoted),
            }
        } else {
            Cow::Borrowed(self.raw_name())
        }
    }

    /// Whether the (decoded) name is `name`.
    pub fn is(&self, name: &str) -> bool {
        if self.is_escaped() {
            self.name() == name
        } else {
            self.raw_name() == name
        }
    }

    /// The value.
    pub fn value(&self) -> Valid<'a> {
        self.value
    }
}

/// Where one member is in an object's text: byte offsets, kept as `u32`.
///
/// Why `u32`: a span is 20 bytes instead of 40, so the few members of a
/// request's `params` (and of its `_meta`) fit in one allocation of at
/// most 128 bytes ([`SPANS_CAPACITY`]). The binary's allocator (mimalloc,
/// through the `mimalloc` crate, which asks for every block with its
/// alignment) serves an aligned block of more than 128 bytes from its
/// fast path only while that size's free list lasts; once it is empty,
/// every such allocation over-allocates from the next size class and the
/// list is never refilled, ~140 instructions an allocation
/// (docs/PERFORMANCE.md, session 30). An object longer than `u32::MAX`
/// bytes has no spans: [`Span::new`] refuses its offsets, and whoever
/// indexes it walks it instead.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    /// The name with its quotes.
    quoted: std::ops::Range<u32>,
    escaped: bool,
    value: std::ops::Range<u32>,
}

/// How many spans an index of a request's members is made with: six
/// spans (120 bytes) stay within the allocator's 128-byte fast path (see
/// [`Span`]) and hold, without growing, the members the 2026-07-28
/// schema defines for a request's `params` (at most five: a `tools/call`'s
/// `name`, `arguments`, `_meta`, `inputResponses`, `requestState`) or for
/// its `_meta` (five).
pub(crate) const SPANS_CAPACITY: usize = 6;

// The bound the capacity is chosen for (see [`Span`]).
const _: () = assert!(std::mem::size_of::<Span>() * SPANS_CAPACITY <= 128);

impl Span {
    /// The span of a member whose quoted name is at `quoted` and whose
    /// value is at `value` (after the name, as in the text); `None` when
    /// an offset does not fit a `u32`. The value's end is the largest
    /// offset, so it is the one checked.
    fn new(
        quoted: std::ops::Range<usize>,
        escaped: bool,
        value: std::ops::Range<usize>,
    ) -> Option<Span> {
        debug_assert!(quoted.start <= quoted.end && quoted.end <= value.start);
        debug_assert!(value.start <= value.end);
        let end = u32::try_from(value.end).ok()?;
        // Each below `end`: they fit.
        let narrow = |offset: usize| offset as u32;
        Some(Span {
            quoted: narrow(quoted.start)..narrow(quoted.end),
            escaped,
            value: narrow(value.start)..end,
        })
    }

    /// The name's offsets, quotes excluded.
    fn name(&self) -> std::ops::Range<usize> {
        self.quoted.start as usize + 1..self.quoted.end as usize - 1
    }

    /// The member this marks in `text`, the valid JSON it was found in.
    #[inline]
    fn member<'a>(&self, text: &'a str) -> Member<'a> {
        Member {
            quoted: &text[self.quoted.start as usize..self.quoted.end as usize],
            escaped: self.escaped,
            value: self.value(text),
        }
    }

    /// The member's value in `text` alone (no slice made of its name).
    #[inline]
    fn value<'a>(&self, text: &'a str) -> Valid<'a> {
        // A member's value in valid JSON: valid JSON.
        Valid::assume(&text[self.value.start as usize..self.value.end as usize])
    }
}

/// The members of an object, in order (see [`Valid::object`]). Names are
/// not deduplicated: an object that repeats a name yields it twice, and
/// the reader decides (JSON leaves it open: RFC 8259, section 4).
#[derive(Clone, Debug)]
pub struct Members<'a> {
    text: &'a str,
    /// The next byte to read, just after the `{` or after a member's value.
    pos: usize,
}

impl<'a> Iterator for Members<'a> {
    type Item = Member<'a>;

    fn next(&mut self) -> Option<Member<'a>> {
        let bytes = self.text.as_bytes();
        let mut at = skip_ws(bytes, self.pos);
        if bytes.get(at) == Some(&b',') {
            at = skip_ws(bytes, at + 1);
        }
        if bytes.get(at) != Some(&b'"') {
            // `}` (the end), or input that is not what it claims: stop.
            self.pos = bytes.len();
            return None;
        }
        let found = string_end(bytes, at).and_then(|(name_end, escaped)| {
            let colon = skip_ws(bytes, name_end);
            let start = skip_ws(bytes, colon + 1);
            let end = (bytes.get(colon) == Some(&b':'))
                .then(|| value_end(bytes, start))
                .flatten()?;
            Some((name_end, escaped, start, end))
        });
        let Some((name_end, escaped, start, end)) = found else {
            self.pos = bytes.len();
            return None;
        };
        self.pos = end;
        Some(Member {
            quoted: &self.text[at..name_end],
            escaped,
            value: Valid(&self.text[start..end]),
        })
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The index just past the string that starts (with its quote) at `at`,
/// and whether it has escapes.
fn string_end(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
    let mut i = at + 1;
    let mut escaped = false;
    loop {
        i = find(bytes, i, [b'"', b'\\', b'"'])?;
        if bytes[i] == b'"' {
            return Some((i + 1, escaped));
        }
        // A backslash escapes the next byte (`\"`, `\\`, `\u…`: the
        // four hex digits need no care).
        escaped = true;
        i += 2;
    }
}

/// The index of the first of `wanted` in `bytes` at or after `from`.
///
/// Eight bytes at a time (SWAR), not `memchr`: the strings and objects of
/// a request are short, and a `memchr` call costs more to set up than the
/// few bytes it skips. Measured on a stateless `tools/call` (its params
/// walked twice, its result once): ~5,200 instructions with
/// `memchr2`/`memchr3`, ~3,700 byte by byte, ~3,100 this way.
fn find(bytes: &[u8], from: usize, wanted: [u8; 3]) -> Option<usize> {
    let [a, b, c] = wanted.map(|w| ONES * u64::from(w));
    first_hit(
        bytes,
        from,
        |x| zeros(x ^ a) | zeros(x ^ b) | zeros(x ^ c),
        |x| wanted.contains(&x),
    )
}

/// One in each byte of a word.
const ONES: u64 = u64::from_ne_bytes([1; 8]);
/// The high bit of each byte of a word.
const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);

/// The high bit of each byte that is zero in `x`: exact for the lowest
/// such byte (borrows only run upwards), which is all [`first_hit`] reads.
fn zeros(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGH
}

/// The high bit of each byte of `x` below `n` (`n` ≤ 0x80): exact for the
/// lowest such byte, as [`zeros`] is.
fn below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH
}

/// The index of the first byte at or after `from` that `byte_hit` picks,
/// eight bytes at a time: `word_hits` marks (in each byte's high bit) the
/// bytes of a little-endian word it picks, exactly for the lowest one
/// (what [`zeros`] and [`below`] give, and any `|` of them: a mark that
/// is not a hit sits above a hit of the same test). The tail shorter than
/// a word goes byte by byte.
#[inline(always)]
fn first_hit(
    bytes: &[u8],
    from: usize,
    word_hits: impl Fn(u64) -> u64,
    byte_hit: impl Fn(u8) -> bool,
) -> Option<usize> {
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let hits = word_hits(u64::from_le_bytes(word));
        if hits != 0 {
            return Some(i + hits.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    let tail = bytes.get(i..)?;
    tail.iter().position(|&x| byte_hit(x)).map(|p| i + p)
}

/// The index just past the value that starts at `at`.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at).map(|(end, _)| end),
        b'{' => nested_end(bytes, at, b'{', b'}'),
        b'[' => nested_end(bytes, at, b'[', b']'),
        // A number, `true`, `false` or `null`: up to what follows it.
        _ => {
            let len = bytes[at..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(bytes.len() - at);
            (len > 0).then_some(at + len)
        }
    }
}

/// The index just past the object or array that starts at `at`. In valid
/// JSON the brackets of one kind balance outside strings, so only those
/// and the quotes need looking at.
fn nested_end(bytes: &[u8], at: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    loop {
        i = find(bytes, i, [b'"', open, close])?;
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i)?.0;
                continue;
            }
            b if b == open => depth += 1,
            _ => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn members(text: &str) -> Vec<(String, String)> {
        let raw = RawValue::from_string(text.to_owned()).expect("valid JSON");
        Valid::from(&*raw)
            .object()
            .expect("an object")
            .map(|m| (m.name().into_owned(), m.value().text().to_owned()))
            .collect()
    }

    #[test]
    fn members_are_exact_spans_in_order() {
        let text = r#" { "name" : "a\"}" , "arguments":{"a":[1, {"]":"["}],"b":"}"} ,
            "n":-1.5e3,"t":true ,"z":null,"e":{},"l":[],"s":"\\"}  "#;
        assert_eq!(
            members(text),
            [
                ("name", r#""a\"}""#),
                ("arguments", r#"{"a":[1, {"]":"["}],"b":"}"}"#),
                ("n", "-1.5e3"),
                ("t", "true"),
                ("z", "null"),
                ("e", "{}"),
                ("l", "[]"),
                ("s", r#""\\""#),
            ]
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
        );
    }

    #[test]
    fn names_sent_with_escapes_are_decoded_and_repeats_kept() {
        let raw = RawValue::from_string(r#"{"n\u0061me":1,"name":2,"a\\b":3}"#.into()).unwrap();
        let all: Vec<_> = Valid::from(&*raw).object().unwrap().collect();
        assert_eq!(all.len(), 3);
        assert!(all[0].is_escaped());
        assert_eq!(all[0].raw_name(), r"n\u0061me");
        assert_eq!(all[0].name(), "name");
        assert!(all[0].is("name") && all[1].is("name"));
        assert!(!all[1].is_escaped());
        assert!(matches!(all[1].name(), Cow::Borrowed("name")));
        assert_eq!(all[2].name(), r"a\b");
        assert!(all[2].is(r"a\b") && !all[2].is(r"a\\b"));
        assert!(!all[0].is("nam") && !all[1].is("names"));
    }

    #[test]
    fn strings_are_read_borrowed_unless_escaped() {
        let raw = RawValue::from_string(
            r#"{"a":"add","b":"\u0061d\"d","c":7,"d":null,"e":"","f":["x"]}"#.into(),
        )
        .unwrap();
        let v: Vec<_> = Valid::from(&*raw)
            .object()
            .unwrap()
            .map(|m| m.value().as_str())
            .collect();
        assert!(matches!(v[0], Some(Cow::Borrowed("add"))));
        assert!(matches!(&v[1], Some(Cow::Owned(s)) if s == "ad\"d"));
        assert_eq!(v[2], None);
        assert_eq!(v[3], None);
        assert!(matches!(v[4], Some(Cow::Borrowed(""))));
        assert_eq!(v[5], None);
    }

    /// JSON allows escapes that are not Unicode text (a lone surrogate);
    /// such a name is kept as sent and matches no decodable name, and such
    /// a string value is not read as a string.
    #[test]
    fn lone_surrogates_are_kept_as_sent() {
        let raw =
            RawValue::from_string(r#"{"\uDD61":"\uD800","a\uDD61":1,"\uDD61":2}"#.into()).unwrap();
        let all: Vec<_> = Valid::from(&*raw).object().unwrap().collect();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].name(), r#""\uDD61""#);
        assert_eq!(all[1].name(), r#""a\uDD61""#);
        assert_eq!(all[0].name(), all[2].name(), "sent alike, the same name");
        assert!(!all[0].is("") && !all[0].is("\u{fffd}") && !all[0].is(r"\uDD61"));
        assert_eq!(all[0].value().as_str(), None);
    }

    #[test]
    fn spans_hold_offsets_up_to_u32_max_and_refuse_larger() {
        let max = u32::MAX as usize;
        let span = Span::new(max - 9..max - 4, true, max - 2..max).expect("fits");
        assert_eq!(span.quoted, u32::MAX - 9..u32::MAX - 4);
        assert_eq!(span.value, u32::MAX - 2..u32::MAX);
        assert!(span.escaped);
        assert_eq!(span.name(), max - 8..max - 5);
        assert_eq!(Span::new(0..3, false, 4..max + 1), None);
        assert_eq!(Span::new(max + 1..max + 4, false, max + 5..max + 6), None);
        let text = r#"{"ab":[1]}"#;
        let span = Span::new(1..5, false, 6..9).unwrap();
        assert_eq!(span.member(text).raw_name(), "ab");
        assert_eq!(span.member(text).value().text(), "[1]");
        assert_eq!(&text[span.name()], "ab");
    }

    #[test]
    fn only_objects_have_members() {
        for text in ["[1]", "\"{}\"", "3", "null", "true"] {
            let raw = RawValue::from_string(text.into()).unwrap();
            assert!(Valid::from(&*raw).object().is_none(), "{text}");
        }
        assert_eq!(members(" {} ").len(), 0);
        assert_eq!(members("{ \n }").len(), 0);
    }

    #[test]
    fn a_member_value_is_valid_json_and_walks_again() {
        let raw = RawValue::from_string(r#"{"_meta":{"k":{"x":1}},"v":2}"#.into()).unwrap();
        let meta = Valid::from(&*raw).object().unwrap().next().unwrap();
        let inner: Vec<_> = meta.value().object().unwrap().collect();
        assert_eq!(inner.len(), 1);
        assert_eq!(inner[0].value().text(), r#"{"x":1}"#);
        let value: Value = serde_json::from_str(inner[0].value().text()).unwrap();
        assert_eq!(value, json!({"x": 1}));
    }

    /// Input that is not valid JSON (impossible through the public entry
    /// points) stops the walk; it never panics or loops.
    #[test]
    fn broken_text_ends_the_walk() {
        for text in [
            "{",
            "{\"",
            "{\"a",
            "{\"a\"",
            "{\"a\":",
            "{\"a\" 1}",
            "{\"a\":\"x",
            "{\"a\":{",
            "{\"a\":[1",
            "{\"a\":\"\\",
            "{1:2}",
        ] {
            let n = Valid::assume(text).object().map_or(0, Iterator::count);
            assert!(n <= 1, "{text}: {n}");
        }
        // A member without a value ends the walk before it; a scalar at
        // the very end runs to the end of the text.
        for text in ["{\"a\":}", "{\"a\":,\"b\":1}", "{\"a\": ]"] {
            assert_eq!(Valid::assume(text).object().unwrap().count(), 0, "{text}");
        }
        let mut m = Valid::assume("{\"a\":12345").object().unwrap();
        assert_eq!(m.next().map(|m| m.value().text()), Some("12345"));
        assert_eq!(m.next(), None);
        let mut m = Valid::assume("{\"a\":1 x").object().unwrap();
        assert_eq!(m.next().map(|m| m.value().text()), Some("1"));
        assert_eq!(m.next(), None);
        assert_eq!(m.next(), None, "stays ended");
    }

    /// Any JSON value, nested a few levels, with strings full of the
    /// characters a walk must not be fooled by (also used by `strict`).
    pub(super) fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            "[\"\\\\{}\\[\\],: ]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-z\"\\\\{}]{0,4}", inner), 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// On any valid object (names repeated, nested, escaped, spaced
        /// out) the walk reads what `serde_json` reads.
        #[test]
        fn agrees_with_serde_json(
            entries in prop::collection::vec(("[a-z\"\\\\é{}]{0,5}", json_value()), 0..8),
            gaps in prop::collection::vec(any::<u8>(), 1..16),
        ) {
            // Built by hand so that names may repeat.
            let body: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}:{}", Value::from(k.clone()), v))
                .collect();
            let text = mcp_test_support::json::spaced(&format!("{{{}}}", body.join(",")), &gaps);
            prop_assert_eq!(members(&text), mcp_test_support::json::members(&text));
        }

        /// The eight-at-a-time search finds what a byte-by-byte one finds,
        /// at every offset (bytes above 0x7f and near misses included).
        #[test]
        fn find_is_a_byte_search(
            bytes in prop::collection::vec(prop_oneof![
                Just(b'"'), Just(b'\\'), Just(b'!'), Just(b'#'), Just(0u8), Just(0xa2u8),
                any::<u8>(),
            ], 0..40),
            from in 0usize..44,
        ) {
            let wanted = [b'"', b'\\', 0xa2];
            let naive = bytes
                .get(from..)
                .and_then(|t| t.iter().position(|b| wanted.contains(b)))
                .map(|p| from + p);
            prop_assert_eq!(find(&bytes, from, wanted), naive);
        }

        /// Nothing panics, whatever the text.
        #[test]
        fn never_panics(text in "[{}\\[\\]\",:\\\\a1 ]{0,40}") {
            if let Some(m) = Valid::assume(&text).object() {
                let _ = m.take(64).count();
            }
        }
    }
}
