//! The rmcp 3.11.0 server adapter of `mcp-compat matrix --peer rmcp`
//! (peers/rmcp.toml): `StreamableHttpService` behind axum.
//!
//! usage: rmcp-peer-server --port PORT [--mode sse|json] [--retry-ms N]
//!
//! `sse`: `legacy_session_mode` (sessions, SSE answers, the session's own
//! message cache for `Last-Event-ID`, priming with `retry`); `json`:
//! stateless with `json_response` (rmcp falls back to SSE when a handler
//! sends something before its answer). rmcp serves 2026-07-28 requests
//! statelessly in both modes. Listens on 127.0.0.1:PORT and prints
//! `listening on http://127.0.0.1:PORT/mcp`.
//!
//! The reference tools (as peers/ts-sdk/server.mjs): echo {text}, add {a, b},
//! countdown {n, interval_ms, close_after} (progress 1..n; with close_after K
//! the SSE stream is closed after the K-th), slow {ms}, ask_name {}
//! (elicitation on a session, an `InputRequiredResult` on 2026-07-28),
//! close_stream {ms}.
//!
//! Closing a stream (on 2025-11-25 sessions only, as SEP-1699 is that
//! revision's): rmcp offers `LocalSessionHandle::close_sse_stream(
//! http_request_id, retry)` but does not tell a handler its request's
//! `http_request_id`, which is the session's count of earlier POSTed
//! requests (`next_http_request_id` in rmcp's session/local.rs, the
//! `initialize` POST not counted). A middleware keeps that count per session
//! and passes it to the handler in the `x-peer-http-request-id` header.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequestParams, InputRequest,
    InputRequests, InputRequiredResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

const MAX_WAIT_MS: u64 = 30_000;
const MAX_COUNT: u64 = 1000;
const MAX_BODY: usize = 4 * 1024 * 1024;
/// Sessions whose request count is kept at most (the oldest forgotten).
const MAX_COUNTED_SESSIONS: usize = 1024;
const HTTP_REQUEST_ID: &str = "x-peer-http-request-id";

/// Per session: how many requests it has POSTed since `initialize`.
#[derive(Default)]
struct Counts {
    by_session: HashMap<String, u64>,
    order: std::collections::VecDeque<String>,
}

#[derive(Clone)]
struct Adapter {
    sessions: Arc<LocalSessionManager>,
    retry: Duration,
}

fn tools() -> Value {
    let obj =
        |props: Value, req: Value| json!({"type": "object", "properties": props, "required": req});
    json!([
        {"name": "echo", "description": "Answers the text.", "inputSchema": obj(json!({"text": {"type": "string"}}), json!(["text"]))},
        {"name": "add", "description": "Answers a + b.", "inputSchema": obj(json!({"a": {"type": "number"}, "b": {"type": "number"}}), json!(["a", "b"]))},
        {"name": "countdown", "description": "n progress notifications, then done; close_after K closes the SSE stream after the K-th.",
         "inputSchema": obj(json!({"n": {"type": "integer"}, "interval_ms": {"type": "integer"}, "close_after": {"type": "integer"}}), json!(["n"]))},
        {"name": "slow", "description": "Answers after ms.", "inputSchema": obj(json!({"ms": {"type": "integer"}}), json!([]))},
        {"name": "ask_name", "description": "Asks the client for a name (elicitation).", "inputSchema": obj(json!({}), json!([]))},
        {"name": "close_stream", "description": "Closes its SSE stream mid-call, then answers.", "inputSchema": obj(json!({"ms": {"type": "integer"}}), json!([]))},
    ])
}

/// A text result. `resultType` is required on 2026-07-28 (schema.ts
/// `Result`); rmcp strips it for peers at older revisions.
fn text(t: impl Into<String>) -> CallToolResult {
    serde_json::from_value(json!({"resultType": "complete", "content": [{"type": "text", "text": t.into()}]}))
        .expect("a text result")
}

fn tool_error(t: impl Into<String>) -> CallToolResult {
    serde_json::from_value(
        json!({"resultType": "complete", "content": [{"type": "text", "text": t.into()}], "isError": true}),
    )
    .expect("an error result")
}

fn int_arg(
    args: &serde_json::Map<String, Value>,
    key: &str,
    dflt: Option<u64>,
    max: u64,
) -> Result<u64, String> {
    match args.get(key) {
        None => dflt.ok_or_else(|| format!("missing argument {key}")),
        Some(v) => v
            .as_u64()
            .filter(|n| *n <= max)
            .ok_or_else(|| format!("{key} must be an integer in 0..={max}")),
    }
}

