//! Runnable examples of the library, one binary each (`src/*.rs`), run by
//! this crate's tests (`tests/examples.rs`):
//!
//! | binary | shows |
//! | --- | --- |
//! | `minimal_server` | a [`Handler`] with one tool, served in every Streamable HTTP revision, with a graceful shutdown on Ctrl-C/SIGTERM |
//! | `minimal_client` | the negotiating client: finds the revision, calls a tool, sends a header on every request |
//! | `typed_tools` | typed tools (`mcp-tools`): serde arguments and results, generated schemas, structured results and argument errors as each revision defines them, an elicitation, a long-running tool with progress |
//! | `every_era_server` | every era — the four Streamable HTTP revisions on `/mcp` and the deprecated HTTP+SSE transport on `/sse` — mounted in an axum app next to other routes, behind tower layers and a bearer-token check |
//! | `long_running_server` | a long-running tool that closes its SSE connection after the first step (`close_sse_stream`, SEP-1699) so the client resumes, on a custom event store ([`CountingStore`]) |
//!
//! The handler the first three share is [`Adder`].

mod counting_store;

pub use counting_store::CountingStore;

use async_trait::async_trait;
use mcp_transport_core::handler::{Handler, Outcome, RequestContext, ServerDescription};
use mcp_transport_core::jsonrpc::{ErrorObject, Request};
use serde_json::{Value, json};

/// A server with one tool, `add {a, b}`, answered the same in every era.
#[derive(Debug, Default)]
pub struct Adder;

/// A `tools/call` result holding one text.
fn text(s: impl Into<String>, is_error: bool) -> Outcome {
    Outcome::json(&json!({
        "content": [{ "type": "text", "text": s.into() }],
        "isError": is_error,
    }))
}

#[async_trait]
impl Handler for Adder {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "adder", "version": "1.0.0" }),
            capabilities: json!({ "tools": {} }),
            instructions: None,
        }
    }

    async fn handle(&self, request: Request, _cx: RequestContext) -> Outcome {
        let params: Value = request
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        match request.method.as_str() {
            "tools/list" => Outcome::json(&json!({ "tools": [{
                "name": "add",
                "description": "Adds two numbers.",
                "inputSchema": {
                    "type": "object",
                    "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
                    "required": ["a", "b"]
                }
            }]})),
            "tools/call" if params["name"] == "add" => {
                let args = &params["arguments"];
                match (args["a"].as_f64(), args["b"].as_f64()) {
                    (Some(a), Some(b)) => text((a + b).to_string(), false),
                    // *Tools*, "Error Handling": invalid arguments are a
                    // tool execution error the model can see.
                    _ => text("a and b must be numbers", true),
                }
            }
            // *Tools*, "Error Handling": an unknown tool is a protocol error.
            "tools/call" => Outcome::Error(ErrorObject::invalid_params(format!(
                "unknown tool {}",
                params["name"]
            ))),
            other => Outcome::Error(ErrorObject::method_not_found(other)),
        }
    }
}

/// Prints the endpoint, then serves `app` on `listener` until Ctrl-C or
/// SIGTERM; then `server` drains (SSE streams end — 2025-11-25 ones after
/// a `retry`, so clients resume elsewhere), accepting stops, and requests
/// in flight get `mcp_http_edge`'s shutdown grace to finish.
///
/// # Errors
///
/// When the listener fails.
pub async fn serve_until_signal(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    server: mcp_negotiate::server::MultiServer,
) -> std::io::Result<()> {
    use mcp_http_edge::server::{ConnLimits, serve_with_shutdown};
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let stop = async move {
        shutdown_signal().await;
        server.drain().await;
    };
    serve_with_shutdown(listener, app, ConnLimits::default(), stop).await
}

/// Ctrl-C, or SIGTERM on Unix.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}
