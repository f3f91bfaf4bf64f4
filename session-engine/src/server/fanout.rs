//! Server notifications across instances: what one instance sends to
//! every session's standalone `GET` stream reaches the standalone streams
//! every instance holds.
//!
//! Behind a load balancer without sticky sessions, the client's `GET`
//! (Transports, "Listening for Messages from the Server": "The client MAY
//! issue an HTTP GET to the MCP endpoint. This can be used to open an SSE
//! stream, allowing the server to communicate to the client, without the
//! client first sending data via HTTP POST") lands on any instance, and
//! the instance holding it keeps the stream's live state; the application
//! may emit a `notifications/tools/list_changed` on another.
//! [`LegacyServer::notify_all`](super::LegacyServer::notify_all) logs the
//! notification on this instance's standalone streams and, with a
//! [`ServerConfig::signals`](super::ServerConfig) bus, publishes it as a
//! broadcast [`SessionSignal`] (scope [`SCOPE`], origin this instance);
//! every other instance's signal listener logs it on the standalone
//! streams it holds. The origin skips its own broadcast.
//!
//! The signal listener runs once an instance holds a session (it started
//! or adopted one), which any instance holding a standalone stream does.
//! Delivery is at most once, like the bus.

use mcp_transport_core::jsonrpc::{self, Message, Notification};
use mcp_transport_core::session_store::SessionSignal;

use super::Shared;

/// The broadcast scope of legacy standalone streams (a 2026-07-28 engine
/// behind the same endpoint uses its own, so each era delivers once).
pub(crate) const SCOPE: &str = "legacy";

/// Logs `n` on the standalone stream of every session this instance holds
/// one for; how many.
pub(crate) async fn notify_local(shared: &Shared, n: &Notification) -> usize {
    let message = Message::Notification(n.clone());
    let mut count = 0;
    for s in shared.sessions.all() {
        if shared.notify(&s, &message).await {
            count += 1;
        }
    }
    count
}

/// Publishes `n` to the other instances (no-op without a bus).
pub(crate) async fn broadcast(shared: &Shared, n: &Notification) {
    let Some(bus) = &shared.config.signals else {
        return;
    };
    let signal = SessionSignal::broadcast(
        SCOPE,
        &shared.origin,
        Message::Notification(n.clone()).to_json().into(),
    );
    if let Err(e) = bus.publish(signal).await {
        tracing::warn!(error = %e, "could not publish a server notification to the other instances");
    }
}

/// Logs a broadcast of [`SCOPE`] from another instance on this instance's
/// standalone streams.
pub(crate) async fn on_broadcast(shared: &Shared, signal: &SessionSignal) {
    let Some((scope, origin)) = signal.broadcast_parts() else {
        return;
    };
    if scope != SCOPE || origin == shared.origin {
        return;
    }
    if let Ok(jsonrpc::Body::Single(Message::Notification(n))) =
        jsonrpc::parse_body(&signal.message, false)
    {
        let count = notify_local(shared, &n).await;
        tracing::debug!(method = %n.method, streams = count, "server notification from another instance");
    }
}