fn elicit_params() -> Value {
    json!({"mode": "form", "message": "What is your name?",
           "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}})
}

fn answer_of(result: &Value) -> CallToolResult {
    if result["action"] != "accept" {
        return text(format!(
            "no name ({})",
            result["action"].as_str().unwrap_or("?")
        ));
    }
    text(format!(
        "hello, {}",
        result["content"]["name"].as_str().unwrap_or("")
    ))
}

impl Adapter {
    /// Closes the SSE stream of the request `cx` belongs to; false when it
    /// has none (stateless, JSON, or no session).
    async fn close_stream(&self, cx: &RequestContext<RoleServer>) -> bool {
        // SEP-1699 polling is 2025-11-25's; rmcp would close an older
        // session's stream too (the TypeScript SDK offers closeSSEStream
        // only to clients at >= 2025-11-25), leaving that client nothing to
        // resume from.
        if cx.protocol_version().is_none_or(|v| v < ProtocolVersion::V_2025_11_25) {
            return false;
        }
        let Some(parts) = cx.extensions.get::<axum::http::request::Parts>() else {
            return false;
        };
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let (Some(session), Some(id)) = (header("mcp-session-id"), header(HTTP_REQUEST_ID)) else {
            return false;
        };
        let Ok(id) = id.parse::<u64>() else {
            return false;
        };
        let handle = self
            .sessions
            .sessions
            .read()
            .await
            .get(session.as_str())
            .cloned();
        match handle {
            Some(h) => h.close_sse_stream(id, Some(self.retry)).await.is_ok(),
            None => false,
        }
    }

    async fn tool(
        &self,
        p: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, String> {
        let args = p.arguments.clone().unwrap_or_default();
        Ok(CallToolResponse::Complete(match p.name.as_ref() {
            "echo" => match args.get("text").and_then(Value::as_str) {
                Some(t) => text(t),
                None => tool_error("missing string argument text"),
            },
            "add" => match (
                args.get("a").and_then(Value::as_f64),
                args.get("b").and_then(Value::as_f64),
            ) {
                (Some(a), Some(b)) => text(format_number(a + b)),
                _ => tool_error("a and b must be numbers"),
            },
            "countdown" => {
                let n = int_arg(&args, "n", None, MAX_COUNT)?;
                let interval = int_arg(&args, "interval_ms", Some(10), MAX_WAIT_MS)?;
                let close_after = int_arg(&args, "close_after", Some(0), MAX_COUNT)?;
                let token = cx.meta.get_progress_token();
                for i in 1..=n {
                    tokio::time::sleep(Duration::from_millis(interval)).await;
                    if let Some(token) = &token {
                        let mut note = ProgressNotificationParam::new(token.clone(), i as f64);
                        note.total = Some(n as f64);
                        cx.peer
                            .notify_progress(note)
                            .await
                            .map_err(|e| format!("progress: {e}"))?;
                    }
                    if i == close_after {
                        self.close_stream(&cx).await;
                    }
                }
                text("done")
            }
            "slow" => {
                tokio::time::sleep(Duration::from_millis(int_arg(
                    &args,
                    "ms",
                    Some(100),
                    MAX_WAIT_MS,
                )?))
                .await;
                text("slept")
            }
            "ask_name" => {
                let modern = cx
                    .protocol_version()
                    .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
                if modern {
                    // 2026-07-28: no server-to-client requests; an input round.
                    if let Some(answer) = p.input_responses.as_ref().and_then(|r| r.get("name")) {
                        answer_of(answer)
                    } else {
                        let request: InputRequest = serde_json::from_value(
                            json!({"method": "elicitation/create", "params": elicit_params()}),
                        )
                        .map_err(|e| format!("input request: {e}"))?;
                        let requests: InputRequests =
                            [("name".to_owned(), request)].into_iter().collect();
                        return Ok(CallToolResponse::InputRequired(
                            InputRequiredResult::from_input_requests(requests),
                        ));
                    }
                } else {
                    let params: ElicitRequestParams = serde_json::from_value(elicit_params())
                        .map_err(|e| format!("elicit params: {e}"))?;
                    match cx.peer.create_elicitation(params).await {
                        Ok(r) => answer_of(&serde_json::to_value(r).unwrap_or_default()),
                        Err(e) => tool_error(format!("elicitation failed: {e}")),
                    }
                }
            }
            "close_stream" => {
                let ms = int_arg(&args, "ms", Some(100), MAX_WAIT_MS)?;
                let closed = self.close_stream(&cx).await;
                tokio::time::sleep(Duration::from_millis(ms)).await;
                text(if closed { "resumed" } else { "not closed" })
            }
            other => tool_error(format!("unknown tool {other}")),
        }))
    }
}

fn format_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

impl ServerHandler for Adapter {
    fn get_info(&self) -> ServerConfig {
        serde_json::from_value(json!({
            "protocolVersion": ProtocolVersion::LATEST_WITH_INITIALIZE,
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "mcp-compat-peer-rmcp", "version": "3.11.0"},
        }))
        .expect("server info")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        serde_json::from_value(json!({"resultType": "complete", "tools": tools()}))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(self
            .tool(request, cx)
            .await
            .unwrap_or_else(|e| CallToolResponse::Complete(tool_error(e))))
    }
}

/// Counts the requests each session POSTs (see the module comment) and
/// passes the count to the handler.
async fn count_requests(
    State(counts): State<Arc<Mutex<Counts>>>,
    req: Request,
    next: Next,
) -> Response {
    let session = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let (Some(session), true) = (session, req.method() == Method::POST) else {
        return next.run(req).await;
    };
    let (mut parts, body) = req.into_parts();
    let bytes: Bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => return (StatusCode::PAYLOAD_TOO_LARGE, "body too large").into_response(),
    };
    let is_request = serde_json::from_slice::<Value>(&bytes)
        .is_ok_and(|v| v.get("method").is_some() && v.get("id").is_some_and(|id| !id.is_null()));
    if is_request {
        let mut c = counts.lock().unwrap();
        if !c.by_session.contains_key(&session) {
            c.order.push_back(session.clone());
            if c.order.len() > MAX_COUNTED_SESSIONS {
                if let Some(old) = c.order.pop_front() {
                    c.by_session.remove(&old);
                }
            }
        }
        let n = c.by_session.entry(session).or_insert(0);
        parts.headers.insert(HTTP_REQUEST_ID, HeaderValue::from(*n));
        *n += 1;
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

fn usage(why: &str) -> ! {
    eprintln!(
        "rmcp-peer-server: {why}\nusage: rmcp-peer-server --port PORT [--mode sse|json] [--retry-ms N]"
    );
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let (mut port, mut mode, mut retry_ms) = (None::<u16>, "sse".to_owned(), 150u64);
    let mut argv = std::env::args().skip(1);
    while let Some(a) = argv.next() {
        let mut val = || {
            argv.next()
                .unwrap_or_else(|| usage(&format!("{a} needs a value")))
        };
        match a.as_str() {
            "--port" => port = Some(val().parse().unwrap_or_else(|_| usage("bad --port"))),
            "--mode" => mode = val(),
            "--retry-ms" => retry_ms = val().parse().unwrap_or_else(|_| usage("bad --retry-ms")),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    let Some(port) = port else {
        usage("--port PORT is required")
    };
    if !["sse", "json"].contains(&mode.as_str()) {
        usage(&format!("bad --mode {mode}"));
    }
    let retry = Duration::from_millis(retry_ms);
    let mut manager = LocalSessionManager::default();
    manager.session_config.sse_retry = Some(retry);
    let manager = Arc::new(manager);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(mode == "sse")
        .with_json_response(mode == "json")
        .with_sse_retry(Some(retry))
        .with_max_request_body_bytes(MAX_BODY);
    let adapter = Adapter {
        sessions: manager.clone(),
        retry,
    };
    let service = StreamableHttpService::new(move || Ok(adapter.clone()), manager, config);
    let counts = Arc::new(Mutex::new(Counts::default()));
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(counts, count_requests));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap_or_else(|e| {
            eprintln!("rmcp-peer-server: bind 127.0.0.1:{port}: {e}");
            std::process::exit(1)
        });
    let addr = listener.local_addr().expect("bound");
    println!("listening on http://127.0.0.1:{}/mcp", addr.port());
    // TCP_NODELAY, as the workspace's servers set it (`mcp-compat bench
    // --workloads legacy-sse,legacy-sse-rmcp` compares the two).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("rmcp-peer-server: {e}");
        std::process::exit(1);
    }
}
