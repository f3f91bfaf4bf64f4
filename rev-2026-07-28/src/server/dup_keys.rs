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

use mcp_transport_core::json_members::Valid;
use serde_json::Value;

/// What [`pick`] found in an object.
pub(crate) struct Picked<const N: usize> {
    /// The value of each wanted member (the last one if it repeats).
    pub values: [Option<Value>; N],
    /// The first member name that appears twice, if any.
    pub duplicate: Option<String>,
}

/// One walk over the JSON object `raw` (`json_members`: it was validated
/// with the request): the members named in `wanted`, parsed, and the
/// first repeated member name. Other members are skipped unparsed, and
/// names are borrowed from `raw` unless they contain escapes. `Err` when
/// `raw` is not a JSON object.
pub(crate) fn pick<const N: usize>(raw: Valid<'_>, wanted: [&str; N]) -> Result<Picked<N>, ()> {
    let members = raw.object().ok_or(())?;
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
            picked.values[i] = Some(serde_json::from_str(m.value().text()).map_err(|_| ())?);
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
    use serde_json::value::RawValue;

    /// `pick` of `text`, valid JSON.
    fn pick_in<const N: usize>(text: &str, wanted: [&str; N]) -> Result<Picked<N>, ()> {
        let raw = RawValue::from_string(text.to_owned()).expect("valid JSON");
        pick(Valid::from(&*raw), wanted)
    }

    /// The first member name that appears twice in the object `text`
    /// (`None` when every name is unique, or `text` is not an object).
    fn duplicate_in(text: &str) -> Option<String> {
        pick_in(text, []).ok()?.duplicate
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
        let p = pick_in(r#"{"v":"x","w":[1],"\u0076":"y"}"#, ["v", "z"]).unwrap();
        assert_eq!(p.values, [Some(Value::from("y")), None]);
        assert_eq!(p.duplicate.as_deref(), Some("v"));
        let p = pick_in(r#"{"a":{"a":1},"b":2}"#, ["b"]).unwrap();
        assert_eq!(
            (p.values[0].clone(), p.duplicate),
            (Some(Value::from(2)), None)
        );
        // Past the pairwise names: the hash set.
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let text = format!("{{{},\"k33\":0}}", many.join(","));
        assert_eq!(
            pick_in(&text, ["k1"]).unwrap().duplicate.as_deref(),
            Some("k33")
        );
        assert_eq!(duplicate_in(&text).as_deref(), Some("k33"));
        assert!(pick_in("[1]", ["a"]).is_err());
    }
}
