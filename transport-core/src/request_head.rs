//! [`RequestHead`]: what a handler keeps of the HTTP request that carried
//! its request ([`RequestContext::http`](crate::handler::RequestContext::http)),
//! in little memory.
//!
//! A request may stay pending for minutes with no connection at all
//! (2025-11-25, SEP-1699 polling: the server closes the SSE stream after
//! its priming event and the client resumes later), and the server keeps
//! what the handler may read for that whole time. A whole
//! `http::request::Parts` is about 1.4 KB for a handful of headers (the
//! `HeaderMap`'s entries and index, each value a block of its own, or a
//! slice of the connection's read buffer that it keeps alive); a
//! `RequestHead` keeps the request target and every header in one buffer
//! and reads them from there.
//!
//! Copying costs work on every request (~1,300 instructions for the eight
//! headers of a stateless `tools/call`), which a request answered while its
//! HTTP exchange lasts does not repay: the connection holds its buffers
//! meanwhile anyway. [`RequestHead::as_received`] keeps such a request's
//! `HeaderMap` as it came, with the same accessors.

use std::fmt;

use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Extensions, Method, Uri, Version};

/// The HTTP request that carried a JSON-RPC request, without its body:
/// method, version, request target, headers (in their order, repeated
/// names kept) and extensions (where an auth layer in front puts the
/// caller's principal, and axum's `ConnectInfo<SocketAddr>` the peer's
/// address).
///
/// The target and the headers are copied into one buffer; header names are
/// lowercase (as `http` normalises them), values are bytes as received.
///
/// ```
/// use mcp_transport_core::request_head::RequestHead;
///
/// let (parts, ()) = http::Request::post("/mcp?x=1")
///     .header("x-trace", "t-1")
///     .header("accept", "application/json")
///     .header("accept", "text/event-stream")
///     .body(())
///     .unwrap()
///     .into_parts();
/// let head = RequestHead::new(parts);
/// assert_eq!(head.method(), http::Method::POST);
/// assert_eq!(head.uri().path(), "/mcp");
/// assert_eq!(head.header_str("X-Trace"), Some("t-1"));
/// assert_eq!(head.header_all("accept").count(), 2);
/// ```
#[derive(Clone)]
pub struct RequestHead {
    method: Method,
    version: Version,
    fields: Fields,
    extensions: Extensions,
}

/// Where a [`RequestHead`] keeps the target and the headers.
#[derive(Clone)]
enum Fields {
    /// The request target, then each header as `[name length: u16 LE]
    /// [value length: u32 LE][name][value]`.
    Block(Box<[u8]>),
    /// As received ([`RequestHead::as_received`]): an origin-form target
    /// (its path and query are its text) and the headers. Boxed: unboxed
    /// (~180 bytes) they sized every `RequestHead`, so the head a pending
    /// 2025-11-25 request keeps between SEP-1699 polls (a `Block`) grew
    /// from 56 to 224 bytes.
    Received(Box<Received>),
}

/// The target and headers of a [`Fields::Received`].
#[derive(Clone)]
struct Received {
    uri: Uri,
    headers: HeaderMap,
}

/// Bytes of one header's lengths in [`block`].
const LENGTHS: usize = 6;

impl RequestHead {
    /// Keeps `parts`: its extensions moved, its target and headers copied
    /// into one buffer.
    pub fn new(parts: http::request::Parts) -> RequestHead {
        RequestHead::keep(parts, |uri, headers| Fields::Block(block(&uri, &headers)))
    }

    /// `parts` moved in, the target and headers kept as `fields` says.
    fn keep(
        parts: http::request::Parts,
        fields: impl FnOnce(Uri, HeaderMap) -> Fields,
    ) -> RequestHead {
        let http::request::Parts {
            method,
            uri,
            version,
            headers,
            extensions,
            ..
        } = parts;
        RequestHead {
            method,
            version,
            fields: fields(uri, headers),
            extensions,
        }
    }

    /// Keeps `parts` as received, nothing copied: for a request whose
    /// handler runs while its HTTP exchange lasts (a kept request, such as
    /// one polled for or run as a task, is better [`new`](Self::new)). The
    /// accessors answer as they do for [`new`](Self::new)'s copy; a target
    /// that is not in origin form (`/mcp?x=1`, what a server receives) is
    /// copied as `new` does, since its text must be printed first.
    pub fn as_received(parts: http::request::Parts) -> RequestHead {
        let origin_form = parts.uri.scheme().is_none()
            && parts.uri.authority().is_none()
            && parts.uri.path_and_query().is_some();
        if !origin_form {
            return RequestHead::new(parts);
        }
        RequestHead::keep(parts, |uri, headers| {
            Fields::Received(Box::new(Received { uri, headers }))
        })
    }

