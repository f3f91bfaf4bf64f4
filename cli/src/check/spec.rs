//! The spec sentences the checks test, quoted exactly (markdown included,
//! line breaks folded to single spaces) from `../shared/spec/<rev>/…`.
//!
//! Where a revision words a rule differently, each wording is kept with the
//! revision it comes from: a check always quotes the text of the revision it
//! runs at.

use mcp_transport_core::ProtocolVersion;

/// One quoted sentence and the file it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    /// The file, relative to the spec root (`<rev>/basic/transports.mdx`).
    pub source: &'static str,
    /// The sentence, exactly as written.
    pub text: &'static str,
}

const T_2025_03_26: &str = "2025-03-26/basic/transports.mdx";
const T_2025_06_18: &str = "2025-06-18/basic/transports.mdx";
const T_2025_11_25: &str = "2025-11-25/basic/transports.mdx";
const T_2026_07_28: &str = "2026-07-28/basic/transports/streamable-http.mdx";

const fn s(source: &'static str, text: &'static str) -> Spec {
    Spec { source, text }
}

// 2025-11-25, SEP-1699 and resumability.

/// Priming event ("Sending Messages to the Server" 6).
pub(crate) const PRIMING: Spec = s(
    T_2025_11_25,
    "The server **SHOULD** immediately send an SSE event consisting of an event ID and an empty `data` field in order to prime the client to reconnect (using that event ID as `Last-Event-ID`).",
);
/// `retry` before a server-initiated close ("Sending Messages to the Server" 6).
pub(crate) const RETRY: Spec = s(
    T_2025_11_25,
    "If the server does close the _connection_ prior to terminating the _SSE stream_, it **SHOULD** send an SSE event with a standard [`retry`](https://html.spec.whatwg.org/multipage/server-sent-events.html#:~:text=field%20name%20is%20%22retry%22) field before closing the connection.",
);
/// Unique event ids ("Resumability and Redelivery" 1).
pub(crate) const IDS_UNIQUE: Spec = s(
    T_2025_11_25,
    "If present, the ID **MUST** be globally unique across all streams within that [session](#session-management)—or all streams with that specific client, if session management is not in use.",
);
/// No replay across streams ("Resumability and Redelivery" 2).
pub(crate) const SAME_STREAM: Spec = s(
    T_2025_11_25,
    "The server **MUST NOT** replay messages that would have been delivered on a different stream.",
);
/// Replay after the last event id ("Resumability and Redelivery" 2).
pub(crate) const REPLAY_AFTER: Spec = s(
    T_2025_11_25,
    "The server **MAY** use this header to replay messages that would have been sent after the last event ID, _on the stream that was disconnected_, and to resume the stream from that point.",
);

/// What may come before the response on a 2025-06-18 stream.
pub(crate) const BEFORE_RESPONSE_2025_06_18: Spec = s(
    T_2025_06_18,
    "The server **MAY** send JSON-RPC _requests_ and _notifications_ before sending the JSON-RPC _response_.",
);
/// What may come before the response on a 2025-03-26 stream.
pub(crate) const BEFORE_RESPONSE_2025_03_26: Spec = s(
    T_2025_03_26,
    "The server **MAY** send JSON-RPC _requests_ and _notifications_ before sending a JSON-RPC _response_.",
);

/// What may come before the response at `rev` (2025-03-26 or 2025-06-18).
pub(crate) fn before_response(rev: &ProtocolVersion) -> Spec {
    match rev {
        ProtocolVersion::V2025_03_26 => BEFORE_RESPONSE_2025_03_26,
        _ => BEFORE_RESPONSE_2025_06_18,
    }
}

// Every legacy revision.

const ORIGIN_VALIDATE: &str = "Servers **MUST** validate the `Origin` header on all incoming connections to prevent DNS rebinding attacks";
const ORIGIN_403: &str = "If the `Origin` header is present and invalid, servers **MUST** respond with HTTP 403 Forbidden.";
const SESSION_404: &str = "The server **MAY** terminate the session at any time, after which it **MUST** respond to requests containing that session ID with HTTP 404 Not Found.";
const ACCEPT_LEGACY: &str = "The client **MUST** include an `Accept` header, listing both `application/json` and `text/event-stream` as supported content types.";
const VERSION_400: &str = "If the server receives a request with an invalid or unsupported `MCP-Protocol-Version`, it **MUST** respond with `400 Bad Request`.";

fn transports(rev: &ProtocolVersion) -> &'static str {
    match rev {
        ProtocolVersion::V2025_03_26 => T_2025_03_26,
        ProtocolVersion::V2025_06_18 => T_2025_06_18,
        ProtocolVersion::V2026_07_28 => T_2026_07_28,
        _ => T_2025_11_25,
    }
}

/// The `Origin` rule of `rev`: 2025-11-25 and 2026-07-28 name the 403;
/// earlier revisions only say the header must be validated.
pub(crate) fn origin(rev: &ProtocolVersion) -> (Spec, bool) {
    match rev {
        ProtocolVersion::V2025_03_26 | ProtocolVersion::V2025_06_18 => {
            (s(transports(rev), ORIGIN_VALIDATE), false)
        }
        _ => (s(transports(rev), ORIGIN_403), true),
    }
}

/// 404 once the session has ended ("Session Management" 3).
pub(crate) fn session_404(rev: &ProtocolVersion) -> Spec {
    s(transports(rev), SESSION_404)
}

