//! `check-server` against servers whose behaviour we know: our own
//! `MultiServer` (every check passes, or is honestly not applicable or
//! inconclusive) and the same server behind a wrapper that breaks exactly
//! one behaviour (that check, and only that check, fails). Plus the quirk
//! list for a server that calls itself rmcp 0.8.0, and the binary run
//! against `mcp-compat serve`.
//!
//! Every server listens on 127.0.0.1:0 and lives as long as its test.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, Request, Response, StatusCode};
use axum::routing::any;
use futures_util::StreamExt;
use mcp_compat::check::{
    self, CheckOptions, FailOn, Level, Observation, Outcome, Report, SlowTool, ToolCall, id,
};
use mcp_compat::serve::{self, ServeArgs};
use mcp_test_support::process::{Listening, run_to_end};

mod common;

use common::serve_args;
use mcp_negotiate::server::MultiServer;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::{
    Handler, Outcome as HOutcome, RequestContext, ServerDescription,
};
use mcp_transport_core::jsonrpc::{Notification, Request as RpcRequest};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-compat");

/// What the wrapper breaks (one thing each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Break {
    Nothing,
    /// Drops the priming event of every POST stream.
    StripPriming,
    /// A resume first sends the `Last-Event-ID` event again.
    RepeatLastEvent,
    /// A resume the server refuses becomes 200 with an empty stream.
    EmptyResume,
    /// A modern GET (no session) gets 200 and an empty SSE stream.
    GetStream,
    /// `Mcp-Method` is rewritten to match the body, so a mismatch passes.
    SkipMethodValidation,
    /// DELETE answers 200 and leaves the session alive.
    KeepAfterDelete,
    /// `Origin` is removed before the server sees it.
    IgnoreOrigin,
    /// Streams of pre-2025-11-25 sessions get a priming event.
    PrimeOlder,
    /// Every priming event has the id `0`.
    FixedPrimingId,
    /// `retry` lines are removed.
    StripRetry,
    /// A resumed (GET) stream loses its empty-data events: an early close
    /// of a poll that found nothing leaves no id.
    StripResumedIds,
    /// A malformed `MCP-Protocol-Version` is removed (served at the session's version).
    IgnoreMalformedVersion,
    /// A POST without `Accept` gets one.
    IgnoreAccept,
    /// A resume also replays the messages of every other stream seen.
    CrossStream,
    /// `-32022` errors lose their `data`.
    BareUnsupported,
    /// A legacy POST without a session gets 404 instead of 400.
    NoSessionNotFound,
    /// Every GET is answered 405 (as rmcp in stateless mode does).
    NoGet,
    /// 2025-11-25 tasks: `taskSupport: "optional"` is listed as `"sometimes"`.
    TaskBadSupport,
    /// The `CreateTaskResult`'s task loses its `ttl`.
    TaskCreateWithoutTtl,
    /// `tasks/get` answers lose their `ttl`.
    TaskGetWithoutTtl,
    /// `tasks/result` of a created task is answered at once, with a made-up
    /// result (the related-task `_meta` included), while the task works on.
    TaskResultEarly,
    /// `tasks/result` answers lose the related-task `_meta`.
    TaskResultWithoutMeta,
    /// `tasks/list` answers list nothing.
    TaskListEmpty,
    /// `tasks/cancel` of a created task that the server refuses with
    /// `-32602` (it is terminal) is answered as if cancelled.
    TaskCancelTerminalOk,
    /// `tasks/get` of a task never created answers a working task.
    TaskUnknownIdFound,
    /// A task-augmented `tools/call` of `echo` (taskSupport absent) loses
    /// its `params.task`, so the tool runs.
    TaskForbiddenRuns,
    /// A `tools/call` of `failing_job` (taskSupport required) without a
    /// task gets one added, so a task is created.
    TaskRequiredRuns,
    /// `initialize` declares `tasks` without `requests` (no
    /// `tasks.requests.tools.call`), but the server still creates tasks.
    TaskUndeclared,
}

struct Wrapped {
    server: MultiServer,
    brk: Break,
    /// SSE blocks seen, with their event ids, in order (for
    /// `RepeatLastEvent` and `CrossStream`).
    seen: Mutex<Vec<(String, String)>>,
    /// The task ids of the `CreateTaskResult`s passed on (for the task
    /// breaks).
    created: Arc<Mutex<Vec<String>>>,
}

fn is_sse(resp: &Response<Body>) -> bool {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

fn empty_sse() -> Response<Body> {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .body(Body::empty())
        .unwrap()
}

/// The id an SSE block sets, if any.
fn block_id(block: &str) -> Option<&str> {
    block
        .lines()
        .find_map(|l| l.strip_prefix("id:"))
        .map(str::trim_start)
}

/// A block that is only an id and an empty `data`.
fn is_priming(block: &str) -> bool {
    block_id(block).is_some()
        && block.lines().any(|l| l == "data:" || l == "data: ")
        && !block
            .lines()
            .any(|l| l.starts_with("data:") && !l[5..].trim().is_empty())
}

/// Rewrites an SSE body block by block (`\n\n`-separated); `f` gets the
/// block's index and text and returns what to send instead.
fn map_blocks(
    resp: Response<Body>,
    mut f: impl FnMut(usize, &str) -> Option<String> + Send + 'static,
) -> Response<Body> {
    let (parts, body) = resp.into_parts();
    let mut buf = String::new();
    let mut index = 0;
    let stream = body.into_data_stream().map(move |chunk| {
        let chunk = chunk?;
        buf.push_str(&String::from_utf8_lossy(&chunk));
        let mut out = String::new();
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            if let Some(b) = f(index, &block) {
                out.push_str(&b);
            }
            index += 1;
        }
        Ok::<_, axum::Error>(Bytes::from(out))
    });
    Response::from_parts(parts, Body::from_stream(stream))
}

/// Remembers every block with an id (for `RepeatLastEvent`, `CrossStream`).
fn tap(w: &Arc<Wrapped>, resp: Response<Body>) -> Response<Body> {
    let w = w.clone();
    map_blocks(resp, move |_, block| {
        if let Some(id) = block_id(block) {
            let entry = (id.to_owned(), block.to_owned());
            w.seen.lock().unwrap().push(entry);
        }
        Some(block.to_owned())
    })
}

