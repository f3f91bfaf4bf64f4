//! Protocol versions and what each revision means for the transport.
//!
//! This module is the **only** place that compares version strings. Every
//! other piece of code asks a [`ProtocolVersion`] a question — "does this
//! revision allow batches?", "is it modern?" — and the answer comes from the
//! one [`Features`] table below, each row citing the spec section it comes
//! from. (rustls picks `Tls12`/`Tls13` once; we pick the revision once.)
//!
//! Versions are dates (`YYYY-MM-DD`) and order by date. Strings that are not a
//! known revision are kept as they came ([`ProtocolVersion::Unknown`]) so that
//! errors can quote them back (`UnsupportedProtocolVersionError.requested`).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An MCP protocol version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the deprecated HTTP+SSE transport (client fallback only).
    V2024_11_05,
    /// 2025-03-26: the first Streamable HTTP, with JSON-RPC batches.
    V2025_03_26,
    /// 2025-06-18: no batches; the `MCP-Protocol-Version` header.
    V2025_06_18,
    /// 2025-11-25: SEP-1699 priming events and server-initiated disconnect.
    V2025_11_25,
    /// 2026-07-28: the stateless, per-request-metadata model.
    V2026_07_28,
    /// Any other string, kept exactly as received.
    Unknown(String),
}

/// The era of a protocol version (2026-07-28 *Versioning*, "Terminology").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Era {
    /// Versions that establish a session with an `initialize` handshake
    /// (2025-11-25 and earlier).
    Legacy,
    /// Versions that carry version, identity and capabilities as per-request
    /// metadata (2026-07-28 and later).
    Modern,
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        })
    }
}

/// Which HTTP transport a revision uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpTransport {
    /// The 2024-11-05 HTTP+SSE transport (GET `/sse`, `endpoint` event, POSTs).
    HttpSse,
    /// Streamable HTTP (2025-03-26 and later).
    StreamableHttp,
}

/// What one revision means for the transport. One row per known revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Features {
    /// Legacy or modern.
    pub era: Era,
    /// Which HTTP transport.
    pub http_transport: HttpTransport,
    /// A POST body may be a JSON-RPC batch (2025-03-26 *Transports*, "Sending
    /// Messages to the Server": "an array of one or more requests and/or
    /// notifications"; removed in 2025-06-18, changelog item 1).
    pub batches: bool,
    /// Clients send `MCP-Protocol-Version` on requests after initialization
    /// (2025-06-18 *Transports*, "Protocol Version Header"); on 2026-07-28 it is
    /// required on every POST and validated against `_meta`.
    pub version_header: bool,
    /// SEP-1699: priming event, `retry`, server-initiated disconnect with
    /// polling (2025-11-25 *Transports*, "Sending Messages to the Server" 6).
    pub sse_polling: bool,
    /// Streams may be resumed by GET with `Last-Event-ID` ("Resumability and
    /// Redelivery"; removed in 2026-07-28).
    pub resumption: bool,
    /// `MCP-Session-Id` sessions started by `initialize` ("Session Management").
    pub sessions: bool,
    /// A standalone GET SSE stream for server-initiated messages ("Listening
    /// for Messages from the Server"; removed in 2026-07-28).
    pub get_stream: bool,
    /// Closing the response stream cancels the request (2026-07-28
    /// *Streamable HTTP*, "Cancellation"); earlier revisions say the opposite:
    /// "Disconnection SHOULD NOT be interpreted as the client cancelling its
    /// request", and cancel with `notifications/cancelled`.
    pub cancel_on_close: bool,
    /// The server sends JSON-RPC requests (sampling, elicitation, roots) on SSE
    /// streams; 2026-07-28 returns `InputRequiredResult` instead (MRTR).
    pub server_requests: bool,
    /// The `elicitation/create` request exists (added in 2025-06-18).
    pub elicitation: bool,
}

const fn legacy(batches: bool, header: bool, polling: bool, elicitation: bool) -> Features {
    Features {
        era: Era::Legacy,
        http_transport: HttpTransport::StreamableHttp,
        batches,
        version_header: header,
        sse_polling: polling,
        resumption: true,
        sessions: true,
        get_stream: true,
        cancel_on_close: false,
        server_requests: true,
        elicitation,
    }
}

