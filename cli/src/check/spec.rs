//! The spec sentences the checks test, quoted exactly (markdown included,
//! line breaks folded to single spaces), each with its level ([`Level`]:
//! the sentence's RFC 2119 keyword, or this project's policy) and its
//! citation: the section it is in and that section's address on the
//! published spec site.
//!
//! Where a revision words a rule differently, each wording is kept with the
//! revision it comes from: a check always quotes the text of the revision it
//! runs at. A unit test checks every sentence against the spec's sources
//! when they sit next to the workspace (`../shared/spec`, where this was
//! written); nothing at run time reads a file outside the repository.

use mcp_transport_core::ProtocolVersion;

use super::level::Level;

/// A page of the spec: its source file (relative to the spec folder, for
/// the unit test only) and its published address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Page {
    /// The source, relative to the spec folder.
    pub file: &'static str,
    /// The published page.
    pub url: &'static str,
}

/// One quoted sentence, its level and where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    /// The page.
    pub page: Page,
    /// The heading of the section the sentence is in, as written.
    pub section: &'static str,
    /// How binding it is.
    pub level: Level,
    /// The sentence, exactly as written.
    pub text: &'static str,
}

impl Spec {
    /// The section's address: the page's URL and the heading's anchor.
    pub fn url(&self) -> String {
        format!("{}#{}", self.page.url, anchor(self.section))
    }
}

/// A heading's anchor as the spec site makes it: lowercase, spaces to
/// hyphens, everything but letters, digits, `-` and `_` dropped.
pub(crate) fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

const T_2025_03_26: Page = Page {
    file: "2025-03-26/basic/transports.mdx",
    url: "https://modelcontextprotocol.io/specification/2025-03-26/basic/transports",
};
const T_2025_06_18: Page = Page {
    file: "2025-06-18/basic/transports.mdx",
    url: "https://modelcontextprotocol.io/specification/2025-06-18/basic/transports",
};
const T_2025_11_25: Page = Page {
    file: "2025-11-25/basic/transports.mdx",
    url: "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports",
};
const T_2026_07_28: Page = Page {
    file: "2026-07-28/basic/transports/streamable-http.mdx",
    url: "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http",
};
/// 2025-11-25's experimental tasks (*Tasks*, `basic/utilities`).
const TASKS_2025_11_25: Page = Page {
    file: "2025-11-25/basic/utilities/tasks.mdx",
    url: "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks",
};
/// The Tasks extension, published in its own repository.
const TASKS_EXT: Page = Page {
    file: "extensions/tasks/tasks.md",
    url: "https://github.com/modelcontextprotocol/ext-tasks",
};

const fn s(page: Page, section: &'static str, level: Level, text: &'static str) -> Spec {
    Spec {
        page,
        section,
        level,
        text,
    }
}

use Level::{May, Must, Policy, Should};

// 2025-11-25, SEP-1699 and resumability.

const SENDING: &str = "Sending Messages to the Server";
const RESUMABILITY: &str = "Resumability and Redelivery";

/// Priming event ("Sending Messages to the Server" 6).
pub(crate) const PRIMING: Spec = s(
    T_2025_11_25,
    SENDING,
    Should,
    "The server **SHOULD** immediately send an SSE event consisting of an event ID and an empty `data` field in order to prime the client to reconnect (using that event ID as `Last-Event-ID`).",
);
/// The same sentence, for the warning about a resumed connection closed
/// without an id: the spec lets the client resume from its last id again,
/// so leaving a fresh id is this project's policy (clients that keep the
/// last id per connection need it).
pub(crate) const PRIMING_POLICY: Spec = Spec {
    level: Policy,
    ..PRIMING
};
/// `retry` before a server-initiated close ("Sending Messages to the Server" 6).
pub(crate) const RETRY: Spec = s(
    T_2025_11_25,
    SENDING,
    Should,
    "If the server does close the _connection_ prior to terminating the _SSE stream_, it **SHOULD** send an SSE event with a standard [`retry`](https://html.spec.whatwg.org/multipage/server-sent-events.html#:~:text=field%20name%20is%20%22retry%22) field before closing the connection.",
);
/// Unique event ids ("Resumability and Redelivery" 1).
pub(crate) const IDS_UNIQUE: Spec = s(
    T_2025_11_25,
    RESUMABILITY,
    Must,
    "If present, the ID **MUST** be globally unique across all streams within that [session](#session-management)—or all streams with that specific client, if session management is not in use.",
);
/// No replay across streams ("Resumability and Redelivery" 2).
pub(crate) const SAME_STREAM: Spec = s(
    T_2025_11_25,
    RESUMABILITY,
    Must,
    "The server **MUST NOT** replay messages that would have been delivered on a different stream.",
);
/// Replay after the last event id ("Resumability and Redelivery" 2): a
/// server need not replay, but one that does replays what came *after*.
pub(crate) const REPLAY_AFTER: Spec = s(
    T_2025_11_25,
    RESUMABILITY,
    May,
    "The server **MAY** use this header to replay messages that would have been sent after the last event ID, _on the stream that was disconnected_, and to resume the stream from that point.",
);
/// The same sentence for `failed-resume-4xx`: the spec says nothing about
/// an id it never issued; refusing it with a 4xx (so the client stops
/// retrying) is this project's policy.
pub(crate) const FAILED_RESUME: Spec = Spec {
    level: Policy,
    ..REPLAY_AFTER
};

