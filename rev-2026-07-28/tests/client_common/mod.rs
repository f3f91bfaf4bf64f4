//! A scriptable fake 2026-07-28 server for the client tests: the shared
//! [`mcp_test_support::Fake`] (every request recorded as a [`Seen`] and
//! answered by the test's handler), with a client configured for it. SSE
//! answers can end, abort the connection, or hang with keep-alives while a
//! [`DropFlag`] reports when the client closed them.

#![allow(dead_code, unused_imports)]

use std::time::Duration;

use axum::response::Response;
use mcp_rev_2026_07_28::client::{ModernClient, ModernClientConfig};
use mcp_test_support::fake::SseBody;
use serde_json::Value;

pub use mcp_test_support::client::{answer, params, result_of};
pub use mcp_test_support::fake::{
    DropFlag, DropGuard, Ending, json_ok, notification, result, rpc_error, status, status_json,
};
pub use mcp_test_support::server::Seen;
pub use mcp_test_support::{Fake, ScriptedInput};

/// Our client aimed at a [`Fake`].
pub trait FakeClient {
    /// A client for this server.
    fn client(&self) -> ModernClient;
    /// The default configuration for this server.
    fn config(&self) -> ModernClientConfig;
}

impl FakeClient for Fake {
    fn client(&self) -> ModernClient {
        ModernClient::new(self.config()).unwrap()
    }

    fn config(&self) -> ModernClientConfig {
        ModernClientConfig::new(&self.url).with_request_timeout(Some(Duration::from_secs(10)))
    }
}

/// One SSE event carrying `message`.
pub fn event(message: &Value) -> String {
    format!("data: {message}\n\n")
}

/// A complete SSE answer with these events.
pub fn sse(messages: &[Value]) -> Response {
    sse_raw(messages.iter().map(event).collect(), Ending::Eof, None)
}

/// An SSE answer made of raw text chunks (sent one per body frame), then
/// `ending` ([`Ending::KeepAlive`]: keep-alive comments every 50 ms).
pub fn sse_raw(chunks: Vec<String>, ending: Ending, guard: Option<DropGuard>) -> Response {
    SseBody::new(chunks).ending(ending).guard(guard).response()
}
