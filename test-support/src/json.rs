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
    }
}
