//! Running a [`Call`] to its end: the JSON result of one method
//! (`server/discover`, one `tools/list` page) and the full `tools/list`
//! refresh behind `list_tools` and the `HeaderMismatch` recovery.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_transport_core::transport::{Misbehaviour, RequestOptions, StreamEvent, TransportError};
use serde_json::{Map, Value};

use super::request::Call;
use super::shared::Shared;

/// The most `tools/list` pages fetched by one refresh.
const MAX_TOOL_PAGES: usize = 100;

/// Runs a call to its end and returns the result as JSON; notifications
/// are dropped and a JSON-RPC error is `TransportError::Http` (with the
/// status of the answer that carried it, often 200).
pub(crate) async fn call_value(
    shared: Arc<Shared>,
    method: &str,
    params: Map<String, Value>,
) -> Result<Value, TransportError> {
    shared.check_open()?;
    let mut call = Call::from_map(shared, method, params, RequestOptions::default());
    call.open_first().await?;
    loop {
        match call.next().await {
            Some(Ok(StreamEvent::Response(r))) => {
                return match r.payload {
                    Ok(raw) => serde_json::from_str(raw.get()).map_err(|e| {
                        TransportError::PeerMisbehaved(Misbehaviour::MalformedResult {
                            what: format!("{method} result"),
                            detail: format!("not JSON: {e}"),
                        })
                    }),
                    Err(e) => Err(TransportError::Http {
                        status: call.status().as_u16(),
                        message: e.message.clone(),
                        rpc: Some(e),
                    }),
                };
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e),
            None => {
                return Err(TransportError::PeerMisbehaved(Misbehaviour::EndedWithout {
                    what: format!("the answer to {method}"),
                    missing: "a response".into(),
                }));
            }
        }
    }
}

/// A boxed, sendable future (breaks the `tools/call` → `tools/list` recursion).
type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Fetches every page of `tools/list`, returns the valid tools and makes
/// the cache hold exactly them.
pub(crate) fn list_all_tools(shared: Arc<Shared>) -> BoxFuture<Result<Vec<Value>, TransportError>> {
    Box::pin(async move {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen_cursors = HashSet::new();
        for _ in 0..MAX_TOOL_PAGES {
            let mut params = Map::new();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), Value::String(c.clone()));
            }
            let mut page = call_value(shared.clone(), "tools/list", params).await?;
            if let Some(Value::Array(list)) = page.get_mut("tools").map(Value::take) {
                tools.extend(list);
            }
            cursor = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_owned);
            match &cursor {
                None => {
                    let names: HashSet<String> = tools
                        .iter()
                        .filter_map(|t| t.get("name")?.as_str().map(str::to_owned))
                        .collect();
                    shared.tools.retain(&names);
                    return Ok(tools);
                }
                Some(c) if !seen_cursors.insert(c.clone()) => {
                    return Err(TransportError::PeerMisbehaved(
                        Misbehaviour::RepeatedCursor {
                            method: "tools/list".into(),
                            cursor: c.clone(),
                        },
                    ));
                }
                Some(_) => {}
            }
        }
        Err(TransportError::Limit(format!(
            "tools/list has more than {MAX_TOOL_PAGES} pages"
        )))
    })
}
