//! Shared pieces of the end-to-end tests: our server (on 127.0.0.1:0, every
//! HTTP exchange recorded) with the test handler, and our client
//! configured for the tests. The generic pieces (proxy, server, handler,
//! input handler, waiting) come from `mcp-test-support`.

#![allow(dead_code, unused_imports)]

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use mcp_rev_2025_11_25::{
    self as rev, ClientConfig, LegacyClient, LegacyServer, PollingExt, ServerConfig,
};
use mcp_test_support::handler::tools::{self, Ask, CloseStream};
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::{RequestOptions, ResponseStream, Transport, TransportError};
use serde_json::{Value, json};

pub use mcp_test_support::client::{
    collect, countdown_expected, describe, describe_all, read_events, result_of,
};
pub use mcp_test_support::server::{EngineServer, Hit};
pub use mcp_test_support::{Proxy, ScriptedInput, TestHandler, WAIT, eventually};

/// The `retry` the test servers send (and the client's backoff): short, so
/// that polling tests stay fast.
pub const RETRY_MS: u64 = 50;

// ---------------------------------------------------------------------------
// The test handler
// ---------------------------------------------------------------------------

/// The tools of the end-to-end tests:
///
/// | tool | arguments | behaviour |
/// | --- | --- | --- |
/// | `echo` | `{text}` | answers `{"text": text}` |
/// | `countdown` | `{n, interval_ms}` | `n` times: wait, `notifications/progress` (with a token) and `notifications/message` `{"tick": i}`; answers `{"done": n}` |
/// | `slow` | `{ms}` | answers after `ms` unless cancelled (counted) |
/// | `close_stream` | `{ms}` | log `before`, `close_sse_stream()`, wait `ms`, log `after-1`, `after-2`; answers `{"closed": bool}` |
/// | `ask` | `{}` | `elicitation/create` through `Outcome::InputRequired`; answers with what came back |
pub fn test_handler() -> TestHandler {
    TestHandler::builder("rev-2025-11-25-tests")
        .streaming_tools()
        .tool(
            "close_stream",
            tools::close_stream(CloseStream {
                logger: Some("close_stream"),
                before: Some(json!("before")),
                wait_arg: "ms",
                default_ms: 2 * RETRY_MS,
                after: vec![json!("after-1"), json!("after-2")],
            }),
        )
        .tool(
            "ask",
            tools::ask(
                Ask::elicitation(
                    "name",
                    json!({
                        "message": "What is your name?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": { "name": { "type": "string" } },
                            "required": ["name"]
                        }
                    }),
                )
                .with_state("round-1"),
            ),
        )
        .build()
}

// ---------------------------------------------------------------------------
// The server, with every HTTP exchange recorded
// ---------------------------------------------------------------------------

/// Our server of this revision on 127.0.0.1:0, every exchange recorded.
pub struct TestServer(EngineServer<LegacyServer>);

impl Deref for TestServer {
    type Target = EngineServer<LegacyServer>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// [`rev::server_config`] with a short `retry` and no keep-alive noise.
pub fn test_config() -> ServerConfig {
    rev::server_config()
        .with_retry_ms(RETRY_MS)
        .with_keepalive(None)
}

/// [`test_config`] with a disconnect policy given as text.
pub fn polling_config(policy: &str) -> ServerConfig {
    test_config().with_disconnect(policy.parse().expect("a valid policy"))
}

impl TestServer {
    /// Starts a server with `config`.
    pub async fn start(config: ServerConfig) -> TestServer {
        let handler = Arc::new(test_handler());
        let server = rev::server(handler.clone(), config);
        let app = server.route("/mcp");
        TestServer(EngineServer::serve_recorded(server, handler, app).await)
    }

    /// The content type of the answer to the POST of the `n`-th
    /// `tools/call` (0-based).
    pub fn tools_call_content_type(&self, n: usize) -> Option<String> {
        self.hits()
            .into_iter()
            .filter(|h| h.rpc_method.as_deref() == Some("tools/call"))
            .nth(n)
            .and_then(|h| h.content_type)
    }
}

// ---------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------

/// Answers `elicitation/create` with the name "Ada" and remembers what it
/// was asked.
pub fn test_input() -> Arc<ScriptedInput> {
    ScriptedInput::ada()
}

/// [`rev::client_config`] for the tests: declares `elicitation`, answers
/// through `input`, reconnects after [`RETRY_MS`] when no `retry` was sent.
pub fn client_config(url: &str, input: Arc<ScriptedInput>) -> ClientConfig {
    rev::client_config(url)
        .with_capabilities(json!({ "elicitation": {} }))
        .with_input_handler(input)
        .with_reconnect_backoff(Duration::from_millis(RETRY_MS))
        .with_request_timeout(Some(WAIT))
}

/// Connects our client to `url` with [`client_config`].
pub async fn connect(url: &str) -> LegacyClient {
    LegacyClient::connect(client_config(url, test_input()))
        .await
        .expect("connect")
}

/// `tools/call` of `tool` with `args`.
pub async fn call(
    client: &LegacyClient,
    tool: &str,
    args: Value,
    progress: bool,
) -> Result<ResponseStream, TransportError> {
    let params = to_raw(&json!({ "name": tool, "arguments": args })).unwrap();
    client
        .request(
            "tools/call",
            Some(params),
            RequestOptions {
                progress,
                ..RequestOptions::default()
            },
        )
        .await
}
