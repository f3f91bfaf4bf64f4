//! A bound on the work a server runs at once, across all its sessions:
//! how many handlers, and how many bytes of requests they keep.
//!
//! Held requests are bounded by the connections that hold them. Detached
//! work is not: a 2025-11-25 request whose SSE stream the server dropped
//! (SEP-1699 polling) keeps running, since *Transports* says
//! "Disconnection SHOULD NOT be interpreted as the client cancelling its
//! request", and a 2026-07-28 task runs with no connection at all. Each
//! keeps its request (its `params`, up to the largest body accepted) until
//! it ends. Without a bound of their own, a few clients could start
//! handlers until memory runs out; with one, the request over the bound is
//! refused at admission, before anything of it runs, and everything
//! already running goes on (*DESIGN.md*, "Limits").
//!
//! Both engines take a permit from their [`Admission`] before a handler
//! runs (a request, and a 2026-07-28 task's worker) and keep it until the
//! handler ends. A refusal is the engine's `503` with a JSON-RPC
//! `-32603` naming the limit ([`Refused`]'s text), for that request only:
//! the server keeps serving.
//!
//! Written over one atomic word rather than a `tokio::sync::Semaphore`:
//! this crate has no runtime, nothing here ever waits (admission is a yes
//! or a no), and a request's weight is its size, which a semaphore's `u32`
//! permits would have to be scaled into. The count and the bytes share the
//! word (`Counts`), so an admission is one compare-exchange and a
//! release one subtraction: every request of every connection updates
//! this word, from both CPUs, and each update moves its cache line
//! between them (two words cost two updates each way: docs/PERFORMANCE.md,
//! session 47). The word bounds the limits: [`MAX_RUNNING_LIMIT`] handlers
//! and [`MAX_BYTES_LIMIT`] bytes, far above what a server can hold.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::jsonrpc::{ErrorObject, Request};

/// The highest [`RunLimits::max_running`] an [`Admission`] enforces (a
/// higher setting is taken as this): 2²³, 8,388,608 handlers.
pub const MAX_RUNNING_LIMIT: usize = 1 << 23;

/// The highest [`RunLimits::max_running_bytes`] an [`Admission`] enforces
/// (a higher setting is taken as this): 2³⁸ bytes, 256 GiB. A request's
/// [`weight`] is counted as at most half of it.
pub const MAX_BYTES_LIMIT: usize = 1 << 38;

/// The default [`RunLimits::max_running`]: 16,384 handlers at once, above
/// the 10,000 concurrent long-running requests of the project's
/// long-running benchmark.
pub const DEFAULT_MAX_RUNNING: usize = 16_384;

/// The default [`RunLimits::max_running_bytes`]: 256 MiB of requests kept
/// by running handlers (64 requests at the default 4 MiB body limit,
/// hundreds of thousands of ordinary ones).
pub const DEFAULT_MAX_RUNNING_BYTES: usize = 256 * 1024 * 1024;

/// How much work one engine runs at once ([`Admission`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLimits {
    /// The most handlers running at once; one more request is refused.
    /// Default [`DEFAULT_MAX_RUNNING`]; at least 1, at most
    /// [`MAX_RUNNING_LIMIT`].
    pub max_running: usize,
    /// The most bytes of requests ([`weight`]) their running handlers keep;
    /// a request that would pass it is refused, unless nothing else is
    /// running (so a request the body limit accepted can always run
    /// alone). Default [`DEFAULT_MAX_RUNNING_BYTES`]; at most
    /// [`MAX_BYTES_LIMIT`].
    pub max_running_bytes: usize,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_running: DEFAULT_MAX_RUNNING,
            max_running_bytes: DEFAULT_MAX_RUNNING_BYTES,
        }
    }
}

impl RunLimits {
    /// Sets [`max_running`](Self::max_running) (at least 1).
    pub fn with_max_running(mut self, n: usize) -> Self {
        self.max_running = n.max(1);
        self
    }

    /// Sets [`max_running_bytes`](Self::max_running_bytes).
    pub fn with_max_running_bytes(mut self, n: usize) -> Self {
        self.max_running_bytes = n;
        self
    }
}

/// What a running handler keeps of its request, as admission counts it:
/// the method name and the `params` text. (An engine may keep more, such as
/// an index into `params`; the bound is on what the client sent.)
pub fn weight(request: &Request) -> usize {
    request.method.len() + request.params.as_ref().map_or(0, |p| p.get().len())
}

