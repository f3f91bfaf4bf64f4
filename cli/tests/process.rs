//! The `mcp-compat` binary as a user runs it: `serve` as a child process
//! (its first stdout line names the endpoint), `call` as further processes
//! against it; exit codes, stdout and stderr.
//!
//! Every child is killed when its test ends, however it ends ([`Listening`]'s
//! `Drop`), and every wait is bounded so a hang fails instead of blocking.

use std::process::Command;
use std::time::Duration;

use mcp_test_support::process::{Finished, Listening, run_to_end};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-compat");
/// The bound on any one process (start-up, a call).
const WAIT: Duration = Duration::from_secs(20);

/// Starts `mcp-compat serve --bind 127.0.0.1:0 EXTRA...` and reads its
/// first stdout line, `listening on http://HOST:PORT/PATH`; killed on drop.
fn serve(extra: &[&str]) -> Listening {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .env_remove("RUST_LOG");
    Listening::spawn("mcp-compat serve", &mut cmd, WAIT)
}

/// Runs `mcp-compat ARGS...` to its end (killed and failed after [`WAIT`]).
fn run(args: &[&str]) -> Finished {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("RUST_LOG");
    run_to_end(&format!("mcp-compat {args:?}"), &mut cmd, WAIT)
}

/// `mcp-compat call URL ARGS...` with a bounded timeout of its own.
fn call(url: &str, args: &[&str]) -> Finished {
    let mut all = vec!["call", url, "--timeout-ms", "15000"];
    all.extend_from_slice(args);
    run(&all)
}

/// The text of the first content block of a `CallToolResult`.
fn first_text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The JSON messages `-v` printed on stderr, in order.
fn messages(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

/// The `progress` values of the `notifications/progress` among `messages`.
fn progress_values(messages: &[Value]) -> Vec<f64> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect()
}

