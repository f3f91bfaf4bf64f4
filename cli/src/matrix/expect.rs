//! What the spec predicts, written down once.
//!
//! Two tables: which revision each client × server pair ends up on (or that
//! it fails), and what each scenario does on each revision. Both are written
//! out by hand from the spec texts cited beside each row — not computed by
//! the negotiation code under test. `long_running_drop` and `task` take one
//! input more, who declares tasks ([`on_tasks`]): the matrix's
//! configuration before a run, the wire after it (see
//! [`declared`]), since a call becomes a task only when
//! both sides declare tasks.

use mcp_transport_core::ProtocolVersion as V;

pub use super::failure::Failure;

use super::declared::{self, Declared};
use super::harness::Observed;
use super::{ClientKind, ServerKind, scenario::Scenario};

/// The outcome the spec predicts for one scenario of one cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// The scenario works on the negotiated revision.
    Works,
    /// It fails, in the named way.
    Fails(Failure),
    /// The negotiated revision has no such mechanism: the scenario still
    /// runs and checks that the mechanism is absent (no priming event, no
    /// early close, 405, no session id, ...).
    NotApplicable,
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

impl Prediction {
    /// Whether a cell that negotiated `negotiated` and observed `observed`
    /// is what this predicts: the same revision, and works / fails for the
    /// predicted reason / absent where the mechanism is not applicable. The
    /// one pass rule of our own matrix and of the peer cells.
    pub fn matches(&self, negotiated: &Option<V>, observed: &Observed) -> bool {
        if *negotiated != self.revision {
            return false;
        }
        match (&self.expected, observed) {
            (Expected::Works, Observed::Works(_)) => true,
            (
                Expected::Fails(want),
                Observed::Failed {
                    kind: Some(got), ..
                },
            ) => {
                want == got
                    // The spec names no form for the error of a server that
                    // cannot ask: a tool error is one too.
                    || (*want == Failure::NoBackChannel && *got == Failure::InputUnavailable)
            }
            (Expected::NotApplicable, Observed::Absent(_)) => true,
            _ => false,
        }
    }
}

pub(crate) const LIFECYCLE: &str = "Lifecycle, \"Version Negotiation\" (2025-03-26..2025-11-25): the server answers the requested version if supported, else its latest; the client accepts only a version it supports";
pub(crate) const MATRIX_LEGACY_MODERN: &str =
    "2026-07-28 Versioning, \"Compatibility Matrix\": Legacy client x Modern server: Fails";
pub(crate) const MATRIX_MODERN_LEGACY: &str =
    "2026-07-28 Versioning, \"Compatibility Matrix\": Modern client x Legacy server: Fails";
pub(crate) const MATRIX_DUAL_LEGACY: &str = "2026-07-28 Versioning, \"Compatibility Matrix\": Dual-era client x Legacy server: Works (falls back to initialize)";
pub(crate) const MATRIX_DUAL_MODERN: &str =
    "2026-07-28 Versioning, \"Compatibility Matrix\": Dual-era client x Modern server: Works";
pub(crate) const MATRIX_LEGACY_DUAL: &str =
    "2026-07-28 Versioning, \"Compatibility Matrix\": Legacy client x Dual-era server: Works";
pub(crate) const MATRIX_MODERN_MODERN: &str =
    "2026-07-28 Versioning, \"Compatibility Matrix\": Modern client x Modern server: Works";

pub(crate) const HTTP_SSE_SAME: &str = "2024-11-05 Transports, \"HTTP with SSE\": \"When a client connects, the server MUST send an endpoint event\"; \"All subsequent client messages MUST be sent as HTTP POST requests to this endpoint\"; \"Server messages are sent as SSE message events\"";
pub(crate) const HTTP_SSE_FALLBACK: &str = "2026-07-28 Streamable HTTP, \"HTTP+SSE Transport (2024-11-05)\": the client POSTs first; \"If it fails with HTTP status code 400 Bad Request, 404 Not Found, or 405 Method Not Allowed ... Issue a GET request to the server URL, expecting that this will open an SSE stream and return an endpoint event as the first event\"";
pub(crate) const HTTP_SSE_SERVER: &str = "2024-11-05 Transports, \"HTTP with SSE\": the server has only the SSE and POST endpoints; a client without the HTTP+SSE fallback (no 2024-11-05 offered) finds no revision, a clear error";
pub(crate) const HTTP_SSE_CLIENT_NEW_SERVER: &str = "2026-07-28 Streamable HTTP, \"HTTP+SSE Transport (2024-11-05)\": \"Servers wanting to support older clients should: Continue to host both the SSE and POST endpoints of the old transport\"; these servers do not, so an HTTP+SSE-only client fails clearly";
pub(crate) const VERSIONING_RETRY: &str = "2026-07-28 Versioning, \"Protocol Version Negotiation\": the server \"MUST respond with an UnsupportedProtocolVersionError listing the versions it does support\"; \"The client SHOULD select a mutually supported version from the supported list and retry the request\"";

