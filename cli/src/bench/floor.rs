//! The floor: a bare axum handler that reads the POST body and answers a
//! fixed JSON-RPC result, served by `axum::serve` with `TCP_NODELAY` — what
//! an HTTP server on this machine does with no MCP work at all. Every other
//! figure is given as a ratio to it, measured in the same run.

use axum::Router;
use axum::body::Bytes;
use axum::routing::post;
use axum::serve::ListenerExt;

/// The floor's fixed answer: the shape of `tools/call add {a:2,b:3}`'s result.
pub const ANSWER: &str =
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"5"}]}}"#;

async fn answer(_body: Bytes) -> ([(http::HeaderName, &'static str); 1], &'static str) {
    ([(http::header::CONTENT_TYPE, "application/json")], ANSWER)
}

/// The floor's router: `POST /mcp` answers [`ANSWER`] after reading the body.
pub fn router() -> Router {
    Router::new().route("/mcp", post(answer))
}

/// Runs the floor server on `127.0.0.1:0` until SIGTERM or SIGINT,
/// printing `listening on http://HOST:PORT/mcp` first (as `serve` does):
/// served by `axum::serve`, or with `edge` by
/// [`mcp_http_edge::server::serve`] under its default limits (which sets
/// `TCP_NODELAY` itself) without the peer's address, as `serve` runs it.
/// On the signal it returns at once, connections and all: a benchmark's
/// server has nothing to finish.
pub async fn run(edge: bool) -> Result<(), String> {
    let stop = crate::serve::shutdown_signal()
        .map_err(|e| format!("cannot install signal handlers: {e}"))?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("listening on http://{addr}/mcp");
    let app = router();
    let served = async move {
        if edge {
            let limits = mcp_http_edge::server::ConnLimits::default().with_peer_address(false);
            return mcp_http_edge::server::serve(listener, app, limits)
                .await
                .map_err(|e| format!("floor server failed: {e}"));
        }
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app)
            .await
            .map_err(|e| format!("floor server failed: {e}"))
    };
    tokio::select! {
        r = served => r,
        _ = stop => Ok(()),
    }
}
