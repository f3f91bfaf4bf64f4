//! What the scenarios' verdicts see of the server under test once a call
//! has ended: its handler's cancellations and its wire. A verdict takes a
//! [`Seen`] rather than the whole [`Harness`], so its unit tests can show
//! it a wire built by hand and a handler that has (or has not) cancelled
//! something.

use std::time::Duration;

use super::harness::{Harness, Observed};
use super::outcome::{Outcome, ensure, failed};
use super::wire::Wire;
use crate::reference::ReferenceHandler;

/// The server under test as the verdicts see it: its wire, and how many
/// requests its handler had cancelled before the call.
pub(crate) struct Seen<'a> {
    pub(crate) handler: &'a ReferenceHandler,
    pub(crate) wire: &'a Wire,
    pub(crate) before: u64,
}

impl<'a> Seen<'a> {
    /// The server of `harness`, whose handler had cancelled `before`
    /// requests when the call began.
    pub(crate) fn since(harness: &'a Harness, before: u64) -> Self {
        Seen {
            handler: &harness.handler,
            wire: &harness.wire,
            before,
        }
    }

    /// Whether the handler cancelled a request since the call began.
    pub(crate) fn cancelled(&self) -> bool {
        self.handler.cancelled_count() > self.before
    }

    /// Whether the handler cancels a request since the call began within
    /// 3 s (a cancellation crosses tasks and, on a cluster, instances).
    pub(crate) async fn saw_cancel(&self) -> bool {
        wait_until(Duration::from_secs(3), || self.cancelled()).await
    }

    /// A lost connection is no cancellation: "Disconnection SHOULD NOT be
    /// interpreted as the client cancelling its request" (2025-11-25
    /// *Transports*, Streamable HTTP).
    pub(crate) fn not_cancelled(&self) -> Result<(), Observed> {
        ensure(!self.cancelled(), || {
            "the server cancelled the work when the connection dropped (\"Disconnection SHOULD NOT be interpreted as the client cancelling its request\")".into()
        })
    }

    /// 2026-07-28: the client failed with `err` after `cuts` connection(s)
    /// were cut, and "Closing the SSE response stream MUST be treated by
    /// the server as cancellation of that request" (2026-07-28
    /// *Transports*): the spec-named failure when the handler saw the
    /// cancellation within 3 s, a failure of its own otherwise.
    pub(crate) async fn cancelled_by_close(&self, err: Observed, cuts: usize) -> Outcome {
        let cancelled = self.saw_cancel().await;
        Err(match (cancelled, err) {
            (true, Observed::Failed { kind, message }) => Observed::Failed {
                kind,
                message: format!(
                    "{message}; {cuts} connection(s) cut; the server cancelled the work"
                ),
            },
            (_, other) => failed(format!(
                "the client failed ({other:?}), but the server never treated the closed stream as cancellation"
            )),
        })
    }
}

/// Polls `done` every 10 ms until it holds or `limit` passes.
pub(crate) async fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let end = tokio::time::Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if tokio::time::Instant::now() >= end {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