/// A client as negotiation sees it: one of our configurations
/// ([`ClientModel::of`]) or a peer's client row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientModel {
    /// What it offers, most preferred first (modern revisions are tried
    /// before `initialize`; 2024-11-05 means the HTTP+SSE fallback).
    pub offers: Vec<V>,
    /// The legacy revisions it takes in a server's counter-offer.
    pub accepts: Vec<V>,
}

impl ClientModel {
    /// One of our client configurations: it accepts a counter-offer only
    /// among the revisions it is configured with.
    pub fn of(kind: ClientKind) -> ClientModel {
        let offers = kind.revisions();
        ClientModel {
            accepts: offers.clone(),
            offers,
        }
    }
}

fn streamable_legacy(v: &V) -> bool {
    !v.is_modern() && *v != V::V2024_11_05
}

/// The revision a client and a server serving `served` negotiate (`None`:
/// it must fail), with the spec text behind it: the one negotiation rule of
/// our own matrix ([`negotiated`]) and of the peer cells.
pub fn negotiated_by(client: &ClientModel, served: &[V]) -> (Option<V>, &'static str) {
    let client_modern: Vec<&V> = client.offers.iter().filter(|v| v.is_modern()).collect();
    let client_legacy: Vec<&V> = client
        .offers
        .iter()
        .filter(|v| streamable_legacy(v))
        .collect();
    let served_legacy: Vec<&V> = served.iter().filter(|v| streamable_legacy(v)).collect();
    let served_modern = served.iter().any(V::is_modern);
    let dual = !client_modern.is_empty() && !client_legacy.is_empty();
    if let Some(v) = client_modern.iter().find(|v| served.contains(v)) {
        let spec = if client_modern.first() != Some(v) {
            // Its first offer was refused with -32022; it retried.
            VERSIONING_RETRY
        } else if dual {
            MATRIX_DUAL_MODERN
        } else {
            MATRIX_MODERN_MODERN
        };
        return (Some((*v).clone()), spec);
    }
    let http_sse_client = client.offers.contains(&V::V2024_11_05);
    let http_sse_server = served.contains(&V::V2024_11_05);
    if client_legacy.is_empty() {
        return match (http_sse_client, http_sse_server) {
            (true, true) => (Some(V::V2024_11_05), HTTP_SSE_SAME),
            (true, false) => (None, HTTP_SSE_CLIENT_NEW_SERVER),
            (false, true) => (None, HTTP_SSE_SERVER),
            (false, false) => (None, MATRIX_MODERN_LEGACY),
        };
    }
    let Some(latest) = served_legacy.iter().max() else {
        return match (http_sse_server, http_sse_client) {
            (true, true) => (Some(V::V2024_11_05), HTTP_SSE_FALLBACK),
            (true, false) => (None, HTTP_SSE_SERVER),
            _ => (None, MATRIX_LEGACY_MODERN),
        };
    };
    let offer = client_legacy[0];
    if served_legacy.contains(&offer) {
        let spec = if dual {
            MATRIX_DUAL_LEGACY
        } else if served_modern || served_legacy.len() > 1 {
            MATRIX_LEGACY_DUAL
        } else {
            LIFECYCLE
        };
        return (Some(offer.clone()), spec);
    }
    match (client.accepts.contains(latest), dual) {
        (true, true) => (Some((*latest).clone()), MATRIX_DUAL_LEGACY),
        (true, false) => (Some((*latest).clone()), LIFECYCLE),
        (false, _) => (None, LIFECYCLE),
    }
}

/// The revision a cell of our own matrix negotiates, or `None` when it
/// must fail, with the spec text behind it.
pub fn negotiated(client: ClientKind, server: ServerKind) -> (Option<V>, &'static str) {
    negotiated_by(&ClientModel::of(client), &server.predicted_as().revisions())
}