#[test]
fn call_add_prints_the_result_and_exits_0() {
    let serve = serve(&[]);
    let ran = call(&serve.url, &["--tool", "add", "--args", r#"{"a":2,"b":3}"#]);
    assert!(ran.ok(), "{ran:?}");
    let result: Value = serde_json::from_str(ran.stdout.trim()).expect("stdout is the result JSON");
    assert_eq!(first_text(&result), "5", "{result}");
    assert_ne!(result["isError"], true);
}

#[test]
fn verbose_prints_the_revision_first_then_the_messages() {
    let serve = serve(&["--revisions", "2025-11-25"]);
    let ran = call(
        &serve.url,
        &[
            "-v",
            "--tool",
            "countdown",
            "--args",
            r#"{"n":3,"interval_ms":10}"#,
        ],
    );
    assert!(ran.ok(), "{ran:?}");
    assert_eq!(
        ran.stderr.lines().next(),
        Some("revision: 2025-11-25"),
        "{}",
        ran.stderr
    );
    let messages = messages(&ran.stderr);
    assert_eq!(
        progress_values(&messages),
        [1.0, 2.0, 3.0],
        "{}",
        ran.stderr
    );
    let logs = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .count();
    assert_eq!(logs, 3, "{}", ran.stderr);
    // Every progress notification comes before the response, which is last.
    let last = messages.last().expect("the response is printed");
    assert!(
        last.get("id").is_some() && last.get("result").is_some(),
        "{last}"
    );
    assert_eq!(first_text(&last["result"]), "done");
    let result: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(first_text(&result), "done");
}

/// `--tasks` on 2026-07-28: `slow_compute` becomes a task, `-v` shows its
/// statuses, and the result is the task's.
#[test]
fn call_with_tasks_follows_the_task_to_its_result() {
    let serve = serve(&["--revisions", "2026-07-28"]);
    let ran = call(
        &serve.url,
        &[
            "-v",
            "--tasks",
            "--tool",
            "slow_compute",
            "--args",
            r#"{"seconds":0.2,"label":"x"}"#,
        ],
    );
    assert!(ran.ok(), "{ran:?}");
    let statuses: Vec<String> = messages(&ran.stderr)
        .iter()
        .filter(|m| m["method"] == "notifications/tasks")
        .map(|m| m["params"]["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        statuses.first().map(String::as_str),
        Some("working"),
        "{}",
        ran.stderr
    );
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("completed"),
        "{}",
        ran.stderr
    );
    let result: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(first_text(&result), "computed x in 0.2 s");
}

/// `--tasks` on 2025-11-25: `slow` (`taskSupport: optional`) is called
/// with `params.task`, `-v` shows the task's statuses, and the result is
/// the tool's, fetched with `tasks/result`.
#[test]
fn call_with_tasks_at_2025_11_25_follows_tasks_result() {
    let serve = serve(&["--revisions", "2025-11-25"]);
    let ran = call(
        &serve.url,
        &["-v", "--tasks", "--tool", "slow", "--args", r#"{"ms":200}"#],
    );
    assert!(ran.ok(), "{ran:?}");
    let statuses: Vec<String> = messages(&ran.stderr)
        .iter()
        .filter(|m| m["method"] == "notifications/tasks/status")
        .map(|m| m["params"]["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        statuses.first().map(String::as_str),
        Some("working"),
        "{}",
        ran.stderr
    );
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("completed"),
        "{}",
        ran.stderr
    );
    let result: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(first_text(&result), "slept 200 ms");
    assert!(result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"].is_string());
    // A tool that may not run as a task is called normally.
    let ran = call(
        &serve.url,
        &["--tasks", "--tool", "echo", "--args", r#"{"text":"hi"}"#],
    );
    assert!(ran.ok(), "{ran:?}");
}

#[test]
fn unknown_tool_exits_non_zero_with_a_message() {
    let serve = serve(&[]);
    let ran = call(&serve.url, &["--tool", "no_such_tool"]);
    assert!(!ran.ok(), "{ran:?}");
    assert!(ran.stderr.contains("no_such_tool"), "{}", ran.stderr);
    assert!(ran.stderr.contains("error"), "{}", ran.stderr);
    assert!(ran.stdout.trim().is_empty(), "{}", ran.stdout);
}

#[test]
fn tool_error_exits_non_zero_with_a_message() {
    let serve = serve(&[]);
    let ran = call(
        &serve.url,
        &["--tool", "add", "--args", r#"{"a":"two","b":3}"#],
    );
    assert!(!ran.ok(), "a result with isError: true must fail: {ran:?}");
    assert!(
        ran.stderr.contains("Invalid arguments for tool add"),
        "{}",
        ran.stderr
    );
}

#[test]
fn bad_args_json_exits_non_zero_with_a_message() {
    let serve = serve(&[]);
    let ran = call(&serve.url, &["--tool", "add", "--args", "{not json"]);
    assert!(!ran.ok(), "{ran:?}");
    assert!(ran.stderr.contains("--args is not JSON"), "{}", ran.stderr);
    let ran = call(&serve.url, &["--tool", "add", "--args", "[1, 2]"]);
    assert!(!ran.ok(), "{ran:?}");
    assert!(
        ran.stderr.contains("--args must be a JSON object"),
        "{}",
        ran.stderr
    );
}

/// `--disconnect after-priming`: every connection of the call's stream is
/// closed by the server right away, and the client still gets every
/// message, once, by resuming with `Last-Event-ID`.
#[test]
fn countdown_through_a_polling_server_resumes() {
    let serve = serve(&[
        "--revisions",
        "2025-11-25",
        "--disconnect",
        "after-priming",
        "--retry-ms",
        "50",
    ]);
    let ran = call(
        &serve.url,
        &[
            "-v",
            "--tool",
            "countdown",
            "--args",
            r#"{"n":4,"interval_ms":30}"#,
        ],
    );
    assert!(ran.ok(), "{ran:?}");
    let messages = messages(&ran.stderr);
    assert_eq!(
        progress_values(&messages),
        [1.0, 2.0, 3.0, 4.0],
        "{}",
        ran.stderr
    );
    let result: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(first_text(&result), "done");
}

/// The on-demand close (`close_stream` calls `close_sse_stream`) through
/// the binary: the call resumes and gets the answer.
#[test]
fn close_stream_through_the_binary_resumes() {
    let serve = serve(&["--revisions", "2025-11-25", "--retry-ms", "50"]);
    let ran = call(
        &serve.url,
        &["--tool", "close_stream", "--args", r#"{"ms":100}"#],
    );
    assert!(ran.ok(), "{ran:?}");
    let result: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(first_text(&result), "resumed", "{result}");
}

#[test]
fn serve_refuses_a_bogus_disconnect_policy() {
    let ran = run(&["serve", "--bind", "127.0.0.1:0", "--disconnect", "bogus"]);
    assert!(!ran.ok(), "{ran:?}");
    assert!(ran.stdout.is_empty(), "no listening line: {}", ran.stdout);
    assert!(ran.stderr.contains("bogus"), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("after-priming"),
        "names the valid policies: {}",
        ran.stderr
    );
}

#[test]
fn serve_refuses_an_unknown_revision() {
    let ran = run(&[
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--revisions",
        "1999-01-01",
    ]);
    assert!(!ran.ok(), "{ran:?}");
    assert!(ran.stdout.is_empty(), "no listening line: {}", ran.stdout);
    assert!(ran.stderr.contains("1999-01-01"), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("2025-11-25"),
        "names the supported ones: {}",
        ran.stderr
    );
}

#[test]
fn call_refuses_an_unknown_revision() {
    let serve = serve(&[]);
    let ran = call(&serve.url, &["--revisions", "1999-01-01", "--tool", "add"]);
    assert!(!ran.ok(), "{ran:?}");
    assert!(ran.stderr.contains("1999-01-01"), "{}", ran.stderr);
    assert!(ran.stdout.trim().is_empty(), "{}", ran.stdout);
}

#[test]
fn serve_prints_the_endpoint_path() {
    let serve = serve(&["--path", "/elsewhere"]);
    assert!(serve.url.ends_with("/elsewhere"), "{}", serve.url);
    let ran = call(
        &serve.url,
        &["--tool", "echo", "--args", r#"{"text":"hi"}"#],
    );
    assert!(ran.ok(), "{ran:?}");
    let result: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(first_text(&result), "hi");
    // Nothing else is served: any other path is 404, with an empty body
    // (as axum's `Router` answers; `serve` runs the endpoint without one).
    let base = serve.url.trim_end_matches("/elsewhere");
    for other in ["/mcp", "/elsewhere/", "/"] {
        let mut tcp = std::net::TcpStream::connect(base.trim_start_matches("http://")).unwrap();
        tcp.set_read_timeout(Some(WAIT)).unwrap();
        use std::io::{Read, Write};
        write!(
            tcp,
            "GET {other} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 404 "), "{other}: {answer}");
        assert!(answer.ends_with("\r\n\r\n"), "{other}: a body: {answer}");
    }
}

/// Issue 13 (1): `serve` bounds connections: one that sends nothing is
/// closed after `--header-read-timeout-ms`, while calls are still served.
#[test]
fn serve_closes_a_silent_connection() {
    use std::io::Read;
    let serve = serve(&["--header-read-timeout-ms", "200", "--max-connections", "4"]);
    let addr = serve
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut silent = std::net::TcpStream::connect(&addr).unwrap();
    silent.set_read_timeout(Some(WAIT)).unwrap();
    let mut buf = [0u8; 16];
    let n = silent.read(&mut buf).expect("closed, not timed out");
    assert_eq!(n, 0, "the server answered a request never sent");
    let ran = call(&serve.url, &["--tool", "add", "--args", r#"{"a":2,"b":3}"#]);
    assert!(ran.ok(), "{ran:?}");
}

#[test]
fn serve_refuses_zero_limits() {
    for flag in ["--max-connections", "--max-running"] {
        let ran = run(&["serve", flag, "0"]);
        assert!(!ran.ok(), "{ran:?}");
        assert!(ran.stderr.contains(flag), "{}", ran.stderr);
    }
}
