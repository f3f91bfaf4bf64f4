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
use std::fmt;

use serde::de::{Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

/// The first member name that appears twice in the JSON object `raw`
/// (`None` when every name is unique, or `raw` is not an object).
#[cfg(test)]
pub(crate) fn duplicate_key(raw: &str) -> Option<String> {
    pick(raw, []).ok()?.duplicate
}

/// What [`pick`] found in an object.
pub(crate) struct Picked<const N: usize> {
    /// The value of each wanted member (the last one if it repeats).
    pub values: [Option<Value>; N],
    /// The first member name that appears twice, if any.
    pub duplicate: Option<String>,
}

/// One pass over the JSON object `raw`: the members named in `wanted`,
/// parsed, and the first repeated member name.
/// Other members are skipped unparsed, and names are borrowed from `raw`
/// unless they contain escapes. `Err` when `raw` is not a JSON object.
pub(crate) fn pick<const N: usize>(raw: &str, wanted: [&str; N]) -> Result<Picked<N>, ()> {
    let mut de = serde_json::Deserializer::from_str(raw);
    let picked = PickSeed { wanted }.deserialize(&mut de).map_err(|_| ())?;
    de.end().map_err(|_| ())?;
    Ok(picked)
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

/// A member name, borrowed from the input when it has no escapes.
struct Name<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

struct PickSeed<'w, const N: usize> {
    wanted: [&'w str; N],
}

impl<'de, const N: usize> DeserializeSeed<'de> for PickSeed<'_, N> {
    type Value = Picked<N>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Picked<N>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, const N: usize> Visitor<'de> for PickSeed<'_, N> {
    type Value = Picked<N>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Picked<N>, A::Error> {
        let mut picked = Picked {
            values: std::array::from_fn(|_| None),
            duplicate: None,
        };
        let mut seen = Seen {
            small: [""; SMALL],
            len: 0,
            big: None,
        };
        while let Some(Name(name)) = map.next_key::<Name<'de>>()? {
            match self.wanted.iter().position(|w| *w == name) {
                Some(i) => picked.values[i] = Some(map.next_value::<Value>()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            if picked.duplicate.is_none() {
                let shown = name.clone();
                if seen.repeated(name) {
                    picked.duplicate = Some(shown.into_owned());
                }
            }
        }
        Ok(picked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_repeated_name() {
        assert_eq!(duplicate_key(r#"{"a":1,"b":{"a":2}}"#), None);
        assert_eq!(
            duplicate_key(r#"{"v":"2026-07-28","x":[1,{"v":0}],"v":"2025-11-25"}"#).as_deref(),
            Some("v")
        );
        assert_eq!(duplicate_key("[1,2]"), None);
    }

    #[test]
    fn pick_reads_wanted_members_and_finds_repeats() {
        let p = pick(r#"{"v":"x","w":[1],"\u0076":"y"}"#, ["v", "z"]).unwrap();
        assert_eq!(p.values, [Some(Value::from("y")), None]);
        assert_eq!(p.duplicate.as_deref(), Some("v"));
        let p = pick(r#"{"a":{"a":1},"b":2}"#, ["b"]).unwrap();
        assert_eq!(
            (p.values[0].clone(), p.duplicate),
            (Some(Value::from(2)), None)
        );
        // Past the pairwise names: the hash set.
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let text = format!("{{{},\"k33\":0}}", many.join(","));
        assert_eq!(
            pick(&text, ["k1"]).unwrap().duplicate.as_deref(),
            Some("k33")
        );
        assert_eq!(duplicate_key(&text).as_deref(), Some("k33"));
        assert!(pick("[1]", ["a"]).is_err());
        assert!(pick("{} x", ["a"]).is_err());
    }
}
