//! `serve --max-running N --max-running-bytes B` bounds both eras' engines
//! (`mcp_transport_core::admission`); without the flags, the defaults.

mod common;

use mcp_compat::serve::config;
use mcp_transport_core::admission::RunLimits;

#[test]
fn the_running_limits_reach_both_engines() {
    let mut args = common::serve_args();
    args.max_running = 3;
    args.max_running_bytes = 4096;
    let cfg = config(&args).unwrap();
    let want = RunLimits {
        max_running: 3,
        max_running_bytes: 4096,
    };
    assert_eq!(cfg.legacy.running, want);
    assert_eq!(cfg.modern.running, want);

    let cfg = config(&common::serve_args()).unwrap();
    assert_eq!(cfg.legacy.running, RunLimits::default());
    assert_eq!(cfg.modern.running, RunLimits::default());
}
