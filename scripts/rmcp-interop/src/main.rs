//! An rmcp 3.11.0 client for the interop tests
//! (integration-tests/tests/rmcp_sdk.rs): `rmcp::ServiceExt::serve` over
//! `StreamableHttpClientTransport`, with a `ClientHandler` that records
//! progress notifications (rmcp attaches a progress token to every request).
//!
//! usage: rmcp-interop-client URL COUNT INTERVAL_MS SILENT_MS
//!
//! Connects (initialize), calls `countdown {n: COUNT, interval_ms}`, then
//! `slow {ms: SILENT_MS}` (a tool that sends nothing until it answers), and
//! closes. Prints one JSON summary line on stdout:
//!
//!   {"ok": true, "protocolVersion": "...", "countdown": {"text": "done",
//!    "progress": [1.0, 2.0, ...]}, "slow": {"text": "..."}}
//!
//! and exits 1 on any failure with "ok" false and "error" saying why
//! (including progress that is not each of 1..COUNT exactly once; rmcp
//! runs notification handlers in tasks of their own, so their order is
//! not the wire's and is only reported, as `progressInHandlerOrder`).

use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};

/// Records every progress notification's value.
#[derive(Clone, Default)]
struct Collector {
    progress: Arc<Mutex<Vec<f64>>>,
}

impl ClientHandler for Collector {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params.progress);
    }
}

fn text_of(result: &CallToolResult) -> Result<String, String> {
    if result.is_error == Some(true) {
        return Err(format!("the tool answered an error: {result:?}"));
    }
    let value = serde_json::to_value(result).map_err(|e| e.to_string())?;
    value["content"][0]["text"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("no text content in {value}"))
}

fn args(v: Value) -> Option<serde_json::Map<String, Value>> {
    v.as_object().cloned()
}

async fn run(argv: &[String], summary: &mut Value) -> Result<(), String> {
    let [url, count, interval, silent] = argv else {
        return Err("usage: rmcp-interop-client URL COUNT INTERVAL_MS SILENT_MS".into());
    };
    let count: u64 = count.parse().map_err(|e| format!("COUNT: {e}"))?;
    let interval: u64 = interval.parse().map_err(|e| format!("INTERVAL_MS: {e}"))?;
    let silent: u64 = silent.parse().map_err(|e| format!("SILENT_MS: {e}"))?;
    let collector = Collector::default();
    let transport = StreamableHttpClientTransport::from_uri(url.as_str());
    let client = collector
        .clone()
        .serve(transport)
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    summary["protocolVersion"] = json!(
        client
            .peer_info()
            .map(|info| info.protocol_version.to_string())
    );

    let mut params = CallToolRequestParams::new("countdown");
    params.arguments = args(json!({ "n": count, "interval_ms": interval }));
    let result = client
        .call_tool(params)
        .await
        .map_err(|e| format!("countdown: {e}"))?;
    // rmcp runs each notification handler in a task of its own
    // (`spawn_service_task` in rmcp's service.rs) but hands a response to
    // the caller directly, so the last progress events may be recorded
    // after `call_tool` returned although they came first on the wire.
    // Wait (bounded) for them, and report how many were late.
    let at_result = collector.progress.lock().unwrap().len();
    let settle = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while collector.progress.lock().unwrap().len() < count as usize
        && std::time::Instant::now() < settle
    {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    // For the same reason two handlers may run out of order ([1, 2, 4, 3]
    // was seen once): what the server sent is checked as a set, each value
    // exactly once; the order the handlers ran in is reported beside it.
    let handled = collector.progress.lock().unwrap().clone();
    let mut progress = handled.clone();
    progress.sort_by(f64::total_cmp);
    summary["countdown"] = json!({
        "text": text_of(&result)?,
        "progress": progress,
        "progressInHandlerOrder": handled,
        "progressAfterResult": handled.len() - at_result,
    });
    let want: Vec<f64> = (1..=count).map(|n| n as f64).collect();
    if progress != want {
        return Err(format!(
            "progress {handled:?} is not each of {want:?} exactly once"
        ));
    }

    if silent > 0 {
        let mut params = CallToolRequestParams::new("slow");
        params.arguments = args(json!({ "ms": silent }));
        let result = client
            .call_tool(params)
            .await
            .map_err(|e| format!("slow: {e}"))?;
        summary["slow"] = json!({ "text": text_of(&result)? });
    }
    client.cancel().await.map_err(|e| format!("closing: {e}"))?;
    Ok(())
}

#[tokio::main]
async fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut summary = json!({ "ok": false, "protocolVersion": null });
    match run(&argv, &mut summary).await {
        Ok(()) => summary["ok"] = json!(true),
        Err(e) => summary["error"] = json!(e),
    }
    println!("{summary}");
    std::process::exit(if summary["ok"] == true { 0 } else { 1 });
}