const F_2024_11_05: Features = Features {
    http_transport: HttpTransport::HttpSse,
    resumption: false,
    sessions: false,
    ..legacy(true, false, false, false)
};
const F_2025_03_26: Features = legacy(true, false, false, false);
const F_2025_06_18: Features = legacy(false, true, false, true);
const F_2025_11_25: Features = legacy(false, true, true, true);
const F_2026_07_28: Features = Features {
    era: Era::Modern,
    http_transport: HttpTransport::StreamableHttp,
    batches: false,
    version_header: true,
    sse_polling: false,
    resumption: false,
    sessions: false,
    get_stream: false,
    cancel_on_close: true,
    server_requests: false,
    elicitation: true,
};

/// The first modern revision: versions on or after this date are modern.
const FIRST_MODERN: &str = "2026-07-28";

impl ProtocolVersion {
    /// Every known revision, oldest first.
    pub const KNOWN: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The known Streamable HTTP revisions this workspace serves, oldest first.
    pub const STREAMABLE: [ProtocolVersion; 4] = [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// Parses a version string; never fails (unknown strings are kept).
    pub fn parse(s: &str) -> ProtocolVersion {
        match s {
            "2024-11-05" => ProtocolVersion::V2024_11_05,
            "2025-03-26" => ProtocolVersion::V2025_03_26,
            "2025-06-18" => ProtocolVersion::V2025_06_18,
            "2025-11-25" => ProtocolVersion::V2025_11_25,
            "2026-07-28" => ProtocolVersion::V2026_07_28,
            other => ProtocolVersion::Unknown(other.to_owned()),
        }
    }

    /// The version string.
    pub fn as_str(&self) -> &str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
            ProtocolVersion::Unknown(s) => s,
        }
    }

    /// Whether this is one of the revisions this crate knows.
    pub fn is_known(&self) -> bool {
        !matches!(self, ProtocolVersion::Unknown(_))
    }

    /// Whether the string has the `YYYY-MM-DD` shape every MCP version has.
    /// A header value that fails this is *malformed* (400), as opposed to
    /// well-formed but unsupported.
    pub fn is_well_formed(&self) -> bool {
        is_date(self.as_str())
    }

    /// The revision's feature row, or `None` for an unknown version.
    pub fn features(&self) -> Option<&'static Features> {
        Some(match self {
            ProtocolVersion::V2024_11_05 => &F_2024_11_05,
            ProtocolVersion::V2025_03_26 => &F_2025_03_26,
            ProtocolVersion::V2025_06_18 => &F_2025_06_18,
            ProtocolVersion::V2025_11_25 => &F_2025_11_25,
            ProtocolVersion::V2026_07_28 => &F_2026_07_28,
            ProtocolVersion::Unknown(_) => return None,
        })
    }

    /// The era. Unknown well-formed versions dated 2026-07-28 or later are
    /// modern, earlier or malformed ones legacy (the *Versioning* page defines
    /// modern as "revision 2026-07-28 and later").
    pub fn era(&self) -> Era {
        match self.features() {
            Some(f) => f.era,
            None if self.is_well_formed() && self.as_str() >= FIRST_MODERN => Era::Modern,
            None => Era::Legacy,
        }
    }

    /// Shorthand for `self.era() == Era::Modern`.
    pub fn is_modern(&self) -> bool {
        self.era() == Era::Modern
    }

    /// Shorthand for `self.era() == Era::Legacy`.
    pub fn is_legacy(&self) -> bool {
        self.era() == Era::Legacy
    }

    /// A feature of a known revision; `false` for unknown versions.
    pub fn has(&self, f: impl FnOnce(&Features) -> bool) -> bool {
        self.features().is_some_and(f)
    }
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

impl Ord for ProtocolVersion {
    /// By date; malformed strings sort before every date, among themselves
    /// by text, so the order is total and consistent with `Eq`.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.known_rank(), other.known_rank()) {
            // Two known revisions: their order of declaration is by date
            // (a comparison of text and a date check each, otherwise, on
            // every request that asks which rules apply).
            (Some(a), Some(b)) => a.cmp(&b),
            _ => by_text(self, other),
        }
    }
}

