//! Draining before a shutdown: the server's SSE connections are ended so
//! that the HTTP layer's graceful shutdown is not held up by streams that
//! never end by themselves ([`LegacyServer::drain`]); then, once the HTTP
//! layer is done, the requests this instance still runs are let finish
//! within what is left of the grace period and the rest abandoned
//! ([`LegacyServer::abandon_after`]).
//!
//! # Abandoning rather than handing off
//!
//! With leases (`ServerConfig::leases`, several instances sharing the
//! stores), a request this instance abandons at shutdown would otherwise
//! keep its lease until the TTL runs out, and a client following its
//! stream through another instance would wait that long for the error a
//! follower writes for a dead writer. The instance knows it is stopping,
//! so it ends the stream itself at once, the way that follower would: one
//! `-32603` error per request still unanswered, the stream finished in the
//! shared log, the lease released. Handing the request off to another
//! instance instead (running it again there) is not sound: the handler may
//! have had effects already (a `tools/call` is not idempotent), its state
//! (the future, server-to-client requests awaiting answers) cannot move,
//! and the client would get a response to a request it sent once from two
//! runs. The outcome is unknown, so it is reported as an error, not as a
//! result.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::LegacyServer;
use super::session::Session;
use super::stream::StreamState;

impl LegacyServer {
    /// Prepares the server for a shutdown (call it when the process has
    /// been asked to stop, with `mcp_http_edge::server::serve_with_shutdown`).
    ///
    /// * On 2025-11-25 sessions every open SSE connection — request streams
    ///   and the standalone GET stream alike — is closed the way SEP-1699
    ///   closes one early (*Transports*, "Resumability and Redelivery": the
    ///   server may close the connection after sending an event id, and
    ///   "SHOULD send an SSE event with a `retry` field" first): an event id
    ///   to resume from, then `retry`. The requests go on; their events
    ///   wait in the event store, so a client resuming on another instance
    ///   that shares the store gets them. A connection opened after this
    ///   call is closed the same way after its priming event. (With
    ///   leases, [`abandon_after`](Self::abandon_after) then bounds how
    ///   long they go on.)
    /// * On earlier revisions, which cannot tell a client when to come back,
    ///   only the standalone GET streams (no request in flight on them) are
    ///   ended; request streams run until their response or the end of the
    ///   shutdown's grace period.
    ///
    /// Returns how many streams were asked to close. Sessions stay: a
    /// request arriving on a connection still open is served.
    pub async fn drain(&self) -> usize {
        let shared = &self.shared;
        shared.draining.store(true, Ordering::SeqCst);
        let mut closed = 0;
        for session in shared.sessions.all() {
            if session.revision.polling().is_some() {
                for id in session.stream_ids() {
                    if let Some(stream) = session.stream(id)
                        && stream.is_attached()
                    {
                        stream.request_close();
                        closed += 1;
                    }
                }
            } else if let Some(stream) = session.standalone().lock().await.as_ref()
                && stream.is_attached()
            {
                stream.request_close();
                closed += 1;
            }
        }
        tracing::info!(closed, "draining: SSE streams asked to close");
        closed
    }

    /// Ends the shutdown after [`drain`](Self::drain) and the HTTP layer's
    /// graceful shutdown: waits up to `within` (what is left of the grace
    /// period) for the requests whose streams this instance writes under a
    /// lease to finish — their clients, cut off by the drain, resume
    /// through other instances and read the rest from the shared log — then
    /// abandons those still running (see the module documentation): each
    /// gets one `-32603` error response in its stream, the stream is
    /// finished and its lease released, so a client waiting elsewhere gets
    /// the error at once, not after the lease's TTL. Leased standalone
    /// streams are finished and released too (their clients open a new
    /// `GET` elsewhere). Returns how many streams were abandoned.
    ///
    /// Does nothing without leases: then no other instance follows this
    /// one's streams, and nothing is waited for.
    pub async fn abandon_after(&self, within: Duration) -> usize {
        let shared = &self.shared;
        if shared.config.leases.is_none() {
            return 0;
        }
        let running: Vec<_> = leased_streams(shared)
            .into_iter()
            .filter(|(_, _, ids)| !ids.is_empty())
            .map(|(_, state, _)| {
                let mut live = state.subscribe();
                async move {
                    let _ = live.wait_for(|l| l.finished).await;
                }
            })
            .collect();
        if !running.is_empty()
            && tokio::time::timeout(within, futures_util::future::join_all(running))
                .await
                .is_err()
        {
            tracing::warn!(
                ?within,
                "shutdown: requests still running after the grace period are abandoned"
            );
        }
        let mut abandoned = 0;
        for (session, state, ids) in leased_streams(shared) {
            if super::lease::abandon_stream(shared, &session, &state).await {
                tracing::warn!(session = %session.id, stream = %state.id, requests = ?ids, "shutdown: stream abandoned, its requests answered with an error");
                abandoned += 1;
            }
        }
        abandoned
    }

    /// Whether [`drain`](Self::drain) has been called.
    pub fn is_draining(&self) -> bool {
        self.shared.draining.load(Ordering::SeqCst)
    }
}

/// Every live stream this instance holds a lease on, with the lease's
/// request ids (empty for a standalone stream).
fn leased_streams(
    shared: &super::Shared,
) -> Vec<(
    Arc<Session>,
    Arc<StreamState>,
    Vec<mcp_transport_core::jsonrpc::RequestId>,
)> {
    let mut out = Vec::new();
    for session in shared.sessions.all() {
        for id in session.stream_ids() {
            if let Some(state) = session.stream(id)
                && let Some(ids) = state.lease_ids()
            {
                out.push((session.clone(), state, ids));
            }
        }
    }
    out
}