/// What a scenario does on a negotiated revision, with the spec text.
///
/// `long_running_drop` and `task` also depend on who declares tasks: here
/// neither side does; [`on_tasks`] takes the declarations.
pub fn on_revision(revision: &V, scenario: Scenario) -> (Expected, &'static str) {
    if *revision == V::V2024_11_05 {
        return on_http_sse(scenario);
    }
    let modern = revision.is_modern();
    let polling = revision.has(|f| f.sse_polling);
    match scenario {
        Scenario::Json => (
            Expected::Works,
            "Transports, \"Sending Messages to the Server\" 5: \"the server MUST either return Content-Type: text/event-stream ... or Content-Type: application/json, to return one JSON object. The client MUST support both these cases.\"",
        ),
        Scenario::Sse => (
            Expected::Works,
            "Transports, \"Sending Messages to the Server\" 6: \"The server MAY send JSON-RPC requests and notifications before sending the JSON-RPC response\"; 2026-07-28: \"A server that supports only this revision ... do not mint or echo session IDs\"",
        ),
        Scenario::Progress => (
            Expected::Works,
            "Progress: \"The receiver MAY then send progress notifications containing: The original progress token ...\"; \"The progress value MUST increase with each notification\"; after the response the stream ends (\"After the JSON-RPC response has been sent, the server SHOULD terminate the SSE stream\")",
        ),
        Scenario::Input if modern => (
            Expected::Works,
            "2026-07-28 Multi Round-Trip Requests: the server answers InputRequiredResult; the client retries with inputResponses and requestState",
        ),
        Scenario::Input if !revision.has(|f| f.elicitation) => (
            Expected::Fails(Failure::InputUnavailable),
            "2025-03-26 has no elicitation (2025-06-18 changelog: \"Added support for elicitation\"); 2025-03-26 Tools, \"Error Handling\": \"Tool Execution Errors: Reported in tool results with isError: true\"",
        ),
        Scenario::Input => (
            Expected::Works,
            "Elicitation (2025-06-18+); Transports: \"The server MAY send JSON-RPC requests and notifications before sending the JSON-RPC response\"",
        ),
        Scenario::Cancel if modern => (
            Expected::Works,
            "2026-07-28 Streamable HTTP, \"Cancellation\": \"Closing the SSE response stream MUST be treated by the server as cancellation of that request ... MUST NOT send any further messages for it\"; no notifications/cancelled is expected",
        ),
        Scenario::Cancel => (
            Expected::Works,
            "Transports: \"To cancel, the client SHOULD explicitly send an MCP CancelledNotification\"; Cancellation: receivers SHOULD \"Not send a response for the cancelled request\"",
        ),
        Scenario::Disconnect if polling => (
            Expected::Works,
            "2025-11-25 Transports, \"Sending Messages to the Server\" 6 (SEP-1699): \"The server SHOULD immediately send an SSE event consisting of an event ID and an empty data field\"; \"it SHOULD send an SSE event with a standard retry field before closing the connection. The client MUST respect the retry field\"; resumption by GET with Last-Event-ID replays what followed, each message once",
        ),
        Scenario::Disconnect if modern => (
            Expected::NotApplicable,
            "2026-07-28 Streamable HTTP: \"Resumable SSE streams via Last-Event-ID are not supported\": the call completes on its POST stream, no event ids, no retry, no GET",
        ),
        Scenario::Disconnect => (
            Expected::NotApplicable,
            "SEP-1699, \"Backward Compatibility\" (old client + new server): an old-revision session gets no priming event and no early close (2025-06-18: \"The server SHOULD NOT close the SSE stream before sending the JSON-RPC response\"): the call completes on its POST stream, every event once",
        ),
        Scenario::NetworkDrop if modern => (
            Expected::Fails(Failure::NotResumable),
            "2026-07-28 Streamable HTTP: \"Resumable SSE streams via Last-Event-ID are not supported\"; \"Closing the SSE response stream MUST be treated by the server as cancellation of that request\"",
        ),
        Scenario::NetworkDrop => (
            Expected::Works,
            "Transports, \"Resumability and Redelivery\": the client resumes by GET with Last-Event-ID; the server replays \"messages that would have been sent after the last event ID, on the stream that was disconnected\"; \"Disconnection SHOULD NOT be interpreted as the client cancelling its request\"",
        ),
        Scenario::TwoStreams if modern => (
            Expected::Works,
            "2026-07-28 Streamable HTTP: \"each request has its own response stream\": two concurrent calls each get only their own progress",
        ),
        Scenario::TwoStreams => (
            Expected::Works,
            "Transports, \"Resumability and Redelivery\": \"The server MUST NOT replay messages that would have been delivered on a different stream\"; \"Multiple Connections\": \"MUST NOT broadcast the same message across multiple streams\"",
        ),
        Scenario::Changes if modern => (
            Expected::Works,
            "2026-07-28 Subscriptions: change notifications flow on the subscriptions/listen stream; \"Servers MUST NOT send notification types the client has not explicitly requested\"",
        ),
        Scenario::Changes => (
            Expected::Works,
            "Transports, \"Listening for Messages from the Server\": the GET stream carries server notifications; \"The server MUST NOT send a JSON-RPC response on the stream\"",
        ),
        Scenario::Expiry | Scenario::Delete if modern => (
            Expected::NotApplicable,
            "2026-07-28 Streamable HTTP, \"Earlier Streamable HTTP Revisions\": \"HTTP GET or DELETE to the MCP endpoint: respond with 405 Method Not Allowed\"; \"An Mcp-Session-Id header on a request: ignore it, and do not mint or echo session IDs\"; \"A Last-Event-ID header: ignore it\"",
        ),
        Scenario::Expiry => (
            Expected::Works,
            "Transports, \"Session Management\" 3-4: after the server terminates a session it \"MUST respond to requests containing that session ID with HTTP 404 Not Found\"; on 404 the client \"MUST start a new session by sending a new InitializeRequest without a session ID attached\"",
        ),
        Scenario::Delete => (
            Expected::Works,
            "Transports, \"Session Management\" 3 and 5: the client SHOULD send DELETE with MCP-Session-Id; once the session is terminated the server \"MUST respond to requests containing that session ID with HTTP 404 Not Found\"",
        ),
        Scenario::Get405 if modern => (
            Expected::Works,
            "2026-07-28 Streamable HTTP, \"Earlier Streamable HTTP Revisions\": \"HTTP GET or DELETE to the MCP endpoint: respond with 405 Method Not Allowed\" (also with a stray Mcp-Session-Id or Last-Event-ID)",
        ),
        Scenario::EraCache => (
            Expected::Works,
            "2026-07-28 Versioning, \"Backward Compatibility\": \"The era determination is a property of the server ... Clients SHOULD cache the result for the lifetime of the ... origin (HTTP)\": later connections to the origin negotiate the same revision without probing again",
        ),
        Scenario::Get405 => (
            Expected::NotApplicable,
            "Transports, \"Listening for Messages from the Server\" 3: \"The server MUST either return Content-Type: text/event-stream in response to this HTTP GET, or else return HTTP 405\"; this server offers the stream",
        ),
        Scenario::LongRunningDrop | Scenario::Task => {
            on_tasks(revision, Declared::default(), scenario)
        }
    }
}

