//! The server's own background tasks end when their work does: the
//! sweeper of idle sessions stops when no session is left (and starts
//! again with the next one), and the signal listener (`cluster`) ends
//! when the server is dropped. An idle server owns no task
//! (`Shared::ensure_sweeper`, `Drop for Shared`).
//!
//! Counted with tokio's runtime metrics on the test's current-thread
//! runtime; the server is driven in memory (no accept loop, no
//! connection tasks), so the only tasks are the server's.

mod server_common;

use std::sync::Arc;
use std::time::Duration;

use mcp_session_engine::server::LegacyServer;
use mcp_test_support::eventually;
use mcp_transport_core::session_store::LocalSignalBus;
use server_common::memory::initialized;
use server_common::{config, test_handler};

/// Tasks alive on this runtime now.
fn tasks() -> usize {
    tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks()
}

#[tokio::test]
async fn the_sweeper_stops_with_the_last_session_and_starts_with_the_next() {
    let before = tasks();
    let server = LegacyServer::new(
        Arc::new(test_handler()),
        config().with_session_idle_timeout(Duration::from_millis(40)),
    );
    assert_eq!(tasks(), before, "a server with no session owns no task");
    let first = initialized(&server).await;
    assert_eq!(tasks(), before + 1, "the sweeper");
    // A second session shares the one sweeper.
    initialized(&server).await;
    assert_eq!(tasks(), before + 1);
    assert!(server.terminate_session(&first).await);
    // The other session expires (40 ms idle): the sweeper ends it, then
    // itself.
    eventually("the idle session's end", || server.session_count() == 0).await;
    eventually("the sweeper's end", || tasks() == before).await;
    // The next session starts it again; it ends once more when that one
    // is gone.
    let next = initialized(&server).await;
    assert_eq!(tasks(), before + 1, "a sweeper again");
    assert!(server.terminate_session(&next).await);
    eventually("the second sweeper's end", || tasks() == before).await;
}

#[tokio::test]
async fn the_signal_listener_ends_with_the_server() {
    let before = tasks();
    let bus = Arc::new(LocalSignalBus::default());
    let server = LegacyServer::new(
        Arc::new(test_handler()),
        config()
            .with_session_idle_timeout(Duration::from_millis(40))
            .with_signals(bus.clone()),
    );
    initialized(&server).await;
    assert_eq!(tasks(), before + 2, "the sweeper and the listener");
    drop(server);
    // The bus lives on (another instance may hold it); the listener must
    // not wait on it for ever.
    eventually("the server's tasks' end", || tasks() == before).await;
    drop(bus);
}
