//! The matrix's harness types, below everything that runs scenarios: what
//! a scenario observed, the server under test, and the client
//! configuration of a row. `run` builds them; the scenarios
//! (`scenario_impl`, `sessions`, `streams`, `checks`, `outcome`) use them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_http_edge::faults::Faults;
use mcp_negotiate::client::NegotiateConfig;
use mcp_negotiate::server::MultiServer;
use mcp_rev_2024_11_05::server::HttpSseServer;
use mcp_session_engine::server::LegacyServer;
use mcp_transport_core::handler::LogLevel;
use mcp_transport_core::jsonrpc::Notification;
use mcp_transport_core::transport::{ResumeFailure, TransportError};
use serde_json::json;

use super::ClientKind;
use super::failure::Failure;
use super::wire::Wire;
use crate::reference::ReferenceHandler;

/// What actually happened in one scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observed {
    /// It worked; the detail says what was checked.
    Works(String),
    /// It failed; `kind` when the failure is one the spec names.
    Failed {
        /// The recognized failure, if any.
        kind: Option<Failure>,
        /// What went wrong.
        message: String,
    },
    /// The mechanism is absent, as checked (no priming event, no early
    /// close, 405, no session id, ...); the detail says what was checked.
    Absent(String),
}

/// The server of a cell: every Streamable HTTP configuration is a
/// `MultiServer`; `s-2024-11-05` is an HTTP+SSE server.
pub(crate) enum Served {
    /// One endpoint, the configured Streamable HTTP revisions.
    Multi(MultiServer),
    /// The deprecated HTTP+SSE transport.
    HttpSse(HttpSseServer),
    /// Several instances sharing their state behind a balancer
    /// (`s-cluster`, see [`super::cluster`]).
    Cluster(Vec<MultiServer>),
}

impl Served {
    /// Sends a server notification to every listener; how many got it.
    pub(crate) async fn publish(&self, note: &Notification) -> usize {
        match self {
            Served::Multi(m) => m.publish(note).await,
            Served::HttpSse(h) => h.publish(note),
            Served::Cluster(all) => super::cluster::publish(all, note).await,
        }
    }

    /// The session-based engine, if any (a cluster's first instance's).
    pub(crate) fn legacy(&self) -> Option<&LegacyServer> {
        match self {
            Served::Multi(m) => m.legacy(),
            Served::HttpSse(_) => None,
            Served::Cluster(all) => all.first().and_then(MultiServer::legacy),
        }
    }

    /// Every session-based engine (one per instance).
    fn legacies(&self) -> Vec<&LegacyServer> {
        match self {
            Served::Multi(m) => m.legacy().into_iter().collect(),
            Served::HttpSse(_) => Vec::new(),
            Served::Cluster(all) => all.iter().filter_map(MultiServer::legacy).collect(),
        }
    }

    /// Ends every session on every instance (their shared records too), as
    /// an idle expiry does; how many copies were ended.
    pub(crate) async fn terminate_all(&self) -> usize {
        let mut n = 0;
        for l in self.legacies() {
            n += l.terminate_all().await;
        }
        n
    }

    /// The sessions the instances hold (a session adopted by two instances
    /// counts twice).
    pub(crate) fn session_count(&self) -> usize {
        self.legacies().iter().map(|l| l.session_count()).sum()
    }
}

/// A server under test.
pub(crate) struct Harness {
    pub(crate) server: Served,
    pub(crate) handler: Arc<ReferenceHandler>,
    pub(crate) addr: SocketAddr,
    /// Every exchange the server saw.
    pub(crate) wire: Wire,
    /// The client configuration of the cell.
    pub(crate) client: ClientKind,
    /// The injected faults (none for the real matrix).
    pub(crate) faults: Faults,
    /// The server task, aborted when the harness is dropped.
    pub(crate) task: tokio::task::JoinHandle<()>,
    /// `s-cluster`: the instances and the balancer at
    /// [`addr`](Self::addr), kept running until the harness is dropped.
    pub(crate) _cluster: Option<super::cluster::Running>,
}

/// The `retry` (ms) the disconnect scenario's server sends: long enough
/// that a client reconnecting at once is told apart from one that waits.
pub(crate) const DISCONNECT_RETRY_MS: u64 = 150;
/// The disconnect scenario's server closes a connection after this many
/// message events.
pub(crate) const DISCONNECT_AFTER_EVENTS: u32 = 2;

/// How long `long_running_drop`'s tool works (`slow`, long-running): long
/// enough to cut its connection mid-way, short enough for the matrix.
pub(crate) const LONG_MS: u64 = 2000;
/// When `long_running_drop` cuts the connection, after the call's POST
/// reached the server.
pub(crate) const CUT_AFTER_MS: u64 = 400;
/// The `pollIntervalMs` the task scenarios' server suggests.
pub(crate) const TASK_POLL_MS: u64 = 100;

impl Drop for Harness {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The negotiating client configuration of row `client` for the server at
/// `addr`, with `faults` injected (none in the real matrix).
pub(crate) fn client_config(
    client: ClientKind,
    addr: SocketAddr,
    faults: Faults,
) -> NegotiateConfig {
    client_config_at(client, format!("http://{addr}/mcp"), faults)
}

/// [`client_config`] for the MCP endpoint at `url`.
pub(crate) fn client_config_at(client: ClientKind, url: String, faults: Faults) -> NegotiateConfig {
    let mut cfg = NegotiateConfig::new(url)
        .with_revisions(client.revisions())
        .with_capabilities(json!({ "elicitation": {} }))
        .with_input_handler(Arc::new(super::outcome::Ada));
    cfg.legacy = cfg
        .legacy
        .clone()
        .with_reconnect_backoff(Duration::from_millis(20));
    cfg.legacy.http.faults = faults;
    cfg.modern = cfg.modern.clone().with_log_level(Some(LogLevel::Debug));
    cfg.request_timeout = Some(Duration::from_secs(10));
    cfg
}

/// Classifies a transport error the spec names: a stream that cannot be
/// resumed at all (the revision has no resumption, or the server sent no
/// event id to resume from). A resumption that was tried and gave up
/// (attempts or time spent) is not what the spec names.
pub(crate) fn classify_error(e: &TransportError) -> Option<Failure> {
    match e {
        TransportError::ResumeFailed(
            ResumeFailure::NotResumable { .. }
            | ResumeFailure::NoEventId { .. }
            | ResumeFailure::SubscriptionEnded { .. },
        ) => Some(Failure::NotResumable),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_transport_core::ProtocolVersion;

    #[test]
    fn only_unresumable_streams_are_the_spec_named_failure() {
        let not = TransportError::ResumeFailed(ResumeFailure::NotResumable {
            revision: ProtocolVersion::V2026_07_28,
            what: "the answer to tools/call (request 1)".into(),
            why: "the connection broke".into(),
        });
        assert_eq!(classify_error(&not), Some(Failure::NotResumable));
        let gave_up = TransportError::ResumeFailed(ResumeFailure::AttemptsExhausted {
            what: "the stream of request 1".into(),
            attempts: 5,
            elapsed: Duration::from_secs(1),
            max_attempts: 5,
            last: "the connection broke".into(),
        });
        assert_eq!(classify_error(&gave_up), None);
        assert_eq!(
            classify_error(&TransportError::SessionExpired {
                session_id: "s".into()
            }),
            None
        );
    }
}