/// Rewrites every JSON-RPC message of a JSON or SSE body with `f`.
async fn map_messages(
    resp: Response<Body>,
    f: impl Fn(&mut Value) + Send + Sync + 'static,
) -> Response<Body> {
    if is_sse(&resp) {
        return map_blocks(resp, move |_, block| {
            let lines: Vec<String> = block
                .lines()
                .map(|l| match l.strip_prefix("data:").map(str::trim_start) {
                    Some(d) if !d.is_empty() => match serde_json::from_str::<Value>(d) {
                        Ok(mut v) => {
                            f(&mut v);
                            format!("data: {v}")
                        }
                        Err(_) => l.to_owned(),
                    },
                    _ => l.to_owned(),
                })
                .collect();
            Some(format!("{}\n\n", lines.join("\n")))
        });
    }
    let (mut parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    parts.headers.remove("content-length");
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut v) => {
            f(&mut v);
            Response::from_parts(parts, Body::from(v.to_string()))
        }
        Err(_) => Response::from_parts(parts, Body::from(bytes)),
    }
}

/// A JSON answer to request `id`.
fn rpc_result(id: &Value, result: Value) -> Response<Body> {
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(
            json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string(),
        ))
        .unwrap()
}

/// A made-up task, as the schema has it.
fn fake_task(task_id: &str, status: &str) -> Value {
    json!({
        "taskId": task_id, "status": status,
        "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
        "ttl": 60000, "pollInterval": 500
    })
}

/// The task breaks that answer in the server's place (`None`: forward).
fn task_intercept(w: &Wrapped, rpc: &Value) -> Option<Response<Body>> {
    let method = rpc["method"].as_str()?;
    let task_id = rpc.pointer("/params/taskId").and_then(Value::as_str);
    let created = task_id.is_some_and(|t| w.created.lock().unwrap().iter().any(|c| c == t));
    match (w.brk, method) {
        (Break::TaskResultEarly, "tasks/result") if created => Some(rpc_result(
            &rpc["id"],
            json!({
                "content": [{ "type": "text", "text": "early" }],
                "_meta": { "io.modelcontextprotocol/related-task": { "taskId": task_id } }
            }),
        )),
        (Break::TaskUnknownIdFound, "tasks/get") if !created => Some(rpc_result(
            &rpc["id"],
            fake_task(task_id.unwrap_or_default(), "working"),
        )),
        _ => None,
    }
}

/// The task breaks that change the request: `true` when `rpc` changed.
fn task_request(brk: Break, rpc: &mut Value) -> bool {
    if rpc["method"] != "tools/call" {
        return false;
    }
    let has_task = rpc.pointer("/params/task").is_some();
    match (brk, rpc.pointer("/params/name").and_then(Value::as_str)) {
        (Break::TaskForbiddenRuns, Some("echo")) if has_task => {
            rpc["params"].as_object_mut().unwrap().remove("task");
            true
        }
        (Break::TaskRequiredRuns, Some("failing_job")) if !has_task => {
            rpc["params"]["task"] = json!({});
            true
        }
        _ => false,
    }
}

