//! A minimal 2024-11-05 HTTP+SSE server for tests (2024-11-05
//! *Transports*, "HTTP with SSE"), shaped like the servers of that era:
//!
//! * `GET /sse` opens an SSE stream whose first event is
//!   `event: endpoint` / `data: /messages?sessionId=<id>`; every server
//!   message is then an `event: message` on it.
//! * `POST /messages?sessionId=<id>` takes one JSON-RPC message and answers
//!   `202 Accepted`; the response, if any, goes down that session's stream.
//!   An unknown session is 404. `GET /messages` is 405 (axum's answer for a
//!   POST-only route).
//! * `POST /` answers [`Options::root_status`] (405 by default), like an
//!   old server with no Streamable HTTP endpoint; so does `POST /sse`.
//!
//! Methods: `initialize` (answers [`Options::protocol_version`]), `ping`,
//! `tools/list`, and `tools/call` of
//!
//! * `echo {text, delay_ms?}`: the text back, after the delay;
//! * `countdown {n}`: `n` `notifications/progress` with the request's
//!   `_meta.progressToken` (when it has one), then the result;
//! * `ask`: sends the server-to-client request [`Options::ask_method`]
//!   (`roots/list` by default) on the stream, waits for the client's POSTed
//!   answer and returns it as text;
//! * `announce`: sends `notifications/tools/list_changed` and a
//!   `notifications/message`, then the result;
//! * `hangup`: ends the session's SSE stream without answering;
//! * `oversize {bytes}`: sends, in one chunk, a `notifications/message`
//!   and then an event whose data is `bytes` bytes long; never answers.
//!
//! A request for the method `test/refuse` is refused at the POST itself:
//! `400` with a JSON-RPC error (`-32602`) whose message is
//! [`REFUSAL_PAD`] bytes of padding after `refused: ` (a server that
//! answers on the POST rather than the stream, with a long error body).
//!
//! Misbehaving routes, for connect failures: `GET /json` answers 200 JSON,
//! `GET /no-endpoint` sends a `message` event first, `GET /silent` opens a
//! stream and sends nothing, `GET /evil` names an endpoint on another
//! origin.
//!
//! The negotiating client's fallback tests (`negotiate/tests/fallback.rs`)
//! and the HTTP+SSE client's own (`rev-2024-11-05/tests/client.rs`) use it;
//! so can the matrix, as the server column of that era.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};

/// The length of the padding in `test/refuse`'s error message.
pub const REFUSAL_PAD: usize = 20 * 1024;

/// What the server answers.
#[derive(Clone, Debug)]
pub struct Options {
    /// The `protocolVersion` of the `InitializeResult` (whatever was asked).
    pub protocol_version: String,
    /// The status of `POST /`.
    pub root_status: StatusCode,
    /// The server-to-client request `tools/call ask` sends.
    pub ask_method: String,
    /// Where to record every exchange (with its headers), if anywhere.
    pub hits: Option<crate::Hits>,
    /// A message sent in the same chunk as the `endpoint` event, right
    /// after it (so a client decodes both from one read).
    pub greeting: Option<Value>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            protocol_version: "2024-11-05".into(),
            root_status: StatusCode::METHOD_NOT_ALLOWED,
            ask_method: "roots/list".into(),
            hits: None,
            greeting: None,
        }
    }
}

struct Inner {
    opts: Options,
    next: AtomicU64,
    /// Each open session's SSE stream.
    sessions: Mutex<HashMap<String, Session>>,
    /// Every message POSTed, in arrival order.
    received: Mutex<Vec<Value>>,
    /// Server-to-client requests waiting for the client's answer, by id.
    waiting: Mutex<HashMap<String, oneshot::Sender<Value>>>,
}

/// One session: its SSE sender, and a kill switch (dropping `_kill`, by
/// removing the session, ends the stream at once even while tasks still
/// hold clones of `tx`).
struct Session {
    tx: mpsc::Sender<Bytes>,
    _kill: watch::Sender<()>,
}

/// A running server; aborted when dropped.
pub struct OldServer {
    inner: Arc<Inner>,
    _http: crate::TestServer,
}

impl OldServer {
    /// Every JSON-RPC message POSTed so far.
    pub fn received(&self) -> Vec<Value> {
        self.inner.received.lock().unwrap().clone()
    }