/// Why a request was not admitted; its text is the error message the
/// client gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// [`RunLimits::max_running`] handlers run already.
    #[error("the server already runs its maximum of {max} requests at once; try again later")]
    Running {
        /// The limit.
        max: usize,
    },
    /// The request would take the running requests past
    /// [`RunLimits::max_running_bytes`].
    #[error(
        "the requests this server runs already hold {held} bytes; this one ({asked} bytes) would pass its maximum of {max}; try again later"
    )]
    Bytes {
        /// The limit.
        max: usize,
        /// What the running requests held when this one came.
        held: usize,
        /// This request's [`weight`].
        asked: usize,
    },
}

impl Refused {
    /// The JSON-RPC error a refused request is answered with (with HTTP
    /// 503): `-32603`, the message naming the limit.
    pub fn to_error(&self) -> ErrorObject {
        ErrorObject::internal(self)
    }
}

/// One engine's count of running handlers and the bytes they keep, against
/// its [`RunLimits`].
#[derive(Debug)]
pub struct Admission {
    limits: RunLimits,
    /// The running handlers and their bytes ([`Counts`]).
    counts: AtomicU64,
}

/// The running handlers (the high 24 bits) and the bytes they keep (the
/// low 40) in one word. The bytes never carry into the count: they stay
/// under [`MAX_BYTES_LIMIT`] plus two weights of at most half of it (one
/// over the budget when nothing else runs, and its successor), 2³⁹ in
/// all, and the count under [`MAX_RUNNING_LIMIT`] plus one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Counts {
    running: u64,
    bytes: u64,
}

/// Where the count starts in the word.
const RUNNING_SHIFT: u32 = 40;

impl Counts {
    fn of(word: u64) -> Counts {
        Counts {
            running: word >> RUNNING_SHIFT,
            bytes: word & ((1 << RUNNING_SHIFT) - 1),
        }
    }

    fn word(self) -> u64 {
        (self.running << RUNNING_SHIFT) | self.bytes
    }
}

/// `n` as a count in the word (`usize` is at most 64 bits).
fn wide(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A count read back from the word (each under 2⁴⁰).
fn narrow(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl Admission {
    /// An admission with nothing running.
    pub fn new(limits: RunLimits) -> Arc<Admission> {
        Arc::new(Admission {
            limits: RunLimits {
                max_running: limits.max_running.clamp(1, MAX_RUNNING_LIMIT),
                max_running_bytes: limits.max_running_bytes.min(MAX_BYTES_LIMIT),
            },
            counts: AtomicU64::new(0),
        })
    }

    fn counts(&self) -> Counts {
        Counts::of(self.counts.load(Ordering::Acquire))
    }

    /// The limits it enforces.
    pub fn limits(&self) -> RunLimits {
        self.limits
    }

    /// Handlers running now.
    pub fn running(&self) -> usize {
        narrow(self.counts().running)
    }

    /// Bytes their requests keep now.
    pub fn running_bytes(&self) -> usize {
        narrow(self.counts().bytes)
    }

    /// Admits a handler keeping `bytes` of its request, or says which
    /// limit it would pass. Never waits. The permit gives both back when
    /// dropped.
    pub fn try_admit(self: &Arc<Self>, bytes: usize) -> Result<RunPermit, Refused> {
        self.admit(bytes, false)
    }

    /// Admits the work that takes over from the admitted handler calling
    /// this, which ends as soon as it has started it (a 2025-11-25 task's
    /// worker, started by the `tools/call` that creates the task), keeping
    /// `bytes` of the same request. The caller's place and bytes count as
    /// given back, so a budget with room for the caller has room for its
    /// successor: with `max_running = 1`, a task can start. The hand-over
    /// is refused only when the count or the bytes are already over the
    /// limits, that is, while another hand-over has not finished.
    ///
    /// Until the caller ends, both it and its successor hold a place: the
    /// count can read one more than [`RunLimits::max_running`] (and the
    /// bytes one request more than [`RunLimits::max_running_bytes`]),
    /// never more, since no admission succeeds while it does.
    pub fn try_admit_successor(self: &Arc<Self>, bytes: usize) -> Result<RunPermit, Refused> {
        self.admit(bytes, true)
    }

    /// [`try_admit`](Self::try_admit), or with `successor`
    /// [`try_admit_successor`](Self::try_admit_successor): the caller's
    /// place and `bytes` counted as free.
    #[inline]
    fn admit(self: &Arc<Self>, bytes: usize, successor: bool) -> Result<RunPermit, Refused> {
        let (max, max_bytes) = (self.limits.max_running, self.limits.max_running_bytes);
        let room = wide(max) + u64::from(successor);
        let weight = wide(bytes).min(wide(MAX_BYTES_LIMIT / 2));
        let given_back = if successor { weight } else { 0 };
        // Why `held` cannot take one more (`None`: it can).
        let refusal = |held: Counts| {
            if held.running >= room {
                return Some(Refused::Running { max });
            }
            // What the others hold: a request larger than the budget runs
            // when nothing else does, and its successor then too.
            let others = held.bytes.saturating_sub(given_back);
            (others + weight > wide(max_bytes) && others != 0).then_some(Refused::Bytes {
                max: max_bytes,
                held: narrow(held.bytes),
                asked: bytes,
            })
        };
        let taken = self
            .counts
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let held = Counts::of(word);
                refusal(held).is_none().then_some(
                    Counts {
                        running: held.running + 1,
                        bytes: held.bytes + weight,
                    }
                    .word(),
                )
            });
        match taken {
            Ok(_) => Ok(RunPermit {
                admission: self.clone(),
                weight,
            }),
            Err(word) => Err(refusal(Counts::of(word)).unwrap_or(Refused::Running { max })),
        }
    }
}