/// Records created tasks, and the task breaks that change an answer.
async fn task_response(w: &Wrapped, rpc: &Value, resp: Response<Body>) -> Response<Body> {
    let method = rpc["method"].as_str().unwrap_or_default().to_owned();
    let task_call = method == "tools/call" && rpc.pointer("/params/task").is_some();
    let brk = w.brk;
    let created = w.created.clone();
    let req_task = rpc
        .pointer("/params/taskId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let interesting = task_call
        || matches!(
            (brk, method.as_str()),
            (Break::TaskBadSupport, "tools/list")
                | (Break::TaskGetWithoutTtl, "tasks/get")
                | (Break::TaskResultWithoutMeta, "tasks/result")
                | (Break::TaskListEmpty, "tasks/list")
                | (Break::TaskCancelTerminalOk, "tasks/cancel")
                | (Break::TaskUndeclared, "initialize")
        );
    if !interesting {
        return resp;
    }
    map_messages(resp, move |m| {
        if task_call && let Some(id) = m.pointer("/result/task/taskId").and_then(Value::as_str) {
            created.lock().unwrap().push(id.to_owned());
        }
        match (brk, method.as_str()) {
            (Break::TaskBadSupport, "tools/list") => {
                for t in m["result"]["tools"].as_array_mut().into_iter().flatten() {
                    if t.pointer("/execution/taskSupport") == Some(&json!("optional")) {
                        t["execution"]["taskSupport"] = json!("sometimes");
                    }
                }
            }
            (Break::TaskCreateWithoutTtl, "tools/call") => {
                if let Some(t) = m.pointer_mut("/result/task").and_then(Value::as_object_mut) {
                    t.remove("ttl");
                }
            }
            (Break::TaskGetWithoutTtl, "tasks/get") => {
                if let Some(t) = m.get_mut("result").and_then(Value::as_object_mut) {
                    t.remove("ttl");
                }
            }
            (Break::TaskResultWithoutMeta, "tasks/result") => {
                if let Some(meta) = m.pointer_mut("/result/_meta").and_then(Value::as_object_mut) {
                    meta.remove("io.modelcontextprotocol/related-task");
                }
            }
            (Break::TaskListEmpty, "tasks/list") => {
                if let Some(r) = m.get_mut("result").and_then(Value::as_object_mut) {
                    r.insert("tasks".into(), json!([]));
                    r.remove("nextCursor");
                }
            }
            (Break::TaskCancelTerminalOk, "tasks/cancel") => {
                // Only for tasks that exist: an unknown id keeps its error.
                let exists = created.lock().unwrap().contains(&req_task);
                if exists && m.pointer("/error/code") == Some(&json!(-32602)) {
                    let id = m["id"].clone();
                    *m = json!({ "jsonrpc": "2.0", "id": id, "result": fake_task(&req_task, "cancelled") });
                }
            }
            (Break::TaskUndeclared, "initialize") => {
                if let Some(t) = m
                    .pointer_mut("/result/capabilities/tasks")
                    .and_then(Value::as_object_mut)
                {
                    t.remove("requests");
                }
            }
            _ => {}
        }
    })
    .await
}

async fn handle(w: Arc<Wrapped>, req: Request<Body>) -> Response<Body> {
    let (mut parts, body) = req.into_parts();
    let mut body = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let mut rpc: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if let Some(resp) = task_intercept(&w, &rpc) {
        return resp;
    }
    if task_request(w.brk, &mut rpc) {
        body = Bytes::from(rpc.to_string());
        parts.headers.remove("content-length");
    }
    let has_session = parts.headers.contains_key("mcp-session-id");
    let last_event_id = parts
        .headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let modern_body = rpc
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .is_some();
    let get = parts.method == axum::http::Method::GET;
    let post = parts.method == axum::http::Method::POST;
    match w.brk {
        Break::GetStream if get && !has_session => {
            let modern = parts
                .headers
                .get("mcp-protocol-version")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| ProtocolVersion::parse(v).is_modern());
            if modern {
                return empty_sse();
            }
        }
        Break::SkipMethodValidation if post && modern_body => {
            if let Some(m) = rpc["method"].as_str() {
                parts
                    .headers
                    .insert("mcp-method", HeaderValue::from_str(m).unwrap());
            }
        }
        Break::NoGet if get => {
            return Response::builder()
                .status(StatusCode::METHOD_NOT_ALLOWED)
                .body(Body::empty())
                .unwrap();
        }
        Break::KeepAfterDelete if parts.method == axum::http::Method::DELETE => {
            return Response::new(Body::empty());
        }
        Break::IgnoreOrigin => {
            parts.headers.remove("origin");
        }
        Break::IgnoreMalformedVersion => {
            let malformed = parts
                .headers
                .get("mcp-protocol-version")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| !ProtocolVersion::parse(v).is_well_formed());
            if malformed {
                parts.headers.remove("mcp-protocol-version");
            }
        }
        Break::IgnoreAccept if !parts.headers.contains_key("accept") => {
            parts.headers.insert(
                "accept",
                HeaderValue::from_static("application/json, text/event-stream"),
            );
        }
        Break::NoSessionNotFound
            if post && !has_session && !modern_body && rpc["method"] != "initialize" =>
        {
            return Response::builder()
                .status(StatusCode::NOT_FOUND)
                .body(Body::empty())
                .unwrap();
        }
        _ => {}
    }
    let version_header = parts
        .headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let req = Request::from_parts(parts, Body::from(body));
    let resp = w.server.handle(req).await;
    let sse = is_sse(&resp);
    match w.brk {
        Break::StripPriming if post && sse => map_blocks(resp, |i, b| {
            (i != 0 || !is_priming(b)).then(|| b.to_owned())
        }),
        Break::FixedPrimingId if post && sse => map_blocks(resp, |i, b| {
            Some(if i == 0 && is_priming(b) {
                "id: 0\ndata:\n\n".to_owned()
            } else {
                b.to_owned()
            })
        }),
        Break::PrimeOlder if post && sse && has_session => {
            if version_header.as_deref() == Some("2025-11-25") {
                return resp;
            }
            map_blocks(resp, |i, b| {
                Some(if i == 0 {
                    format!("id: injected-0\ndata:\n\n{b}")
                } else {
                    b.to_owned()
                })
            })
        }
        Break::StripResumedIds if get && sse => {
            map_blocks(resp, |_, b| (!is_priming(b)).then(|| b.to_owned()))
        }
        Break::StripRetry if sse => map_blocks(resp, |_, b| {
            let kept: Vec<&str> = b.lines().filter(|l| !l.starts_with("retry:")).collect();
            Some(format!("{}\n\n", kept.join("\n")).replace("\n\n\n", "\n\n"))
        }),
        Break::RepeatLastEvent if sse => {
            let resp = tap(&w, resp);
            let Some(last) = last_event_id.filter(|_| get) else {
                return resp;
            };
            let seen = w.seen.lock().unwrap().clone();
            let Some((_, block)) = seen.into_iter().find(|(id, _)| *id == last) else {
                return resp;
            };
            let (parts, body) = resp.into_parts();
            let first = futures_util::stream::once(async move { Ok(Bytes::from(block)) });
            Response::from_parts(
                parts,
                Body::from_stream(first.chain(body.into_data_stream())),
            )
        }
        Break::CrossStream if sse => {
            let resp = tap(&w, resp);
            let Some(last) = last_event_id.filter(|_| get) else {
                return resp;
            };
            // Our ids are `tag.stream.seq`: append the messages of the
            // other streams, as a server that resumes by global position would.
            let stream_of = |id: &str| id.split('.').nth(1).map(str::to_owned);
            let here = stream_of(&last);
            let others: String = w
                .seen
                .lock()
                .unwrap()
                .iter()
                .filter(|(id, b)| stream_of(id) != here && !is_priming(b))
                .map(|(_, b)| b.clone())
                .collect();
            let (parts, body) = resp.into_parts();
            let tail = futures_util::stream::once(async move { Ok(Bytes::from(others)) });
            Response::from_parts(
                parts,
                Body::from_stream(body.into_data_stream().chain(tail)),
            )
        }
        Break::EmptyResume if get && last_event_id.is_some() && resp.status().is_client_error() => {
            empty_sse()
        }
        Break::BareUnsupported if resp.status() == StatusCode::BAD_REQUEST => {
            let (parts, body) = resp.into_parts();
            let bytes = axum::body::to_bytes(body, 1 << 20)
                .await
                .unwrap_or_default();
            let mut v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            if v.pointer("/error/code") == Some(&json!(-32022))
                && let Some(e) = v.get_mut("error").and_then(Value::as_object_mut)
            {
                e.remove("data");
            }
            Response::from_parts(parts, Body::from(v.to_string()))
        }
        _ => task_response(&w, &rpc, resp).await,
    }
}

/// Serves `server` behind the wrapper; returns the endpoint URL. The
/// server task ends with the test's runtime.
async fn start(server: MultiServer, brk: Break) -> String {
    let w = Arc::new(Wrapped {
        server,
        brk,
        seen: Mutex::new(Vec::new()),
        created: Arc::default(),
    });
    let app = Router::new().route(
        "/mcp",
        any(move |req: Request<Body>| handle(w.clone(), req)),
    );
    mcp_test_support::TestServer::serve(app).await.detach()
}

/// Our reference server (`serve`'s configuration and handler).
fn reference(args: &ServeArgs) -> MultiServer {
    MultiServer::try_new(serve::handler(), serve::config(args).unwrap()).unwrap()
}

/// The tools the 2025-11-25 task checks may call: `slow` (taskSupport
/// optional) for `ms`, `echo` (absent) and `failing_job` (required).
fn task_tools(ms: u64) -> Vec<ToolCall> {
    vec![
        format!("slow={{\"ms\":{ms}}}").parse().unwrap(),
        r#"echo={"text":"hi"}"#.parse().unwrap(),
        "failing_job".parse().unwrap(),
    ]
}

fn options() -> CheckOptions {
    CheckOptions {
        timeout: Duration::from_secs(5),
        tools: task_tools(200),
        ..CheckOptions::default()
    }
}