    /// The methods of the messages POSTed so far (`""` for responses).
    pub fn received_methods(&self) -> Vec<String> {
        self.received()
            .iter()
            .map(|m| m["method"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    /// How many SSE streams are still held open by a client.
    pub fn open_streams(&self) -> usize {
        self.inner
            .sessions
            .lock()
            .unwrap()
            .values()
            .filter(|s| !s.tx.is_closed())
            .count()
    }

    /// Ends every session's SSE stream.
    pub fn hang_up_all(&self) {
        self.inner.sessions.lock().unwrap().clear();
    }
}

/// Starts the server on `127.0.0.1:0`.
pub async fn spawn(opts: Options) -> (SocketAddr, OldServer) {
    let inner = Arc::new(Inner {
        opts,
        next: AtomicU64::new(1),
        sessions: Mutex::new(HashMap::new()),
        received: Mutex::new(Vec::new()),
        waiting: Mutex::new(HashMap::new()),
    });
    let root_status = inner.opts.root_status;
    let app = Router::new()
        .route("/sse", get(sse))
        .route("/messages", post(messages))
        .route(
            "/",
            post(move || async move { (root_status, "no Streamable HTTP endpoint here") }),
        )
        .route(
            "/json",
            get(|| async { axum::Json(json!({"jsonrpc": "2.0", "result": {}, "id": 1})) }),
        )
        .route("/no-endpoint", get(no_endpoint))
        .route("/silent", get(silent))
        .route("/evil", get(evil))
        .with_state(inner.clone());
    let app = match &inner.opts.hits {
        Some(hits) => hits.record(app),
        None => app,
    };
    let http = crate::TestServer::serve(app).await;
    (http.addr(), OldServer { inner, _http: http })
}

fn frame(event: &str, data: &str) -> Bytes {
    Bytes::from(format!("event: {event}\ndata: {data}\n\n"))
}

fn sse_body(rx: mpsc::Receiver<Bytes>, kill: watch::Receiver<()>) -> Response {
    let body = futures_util::stream::unfold((rx, kill), |(mut rx, mut kill)| async move {
        let chunk = tokio::select! {
            chunk = rx.recv() => chunk?,
            // Only ever fires when the session (its sender) is removed.
            _ = kill.changed() => return None,
        };
        Some((Ok::<_, Infallible>(chunk), (rx, kill)))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .unwrap()
}

/// Opens a stream whose first event is `first`, registered as a session.
fn open_session(inner: &Inner, first: impl FnOnce(&str) -> Bytes) -> Response {
    let id = format!("s{}", inner.next.fetch_add(1, Ordering::Relaxed));
    let (tx, rx) = mpsc::channel(256);
    let (kill, killed) = watch::channel(());
    tx.try_send(first(&id)).unwrap();
    inner
        .sessions
        .lock()
        .unwrap()
        .insert(id, Session { tx, _kill: kill });
    sse_body(rx, killed)
}

async fn sse(State(inner): State<Arc<Inner>>) -> Response {
    let greeting = inner.opts.greeting.clone();
    open_session(&inner, |id| {
        let endpoint = frame("endpoint", &format!("/messages?sessionId={id}"));
        match greeting {
            Some(m) => [endpoint, frame("message", &m.to_string())].concat().into(),
            None => endpoint,
        }
    })
}

async fn no_endpoint(State(inner): State<Arc<Inner>>) -> Response {
    open_session(&inner, |_| {
        frame(
            "message",
            r#"{"jsonrpc":"2.0","method":"notifications/hello"}"#,
        )
    })
}

async fn evil(State(inner): State<Arc<Inner>>) -> Response {
    open_session(&inner, |id| {
        frame(
            "endpoint",
            &format!("http://evil.example/messages?sessionId={id}"),
        )
    })
}

async fn silent(State(inner): State<Arc<Inner>>) -> Response {
    // `: hi` is a comment: the stream is open, but no event ever comes.
    open_session(&inner, |_| Bytes::from_static(b": hi\n\n"))
}

#[derive(serde::Deserialize)]
struct SessionQuery {
    #[serde(rename = "sessionId")]
    session_id: String,
}

async fn messages(
    State(inner): State<Arc<Inner>>,
    Query(q): Query<SessionQuery>,
    body: Bytes,
) -> Response {
    let tx = inner
        .sessions
        .lock()
        .unwrap()
        .get(&q.session_id)
        .map(|s| s.tx.clone());
    let Some(tx) = tx else {
        return (StatusCode::NOT_FOUND, "unknown session").into_response();
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "invalid JSON").into_response();
    };
    inner.received.lock().unwrap().push(message.clone());
    if message["method"] == "test/refuse" {
        let error = json!({"jsonrpc": "2.0", "id": message["id"], "error": {
            "code": -32602, "message": format!("refused: {}", "x".repeat(REFUSAL_PAD))}});
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    }
    let session = q.session_id;
    tokio::spawn(handle(inner, session, tx, message));
    (StatusCode::ACCEPTED, "Accepted").into_response()
}

async fn send(tx: &mpsc::Sender<Bytes>, message: Value) {
    let _ = tx.send(frame("message", &message.to_string())).await;
}

async fn handle(inner: Arc<Inner>, session: String, tx: mpsc::Sender<Bytes>, message: Value) {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        // A response to one of our requests.
        let id = message["id"].to_string();
        if let Some(waiter) = inner.waiting.lock().unwrap().remove(&id) {
            let _ = waiter.send(message);
        }
        return;
    };
    let Some(id) = message.get("id").cloned() else {
        return; // a notification
    };
    let params = message.get("params").cloned().unwrap_or(json!({}));
    let reply = match method {
        "initialize" => Ok(json!({
            "protocolVersion": inner.opts.protocol_version,
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "old-server", "version": "0.1.0"},
        })),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "countdown", "inputSchema": {"type": "object"}},
            {"name": "ask", "inputSchema": {"type": "object"}},
            {"name": "announce", "inputSchema": {"type": "object"}},
            {"name": "hangup", "inputSchema": {"type": "object"}},
            {"name": "oversize", "inputSchema": {"type": "object"}},
        ]})),
        "tools/call" => call(&inner, &session, &tx, &params).await,
        other => Err(json!({"code": -32601, "message": format!("Method not found: {other}")})),
    };
    let reply = match reply {
        Ok(Value::Null) => return, // no answer at all (hangup)
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    };
    send(&tx, reply).await;
}

