//! `serve --max-running N --max-running-bytes B` bounds the handlers of
//! both eras' engines together (`mcp_transport_core::admission`, one
//! budget shared by the dual-era endpoint); without the flags, the
//! defaults.

mod common;

use std::sync::Arc;

use mcp_compat::serve::{config, handler};
use mcp_negotiate::server::MultiServer;
use mcp_transport_core::admission::RunLimits;
use mcp_transport_core::handler::Handler;

fn built(args: &mcp_compat::serve::ServeArgs) -> MultiServer {
    let h: Arc<dyn Handler> = handler();
    MultiServer::try_new(h, config(args).unwrap()).unwrap()
}

#[test]
fn the_running_limits_are_one_budget_for_both_engines() {
    let mut args = common::serve_args();
    args.max_running = 3;
    args.max_running_bytes = 4096;
    let want = RunLimits {
        max_running: 3,
        max_running_bytes: 4096,
    };
    assert_eq!(config(&args).unwrap().running, want);
    let server = built(&args);
    assert_eq!(server.legacy().unwrap().config().running, want);
    assert_eq!(server.modern().unwrap().config().running, want);

    let server = built(&common::serve_args());
    assert_eq!(
        server.legacy().unwrap().config().running,
        RunLimits::default()
    );
    assert_eq!(
        server.modern().unwrap().config().running,
        RunLimits::default()
    );
}

/// `serve`'s connections carry no peer address: its handler never reads
/// one (`ConnLimits::peer_address`, on by default in the library).
#[test]
fn serve_does_not_put_the_peer_address_in_the_extensions() {
    let limits = mcp_compat::serve::conn_limits(&common::serve_args()).unwrap();
    assert!(!limits.peer_address);
    assert!(mcp_http_edge::server::ConnLimits::default().peer_address);
}