const TASKS_2026: &str = "Tasks extension (SEP-2663), \"Capability Negotiation\": the client declares io.modelcontextprotocol/tasks in the request's capabilities, the server in server/discover; \"A server MUST NOT return CreateTaskResult to a client that did not include the extension capability on its request\"";
const TASKS_2025: &str = "2025-11-25 Tasks, \"Capabilities\": \"Servers and clients that support task-augmented requests MUST declare a tasks capability during initialization\"; \"If a server's capabilities include tasks.requests.tools.call, then clients may augment tools/call requests with a task\"";

/// What `long_running_drop` and `task` do on `revision` when `declared`
/// says who declares tasks (read from the wire by the scenarios: see
/// [`declared`]).
pub fn on_tasks(revision: &V, declared: Declared, scenario: Scenario) -> (Expected, &'static str) {
    let tasks = declared::revision_has_tasks(revision) && declared.both();
    match scenario {
        Scenario::LongRunningDrop if tasks && revision.is_modern() => (
            Expected::Works,
            "Tasks extension (SEP-2663), \"Creating Tasks\": \"A server MUST NOT return CreateTaskResult until the task is durably created\"; \"Clients SHOULD continue polling until the task reaches a terminal status\": a cut connection loses nothing, the result comes by tasks/get (with Mcp-Name: taskId)",
        ),
        Scenario::LongRunningDrop if tasks => (
            Expected::Works,
            "2025-11-25 Tasks, \"Creating Tasks\": \"The actual operation result becomes available later through tasks/result after the task completes\": a cut connection loses nothing, the result comes by tasks/result or tasks/get",
        ),
        Scenario::LongRunningDrop if revision.is_modern() => (
            Expected::Fails(Failure::NotResumable),
            "2026-07-28 Streamable HTTP: \"Resumable SSE streams via Last-Event-ID are not supported\"; \"Closing the SSE response stream MUST be treated by the server as cancellation of that request\"; without tasks on both sides (Tasks extension, \"Capability Negotiation\") the work is on the held stream: a clear error, and the server cancels",
        ),
        Scenario::LongRunningDrop if revision.has(|f| f.sse_polling) => (
            Expected::Works,
            "2025-11-25 Transports, \"Sending Messages to the Server\" 6 (SEP-1699): \"The server SHOULD immediately send an SSE event consisting of an event ID and an empty data field in order to prime the client to reconnect\"; \"Resumability and Redelivery\": resume by GET with Last-Event-ID; \"Disconnection SHOULD NOT be interpreted as the client cancelling its request\"",
        ),
        Scenario::LongRunningDrop if *revision == V::V2024_11_05 => (
            Expected::Fails(Failure::NotResumable),
            "2024-11-05 Transports, \"HTTP with SSE\": the answer comes as an SSE message event on the one stream, which has no event ids and no resumption: a cut loses the call, a clear error",
        ),
        Scenario::LongRunningDrop => (
            Expected::Fails(Failure::NotResumable),
            "2025-03-26/2025-06-18 Transports, \"Resumability and Redelivery\": \"Servers MAY attach an id field to their SSE events\"; the client resumes with \"the last event ID it received\" — a long call that sends nothing before its answer gives it none (the priming event is 2025-11-25's, SEP-1699), so a cut mid-way is a clear \"not resumable\" error; \"Disconnection SHOULD NOT be interpreted as the client cancelling its request\"",
        ),
        Scenario::Task if tasks && revision.is_modern() => (Expected::Works, TASKS_2026),
        Scenario::Task if tasks => (Expected::Works, TASKS_2025),
        Scenario::Task if revision.is_modern() => (
            Expected::NotApplicable,
            "Tasks extension (SEP-2663), \"Capability Negotiation\": without the extension on both sides no CreateTaskResult comes back (\"A server MUST NOT return CreateTaskResult to a client that did not include the extension capability\"); the call is answered on its stream",
        ),
        Scenario::Task if *revision == V::V2025_11_25 => (
            Expected::NotApplicable,
            "2025-11-25 Tasks, \"Capabilities\": \"If capabilities.tasks is not defined, the peer SHOULD NOT attempt to create tasks\"; without tools.call tasks on the server the call is answered directly",
        ),
        Scenario::Task => (
            Expected::NotApplicable,
            "Tasks are new in 2025-11-25 (\"Tasks were introduced in version 2025-11-25\"): on earlier revisions the call is answered directly, no task",
        ),
        _ => unreachable_scenario(scenario),
    }
}