fn text(s: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": s.into()}]})
}

async fn call(
    inner: &Inner,
    session: &str,
    tx: &mpsc::Sender<Bytes>,
    params: &Value,
) -> Result<Value, Value> {
    let args = params.get("arguments").cloned().unwrap_or(json!({}));
    match params["name"].as_str().unwrap_or("") {
        "echo" => {
            if let Some(ms) = args["delay_ms"].as_u64() {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            Ok(text(args["text"].as_str().unwrap_or("")))
        }
        "countdown" => {
            let n = args["n"].as_u64().unwrap_or(3);
            let token = params["_meta"]["progressToken"].clone();
            for i in 1..=n {
                if !token.is_null() {
                    send(
                        tx,
                        json!({"jsonrpc": "2.0", "method": "notifications/progress",
                               "params": {"progressToken": token, "progress": i, "total": n}}),
                    )
                    .await;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Ok(text("liftoff"))
        }
        "ask" => {
            let id = format!("srv-{}", inner.next.fetch_add(1, Ordering::Relaxed));
            let (waiter, answer) = oneshot::channel();
            inner
                .waiting
                .lock()
                .unwrap()
                .insert(Value::String(id.clone()).to_string(), waiter);
            send(
                tx,
                json!({"jsonrpc": "2.0", "id": id, "method": inner.opts.ask_method, "params": {}}),
            )
            .await;
            match tokio::time::timeout(Duration::from_secs(5), answer).await {
                Ok(Ok(answer)) => Ok(text(answer.to_string())),
                _ => Err(json!({"code": -32603, "message": "the client did not answer"})),
            }
        }
        "announce" => {
            send(
                tx,
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            )
            .await;
            send(
                tx,
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": "announced"}}),
            )
            .await;
            Ok(text("announced"))
        }
        "oversize" => {
            // One chunk: a log message, then an event of `bytes` bytes of
            // data; no answer.
            let bytes = params["arguments"]["bytes"].as_u64().unwrap_or(0) as usize;
            let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                              "params": {"level": "info", "data": "before"}});
            let chunk = [
                frame("message", &note.to_string()),
                frame("message", &"x".repeat(bytes)),
            ]
            .concat();
            let _ = tx.send(chunk.into()).await;
            Ok(Value::Null)
        }
        "hangup" => {
            inner.sessions.lock().unwrap().remove(session);
            Ok(Value::Null)
        }
        other => Err(json!({"code": -32602, "message": format!("Unknown tool: {other}")})),
    }
}
