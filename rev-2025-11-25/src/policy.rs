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
/// `after-events:N` (N ≥ 1), `after-ms:N`, `idle:N`.
///
/// Which to pick: `never` holds every connection for its request's life
/// (fewest requests, one connection per pending request); `idle:T` frees
/// connections that carry nothing for `T` while busy streams keep flowing
/// (the usual choice behind proxies that cut idle connections);
/// `after-priming` turns every pending request into polling (fewest held
/// connections; with the resume hold, about one request per hold time per
/// pending request); `after-events:N` and `after-ms:N` bound what one
/// connection carries, for load balancing and tests.
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
    /// A connection closes after this many milliseconds without an event
    /// (counted from when it opened or last carried an event), once what is
    /// ready has been delivered.
    Idle(u64),
}

/// Why a [`DisconnectPolicy`] could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid disconnect policy {input:?}: {reason} (expected never, after-priming, after-events:N, after-ms:N or idle:N)"
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
            "idle" => number(n).map(DisconnectPolicy::Idle),
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
            DisconnectPolicy::Idle(n) => write!(f, "idle:{n}"),
        }
    }
}

/// One SSE connection's state under a [`DisconnectPolicy`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyState {
    policy: DisconnectPolicy,
    resuming: bool,
    sent: u64,
    /// When the connection opened.
    opened: Instant,
    /// When it last carried a message event (`opened` before the first).
    last_event: Instant,
    /// How long an `AfterPriming` resume with nothing new is held.
    hold: Duration,
}

impl PolicyState {
    /// The state of a connection opened at `now` (`resuming`: a `GET` with
    /// `Last-Event-ID`); `hold` is how long an `AfterPriming` resume that
    /// finds nothing new waits for something before it closes.
    pub fn new(policy: DisconnectPolicy, now: Instant, resuming: bool, hold: Duration) -> Self {
        PolicyState {
            policy,
            resuming,
            sent: 0,
            opened: now,
            last_event: now,
            hold,
        }
    }

