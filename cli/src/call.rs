//! `mcp-compat call`: one request from the reference client.

use std::time::Duration;

use clap::Args;
use mcp_negotiate::client::{Connection, NegotiateConfig, Underlying, connect};
use mcp_transport_core::jsonrpc::{Message, to_raw};
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport};
use serde_json::{Value, json};

use crate::revisions;

/// Options of `mcp-compat call`.
#[derive(Args, Debug, Clone)]
pub struct CallArgs {
    /// The MCP endpoint URL.
    pub url: String,
    /// Revisions the client may use, most preferred first, or `auto`.
    #[arg(long, default_value = "auto")]
    pub revisions: String,
    /// Call this tool (`tools/call`).
    #[arg(long, conflicts_with = "method", required_unless_present = "method")]
    pub tool: Option<String>,
    /// The tool's arguments, as a JSON object.
    #[arg(long, default_value = "{}", requires = "tool")]
    pub args: String,
    /// Send this method instead of a tool call.
    #[arg(long)]
    pub method: Option<String>,
    /// The method's params, as a JSON object.
    #[arg(long, requires = "method")]
    pub params: Option<String>,
    /// Overall timeout in ms.
    #[arg(long, default_value_t = 60_000)]
    pub timeout_ms: u64,
    /// Print `revision: REV`, then every message received, on stderr
    /// (with `--tasks`, each task status as a `notifications/tasks`).
    #[arg(short, long)]
    pub verbose: bool,
    /// Run the tool as a task where the server allows it. 2026-07-28:
    /// declares the Tasks extension (`io.modelcontextprotocol/tasks`), and
    /// a server may answer with a task, polled to its end. 2025-11-25: when
    /// the server declares `tasks.requests.tools.call` and lists the tool
    /// with `execution.taskSupport` `optional` or `required`, the call
    /// carries `params.task` and the task is followed through
    /// `tasks/result` (each status as a `notifications/tasks/status`).
    #[arg(long)]
    pub tasks: bool,
}

fn json_object(what: &str, text: &str) -> Result<Value, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("{what} is not JSON: {e}"))?;
    if !v.is_object() {
        return Err(format!("{what} must be a JSON object"));
    }
    Ok(v)
}

/// For a `tools/call` whose result has `isError: true` (a tool execution
/// error, *Tools*, "Error Handling"), the message to fail with: the tool's
/// name and its text content.
fn tool_error(tool: Option<&str>, result: &str) -> Option<String> {
    let tool = tool?;
    let v: Value = serde_json::from_str(result).ok()?;
    if v.get("isError") != Some(&Value::Bool(true)) {
        return None;
    }
    let texts: Vec<&str> = v["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    Some(format!(
        "tool {tool} reported an error (isError): {}",
        texts.join(" ")
    ))
}

/// Whether a 2025-11-25 session's server runs `tool` as a task: it declares
/// `tasks.requests.tools.call` and lists the tool with
/// `execution.taskSupport` `optional` or `required` (*Tasks*, "Tool-Level
/// Negotiation"). Reads at most 20 pages of `tools/list`.
async fn legacy_task_support(client: &Connection, tool: &str) -> bool {
    let Underlying::Legacy(legacy) = client.underlying() else {
        return false;
    };
    let caps = &legacy.initialize_result().capabilities;
    if !caps["tasks"]["requests"]["tools"]["call"].is_object() {
        return false;
    }
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let params = cursor
            .as_ref()
            .and_then(|c| to_raw(&json!({ "cursor": c })).ok());
        let Ok(stream) = client
            .request("tools/list", params, RequestOptions::default())
            .await
        else {
            return false;
        };
        let Ok(Ok(page)) = stream
            .response()
            .await
            .map(|r| r.payload.map(|p| serde_json::from_str::<Value>(p.get())))
        else {
            return false;
        };
        let Ok(page) = page else { return false };
        if let Some(t) = page["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["name"] == tool)
        {
            return matches!(
                t["execution"]["taskSupport"].as_str(),
                Some("optional" | "required")
            );
        }
        match page["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => return false,
        }
    }
    false
}

/// Runs one call; returns the result JSON text.
pub async fn run(args: CallArgs) -> Result<String, String> {
    let versions = revisions::parse_spoken(&args.revisions)?;
    let (method, params) = match (&args.tool, &args.method) {
        (Some(tool), _) => (
            "tools/call".to_owned(),
            Some(json!({ "name": tool, "arguments": json_object("--args", &args.args)? })),
        ),
        (None, Some(m)) => (
            m.clone(),
            args.params
                .as_deref()
                .map(|p| json_object("--params", p))
                .transpose()?,
        ),
        (None, None) => return Err("give --tool or --method".into()),
    };
    let timeout = Duration::from_millis(args.timeout_ms);
    let work = async {
        let mut cfg = NegotiateConfig::new(args.url.clone()).with_revisions(versions);
        if args.tasks {
            cfg = cfg.with_capabilities(
                json!({ "extensions": { "io.modelcontextprotocol/tasks": {} } }),
            );
        }
        let client = connect(cfg)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        if args.verbose {
            eprintln!("revision: {}", client.revision());
            eprintln!("negotiated: {}", client.negotiated().reason);
        }
        let mut params = params;
        if args.tasks
            && method == "tools/call"
            && let Some(p) = params.as_mut()
            && legacy_task_support(&client, args.tool.as_deref().unwrap_or_default()).await
        {
            p["task"] = json!({});
        }
        let params = params
            .map(|p| to_raw(&p))
            .transpose()
            .map_err(|e| e.to_string())?;
        let options = RequestOptions {
            progress: true,
            ..RequestOptions::default()
        };
        let stream = client
            .request(&method, params, options)
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        let verbose = args.verbose;
        let response = stream
            .response_with(|ev| {
                if verbose {
                    let m = match ev {
                        StreamEvent::Notification(n) => Message::Notification(n.clone()),
                        StreamEvent::ServerRequest(r) => Message::Request(r.clone()),
                        StreamEvent::Response(r) => Message::Response(r.clone()),
                    };
                    eprintln!("{}", m.to_json());
                }
            })
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        if verbose {
            eprintln!("{}", Message::Response(response.clone()).to_json());
        }
        let _ = client.close().await;
        match response.payload {
            Ok(result) => match tool_error(args.tool.as_deref(), result.get()) {
                Some(message) => Err(message),
                None => Ok(result.get().to_owned()),
            },
            Err(e) => Err(format!("server answered with an error: {e}")),
        }
    };
    tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| format!("timed out after {} ms", args.timeout_ms))?
}
