//! Every era in one existing axum app: the four Streamable HTTP revisions
//! on `/mcp` (2025-11-25 sessions polled by SEP-1699: each SSE connection
//! closes after its priming event and the client resumes), the deprecated
//! 2024-11-05 HTTP+SSE transport on `/sse` + `/messages`, next to the
//! app's own `/health` route. The MCP routes sit behind tower layers: a
//! concurrency limit and a bearer-token check (401 without it).
//!
//! ```sh
//! cargo run -p mcp-examples --bin every_era_server -- 127.0.0.1:0 TOKEN
//! cargo run -p mcp-examples --bin minimal_client -- http://127.0.0.1:PORT/mcp TOKEN
//! cargo run -p mcp-examples --bin minimal_client -- http://127.0.0.1:PORT/sse TOKEN
//! ```

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::StatusCode;
use mcp_examples::{Adder, serve_until_signal};
use mcp_negotiate::server::{MultiConfig, MultiServer, legacy_config};
use mcp_rev_2024_11_05::server::HttpSseServer;
use mcp_rev_2025_11_25::{DisconnectPolicy, PollingExt};
use mcp_transport_core::handler::Handler;
use tower::limit::ConcurrencyLimitLayer;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let bind = args.next().unwrap_or_else(|| "127.0.0.1:0".into());
    let token = args.next().unwrap_or_else(|| "secret".into());

    let handler: Arc<dyn Handler> = Arc::new(Adder);
    let config = MultiConfig {
        legacy: legacy_config()
            .with_disconnect(DisconnectPolicy::AfterPriming)
            .with_retry_ms(100),
        ..MultiConfig::all()
    };
    let streamable = MultiServer::new(handler.clone(), config);
    let old = HttpSseServer::new(handler, "/messages");

    let expected = format!("Bearer {token}");
    let mcp = streamable
        .route("/mcp")
        .merge(old.router("/sse"))
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            let ok = req
                .headers()
                .get(http::header::AUTHORIZATION)
                .is_some_and(|v| v.as_bytes() == expected.as_bytes());
            async move {
                if ok {
                    next.run(req).await
                } else {
                    unauthorized()
                }
            }
        }))
        .layer(ConcurrencyLimitLayer::new(256));
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .merge(mcp);

    let listener = tokio::net::TcpListener::bind(&bind).await?;
    serve_until_signal(listener, app, streamable).await
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(http::header::WWW_AUTHENTICATE, "Bearer")],
        "a bearer token is required",
    )
        .into_response()
}