    /// Keeps a copy of `parts` (its extensions cloned).
    pub fn from_parts(parts: &http::request::Parts) -> RequestHead {
        RequestHead {
            method: parts.method.clone(),
            version: parts.version,
            fields: Fields::Block(block(&parts.uri, &parts.headers)),
            extensions: parts.extensions.clone(),
        }
    }

    /// The request method.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The HTTP version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The request target as received (`/mcp?x=1`, or an absolute URI).
    pub fn target(&self) -> &str {
        match &self.fields {
            Fields::Block(block) => {
                let (len, rest) = block.split_at(4);
                let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
                // Written from a `Uri`'s text: always UTF-8.
                std::str::from_utf8(&rest[..len]).unwrap_or_default()
            }
            // Origin form (checked by `as_received`).
            Fields::Received(r) => r.uri.path_and_query().map_or("", |pq| pq.as_str()),
        }
    }

    /// The request target as a [`Uri`] (parsed from [`target`](Self::target)
    /// on each call).
    pub fn uri(&self) -> Uri {
        Uri::try_from(self.target()).unwrap_or_default()
    }

    /// Every header as `(name, value)`, in the order received.
    pub fn headers(&self) -> Headers<'_> {
        match &self.fields {
            Fields::Block(block) => {
                let at = 4 + self.target().len();
                Headers(HeadersRepr::Block(&block[at..]))
            }
            Fields::Received(r) => Headers(HeadersRepr::Map(r.headers.iter())),
        }
    }

    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        match &self.fields {
            Fields::Block(_) => self
                .headers()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v),
            // `HeaderMap` looks a `&str` name up in any case.
            Fields::Received(r) => r.headers.get(name).map(HeaderValue::as_bytes),
        }
    }

    /// The first value of header `name` (any case) when it is visible
    /// ASCII (as [`HeaderValue::to_str`] accepts it).
    pub fn header_str(&self, name: &str) -> Option<&str> {
        let v = self.header(name)?;
        if v.iter().all(|&b| b == b'\t' || (0x20..0x7f).contains(&b)) {
            std::str::from_utf8(v).ok()
        } else {
            None
        }
    }

    /// Every value of header `name` (any case), in order.
    pub fn header_all<'a, 'n>(
        &'a self,
        name: &'n str,
    ) -> impl Iterator<Item = &'a [u8]> + use<'a, 'n> {
        self.headers()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// The headers as a [`HeaderMap`] (a copy).
    pub fn header_map(&self) -> HeaderMap {
        if let Fields::Received(r) = &self.fields {
            return r.headers.clone();
        }
        let mut map = HeaderMap::new();
        for (name, value) in self.headers() {
            if let (Ok(n), Ok(v)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_bytes(value),
            ) {
                map.append(n, v);
            }
        }
        map
    }

    /// The request's extensions: what the layers in front put there (an
    /// auth layer's principal, axum's `ConnectInfo`).
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The extensions, to change (a server drops what it knows to be
    /// redundant before keeping the head).
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.extensions
    }
}

impl From<http::request::Parts> for RequestHead {
    fn from(parts: http::request::Parts) -> Self {
        RequestHead::new(parts)
    }
}

impl fmt::Debug for RequestHead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestHead")
            .field("method", &self.method)
            .field("target", &self.target())
            .field("version", &self.version)
            .field(
                "headers",
                &self.headers().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// The target and the headers in one buffer (see [`Fields::Block`]).
/// A name is at most 65,535 bytes (`http`'s own limit); a value longer
/// than `u32::MAX` bytes cannot have been received.
fn block(uri: &Uri, headers: &HeaderMap) -> Box<[u8]> {
    // An origin-form target (`/mcp?x=1`, what a server receives) is its
    // path and query as they are: no `Display` round into a new `String`.
    let owned;
    let target = match (uri.scheme(), uri.authority(), uri.path_and_query()) {
        (None, None, Some(pq)) => pq.as_str(),
        _ => {
            owned = uri.to_string();
            owned.as_str()
        }
    };
    let size = 4
        + target.len()
        + headers
            .iter()
            .map(|(n, v)| LENGTHS + n.as_str().len() + v.len())
            .sum::<usize>();
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&len32(target.len()).to_le_bytes());
    out.extend_from_slice(target.as_bytes());
    for (name, value) in headers {
        let n = name.as_str().as_bytes();
        let name_len = u16::try_from(n.len()).unwrap_or(u16::MAX);
        out.extend_from_slice(&name_len.to_le_bytes());
        out.extend_from_slice(&len32(value.len()).to_le_bytes());
        out.extend_from_slice(&n[..usize::from(name_len)]);
        out.extend_from_slice(&value.as_bytes()[..len32(value.len()) as usize]);
    }
    out.into_boxed_slice()
}

fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The headers of a [`RequestHead`], in order: `(name, value)`.
#[derive(Debug)]
pub struct Headers<'a>(HeadersRepr<'a>);

#[derive(Debug)]
enum HeadersRepr<'a> {
    /// What is left of [`Fields::Block`]'s headers.
    Block(&'a [u8]),
    Map(http::header::Iter<'a, HeaderValue>),
}

impl<'a> Iterator for Headers<'a> {
    type Item = (&'a str, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let rest = match &mut self.0 {
            HeadersRepr::Block(rest) => rest,
            HeadersRepr::Map(iter) => return iter.next().map(|(n, v)| (n.as_str(), v.as_bytes())),
        };
        if rest.len() < LENGTHS {
            return None;
        }
        let (lengths, after) = rest.split_at(LENGTHS);
        let name_len = usize::from(u16::from_le_bytes([lengths[0], lengths[1]]));
        let value_len =
            u32::from_le_bytes([lengths[2], lengths[3], lengths[4], lengths[5]]) as usize;
        let (name, after) = after.split_at(name_len);
        let (value, after) = after.split_at(value_len);
        *rest = after;
        // Written from a `HeaderName`: lowercase visible ASCII.
        Some((std::str::from_utf8(name).unwrap_or_default(), value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(req: http::request::Builder) -> http::request::Parts {
        req.body(()).unwrap().into_parts().0
    }

    #[test]
    fn keeps_method_target_headers_in_order_and_extensions() {
        #[derive(Clone, Debug, PartialEq)]
        struct Principal(&'static str);
        let mut p = parts(
            http::Request::post("http://example.com:8080/mcp?a=b")
                .version(Version::HTTP_2)
                .header("Content-Type", "application/json")
                .header("x-multi", "one")
                .header("x-multi", "two")
                .header("x-bin", HeaderValue::from_bytes(b"\xffok").unwrap())
                .header("x-empty", ""),
        );
        p.extensions.insert(Principal("ada"));
        for head in [RequestHead::from_parts(&p), RequestHead::new(p.clone())] {
            assert_eq!(head.method(), Method::POST);
            assert_eq!(head.version(), Version::HTTP_2);
            assert_eq!(head.target(), "http://example.com:8080/mcp?a=b");
            assert_eq!(head.uri(), p.uri);
            assert_eq!(head.uri().query(), Some("a=b"));
            assert_eq!(head.header_str("content-type"), Some("application/json"));
            assert_eq!(head.header_str("CONTENT-TYPE"), Some("application/json"));
            assert_eq!(head.header("x-multi"), Some(&b"one"[..]));
            assert_eq!(
                head.header_all("X-Multi").collect::<Vec<_>>(),
                [&b"one"[..], b"two"]
            );
            assert_eq!(head.header("x-bin"), Some(&b"\xffok"[..]));
            assert_eq!(head.header_str("x-bin"), None, "not visible ASCII");
            assert_eq!(head.header_str("x-empty"), Some(""));
            assert_eq!(head.header("absent"), None);
            assert_eq!(
                head.headers().map(|(n, _)| n).collect::<Vec<_>>(),
                ["content-type", "x-multi", "x-multi", "x-bin", "x-empty"]
            );
            assert_eq!(head.header_map(), p.headers);
            assert_eq!(
                head.extensions().get::<Principal>(),
                Some(&Principal("ada"))
            );
        }
    }

    /// A head is kept (in an `Arc`) by every 2025-11-25 request pending
    /// between SEP-1699 polls, whose whole state the issue bounds at 2 KiB;
    /// a head kept as received must not size every head (it did from
    /// session 13 to 15: 224 bytes, +168 for each pending request).
    #[test]
    fn a_head_is_small_whichever_way_it_is_kept() {
        let size = std::mem::size_of::<RequestHead>();
        assert!(size <= 64, "RequestHead is {size} bytes");
    }

    /// Everything a handler can read of a head is the same whichever way
    /// it was kept; only an origin-form target is kept as received.
    #[test]
    fn a_head_kept_as_received_reads_as_the_copy_does() {
        let p = parts(
            http::Request::post("/mcp?a=b")
                .header("Content-Type", "application/json")
                .header("x-multi", "one")
                .header("accept", "text/event-stream")
                .header("x-multi", "two")
                .header("x-bin", HeaderValue::from_bytes(b"\xffok").unwrap())
                .header("x-empty", ""),
        );
        let copy = RequestHead::new(p.clone());
        let kept = RequestHead::as_received(p.clone());
        assert!(matches!(kept.fields, Fields::Received(_)));
        assert!(matches!(copy.fields, Fields::Block(_)));
        assert_eq!(kept.target(), "/mcp?a=b");
        assert_eq!(kept.target(), copy.target());
        assert_eq!(kept.uri(), copy.uri());
        assert_eq!(
            kept.headers().collect::<Vec<_>>(),
            copy.headers().collect::<Vec<_>>()
        );
        for name in [
            "content-type",
            "CONTENT-TYPE",
            "X-Multi",
            "x-bin",
            "x-empty",
            "absent",
        ] {
            assert_eq!(kept.header(name), copy.header(name), "{name}");
            assert_eq!(kept.header_str(name), copy.header_str(name), "{name}");
            assert_eq!(
                kept.header_all(name).collect::<Vec<_>>(),
                copy.header_all(name).collect::<Vec<_>>(),
                "{name}"
            );
        }
        assert_eq!(kept.header("x-multi"), Some(&b"one"[..]));
        assert_eq!(kept.header_map(), p.headers);
        assert_eq!(format!("{kept:?}"), format!("{copy:?}"));
        let shown = format!("{kept:?}");
        assert!(
            shown.contains("/mcp?a=b") && shown.contains("x-multi") && !shown.contains("one"),
            "the target and the header names, not the values: {shown}"
        );
        // `*` is its path: kept as received.
        let star = RequestHead::as_received(parts(http::Request::options("*")));
        assert!(matches!(star.fields, Fields::Received(_)));
        assert_eq!(star.target(), "*");
        // Absolute form, authority form: copied, their text printed.
        for target in ["http://example.com/mcp", "example.com:443"] {
            let head =
                RequestHead::as_received(parts(http::Request::options(target).header("x-a", "1")));
            assert!(matches!(head.fields, Fields::Block(_)), "{target}");
            assert_eq!(head.target(), target);
            assert_eq!(head.header_str("X-A"), Some("1"));
        }
    }

    /// `header_str` is `HeaderValue::to_str`'s rule: visible ASCII and
    /// tabs (bytes from 0x80 up are refused, `x-bin` above).
    #[test]
    fn header_str_takes_tabs() {
        let p = parts(
            http::Request::post("/mcp").header("x-tab", HeaderValue::from_bytes(b"a\tb").unwrap()),
        );
        for head in [RequestHead::new(p.clone()), RequestHead::as_received(p)] {
            assert_eq!(head.header_str("x-tab"), Some("a\tb"));
        }
    }

    #[test]
    fn extensions_can_be_changed_in_place() {
        let mut head = RequestHead::new(parts(http::Request::post("/mcp")));
        head.extensions_mut().insert(7u8);
        assert_eq!(head.extensions().get::<u8>(), Some(&7));
        head.extensions_mut().remove::<u8>();
        assert!(head.extensions().is_empty());
    }

    #[test]
    fn a_request_without_headers() {
        let head = RequestHead::new(parts(http::Request::get("/")));
        assert_eq!(head.target(), "/");
        assert_eq!(head.headers().count(), 0);
        assert!(head.header_map().is_empty());
        assert!(head.extensions().is_empty());
    }

    /// The target is kept as the `Uri` prints it, whichever form it has
    /// (origin-form is copied as it is, without printing).
    #[test]
    fn the_target_is_the_uri_as_printed_in_every_form() {
        for target in [
            "/mcp?x=1&y=%20",
            "/",
            "*",
            "/a/b?",
            "http://example.com:8080/mcp?a=b",
            "https://example.com",
            "example.com:443",
        ] {
            let uri: Uri = target.parse().unwrap();
            let p = parts(http::Request::get(uri.clone()));
            let head = RequestHead::new(p);
            assert_eq!(head.target(), uri.to_string(), "{target}");
            assert_eq!(head.uri(), uri, "{target}");
        }
    }
}