fn slow_options() -> CheckOptions {
    CheckOptions {
        slow_tool: Some(SlowTool {
            name: "slow".into(),
            arguments: json!({ "ms": 20_000 }),
            cancel_count_tool: Some("cancelled_count".into()),
        }),
        ..options()
    }
}

async fn check_with(brk: Break, args: &ServeArgs, opts: CheckOptions) -> Report {
    let url = start(reference(args), brk).await;
    check::run(&url, opts).await.unwrap()
}

fn shown(r: &Report) -> String {
    check::report::render(r, check::report::Format::Table)
}

fn outcome<'a>(r: &'a Report, id: &str, rev: ProtocolVersion) -> &'a Outcome {
    &r.find(id, &rev)
        .unwrap_or_else(|| panic!("{id} did not run at {rev}\n{}", shown(r)))
        .outcome
}

/// Exactly the check `id` failed (at one or more revisions), nothing else.
fn assert_only_fails(r: &Report, id: &str) {
    let failures = r.failures();
    assert!(!failures.is_empty(), "{id} should fail\n{}", shown(r));
    assert!(
        failures.iter().all(|c| c.id == id),
        "only {id} should fail\n{}",
        shown(r)
    );
    assert!(!r.passed());
}

/// Our server speaks all four revisions and gets every behaviour right:
/// every check passes except the two that cannot be observed here
/// (`retry-before-close`: the server never closes early by default).
#[tokio::test]
async fn our_server_passes_every_check() {
    let r = check_with(Break::Nothing, &serve_args(), slow_options()).await;
    assert_eq!(
        r.speaks(),
        ProtocolVersion::STREAMABLE.to_vec(),
        "{}",
        shown(&r)
    );
    assert!(r.passed(), "{}", shown(&r));
    for c in &r.checks {
        // Without an early close, neither rule comes into play.
        if c.id == id::RETRY_BEFORE_CLOSE || c.id == id::RESUMED_CLOSE_CARRIES_ID {
            assert!(
                matches!(c.outcome, Outcome::Inconclusive(_)),
                "{}",
                shown(&r)
            );
        } else if c.id == id::TASKS_UNDECLARED_IGNORED {
            // It declares tasks.requests.tools.call, and says so.
            assert!(
                matches!(&c.outcome, Outcome::NotApplicable(why) if why.contains("declares tasks.requests.tools.call")),
                "{}",
                shown(&r)
            );
        } else {
            assert_eq!(
                c.outcome,
                Outcome::Pass,
                "{} at {}\n{}",
                c.id,
                c.revision,
                shown(&r)
            );
        }
    }
    // Every check ran at every revision it belongs to.
    for i in id::ALL {
        assert!(
            r.checks.iter().any(|c| c.id == i),
            "{i} never ran\n{}",
            shown(&r)
        );
    }
    let peer = r.peer.as_ref().expect("serverInfo seen");
    assert_eq!(peer.name, "mcp-compat");
    assert!(peer.semver.is_some());
    assert!(r.quirks.is_empty());
}

/// A polling server (`--disconnect after-priming`) closes streams early and
/// sends `retry` first: now `retry-before-close` is observed, and passes.
#[tokio::test]
async fn a_polling_server_passes_the_retry_check() {
    let mut args = serve_args();
    args.revisions = "2025-11-25".into();
    args.disconnect = Some("after-priming".parse().unwrap());
    args.retry_ms = Some(50);
    let r = check_with(Break::Nothing, &args, options()).await;
    assert_eq!(r.speaks(), [ProtocolVersion::V2025_11_25], "{}", shown(&r));
    assert!(r.passed(), "{}", shown(&r));
    assert_eq!(
        outcome(&r, id::RETRY_BEFORE_CLOSE, ProtocolVersion::V2025_11_25),
        &Outcome::Pass,
        "{}",
        shown(&r)
    );
    // Every answer, the blocking tasks/result's too, came by resumption.
    for i in [id::TASKS_CREATE, id::TASKS_RESULT_BLOCKS, id::TASKS_LIST] {
        assert_eq!(
            outcome(&r, i, ProtocolVersion::V2025_11_25),
            &Outcome::Pass,
            "{i}\n{}",
            shown(&r)
        );
    }
}

/// A polling server that does not hold resumes closes an empty poll at
/// once; it leaves a fresh id first, so the check passes. Without those ids
/// (stripped on the way) the check warns, naming the stranded clients, and
/// the report still passes: the spec does not require the id.
#[tokio::test]
async fn an_empty_poll_closed_without_an_id_is_a_warning() {
    let mut args = serve_args();
    args.revisions = "2025-11-25".into();
    args.disconnect = Some("after-priming".parse().unwrap());
    args.retry_ms = Some(50);
    args.resume_hold_ms = Some(0);
    let r = check_with(Break::Nothing, &args, slow_options()).await;
    assert_eq!(
        outcome(
            &r,
            id::RESUMED_CLOSE_CARRIES_ID,
            ProtocolVersion::V2025_11_25
        ),
        &Outcome::Pass,
        "{}",
        shown(&r)
    );
    let r = check_with(Break::StripResumedIds, &args, slow_options()).await;
    let o = outcome(
        &r,
        id::RESUMED_CLOSE_CARRIES_ID,
        ProtocolVersion::V2025_11_25,
    );
    assert!(
        matches!(o, Outcome::Warn(why) if why.contains("TypeScript SDK")),
        "{}",
        shown(&r)
    );
    assert!(r.passed(), "{}", shown(&r));
}

/// A server that answers every GET 405 (rmcp in stateless mode) refuses
/// no unknown id in particular, so `failed-resume-4xx` is not applicable
/// (and says why), never a pass; the replay checks could not resume at all.
#[tokio::test]
async fn a_server_without_get_does_not_pass_failed_resume() {
    let r = broken_tasks(Break::NoGet, 200).await;
    let o = outcome(&r, id::FAILED_RESUME_4XX, ProtocolVersion::V2025_11_25);
    assert!(
        matches!(o, Outcome::NotApplicable(why) if why.contains("405")),
        "{}",
        shown(&r)
    );
    for i in [id::RESUME_SAME_STREAM, id::EXCLUSIVE_REPLAY] {
        assert!(
            matches!(
                outcome(&r, i, ProtocolVersion::V2025_11_25),
                Outcome::Inconclusive(_)
            ),
            "{i}\n{}",
            shown(&r)
        );
    }
}

