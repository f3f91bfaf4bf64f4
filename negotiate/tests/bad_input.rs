//! The bad-input catalogue (issue 13): one named test per hostile or
//! malformed request, against the dual-era endpoint (`MultiServer`, every
//! revision) served by `mcp_http_edge::server::serve` on 127.0.0.1:0, over
//! raw HTTP/1.1 so that duplicate headers, absolute-form targets and
//! stalled bodies reach the server as written. Each case names the HTTP
//! status and the JSON-RPC error code it must get, and checks afterwards
//! that the server still answers good requests of both eras.
//!
//! `legacy_*` cases reach the session engine (2025-03-26 to 2025-11-25),
//! `modern_*` cases the stateless 2026-07-28 engine.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_http_edge::server::{ConnLimits, serve};
use mcp_negotiate::server::{MultiConfig, MultiServer};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The bound on one exchange.
const GUARD: Duration = Duration::from_secs(20);
/// The body limit of both engines (the default).
const LIMIT: usize = 4 * 1024 * 1024;

/// A running server and, for legacy cases, an initialized session.
struct Ctx {
    addr: SocketAddr,
    /// A 2025-11-25 session.
    sid: String,
    /// A 2025-03-26 session (batches).
    sid_2025_03_26: String,
}

/// A raw request: method, target, headers and body, written as given
/// (plus `Content-Length` unless a header already frames the body, and
/// `Connection: close`).
#[derive(Clone, Debug)]
struct Raw {
    method: &'static str,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Write the head and this much of the body, then stall.
    stall_after: Option<usize>,
}

impl Raw {
    fn new(method: &'static str) -> Raw {
        Raw {
            method,
            target: "/mcp".into(),
            headers: vec![("Host".into(), "localhost".into())],
            body: Vec::new(),
            stall_after: None,
        }
    }

    /// A POST with both media types and a JSON body.
    fn post(body: impl Into<Vec<u8>>) -> Raw {
        Raw::new("POST")
            .h("Accept", "application/json, text/event-stream")
            .h("Content-Type", "application/json")
            .body(body)
    }

    fn h(mut self, name: &str, value: &str) -> Raw {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Removes every header called `name`.
    fn without(mut self, name: &str) -> Raw {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    fn body(mut self, body: impl Into<Vec<u8>>) -> Raw {
        self.body = body.into();
        self
    }

    fn target(mut self, t: &str) -> Raw {
        self.target = t.into();
        self
    }

    fn stall_after(mut self, n: usize) -> Raw {
        self.stall_after = Some(n);
        self
    }

    fn framed(&self) -> bool {
        self.headers.iter().any(|(n, _)| {
            n.eq_ignore_ascii_case("content-length") || n.eq_ignore_ascii_case("transfer-encoding")
        })
    }

    fn head(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        for (n, v) in &self.headers {
            out.push_str(&format!("{n}: {v}\r\n"));
        }
        if !self.framed() {
            out.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        out.push_str("Connection: close\r\n\r\n");
        out.into_bytes()
    }
}

/// What came back: the status and the JSON body (`Null` when not JSON).
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: String,
    body: Value,
    #[allow(dead_code)]
    text: String,
}

async fn exchange(addr: SocketAddr, raw: &Raw) -> Answer {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(&raw.head()).await.unwrap();
    let body = match raw.stall_after {
        Some(n) => &raw.body[..n.min(raw.body.len())],
        None => &raw.body[..],
    };
    // The server may answer (413) before the whole body is written.
    let _ = tcp.write_all(body).await;
    let mut all = Vec::new();
    let read = tokio::time::timeout(GUARD, tcp.read_to_end(&mut all)).await;
    assert!(read.is_ok(), "no complete answer to {raw:?}");
    parse(&all)
}

fn parse(all: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(all).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    // An SSE answer: the last `data:` line carries the response.
    let json_text = if head.to_ascii_lowercase().contains("text/event-stream") {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or_default()
            .to_owned()
    } else {
        body.clone()
    };
    Answer {
        status,
        headers: head.to_owned(),
        body: serde_json::from_str(&json_text).unwrap_or(Value::Null),
        text: body,
    }
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

fn session_of(a: &Answer) -> String {
    a.headers
        .lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id: {a:?}"))
}

fn init_body(version: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "catalogue", "version": "1"}}})
    .to_string()
}

