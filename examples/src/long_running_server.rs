//! A long-running tool that does not hold one HTTP connection for its whole
//! life (SEP-1699 polling, 2025-11-25), on a custom event store.
//!
//! `crunch {steps, step_ms}` works for `steps × step_ms` ms and reports
//! progress after each step. After the first step it calls
//! [`RequestContext::close_sse_stream`]: on a 2025-11-25 session the server
//! sends `retry: 200` and closes the connection, the request goes on, and
//! the client resumes with `GET` + `Last-Event-ID`, getting every event it
//! missed from the event store and the rest live. On 2026-07-28, where a
//! closed stream cancels its request, the call is a no-op and the stream is
//! held. The server's event store is a [`CountingStore`] around the
//! in-memory one, and a middleware counts the resumptions (`GET`s with a
//! `Last-Event-ID`); the tool `store_stats` reports both, so a client can
//! see the resume happen.
//!
//! ```sh
//! cargo run -p mcp-examples --bin long_running_server
//! cargo run -p mcp-compat -- call http://127.0.0.1:PORT/mcp --revision 2025-11-25 \
//!     --tool crunch --args '{"steps":5,"step_ms":300}' -v
//! ```
//!
//! A whole policy instead of a call per tool: `with_disconnect`
//! ([`PollingExt`]) closes connections by rule (after the priming event,
//! after N events, after some time, when idle) for every request.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use axum::body::Body;
use axum::http::Method;
use axum::middleware::Next;
use mcp_examples::{CountingStore, serve_until_signal};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_rev_2025_11_25::PollingExt;
use mcp_transport_core::event_log::{MemoryEventStore, MemoryEventStoreConfig};
use mcp_transport_core::handler::{Handler, Outcome, RequestContext, ServerDescription};
use mcp_transport_core::jsonrpc::{ErrorObject, Request};
use serde_json::{Value, json};

/// The event store type this server runs on.
type Store = CountingStore<MemoryEventStore>;

/// The server: `crunch` and `store_stats`.
struct Cruncher {
    store: Arc<Store>,
    resumes: Arc<AtomicU64>,
}

fn text(s: impl Into<String>) -> Outcome {
    Outcome::json(&json!({ "content": [{ "type": "text", "text": s.into() }] }))
}

#[async_trait]
impl Handler for Cruncher {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "cruncher", "version": "1.0.0" }),
            capabilities: json!({ "tools": {} }),
            instructions: None,
        }
    }

    async fn handle(&self, request: Request, cx: RequestContext) -> Outcome {
        let params: Value = request
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        match (request.method.as_str(), params["name"].as_str()) {
            ("tools/list", _) => Outcome::json(&json!({ "tools": [
                { "name": "crunch", "description": "Works for steps × step_ms ms, with progress.",
                  "inputSchema": { "type": "object", "properties": {
                      "steps": { "type": "integer", "minimum": 1, "maximum": 100 },
                      "step_ms": { "type": "integer", "minimum": 0, "maximum": 10000 } } } },
                { "name": "store_stats", "description": "The event store's counts.",
                  "inputSchema": { "type": "object" } },
            ]})),
            ("tools/call", Some("crunch")) => {
                let args = &params["arguments"];
                let steps = args["steps"].as_u64().unwrap_or(5).clamp(1, 100);
                let step =
                    Duration::from_millis(args["step_ms"].as_u64().unwrap_or(300).min(10_000));
                for i in 1..=steps {
                    tokio::select! {
                        () = tokio::time::sleep(step) => {}
                        // The client cancelled (or, on 2026-07-28, closed
                        // the stream): stop working.
                        () = cx.cancelled() => return Outcome::Error(ErrorObject::internal("cancelled")),
                    }
                    // A progress event the client may miss while it is
                    // away: the event store keeps it for the resume.
                    let _ = cx.progress(i as f64, Some(steps as f64), None).await;
                    if i == 1 {
                        cx.close_sse_stream();
                    }
                }
                text(format!("crunched {steps} steps"))
            }
            ("tools/call", Some("store_stats")) => {
                let mut stats = self.store.stats();
                stats["resumes"] = self.resumes.load(Ordering::Relaxed).into();
                text(stats.to_string())
            }
            ("tools/call", _) => Outcome::Error(ErrorObject::invalid_params(format!(
                "unknown tool {}",
                params["name"]
            ))),
            (other, _) => Outcome::Error(ErrorObject::method_not_found(other)),
        }
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let bind = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let store = Arc::new(CountingStore::new(MemoryEventStore::new(
        MemoryEventStoreConfig::default(),
    )));
    let mut config = MultiConfig::all();
    config.legacy = config
        .legacy
        .with_retry_ms(200)
        .with_event_store(store.clone());
    let resumes = Arc::new(AtomicU64::new(0));
    let server = MultiServer::new(
        Arc::new(Cruncher {
            store,
            resumes: resumes.clone(),
        }),
        config,
    );
    // Counts resumptions: a GET carrying the last event id the client got.
    let count_resumes =
        axum::middleware::from_fn(move |request: axum::http::Request<Body>, next: Next| {
            if request.method() == Method::GET && request.headers().contains_key("last-event-id") {
                resumes.fetch_add(1, Ordering::Relaxed);
            }
            next.run(request)
        });
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    let app = server.route("/mcp").layer(count_resumes);
    serve_until_signal(listener, app, server).await
}
