//! The walk over a validated object's members (`json_members`): never
//! panics on any text (valid or not), and on any text `serde_json` accepts
//! as an object it finds exactly the members `serde_json` reads, in order
//! (repeated names kept), each value's text exact, nested objects too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_transport_core::json_members::Valid;
use serde_json::value::RawValue;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Anything: no panic, and the walk ends.
    if let Some(members) = Valid::assume(text).object() {
        for m in members.take(10_000) {
            let _ = (m.name(), m.value().as_str(), m.value().object().map(Iterator::count));
        }
    }
    // Valid JSON: what serde_json reads.
    if let Ok(raw) = serde_json::from_str::<&RawValue>(text) {
        check(Valid::from(raw), raw.get(), 0);
    }
});

/// The members of `valid` against serde_json's reading of `text`, and the
/// same one level down for each member that is an object.
fn check(valid: Valid<'_>, text: &str, depth: usize) {
    let Ok(serde) = serde_json::from_str::<Entries<'_>>(text) else {
        // Not an object, or one with a name serde_json will not decode (a
        // lone surrogate escape: valid JSON, not Unicode text).
        if !text.trim_start().starts_with('{') {
            assert!(valid.object().is_none(), "not an object to serde_json: {text}");
        }
        return;
    };
    let ours: Vec<_> = valid.object().expect("an object").collect();
    assert_eq!(ours.len(), serde.0.len(), "{text}");
    for (m, (name, value)) in ours.iter().zip(&serde.0) {
        assert_eq!(&m.name(), name, "{text}");
        assert_eq!(m.value().text(), value.get(), "{text}");
        if depth < 4 {
            check(m.value(), value.get(), depth + 1);
        }
    }
}

/// Every member of an object (repeats kept), values raw.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Entries<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Entries<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    out.push((k, map.next_value()?));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}
