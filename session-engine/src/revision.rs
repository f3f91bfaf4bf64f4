//! How a legacy revision plugs into the session engine.
//!
//! The three session-based revisions share their machinery (sessions, the
//! event log cursor, the standalone GET stream, JSON and SSE answers), and
//! differ in a few rules. Each revision crate implements
//! [`SessionRevision`] for the versions it defines —
//! `mcp-rev-2025-03-26` for 2025-03-26 and 2025-06-18, `mcp-rev-2025-11-25`
//! for 2025-11-25 — and a server is configured with the implementations it
//! may negotiate ([`ServerConfig::revisions`](crate::server::ServerConfig::revisions)).
//! When `initialize` fixes a session's version, the engine picks that
//! version's implementation once, and every rule that differs by revision
//! asks it (the rustls lesson: choose the version once, at the edge, and
//! let per-version code answer; no version strings compared in the engine).
//!
//! | rule | method | who answers `true` / `Some` |
//! | --- | --- | --- |
//! | JSON-RPC batches in a POST body | [`SessionRevision::batches`] | 2025-03-26 |
//! | `MCP-Protocol-Version` defined (a request without it is logged) | [`SessionRevision::version_header`] | 2025-06-18, 2025-11-25 |
//! | `elicitation/create` exists | [`SessionRevision::elicitation`] | 2025-06-18, 2025-11-25 |
//! | SEP-1699: priming event, `retry`, connections closed early | [`SessionRevision::polling`] | 2025-11-25 |
//! | revision-only methods and request shapes (2025-11-25's experimental tasks) | [`SessionRevision::session_handler`] | 2025-11-25 with tasks configured |
//!
//! SEP-1699's policies are pure state machines ([`ConnectionPolicy`]): the
//! engine feeds them what happened and the time, and does what they say;
//! they never read a clock or touch a socket, so they are unit-tested with
//! explicit instants in the revision crate.

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::Handler;

/// One legacy revision's rules, as the session engine asks them.
///
/// Implemented by the revision crates; see the [module docs](self) for
/// which revision answers what.
pub trait SessionRevision: Send + Sync + fmt::Debug + 'static {
    /// The version this implementation serves (the `protocolVersion` of
    /// `initialize`).
    fn version(&self) -> ProtocolVersion;

    /// Whether a POST body may be a JSON-RPC batch (2025-03-26
    /// *Transports*, "Sending Messages to the Server" 3). When `false` an
    /// array is answered 400 `-32600`.
    fn batches(&self) -> bool {
        false
    }

    /// Whether the revision defines the `MCP-Protocol-Version` header
    /// (2025-06-18 on). Either way a malformed or unsupported value is 400,
    /// and a missing one is served at the session's version; where the
    /// header is defined, its absence is logged.
    fn version_header(&self) -> bool {
        true
    }

    /// Whether `elicitation/create` exists in this revision (2025-06-18 on).
    fn elicitation(&self) -> bool {
        true
    }

    /// SEP-1699 ("Support SSE polling via server-side disconnect"): how
    /// this revision's SSE connections are primed and closed early. `None`
    /// (the default): no priming event, no `retry`, and a connection is
    /// never closed before its stream ends ("The server SHOULD NOT close
    /// the SSE stream before sending the JSON-RPC response").
    fn polling(&self) -> Option<&dyn Polling> {
        None
    }

    /// The handler that serves a new session of this revision, given the
    /// server's own handler and the session's id (called once, at
    /// `initialize`, before the `InitializeResult` is built from its
    /// [`describe`](Handler::describe)). A revision with methods or request
    /// shapes of its own — 2025-11-25's experimental tasks (`tasks/*`,
    /// task-augmented `tools/call`) — wraps `server` here and answers them,
    /// scoping what it keeps to `session_id`; every request and
    /// notification of the session then goes through the wrapper, on the
    /// engine's ordinary path (its stream, SEP-1699 polling, resumption,
    /// server-to-client input). Default: `server` unchanged.
    fn session_handler(
        &self,
        server: Arc<dyn Handler>,
        _session_id: &Arc<str>,
    ) -> Arc<dyn Handler> {
        server
    }

    /// This value as [`Any`], so a revision crate can find and reconfigure
    /// its own implementation in a [`ServerConfig`](crate::server::ServerConfig).
    fn as_any(&self) -> &dyn Any;
}

/// SEP-1699 on the server: what every new SSE connection of a polling
/// session follows.
pub trait Polling: Send + Sync + fmt::Debug {
    /// The `retry` value (milliseconds) sent before the server ends a
    /// connection whose stream has not ended ("the server SHOULD send an SSE
    /// event with a standard `retry` field before closing the connection").
    fn retry_ms(&self) -> u64;

    /// The early-close policy of one new connection, opened at `now`;
    /// `resuming` when it is a `GET` with `Last-Event-ID`.
    fn connection(&self, now: Instant, resuming: bool) -> Box<dyn ConnectionPolicy>;
}

/// When one SSE connection of a polling session closes before its stream
/// ends. A pure state machine: the engine tells it what was sent and when,
/// and asks what to do; it reads no clock.
///
/// The engine, per connection: sends the priming event on a new stream and
/// closes if [`close_after_priming`](Self::close_after_priming); writes at
/// most [`remaining`](Self::remaining) message events and reports them with
/// [`on_sent`](Self::on_sent); closes once everything ready is delivered
/// if [`close_when_caught_up`](Self::close_when_caught_up); and, while
/// waiting for events, wakes at [`wake_at`](Self::wake_at) to ask again.
/// Every early close is preceded by `retry`.
pub trait ConnectionPolicy: Send + Sync {
    /// Close right after the priming event of a new stream.
    fn close_after_priming(&self) -> bool;

    /// How many more message events this connection may carry before it
    /// closes; `None` for no limit. `Some(0)` means close now.
    fn remaining(&self) -> Option<u64>;

    /// `n` message events were written at `now`.
    fn on_sent(&mut self, n: u64, now: Instant);

    /// Whether to close at `now`, once every event ready so far has been
    /// delivered.
    fn close_when_caught_up(&self, now: Instant) -> bool;

    /// When a connection waiting for events must be woken to ask
    /// [`close_when_caught_up`](Self::close_when_caught_up) again; `None`
    /// when only a new event can change the answer.
    fn wake_at(&self, now: Instant) -> Option<Instant>;
}

/// A revision implementation for unit tests: only its version, every rule
/// at its default.
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct Plain(pub ProtocolVersion);

#[cfg(test)]
impl SessionRevision for Plain {
    fn version(&self) -> ProtocolVersion {
        self.0.clone()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}