/// 400 without a session id ("Session Management" 2); 2025-11-25 spells
/// the header `MCP-Session-Id`.
pub(crate) fn session_400(rev: &ProtocolVersion) -> Spec {
    match rev {
        ProtocolVersion::V2025_03_26 | ProtocolVersion::V2025_06_18 => s(
            transports(rev),
            "Servers that require a session ID **SHOULD** respond to requests without an `Mcp-Session-Id` header (other than initialization) with HTTP 400 Bad Request.",
        ),
        _ => s(
            transports(rev),
            "Servers that require a session ID **SHOULD** respond to requests without an `MCP-Session-Id` header (other than initialization) with HTTP 400 Bad Request.",
        ),
    }
}

/// 400 for a malformed `MCP-Protocol-Version` ("Protocol Version Header",
/// 2025-06-18 and later).
pub(crate) fn version_400(rev: &ProtocolVersion) -> Spec {
    s(transports(rev), VERSION_400)
}

/// The `Accept` rule ("Sending Messages"); 2026-07-28 drops the comma.
pub(crate) fn accept(rev: &ProtocolVersion) -> Spec {
    match rev {
        ProtocolVersion::V2026_07_28 => s(
            T_2026_07_28,
            "The client **MUST** include an `Accept` header listing both `application/json` and `text/event-stream` as supported content types.",
        ),
        _ => s(transports(rev), ACCEPT_LEGACY),
    }
}

// 2026-07-28.

/// 405 on GET ("Backward Compatibility", "Earlier Streamable HTTP Revisions").
pub(crate) const GET_405: Spec = s(
    T_2026_07_28,
    "HTTP GET or DELETE to the MCP endpoint: respond with `405 Method Not Allowed`.",
);
/// Header–body validation ("Server Validation").
pub(crate) const HEADER_MISMATCH: Spec = s(
    T_2026_07_28,
    "Servers that process the request body **MUST** reject requests where the values specified in the headers do not match the corresponding values in the request body.",
);
/// The version header is required ("Protocol Version Header").
pub(crate) const VERSION_HEADER: Spec = s(
    T_2026_07_28,
    "Every POST request to the MCP endpoint **MUST** include an `MCP-Protocol-Version` header.",
);
/// `UnsupportedProtocolVersionError` ("Protocol Version Header").
pub(crate) const UNSUPPORTED_VERSION: Spec = s(
    T_2026_07_28,
    "If the server does not implement the requested protocol version (whether the version is unknown to the server, or is a known version the server has chosen not to support), it **MUST** respond with `400 Bad Request` and an [`UnsupportedProtocolVersionError`][unsupported-version] listing its supported versions.",
);
/// Cancellation by close ("Cancellation").
pub(crate) const CANCEL_ON_CLOSE: Spec = s(
    T_2026_07_28,
    "Closing the SSE response stream **MUST** be treated by the server as cancellation of that request.",
);

// The Tasks extension (io.modelcontextprotocol/tasks).

const TASKS: &str = "extensions/tasks/tasks.md";

/// `-32021` for the task methods without the extension ("Protocol Errors").
pub(crate) const TASKS_GATED: Spec = s(
    TASKS,
    "Servers **MUST** return this error for non-declaring clients issuing `tasks/get`, `tasks/update`, and `tasks/cancel` requests.",
);
/// `-32602` for an unknown task ("Protocol Errors").
pub(crate) const TASKS_UNKNOWN_ID: Spec = s(
    TASKS,
    "Invalid or nonexistent `taskId`: `-32602` (Invalid params)",
);
/// `Mcp-Name: <taskId>` ("Streamable HTTP: Routing Headers").
pub(crate) const TASKS_MCP_NAME: Spec = s(
    TASKS,
    "When `tasks/get`, `tasks/update`, or `tasks/cancel` is sent over the Streamable HTTP transport, the client **MUST** set the `Mcp-Name` header to the value of `params.taskId`.",
);

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Every quoted sentence is in its file, word for word (when the spec
    /// folder sits next to the workspace, as it does where this was written).
    #[test]
    fn every_sentence_is_quoted_exactly() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/spec");
        if !root.is_dir() {
            eprintln!("skipped: no spec folder at {}", root.display());
            return;
        }
        let revs = [
            ProtocolVersion::V2025_03_26,
            ProtocolVersion::V2025_06_18,
            ProtocolVersion::V2025_11_25,
            ProtocolVersion::V2026_07_28,
        ];
        let mut all = vec![
            PRIMING,
            RETRY,
            IDS_UNIQUE,
            SAME_STREAM,
            REPLAY_AFTER,
            BEFORE_RESPONSE_2025_06_18,
            BEFORE_RESPONSE_2025_03_26,
            GET_405,
            HEADER_MISMATCH,
            VERSION_HEADER,
            UNSUPPORTED_VERSION,
            CANCEL_ON_CLOSE,
            TASKS_GATED,
            TASKS_UNKNOWN_ID,
            TASKS_MCP_NAME,
        ];
        for rev in &revs {
            all.push(origin(rev).0);
            all.push(accept(rev));
            if rev.is_legacy() {
                all.push(session_404(rev));
                all.push(session_400(rev));
            }
            if rev.has(|f| f.version_header) && rev.is_legacy() {
                all.push(version_400(rev));
            }
        }
        for spec in all {
            let text = std::fs::read_to_string(root.join(spec.source))
                .unwrap_or_else(|e| panic!("{}: {e}", spec.source));
            assert!(
                fold(&text).contains(&fold(spec.text)),
                "not in {}: {}",
                spec.source,
                spec.text
            );
        }
    }
}