/// `on_tasks` is only asked about the task scenarios.
fn unreachable_scenario(scenario: Scenario) -> (Expected, &'static str) {
    debug_assert!(false, "on_tasks asked about {scenario}");
    (Expected::NotApplicable, "not a task scenario")
}

/// What a scenario does over the deprecated HTTP+SSE transport (2024-11-05).
pub fn on_http_sse(scenario: Scenario) -> (Expected, &'static str) {
    match scenario {
        Scenario::Json => (
            Expected::NotApplicable,
            "2024-11-05 Transports, \"HTTP with SSE\": \"Server messages are sent as SSE message events\": a POST is accepted and its answer goes down the SSE stream, never as application/json",
        ),
        Scenario::Sse | Scenario::TwoStreams => (
            Expected::Works,
            "2024-11-05 Transports, \"HTTP with SSE\": \"Server messages are sent as SSE message events, with the message content encoded as JSON in the event data\"",
        ),
        Scenario::Progress => (
            Expected::Works,
            "2024-11-05 Progress: \"Progress notifications MUST only reference tokens that ... are associated with an in-progress operation\": progress reaches the call by its token (log messages carry no request and go to the listener)",
        ),
        Scenario::Input => (
            Expected::Fails(Failure::InputUnavailable),
            "2024-11-05 has no elicitation (2025-06-18 changelog: \"Added support for elicitation\"); Tools, \"Error Handling\": \"Tool Execution Errors: Reported in tool results with isError: true\"",
        ),
        Scenario::Cancel => (
            Expected::Works,
            "2024-11-05 Cancellation: \"either side can send a cancellation notification\"; receivers SHOULD \"Not send a response for the cancelled request\"",
        ),
        Scenario::Disconnect => (
            Expected::NotApplicable,
            "2024-11-05 has no server-initiated disconnect and no event ids: the call completes on the one SSE stream, no priming event, no retry, no GET with Last-Event-ID",
        ),
        Scenario::NetworkDrop => (
            Expected::Fails(Failure::NotResumable),
            "2024-11-05 Transports, \"HTTP with SSE\": no event ids, no resumption; a broken stream loses the call, a clear error",
        ),
        Scenario::Changes => (
            Expected::Works,
            "2024-11-05 Transports: server notifications are SSE message events on the one stream",
        ),
        Scenario::Expiry | Scenario::Delete | Scenario::Get405 => (
            Expected::NotApplicable,
            "2024-11-05 has no Mcp-Session-Id, no DELETE and no 405 rule: GET opens the SSE stream (its endpoint event first), DELETE is not a method of the transport",
        ),
        Scenario::EraCache => (
            Expected::Works,
            "2026-07-28 Versioning, \"Backward Compatibility\": \"Clients SHOULD cache the result for the lifetime of the ... origin (HTTP)\"",
        ),
        Scenario::LongRunningDrop | Scenario::Task => {
            on_tasks(&V::V2024_11_05, Declared::default(), scenario)
        }
    }
}

