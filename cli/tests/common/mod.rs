//! What the binary's tests share and `mcp-test-support` cannot hold (it
//! would need `mcp-compat` itself).

use mcp_compat::serve::ServeArgs;

pub mod cluster;

/// The options of `mcp-compat serve` with nothing set (clap's defaults).
pub fn serve_args() -> ServeArgs {
    ServeArgs::from_options::<_, &str>([]).expect("the defaults parse")
}
