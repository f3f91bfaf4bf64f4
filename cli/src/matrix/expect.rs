//! What the spec predicts, written down once.
//!
//! Two tables: which revision each client × server pair ends up on (or that
//! it fails), and what each scenario does on each revision. Both are written
//! out by hand from the spec texts cited beside each row — not computed by
//! the negotiation code under test.

use mcp_transport_core::ProtocolVersion as V;

use super::{ClientKind, ServerKind, scenario::Scenario};

/// The outcome the spec predicts for one scenario of one cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// The scenario works on the negotiated revision.
    Works,
    /// It fails, in the named way.
    Fails(Failure),
    /// The negotiated revision has no such mechanism.
    NotApplicable,
}

/// A predicted failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No revision both sides speak: negotiation ends in an error that names
    /// both sides.
    NoMutualRevision,
    /// The request's stream broke and the revision cannot resume it: a clear
    /// error, no hang.
    NotResumable,
    /// The handler asked for a kind of client input the revision does not
    /// have: the request fails with a JSON-RPC error saying so.
    InputUnavailable,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Failure::NoMutualRevision => "fails: no mutually supported revision",
            Failure::NotResumable => "fails: stream not resumable",
            Failure::InputUnavailable => "fails: input kind not in this revision",
        })
    }
}

/// A prediction and the spec text it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prediction {
    /// The revision the cell negotiates (`None`: it fails to negotiate).
    pub revision: Option<V>,
    /// What the scenario does.
    pub expected: Expected,
    /// The spec section the prediction comes from.
    pub spec: &'static str,
}

const LIFECYCLE: &str = "Lifecycle, \"Version Negotiation\" (2025-03-26..2025-11-25): the server answers the requested version if supported, else its latest; the client accepts only a version it supports";
const MATRIX_LEGACY_MODERN: &str =
    "2026-07-28 Versioning, \"Compatibility Matrix\": Legacy client x Modern server: Fails";
const MATRIX_MODERN_LEGACY: &str =
    "2026-07-28 Versioning, \"Compatibility Matrix\": Modern client x Legacy server: Fails";
const MATRIX_DUAL_LEGACY: &str = "2026-07-28 Versioning, \"Compatibility Matrix\": Dual-era client x Legacy server: Works (falls back to initialize)";
const MATRIX_DUAL_MODERN: &str =
    "2026-07-28 Versioning, \"Compatibility Matrix\": Dual-era client x Modern server: Works";
const MATRIX_LEGACY_DUAL: &str =
    "2026-07-28 Versioning, \"Compatibility Matrix\": Legacy client x Dual-era server: Works";
const MATRIX_MODERN_MODERN: &str =
    "2026-07-28 Versioning, \"Compatibility Matrix\": Modern client x Modern server: Works";

/// The revision a cell negotiates, or `None` when it must fail, with the
/// spec text behind it. One row per cell.
pub fn negotiated(client: ClientKind, server: ServerKind) -> (Option<V>, &'static str) {
    use ClientKind as C;
    use ServerKind as S;
    match (client, server) {
        // Single-revision legacy clients: only their own revision works.
        (C::C0326, S::S0326) => (Some(V::V2025_03_26), LIFECYCLE),
        (C::C0326, S::S0618 | S::S1125) => (None, LIFECYCLE),
        (C::C0326, S::S0728) => (None, MATRIX_LEGACY_MODERN),
        (C::C0326, S::Legacy | S::All) => (Some(V::V2025_03_26), MATRIX_LEGACY_DUAL),
        (C::C0618, S::S0618) => (Some(V::V2025_06_18), LIFECYCLE),
        (C::C0618, S::S0326 | S::S1125) => (None, LIFECYCLE),
        (C::C0618, S::S0728) => (None, MATRIX_LEGACY_MODERN),
        (C::C0618, S::Legacy | S::All) => (Some(V::V2025_06_18), MATRIX_LEGACY_DUAL),
        (C::C1125, S::S1125) => (Some(V::V2025_11_25), LIFECYCLE),
        (C::C1125, S::S0326 | S::S0618) => (None, LIFECYCLE),
        (C::C1125, S::S0728) => (None, MATRIX_LEGACY_MODERN),
        (C::C1125, S::Legacy | S::All) => (Some(V::V2025_11_25), MATRIX_LEGACY_DUAL),
        // Modern-only client.
        (C::Modern, S::S0326 | S::S0618 | S::S1125 | S::Legacy) => (None, MATRIX_MODERN_LEGACY),
        (C::Modern, S::S0728 | S::All) => (Some(V::V2026_07_28), MATRIX_MODERN_MODERN),
        // Legacy-only dual client: offers 2025-11-25, accepts counter-offers.
        (C::Legacy, S::S0326) => (Some(V::V2025_03_26), LIFECYCLE),
        (C::Legacy, S::S0618) => (Some(V::V2025_06_18), LIFECYCLE),
        (C::Legacy, S::S1125) => (Some(V::V2025_11_25), LIFECYCLE),
        (C::Legacy, S::S0728) => (None, MATRIX_LEGACY_MODERN),
        (C::Legacy, S::Legacy | S::All) => (Some(V::V2025_11_25), MATRIX_LEGACY_DUAL),
        // Dual-era client: modern first, then initialize.
        (C::All, S::S0326) => (Some(V::V2025_03_26), MATRIX_DUAL_LEGACY),
        (C::All, S::S0618) => (Some(V::V2025_06_18), MATRIX_DUAL_LEGACY),
        (C::All, S::S1125 | S::Legacy) => (Some(V::V2025_11_25), MATRIX_DUAL_LEGACY),
        (C::All, S::S0728 | S::All) => (Some(V::V2026_07_28), MATRIX_DUAL_MODERN),
    }
}