/// What may come before the response on a 2025-06-18 stream. The check
/// built on it (no priming event for older sessions) is this project's
/// policy: a priming event is neither a request nor a notification, and
/// clients of that revision fail on it.
pub(crate) const BEFORE_RESPONSE_2025_06_18: Spec = s(
    T_2025_06_18,
    SENDING,
    Policy,
    "The server **MAY** send JSON-RPC _requests_ and _notifications_ before sending the JSON-RPC _response_.",
);
/// What may come before the response on a 2025-03-26 stream (policy, as
/// above).
pub(crate) const BEFORE_RESPONSE_2025_03_26: Spec = s(
    T_2025_03_26,
    SENDING,
    Policy,
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

fn transports(rev: &ProtocolVersion) -> Page {
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
        ProtocolVersion::V2025_03_26 | ProtocolVersion::V2025_06_18 => (
            s(transports(rev), "Security Warning", Must, ORIGIN_VALIDATE),
            false,
        ),
        ProtocolVersion::V2026_07_28 => (
            s(transports(rev), "Security & Endpoint", Must, ORIGIN_403),
            true,
        ),
        _ => (
            s(transports(rev), "Security Warning", Must, ORIGIN_403),
            true,
        ),
    }
}

/// 404 once the session has ended ("Session Management" 3).
pub(crate) fn session_404(rev: &ProtocolVersion) -> Spec {
    s(transports(rev), "Session Management", Must, SESSION_404)
}

/// 400 without a session id ("Session Management" 2); 2025-11-25 spells
/// the header `MCP-Session-Id`.
pub(crate) fn session_400(rev: &ProtocolVersion) -> Spec {
    let text = match rev {
        ProtocolVersion::V2025_03_26 | ProtocolVersion::V2025_06_18 => {
            "Servers that require a session ID **SHOULD** respond to requests without an `Mcp-Session-Id` header (other than initialization) with HTTP 400 Bad Request."
        }
        _ => {
            "Servers that require a session ID **SHOULD** respond to requests without an `MCP-Session-Id` header (other than initialization) with HTTP 400 Bad Request."
        }
    };
    s(transports(rev), "Session Management", Should, text)
}

/// 400 for a malformed `MCP-Protocol-Version` ("Protocol Version Header",
/// 2025-06-18 and later).
pub(crate) fn version_400(rev: &ProtocolVersion) -> Spec {
    s(
        transports(rev),
        "Protocol Version Header",
        Must,
        VERSION_400,
    )
}

/// The `Accept` rule ("Sending Messages"); 2026-07-28 drops the comma.
/// The sentence binds the client; answering its absence with 406 is this
/// project's policy (no revision names a status for it).
pub(crate) fn accept(rev: &ProtocolVersion) -> Spec {
    match rev {
        ProtocolVersion::V2026_07_28 => s(
            T_2026_07_28,
            "Sending Messages",
            Policy,
            "The client **MUST** include an `Accept` header listing both `application/json` and `text/event-stream` as supported content types.",
        ),
        _ => s(transports(rev), SENDING, Policy, ACCEPT_LEGACY),
    }
}

// 2026-07-28.