async fn open_session(addr: SocketAddr, version: &str) -> String {
    let a = exchange(addr, &Raw::post(init_body(version))).await;
    assert_eq!(a.status, 200, "{a:?}");
    let sid = session_of(&a);
    let done = Raw::post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .h("Mcp-Session-Id", &sid)
        .h("MCP-Protocol-Version", version);
    let a = exchange(addr, &done).await;
    assert_eq!(a.status, 202, "{a:?}");
    sid
}

async fn start() -> Ctx {
    let server = MultiServer::new(Arc::new(support::test_handler()), MultiConfig::all());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let limits = ConnLimits::default().with_body_read_timeout(Duration::from_millis(300));
    tokio::spawn(serve(listener, server.route("/mcp"), limits));
    let sid = open_session(addr, "2025-11-25").await;
    let sid_2025_03_26 = open_session(addr, "2025-03-26").await;
    Ctx {
        addr,
        sid,
        sid_2025_03_26,
    }
}

/// A well-formed 2026-07-28 request body for `method`, `params` merged
/// with the required `_meta`.
fn modern_body(method: &str, params: Value) -> String {
    let mut p = params;
    p["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": p}).to_string()
}

/// A well-formed 2026-07-28 POST of `tools/list`.
fn modern() -> Raw {
    Raw::post(modern_body("tools/list", json!({})))
        .h("MCP-Protocol-Version", "2026-07-28")
        .h("Mcp-Method", "tools/list")
}