/// What a scenario does on a negotiated revision, with the spec text.
pub fn on_revision(revision: &V, scenario: Scenario) -> (Expected, &'static str) {
    let modern = revision.is_modern();
    let polling = revision.has(|f| f.sse_polling);
    match scenario {
        Scenario::Json | Scenario::Sse => (
            Expected::Works,
            "Transports, \"Sending Messages\": the server MUST return either Content-Type: application/json or text/event-stream; the client MUST support both",
        ),
        Scenario::Progress => (
            Expected::Works,
            "Progress: notifications/progress with the request's progressToken; Logging: notifications/message (2026-07-28: only when _meta carries io.modelcontextprotocol/logLevel)",
        ),
        Scenario::Input if modern => (
            Expected::Works,
            "2026-07-28 Multi Round-Trip Requests: InputRequiredResult, retried with inputResponses and requestState",
        ),
        Scenario::Input if !revision.has(|f| f.elicitation) => (
            Expected::Fails(Failure::InputUnavailable),
            "2025-06-18 changelog: \"Added support for elicitation\"; 2025-03-26's schema has no elicitation/create, so the server refuses to send it",
        ),
        Scenario::Input => (
            Expected::Works,
            "Elicitation (2025-06-18+) / server requests on the POST's SSE stream: \"The server MAY send JSON-RPC requests and notifications before sending the JSON-RPC response\"",
        ),
        Scenario::Cancel if modern => (
            Expected::Works,
            "2026-07-28 Streamable HTTP, \"Cancellation\": closing the SSE response stream MUST be treated by the server as cancellation of that request",
        ),
        Scenario::Cancel => (
            Expected::Works,
            "Cancellation: notifications/cancelled; \"Disconnection SHOULD NOT be interpreted as the client cancelling its request\"",
        ),
        Scenario::Disconnect if polling => (
            Expected::Works,
            "2025-11-25 Transports (SEP-1699): the server MAY close the connection after an event id and a retry; the client polls by GET with Last-Event-ID",
        ),
        Scenario::Disconnect => (
            Expected::NotApplicable,
            "Server-initiated disconnect before the response exists only from 2025-11-25 (SEP-1699); 2026-07-28 has no resumption",
        ),
        Scenario::NetworkDrop if modern => (
            Expected::Fails(Failure::NotResumable),
            "2026-07-28 Streamable HTTP: \"Resumable SSE streams via Last-Event-ID are not supported\"",
        ),
        Scenario::NetworkDrop => (
            Expected::Works,
            "Transports, \"Resumability and Redelivery\": the client resumes by GET with Last-Event-ID and the server replays what followed on that stream",
        ),
        Scenario::Changes if modern => (
            Expected::Works,
            "2026-07-28 Subscriptions: change notifications flow on the subscriptions/listen response stream",
        ),
        Scenario::Changes => (
            Expected::Works,
            "Transports, \"Listening for Messages from the Server\": the GET stream carries server notifications unrelated to a request",
        ),
        Scenario::Expiry | Scenario::Delete if modern => (
            Expected::NotApplicable,
            "2026-07-28 has no sessions (\"Removal of protocol-level sessions\")",
        ),
        Scenario::Expiry => (
            Expected::Works,
            "Transports, \"Session Management\" 4: on 404 for a request with a session id the client MUST start a new session",
        ),
        Scenario::Delete => (
            Expected::Works,
            "Transports, \"Session Management\" 5: DELETE with MCP-Session-Id terminates the session; later requests get 404",
        ),
        Scenario::Get405 if modern => (
            Expected::Works,
            "2026-07-28 Streamable HTTP, \"Earlier Streamable HTTP Revisions\": HTTP GET to the MCP endpoint: respond with 405 Method Not Allowed",
        ),
        Scenario::Get405 => (
            Expected::NotApplicable,
            "Legacy revisions offer a GET stream (or 405 by choice); the 405 rule is 2026-07-28's",
        ),
    }
}

/// The full prediction for one scenario of one cell.
pub fn expected(client: ClientKind, server: ServerKind, scenario: Scenario) -> Prediction {
    match negotiated(client, server) {
        (None, spec) => Prediction {
            revision: None,
            expected: Expected::Fails(Failure::NoMutualRevision),
            spec,
        },
        (Some(rev), _) => {
            let (expected, spec) = on_revision(&rev, scenario);
            Prediction {
                revision: Some(rev),
                expected,
                spec,
            }
        }
    }
}