/// A JSON-mode server gives no stream to look at: the SSE checks are
/// inconclusive, not failed.
#[tokio::test]
async fn a_json_server_is_inconclusive_not_failed() {
    let mut args = serve_args();
    args.json_response = true;
    let r = check_with(Break::Nothing, &args, options()).await;
    assert!(r.passed(), "{}", shown(&r));
    assert!(matches!(
        outcome(&r, id::PRIMING_EVENT, ProtocolVersion::V2025_11_25),
        Outcome::Inconclusive(_)
    ));
    assert!(matches!(
        outcome(&r, id::CANCEL_ON_CLOSE, ProtocolVersion::V2026_07_28),
        Outcome::NotApplicable(_)
    ));
}

/// A server of one legacy revision counter-offers the others and refuses
/// the modern probe; only its own revision's checks run.
#[tokio::test]
async fn a_single_revision_server_counter_offers() {
    let mut args = serve_args();
    args.revisions = "2025-06-18".into();
    let r = check_with(Break::Nothing, &args, options()).await;
    assert_eq!(r.speaks(), [ProtocolVersion::V2025_06_18], "{}", shown(&r));
    let answer = |v: ProtocolVersion| {
        r.revisions
            .iter()
            .find(|p| p.revision == v)
            .map(|p| p.answer)
            .unwrap()
    };
    assert_eq!(
        answer(ProtocolVersion::V2025_11_25),
        check::ProbeAnswer::CounterOffered
    );
    assert_eq!(
        answer(ProtocolVersion::V2026_07_28),
        check::ProbeAnswer::Refused
    );
    assert!(
        r.checks
            .iter()
            .all(|c| c.revision == ProtocolVersion::V2025_06_18)
    );
    assert!(r.passed(), "{}", shown(&r));
}

async fn broken(brk: Break) -> Report {
    check_with(brk, &serve_args(), options()).await
}

/// `brk` at 2025-11-25 only, `slow` working `ms`.
async fn broken_tasks(brk: Break, ms: u64) -> Report {
    let opts = CheckOptions {
        revisions: vec![ProtocolVersion::V2025_11_25],
        tools: task_tools(ms),
        ..options()
    };
    check_with(brk, &serve_args(), opts).await
}

/// The 2025-11-25 task checks at `r`, each with its outcome.
fn task_outcomes(r: &Report) -> Vec<(&'static str, &Outcome)> {
    r.checks
        .iter()
        .filter(|c| c.revision == ProtocolVersion::V2025_11_25 && c.id.starts_with("tasks-"))
        .map(|c| (c.id, &c.outcome))
        .collect()
}

#[tokio::test]
async fn an_unknown_task_support_value_fails_tasks_support_values() {
    let r = broken_tasks(Break::TaskBadSupport, 200).await;
    assert_only_fails(&r, id::TASKS_SUPPORT_VALUES);
}

#[tokio::test]
async fn a_create_task_result_without_ttl_fails_tasks_create() {
    let r = broken_tasks(Break::TaskCreateWithoutTtl, 200).await;
    assert_only_fails(&r, id::TASKS_CREATE);
    let o = outcome(&r, id::TASKS_CREATE, ProtocolVersion::V2025_11_25);
    assert!(
        matches!(o, Outcome::Fail(why) if why.contains("ttl is missing")),
        "{o:?}"
    );
}

#[tokio::test]
async fn tasks_get_without_ttl_fails_tasks_get() {
    let r = broken_tasks(Break::TaskGetWithoutTtl, 200).await;
    assert_only_fails(&r, id::TASKS_GET);
}

/// `tasks/result` answered while the task still works (it works 3 s).
#[tokio::test]
async fn an_early_tasks_result_fails_tasks_result_blocks() {
    let r = broken_tasks(Break::TaskResultEarly, 3_000).await;
    assert_only_fails(&r, id::TASKS_RESULT_BLOCKS);
}

#[tokio::test]
async fn a_result_without_related_task_fails_tasks_related_task() {
    let r = broken_tasks(Break::TaskResultWithoutMeta, 200).await;
    assert_only_fails(&r, id::TASKS_RELATED_TASK);
}

#[tokio::test]
async fn an_empty_task_list_fails_tasks_list() {
    let r = broken_tasks(Break::TaskListEmpty, 200).await;
    assert_only_fails(&r, id::TASKS_LIST);
}

#[tokio::test]
async fn cancelling_a_terminal_task_fails_tasks_cancel_terminal() {
    let r = broken_tasks(Break::TaskCancelTerminalOk, 200).await;
    assert_only_fails(&r, id::TASKS_CANCEL_TERMINAL);
}

#[tokio::test]
async fn an_unknown_task_found_fails_tasks_unknown_id() {
    let r = broken_tasks(Break::TaskUnknownIdFound, 200).await;
    assert_only_fails(&r, id::TASKS_UNKNOWN_ID);
}

#[tokio::test]
async fn a_forbidden_tool_run_fails_tasks_forbidden_tool() {
    let r = broken_tasks(Break::TaskForbiddenRuns, 200).await;
    assert_only_fails(&r, id::TASKS_FORBIDDEN_TOOL);
}

#[tokio::test]
async fn a_required_tool_run_as_a_task_anyway_fails_tasks_required_tool() {
    let r = broken_tasks(Break::TaskRequiredRuns, 200).await;
    assert_only_fails(&r, id::TASKS_REQUIRED_TOOL);
}

/// Declaring `tasks` without `tasks.requests.tools.call` but creating
/// tasks anyway: that check fails, and the ones about task-augmented calls
/// are not applicable, saying why.
#[tokio::test]
async fn tasks_created_without_the_capability_fail_tasks_undeclared_ignored() {
    let r = broken_tasks(Break::TaskUndeclared, 200).await;
    assert_only_fails(&r, id::TASKS_UNDECLARED_IGNORED);
    let o = outcome(&r, id::TASKS_CREATE, ProtocolVersion::V2025_11_25);
    assert!(
        matches!(o, Outcome::NotApplicable(why) if why.contains("not tasks.requests.tools.call")),
        "{o:?}"
    );
}

