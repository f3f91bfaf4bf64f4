//! A scriptable fake MCP server for the client tests: the shared
//! [`Fake`] with the default legacy behaviour ([`legacy_fake`]).
//!
//! Every HTTP request is recorded ([`Seen`]); a test's handler answers the
//! requests it cares about and returns `None` for the rest, which get the
//! default legacy behaviour: `initialize` → JSON result with a fresh
//! `MCP-Session-Id` (`sess-1`, `sess-2`, ...), notifications and responses →
//! 202, DELETE → 200, GET → 405, any other request → a JSON result.

#![allow(dead_code, unused_imports)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::response::Response;
use http::{Method, StatusCode};
use mcp_test_support::fake::SseBody;
use mcp_test_support::input::sampled;
use serde_json::{Value, json};
use tokio::time::Instant;

pub use mcp_test_support::fake::{
    Ending, json_ok, notification, result, server_request, status, status_json,
};
pub use mcp_test_support::server::Seen;
pub use mcp_test_support::{Fake, ScriptedInput, within};

/// Starts a fake server answering `initialize` with `version`; `handler`
/// answers what it cares about, the rest gets the default legacy
/// behaviour.
pub async fn legacy_fake(
    version: &str,
    handler: impl Fn(&Seen) -> Option<Response> + Send + Sync + 'static,
) -> Fake {
    let sessions = AtomicUsize::new(0);
    let version = version.to_owned();
    Fake::start(move |seen| {
        handler(seen).unwrap_or_else(|| default_answer(&version, &sessions, seen))
    })
    .await
}

fn default_answer(version: &str, sessions: &AtomicUsize, seen: &Seen) -> Response {
    match seen.method {
        Method::DELETE => status(StatusCode::OK, ""),
        Method::GET => status(StatusCode::METHOD_NOT_ALLOWED, ""),
        Method::POST => {
            if seen.is_rpc("initialize") {
                let n = sessions.fetch_add(1, Ordering::SeqCst) + 1;
                let mut r = json_ok(&init_result(seen.rpc_id().unwrap(), version));
                r.headers_mut()
                    .insert("mcp-session-id", format!("sess-{n}").parse().unwrap());
                r
            } else if seen.rpc_id().is_none() || seen.is_rpc_response() {
                status(StatusCode::ACCEPTED, "")
            } else {
                json_ok(&result(seen.rpc_id().unwrap(), json!({"ok": true})))
            }
        }
        _ => status(StatusCode::METHOD_NOT_ALLOWED, ""),
    }
}

/// An `InitializeResult` response for `id` answering `version`.
pub fn init_result(id: &Value, version: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "0.0.1"},
        }
    })
}

/// A 200 `text/event-stream` answer sending `chunks` (raw SSE text, exactly
/// as given) and then ending as `ending` says; the moment the body ends is
/// pushed to `ended` when given. An [`Ending::Abort`] comes 20 ms after the
/// last chunk (the timing tests count them).
pub fn sse(
    chunks: Vec<String>,
    ending: Ending,
    ended: Option<Arc<Mutex<Vec<Instant>>>>,
) -> Response {
    SseBody::new(chunks)
        .ending(ending)
        .abort_after(Duration::from_millis(20))
        .record_end(ended)
        .response()
}

/// One SSE event in the usual framing: `id`, optional `retry`, `data`.
pub fn event(id: Option<&str>, retry: Option<u64>, data: &Value) -> String {
    let mut s = String::new();
    if let Some(id) = id {
        s.push_str(&format!("id: {id}\n"));
    }
    if let Some(ms) = retry {
        s.push_str(&format!("retry: {ms}\n"));
    }
    s.push_str(&format!("data: {data}\n\n"));
    s
}

/// A SEP-1699 priming event: an id and empty data.
pub fn priming(id: &str, retry: Option<u64>) -> String {
    match retry {
        Some(ms) => format!("id: {id}\nretry: {ms}\ndata:\n\n"),
        None => format!("id: {id}\ndata:\n\n"),
    }
}

/// An input handler answering `sampling/createMessage` (and recording
/// every call); anything else gets `-32601`.
pub fn sampler() -> Arc<ScriptedInput> {
    ScriptedInput::new(&[("sampling/createMessage", sampled("hi", "fake-model"))])
}
