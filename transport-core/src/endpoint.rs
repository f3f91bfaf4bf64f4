//! Endpoint rules every revision's server applies before reading a body:
//! the `Origin` and `Host` allowlists (DNS-rebinding protection,
//! *Transports*, "Security Warning": "If the Origin header is present and
//! invalid, servers MUST respond with HTTP 403 Forbidden"), the `Accept`
//! media ranges and the JSON `Content-Type`. Pure functions over header
//! values, shared by the legacy and the stateless engines.

use std::borrow::Cow;

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Splits `host[:port]` (with `[v6]` literals) into lowercase host and port
/// (the host copied only when it has uppercase letters: this runs on every
/// request).
fn split_host_port(authority: &str) -> Option<(Cow<'_, str>, Option<&str>)> {
    let a = authority.trim_ascii();
    if a.is_empty() {
        return None;
    }
    let (host, port) = if a.starts_with('[') {
        let end = a.find(']')?;
        let rest = &a[end + 1..];
        let port = match rest {
            "" => None,
            r => Some(r.strip_prefix(':')?),
        };
        (&a[..=end], port)
    } else {
        return split_name_port(a);
    };
    if let Some(p) = port
        && (p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    if host.is_empty() || host.bytes().any(|b| matches!(b, b'/' | b'@' | b' ')) {
        return None;
    }
    let host = if host.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    };
    Some((host, port))
}

