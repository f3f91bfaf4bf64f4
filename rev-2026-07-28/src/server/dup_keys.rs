//! Duplicate member names in a JSON object, which `serde_json` resolves
//! silently (the last one wins).
//!
//! A `_meta` object with two `io.modelcontextprotocol/protocolVersion`
//! members is ambiguous: a proxy or log that reads the first sees another
//! request than the one served. RFC 8259 §4: "The names within an object
//! SHOULD be unique … When the names within an object are not unique, the
//! behavior of software that receives such an object is unpredictable." So
//! the stateless engine refuses it (400 `-32602`) rather than picking one.

use std::collections::HashSet;
use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

/// The first member name that appears twice in the JSON object `raw`
/// (`None` when every name is unique, or `raw` is not an object).
pub(crate) fn duplicate_key(raw: &str) -> Option<String> {
    serde_json::from_str::<FirstDuplicate>(raw).ok()?.0
}

struct FirstDuplicate(Option<String>);

impl<'de> Deserialize<'de> for FirstDuplicate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(Names)
    }
}

struct Names;

impl<'de> Visitor<'de> for Names {
    type Value = FirstDuplicate;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FirstDuplicate, A::Error> {
        let mut seen = HashSet::new();
        let mut first = None;
        while let Some(name) = map.next_key::<String>()? {
            map.next_value::<IgnoredAny>()?;
            if first.is_none() && !seen.insert(name.clone()) {
                first = Some(name);
            }
        }
        Ok(FirstDuplicate(first))
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
}