/// 405 on GET ("Backward Compatibility", "Earlier Streamable HTTP Revisions").
pub(crate) const GET_405: Spec = s(
    T_2026_07_28,
    "Earlier Streamable HTTP Revisions",
    Should,
    "A server that supports only this revision and receives such traffic from an older client **SHOULD** respond as follows: - HTTP GET or DELETE to the MCP endpoint: respond with `405 Method Not Allowed`.",
);
/// Header–body validation ("Server Validation").
pub(crate) const HEADER_MISMATCH: Spec = s(
    T_2026_07_28,
    "Server Validation",
    Must,
    "Servers that process the request body **MUST** reject requests where the values specified in the headers do not match the corresponding values in the request body.",
);
/// The version header is required ("Protocol Version Header").
pub(crate) const VERSION_HEADER: Spec = s(
    T_2026_07_28,
    "Protocol Version Header",
    Must,
    "Every POST request to the MCP endpoint **MUST** include an `MCP-Protocol-Version` header.",
);
/// `UnsupportedProtocolVersionError` ("Protocol Version Header").
pub(crate) const UNSUPPORTED_VERSION: Spec = s(
    T_2026_07_28,
    "Protocol Version Header",
    Must,
    "If the server does not implement the requested protocol version (whether the version is unknown to the server, or is a known version the server has chosen not to support), it **MUST** respond with `400 Bad Request` and an [`UnsupportedProtocolVersionError`][unsupported-version] listing its supported versions.",
);
/// Cancellation by close ("Cancellation").
pub(crate) const CANCEL_ON_CLOSE: Spec = s(
    T_2026_07_28,
    "Cancellation",
    Must,
    "Closing the SSE response stream **MUST** be treated by the server as cancellation of that request.",
);

// The Tasks extension (io.modelcontextprotocol/tasks).

/// `-32021` for the task methods without the extension ("Protocol Errors").
pub(crate) const TASKS_GATED: Spec = s(
    TASKS_EXT,
    "Protocol Errors",
    Must,
    "Servers **MUST** return this error for non-declaring clients issuing `tasks/get`, `tasks/update`, and `tasks/cancel` requests.",
);
/// `-32602` for an unknown task ("Protocol Errors").
pub(crate) const TASKS_UNKNOWN_ID: Spec = s(
    TASKS_EXT,
    "Protocol Errors",
    Must,
    "Invalid or nonexistent `taskId`: `-32602` (Invalid params) - Servers **MUST** return this error for `tasks/get`.",
);
/// `Mcp-Name: <taskId>` ("Streamable HTTP: Routing Headers").
pub(crate) const TASKS_MCP_NAME: Spec = s(
    TASKS_EXT,
    "Streamable HTTP: Routing Headers",
    Must,
    "When `tasks/get`, `tasks/update`, or `tasks/cancel` is sent over the Streamable HTTP transport, the client **MUST** set the `Mcp-Name` header to the value of `params.taskId`.",
);

// 2025-11-25's experimental tasks (SEP-1686).

