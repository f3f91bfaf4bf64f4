//! Duplicate member names in a JSON object, which `serde_json` resolves
//! silently (the last one wins).
//!
//! A `_meta` object with two `io.modelcontextprotocol/protocolVersion`
//! members is ambiguous: a proxy or log that reads the first sees another
//! request than the one served. RFC 8259 §4: "The names within an object
//! SHOULD be unique … When the names within an object are not unique, the
//! behavior of software that receives such an object is unpredictable." So
//! the stateless engine refuses it (400 `-32602`) rather than picking one.

use std::borrow::Cow;
use std::collections::HashSet;

use mcp_transport_core::json_members::{Member, Valid};

/// What [`pick`] found in an object.
pub(crate) struct Picked<'a, const N: usize> {
    /// The value of each wanted member (the last one if it repeats), as
    /// sent: the reader parses what it keeps.
    pub values: [Option<Valid<'a>>; N],
    /// The first member name that appears twice, if any.
    pub duplicate: Option<String>,
}

/// One walk over the JSON object `raw` (`json_members`: it was validated
/// with the request): the members named in `wanted`, and the first
/// repeated member name. Nothing is parsed, and names are borrowed from
/// `raw` unless they contain escapes. `Err` when `raw` is not a JSON
/// object.
pub(crate) fn pick<'a, const N: usize>(
    raw: Valid<'a>,
    wanted: [&str; N],
) -> Result<Picked<'a, N>, ()> {
    raw.object()
        .map(|members| pick_members(members, wanted))
        .ok_or(())
}

/// [`pick`] over an object's members already found (in the order sent,
/// repeats included, as [`Valid::object`] yields them).
pub(crate) fn pick_members<'a, const N: usize>(
    members: impl Iterator<Item = Member<'a>>,
    wanted: [&str; N],
) -> Picked<'a, N> {
    let mut picked = Picked {
        values: std::array::from_fn(|_| None),
        duplicate: None,
    };
    let mut seen = Seen {
        small: [""; SMALL],
        len: 0,
        big: None,
    };
    for m in members {
        let name = m.name();
        if let Some(i) = wanted.iter().position(|w| *w == name) {
            picked.values[i] = Some(m.value());
        }
        if picked.duplicate.is_none() {
            let shown = name.clone();
            if seen.repeated(name) {
                picked.duplicate = Some(shown.into_owned());
            }
        }
    }
    picked
}

/// Member names compared pairwise before a hash set is built.
const SMALL: usize = 16;

/// The member names seen so far.
struct Seen<'de> {
    small: [&'de str; SMALL],
    len: usize,
    big: Option<HashSet<Cow<'de, str>>>,
}

