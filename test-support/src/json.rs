//! JSON text for tests of hand-written JSON readers and writers.

/// `compact` JSON with whitespace JSON allows (`" "`, `"\n"`, `"\t"`,
/// `"\r\n "` or none, chosen in turn by `gaps`) before each structural
/// character (`{ } [ ] , :`) outside strings: the same value, spelled as
/// a peer might send it. `gaps` must not be empty.
pub fn spaced(compact: &str, gaps: &[u8]) -> String {
    let ws = [" ", "\n", "\t", "\r\n ", ""];
    let mut out = String::new();
    let (mut in_string, mut escaped, mut k) = (false, false, 0);
    for c in compact.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if matches!(c, '{' | '}' | '[' | ']' | ',' | ':') {
            out.push_str(ws[usize::from(gaps[k % gaps.len()]) % ws.len()]);
            k += 1;
        }
        out.push(c);
        in_string = c == '"';
    }
    out
}

/// What `serde_json` reads of the JSON object `text`: every member in
/// order, repeats included, as its decoded name and its value's text (the
/// reference a hand-written walk over members is compared with).
///
/// # Panics
///
/// When `text` is not a JSON object.
pub fn members(text: &str) -> Vec<(String, String)> {
    struct All(Vec<(String, String)>);
    impl<'de> serde::Deserialize<'de> for All {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<All, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = All;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<All, A::Error> {
                    let mut out = Vec::new();
                    while let Some(k) = map.next_key::<String>()? {
                        let v: &serde_json::value::RawValue = map.next_value()?;
                        out.push((k, v.get().to_owned()));
                    }
                    Ok(All(out))
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_str::<All>(text).expect("an object").0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_goes_outside_strings_only() {
        let text = r#"{"a:b":[1,"x,\"}"],"c":{}}"#;
        let out = spaced(text, &[0]);
        assert_eq!(out, r#" {"a:b" : [1 ,"x,\"}" ] ,"c" : { } }"#);
        let a: serde_json::Value = serde_json::from_str(text).unwrap();
        for gaps in [[1u8, 2], [3, 4], [4, 0]] {
            let b: serde_json::Value = serde_json::from_str(&spaced(text, &gaps)).unwrap();
            assert_eq!(a, b);
        }
        assert_eq!(
            members(r#" {"a":1, "\u0061" : [2] ,"b":{"a":3}} "#),
            [("a", "1"), ("a", "[2]"), ("b", r#"{"a":3}"#)]
                .map(|(n, v)| (n.to_owned(), v.to_owned()))
        );
    }
}