/// A running handler's place in its [`Admission`], given back on drop.
#[derive(Debug)]
pub struct RunPermit {
    admission: Arc<Admission>,
    /// The bytes counted for it.
    weight: u64,
}

impl Drop for RunPermit {
    fn drop(&mut self) {
        let taken = Counts {
            running: 1,
            bytes: self.weight,
        };
        self.admission
            .counts
            .fetch_sub(taken.word(), Ordering::AcqRel);
    }
}

/// Gives a server configuration the setters of its bound on running work,
/// once: `with_max_running` and `with_max_running_bytes`. The type needs
/// the field `running: RunLimits`, documented on the type (the setters
/// link to it). Used by both engines' configurations and the dual-era
/// endpoint's.
#[macro_export]
macro_rules! impl_running_setters {
    ($config:ty) => {
        impl $config {
            /// Sets the most handlers running at once (the `max_running` of
            /// [`running`](Self::running); 0 is taken as 1).
            pub fn with_max_running(mut self, n: usize) -> Self {
                self.running = self.running.with_max_running(n);
                self
            }

            /// Sets the most bytes of requests running handlers keep (the
            /// `max_running_bytes` of [`running`](Self::running)).
            pub fn with_max_running_bytes(mut self, n: usize) -> Self {
                self.running = self.running.with_max_running_bytes(n);
                self
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::RequestId;
    use serde_json::value::RawValue;

    fn limits(running: usize, bytes: usize) -> RunLimits {
        RunLimits::default()
            .with_max_running(running)
            .with_max_running_bytes(bytes)
    }

    #[test]
    fn counts_up_to_max_running_then_refuses_until_one_ends() {
        let a = Admission::new(limits(2, 1000));
        let p1 = a.try_admit(10).unwrap();
        let _p2 = a.try_admit(10).unwrap();
        assert_eq!(a.running(), 2);
        assert_eq!(a.try_admit(10).unwrap_err(), Refused::Running { max: 2 });
        // The refusal took nothing.
        assert_eq!((a.running(), a.running_bytes()), (2, 20));
        drop(p1);
        assert_eq!((a.running(), a.running_bytes()), (1, 10));
        assert!(a.try_admit(10).is_ok());
    }

    #[test]
    fn bytes_are_bounded_and_given_back() {
        let a = Admission::new(limits(10, 100));
        let p1 = a.try_admit(60).unwrap();
        let p2 = a.try_admit(40).unwrap();
        assert_eq!(a.running_bytes(), 100);
        assert_eq!(
            a.try_admit(1).unwrap_err(),
            Refused::Bytes {
                max: 100,
                held: 100,
                asked: 1
            }
        );
        // A refusal for bytes gives its count back.
        assert_eq!(a.running(), 2);
        drop(p2);
        let _p3 = a.try_admit(40).unwrap();
        drop(p1);
        assert_eq!((a.running(), a.running_bytes()), (1, 40));
    }

    #[test]
    fn a_request_larger_than_the_budget_runs_alone() {
        let a = Admission::new(limits(10, 100));
        let big = a.try_admit(500).unwrap();
        assert!(matches!(a.try_admit(1), Err(Refused::Bytes { .. })));
        drop(big);
        let small = a.try_admit(1).unwrap();
        assert!(matches!(a.try_admit(500), Err(Refused::Bytes { .. })));
        drop(small);
        assert_eq!((a.running(), a.running_bytes()), (0, 0));
    }

    #[test]
    fn the_defaults_are_16384_handlers_and_256_mib() {
        // Documented in DESIGN.md's Limits table and `serve --help`.
        assert_eq!(
            RunLimits::default(),
            RunLimits {
                max_running: 16_384,
                max_running_bytes: 268_435_456,
            }
        );
    }

    /// The count and the bytes share one word: limits past it are taken
    /// at its bounds, a weight counts at most half the byte bound, and
    /// the largest pair a hand-over can hold fits without the bytes
    /// reaching the count.
    #[test]
    fn limits_and_weights_past_the_word_are_clamped() {
        let a = Admission::new(limits(usize::MAX, usize::MAX));
        assert_eq!(a.limits().max_running, MAX_RUNNING_LIMIT);
        assert_eq!(a.limits().max_running_bytes, MAX_BYTES_LIMIT);
        let caller = a.try_admit(usize::MAX).unwrap();
        assert_eq!((a.running(), a.running_bytes()), (1, MAX_BYTES_LIMIT / 2));
        let successor = a.try_admit_successor(usize::MAX).unwrap();
        assert_eq!((a.running(), a.running_bytes()), (2, MAX_BYTES_LIMIT));
        assert_eq!(
            a.try_admit(usize::MAX).unwrap_err(),
            Refused::Bytes {
                max: MAX_BYTES_LIMIT,
                held: MAX_BYTES_LIMIT,
                asked: usize::MAX
            }
        );
        drop((caller, successor));
        assert_eq!((a.running(), a.running_bytes()), (0, 0));
    }

    #[test]
    fn max_running_is_at_least_one() {
        let a = Admission::new(RunLimits {
            max_running: 0,
            max_running_bytes: 10,
        });
        assert_eq!(a.limits().max_running, 1);
        assert_eq!(RunLimits::default().with_max_running(0).max_running, 1);
        let _p = a.try_admit(1).unwrap();
        assert!(a.try_admit(1).is_err());
    }

    #[test]
    fn refusals_name_the_limit() {
        let text = Refused::Running { max: 7 }.to_string();
        assert!(text.contains("maximum of 7 requests"), "{text}");
        let text = Refused::Bytes {
            max: 9,
            held: 8,
            asked: 2,
        }
        .to_string();
        assert!(
            text.contains("8 bytes") && text.contains("(2 bytes)") && text.contains("maximum of 9"),
            "{text}"
        );
    }

    #[test]
    fn a_refusal_is_an_internal_error_naming_the_limit() {
        let e = Refused::Running { max: 3 }.to_error();
        assert_eq!(e.code, crate::jsonrpc::INTERNAL_ERROR);
        assert!(e.message.contains("maximum of 3 requests"), "{}", e.message);
    }

    #[test]
    fn weight_is_the_method_and_the_params_text() {
        let request = Request {
            id: RequestId::Number(1),
            method: "tools/call".into(),
            params: Some(RawValue::from_string(r#"{"name":"x"}"#.into()).unwrap()),
        };
        assert_eq!(weight(&request), 10 + 12);
        let bare = Request {
            params: None,
            ..request
        };
        assert_eq!(weight(&bare), 10);
    }

    #[test]
    fn concurrent_admissions_never_pass_the_limits() {
        let a = Admission::new(limits(8, 80));
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..2_000 {
                        if let Ok(p) = a.try_admit(10) {
                            assert!(a.running() <= 8 && a.running_bytes() <= 80);
                            drop(p);
                        }
                    }
                });
            }
        });
        assert_eq!((a.running(), a.running_bytes()), (0, 0));
    }
}
