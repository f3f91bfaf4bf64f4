//! [`ObjectIndex`]: one JSON object's members, found once and kept as
//! offsets, for whoever reads them after the walk.

use serde_json::value::RawValue;

use super::strict::InnerSpans;
use super::{Member, Span, Valid};

/// A JSON object's members, found once and kept as offsets into a copy of
/// its text, so that whoever holds the index reads a member without
/// walking the text again. Members are in the order sent, repeats
/// included, as [`Valid::object`] yields them.
///
/// Why it exists: the 2026-07-28 engine walks a request's `params` to
/// check it (`_meta`, the `Mcp-Name` header against `name`, the MRTR
/// binding) and keeps what it found; the handler behind it (`mcp-tools`
/// reading a `tools/call`'s `name` and `arguments`) used to walk the same
/// text again, skipping the same `_meta` (~1,000 instructions of a
/// stateless call: docs/PERFORMANCE.md, session 15). The engine hands its
/// index to the handler in the request's context
/// ([`RequestContext::params_index`](crate::handler::RequestContext::params_index)),
/// and a reader uses it only when it [`describes`](ObjectIndex::describes)
/// the very params it was given, compared by content: a layer that
/// rewrote the params before passing them on (keeping the context) gets
/// no index and walks what it was given.
///
/// An index made by the envelope reader's checked walk also knows the
/// members of the `_meta` object in it ([`meta_members`](ObjectIndex::meta_members)),
/// which every 2026-07-28 request carries and the engine reads (~650
/// instructions a request walked again: docs/PERFORMANCE.md, session 25).
/// That is a cache: two indexes of the same text are equal whether they
/// know it or not.
#[derive(Clone, Debug)]
pub struct ObjectIndex {
    /// The object's text, as sent (empty for the index of no object).
    text: Box<str>,
    /// Where its members are; `None` for an object too long for a
    /// [`Span`]'s offsets (over 4 GiB), which is walked whenever it is read.
    members: Option<Vec<Span>>,
    /// The members of the value [`get`](Self::get)`("_meta")` gives, when
    /// known to be an object (offsets into `text`).
    meta: Option<Vec<Span>>,
}

impl PartialEq for ObjectIndex {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.members == other.members
    }
}

impl Eq for ObjectIndex {}

impl Default for ObjectIndex {
    /// The index of no object: no members.
    fn default() -> ObjectIndex {
        ObjectIndex {
            text: Box::default(),
            members: Some(Vec::new()),
            meta: None,
        }
    }
}

impl ObjectIndex {
    /// The index of `value` when it is a JSON object; `None` for any other
    /// value. The text is copied once; the walk is
    /// [`Valid::object`]'s.
    pub fn of(value: Valid<'_>) -> Option<ObjectIndex> {
        let members = value.object()?;
        let text = value.text();
        // The walk lends slices of `text`: a slice's offset in `text` is
        // its distance from `text`'s first byte.
        let base = text.as_ptr() as usize;
        let span = |part: &str| {
            let start = part.as_ptr() as usize - base;
            start..start + part.len()
        };
        // `None` (walked when read) when an offset does not fit a span.
        let members = members
            .map(|m| Span::new(span(m.quoted), m.escaped, span(m.value.text())))
            .collect();
        Some(ObjectIndex {
            text: text.into(),
            members,
            meta: None,
        })
    }

    /// The index of `text`, a JSON object whose members (and those of its
    /// `_meta`, when known) [`strict`](super::strict) found, offsets into
    /// `text`.
    pub(crate) fn from_spans(text: &str, spans: InnerSpans) -> ObjectIndex {
        ObjectIndex {
            text: text.into(),
            members: Some(spans.members),
            meta: spans.nested,
        }
    }

    /// The index of a request's `params`: empty (no members) when they are
    /// absent or not an object.
    pub fn of_params(params: Option<&RawValue>) -> ObjectIndex {
        params
            .and_then(|p| ObjectIndex::of(Valid::from(p)))
            .unwrap_or_default()
    }

