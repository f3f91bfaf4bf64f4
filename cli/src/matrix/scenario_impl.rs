//! What each scenario does, through the era-independent `Transport`.

use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use mcp_negotiate::client::Connection;
use mcp_transport_core::jsonrpc::{
    ErrorObject, MISSING_REQUIRED_CLIENT_CAPABILITY, Message, Notification, Response, to_raw,
};
use mcp_transport_core::transport::{
    InputHandler, ListenFilter, RequestOptions, StreamEvent, Transport, TransportError,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::expect::Failure;
use super::run::{Harness, Observed, classify_error};
use super::scenario::Scenario;
use mcp_http_edge::headers;
use mcp_test_support::Proxy;

/// The matrix client's input handler: answers every elicitation with "Ada".
#[derive(Debug)]
pub struct Ada;

#[async_trait]
impl InputHandler for Ada {
    async fn handle(
        &self,
        method: &str,
        _params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match method {
            "elicitation/create" => {
                to_raw(&json!({ "action": "accept", "content": { "name": "Ada" } }))
                    .map_err(ErrorObject::internal)
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

fn works(detail: impl Into<String>) -> Observed {
    Observed::Works(detail.into())
}

fn failed(message: impl Into<String>) -> Observed {
    Observed::Failed {
        kind: None,
        message: message.into(),
    }
}

fn from_error(e: &TransportError) -> Observed {
    Observed::Failed {
        kind: classify_error(e),
        message: e.to_string(),
    }
}

fn tool_params(name: &str, args: Value) -> Option<Box<RawValue>> {
    to_raw(&json!({ "name": name, "arguments": args })).ok()
}

/// The first text content of a tool result.
fn result_text(resp: &Response) -> Result<String, String> {
    match &resp.payload {
        Ok(raw) => {
            let v: Value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
            v["content"][0]["text"]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("no text content in {}", raw.get()))
        }
        Err(e) => Err(format!("JSON-RPC error {e}")),
    }
}

/// Calls a tool; the transport's error is kept for the caller to match.
async fn call_raw(conn: &Connection, tool: &str, args: Value) -> Result<Response, TransportError> {
    let stream = conn
        .request(
            "tools/call",
            tool_params(tool, args),
            RequestOptions::default(),
        )
        .await?;
    stream.response().await
}

async fn call(conn: &Connection, tool: &str, args: Value) -> Result<String, Observed> {
    let resp = call_raw(conn, tool, args)
        .await
        .map_err(|e| from_error(&e))?;
    if let Err(e) = &resp.payload
        && e.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    {
        return Err(Observed::Failed {
            kind: Some(Failure::InputUnavailable),
            message: format!("JSON-RPC error {e}"),
        });
    }
    result_text(&resp).map_err(failed)
}

/// Runs one scenario; the connection is already negotiated.
pub(crate) async fn run(
    scenario: Scenario,
    conn: &Connection,
    harness: &Harness,
    proxy: Option<&Proxy>,
) -> Observed {
    let outcome = match scenario {
        Scenario::Json => echo(conn).await,
        Scenario::Sse => streamed(conn).await,
        Scenario::Progress | Scenario::Disconnect => countdown(conn, 4, 10, None).await,
        Scenario::NetworkDrop => countdown(conn, 6, 40, proxy).await,
        Scenario::Input => input(conn).await,
        Scenario::Cancel => cancel(conn, harness).await,
        Scenario::Changes => changes(conn, harness).await,
        Scenario::Expiry => expiry(conn, harness).await,
        Scenario::Delete => delete(conn, harness).await,
        Scenario::Get405 => get_405(harness).await,
    };
    outcome.unwrap_or_else(|o| o)
}

async fn echo(conn: &Connection) -> Result<Observed, Observed> {
    let text = call(conn, "echo", json!({ "text": "matrix" })).await?;
    if text == "matrix" {
        Ok(works("echo answered"))
    } else {
        Err(failed(format!("echo answered {text:?}")))
    }
}

async fn streamed(conn: &Connection) -> Result<Observed, Observed> {
    let options = RequestOptions {
        progress: true,
        ..RequestOptions::default()
    };
    let stream = conn
        .request(
            "tools/call",
            tool_params("countdown", json!({ "n": 2, "interval_ms": 5 })),
            options,
        )
        .await
        .map_err(|e| from_error(&e))?;
    let mut related = 0;
    let resp = stream
        .response_with(|_| related += 1)
        .await
        .map_err(|e| from_error(&e))?;
    let text = result_text(&resp).map_err(failed)?;
    if text == "done" && related > 0 {
        Ok(works(format!(
            "{related} messages streamed before the response"
        )))
    } else {
        Err(failed(format!(
            "answer {text:?} after {related} streamed messages"
        )))
    }
}

/// Runs `countdown` with progress; with a proxy, cuts the network after two
/// progress notifications. Checks every notification arrives exactly once,
/// in order, then `done`.
async fn countdown(
    conn: &Connection,
    n: u64,
    interval_ms: u64,
    proxy: Option<&Proxy>,
) -> Result<Observed, Observed> {
    let options = RequestOptions {
        progress: true,
        ..RequestOptions::default()
    };
    let mut stream = conn
        .request(
            "tools/call",
            tool_params("countdown", json!({ "n": n, "interval_ms": interval_ms })),
            options,
        )
        .await
        .map_err(|e| from_error(&e))?;
    let mut progress = Vec::new();
    let mut logs = 0;
    let mut cut = 0;
    loop {
        let item = stream.next().await;
        match item {
            Some(Ok(StreamEvent::Notification(Notification { method, params }))) => {
                let p: Value = params
                    .as_deref()
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or(Value::Null);
                match method.as_str() {
                    "notifications/progress" => {
                        progress.push(p["progress"].as_f64().unwrap_or(-1.0));
                        if progress.len() == 2
                            && let Some(proxy) = proxy
                        {
                            cut = proxy.cut();
                        }
                    }
                    "notifications/message" => logs += 1,
                    _ => {}
                }
            }
            Some(Ok(StreamEvent::ServerRequest(_))) => {}
            Some(Ok(StreamEvent::Response(resp))) => {
                let text = result_text(&resp).map_err(failed)?;
                let want: Vec<f64> = (1..=n).map(|i| i as f64).collect();
                if text != "done" {
                    return Err(failed(format!("answered {text:?}")));
                }
                if progress != want {
                    return Err(failed(format!(
                        "progress values {progress:?}, expected {want:?} exactly once each"
                    )));
                }
                if logs != n {
                    return Err(failed(format!("{logs} log messages, expected {n}")));
                }
                let how = if proxy.is_some() {
                    format!("; {cut} connection(s) cut mid-call and resumed")
                } else {
                    String::new()
                };
                return Ok(works(format!(
                    "{n} progress and {n} log notifications exactly once, in order{how}"
                )));
            }
            Some(Err(e)) => return Err(from_error(&e)),
            None => return Err(failed("the stream ended without a response")),
        }
    }
}

async fn input(conn: &Connection) -> Result<Observed, Observed> {
    let text = call(conn, "ask_name", json!({})).await?;
    if text == "hello, Ada" {
        Ok(works(
            "the input request was answered and the call completed",
        ))
    } else {
        Err(failed(format!("answered {text:?}")))
    }
}

async fn cancel(conn: &Connection, harness: &Harness) -> Result<Observed, Observed> {
    let before = harness.handler.cancelled_count();
    // The call runs in a task so that it can be dropped wherever it is: before
    // or after the response headers (a server may hold them until the handler
    // first emits). Dropping it is the caller's "cancel".
    let conn2 = conn.clone();
    let call = tokio::spawn(async move {
        let stream = conn2
            .request(
                "tools/call",
                tool_params("slow", json!({ "ms": 10_000 })),
                RequestOptions::default(),
            )
            .await?;
        stream.response().await
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    if call.is_finished() {
        return Err(failed("the slow call ended before it was cancelled"));
    }
    let dropped = tokio::time::Instant::now();
    call.abort();
    for _ in 0..300 {
        if harness.handler.cancelled_count() > before {
            return Ok(works(format!(
                "the handler saw the cancellation {:?} after the client cancelled",
                dropped.elapsed()
            )));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(failed("the handler never saw the cancellation"))
}

async fn changes(conn: &Connection, harness: &Harness) -> Result<Observed, Observed> {
    let filter = ListenFilter {
        tools_list_changed: true,
        ..ListenFilter::default()
    };
    let mut messages = conn.listen(filter).await.map_err(|e| from_error(&e))?;
    let note = Notification {
        method: "notifications/tools/list_changed".into(),
        params: None,
    };
    // Publish once a listener is attached (publishing returns where it went).
    let mut queued = 0;
    for _ in 0..100 {
        queued = harness.server.publish(&note).await;
        if queued > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if queued == 0 {
        return Err(failed("no listener was ever attached on the server"));
    }
    loop {
        match tokio::time::timeout(Duration::from_secs(3), messages.next()).await {
            Ok(Some(Ok(Message::Notification(n)))) if n.method == note.method => {
                return Ok(works("tools/list_changed arrived on the listen stream"));
            }
            Ok(Some(Ok(_))) => continue,
            Ok(Some(Err(e))) => return Err(from_error(&e)),
            Ok(None) => return Err(failed("the listen stream ended")),
            Err(_) => return Err(failed("tools/list_changed did not arrive")),
        }
    }
}

async fn expiry(conn: &Connection, harness: &Harness) -> Result<Observed, Observed> {
    echo(conn).await?;
    let Some(legacy) = harness.server.legacy() else {
        return Err(failed("no legacy engine to expire a session on"));
    };
    legacy.terminate_all().await;
    match call_raw(conn, "echo", json!({ "text": "after" })).await {
        Err(TransportError::SessionExpired { .. }) => {}
        Ok(_) => return Err(failed("a call on the terminated session succeeded")),
        Err(e) => return Err(from_error(&e)),
    }
    let text = call(conn, "echo", json!({ "text": "again" })).await?;
    if text == "again" {
        Ok(works(
            "404 reported as session expired, then a new session was initialized",
        ))
    } else {
        Err(failed(format!(
            "after re-initialize echo answered {text:?}"
        )))
    }
}

async fn delete(conn: &Connection, harness: &Harness) -> Result<Observed, Observed> {
    echo(conn).await?;
    let Some(legacy) = harness.server.legacy() else {
        return Err(failed("no legacy engine"));
    };
    let before = legacy.session_count();
    conn.close().await.map_err(|e| from_error(&e))?;
    for _ in 0..100 {
        if legacy.session_count() < before {
            return Ok(works("DELETE ended the session on the server"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(failed(format!(
        "the server still has {} session(s) after close()",
        legacy.session_count()
    )))
}

async fn get_405(harness: &Harness) -> Result<Observed, Observed> {
    let url = format!("http://{}/mcp", harness.addr);
    let resp = reqwest::Client::new()
        .get(&url)
        .header("accept", headers::EVENT_STREAM)
        .header(headers::PROTOCOL_VERSION, "2026-07-28")
        .send()
        .await
        .map_err(|e| failed(e.to_string()))?;
    let allow = resp
        .headers()
        .get("allow")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    if resp.status() == 405 && allow.contains("POST") {
        Ok(works(format!("GET answered 405 with Allow: {allow}")))
    } else {
        Err(failed(format!(
            "GET answered {} with Allow: {allow:?}",
            resp.status()
        )))
    }
}
