//! One negotiated connection with the helpers every scenario uses:
//! requests whose JSON-RPC errors are failures, paginated lists, tool calls.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use mcp_negotiate::client::{Connection, NegotiateConfig, Underlying, connect};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{Message, to_raw};
use mcp_transport_core::transport::{
    ListenFilter, RequestOptions, ServerMessages, Transport, TransportError,
};
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;

use super::input::ConformanceInput;

/// The most pages a list is followed for (a server that keeps returning a
/// `nextCursor` is cut off there).
const MAX_PAGES: usize = 100;

/// The client's `clientInfo`.
pub fn client_info() -> Value {
    json!({ "name": "mcp-compat-conformance-client", "version": env!("CARGO_PKG_VERSION") })
}

/// The client's capabilities: elicitation, which [`ConformanceInput`]
/// answers (form mode; an empty object means form only).
pub fn capabilities() -> Value {
    json!({ "elicitation": {} })
}

/// How long [`Session::close`] waits for the standalone stream to wind down.
const LISTENER_GRACE: Duration = Duration::from_secs(2);

/// A negotiated connection to the scenario's mock server.
///
/// On a legacy (session) revision the standalone GET stream is opened right
/// after the handshake and read until the end, as the TypeScript SDK client
/// does: a server may send requests that belong to no client request there
/// (the suite's `elicitation-sep1034-client-defaults` server sends its
/// `elicitation/create` from a tool handler without relating it to the
/// call, so the TypeScript SDK server routes it to the GET stream and drops
/// it when none is open). The transport answers such requests through the
/// input handler as they arrive.
pub struct Session {
    conn: Connection,
    listener: Option<JoinHandle<()>>,
}

impl Session {
    /// Negotiates with `url`, offering `revisions` (most preferred first).
    pub async fn connect(
        url: &str,
        revisions: Vec<ProtocolVersion>,
        timeout: Duration,
    ) -> Result<Session, String> {
        let mut config = NegotiateConfig::new(url)
            .with_revisions(revisions)
            .with_capabilities(capabilities())
            .with_input_handler(Arc::new(ConformanceInput));
        config.client_info = client_info();
        config.request_timeout = Some(timeout);
        let conn = connect(config)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        eprintln!(
            "conformance-client: {} ({})",
            conn.revision(),
            conn.negotiated().reason
        );
        let listener = match conn.underlying() {
            Underlying::Legacy(client) => open_standalone_stream(client).await,
            _ => None,
        };
        Ok(Session { conn, listener })
    }

    /// The negotiated revision.
    pub fn revision(&self) -> ProtocolVersion {
        self.conn.revision()
    }

    /// Sends `method` with `params` and returns its result; a JSON-RPC
    /// error is a failure naming the method.
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, String> {
        let raw = params
            .map(|p| to_raw(&p))
            .transpose()
            .map_err(|e| format!("{method}: cannot serialize params: {e}"))?;
        let response = self
            .conn
            .request(method, raw, RequestOptions::default())
            .await
            .map_err(|e| format!("{method}: {e}"))?
            .response()
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        match response.payload {
            Ok(result) => serde_json::from_str(result.get())
                .map_err(|e| format!("{method}: the result is not JSON: {e}")),
            Err(e) => Err(format!("{method}: the server answered with an error: {e}")),
        }
    }

    /// Every item of a paginated list (`tools/list` → `tools`, ...).
    pub async fn list(&self, method: &str, key: &str) -> Result<Vec<Value>, String> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.take().map(|c| json!({ "cursor": c }));
            let result = self.request(method, params).await?;
            match result.get(key) {
                Some(Value::Array(page)) => items.extend(page.iter().cloned()),
                _ => return Err(format!("{method}: the result has no {key} list: {result}")),
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(items),
            }
        }
        Err(format!(
            "{method}: still paginating after {MAX_PAGES} pages"
        ))
    }

    /// `tools/list`, every page: the tools the client keeps (on 2026-07-28
    /// the transport has already dropped those with invalid `x-mcp-header`
    /// annotations).
    pub async fn tools(&self) -> Result<Vec<Value>, String> {
        let tools = self.list("tools/list", "tools").await?;
        let names: Vec<&str> = tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .collect();
        eprintln!("conformance-client: tools/list: {}", names.join(", "));
        Ok(tools)
    }

    /// `tools/call` of `name` with `arguments`; the result (a tool that
    /// reports `isError` is logged, not a failure: the scenario judges it).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, String> {
        let result = self
            .request(
                "tools/call",
                Some(json!({ "name": name, "arguments": arguments })),
            )
            .await
            .map_err(|e| format!("{e} (tool {name})"))?;
        eprintln!(
            "conformance-client: tool {name} {}: {result}",
            how_it_ended(&result)
        );
        Ok(result)
    }

    /// Ends the connection (DELETE of a legacy session; a failure there is
    /// logged only: the scenario's work is done).
    pub async fn close(self) {
        if let Err(e) = self.conn.close().await {
            eprintln!("conformance-client: close: {e}");
        }
        // Closing the client ends the standalone stream.
        if let Some(mut listener) = self.listener
            && tokio::time::timeout(LISTENER_GRACE, &mut listener)
                .await
                .is_err()
        {
            listener.abort();
        }
    }
}

/// How a tool call's result reads in the log: one whose tool reports
/// `isError` is told apart, not failed (the scenario judges it).
fn how_it_ended(result: &Value) -> &'static str {
    if result.get("isError") == Some(&Value::Bool(true)) {
        "reported an error (isError)"
    } else {
        "answered"
    }
}

/// Opens the standalone GET stream (returning once the server has answered
/// the GET, so it is in place before the scenario's first request) and
/// reads it in a task. A server that offers none (405) or refuses the GET is
/// logged, not a failure: the stream is optional (*Transports*, "Listening
/// for Messages from the Server").
async fn open_standalone_stream(
    client: &mcp_session_engine::client::LegacyClient,
) -> Option<JoinHandle<()>> {
    match client.listen(ListenFilter::default()).await {
        Ok(messages) => {
            eprintln!("conformance-client: standalone GET stream open");
            Some(tokio::spawn(drain(messages)))
        }
        Err(TransportError::NotOffered { .. }) => {
            eprintln!("conformance-client: the server offers no standalone GET stream (405)");
            None
        }
        Err(e) => {
            // One line, however much HTML an error page holds.
            let text: String = e
                .to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let text: String = text.chars().take(160).collect();
            eprintln!("conformance-client: no standalone GET stream: {text}");
            None
        }
    }
}

/// Reads the standalone stream to its end, logging what arrives (requests
/// on it have been answered by the transport already).
async fn drain(mut messages: ServerMessages) {
    while let Some(item) = messages.next().await {
        match item {
            Ok(Message::Request(r)) => {
                eprintln!(
                    "conformance-client: answered server request {} ({}) from the GET stream",
                    r.id, r.method
                );
            }
            Ok(m) => eprintln!("conformance-client: GET stream: {}", m.to_json()),
            Err(e) => {
                eprintln!("conformance-client: the standalone GET stream ended: {e}");
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_error_is_told_apart_in_the_log() {
        let error = json!({ "content": [], "isError": true });
        assert_eq!(how_it_ended(&error), "reported an error (isError)");
        for answered in [
            json!({ "content": [] }),
            json!({ "content": [], "isError": false }),
        ] {
            assert_eq!(how_it_ended(&answered), "answered");
        }
    }
}
