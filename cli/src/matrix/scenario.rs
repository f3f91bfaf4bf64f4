//! The fixed scenario list every cell runs.

use std::fmt;

/// One scenario of a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// A request answered as `application/json` (server in JSON mode).
    Json,
    /// A request answered as an SSE stream.
    Sse,
    /// Progress and log notifications arrive before the response, in order.
    Progress,
    /// The server asks the client for input: a server-to-client request
    /// (legacy) or an MRTR round (modern).
    Input,
    /// Cancellation: `notifications/cancelled` (legacy) or closing the
    /// response stream (modern); the handler must see it.
    Cancel,
    /// A server-initiated disconnect mid-request, resumed (SEP-1699).
    Disconnect,
    /// The network drops mid-request: resumed where the revision allows, a
    /// clear error where it does not.
    NetworkDrop,
    /// Two calls stream at once (and, on legacy revisions, both resume
    /// after a network drop): each gets only its own messages.
    TwoStreams,
    /// Change notifications: the GET stream (legacy) or
    /// `subscriptions/listen` (modern).
    Changes,
    /// The session expires; the client re-initializes (legacy).
    Expiry,
    /// DELETE ends the session (legacy).
    Delete,
    /// GET answers 405 (2026-07-28).
    Get405,
    /// The per-origin era cache: several connections of one client (one
    /// cache) negotiate the same revision, probing only once.
    EraCache,
    /// Long-running work (a MayBeLong tool of a few seconds) whose connection
    /// is cut mid-way: completed by resumption, by a task, or a clear "not
    /// resumable" error, as the negotiated revision and the declarations
    /// of both sides predict.
    LongRunningDrop,
    /// The task lifecycle where both sides declare tasks: create, poll,
    /// input mid-way, cancel; elsewhere the absence of tasks is checked.
    Task,
}

impl Scenario {
    /// Every scenario, in report order.
    pub const ALL: [Scenario; 15] = [
        Scenario::Json,
        Scenario::Sse,
        Scenario::Progress,
        Scenario::Input,
        Scenario::Cancel,
        Scenario::Disconnect,
        Scenario::NetworkDrop,
        Scenario::TwoStreams,
        Scenario::Changes,
        Scenario::Expiry,
        Scenario::Delete,
        Scenario::Get405,
        Scenario::EraCache,
        Scenario::LongRunningDrop,
        Scenario::Task,
    ];

    /// The short name used in test names and reports.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Json => "json",
            Scenario::Sse => "sse",
            Scenario::Progress => "progress",
            Scenario::Input => "input",
            Scenario::Cancel => "cancel",
            Scenario::Disconnect => "disconnect",
            Scenario::NetworkDrop => "network_drop",
            Scenario::TwoStreams => "two_streams",
            Scenario::Changes => "changes",
            Scenario::Expiry => "expiry",
            Scenario::Delete => "delete",
            Scenario::Get405 => "get_405",
            Scenario::EraCache => "era_cache",
            Scenario::LongRunningDrop => "long_running_drop",
            Scenario::Task => "task",
        }
    }

    /// Looks a scenario up by [`name`](Self::name).
    pub fn by_name(name: &str) -> Option<Scenario> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
