//! SEP-1699's disconnect policies, as pure state machines.
//!
//! [`DisconnectPolicy`] is what a server is configured with;
//! [`PolicyState`] is one SSE connection's state under it, implementing the
//! session engine's [`ConnectionPolicy`]. The engine tells it what was sent
//! and when, and asks what to do; nothing here reads a clock or touches a
//! socket, so every rule is tested below with explicit instants.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use mcp_session_engine::revision::ConnectionPolicy;

/// When the server closes an SSE *connection* before its stream has ended
/// (SEP-1699, 2025-11-25 *Transports*, "Sending Messages to the Server" 6:
/// "the server MAY close the connection (without terminating the SSE
/// stream) at any time"). Before closing such a connection the server sends
/// `retry: <retry_ms>`, and the client resumes with `GET` + `Last-Event-ID`.
///
/// The policy applies **only** to 2025-11-25 sessions (this crate's
/// [`Revision`](crate::Revision)). Sessions at 2025-03-26 or 2025-06-18 are
/// never closed early: those revisions say the server "SHOULD NOT close the
/// SSE stream before sending the JSON-RPC response".
///
/// A handler can also close the current connection on demand with
/// `RequestContext::close_sse_stream`, whatever the policy.
///
/// Parsed from text by [`FromStr`]: `never`, `after-priming`,
/// `after-events:N` (N ≥ 1), `after-ms:N`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DisconnectPolicy {
    /// Keep every connection open until its stream ends.
    #[default]
    Never,
    /// A connection to a *new* stream closes right after its priming event
    /// (and the `retry`); a *resuming* connection first delivers everything
    /// that is ready, then closes if the stream has not ended. The client
    /// thus polls every `retry_ms`.
    AfterPriming,
    /// A connection closes after it has delivered this many message events
    /// (replayed ones count; the priming event does not). At least 1.
    AfterEvents(u32),
    /// A connection closes this many milliseconds after it opened, once what
    /// is ready by then has been delivered.
    AfterMs(u64),
}

/// Why a [`DisconnectPolicy`] could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid disconnect policy {input:?}: {reason} (expected never, after-priming, after-events:N or after-ms:N)"
)]
pub struct ParsePolicyError {
    /// The text that was given.
    pub input: String,
    /// What is wrong with it.
    pub reason: String,
}

impl FromStr for DisconnectPolicy {
    type Err = ParsePolicyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: String| ParsePolicyError {
            input: s.to_owned(),
            reason,
        };
        let t = s.trim();
        match t {
            "never" => return Ok(DisconnectPolicy::Never),
            "after-priming" => return Ok(DisconnectPolicy::AfterPriming),
            _ => {}
        }
        let Some((name, n)) = t.split_once(':') else {
            return Err(err("unknown policy".into()));
        };
        let number = |n: &str| -> Result<u64, ParsePolicyError> {
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err(format!("{n:?} is not a non-negative integer")));
            }
            n.parse::<u64>()
                .map_err(|e| err(format!("{n:?} is not a valid number: {e}")))
        };
        match name {
            "after-events" => {
                let n = number(n)?;
                if n == 0 {
                    return Err(err(
                        "after-events needs N >= 1 (with 0 a resuming client could never make progress)"
                            .into(),
                    ));
                }
                u32::try_from(n)
                    .map(DisconnectPolicy::AfterEvents)
                    .map_err(|_| err(format!("{n} is larger than {}", u32::MAX)))
            }
            "after-ms" => number(n).map(DisconnectPolicy::AfterMs),
            other => Err(err(format!("unknown policy {other:?}"))),
        }
    }
}

impl fmt::Display for DisconnectPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DisconnectPolicy::Never => f.write_str("never"),
            DisconnectPolicy::AfterPriming => f.write_str("after-priming"),
            DisconnectPolicy::AfterEvents(n) => write!(f, "after-events:{n}"),
            DisconnectPolicy::AfterMs(n) => write!(f, "after-ms:{n}"),
        }
    }
}

/// One SSE connection's state under a [`DisconnectPolicy`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyState {
    policy: DisconnectPolicy,
    resuming: bool,
    sent: u64,
    /// `AfterMs`: when the connection's time is up.
    deadline: Option<Instant>,
}

impl PolicyState {
    /// The state of a connection opened at `now` (`resuming`: a `GET` with
    /// `Last-Event-ID`).
    pub fn new(policy: DisconnectPolicy, now: Instant, resuming: bool) -> Self {
        let deadline = match policy {
            DisconnectPolicy::AfterMs(ms) => Some(now + Duration::from_millis(ms)),
            _ => None,
        };
        PolicyState {
            policy,
            resuming,
            sent: 0,
            deadline,
        }
    }

    /// Message events sent so far (the priming event does not count).
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

impl ConnectionPolicy for PolicyState {
    /// `AfterPriming` on a new stream: the client polls from the start.
    fn close_after_priming(&self) -> bool {
        self.policy == DisconnectPolicy::AfterPriming && !self.resuming
    }

    /// `AfterEvents(n)`: `n` minus what was sent; no limit otherwise.
    fn remaining(&self) -> Option<u64> {
        match self.policy {
            DisconnectPolicy::AfterEvents(n) => Some(u64::from(n).saturating_sub(self.sent)),
            _ => None,
        }
    }

