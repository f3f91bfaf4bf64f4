//! Shared pieces of the end-to-end tests: our server (on 127.0.0.1:0, every
//! HTTP exchange recorded) with the test handler, raw HTTP helpers for the
//! tests where the wire matters, and our client configured for the tests.
//! The generic pieces (proxy, server, handler, SSE, waiting) come from
//! `mcp-test-support`.

#![allow(dead_code, unused_imports)]

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use mcp_rev_2025_03_26::{
    self as rev, ClientConfig, LegacyClient, LegacyServer, Profile, ServerConfig,
};
use mcp_test_support::handler::tools::{self, Ask, CloseStream};
use mcp_test_support::input::{ada, sampled};
use serde_json::{Value, json};

pub use mcp_test_support::client::{
    collect, countdown_expected, describe, describe_all, read_events, result_of, tool,
};
pub use mcp_test_support::server::{EngineServer, Hit};
pub use mcp_test_support::sse::{content_type, read_sse, sse_messages};
pub use mcp_test_support::{Proxy, ScriptedInput, TestHandler, WAIT, eventually};

/// The client's reconnection backoff in the tests (these revisions send no
/// `retry`).
pub const BACKOFF_MS: u64 = 50;
/// `Accept` of every POST.
pub const ACCEPT_POST: &str = "application/json, text/event-stream";

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
/// | `close_stream` | `{}` | `close_sse_stream()`, logs `after`; answers `{"closed": bool}` |
/// | `ask` | `{}` | `elicitation/create` through `Outcome::InputRequired` |
/// | `sample` | `{}` | `sampling/createMessage` through `Outcome::InputRequired` |
pub fn test_handler() -> TestHandler {
    TestHandler::builder("rev-2025-03-26-tests")
        .streaming_tools()
        .tool(
            "close_stream",
            tools::close_stream(CloseStream {
                logger: Some("close_stream"),
                before: None,
                wait_arg: "ms",
                default_ms: 30,
                after: vec![json!("after")],
            }),
        )
        .tool(
            "ask",
            tools::ask(Ask::elicitation(
                "answer",
                json!({
                    "message": "What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": { "name": { "type": "string" } }
                    }
                }),
            )),
        )
        .tool(
            "sample",
            tools::ask(Ask::sampling(
                "answer",
                json!({
                    "messages": [{ "role": "user", "content": { "type": "text", "text": "hi" } }],
                    "maxTokens": 10
                }),
            )),
        )
        .build()
}

// ---------------------------------------------------------------------------
// The server, with every HTTP exchange recorded
// ---------------------------------------------------------------------------

/// Our server on 127.0.0.1:0, every exchange recorded.
pub struct TestServer(EngineServer<LegacyServer>);

impl Deref for TestServer {
    type Target = EngineServer<LegacyServer>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// [`rev::server_config`] for `profile` without keep-alive noise.
pub fn test_config(profile: Profile) -> ServerConfig {
    rev::server_config(profile).with_keepalive(None)
}

impl TestServer {
    /// Starts a server of `profile` with [`test_config`].
    pub async fn profile(profile: Profile) -> TestServer {
        Self::start(test_config(profile)).await
    }

    /// Starts a server with `config` (through [`rev::server`]).
    pub async fn start(config: ServerConfig) -> TestServer {
        let handler = Arc::new(test_handler());
        let server = rev::server(handler.clone(), config);
        Self::serve(server, handler).await
    }

    /// Serves an already built server.
    pub async fn serve(server: LegacyServer, handler: Arc<TestHandler>) -> TestServer {
        let app = server.route("/mcp");
        TestServer(EngineServer::serve_recorded(server, handler, app).await)
    }

    /// Raw HTTP access to this server.
    pub fn raw(&self) -> Raw {
        Raw {
            http: reqwest::Client::new(),
            url: self.url.clone(),
        }
    }
}

// ---------------------------------------------------------------------------
// Raw HTTP, for the tests where the wire matters
// ---------------------------------------------------------------------------

/// A reqwest client aimed at one endpoint.
#[derive(Clone)]
pub struct Raw {
    /// The HTTP client.
    pub http: reqwest::Client,
    /// The MCP endpoint.
    pub url: String,
}

/// A session opened with raw requests.
#[derive(Clone, Debug)]
pub struct RawSession {
    /// `MCP-Session-Id`.
    pub id: String,
    /// The negotiated version.
    pub version: String,
    /// Send `MCP-Protocol-Version: <version>` on later requests.
    pub header: bool,
}

impl Raw {
    /// A POST with the right `Accept` and `Content-Type`, no session.
    pub fn post(&self) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .header("accept", ACCEPT_POST)
            .header("content-type", "application/json")
    }