/// Without the experimental tasks, every task check is n/a with what
/// `initialize` declared; without tools to call, the checks that need one
/// are n/a naming the tools that would do.
#[tokio::test]
async fn task_checks_are_not_applicable_for_the_reason_observed() {
    let mut args = serve_args();
    args.revisions = "2025-11-25".into();
    args.no_legacy_tasks = true;
    let r = check_with(Break::Nothing, &args, options()).await;
    let tasks = task_outcomes(&r);
    assert_eq!(tasks.len(), 11, "{}", shown(&r));
    for (i, o) in tasks {
        assert!(
            matches!(o, Outcome::NotApplicable(why) if why.contains("no tasks capability in initialize")),
            "{i}: {o:?}"
        );
    }
    let opts = CheckOptions {
        revisions: vec![ProtocolVersion::V2025_11_25],
        tools: Vec::new(),
        ..options()
    };
    let r = check_with(Break::Nothing, &serve_args(), opts).await;
    assert!(r.passed(), "{}", shown(&r));
    let o = outcome(&r, id::TASKS_CREATE, ProtocolVersion::V2025_11_25);
    assert!(
        matches!(o, Outcome::NotApplicable(why) if why.contains("--tool") && why.contains("slow")),
        "{o:?}"
    );
    // What needs no tool still ran.
    assert_eq!(
        outcome(&r, id::TASKS_UNKNOWN_ID, ProtocolVersion::V2025_11_25),
        &Outcome::Pass
    );
    assert_eq!(
        outcome(&r, id::TASKS_SUPPORT_VALUES, ProtocolVersion::V2025_11_25),
        &Outcome::Pass
    );
}

/// Each level fails only the thresholds at or below it.
#[tokio::test]
async fn fail_on_counts_the_levels_at_or_above_it() {
    // priming-event is a SHOULD.
    let r = broken_tasks(Break::StripPriming, 200).await;
    assert_eq!(
        r.failures().iter().map(|c| c.level).collect::<Vec<_>>(),
        [Level::Should],
        "{}",
        shown(&r)
    );
    assert!(r.passed_at(FailOn::Must));
    assert!(!r.passed_at(FailOn::Should));
    assert!(!r.passed_at(FailOn::Policy));
    // 406-without-accept is this project's policy.
    let r = broken_tasks(Break::IgnoreAccept, 200).await;
    assert!(r.failures().iter().all(|c| c.level == Level::Policy));
    assert!(r.passed_at(FailOn::Should));
    assert!(r.passed_at(FailOn::May));
    assert!(!r.passed_at(FailOn::Policy));
    // 403-bad-origin is a MUST: every threshold fails.
    let r = broken_tasks(Break::IgnoreOrigin, 200).await;
    assert!(r.failures().iter().all(|c| c.level == Level::Must));
    assert!(!r.passed_at(FailOn::Must));
    // Every check carries a level and cites a section on the spec site.
    for c in &r.checks {
        assert!(
            c.spec_url.starts_with("https://") && c.spec_url.contains('#'),
            "{}: {}",
            c.id,
            c.spec_url
        );
        assert!(!c.spec_section.is_empty());
    }
}

#[tokio::test]
async fn stripped_priming_fails_priming_event() {
    let r = broken(Break::StripPriming).await;
    assert_only_fails(&r, id::PRIMING_EVENT);
}

#[tokio::test]
async fn repeated_last_event_fails_exclusive_replay() {
    let r = broken(Break::RepeatLastEvent).await;
    assert_only_fails(&r, id::EXCLUSIVE_REPLAY);
}

#[tokio::test]
async fn replaying_other_streams_fails_resume_same_stream() {
    let r = broken(Break::CrossStream).await;
    assert_only_fails(&r, id::RESUME_SAME_STREAM);
}

#[tokio::test]
async fn empty_200_resume_fails_failed_resume() {
    let r = broken(Break::EmptyResume).await;
    assert_only_fails(&r, id::FAILED_RESUME_4XX);
}

#[tokio::test]
async fn get_stream_on_modern_fails_405_on_get() {
    let r = broken(Break::GetStream).await;
    assert_only_fails(&r, id::METHOD_NOT_ALLOWED_ON_GET);
}

#[tokio::test]
async fn skipped_header_validation_fails_header_mismatch() {
    let r = broken(Break::SkipMethodValidation).await;
    assert_only_fails(&r, id::HEADER_MISMATCH);
}

#[tokio::test]
async fn a_session_alive_after_delete_fails_404_after_delete() {
    let r = broken(Break::KeepAfterDelete).await;
    assert_only_fails(&r, id::NOT_FOUND_AFTER_DELETE);
    assert_eq!(
        r.failures().len(),
        3,
        "every legacy revision\n{}",
        shown(&r)
    );
}

#[tokio::test]
async fn ignored_origin_fails_403_bad_origin() {
    let r = broken(Break::IgnoreOrigin).await;
    assert_only_fails(&r, id::FORBIDDEN_BAD_ORIGIN);
    assert_eq!(r.failures().len(), 4, "every revision\n{}", shown(&r));
}

#[tokio::test]
async fn priming_for_older_sessions_fails_no_priming_for_older() {
    let r = broken(Break::PrimeOlder).await;
    assert_only_fails(&r, id::NO_PRIMING_FOR_OLDER);
}

#[tokio::test]
async fn fixed_priming_ids_fail_event_ids_unique() {
    let r = broken(Break::FixedPrimingId).await;
    assert_only_fails(&r, id::EVENT_IDS_UNIQUE);
}

#[tokio::test]
async fn stripped_retry_fails_retry_before_close() {
    let mut args = serve_args();
    args.revisions = "2025-11-25".into();
    args.disconnect = Some("after-priming".parse().unwrap());
    args.retry_ms = Some(50);
    let r = check_with(Break::StripRetry, &args, options()).await;
    assert_only_fails(&r, id::RETRY_BEFORE_CLOSE);
}

#[tokio::test]
async fn ignored_malformed_version_fails_400_malformed_version() {
    let r = broken(Break::IgnoreMalformedVersion).await;
    assert_only_fails(&r, id::BAD_REQUEST_MALFORMED_VERSION);
}

#[tokio::test]
async fn a_missing_accept_served_fails_406_without_accept() {
    let r = broken(Break::IgnoreAccept).await;
    assert_only_fails(&r, id::NOT_ACCEPTABLE_WITHOUT_ACCEPT);
}

#[tokio::test]
async fn unsupported_version_without_supported_fails() {
    let r = broken(Break::BareUnsupported).await;
    assert_only_fails(&r, id::UNSUPPORTED_VERSION);
}

#[tokio::test]
async fn not_found_without_session_fails_400_without_session() {
    let r = broken(Break::NoSessionNotFound).await;
    assert_only_fails(&r, id::BAD_REQUEST_WITHOUT_SESSION);
}

/// A handler that ignores cancellation: `slow` always sleeps its time out,
/// and nothing is ever counted as cancelled.
#[derive(Debug)]
struct Stubborn;