/// The values `execution.taskSupport` may take ("Tool-Level
/// Negotiation"). The sentence has no keyword; the schema's type
/// (`taskSupport?: "forbidden" | "optional" | "required"`) makes any other
/// value an invalid message, hence MUST.
pub(crate) const TASK_SUPPORT_VALUES: Spec = s(
    TASKS_2025_11_25,
    "Tool-Level Negotiation",
    Must,
    "In the result of `tools/list`, tools declare support for tasks via `execution.taskSupport`, which if present can have a value of `\"required\"`, `\"optional\"`, or `\"forbidden\"`.",
);
/// A task-augmented request gets a `CreateTaskResult` ("Result Retrieval" 1).
pub(crate) const CREATE_TASK_RESULT: Spec = s(
    TASKS_2025_11_25,
    "Result Retrieval",
    Must,
    "Receivers that accept a task-augmented request **MUST** return a `CreateTaskResult` as the response.",
);
/// `tasks/get` carries the task's `ttl` ("TTL and Resource Management" 4).
pub(crate) const GET_TTL: Spec = s(
    TASKS_2025_11_25,
    "TTL and Resource Management",
    Must,
    "Receivers **MUST** include the actual `ttl` duration (or `null` for unlimited) in `tasks/get` responses.",
);
/// `tasks/result` blocks until the task ends ("Result Retrieval" 3).
pub(crate) const RESULT_BLOCKS: Spec = s(
    TASKS_2025_11_25,
    "Result Retrieval",
    Must,
    "When a receiver receives a `tasks/result` request for a task in any other non-terminal status (`working` or `input_required`), it **MUST** block the response until the task reaches a terminal status.",
);
/// The related-task metadata on `tasks/result` ("Related Task Metadata").
pub(crate) const RESULT_RELATED_TASK: Spec = s(
    TASKS_2025_11_25,
    "Related Task Metadata",
    Must,
    "The `tasks/result` operation **MUST** include this metadata in its response, as the result structure itself does not contain the task ID.",
);
/// `tasks/list` lists what `tasks/get` finds ("Task Listing" 4).
pub(crate) const LIST_INCLUDES: Spec = s(
    TASKS_2025_11_25,
    "Task Listing",
    Must,
    "If a task is retrievable via `tasks/get` for a requestor, it **MUST** be retrievable via `tasks/list` for that requestor.",
);
/// `-32602` for cancelling a terminal task ("Task Cancellation" 1).
pub(crate) const CANCEL_TERMINAL: Spec = s(
    TASKS_2025_11_25,
    "Task Cancellation",
    Must,
    "Receivers **MUST** reject cancellation requests for tasks already in a terminal status (`completed`, `failed`, or `cancelled`) with error code `-32602` (Invalid params).",
);
/// `-32602` for an unknown task ("Protocol Errors").
pub(crate) const UNKNOWN_TASK_2025_11_25: Spec = s(
    TASKS_2025_11_25,
    "Protocol Errors",
    Must,
    "Receivers **MUST** return standard JSON-RPC errors for the following protocol error cases: - Invalid or nonexistent `taskId` in `tasks/get`, `tasks/result`, or `tasks/cancel`: `-32602` (Invalid params)",
);
/// `-32601` for a task on a `forbidden` tool ("Tool-Level Negotiation" 2.1).
pub(crate) const FORBIDDEN_TOOL: Spec = s(
    TASKS_2025_11_25,
    "Tool-Level Negotiation",
    Should,
    "Servers **SHOULD** return a `-32601` (Method not found) error if a client attempts to do so.",
);
/// `-32601` for a `required` tool called without a task
/// ("Tool-Level Negotiation" 2.3).
pub(crate) const REQUIRED_TOOL: Spec = s(
    TASKS_2025_11_25,
    "Tool-Level Negotiation",
    Must,
    "Servers **MUST** return a `-32601` (Method not found) error if a client does not attempt to do so.",
);
/// Task metadata is ignored where the capability is not declared ("Task
/// Support and Handling" 1).
pub(crate) const UNDECLARED_IGNORED: Spec = s(
    TASKS_2025_11_25,
    "Task Support and Handling",
    Must,
    "Receivers that do not declare the task capability for a request type **MUST** process requests of that type normally, ignoring any task-augmentation metadata if present.",
);

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn every_spec() -> Vec<Spec> {
        let revs = [
            ProtocolVersion::V2025_03_26,
            ProtocolVersion::V2025_06_18,
            ProtocolVersion::V2025_11_25,
            ProtocolVersion::V2026_07_28,
        ];
        let mut all = vec![
            PRIMING,
            PRIMING_POLICY,
            RETRY,
            IDS_UNIQUE,
            SAME_STREAM,
            REPLAY_AFTER,
            FAILED_RESUME,
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
            TASK_SUPPORT_VALUES,
            CREATE_TASK_RESULT,
            GET_TTL,
            RESULT_BLOCKS,
            RESULT_RELATED_TASK,
            LIST_INCLUDES,
            CANCEL_TERMINAL,
            UNKNOWN_TASK_2025_11_25,
            FORBIDDEN_TOOL,
            REQUIRED_TOOL,
            UNDECLARED_IGNORED,
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
        all
    }

    /// Each revision's rules cite that revision's own page (checked here
    /// without the spec folder, which CI does not have).
    #[test]
    fn each_revision_cites_its_own_page() {
        for rev in [
            ProtocolVersion::V2025_03_26,
            ProtocolVersion::V2025_06_18,
            ProtocolVersion::V2025_11_25,
            ProtocolVersion::V2026_07_28,
        ] {
            let mut own = vec![origin(&rev).0, accept(&rev)];
            if rev.is_legacy() {
                own.extend([session_404(&rev), session_400(&rev), version_400(&rev)]);
            }
            for spec in own {
                assert!(spec.page.file.starts_with(rev.as_str()), "{rev}: {spec:?}");
                assert!(spec.page.url.contains(rev.as_str()), "{rev}: {spec:?}");
            }
        }
        for rev in [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18] {
            assert!(before_response(&rev).page.file.starts_with(rev.as_str()));
        }
    }

    /// Where the revisions word a rule differently, each keeps its own.
    #[test]
    fn revisions_keep_their_own_wording() {
        use ProtocolVersion as V;
        // Only 2025-11-25 and 2026-07-28 name the 403, in sections of
        // their own names.
        let origins: Vec<(&str, bool)> = [V::V2025_03_26, V::V2025_06_18, V::V2025_11_25]
            .iter()
            .chain([V::V2026_07_28].iter())
            .map(|r| (origin(r).0.section, origin(r).1))
            .collect();
        assert_eq!(
            origins,
            [
                ("Security Warning", false),
                ("Security Warning", false),
                ("Security Warning", true),
                ("Security & Endpoint", true),
            ]
        );
        assert_eq!(origin(&V::V2025_06_18).0.text, ORIGIN_VALIDATE);
        assert_eq!(origin(&V::V2025_11_25).0.text, ORIGIN_403);
        assert!(
            session_400(&V::V2025_06_18)
                .text
                .contains("`Mcp-Session-Id`")
        );
        assert!(
            session_400(&V::V2025_11_25)
                .text
                .contains("`MCP-Session-Id`")
        );
        assert_eq!(accept(&V::V2025_11_25).text, ACCEPT_LEGACY);
        assert_ne!(accept(&V::V2026_07_28).text, ACCEPT_LEGACY);
        assert_eq!(accept(&V::V2026_07_28).section, "Sending Messages");
        assert_ne!(
            before_response(&V::V2025_03_26),
            before_response(&V::V2025_06_18)
        );
        // The policy readings of a sentence differ from it only in level.
        for (policy, sentence) in [(PRIMING_POLICY, PRIMING), (FAILED_RESUME, REPLAY_AFTER)] {
            assert_eq!(policy.level, Level::Policy);
            assert_ne!(sentence.level, Level::Policy);
            assert_eq!(
                Spec {
                    level: Level::Policy,
                    ..sentence
                },
                policy
            );
        }
    }

    /// The text of the section headed `heading` (down to the next heading
    /// of the same or a higher level), if the file has it.
    fn section<'a>(file: &'a str, heading: &str) -> Option<&'a str> {
        let mut offset = 0;
        let mut start = None;
        for line in file.split_inclusive('\n') {
            let hashes = line.chars().take_while(|c| *c == '#').count();
            if hashes > 0 && line[hashes..].starts_with(' ') {
                match start {
                    Some((level, from)) if hashes <= level => return Some(&file[from..offset]),
                    None if line[hashes..].trim() == heading => start = Some((hashes, offset)),
                    _ => {}
                }
            }
            offset += line.len();
        }
        start.map(|(_, from)| &file[from..])
    }

    /// Every quoted sentence is in the section it cites, word for word
    /// (when the spec folder sits next to the workspace, as it does where
    /// this was written, or `MCP_SPEC_DIR` names it).
    #[test]
    fn every_sentence_is_quoted_exactly_in_its_section() {
        // `MCP_SPEC_DIR` names the folder where it sits elsewhere (a git
        // worktree, for example).
        let root = match std::env::var_os("MCP_SPEC_DIR") {
            Some(dir) => std::path::PathBuf::from(dir),
            None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/spec"),
        };
        if !root.is_dir() {
            eprintln!("skipped: no spec folder at {}", root.display());
            return;
        }
        for spec in every_spec() {
            let text = std::fs::read_to_string(root.join(spec.page.file))
                .unwrap_or_else(|e| panic!("{}: {e}", spec.page.file));
            let body = section(&text, spec.section)
                .unwrap_or_else(|| panic!("no section {:?} in {}", spec.section, spec.page.file));
            assert!(
                fold(body).contains(&fold(spec.text)),
                "not in {} / {}: {}",
                spec.page.file,
                spec.section,
                spec.text
            );
        }
    }

    /// A level other than POLICY is the keyword of the sentence itself
    /// (the one exception, the `taskSupport` values, says why on its
    /// constant); citations are published addresses.
    #[test]
    fn levels_come_from_the_sentence_and_citations_are_urls() {
        for spec in every_spec() {
            let keyword = match spec.level {
                Level::Must => "**MUST",
                Level::Should => "**SHOULD",
                Level::May => "**MAY**",
                Level::Policy => "",
            };
            if spec != TASK_SUPPORT_VALUES {
                assert!(
                    spec.text.contains(keyword),
                    "{:?}: {}",
                    spec.level,
                    spec.text
                );
            }
            let url = spec.url();
            assert!(url.starts_with("https://"), "{url}");
            assert!(!url.contains(".."), "{url}");
        }
        assert_eq!(
            RETRY.url(),
            "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server"
        );
        assert_eq!(anchor("Security & Endpoint"), "security--endpoint");
        assert_eq!(anchor(" Re-try_Now "), "re-try_now");
        assert_eq!(
            anchor("Streamable HTTP: Routing Headers"),
            "streamable-http-routing-headers"
        );
    }
}