/// The order of [`ProtocolVersion`] from the text: by date, malformed
/// strings first.
fn by_text(a: &ProtocolVersion, b: &ProtocolVersion) -> Ordering {
    (a.is_well_formed(), a.as_str()).cmp(&(b.is_well_formed(), b.as_str()))
}

impl ProtocolVersion {
    /// A known revision's place in date order.
    fn known_rank(&self) -> Option<u8> {
        Some(match self {
            ProtocolVersion::V2024_11_05 => 0,
            ProtocolVersion::V2025_03_26 => 1,
            ProtocolVersion::V2025_06_18 => 2,
            ProtocolVersion::V2025_11_25 => 3,
            ProtocolVersion::V2026_07_28 => 4,
            ProtocolVersion::Unknown(_) => return None,
        })
    }
}

impl PartialOrd for ProtocolVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolVersion {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(ProtocolVersion::parse(s))
    }
}

impl From<&str> for ProtocolVersion {
    fn from(s: &str) -> Self {
        ProtocolVersion::parse(s)
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<str>::deserialize(d)?;
        Ok(ProtocolVersion::parse(&s))
    }
}

/// Formats a list of versions as `a, b, c` for error messages.
pub fn list(versions: &[ProtocolVersion]) -> String {
    let v: Vec<&str> = versions.iter().map(|v| v.as_str()).collect();
    v.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_roundtrip_and_unknown_kept() {
        for v in ProtocolVersion::KNOWN {
            assert_eq!(ProtocolVersion::parse(v.as_str()), v);
            assert!(v.is_known());
        }
        let u = ProtocolVersion::parse("2030-01-01");
        assert_eq!(u.as_str(), "2030-01-01");
        assert!(!u.is_known());
        assert!(u.is_modern());
        assert!(ProtocolVersion::parse("2025-01-01").is_legacy());
        assert!(!ProtocolVersion::parse("garbage").is_well_formed());
        assert!(ProtocolVersion::parse("garbage").is_legacy());
    }

    #[test]
    fn ordered_by_date() {
        let mut v = [
            ProtocolVersion::parse("2030-01-01"),
            ProtocolVersion::V2026_07_28,
            ProtocolVersion::V2024_11_05,
            ProtocolVersion::parse("zzz"),
            ProtocolVersion::V2025_11_25,
            ProtocolVersion::V2025_03_26,
            ProtocolVersion::V2025_06_18,
        ];
        v.sort();
        let s: Vec<&str> = v.iter().map(|v| v.as_str()).collect();
        assert_eq!(
            s,
            [
                "zzz",
                "2024-11-05",
                "2025-03-26",
                "2025-06-18",
                "2025-11-25",
                "2026-07-28",
                "2030-01-01"
            ]
        );
    }

    /// The known revisions' shortcut gives the order their text gives,
    /// pair by pair (an unknown version and a known one go by text).
    #[test]
    fn the_known_order_is_the_order_of_the_text() {
        let mut all: Vec<ProtocolVersion> = ProtocolVersion::KNOWN.to_vec();
        all.extend(["2025-06-17", "2025-06-19", "zzz", "2099-01-01"].map(ProtocolVersion::parse));
        for a in &all {
            for b in &all {
                assert_eq!(a.cmp(b), by_text(a, b), "{a} against {b}");
            }
        }
        assert!(ProtocolVersion::V2025_06_18 < ProtocolVersion::V2025_11_25);
        assert!(ProtocolVersion::V2026_07_28 > ProtocolVersion::V2024_11_05);
    }

    /// Only `YYYY-MM-DD` is well-formed: ten characters, the dashes at
    /// their places, digits everywhere else.
    #[test]
    fn only_a_date_is_well_formed() {
        for ok in ["2025-11-25", "0000-00-00", "9999-99-99"] {
            assert!(ProtocolVersion::parse(ok).is_well_formed(), "{ok}");
        }
        for bad in [
            "",
            "2025",
            "20251125",
            "2025-11-25 ",
            " 2025-11-25",
            "2025-11-2x",
            "x025-11-25",
            "2025/11/25",
            "2025-11/25",
            "2025/11-25",
            "2025-1-125",
            "abcd-ef-gh",
            "2025-11-25-01",
        ] {
            assert!(!ProtocolVersion::parse(bad).is_well_formed(), "{bad:?}");
        }
    }

    #[test]
    fn eras_are_named() {
        assert_eq!(Era::Legacy.to_string(), "legacy");
        assert_eq!(Era::Modern.to_string(), "modern");
    }

    /// Every row of the table, field by field, as the spec pages cited
    /// on [`Features`] give it. 2024-11-05's HTTP+SSE has no
    /// `MCP-Session-Id` session and no `Last-Event-ID` resumption (its
    /// *Transports* page: an `endpoint` event, then POSTs to that URL).
    /// Its batches are JSON-RPC 2.0's, which that revision adopts whole
    /// (*Basic*: "MUST follow the JSON-RPC 2.0 specification"); 2025-03-26
    /// wrote them into the transport, 2025-06-18 removed them.
    #[test]
    fn every_row_of_the_feature_table() {
        use HttpTransport::{HttpSse, StreamableHttp};
        use ProtocolVersion as V;
        #[allow(clippy::type_complexity)]
        let rows: [(V, Era, HttpTransport, [bool; 9]); 5] = [
            // batches, version header, polling, resumption, sessions,
            // GET stream, cancel on close, server requests, elicitation
            (
                V::V2024_11_05,
                Era::Legacy,
                HttpSse,
                [true, false, false, false, false, true, false, true, false],
            ),
            (
                V::V2025_03_26,
                Era::Legacy,
                StreamableHttp,
                [true, false, false, true, true, true, false, true, false],
            ),
            (
                V::V2025_06_18,
                Era::Legacy,
                StreamableHttp,
                [false, true, false, true, true, true, false, true, true],
            ),
            (
                V::V2025_11_25,
                Era::Legacy,
                StreamableHttp,
                [false, true, true, true, true, true, false, true, true],
            ),
            (
                V::V2026_07_28,
                Era::Modern,
                StreamableHttp,
                [false, true, false, false, false, false, true, false, true],
            ),
        ];
        for (v, era, transport, flags) in rows {
            let f = v.features().unwrap();
            assert_eq!((f.era, f.http_transport), (era, transport), "{v}");
            let got = [
                f.batches,
                f.version_header,
                f.sse_polling,
                f.resumption,
                f.sessions,
                f.get_stream,
                f.cancel_on_close,
                f.server_requests,
                f.elicitation,
            ];
            assert_eq!(got, flags, "{v}");
        }
    }

    /// The known revisions carry their rank, in date order, for the
    /// comparison's shortcut; an unknown version has none and goes by text.
    #[test]
    fn known_revisions_are_ranked_in_date_order() {
        let ranks: Vec<Option<u8>> = ProtocolVersion::KNOWN
            .iter()
            .map(ProtocolVersion::known_rank)
            .collect();
        assert_eq!(ranks, [Some(0), Some(1), Some(2), Some(3), Some(4)]);
        assert_eq!(ProtocolVersion::parse("2099-01-01").known_rank(), None);
    }

    #[test]
    fn feature_table() {
        use ProtocolVersion as V;
        assert!(V::V2025_03_26.has(|f| f.batches));
        assert!(!V::V2025_06_18.has(|f| f.batches));
        assert!(!V::V2025_03_26.has(|f| f.version_header));
        assert!(V::V2025_06_18.has(|f| f.version_header));
        assert!(V::V2025_11_25.has(|f| f.sse_polling));
        assert!(!V::V2025_06_18.has(|f| f.sse_polling));
        assert!(!V::V2025_03_26.has(|f| f.elicitation));
        let m = V::V2026_07_28.features().unwrap();
        assert_eq!(m.era, Era::Modern);
        assert!(m.cancel_on_close && !m.sessions && !m.get_stream && !m.resumption);
        assert!(!m.server_requests);
        assert_eq!(
            V::V2024_11_05.features().unwrap().http_transport,
            HttpTransport::HttpSse
        );
        assert!(!V::parse("2030-01-01").has(|f| f.batches));
    }
}