impl<'de> Seen<'de> {
    /// Records `name`; `true` when it was seen before.
    fn repeated(&mut self, name: Cow<'de, str>) -> bool {
        if self.small[..self.len].contains(&name.as_ref())
            || self.big.as_ref().is_some_and(|b| b.contains(&name))
        {
            return true;
        }
        match name {
            Cow::Borrowed(n) if self.len < SMALL => {
                self.small[self.len] = n;
                self.len += 1;
            }
            other => {
                self.big.get_or_insert_with(HashSet::new).insert(other);
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first [`SMALL`] borrowed names are compared in place, with no
    /// hash set built (the usual request has a handful of members); the
    /// next ones, and any name unescaped into an owned string, go to the
    /// set; a repeat is found in either.
    #[test]
    fn a_few_borrowed_names_need_no_hash_set() {
        let names: Vec<String> = (0..=SMALL).map(|i| format!("m{i}")).collect();
        let mut seen = Seen {
            small: [""; SMALL],
            len: 0,
            big: None,
        };
        for n in &names[..SMALL] {
            assert!(!seen.repeated(Cow::Borrowed(n)));
        }
        assert_eq!(seen.len, SMALL);
        assert!(seen.big.is_none(), "a set was built for {SMALL} names");
        assert!(!seen.repeated(Cow::Borrowed(&names[SMALL])));
        assert_eq!(seen.big.as_ref().map(HashSet::len), Some(1));
        assert!(seen.repeated(Cow::Borrowed(&names[0])));
        assert!(seen.repeated(Cow::Owned(names[SMALL].clone())));

        let mut fresh = Seen {
            small: [""; SMALL],
            len: 0,
            big: None,
        };
        assert!(!fresh.repeated(Cow::Owned("a\\u0062".into())));
        assert_eq!(
            (fresh.len, fresh.big.as_ref().map(HashSet::len)),
            (0, Some(1))
        );
        assert!(!fresh.repeated(Cow::Borrowed("c")));
        assert_eq!(fresh.len, 1);
    }
    use mcp_test_support::json::{self, spaced};
    use proptest::prelude::*;
    use serde_json::value::RawValue;

    /// `pick` of `text`, valid JSON: the values' texts.
    fn pick_in<const N: usize>(
        text: &str,
        wanted: [&str; N],
    ) -> Result<([Option<String>; N], Option<String>), ()> {
        let raw = RawValue::from_string(text.to_owned()).expect("valid JSON");
        let p = pick(Valid::from(&*raw), wanted)?;
        Ok((
            p.values.map(|v| v.map(|v| v.text().to_owned())),
            p.duplicate,
        ))
    }

    /// The first member name that appears twice in the object `text`
    /// (`None` when every name is unique, or `text` is not an object).
    fn duplicate_in(text: &str) -> Option<String> {
        pick_in(text, []).ok()?.1
    }

    #[test]
    fn finds_the_first_repeated_name() {
        assert_eq!(duplicate_in(r#"{"a":1,"b":{"a":2}}"#), None);
        assert_eq!(
            duplicate_in(r#"{"v":"2026-07-28","x":[1,{"v":0}],"v":"2025-11-25"}"#).as_deref(),
            Some("v")
        );
        assert_eq!(duplicate_in("[1,2]"), None);
    }

    #[test]
    fn pick_reads_wanted_members_and_finds_repeats() {
        let (values, duplicate) =
            pick_in(r#"{"v":"x","w":[1],"\u0076": "y" }"#, ["v", "z"]).unwrap();
        assert_eq!(values, [Some(r#""y""#.to_owned()), None]);
        assert_eq!(duplicate.as_deref(), Some("v"));
        let (values, duplicate) = pick_in(r#"{"a":{"a":1},"b":2}"#, ["b"]).unwrap();
        assert_eq!((values, duplicate), ([Some("2".to_owned())], None));
        // Past the pairwise names: the hash set.
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let text = format!("{{{},\"k33\":0}}", many.join(","));
        assert_eq!(pick_in(&text, ["k1"]).unwrap().1.as_deref(), Some("k33"));
        assert_eq!(duplicate_in(&text).as_deref(), Some("k33"));
        assert!(pick_in("[1]", ["a"]).is_err());
    }

    /// Names spelled plainly or with escapes, and enough of them that the
    /// pairwise list overflows into the hash set.
    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("v".to_owned()),
            Just("\\u0076".to_owned()),
            Just("w".to_owned()),
            Just("\\u0077".to_owned()),
            (0..24u8).prop_map(|i| format!("k{i}")),
        ]
    }

    proptest! {
        /// On any object (names repeated, escaped, more than the pairwise
        /// list holds; spaced out): the values are what `serde_json` reads
        /// last for each wanted name, and the repeat reported is the first
        /// name, decoded, that `serde_json` reads a second time.
        #[test]
        fn pick_reads_what_serde_json_reads(
            members in prop::collection::vec((name(), 0..100u32), 0..40),
            gaps in prop::collection::vec(0u8..5, 1..6),
        ) {
            let body: Vec<String> = members.iter().map(|(n, v)| format!("\"{n}\":{v}")).collect();
            let text = spaced(&format!("{{{}}}", body.join(",")), &gaps);
            let reference = json::members(&text);
            let mut seen = HashSet::new();
            let first_repeat = reference
                .iter()
                .find(|(n, _)| !seen.insert(n.clone()))
                .map(|(n, _)| n.clone());
            let last = |wanted: &str| {
                reference.iter().rev().find(|(n, _)| n == wanted).map(|(_, v)| v.clone())
            };
            let (values, duplicate) = pick_in(&text, ["v", "k20", "w"]).unwrap();
            prop_assert_eq!(values, [last("v"), last("k20"), last("w")]);
            prop_assert_eq!(duplicate, first_repeat);
        }
    }
}