    /// Message events sent so far (the priming event does not count).
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// The instant after which a caught-up connection closes, if any.
    fn close_at(&self) -> Option<Instant> {
        match self.policy {
            DisconnectPolicy::AfterPriming if self.resuming => {
                // Long-poll: held until something was delivered, or the
                // hold passes; once something was delivered, closed as soon
                // as it is caught up.
                Some(if self.sent > 0 {
                    self.opened
                } else {
                    self.opened + self.hold
                })
            }
            DisconnectPolicy::AfterMs(ms) => Some(self.opened + Duration::from_millis(ms)),
            DisconnectPolicy::Idle(ms) => Some(self.last_event + Duration::from_millis(ms)),
            _ => None,
        }
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

    fn on_sent(&mut self, n: u64, now: Instant) {
        self.sent = self.sent.saturating_add(n);
        if n > 0 {
            self.last_event = self.last_event.max(now);
        }
    }

    /// `AfterPriming` on a resume: once something was delivered, or the
    /// hold has passed; `AfterMs`: once its time is up; `Idle`: once it has
    /// been that long without an event.
    fn close_when_caught_up(&self, now: Instant) -> bool {
        self.close_at().is_some_and(|at| now >= at)
    }

    /// The instant [`close_when_caught_up`](Self::close_when_caught_up)
    /// turns true, while it is in the future.
    fn wake_at(&self, now: Instant) -> Option<Instant> {
        self.close_at().filter(|at| now < *at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    const HOLD: Duration = Duration::from_secs(10);

    #[test]
    fn policy_parses_and_prints() {
        for (text, p) in [
            ("never", DisconnectPolicy::Never),
            ("after-priming", DisconnectPolicy::AfterPriming),
            ("after-events:3", DisconnectPolicy::AfterEvents(3)),
            ("after-ms:250", DisconnectPolicy::AfterMs(250)),
            ("after-ms:0", DisconnectPolicy::AfterMs(0)),
            ("idle:1500", DisconnectPolicy::Idle(1500)),
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
            "idle:",
            "idle:-5",
        ] {
            let e = bad.parse::<DisconnectPolicy>().unwrap_err();
            assert!(e.to_string().contains("expected never"), "{e}");
        }
    }

    #[test]
    fn never_closes_nothing_early() {
        let t0 = Instant::now();
        for resuming in [false, true] {
            let mut p = PolicyState::new(DisconnectPolicy::Never, t0, resuming, HOLD);
            p.on_sent(1_000_000, t0 + ms(10));
            assert!(!p.close_after_priming());
            assert_eq!(p.remaining(), None);
            assert!(!p.close_when_caught_up(t0 + Duration::from_secs(3600)));
            assert_eq!(p.wake_at(t0), None);
        }
    }

    #[test]
    fn after_priming_closes_new_streams_at_once_and_long_polls_resumes() {
        let t0 = Instant::now();
        let fresh = PolicyState::new(DisconnectPolicy::AfterPriming, t0, false, HOLD);
        assert!(fresh.close_after_priming());
        assert!(!fresh.close_when_caught_up(t0));
        let mut resumed = PolicyState::new(DisconnectPolicy::AfterPriming, t0, true, HOLD);
        assert!(
            !resumed.close_after_priming(),
            "a resume has no priming event to close after"
        );
        assert_eq!(
            resumed.remaining(),
            None,
            "a resume delivers everything ready"
        );
        // Nothing new yet: held (long-poll) until the hold passes.
        assert!(!resumed.close_when_caught_up(t0));
        assert!(!resumed.close_when_caught_up(t0 + HOLD - ms(1)));
        assert_eq!(resumed.wake_at(t0), Some(t0 + HOLD));
        assert!(resumed.close_when_caught_up(t0 + HOLD));
        assert_eq!(resumed.wake_at(t0 + HOLD), None);
        // Something delivered: closed as soon as it is caught up.
        resumed.on_sent(1, t0 + ms(30));
        assert!(resumed.close_when_caught_up(t0 + ms(30)));
        assert_eq!(resumed.wake_at(t0 + ms(30)), None);
    }

    #[test]
    fn after_priming_without_hold_closes_a_caught_up_resume_at_once() {
        let t0 = Instant::now();
        let r = PolicyState::new(DisconnectPolicy::AfterPriming, t0, true, Duration::ZERO);
        assert!(r.close_when_caught_up(t0));
        assert_eq!(r.wake_at(t0), None);
    }

    #[test]
    fn idle_closes_after_a_quiet_spell_and_events_restart_it() {
        let t0 = Instant::now();
        for resuming in [false, true] {
            let mut p = PolicyState::new(DisconnectPolicy::Idle(100), t0, resuming, HOLD);
            assert!(!p.close_after_priming());
            assert_eq!(p.remaining(), None);
            assert!(!p.close_when_caught_up(t0 + ms(99)));
            assert_eq!(p.wake_at(t0 + ms(50)), Some(t0 + ms(100)));
            p.on_sent(2, t0 + ms(80));
            assert!(
                !p.close_when_caught_up(t0 + ms(100)),
                "an event restarted the clock"
            );
            assert_eq!(p.wake_at(t0 + ms(100)), Some(t0 + ms(180)));
            assert!(p.close_when_caught_up(t0 + ms(180)));
            assert_eq!(p.wake_at(t0 + ms(180)), None);
            // Nothing sent is no activity.
            p.on_sent(0, t0 + ms(500));
            assert!(p.close_when_caught_up(t0 + ms(500)));
        }
    }

    #[test]
    fn after_events_counts_message_events_only() {
        let t0 = Instant::now();
        let mut p = PolicyState::new(DisconnectPolicy::AfterEvents(3), t0, false, HOLD);
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
        let r = PolicyState::new(DisconnectPolicy::AfterEvents(3), t0, true, HOLD);
        assert_eq!(r.remaining(), Some(3));
    }

    #[test]
    fn after_ms_closes_at_its_deadline_once_caught_up() {
        let t0 = Instant::now();
        let p = PolicyState::new(DisconnectPolicy::AfterMs(250), t0, false, HOLD);
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
        let r = PolicyState::new(DisconnectPolicy::AfterMs(250), t0 + ms(100), true, HOLD);
        assert!(!r.close_when_caught_up(t0 + ms(300)));
        assert!(r.close_when_caught_up(t0 + ms(350)));
    }

    #[test]
    fn after_ms_zero_closes_once_caught_up() {
        let t0 = Instant::now();
        let p = PolicyState::new(DisconnectPolicy::AfterMs(0), t0, false, HOLD);
        assert!(p.close_when_caught_up(t0));
        assert_eq!(p.wake_at(t0), None);
    }
}