#[async_trait]
impl Handler for Stubborn {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: json!({ "name": "stubborn", "version": "1.0.0" }),
            capabilities: json!({ "tools": {} }),
            instructions: None,
        }
    }

    async fn handle(&self, request: RpcRequest, _cx: RequestContext) -> HOutcome {
        let params: Value = request
            .params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or_default();
        let text = |t: &str| HOutcome::json(&json!({ "content": [{ "type": "text", "text": t }] }));
        match (request.method.as_str(), params["name"].as_str()) {
            ("tools/list", _) => HOutcome::json(&json!({ "tools": [
                { "name": "slow", "inputSchema": { "type": "object" } },
                { "name": "cancelled_count", "inputSchema": { "type": "object" } },
            ]})),
            ("tools/call", Some("slow")) => {
                let ms = params
                    .pointer("/arguments/ms")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                text("slept")
            }
            ("tools/call", Some("cancelled_count")) => text("0"),
            _ => HOutcome::Error(mcp_transport_core::jsonrpc::ErrorObject::method_not_found(
                &request.method,
            )),
        }
    }
}

#[tokio::test]
async fn a_handler_that_ignores_the_close_fails_cancel_on_close() {
    let server =
        MultiServer::try_new(Arc::new(Stubborn), serve::config(&serve_args()).unwrap()).unwrap();
    let url = start(server, Break::Nothing).await;
    let r = check::run(&url, slow_options()).await.unwrap();
    assert_only_fails(&r, id::CANCEL_ON_CLOSE);
}

/// The reference handler under another name.
struct Renamed(Arc<dyn Handler>, Value);

#[async_trait]
impl Handler for Renamed {
    fn describe(&self) -> ServerDescription {
        ServerDescription {
            info: self.1.clone(),
            ..self.0.describe()
        }
    }

    async fn handle(&self, request: RpcRequest, cx: RequestContext) -> HOutcome {
        self.0.handle(request, cx).await
    }

    async fn notification(&self, n: Notification) {
        self.0.notification(n).await
    }
}

fn rmcp_server() -> MultiServer {
    let handler = Arc::new(Renamed(
        serve::handler(),
        json!({ "name": "rmcp", "version": "0.8.0" }),
    ));
    MultiServer::try_new(handler, serve::config(&serve_args()).unwrap()).unwrap()
}

/// `serverInfo` `{"name":"rmcp","version":"0.8.0"}`: every rmcp quirk of
/// quirks.json is flagged; our server has none of them, so each one a check
/// covers is "not observed".
#[tokio::test]
async fn rmcp_0_8_0_gets_the_rmcp_quirks_flagged() {
    let url = start(rmcp_server(), Break::Nothing).await;
    let r = check::run(&url, options()).await.unwrap();
    let peer = r.peer.as_ref().unwrap();
    assert_eq!(
        (peer.name.as_str(), peer.version.as_str()),
        ("rmcp", "0.8.0")
    );
    assert_eq!(peer.semver, Some(semver::Version::new(0, 8, 0)));
    let known = check::quirks::known().unwrap();
    let rmcp = known.iter().filter(|q| q.implementation == "rmcp").count();
    assert!(rmcp >= 5);
    assert_eq!(r.quirks.len(), rmcp, "{}", shown(&r));
    for f in &r.quirks {
        match (&f.quirk.check, &f.observation) {
            (Some(_), Observation::NotObserved(_)) | (None, Observation::NotChecked(_)) => {}
            other => panic!("{other:?}\n{}", shown(&r)),
        }
    }
    let text = shown(&r);
    assert!(text.contains("Known quirks of rmcp 0.8.0"), "{text}");
}

/// The same name on a server that does have the fixed-"0" priming ids: the
/// quirk is flagged and observed.
#[tokio::test]
async fn an_observed_rmcp_quirk_says_so() {
    let url = start(rmcp_server(), Break::FixedPrimingId).await;
    let r = check::run(&url, options()).await.unwrap();
    let f = r
        .quirks
        .iter()
        .find(|f| f.quirk.check.as_deref() == Some(id::EVENT_IDS_UNIQUE))
        .unwrap();
    assert!(
        matches!(f.observation, Observation::Observed(_)),
        "{}",
        shown(&r)
    );
}

/// Another implementation's name flags nothing.
#[tokio::test]
async fn other_names_get_no_quirks() {
    let r = broken(Break::Nothing).await;
    assert!(r.quirks.is_empty());
}

/// The markdown and JSON renderings carry the same facts.
#[tokio::test]
async fn markdown_and_json_renderings() {
    let r = broken(Break::IgnoreOrigin).await;
    let md = check::report::render(&r, check::report::Format::Markdown);
    // The table's cells, trimmed (columns are padded to line up).
    let rows: Vec<Vec<&str>> = md
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    assert!(
        rows.iter()
            .any(|r| r.starts_with(&["2025-11-25", "403-bad-origin", "MUST", "FAIL"])),
        "{md}"
    );
    assert!(
        md.contains("If the `Origin` header is present and invalid"),
        "{md}"
    );
    let v: Value =
        serde_json::from_str(&check::report::render(&r, check::report::Format::Json)).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["speaks"].as_array().unwrap().len(), 4);
    assert_eq!(
        v["failures_by_level"],
        json!({ "MUST": 4, "SHOULD": 0, "MAY": 0, "POLICY": 0 })
    );
    let failed: Vec<&Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["outcome"]["status"] == "fail")
        .collect();
    assert_eq!(failed.len(), 4);
    assert!(failed.iter().all(|c| c["id"] == "403-bad-origin"));
    assert!(failed[0]["spec"].as_str().unwrap().contains("Origin"));
    assert!(failed.iter().all(|c| c["level"] == "MUST"));
    assert_eq!(
        failed[0]["spec_url"],
        "https://modelcontextprotocol.io/specification/2025-03-26/basic/transports#security-warning"
    );
    assert!(
        md.contains("[Security Warning](https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#security-warning)"),
        "{md}"
    );
    let html = check::report::render(&r, check::report::Format::Html);
    assert!(
        html.contains(r#"<small class="level">MUST</small>"#),
        "{html}"
    );
}

/// Nothing listening: every revision is refused and the report says so.
#[tokio::test]
async fn nothing_listening_speaks_nothing() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let r = check::run(&url, options()).await.unwrap();
    assert!(r.speaks().is_empty());
    assert!(r.checks.is_empty());
    assert!(!r.passed());
    assert!(check::run("ftp://x/", options()).await.is_err());
}