/// Predictions that depend on how the server is configured rather than on
/// the revision: `s-legacy-405` takes the other branch the legacy
/// revisions allow for GET and DELETE.
pub fn on_server(server: ServerKind, scenario: Scenario) -> Option<(Expected, &'static str)> {
    match (server.predicted_as(), scenario) {
        (ServerKind::Legacy405, Scenario::Get405) => Some((
            Expected::Works,
            "Transports, \"Listening for Messages from the Server\" 3: \"The server MUST either return Content-Type: text/event-stream in response to this HTTP GET, or else return HTTP 405 Method Not Allowed, indicating that the server does not offer an SSE stream at this endpoint\"",
        )),
        (ServerKind::Legacy405, Scenario::Changes) => Some((
            Expected::NotApplicable,
            "Transports, \"Listening for Messages from the Server\" 3: 405 means \"the server does not offer an SSE stream at this endpoint\": the client reports that it is not offered, no hang",
        )),
        (ServerKind::Legacy405, Scenario::Delete) => Some((
            Expected::NotApplicable,
            "Transports, \"Session Management\" 5: \"The server MAY respond to this request with HTTP 405 Method Not Allowed, indicating that the server does not allow clients to terminate sessions\": the session stays usable",
        )),
        _ => None,
    }
}

/// The full prediction for one scenario of one cell, with the task
/// declarations the matrix configures ([`declared::configured`]).
pub fn expected(client: ClientKind, server: ServerKind, scenario: Scenario) -> Prediction {
    expected_given(client, server, scenario, None)
}