    fn on_sent(&mut self, n: u64, _now: Instant) {
        self.sent = self.sent.saturating_add(n);
    }

    /// `AfterPriming` on a resume: deliver what is ready, then close;
    /// `AfterMs`: once the time is up.
    fn close_when_caught_up(&self, now: Instant) -> bool {
        match self.policy {
            DisconnectPolicy::AfterPriming => self.resuming,
            DisconnectPolicy::AfterMs(_) => self.deadline.is_some_and(|d| now >= d),
            _ => false,
        }
    }

    /// `AfterMs` before its deadline: the deadline.
    fn wake_at(&self, now: Instant) -> Option<Instant> {
        self.deadline.filter(|d| now < *d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn policy_parses_and_prints() {
        for (text, p) in [
            ("never", DisconnectPolicy::Never),
            ("after-priming", DisconnectPolicy::AfterPriming),
            ("after-events:3", DisconnectPolicy::AfterEvents(3)),
            ("after-ms:250", DisconnectPolicy::AfterMs(250)),
            ("after-ms:0", DisconnectPolicy::AfterMs(0)),
        ] {
            assert_eq!(text.parse::<DisconnectPolicy>().unwrap(), p);
            assert_eq!(p.to_string(), text);
        }
        for bad in [
            "",
            "sometimes",
            "after-events:0",
            "after-events:",
            "after-events:-1",
            "after-events:+1",
            "after-ms:x",
            "after-events:99999999999",
            "after-secs:1",
        ] {
            let e = bad.parse::<DisconnectPolicy>().unwrap_err();
            assert!(e.to_string().contains("expected never"), "{e}");
        }
    }

    #[test]
    fn never_closes_nothing_early() {
        let t0 = Instant::now();
        for resuming in [false, true] {
            let mut p = PolicyState::new(DisconnectPolicy::Never, t0, resuming);
            p.on_sent(1_000_000, t0 + ms(10));
            assert!(!p.close_after_priming());
            assert_eq!(p.remaining(), None);
            assert!(!p.close_when_caught_up(t0 + Duration::from_secs(3600)));
            assert_eq!(p.wake_at(t0), None);
        }
    }

    #[test]
    fn after_priming_closes_new_streams_at_once_and_resumes_when_caught_up() {
        let t0 = Instant::now();
        let fresh = PolicyState::new(DisconnectPolicy::AfterPriming, t0, false);
        assert!(fresh.close_after_priming());
        assert!(!fresh.close_when_caught_up(t0));
        let resumed = PolicyState::new(DisconnectPolicy::AfterPriming, t0, true);
        assert!(
            !resumed.close_after_priming(),
            "a resume has no priming event to close after"
        );
        assert!(resumed.close_when_caught_up(t0));
        assert_eq!(
            resumed.remaining(),
            None,
            "a resume delivers everything ready"
        );
        assert_eq!(resumed.wake_at(t0), None);
    }

    #[test]
    fn after_events_counts_message_events_only() {
        let t0 = Instant::now();
        let mut p = PolicyState::new(DisconnectPolicy::AfterEvents(3), t0, false);
        assert!(!p.close_after_priming());
        assert_eq!(p.remaining(), Some(3));
        p.on_sent(2, t0);
        assert_eq!(p.remaining(), Some(1));
        assert!(!p.close_when_caught_up(t0 + Duration::from_secs(60)));
        p.on_sent(1, t0);
        assert_eq!(p.remaining(), Some(0));
        assert_eq!(p.sent(), 3);
        p.on_sent(5, t0);
        assert_eq!(p.remaining(), Some(0), "never negative");
        // A resuming connection gets a fresh budget.
        let r = PolicyState::new(DisconnectPolicy::AfterEvents(3), t0, true);
        assert_eq!(r.remaining(), Some(3));
    }

    #[test]
    fn after_ms_closes_at_its_deadline_once_caught_up() {
        let t0 = Instant::now();
        let p = PolicyState::new(DisconnectPolicy::AfterMs(250), t0, false);
        assert!(!p.close_after_priming());
        assert_eq!(p.remaining(), None);
        assert!(!p.close_when_caught_up(t0));
        assert!(!p.close_when_caught_up(t0 + ms(249)));
        assert!(
            p.close_when_caught_up(t0 + ms(250)),
            "exactly at the deadline"
        );
        assert!(p.close_when_caught_up(t0 + ms(10_000)));
        // An idle connection is woken at the deadline, and not after it.
        assert_eq!(p.wake_at(t0), Some(t0 + ms(250)));
        assert_eq!(p.wake_at(t0 + ms(249)), Some(t0 + ms(250)));
        assert_eq!(p.wake_at(t0 + ms(250)), None);
        // The clock starts when the connection opens, resume or not.
        let r = PolicyState::new(DisconnectPolicy::AfterMs(250), t0 + ms(100), true);
        assert!(!r.close_when_caught_up(t0 + ms(300)));
        assert!(r.close_when_caught_up(t0 + ms(350)));
    }

    #[test]
    fn after_ms_zero_closes_once_caught_up() {
        let t0 = Instant::now();
        let p = PolicyState::new(DisconnectPolicy::AfterMs(0), t0, false);
        assert!(p.close_when_caught_up(t0));
        assert_eq!(p.wake_at(t0), None);
    }
}