    /// The object's text, as it was indexed.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether this is the index of `params`: their text is the text
    /// indexed, byte for byte (absent params are described by the empty
    /// index). A reader handed an index checks this before trusting it.
    pub fn describes(&self, params: Option<&RawValue>) -> bool {
        params.map_or("", RawValue::get) == &*self.text
    }

    /// The members, in the order sent, exactly as [`Valid::object`] walks
    /// them, without walking.
    #[inline]
    pub fn members(&self) -> impl DoubleEndedIterator<Item = Member<'_>> + '_ {
        match &self.members {
            Some(spans) => IndexMembers::Spans {
                text: &self.text,
                spans: spans.iter(),
            },
            // Too long for spans: walked (into a `Vec`, since the walk
            // goes forwards only).
            None => IndexMembers::Walked(self.walk().collect::<Vec<_>>().into_iter()),
        }
    }

    /// The members, walked in the text (which is one valid JSON object,
    /// or empty for the index of no object).
    fn walk(&self) -> impl Iterator<Item = Member<'_>> + '_ {
        Valid::assume(&self.text).object().into_iter().flatten()
    }

    /// The value of the member named `name` (decoded); a name sent more
    /// than once is its last value, as a JSON object parsed into a map
    /// reads it.
    pub fn get(&self, name: &str) -> Option<Valid<'_>> {
        // Names sent without escapes (all but a few) compared as bytes:
        // no `Member` built, no UTF-8 boundary checks (the engine looks up
        // four or five members of every request).
        let Some(members) = &self.members else {
            return self.walk().filter(|m| m.is(name)).last().map(|m| m.value);
        };
        let bytes = self.text.as_bytes();
        let span = members.iter().rev().find(|s| {
            if s.escaped {
                self.member(s).is(name)
            } else {
                bytes.get(s.name()) == Some(name.as_bytes())
            }
        })?;
        Some(span.value(&self.text))
    }

    /// The members of the object [`get`](Self::get)`("_meta")` gives, in
    /// order, when the walk that made this index found them on its way
    /// (the envelope reader's, for params whose member names have no
    /// escapes); `None` when not known: walk `get("_meta")` then.
    pub fn meta_members(&self) -> Option<impl Iterator<Item = Member<'_>> + '_> {
        let meta = self.meta.as_ref()?;
        Some(meta.iter().map(|s| self.member(s)))
    }

    fn member(&self, s: &Span) -> Member<'_> {
        s.member(&self.text)
    }
}

/// [`ObjectIndex::members`]: from the spans, or walked.
enum IndexMembers<'a> {
    Spans {
        text: &'a str,
        spans: std::slice::Iter<'a, Span>,
    },
    Walked(std::vec::IntoIter<Member<'a>>),
}

impl<'a> Iterator for IndexMembers<'a> {
    type Item = Member<'a>;

    fn next(&mut self) -> Option<Member<'a>> {
        match self {
            IndexMembers::Spans { text, spans } => spans.next().map(|s| s.member(text)),
            IndexMembers::Walked(members) => members.next(),
        }
    }
}