/// The full prediction, with the task declarations `seen` on the wire
/// when known (`None`: the configured ones). Only `long_running_drop` and
/// `task` depend on them.
pub fn expected_given(
    client: ClientKind,
    server: ServerKind,
    scenario: Scenario,
    seen: Option<Declared>,
) -> Prediction {
    let server = server.predicted_as();
    match negotiated(client, server) {
        (None, spec) => Prediction {
            revision: None,
            expected: Expected::Fails(Failure::NoMutualRevision),
            spec,
        },
        (Some(rev), _) if matches!(scenario, Scenario::LongRunningDrop | Scenario::Task) => {
            let declared = seen.unwrap_or_else(|| declared::configured(server, &rev));
            let (expected, spec) = on_tasks(&rev, declared, scenario);
            Prediction {
                revision: Some(rev),
                expected,
                spec,
            }
        }
        (Some(rev), _) => {
            let (expected, spec) =
                on_server(server, scenario).unwrap_or_else(|| on_revision(&rev, scenario));
            Prediction {
                revision: Some(rev),
                expected,
                spec,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the eras predict the same outcome for different reasons, each
    /// cites its own era's text: 2026-07-28's sections for the modern
    /// revision, the legacy transport's for the others.
    #[test]
    fn each_era_cites_its_own_text() {
        use Scenario as Sc;
        for scenario in [
            Sc::Input,
            Sc::Cancel,
            Sc::Disconnect,
            Sc::NetworkDrop,
            Sc::TwoStreams,
            Sc::Changes,
            Sc::Expiry,
            Sc::Delete,
            Sc::Get405,
        ] {
            let modern = on_revision(&V::V2026_07_28, scenario).1;
            assert!(modern.starts_with("2026-07-28 "), "{scenario}: {modern}");
            for rev in [V::V2025_06_18, V::V2025_11_25] {
                let legacy = on_revision(&rev, scenario).1;
                assert!(!legacy.contains("2026-07-28"), "{rev} {scenario}: {legacy}");
            }
        }
    }

    /// `s-legacy-405` takes the other branch the legacy revisions allow for
    /// GET and DELETE (405); everything else is predicted as on `s-legacy`.
    #[test]
    fn s_legacy_405_takes_the_other_branch_for_get_and_delete() {
        let (c, with_405, without) = (ClientKind::C1125, ServerKind::Legacy405, ServerKind::Legacy);
        let outcome = |s, sc| expected(c, s, sc).expected;
        assert_eq!(outcome(with_405, Scenario::Get405), Expected::Works);
        assert_eq!(outcome(without, Scenario::Get405), Expected::NotApplicable);
        for sc in [Scenario::Changes, Scenario::Delete] {
            assert_eq!(outcome(with_405, sc), Expected::NotApplicable, "{sc}");
            assert_eq!(outcome(without, sc), Expected::Works, "{sc}");
        }
        for sc in Scenario::ALL {
            if !matches!(sc, Scenario::Get405 | Scenario::Changes | Scenario::Delete) {
                assert_eq!(expected(c, with_405, sc), expected(c, without, sc), "{sc}");
                assert_eq!(on_server(with_405, sc), None, "{sc}");
            }
        }
    }

    /// Without tasks declared, `task` is not applicable everywhere, for the
    /// reason of its revision.
    #[test]
    fn an_undeclared_task_cites_why_its_revision_has_none() {
        let why = |rev| on_tasks(&rev, Declared::default(), Scenario::Task);
        let (e, modern) = why(V::V2026_07_28);
        assert_eq!(e, Expected::NotApplicable);
        assert!(modern.starts_with("Tasks extension (SEP-2663)"), "{modern}");
        let (e, legacy) = why(V::V2025_11_25);
        assert_eq!(e, Expected::NotApplicable);
        assert!(legacy.starts_with("2025-11-25 Tasks"), "{legacy}");
        for rev in [V::V2025_06_18, V::V2025_03_26, V::V2024_11_05] {
            let (e, older) = why(rev.clone());
            assert_eq!(e, Expected::NotApplicable);
            assert!(
                older.starts_with("Tasks are new in 2025-11-25"),
                "{rev}: {older}"
            );
        }
    }

    /// `long_running_drop` and `task` cite the mechanism that decides them:
    /// tasks where both sides declare them, else the revision's transport.
    #[test]
    fn the_task_scenarios_cite_the_mechanism_that_decides_them() {
        let none = Declared::default();
        let cases = [
            (V::V2026_07_28, BOTH, "Tasks extension (SEP-2663)"),
            (V::V2025_11_25, BOTH, "2025-11-25 Tasks"),
            (V::V2026_07_28, none, "2026-07-28 Streamable HTTP"),
            (V::V2025_11_25, none, "2025-11-25 Transports"),
            (V::V2025_06_18, none, "2025-03-26/2025-06-18 Transports"),
            (V::V2025_03_26, BOTH, "2025-03-26/2025-06-18 Transports"),
            (V::V2024_11_05, none, "2024-11-05 Transports"),
        ];
        for (rev, declared, cites) in cases {
            let text = on_tasks(&rev, declared, Scenario::LongRunningDrop).1;
            assert!(text.starts_with(cites), "{rev} {declared:?}: {text}");
        }
        assert_eq!(
            on_tasks(&V::V2026_07_28, BOTH, Scenario::Task).1,
            TASKS_2026
        );
        assert_eq!(
            on_tasks(&V::V2025_11_25, BOTH, Scenario::Task).1,
            TASKS_2025
        );
    }

    /// A failure matches its own kind, and a missing back-channel also the
    /// tool error; nothing else stands in for another.
    #[test]
    fn a_failure_matches_only_its_own_kind() {
        use Failure as F;
        let rev = Some(V::V2025_11_25);
        let all = [
            F::NoMutualRevision,
            F::NotResumable,
            F::InputUnavailable,
            F::NoBackChannel,
        ];
        for want in all {
            let p = Prediction {
                revision: rev.clone(),
                expected: Expected::Fails(want),
                spec: "",
            };
            for got in all {
                let observed = Observed::Failed {
                    kind: Some(got),
                    message: String::new(),
                };
                let ok = want == got || (want == F::NoBackChannel && got == F::InputUnavailable);
                assert_eq!(p.matches(&rev, &observed), ok, "{want:?} / {got:?}");
            }
            // On another revision, nothing matches.
            let observed = Observed::Failed {
                kind: Some(want),
                message: String::new(),
            };
            assert!(!p.matches(&Some(V::V2025_06_18), &observed));
        }
    }

    #[test]
    fn our_cells_negotiate_by_the_one_rule_with_its_spec_text() {
        use ClientKind as C;
        use ServerKind as S;
        // Checked once against the table of 72 rows this rule replaced.
        let cases = [
            (C::C1105, S::S1105, Some(V::V2024_11_05), HTTP_SSE_SAME),
            (C::C1105, S::All, None, HTTP_SSE_CLIENT_NEW_SERVER),
            (C::All, S::S1105, Some(V::V2024_11_05), HTTP_SSE_FALLBACK),
            (C::Modern, S::S1105, None, HTTP_SSE_SERVER),
            // A legacy client without the fallback: the same failure.
            (C::C1125, S::S1105, None, HTTP_SSE_SERVER),
            (C::C0326, S::S0326, Some(V::V2025_03_26), LIFECYCLE),
            (C::C0326, S::S0618, None, LIFECYCLE),
            (
                C::C0326,
                S::Legacy,
                Some(V::V2025_03_26),
                MATRIX_LEGACY_DUAL,
            ),
            (C::C1125, S::S0728, None, MATRIX_LEGACY_MODERN),
            (C::Legacy, S::S0326, Some(V::V2025_03_26), LIFECYCLE),
            (C::All, S::S0326, Some(V::V2025_03_26), MATRIX_DUAL_LEGACY),
            (C::All, S::All, Some(V::V2026_07_28), MATRIX_DUAL_MODERN),
            (C::Modern, S::Legacy, None, MATRIX_MODERN_LEGACY),
            (
                C::Modern,
                S::S0728,
                Some(V::V2026_07_28),
                MATRIX_MODERN_MODERN,
            ),
            (C::Future, S::All, Some(V::V2026_07_28), VERSIONING_RETRY),
        ];
        for (c, s, rev, spec) in cases {
            assert_eq!(negotiated(c, s), (rev, spec), "{c} x {s}");
        }
    }

    const BOTH: Declared = Declared {
        server: true,
        client: true,
    };
    const CLIENT_ONLY: Declared = Declared {
        server: false,
        client: true,
    };

    fn drop(rev: V, d: Declared) -> Expected {
        on_tasks(&rev, d, Scenario::LongRunningDrop).0
    }

    fn task(rev: V, d: Declared) -> Expected {
        on_tasks(&rev, d, Scenario::Task).0
    }

    #[test]
    fn a_cut_long_call_completes_only_by_task_or_sep_1699() {
        let not = Expected::Fails(Failure::NotResumable);
        assert_eq!(drop(V::V2026_07_28, BOTH), Expected::Works);
        assert_eq!(drop(V::V2026_07_28, CLIENT_ONLY), not);
        assert_eq!(drop(V::V2025_11_25, Declared::default()), Expected::Works);
        assert_eq!(drop(V::V2025_11_25, BOTH), Expected::Works);
        // Declarations mean nothing where the revision has no tasks.
        assert_eq!(drop(V::V2025_06_18, BOTH), not);
        assert_eq!(drop(V::V2025_03_26, BOTH), not);
        assert_eq!(drop(V::V2024_11_05, BOTH), not);
    }

    #[test]
    fn tasks_need_the_revision_and_both_sides() {
        assert_eq!(task(V::V2026_07_28, BOTH), Expected::Works);
        assert_eq!(task(V::V2025_11_25, BOTH), Expected::Works);
        assert_eq!(task(V::V2026_07_28, CLIENT_ONLY), Expected::NotApplicable);
        assert_eq!(task(V::V2025_11_25, CLIENT_ONLY), Expected::NotApplicable);
        assert_eq!(task(V::V2025_06_18, BOTH), Expected::NotApplicable);
        assert_eq!(task(V::V2024_11_05, BOTH), Expected::NotApplicable);
    }

    #[test]
    fn the_configured_prediction_differs_between_s_all_and_s_2026_07_28() {
        use ClientKind as C;
        use ServerKind as S;
        let p = |s| expected(C::Modern, s, Scenario::LongRunningDrop).expected;
        assert_eq!(p(S::All), Expected::Works);
        assert_eq!(p(S::S0728), Expected::Fails(Failure::NotResumable));
        let seen = expected_given(C::Modern, S::All, Scenario::Task, Some(CLIENT_ONLY));
        assert_eq!(seen.expected, Expected::NotApplicable);
    }
}
