//! A minimal MCP server: one tool (`add`), every Streamable HTTP revision
//! (2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28) on one endpoint, and a
//! graceful shutdown on Ctrl-C or SIGTERM.
//!
//! ```sh
//! cargo run -p mcp-examples --bin minimal_server            # 127.0.0.1, a free port
//! cargo run -p mcp-compat -- call http://127.0.0.1:PORT/mcp --tool add --args '{"a":2,"b":3}'
//! ```

use std::sync::Arc;

use mcp_examples::{Adder, serve_until_signal};
use mcp_negotiate::server::{MultiConfig, MultiServer};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let bind = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let server = MultiServer::new(Arc::new(Adder), MultiConfig::all());
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    let app = server.route("/mcp");
    // On the signal: end the SSE streams that never end by themselves, then
    // stop accepting and let requests in flight finish (10 s at most).
    serve_until_signal(listener, app, server).await
}