/// A well-formed `tools/list` POST on the 2025-11-25 session.
fn legacy(c: &Ctx) -> Raw {
    Raw::post(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#)
        .h("Mcp-Session-Id", &c.sid)
        .h("MCP-Protocol-Version", "2025-11-25")
}

/// The liveness check: good requests of both eras are still answered.
async fn assert_alive(c: &Ctx) {
    let a = exchange(c.addr, &modern()).await;
    assert_eq!(a.status, 200, "modern after the case: {a:?}");
    assert!(a.body["result"]["tools"].is_array(), "{a:?}");
    let a = exchange(c.addr, &legacy(c)).await;
    assert_eq!(a.status, 200, "legacy after the case: {a:?}");
    assert!(a.body["result"]["tools"].is_array(), "{a:?}");
    let a = exchange(c.addr, &Raw::post(init_body("2025-06-18"))).await;
    assert_eq!(a.status, 200, "initialize after the case: {a:?}");
}

/// One test per case: `name: |ctx| request => status, code;` where code is
/// the JSON-RPC error code (`None` for an answer that is not an error).
macro_rules! catalogue {
    ($($name:ident: |$c:ident| $req:expr => $status:expr, $code:expr;)*) => {$(
        #[tokio::test]
        async fn $name() {
            let ctx = start().await;
            let raw = {
                let $c = &ctx;
                $req
            };
            let answer = exchange(ctx.addr, &raw).await;
            assert_eq!(answer.status, $status, "{}: {answer:?}", stringify!($name));
            let code: Option<i64> = $code;
            match code {
                Some(code) => assert_eq!(
                    answer.body["error"]["code"], code,
                    "{}: {answer:?}", stringify!($name)
                ),
                None => assert!(answer.body.get("error").is_none(), "{answer:?}"),
            }
            assert_alive(&ctx).await;
        }
    )*};
}

const INVALID_REQUEST: Option<i64> = Some(-32600);
const PARSE_ERROR: Option<i64> = Some(-32700);
const INVALID_PARAMS: Option<i64> = Some(-32602);
const HEADER_MISMATCH: Option<i64> = Some(-32020);
const UNSUPPORTED_VERSION: Option<i64> = Some(-32022);
const METHOD_NOT_FOUND: Option<i64> = Some(-32601);

fn big() -> Vec<u8> {
    let mut b = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#.to_vec();
    b.resize(LIMIT + 10, b'a');
    b.extend_from_slice(br#""}}"#);
    b
}

/// `body` sent in chunks of `size` bytes (`Transfer-Encoding: chunked`).
fn chunked(body: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for c in body.chunks(size) {
        out.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        out.extend_from_slice(c);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

catalogue! {
    // ---- 2026-07-28 (stateless engine) -------------------------------
    modern_origin_not_allowed: |_c| modern().h("Origin", "http://evil.example") => 403, INVALID_REQUEST;
    modern_two_origins: |_c| modern().h("Origin", "http://localhost").h("Origin", "http://evil.example") => 403, INVALID_REQUEST;
    modern_two_hosts: |_c| modern().h("Host", "evil.example") => 403, INVALID_REQUEST;
    modern_host_not_allowed: |_c| modern().without("Host").h("Host", "evil.example") => 403, INVALID_REQUEST;
    modern_absolute_target_not_allowed: |_c| modern().target("http://evil.example/mcp") => 403, INVALID_REQUEST;
    modern_no_host: |_c| modern().without("Host") => 403, INVALID_REQUEST;
    modern_no_accept: |_c| modern().without("Accept") => 406, INVALID_REQUEST;
    modern_accept_json_only: |_c| modern().without("Accept").h("Accept", "application/json") => 406, INVALID_REQUEST;
    modern_content_type_text: |_c| modern().without("Content-Type").h("Content-Type", "text/plain") => 415, INVALID_REQUEST;
    modern_malformed_json: |_c| modern().body(r#"{"jsonrpc":"2.0","id":1,"method":"#) => 400, PARSE_ERROR;
    modern_jsonrpc_1_0: |_c| modern().body(modern_body("tools/list", json!({})).replace("\"2.0\"", "\"1.0\"")) => 400, INVALID_REQUEST;
    modern_id_is_an_object: |_c| modern().body(modern_body("tools/list", json!({})).replace("\"id\":7", "\"id\":{}")) => 400, INVALID_REQUEST;
    modern_method_not_a_string: |_c| modern().body(r#"{"jsonrpc":"2.0","id":1,"method":5}"#) => 400, INVALID_REQUEST;
    modern_client_sends_a_response: |_c| modern().body(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#) => 400, INVALID_REQUEST;
    modern_missing_meta: |_c| modern().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#) => 400, INVALID_PARAMS;
    modern_meta_not_an_object: |_c| modern().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#) => 400, INVALID_PARAMS;
    modern_meta_version_not_a_string: |_c| modern().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}"#) => 400, INVALID_PARAMS;
    modern_meta_capabilities_not_an_object: |_c| modern().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}"#) => 400, INVALID_PARAMS;
    modern_meta_two_versions: |_c| modern().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}"#) => 400, INVALID_PARAMS;
    modern_meta_bad_log_level: |_c| modern().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}}"#) => 400, INVALID_PARAMS;
    modern_version_header_missing: |_c| modern().without("MCP-Protocol-Version") => 400, HEADER_MISMATCH;
    modern_version_header_mismatch: |_c| modern().without("MCP-Protocol-Version").h("MCP-Protocol-Version", "2099-01-01") => 400, HEADER_MISMATCH;
    modern_two_version_headers: |_c| modern().h("MCP-Protocol-Version", "2025-11-25") => 400, HEADER_MISMATCH;
    modern_method_header_missing: |_c| modern().without("Mcp-Method") => 400, HEADER_MISMATCH;
    modern_method_header_mismatch: |_c| modern().without("Mcp-Method").h("Mcp-Method", "tools/call") => 400, HEADER_MISMATCH;
    modern_name_header_missing: |_c| Raw::post(modern_body("tools/call", json!({"name": "echo", "arguments": {"text": "x"}}))).h("MCP-Protocol-Version", "2026-07-28").h("Mcp-Method", "tools/call") => 400, HEADER_MISMATCH;
    modern_name_header_mismatch: |_c| Raw::post(modern_body("tools/call", json!({"name": "echo", "arguments": {"text": "x"}}))).h("MCP-Protocol-Version", "2026-07-28").h("Mcp-Method", "tools/call").h("Mcp-Name", "ask") => 400, HEADER_MISMATCH;
    modern_unsupported_version: |_c| Raw::post(modern_body("tools/list", json!({})).replace("2026-07-28", "2099-01-01")).h("MCP-Protocol-Version", "2099-01-01").h("Mcp-Method", "tools/list") => 400, UNSUPPORTED_VERSION;
    modern_unknown_method: |_c| Raw::post(modern_body("no/such", json!({}))).h("MCP-Protocol-Version", "2026-07-28").h("Mcp-Method", "no/such") => 404, METHOD_NOT_FOUND;
    modern_removed_ping: |_c| Raw::post(modern_body("ping", json!({}))).h("MCP-Protocol-Version", "2026-07-28").h("Mcp-Method", "ping") => 404, METHOD_NOT_FOUND;
    modern_get: |_c| Raw::new("GET").h("Accept", "text/event-stream").h("MCP-Protocol-Version", "2026-07-28") => 405, INVALID_REQUEST;
    modern_delete: |_c| Raw::new("DELETE").h("MCP-Protocol-Version", "2026-07-28") => 405, INVALID_REQUEST;
    modern_content_length_over_the_limit: |_c| modern().h("Content-Length", &(LIMIT + 1).to_string()).body(Vec::new()) => 413, INVALID_REQUEST;
    modern_expect_continue_over_the_limit: |_c| modern().h("Expect", "100-continue").h("Content-Length", &(LIMIT + 1).to_string()).body(Vec::new()) => 413, INVALID_REQUEST;
    modern_chunked_body_over_the_limit: |_c| modern().h("Transfer-Encoding", "chunked").body(chunked(&big(), 64 * 1024)) => 413, INVALID_REQUEST;
    modern_stalled_body: |_c| modern().stall_after(10) => 408, INVALID_REQUEST;
    modern_stray_session_id_is_served: |_c| modern().h("Mcp-Session-Id", "no-such-session") => 200, None;
    modern_empty_body: |_c| modern().body(Vec::new()) => 400, PARSE_ERROR;

    // ---- 2025-03-26 .. 2025-11-25 (session engine) ------------------
    legacy_origin_not_allowed: |c| legacy(c).h("Origin", "http://evil.example") => 403, INVALID_REQUEST;
    legacy_two_origins: |c| legacy(c).h("Origin", "http://localhost").h("Origin", "http://evil.example") => 403, INVALID_REQUEST;
    legacy_two_hosts: |c| legacy(c).h("Host", "evil.example") => 403, INVALID_REQUEST;
    legacy_host_not_allowed: |c| legacy(c).without("Host").h("Host", "evil.example") => 403, INVALID_REQUEST;
    legacy_absolute_target_not_allowed: |c| legacy(c).target("http://evil.example/mcp") => 403, INVALID_REQUEST;
    legacy_initialize_from_a_bad_origin: |_c| Raw::post(init_body("2025-11-25")).h("Origin", "http://evil.example") => 403, INVALID_REQUEST;
    legacy_no_accept: |c| legacy(c).without("Accept") => 406, INVALID_REQUEST;
    legacy_content_type_text: |c| legacy(c).without("Content-Type").h("Content-Type", "text/plain") => 415, INVALID_REQUEST;
    legacy_malformed_json: |c| legacy(c).body(r#"{"jsonrpc":"2.0","#) => 400, PARSE_ERROR;
    legacy_empty_body: |c| legacy(c).body(Vec::new()) => 400, PARSE_ERROR;
    legacy_jsonrpc_1_0: |c| legacy(c).body(r#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#) => 400, INVALID_REQUEST;
    legacy_id_is_an_object: |c| legacy(c).body(r#"{"jsonrpc":"2.0","id":{},"method":"tools/list"}"#) => 400, INVALID_REQUEST;
    legacy_no_session: |c| legacy(c).without("Mcp-Session-Id") => 400, INVALID_REQUEST;
    legacy_unknown_session: |c| legacy(c).without("Mcp-Session-Id").h("Mcp-Session-Id", "no-such-session") => 404, INVALID_REQUEST;
    legacy_session_id_not_visible_ascii: |c| legacy(c).without("Mcp-Session-Id").h("Mcp-Session-Id", "a b") => 400, INVALID_REQUEST;
    legacy_malformed_version_header: |c| legacy(c).without("MCP-Protocol-Version").h("MCP-Protocol-Version", "banana") => 400, INVALID_REQUEST;
    legacy_unsupported_version_header: |c| legacy(c).without("MCP-Protocol-Version").h("MCP-Protocol-Version", "2099-01-01") => 400, INVALID_REQUEST;
    legacy_another_served_version_header: |c| legacy(c).without("MCP-Protocol-Version").h("MCP-Protocol-Version", "2025-06-18") => 400, INVALID_REQUEST;
    legacy_two_different_version_headers: |c| legacy(c).h("MCP-Protocol-Version", "2025-06-18") => 400, INVALID_REQUEST;
    legacy_batch_after_2025_03_26: |c| legacy(c).body(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#) => 400, INVALID_REQUEST;
    legacy_empty_batch: |c| legacy(c).without("Mcp-Session-Id").without("MCP-Protocol-Version").h("Mcp-Session-Id", &c.sid_2025_03_26).body("[]") => 400, INVALID_REQUEST;
    legacy_batch_too_long: |c| legacy(c).without("Mcp-Session-Id").without("MCP-Protocol-Version").h("Mcp-Session-Id", &c.sid_2025_03_26).body(format!("[{}]", vec![r#"{"jsonrpc":"2.0","method":"notifications/x"}"#; 65].join(","))) => 400, INVALID_REQUEST;
    legacy_content_length_over_the_limit: |c| legacy(c).h("Content-Length", &(LIMIT + 1).to_string()).body(Vec::new()) => 413, INVALID_REQUEST;
    legacy_expect_continue_over_the_limit: |c| legacy(c).h("Expect", "100-continue").h("Content-Length", &(LIMIT + 1).to_string()).body(Vec::new()) => 413, INVALID_REQUEST;
    legacy_chunked_body_over_the_limit: |c| legacy(c).h("Transfer-Encoding", "chunked").body(chunked(&big(), 64 * 1024)) => 413, INVALID_REQUEST;
    legacy_stalled_body: |c| legacy(c).stall_after(10) => 408, INVALID_REQUEST;
    legacy_get_without_session: |_c| Raw::new("GET").h("Accept", "text/event-stream") => 400, INVALID_REQUEST;
    legacy_get_unknown_session: |_c| Raw::new("GET").h("Accept", "text/event-stream").h("Mcp-Session-Id", "no-such-session") => 404, INVALID_REQUEST;
    legacy_get_without_sse_accept: |c| Raw::new("GET").h("Accept", "application/json").h("Mcp-Session-Id", &c.sid) => 406, INVALID_REQUEST;
    legacy_get_from_a_bad_origin: |c| Raw::new("GET").h("Accept", "text/event-stream").h("Mcp-Session-Id", &c.sid).h("Origin", "http://evil.example") => 403, INVALID_REQUEST;
    legacy_resume_malformed_event_id: |c| Raw::new("GET").h("Accept", "text/event-stream").h("Mcp-Session-Id", &c.sid).h("Last-Event-ID", "not-an-id") => 400, INVALID_REQUEST;
    legacy_resume_foreign_event_id: |c| Raw::new("GET").h("Accept", "text/event-stream").h("Mcp-Session-Id", &c.sid).h("Last-Event-ID", "0000000000000000.1.1") => 400, INVALID_REQUEST;
    legacy_delete_without_session: |_c| Raw::new("DELETE") => 400, INVALID_REQUEST;
    legacy_delete_unknown_session: |_c| Raw::new("DELETE").h("Mcp-Session-Id", "no-such-session") => 404, INVALID_REQUEST;
    legacy_put: |c| Raw::new("PUT").h("Mcp-Session-Id", &c.sid) => 405, INVALID_REQUEST;
    legacy_client_sends_a_response_to_nothing: |c| legacy(c).body(r#"{"jsonrpc":"2.0","id":"nope","result":{}}"#) => 202, None;
}
