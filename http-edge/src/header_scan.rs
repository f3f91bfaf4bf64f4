//! A few headers of one request found in one pass over its `HeaderMap`,
//! each with how often it was sent.
//!
//! `HeaderMap::get_all` hashes the name on every lookup (~110
//! instructions for a standard name such as `Origin`, ~200 for a custom
//! one such as `Mcp-Method`, measured with callgrind); a request carries a
//! handful of headers (at most hyper's limit, 100), so comparing each with
//! the two or three names a check needs costs less than looking each name
//! up. Checks that need "exactly one" (a repeated `Host` or `Mcp-Method`
//! is refused as ambiguous) get that from the same pass.

use http::{HeaderMap, HeaderName, HeaderValue};

/// How often a request sent one header, and its value when sent once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Seen<'a> {
    /// Not sent.
    #[default]
    Absent,
    /// Sent once, with this value.
    Once(&'a HeaderValue),
    /// Sent more than once (the value would be ambiguous).
    Repeated,
}

impl<'a> Seen<'a> {
    /// One more value of the header.
    pub fn add(&mut self, value: &'a HeaderValue) {
        *self = match self {
            Seen::Absent => Seen::Once(value),
            Seen::Once(_) | Seen::Repeated => Seen::Repeated,
        };
    }

    /// The value of a header sent at most once; [`Ambiguous`] when it was
    /// sent more than once.
    pub fn single(self) -> Result<Option<&'a HeaderValue>, Ambiguous> {
        match self {
            Seen::Absent => Ok(None),
            Seen::Once(v) => Ok(Some(v)),
            Seen::Repeated => Err(Ambiguous),
        }
    }

    /// Every value of `name` in `headers`, counted (one hashed lookup: for
    /// a single header a check needs).
    pub fn of(headers: &'a HeaderMap, name: &HeaderName) -> Seen<'a> {
        let mut seen = Seen::Absent;
        for value in headers.get_all(name) {
            seen.add(value);
            if seen == Seen::Repeated {
                break;
            }
        }
        seen
    }
}

/// A header that should be sent once was sent more than once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ambiguous;

/// The headers `names` in `headers`, found in one pass: `Seen` for each, in
/// the order of `names`.
#[inline]
pub fn scan<'a, const N: usize>(headers: &'a HeaderMap, names: [&HeaderName; N]) -> [Seen<'a>; N] {
    let mut seen = [Seen::Absent; N];
    for (name, value) in headers {
        if let Some(i) = names.iter().position(|n| *n == name) {
            seen[i].add(value);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::{ACCEPT, HOST, ORIGIN};

    fn map(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn each_name_is_counted_on_its_own_whatever_the_order() {
        let h = map(&[
            ("accept", "a"),
            ("Host", "h"),
            ("x-other", "o"),
            ("origin", "o1"),
            ("ORIGIN", "o2"),
        ]);
        let [host, origin, accept, absent] = scan(
            &h,
            [
                &HOST,
                &ORIGIN,
                &ACCEPT,
                &HeaderName::from_static("mcp-method"),
            ],
        );
        assert_eq!(host, Seen::Once(&HeaderValue::from_static("h")));
        assert_eq!(origin, Seen::Repeated);
        assert_eq!(accept, Seen::Once(&HeaderValue::from_static("a")));
        assert_eq!(absent, Seen::Absent);
    }

    #[test]
    fn a_third_value_stays_repeated() {
        let mut s = Seen::Absent;
        let v = HeaderValue::from_static("v");
        s.add(&v);
        assert_eq!(s, Seen::Once(&v));
        s.add(&v);
        s.add(&v);
        assert_eq!(s, Seen::Repeated);
        assert_eq!(s.single(), Err(Ambiguous));
        assert_eq!(Seen::Once(&v).single(), Ok(Some(&v)));
        assert_eq!(Seen::Absent.single(), Ok(None));
    }

    #[test]
    fn of_agrees_with_scan() {
        for pairs in [
            &[][..],
            &[("host", "a")][..],
            &[("host", "a"), ("accept", "x"), ("host", "b")][..],
        ] {
            let h = map(pairs);
            assert_eq!(Seen::of(&h, &HOST), scan(&h, [&HOST])[0], "{pairs:?}");
        }
    }
}
