//! Injected bugs for the compatibility matrix's self-test (not public API).
//!
//! `mcp-compat matrix --self-test` proves that the matrix can fail: it runs
//! the matrix once per [`Fault`], each switched on in the reference server
//! or client, and passes only when each turns at least one cell red. The
//! switches are plain data checked at a handful of places in the engines;
//! every one is off by default, and nothing but the matrix's self-test sets
//! them (no builder method, no `serve` flag). Hidden from the docs because
//! no user should ever turn one on.

/// One injected bug.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Client: reconnect at once after a server-initiated close, ignoring
    /// the `retry` field ("The client MUST respect the retry field").
    ClientIgnoresRetry,
    /// Session server: a resume replays the `Last-Event-ID` event itself
    /// ("replay messages that would have been sent after the last event
    /// ID").
    ReplayInclusive,
    /// Session server (2025-11-25): no priming event on a new stream
    /// ("MUST immediately send an SSE event consisting of an event ID and
    /// an empty data field").
    SkipPriming,
    /// Session server (2025-11-25): a connection that ends before its
    /// stream's response cancels the session's requests ("Disconnection
    /// SHOULD NOT be interpreted as the client cancelling its request").
    CancelOnDisconnect,
    /// 2026-07-28 server: closing the response stream does not cancel the
    /// request ("MUST be treated by the server as cancellation").
    IgnoreClose,
    /// Session server: a resume also replays another stream's events ("MUST
    /// NOT replay messages that would have been delivered on a different
    /// stream").
    LeakOtherStream,
    /// 2026-07-28 server: answers carry an `Mcp-Session-Id` header (the
    /// revision has no sessions).
    MintSessionId,
    /// Session server: before an early close, the last message event goes
    /// out as its id alone (the message is lost, the id moves past it).
    DropLastBeforeClose,
    /// 2026-07-28 server (Tasks extension): `tasks/cancel` is acknowledged
    /// and the stored task marked cancelled, but the running work is never
    /// told, neither by its token nor by following the store (a
    /// cancellation "MUST be treated" as such; here the handler runs on).
    IgnoreTaskCancel,
    /// Session server: DELETE is answered 204 but the session lives on
    /// (after it, the server "MUST respond to requests containing that
    /// session ID with HTTP 404 Not Found").
    KeepDeletedSession,
    /// Session server: a request naming a session that does not exist (any
    /// more) is answered 400, not 404 ("MUST respond to requests containing
    /// that session ID with HTTP 404 Not Found").
    GoneSession400,
    /// 2026-07-28 server: a `subscriptions/listen` stream gets every
    /// notification type, asked for or not ("MUST NOT send notification
    /// types the client has not explicitly requested").
    ListenUnfiltered,
    /// Client (`mcp-negotiate`): the era cache is neither read nor filled,
    /// so every connection probes the origin again (2026-07-28
    /// *Versioning*: "Clients SHOULD cache the result for the lifetime of
    /// the … origin").
    ClientIgnoresEraCache,
}

impl Fault {
    /// Every fault, in self-test order.
    pub const ALL: [Fault; 13] = [
        Fault::ClientIgnoresRetry,
        Fault::ReplayInclusive,
        Fault::SkipPriming,
        Fault::CancelOnDisconnect,
        Fault::IgnoreClose,
        Fault::LeakOtherStream,
        Fault::MintSessionId,
        Fault::DropLastBeforeClose,
        Fault::IgnoreTaskCancel,
        Fault::KeepDeletedSession,
        Fault::GoneSession400,
        Fault::ListenUnfiltered,
        Fault::ClientIgnoresEraCache,
    ];

    /// The short name the self-test prints.
    pub fn name(self) -> &'static str {
        match self {
            Fault::ClientIgnoresRetry => "client-ignores-retry",
            Fault::ReplayInclusive => "replay-inclusive",
            Fault::SkipPriming => "skip-priming",
            Fault::CancelOnDisconnect => "cancel-on-disconnect",
            Fault::IgnoreClose => "ignore-close",
            Fault::LeakOtherStream => "leak-other-stream",
            Fault::MintSessionId => "mint-session-id",
            Fault::DropLastBeforeClose => "drop-last-before-close",
            Fault::IgnoreTaskCancel => "ignore-task-cancel",
            Fault::KeepDeletedSession => "keep-deleted-session",
            Fault::GoneSession400 => "gone-session-400",
            Fault::ListenUnfiltered => "listen-unfiltered",
            Fault::ClientIgnoresEraCache => "client-ignores-era-cache",
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A set of [`Fault`]s; empty by default.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Faults(u32);

impl Faults {
    /// No fault.
    pub const NONE: Faults = Faults(0);

    /// The set holding only `fault`.
    pub fn only(fault: Fault) -> Faults {
        Faults(fault.bit())
    }

    /// Whether `fault` is on.
    pub fn has(self, fault: Fault) -> bool {
        self.0 & fault.bit() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fault_is_its_own_switch() {
        assert!(!Faults::default().has(Fault::SkipPriming));
        for f in Fault::ALL {
            let set = Faults::only(f);
            for g in Fault::ALL {
                assert_eq!(set.has(g), f == g, "{f:?} / {g:?}");
            }
        }
    }

    /// The names the self-test prints (and its report is read by): one per
    /// fault, in `ALL`'s order.
    #[test]
    fn each_fault_has_its_name() {
        assert_eq!(
            Fault::ALL.map(Fault::name),
            [
                "client-ignores-retry",
                "replay-inclusive",
                "skip-priming",
                "cancel-on-disconnect",
                "ignore-close",
                "leak-other-stream",
                "mint-session-id",
                "drop-last-before-close",
                "ignore-task-cancel",
                "keep-deleted-session",
                "gone-session-400",
                "listen-unfiltered",
                "client-ignores-era-cache",
            ]
        );
    }
}