/// Runs `mcp-compat ARGS...` to its end (bounded); returns (code, stdout, stderr).
fn run_bin(args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("RUST_LOG");
    let ran = run_to_end(
        &format!("mcp-compat {args:?}"),
        &mut cmd,
        Duration::from_secs(60),
    );
    (ran.code, ran.stdout, ran.stderr)
}

/// A running `mcp-compat serve`, killed on drop.
fn serve_process() -> Listening {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--bind", "127.0.0.1:0"])
        .env_remove("RUST_LOG");
    Listening::spawn("mcp-compat serve", &mut cmd, Duration::from_secs(20))
}

/// The binary against `mcp-compat serve`: exit 0 and a JSON report that
/// lists all four revisions and no failure.
#[test]
fn the_binary_checks_serve_and_exits_0() {
    let serve = serve_process();
    let (code, out, err) = run_bin(&[
        "check-server",
        &serve.url,
        "--format",
        "json",
        "--slow-tool",
        "slow",
        "--slow-args",
        r#"{"ms":20000}"#,
        "--cancel-count-tool",
        "cancelled_count",
        "--tool",
        r#"slow={"ms":200}"#,
        "--tool",
        r#"echo={"text":"hi"}"#,
        "--tool",
        "failing_job",
    ]);
    assert_eq!(code, Some(0), "stdout: {out}\nstderr: {err}");
    let v: Value = serde_json::from_str(&out).expect("stdout is the JSON report");
    assert_eq!(v["passed"], true);
    assert_eq!(
        v["speaks"],
        json!(["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
    );
    assert_eq!(v["peer"]["name"], "mcp-compat");
    let cancel = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "cancel-on-close")
        .unwrap();
    assert_eq!(cancel["outcome"]["status"], "pass", "{cancel}");
    // The 2025-11-25 task checks all ran and passed but the one for servers
    // without tasks.requests.tools.call.
    let tasks: Vec<&Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["revision"] == "2025-11-25" && c["id"].as_str().unwrap().starts_with("tasks-")
        })
        .collect();
    assert_eq!(tasks.len(), 11);
    for c in tasks {
        let want = if c["id"] == "tasks-undeclared-ignored" {
            "not_applicable"
        } else {
            "pass"
        };
        assert_eq!(c["outcome"]["status"], want, "{c}");
    }
}

/// `--fail-on`: a SHOULD failure (priming-event) exits 0 by default and 1
/// with `--fail-on should`; a POLICY failure (406-without-accept) exits 0
/// with `should` and 1 with `policy`.
#[test]
fn the_binary_fails_on_the_level_asked() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let should = rt.block_on(start(reference(&serve_args()), Break::StripPriming));
    let policy = rt.block_on(start(reference(&serve_args()), Break::IgnoreAccept));
    let run = |url: &str, extra: &[&str]| {
        let mut args = vec!["check-server", url, "--revisions", "2025-11-25"];
        args.extend_from_slice(extra);
        let (code, out, err) = run_bin(&args);
        (code, format!("stdout: {out}\nstderr: {err}"))
    };
    let (code, out) = run(&should, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("priming-event") && out.contains("SHOULD"),
        "{out}"
    );
    assert!(out.contains("failed by level: MUST 0, SHOULD 1"), "{out}");
    let (code, out) = run(&should, &["--fail-on", "should"]);
    assert_eq!(code, Some(1), "{out}");
    let (code, out) = run(&policy, &["--fail-on", "should"]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = run(&policy, &["--fail-on", "policy"]);
    assert_eq!(code, Some(1), "{out}");
    drop(rt);
}

/// `--junit FILE`: one test case per check and revision; the failure with
/// its reason and level; n/a as skipped with its reason.
#[test]
fn the_binary_writes_junit() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = rt.block_on(start(reference(&serve_args()), Break::IgnoreOrigin));
    let dir = std::env::temp_dir().join(format!("check-server-junit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("report.xml");
    let (code, out, err) = run_bin(&[
        "check-server",
        &url,
        "--revisions",
        "2025-11-25,2026-07-28",
        "--format",
        "json",
        "--junit",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "stdout: {out}\nstderr: {err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let checks = report["checks"].as_array().unwrap();
    let xml = std::fs::read_to_string(&file).unwrap();
    let junit =
        quick_junit::Report::deserialize_from_str(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    assert_eq!(junit.test_suites.len(), 2, "{xml}");
    let cases: Vec<&quick_junit::TestCase> = junit
        .test_suites
        .iter()
        .flat_map(|s| s.test_cases.iter())
        .collect();
    assert_eq!(cases.len(), checks.len(), "{xml}");
    let failed: Vec<&&quick_junit::TestCase> = cases
        .iter()
        .filter(|c| matches!(c.status, quick_junit::TestCaseStatus::NonSuccess { .. }))
        .collect();
    assert_eq!(failed.len(), 2, "{xml}");
    for c in failed {
        assert_eq!(c.name.as_str(), "403-bad-origin");
        let quick_junit::TestCaseStatus::NonSuccess { message, ty, .. } = &c.status else {
            unreachable!()
        };
        assert_eq!(ty.as_ref().map(|t| t.as_str()), Some("MUST"));
        assert!(
            message.as_ref().unwrap().as_str().contains("evil.example"),
            "{xml}"
        );
    }
    let na = checks
        .iter()
        .filter(|c| c["outcome"]["status"] == "not_applicable")
        .count();
    let skipped = cases
        .iter()
        .filter(|c| {
            matches!(&c.status, quick_junit::TestCaseStatus::Skipped { message: Some(m), .. } if m.as_str().starts_with("n/a: "))
        })
        .count();
    assert!(na > 0);
    assert_eq!(skipped, na, "{xml}");
    let _ = std::fs::remove_dir_all(&dir);
    drop(rt);
}

/// The binary exits 1 against a server that fails a check, and prints the
/// table with the failing row.
#[test]
fn the_binary_exits_1_on_a_failed_check() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = rt.block_on(start(reference(&serve_args()), Break::IgnoreOrigin));
    let (code, out, err) = run_bin(&["check-server", &url, "--revisions", "2025-11-25"]);
    assert_eq!(code, Some(1), "stdout: {out}\nstderr: {err}");
    assert!(out.contains("403-bad-origin"), "{out}");
    assert!(out.contains("FAIL"), "{out}");
    assert!(
        err.contains("some checks at or above the --fail-on level failed"),
        "{err}"
    );
    drop(rt);
}
