//! Draining before a shutdown: the server's SSE connections are ended so
//! that the HTTP layer's graceful shutdown is not held up by streams that
//! never end by themselves.

use std::sync::atomic::Ordering;

use super::LegacyServer;

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
    ///   call is closed the same way after its priming event.
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

    /// Whether [`drain`](Self::drain) has been called.
    pub fn is_draining(&self) -> bool {
        self.shared.draining.load(Ordering::SeqCst)
    }
}