/// [`split_host_port`] of a host that is not a `[v6]` literal, in one pass
/// over its bytes (this runs on every request's `Host`): the last `:`
/// splits off the port, and a `/`, `@` or space anywhere refuses it — in
/// the host it is not a host, in the port not a digit — as an uppercase
/// letter in the port does (one in the host is lowercased). Bytes, not
/// chars: the separators are ASCII, so every index found is a char
/// boundary.
fn split_name_port(a: &str) -> Option<(Cow<'_, str>, Option<&str>)> {
    let mut colon = None;
    let mut bad = false;
    let mut upper = false;
    for (i, b) in a.bytes().enumerate() {
        match b {
            b':' => colon = Some(i),
            b'/' | b'@' | b' ' => bad = true,
            b'A'..=b'Z' => upper = true,
            _ => {}
        }
    }
    let (host, port) = match colon {
        Some(i) => (&a[..i], Some(&a[i + 1..])),
        None => (a, None),
    };
    if bad || host.is_empty() {
        return None;
    }
    if let Some(p) = port
        && (p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let host = if upper {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    };
    Some((host, port))
}

/// Whether a `Host` value is allowed: `allowed` entries are `host` (any
/// port) or `host:port`; `None` means the loopback names with any port.
pub fn host_allowed(host: &str, allowed: Option<&[String]>) -> bool {
    if allowed.is_none() && plain_loopback(host) {
        return true;
    }
    let Some((name, port)) = split_host_port(host) else {
        return false;
    };
    match allowed {
        None => LOOPBACK_HOSTS.contains(&name.as_ref()),
        Some(list) => list.iter().any(|entry| match split_host_port(entry) {
            Some((n, None)) => n == name,
            Some((n, Some(p))) => n == name && Some(p) == port,
            None => false,
        }),
    }
}

/// `host` is a loopback name exactly as [`LOOPBACK_HOSTS`] spells it,
/// alone or with `:` and a port of digits: what a local client's every
/// request names, allowed by the default policy without the general split
/// (~200 instructions a request fewer). Anything else (uppercase,
/// whitespace, a bad port) goes the general way, which also accepts all
/// this accepts.
fn plain_loopback(host: &str) -> bool {
    LOOPBACK_HOSTS.iter().any(|name| {
        host.strip_prefix(name).is_some_and(|rest| {
            rest.is_empty()
                || rest
                    .strip_prefix(':')
                    .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
    })
}

/// Whether an `Origin` value is allowed: `allowed` entries are compared
/// case-insensitively as `scheme://host[:port]` (a trailing `/` ignored);
/// `None` means `http`/`https` with a loopback host and any port.
pub fn origin_allowed(origin: &str, allowed: Option<&[String]>) -> bool {
    let o = origin.trim().trim_end_matches('/');
    match allowed {
        Some(list) => list
            .iter()
            .any(|a| a.trim().trim_end_matches('/').eq_ignore_ascii_case(o)),
        None => {
            let lower = o.to_ascii_lowercase();
            let Some((scheme, authority)) = lower.split_once("://") else {
                return false;
            };
            (scheme == "http" || scheme == "https")
                && split_host_port(authority)
                    .is_some_and(|(h, _)| LOOPBACK_HOSTS.contains(&h.as_ref()))
        }
    }
}

/// What an `Accept` header allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Accepts {
    /// `application/json` (or `application/*`, `*/*`).
    pub json: bool,
    /// `text/event-stream` (or `text/*`, `*/*`).
    pub sse: bool,
}

/// Reads every `Accept` header. Media ranges may carry parameters; a range
/// with `q=0` is "not acceptable" and ignored. Wildcards count: `*/*` as
/// both types, `application/*` as JSON, `text/*` as SSE.
pub fn accepts<'a>(values: impl IntoIterator<Item = &'a str>) -> Accepts {
    let mut a = Accepts::default();
    for value in values {
        // What clients send (the spec's own wording, either order): read
        // without splitting, on every POST.
        if value == "application/json, text/event-stream"
            || value == "text/event-stream, application/json"
        {
            a.json = true;
            a.sse = true;
            continue;
        }
        for range in value.split(',') {
            let mut parts = range.split(';');
            // HTTP's optional whitespace is ASCII (RFC 9110 §5.6.3).
            let media = parts.next().unwrap_or("").trim_ascii();
            let refused = parts.any(|p| {
                let p = p.trim_ascii();
                p.len() > 2
                    && p[..2].eq_ignore_ascii_case("q=")
                    && p[2..].parse::<f32>().is_ok_and(|q| q <= 0.0)
            });
            if refused {
                continue;
            }
            // Compared without a lowercased copy: this runs on every POST.
            let is = |name: &str| media.eq_ignore_ascii_case(name);
            if is("*/*") {
                a.json = true;
                a.sse = true;
            } else if is("application/json") || is("application/*") {
                a.json = true;
            } else if is("text/event-stream") || is("text/*") {
                a.sse = true;
            }
        }
    }
    a
}

/// Whether a `Content-Type` value is `application/json` (parameters such as
/// `charset` allowed, case-insensitive).
pub fn is_json_media_type(value: &str) -> bool {
    value
        .split(';')
        .next()
        .is_some_and(|m| m.trim_ascii().eq_ignore_ascii_case("application/json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        for ok in [
            "localhost",
            "localhost:8080",
            "LOCALHOST:1",
            "127.0.0.1",
            "127.0.0.1:3000",
            "[::1]",
            "[::1]:9",
        ] {
            assert!(host_allowed(ok, None), "{ok}");
        }
        for bad in [
            "evil.example.com",
            "localhost.evil.com",
            "127.0.0.2",
            "[::2]:1",
            "",
            "localhost:",
            "localhost:x",
            "user@localhost",
        ] {
            assert!(!host_allowed(bad, None), "{bad}");
        }
        let list = vec!["mcp.example.com".to_owned(), "10.0.0.1:8080".to_owned()];
        assert!(host_allowed("mcp.example.com:443", Some(&list)));
        assert!(host_allowed("MCP.Example.com:443", Some(&list)));
        assert!(host_allowed("10.0.0.1:8080", Some(&list)));
        assert!(!host_allowed("10.0.0.1:8081", Some(&list)));
        assert!(!host_allowed("localhost", Some(&list)));
        // A port with no host names no host, even against the same entry.
        let portless = vec![":8080".to_owned()];
        assert!(!host_allowed(":8080", Some(&portless)));
    }

    /// A `[v6]` literal: the brackets kept in the host, a port only after
    /// `]:` and only digits, and a `/`, `@` or space inside the brackets
    /// refused as in a name (the proptest below covers names only).
    #[test]
    fn v6_literals_split_by_the_same_rules() {
        let split = |a| split_host_port(a).map(|(h, p)| (h.into_owned(), p));
        assert_eq!(split("[::1]"), Some(("[::1]".to_owned(), None)));
        assert_eq!(split("[::1]:80"), Some(("[::1]".to_owned(), Some("80"))));
        assert_eq!(
            split(" [FE80::1]:8 "),
            Some(("[fe80::1]".to_owned(), Some("8")))
        );
        for bad in [
            "[::1]:", "[::1]:8a", "[::1]:a", "[::1]x", "[::1", "[::1/x]", "[a@b]", "[::1 x]",
        ] {
            assert_eq!(split(bad), None, "{bad}");
        }
        // So a listed entry spelt the same does not let such a value in.
        let odd = vec!["[a@b]".to_owned()];
        assert!(!host_allowed("[a@b]", Some(&odd)));
        assert!(!host_allowed("[::1]:", None));
    }

    #[test]
    fn origins() {
        for ok in [
            "http://localhost",
            "http://localhost:5173",
            "https://127.0.0.1:1",
            "http://[::1]:80",
        ] {
            assert!(origin_allowed(ok, None), "{ok}");
        }
        for bad in [
            "null",
            "http://evil.example.com",
            "file://localhost",
            "http://localhost.evil.com",
            "localhost",
        ] {
            assert!(!origin_allowed(bad, None), "{bad}");
        }
        let list = vec!["https://app.example.com".to_owned()];
        assert!(origin_allowed("https://APP.example.com/", Some(&list)));
        assert!(!origin_allowed("http://app.example.com", Some(&list)));
    }

    fn acc(v: &str) -> Accepts {
        accepts([v])
    }

    #[test]
    fn accept_header_media_types_are_case_insensitive() {
        let both = Accepts {
            json: true,
            sse: true,
        };
        assert_eq!(acc("Application/JSON, TEXT/Event-Stream"), both);
        assert_eq!(acc("APPLICATION/*, Text/*"), both);
        assert!(!acc("application/jsonx, text/event-streams").json);
        assert!(!acc("application/jsonx, text/event-streams").sse);
    }

    #[test]
    fn accept_header() {
        assert_eq!(
            acc("application/json, text/event-stream"),
            Accepts {
                json: true,
                sse: true
            }
        );
        assert_eq!(
            acc("application/json;q=0.9,text/event-stream; charset=utf-8"),
            Accepts {
                json: true,
                sse: true
            }
        );
        assert_eq!(
            acc("*/*"),
            Accepts {
                json: true,
                sse: true
            }
        );
        assert_eq!(
            acc("application/json"),
            Accepts {
                json: true,
                sse: false
            }
        );
        assert_eq!(
            acc("application/json, text/event-stream;q=0"),
            Accepts {
                json: true,
                sse: false
            }
        );
        assert_eq!(acc("text/html"), Accepts::default());
        // Either order, with or without the canonical spacing.
        for v in [
            "text/event-stream, application/json",
            "text/event-stream,application/json",
            "application/json ,\ttext/event-stream",
        ] {
            assert_eq!(
                acc(v),
                Accepts {
                    json: true,
                    sse: true
                },
                "{v}"
            );
        }
    }

    #[test]
    fn content_type() {
        assert!(is_json_media_type("Application/JSON; charset=utf-8"));
        assert!(is_json_media_type("application/json"));
        assert!(!is_json_media_type("text/plain"));
        assert!(!is_json_media_type(""));
        assert!(accepts(["text/html", "application/json, text/event-stream"]).sse);
    }

    /// The split as the rules read (each check a pass of its own): what
    /// the one-pass [`split_name_port`] must agree with.
    fn split_by_the_rules(a: &str) -> Option<(String, Option<&str>)> {
        let (host, port) = match a.rfind(':') {
            Some(i) => (&a[..i], Some(&a[i + 1..])),
            None => (a, None),
        };
        if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
            return None;
        }
        if host.is_empty() || host.contains(['/', '@', ' ']) {
            return None;
        }
        Some((host.to_ascii_lowercase(), port))
    }

    /// The loopback shortcut accepts only what the general rule accepts,
    /// and accepts the usual local `Host` values.
    fn allowed_by_the_general_rule(h: &str) -> bool {
        split_host_port(h).is_some_and(|(n, _)| LOOPBACK_HOSTS.contains(&n.as_ref()))
    }

    #[test]
    fn the_loopback_shortcut_takes_the_usual_names() {
        for h in [
            "localhost",
            "localhost:3000",
            "127.0.0.1:8080",
            "[::1]:1",
            "[::1]",
        ] {
            assert!(plain_loopback(h), "{h}");
        }
        for h in [
            "localhost:",
            "localhost:x",
            "localhost.evil",
            "127.0.0.1 ",
            "LOCALHOST",
            "[::1]:",
            "127.0.0.10",
            "localhost:1:2",
        ] {
            assert!(!plain_loopback(h), "{h}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_loopback_shortcut_is_within_the_general_rule(
            name in proptest::sample::select(vec!["localhost", "127.0.0.1", "[::1]", "LocalHost", "127.0.0.2", ""]),
            rest in "[0-9:a-z .\\]@/-]{0,6}",
        ) {
            let h = format!("{name}{rest}");
            if plain_loopback(&h) {
                proptest::prop_assert!(allowed_by_the_general_rule(&h), "{}", h);
            }
            proptest::prop_assert_eq!(
                host_allowed(&h, None),
                allowed_by_the_general_rule(&h),
                "{}", h
            );
        }

        #[test]
        fn the_one_pass_split_agrees_with_the_rules(a in "[a-zA-Z0-9:/@ .-]{0,12}") {
            let one_pass = split_name_port(&a).map(|(h, p)| (h.into_owned(), p));
            proptest::prop_assert_eq!(one_pass, split_by_the_rules(&a));
        }
    }
}
