//! Driving a [`Call`]: [`open`] and [`next`] step it and run the
//! `tools/list` refresh its `HeaderMismatch` answers ask for (a refresh is
//! calls of its own, so the call cannot run it itself: it returns
//! [`Step::RefreshTools`] and this layer decides); the JSON result of one
//! method (`server/discover`, one `tools/list` page); the full `tools/list`
//! refresh behind `list_tools`.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_transport_core::jsonrpc::Response;
use mcp_transport_core::transport::{
    LimitExceeded, Misbehaviour, RequestOptions, StreamEvent, TransportError,
};
use serde_json::{Map, Value};

use super::request::{Call, Step};
use super::shared::Shared;

/// The most `tools/list` pages fetched by one refresh.
const MAX_TOOL_PAGES: usize = 100;

/// Opens `call` ([`Call::open_first`]): returns once an answer is open,
/// after the `tools/list` refresh and retry a `HeaderMismatch` refusal asks
/// for.
pub(crate) async fn open(call: &mut Call) -> Result<(), TransportError> {
    loop {
        call.open_first().await?;
        let Some(mismatch) = call.take_refresh() else {
            return Ok(());
        };
        refresh_or_end(call, mismatch).await;
    }
}

/// The next event of `call`; `None` after the response or an error.
pub(crate) async fn next(call: &mut Call) -> Option<Result<StreamEvent, TransportError>> {
    loop {
        match call.next_step().await? {
            Ok(Step::Event(event)) => return Some(Ok(event)),
            Ok(Step::RefreshTools(mismatch)) => refresh_or_end(call, mismatch).await,
            Err(e) => return Some(Err(e)),
        }
    }
}

/// Refreshes `tools/list` so that `call` retries with the new schemas; when
/// the refresh fails, `call` ends with the `HeaderMismatch` answer it got.
async fn refresh_or_end(call: &mut Call, mismatch: Response) {
    if let Err(e) = list_all_tools(call.shared()).await {
        tracing::warn!(
            error = %e,
            "refreshing tools/list after HeaderMismatch failed; returning the HeaderMismatch error"
        );
        call.end_with(mismatch);
    }
}

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
    open(&mut call).await?;
    loop {
        match next(&mut call).await {
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
        Err(TransportError::Limit(LimitExceeded::new(
            "the tools/list pages one refresh fetches",
            MAX_TOOL_PAGES as u64,
            "tools/list",
        )))
    })
}
