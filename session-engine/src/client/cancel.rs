//! Sending `notifications/cancelled` for a request the caller gave up on.
//!
//! On the legacy revisions a disconnection is not a cancellation
//! (*Transports*, "Sending Messages to the Server" 6: "Disconnection SHOULD
//! NOT be interpreted as the client cancelling its request. To cancel, the
//! client SHOULD explicitly send an MCP `CancelledNotification`"). So when
//! the caller drops a request's stream before its response, or the client
//! stops waiting (timeout, resumption given up), the request is cancelled
//! explicitly, fire-and-forget (*Cancellation*, "Cancellation Flow").

use std::sync::Arc;

use mcp_transport_core::jsonrpc::{Message, Notification, RequestId};

use super::shared::Shared;
use super::state::Session;
use super::wire;

/// Sends `notifications/cancelled` for its request when dropped or fired,
/// unless disarmed first (the response arrived, or the session is gone).
pub(crate) struct CancelGuard {
    shared: Arc<Shared>,
    session: Arc<Session>,
    id: RequestId,
    armed: bool,
}

impl CancelGuard {
    /// An armed guard for request `id` of `session`.
    pub(crate) fn new(shared: Arc<Shared>, session: Arc<Session>, id: RequestId) -> Self {
        CancelGuard {
            shared,
            session,
            id,
            armed: true,
        }
    }

    /// No cancellation will be sent.
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }

    /// Sends the cancellation now (once), with `reason`.
    pub(crate) fn fire(&mut self, reason: &str) {
        if !std::mem::replace(&mut self.armed, false) {
            return;
        }
        // Nothing to cancel in a session that is gone or a client that closed.
        if self.shared.closed.is_cancelled() || self.session.is_lost() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(id = %self.id, "no tokio runtime to send notifications/cancelled from");
            return;
        };
        let message = Message::Notification(Notification::cancelled(&self.id, reason));
        let shared = self.shared.clone();
        let session = self.session.clone();
        let id = self.id.clone();
        runtime.spawn(async move {
            let what = format!("POST notifications/cancelled for request {id}");
            if let Err(e) = wire::post_accepted(&shared, &session, &message, &what).await {
                tracing::debug!(%id, error = %e, "notifications/cancelled was not accepted");
            }
        });
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        self.fire("the client dropped the request's response stream");
    }
}