impl DoubleEndedIterator for IndexMembers<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            IndexMembers::Spans { text, spans } => spans.next_back().map(|s| s.member(text)),
            IndexMembers::Walked(members) => members.next_back(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("valid JSON")
    }

    #[test]
    fn members_are_the_walks() {
        let p = raw(r#"{"name":"add","n\u0061me":1,"arguments":{"a":[1,"}"]},"_meta":{}}"#);
        let index = ObjectIndex::of_params(Some(&p));
        let walked: Vec<_> = Valid::from(&*p).object().unwrap().collect();
        let indexed: Vec<_> = index.members().collect();
        assert_eq!(indexed, walked);
        let mut backwards: Vec<_> = index.members().rev().collect();
        backwards.reverse();
        assert_eq!(backwards, walked);
        assert_eq!(index.text(), p.get());
        assert_eq!(
            index.get("name").map(Valid::text),
            Some("1"),
            "the last one"
        );
        assert_eq!(
            index.get("arguments").map(Valid::text),
            Some(r#"{"a":[1,"}"]}"#)
        );
        assert_eq!(index.get("nam"), None);
    }

    #[test]
    fn describes_only_its_own_text() {
        let p = raw(r#"{"name":"add","arguments":{"a":1}}"#);
        let index = ObjectIndex::of_params(Some(&p));
        assert!(index.describes(Some(&p)));
        assert!(index.describes(Some(&raw(r#"{"name":"add","arguments":{"a":1}}"#))));
        // The same length, one byte changed: not described.
        assert!(!index.describes(Some(&raw(r#"{"name":"add","arguments":{"a":2}}"#))));
        assert!(!index.describes(Some(&raw(r#"{"name":"add","arguments":{}}"#))));
        assert!(!index.describes(None));
        let none = ObjectIndex::of_params(None);
        assert!(none.describes(None) && !none.describes(Some(&p)));
        assert_eq!(none.members().count(), 0);
    }

    #[test]
    fn only_objects_are_indexed() {
        for text in ["[1]", "\"{}\"", "3", "null"] {
            assert_eq!(ObjectIndex::of(Valid::from(&*raw(text))), None, "{text}");
            let empty = ObjectIndex::of_params(Some(&raw(text)));
            assert_eq!(empty.members().count(), 0, "{text}");
            assert!(!empty.describes(Some(&raw(text))), "{text}");
        }
        let empty = ObjectIndex::of(Valid::from(&*raw(" {} "))).unwrap();
        assert_eq!(empty.members().count(), 0);
    }

    /// The index of an object too long for spans, as [`ObjectIndex::of`]
    /// makes it (its members walked whenever read).
    fn walked_index(params: &RawValue) -> ObjectIndex {
        ObjectIndex {
            text: params.get().into(),
            members: None,
            meta: None,
        }
    }

    #[test]
    fn an_index_without_spans_is_read_by_walking() {
        let p = raw(r#"{"name":"add","n\u0061me":1,"arguments":{"a":[1,"}"]},"_meta":{}}"#);
        let index = walked_index(&p);
        let walked: Vec<_> = Valid::from(&*p).object().unwrap().collect();
        assert_eq!(index.members().collect::<Vec<_>>(), walked);
        assert_eq!(index.members().rev().count(), 4);
        assert_eq!(
            index.get("name").map(Valid::text),
            Some("1"),
            "the last one"
        );
        assert_eq!(index.get("_meta").map(Valid::text), Some("{}"));
        assert_eq!(index.get("nam"), None);
        assert!(index.meta_members().is_none());
        assert!(index.describes(Some(&p)));
    }

    proptest! {
        /// On any object the index yields what the walk yields, and so
        /// does an index without spans.
        #[test]
        fn agrees_with_the_walk(
            entries in prop::collection::vec(
                ("[a-z\"\\\\é{}]{0,4}", "(1|\"[{}\\[\\] ]{0,3}\"|\\{\\}|\\[null\\]|true)"),
                0..8,
            ),
        ) {
            let body: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}:{}", serde_json::Value::from(k.clone()), v))
                .collect();
            let p = raw(&format!("{{ {} }}", body.join(" , ")));
            let index = ObjectIndex::of_params(Some(&p));
            let walked: Vec<_> = Valid::from(&*p).object().unwrap().collect();
            prop_assert_eq!(&index.members().collect::<Vec<_>>(), &walked);
            prop_assert!(index.describes(Some(&p)));
            let without = walked_index(&p);
            prop_assert_eq!(&without.members().collect::<Vec<_>>(), &walked);
            for m in &walked {
                let name = m.name();
                prop_assert_eq!(without.get(&name), index.get(&name));
            }
        }
    }
}