    /// A POST in `s` (with its version header when `s.header`).
    pub fn post_in(&self, s: &RawSession) -> reqwest::RequestBuilder {
        let b = self.post().header("mcp-session-id", &s.id);
        if s.header {
            b.header("mcp-protocol-version", &s.version)
        } else {
            b
        }
    }

    /// A GET in `s` (`Accept: text/event-stream`).
    pub fn get_in(&self, s: &RawSession) -> reqwest::RequestBuilder {
        let b = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &s.id);
        if s.header {
            b.header("mcp-protocol-version", &s.version)
        } else {
            b
        }
    }

    /// `initialize` offering `version` with `capabilities`, then
    /// `notifications/initialized`. Later requests send the version header
    /// when the negotiated revision has it.
    pub async fn init_with(&self, version: &str, capabilities: Value) -> RawSession {
        let body = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": capabilities,
                "clientInfo": { "name": "raw", "version": "0" }
            }
        });
        let resp = self.post().body(body.to_string()).send().await.unwrap();
        assert_eq!(resp.status(), 200, "initialize");
        let id = resp
            .headers()
            .get("mcp-session-id")
            .expect("a session id")
            .to_str()
            .unwrap()
            .to_owned();
        let v: Value = resp.json().await.unwrap();
        let version = v["result"]["protocolVersion"].as_str().unwrap().to_owned();
        let header = rev::ProtocolVersion::parse(&version).has(|f| f.version_header);
        let s = RawSession {
            id,
            version,
            header,
        };
        let resp = self
            .post_in(&s)
            .body(notification("notifications/initialized").to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 202, "notifications/initialized");
        s
    }

    /// [`init_with`](Self::init_with) without capabilities.
    pub async fn init(&self, version: &str) -> RawSession {
        self.init_with(version, json!({})).await
    }
}

/// A `tools/call` request.
pub fn call(id: impl Into<Value>, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
}

/// A notification without params.
pub fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

/// Asserts the answer is 400 with a `-32600`-or-other JSON-RPC error body
/// whose message contains `says`; returns the body.
pub async fn expect_error(resp: reqwest::Response, status: u16, code: i64, says: &str) -> Value {
    assert_eq!(resp.status().as_u16(), status);
    let v: Value = resp.json().await.expect("a JSON error body");
    assert_eq!(v["error"]["code"], code, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains(says), "{message:?} should say {says:?}");
    assert!(v.get("id").is_none(), "an HTTP error body has no id: {v}");
    v
}

// ---------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------

/// Answers `elicitation/create` (the name "Ada") and
/// `sampling/createMessage` ("hello"), remembering what it was asked.
pub fn test_input() -> Arc<ScriptedInput> {
    ScriptedInput::new(&[
        ("elicitation/create", ada()),
        ("sampling/createMessage", sampled("hello", "test")),
    ])
}

/// [`rev::client_config`] for the tests: declares `sampling` (and
/// `elicitation`, which a 2025-03-26 server ignores), answers through
/// `input`, reconnects after [`BACKOFF_MS`], waits at most [`WAIT`].
pub fn client_config(url: &str, profile: Profile, input: Arc<ScriptedInput>) -> ClientConfig {
    rev::client_config(url, profile)
        .with_capabilities(json!({ "sampling": {}, "elicitation": {} }))
        .with_input_handler(input)
        .with_reconnect_backoff(Duration::from_millis(BACKOFF_MS))
        .with_request_timeout(Some(WAIT))
}

/// Connects our client to `url` with [`client_config`].
pub async fn connect(url: &str, profile: Profile) -> LegacyClient {
    LegacyClient::connect(client_config(url, profile, test_input()))
        .await
        .expect("connect")
}
