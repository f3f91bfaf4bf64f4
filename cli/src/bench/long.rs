//! The long-running workload: N requests at once to a tool that works T
//! seconds, served four ways, each against a fresh `mcp-compat serve` child
//! whose memory, descriptors and CPU time are sampled while it runs:
//!
//! * `held-2025`: 2025-11-25 sessions, `--disconnect never`: each request's
//!   SSE stream holds its connection to the end (`countdown`, a progress
//!   notification and a log message every second).
//! * `held-2026`: the same on 2026-07-28, stateless.
//! * `polling`: 2025-11-25 sessions, `--disconnect after-priming` with
//!   `retry` R (SEP-1699): the POST's connection closes after the priming
//!   event; the client resumes with `GET` + `Last-Event-ID` every `retry`.
//! * `tasks`: 2026-07-28 with the Tasks extension: `slow` (the reference's
//!   long-running tool; it sends no progress) answers a `CreateTaskResult`
//!   at once and the client polls `tasks/get` every `pollIntervalMs`.
//!
//! The client is `reqwest` (a pooled client, as SDKs use) keeping at most
//! [`Spec::pool_idle`] idle connections (default [`POOL_IDLE`]), so a
//! polled request does not keep a connection (and a server descriptor)
//! while it waits; the idle ones are the client's, not the requests'.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mcp_transport_core::sse::{Decoder, SseItem};
use serde::Serialize;
use serde_json::Value;

use super::child::ServerChild;
use super::latency::percentile;
use super::proc::{Pid, bytes_each, cpu_time, open_fds, rss_kib};
use super::wire::{self, LEGACY, MODERN, TASKS_CAPABILITIES, Template};

/// Idle connections the client keeps per host, by default.
pub const POOL_IDLE: usize = 256;
/// Requests per 2025-11-25 session (a session keeps at most 256 streams).
const PER_SESSION: usize = 100;
/// Requests started per second (a burst of thousands of connects would
/// overflow the listen backlog and measure SYN retransmits instead).
const RAMP_PER_SEC: u64 = 5_000;
/// How often the server child is sampled.
const SAMPLE_EVERY: Duration = Duration::from_millis(250);

/// A way of serving the long-running work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// 2025-11-25, connection held to the end.
    Held2025,
    /// 2026-07-28, connection held to the end.
    Held2026,
    /// 2025-11-25, SEP-1699 polling.
    Polling,
    /// 2026-07-28 tasks.
    Tasks,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 4] = [Mode::Held2025, Mode::Held2026, Mode::Polling, Mode::Tasks];

    /// The name used in `--workloads`, the table and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Held2025 => "held-2025",
            Mode::Held2026 => "held-2026",
            Mode::Polling => "polling",
            Mode::Tasks => "tasks",
        }
    }
}

/// The workload's size.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// Requests at once.
    pub requests: usize,
    /// Seconds each request works.
    pub seconds: u64,
    /// The `retry` of the polling mode, ms.
    pub retry_ms: u64,
    /// Idle connections the client keeps (0: a new connection per request).
    pub pool_idle: usize,
}

/// What one mode measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LongFigures {
    /// The mode's name.
    pub mode: &'static str,
    /// Requests started.
    pub requests: usize,
    /// Seconds each works.
    pub seconds: u64,
    /// Requests that ended with the right answer.
    pub completed: u64,
    /// Requests that failed.
    pub errors: u64,
    /// HTTP requests sent per completed request (1 when held).
    pub http_requests_per_request: f64,
    /// Progress notifications received per completed request.
    pub progress_per_request: f64,
    /// Completion time (send → answer) p50, ms.
    pub completion_p50_ms: f64,
    /// Completion time p99, ms.
    pub completion_p99_ms: f64,
    /// Completion p50 minus the work's own T seconds, ms.
    pub overhead_p50_ms: f64,
    /// Completion p99 minus T, ms.
    pub overhead_p99_ms: f64,
    /// Server RSS before the requests, KiB.
    pub server_rss_idle_kib: u64,
    /// Server peak RSS while they ran, KiB.
    pub server_rss_peak_kib: u64,
    /// (peak - idle) / requests, bytes.
    pub server_bytes_per_pending_request: f64,
    /// Server RSS halfway through the work (every request started and
    /// pending), KiB.
    pub server_rss_midway_kib: u64,
    /// Server open descriptors before the requests.
    pub server_fds_idle: u64,
    /// Server open descriptors halfway through the work (every request
    /// pending): what pending requests hold, without the start-up burst.
    pub server_fds_midway: u64,
    /// Server open descriptors at the peak.
    pub server_fds_peak: u64,
    /// Server CPU time per completed request, ms.
    pub server_cpu_ms_per_request: f64,
    /// Client (this process) CPU time per completed request, ms.
    pub client_cpu_ms_per_request: f64,
    /// The first failure, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

#[derive(Default)]
struct Tally {
    http: AtomicU64,
    progress: AtomicU64,
}

/// Runs one mode.
pub async fn run(mode: Mode, spec: Spec) -> Result<LongFigures, String> {
    let retry = spec.retry_ms.to_string();
    let mut args = vec![
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--max-connections",
        "1000000",
    ];
    match mode {
        Mode::Held2025 => args.extend(["--revisions", LEGACY]),
        Mode::Held2026 => args.extend(["--revisions", MODERN]),
        Mode::Polling => args.extend([
            "--revisions",
            LEGACY,
            "--disconnect",
            "after-priming",
            "--retry-ms",
            &retry,
        ]),
        Mode::Tasks => args.extend(["--revisions", MODERN, "--json-response"]),
    }
    args.extend(super::store_args());
    let server = ServerChild::start(&args).await?;
    let (addr, path) = (server.addr, server.path.clone());
    let url = format!("http://{addr}{path}");
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(spec.pool_idle)
        .tcp_nodelay(true)
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;

    // One template per session (legacy) or one for all (modern).
    let args_json = format!(r#"{{"n":{},"interval_ms":1000}}"#, spec.seconds);
    let slow_json = format!(r#"{{"ms":{}}}"#, spec.seconds * 1000);
    // What `slow` answers.
    let slept: Arc<str> = format!("slept {} ms", spec.seconds * 1000).into();
    let mut templates = Vec::new();
    match mode {
        Mode::Held2025 | Mode::Polling => {
            let mut s = wire::connect(addr).await?;
            for _ in 0..spec.requests.div_ceil(PER_SESSION) {
                let id = wire::open_session(&mut s, addr, &path).await?;
                let t = Template::legacy_call(addr, &path, &id, "countdown", &args_json, Some("p"));
                templates.push((Some(id), t));
            }
        }
        Mode::Held2026 => templates.push((
            None,
            Template::modern_call(addr, &path, "countdown", &args_json, "{}", Some("p")),
        )),
        Mode::Tasks => templates.push((
            None,
            Template::modern_call(addr, &path, "slow", &slow_json, TASKS_CAPABILITIES, None),
        )),
    }

    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = Pid::Of(server.pid);
    let rss_idle = rss_kib(pid).unwrap_or(0);
    let fds_idle = open_fds(pid).unwrap_or(0);
    let (server_cpu0, client_cpu0) = (cpu_time(pid), cpu_time(Pid::Current));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        tokio::spawn(async move {
            let (mut rss, mut fds) = (0u64, 0u64);
            while !done.load(Ordering::Relaxed) {
                rss = rss.max(rss_kib(pid).unwrap_or(0));
                fds = fds.max(open_fds(pid).unwrap_or(0));
                tokio::time::sleep(SAMPLE_EVERY).await;
            }
            (rss, fds)
        })
    };

    let tally = Arc::new(Tally::default());
    let mut tasks = Vec::with_capacity(spec.requests);
    let ramp_start = Instant::now();
    for i in 0..spec.requests {
        tokio::time::sleep_until((ramp_start + ramp_offset(i)).into()).await;
        let (session, template) = templates[session_of(i, templates.len())].clone();
        let (client, url, tally) = (client.clone(), url.clone(), tally.clone());
        let slept = slept.clone();
        tasks.push(tokio::spawn(async move {
            let started = Instant::now();
            let req = template.request(i as u64 + 1);
            let r = match mode {
                Mode::Held2025 | Mode::Held2026 => {
                    stream_call(&client, &url, req, None, &tally).await
                }
                Mode::Polling => stream_call(&client, &url, req, session.as_deref(), &tally).await,
                Mode::Tasks => task_call(&client, &url, req, addr, &slept, &tally).await,
            };
            r.map(|()| started.elapsed())
        }));
    }
    // Every request has started; halfway through their work, they all pend.
    tokio::time::sleep(midway(spec.seconds)).await;
    let mut seen = Seen {
        rss_idle_kib: rss_idle,
        rss_midway_kib: rss_kib(pid).unwrap_or(0),
        fds_idle,
        fds_midway: open_fds(pid).unwrap_or(0),
        ..Seen::default()
    };
    for t in tasks {
        seen.note(t.await.map_err(|e| e.to_string())?);
    }
    seen.server_cpu = cpu_time(pid).saturating_sub(server_cpu0);
    seen.client_cpu = cpu_time(Pid::Current).saturating_sub(client_cpu0);
    done.store(true, Ordering::Relaxed);
    (seen.rss_peak_kib, seen.fds_peak) = sampler.await.map_err(|e| e.to_string())?;
    server.stop().await;
    seen.http = tally.http.load(Ordering::Relaxed);
    seen.progress = tally.progress.load(Ordering::Relaxed);
    if let Some(e) = &seen.first_error {
        tracing::warn!("{}: {} errors; first: {e}", mode.name(), seen.errors);
    }
    seen.figures(mode, spec)
}

/// When every request has started and is halfway through its `seconds`
/// of work: where the midway figures are read.
fn midway(seconds: u64) -> Duration {
    Duration::from_millis(seconds * 500)
}

/// What a run saw, before it is summarised ([`Seen::figures`]).
#[derive(Debug, Default)]
struct Seen {
    /// The completion times of the requests answered right, ms.
    times_ms: Vec<u32>,
    /// Requests that failed.
    errors: u64,
    /// The first failure.
    first_error: Option<String>,
    /// HTTP requests sent, all requests together.
    http: u64,
    /// Progress notifications received, all requests together.
    progress: u64,
    /// The server's resident set before the requests, KiB.
    rss_idle_kib: u64,
    /// The server's resident set halfway through their work, KiB.
    rss_midway_kib: u64,
    /// The server's largest resident set while they ran, KiB.
    rss_peak_kib: u64,
    /// The server's open descriptors before the requests.
    fds_idle: u64,
    /// The server's open descriptors halfway through their work.
    fds_midway: u64,
    /// The server's most open descriptors while they ran.
    fds_peak: u64,
    /// CPU time the server spent while the requests ran.
    server_cpu: Duration,
    /// CPU time this process (the client) spent meanwhile.
    client_cpu: Duration,
}

impl Seen {
    /// Notes how one request ended: its completion time, or its failure.
    fn note(&mut self, outcome: Result<Duration, String>) {
        match outcome {
            Ok(d) => self
                .times_ms
                .push(u32::try_from(d.as_millis()).unwrap_or(u32::MAX)),
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert(e);
            }
        }
    }

    /// The figures of `mode`'s run of `spec`, each a request's share over
    /// the requests completed (bytes a pending request: over all started);
    /// an error when none completed.
    fn figures(mut self, mode: Mode, spec: Spec) -> Result<LongFigures, String> {
        if self.times_ms.is_empty() {
            return Err(format!(
                "{}: no request completed ({} errors; first: {})",
                mode.name(),
                self.errors,
                self.first_error.unwrap_or_default()
            ));
        }
        self.times_ms.sort_unstable();
        let times = &self.times_ms;
        let n = times.len() as f64;
        let t_ms = (spec.seconds * 1000) as f64;
        let (p50, p99) = (percentile(times, 0.5), percentile(times, 0.99));
        let ms_per = |d: Duration| d.as_secs_f64() * 1e3 / n;
        Ok(LongFigures {
            mode: mode.name(),
            requests: spec.requests,
            seconds: spec.seconds,
            completed: times.len() as u64,
            errors: self.errors,
            http_requests_per_request: self.http as f64 / n,
            progress_per_request: self.progress as f64 / n,
            completion_p50_ms: p50,
            completion_p99_ms: p99,
            overhead_p50_ms: p50 - t_ms,
            overhead_p99_ms: p99 - t_ms,
            server_rss_idle_kib: self.rss_idle_kib,
            server_rss_peak_kib: self.rss_peak_kib,
            server_bytes_per_pending_request: bytes_each(
                self.rss_idle_kib,
                self.rss_peak_kib,
                spec.requests,
            ),
            server_rss_midway_kib: self.rss_midway_kib,
            server_fds_idle: self.fds_idle,
            server_fds_midway: self.fds_midway,
            server_fds_peak: self.fds_peak,
            server_cpu_ms_per_request: ms_per(self.server_cpu),
            client_cpu_ms_per_request: ms_per(self.client_cpu),
            first_error: self.first_error,
        })
    }
}

/// When request `i` starts, after the first: [`RAMP_PER_SEC`] a second.
fn ramp_offset(i: usize) -> Duration {
    Duration::from_secs_f64(i as f64 / RAMP_PER_SEC as f64)
}

/// Which of `sessions` templates request `i` uses: [`PER_SESSION`]
/// requests in turn to each, so no session holds more than that many
/// streams while there are sessions enough (the 2026-07-28 modes have one
/// template, which every request uses).
fn session_of(i: usize, sessions: usize) -> usize {
    i / PER_SESSION % sessions.max(1)
}

/// Converts a benchmark request to reqwest's.
fn to_reqwest(
    client: &reqwest::Client,
    url: &str,
    req: http::Request<http_body_util::Full<bytes::Bytes>>,
) -> reqwest::RequestBuilder {
    let (parts, body) = req.into_parts();
    let mut headers = parts.headers;
    headers.remove(http::header::HOST);
    let body = futures_util::FutureExt::now_or_never(http_body_util::BodyExt::collect(body))
        .and_then(Result::ok)
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    client.post(url).headers(headers).body(body)
}

/// The stream of one request: read to its answer, resuming with `GET` +
/// `Last-Event-ID` after each close when `session` is set (polling).
async fn stream_call(
    client: &reqwest::Client,
    url: &str,
    req: http::Request<http_body_util::Full<bytes::Bytes>>,
    session: Option<&str>,
    tally: &Tally,
) -> Result<(), String> {
    let max_rounds = 10_000;
    let mut last_id = String::new();
    let mut retry: Option<u64> = None;
    let mut next = to_reqwest(client, url, req);
    for _ in 0..max_rounds {
        tally.http.fetch_add(1, Ordering::Relaxed);
        let resp = next.send().await.map_err(|e| format!("send: {e}"))?;
        if resp.status() != 200 {
            return Err(format!("status {}", resp.status()));
        }
        let mut decoder = Decoder::new();
        let mut items = Vec::new();
        let mut body = resp.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| format!("body: {e}"))?;
            decoder
                .feed(&chunk, &mut items)
                .map_err(|e| e.to_string())?;
            for item in items.drain(..) {
                match item {
                    SseItem::Event(ev) => match said(&ev.data)? {
                        Said::Progress => {
                            tally.progress.fetch_add(1, Ordering::Relaxed);
                        }
                        Said::Answer => return Ok(()),
                        Said::Other => {}
                    },
                    SseItem::Retry(ms) => retry = Some(ms),
                    SseItem::LastEventId(_) => {}
                }
            }
            if !decoder.last_event_id().is_empty() {
                last_id = decoder.last_event_id().to_owned();
            }
        }
        let Some(session) = session else {
            return Err("the stream ended before the answer".into());
        };
        if last_id.is_empty() {
            return Err("closed before any event id: cannot resume".into());
        }
        tokio::time::sleep(Duration::from_millis(retry.unwrap_or(1000))).await;
        next = client
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", LEGACY)
            .header("last-event-id", &last_id);
    }
    Err("too many resumptions".into())
}

/// A task: create it, then poll `tasks/get` until it is completed with
/// the tool's answer `want` inlined (extension `io.modelcontextprotocol/tasks`,
/// "Getting Task Status").
async fn task_call(
    client: &reqwest::Client,
    url: &str,
    req: http::Request<http_body_util::Full<bytes::Bytes>>,
    addr: std::net::SocketAddr,
    want: &str,
    tally: &Tally,
) -> Result<(), String> {
    let path = url.trim_start_matches(&format!("http://{addr}"));
    let mut next = to_reqwest(client, url, req);
    let mut get: Option<Template> = None;
    for round in 0..100_000u64 {
        tally.http.fetch_add(1, Ordering::Relaxed);
        let resp = next.send().await.map_err(|e| format!("send: {e}"))?;
        if resp.status() != 200 {
            return Err(format!("status {}", resp.status()));
        }
        let v: Value = resp.json().await.map_err(|e| format!("body: {e}"))?;
        let (task_id, wait) = match task_step(&v, want)? {
            TaskStep::Done => return Ok(()),
            TaskStep::Poll { task_id, wait_ms } => (task_id, wait_ms),
        };
        let t = get.get_or_insert_with(|| Template::modern_task_get(addr, path, &task_id));
        tokio::time::sleep(Duration::from_millis(wait)).await;
        next = to_reqwest(client, url, t.request(round + 2));
    }
    Err("too many polls".into())
}

/// What one event of a request's stream says.
#[derive(Debug, PartialEq, Eq)]
enum Said {
    /// A progress notification.
    Progress,
    /// The request's answer, and the right one (`countdown`'s `done`).
    Answer,
    /// Anything else: the priming event's empty data, a log message.
    Other,
}

/// Reads one event's data. An error answer, a result other than
/// `countdown`'s `done` or data that is no JSON is an `Err`.
fn said(data: &str) -> Result<Said, String> {
    if data.is_empty() {
        return Ok(Said::Other);
    }
    let v: Value = serde_json::from_str(data).map_err(|e| format!("not JSON ({e}): {data}"))?;
    if v.get("method").and_then(Value::as_str) == Some("notifications/progress") {
        return Ok(Said::Progress);
    }
    if let Some(result) = v.get("result") {
        return match answer_text(result) {
            Some("done") => Ok(Said::Answer),
            _ => Err(format!("unexpected answer {data}")),
        };
    }
    if v.get("error").is_some() {
        return Err(format!("error answer {data}"));
    }
    Ok(Said::Other)
}

/// The text of a `CallToolResult` that is no tool error: its first
/// content block's.
fn answer_text(result: &Value) -> Option<&str> {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    result.pointer("/content/0/text")?.as_str()
}

/// What a task's latest state asks of its client.
#[derive(Debug, PartialEq, Eq)]
enum TaskStep {
    /// Completed with the expected answer.
    Done,
    /// Still working: ask `tasks/get` for `task_id` again in `wait_ms`.
    Poll { task_id: String, wait_ms: u64 },
}

/// Reads the answer to a task-augmented `tools/call` or to `tasks/get`:
/// `working` asks for another poll after `pollIntervalMs` (500 ms when the
/// server gives none); `completed` must carry the `CallToolResult` whose
/// text is `want`; anything else (another status, a tool error, a JSON-RPC
/// error) is an `Err`.
fn task_step(v: &Value, want: &str) -> Result<TaskStep, String> {
    let result = v
        .get("result")
        .ok_or_else(|| format!("not a result: {v}"))?;
    match result.get("status").and_then(Value::as_str) {
        Some("completed") => {
            return match result.get("result").and_then(answer_text) {
                Some(text) if text == want => Ok(TaskStep::Done),
                _ => Err(format!("completed without the answer {want:?}: {v}")),
            };
        }
        Some("working") => {}
        other => return Err(format!("task status {other:?}: {v}")),
    }
    let task_id = result
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("no taskId: {v}"))?;
    let wait_ms = result
        .get("pollIntervalMs")
        .and_then(Value::as_u64)
        .unwrap_or(500);
    Ok(TaskStep::Poll {
        task_id: task_id.to_owned(),
        wait_ms,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_figures_are_each_completed_requests_share() {
        let spec = Spec {
            requests: 4,
            seconds: 10,
            retry_ms: 2_000,
            pool_idle: 1,
        };
        let mut seen = Seen {
            http: 9,
            progress: 30,
            rss_idle_kib: 1_000,
            rss_midway_kib: 1_004,
            rss_peak_kib: 1_008,
            fds_idle: 12,
            fds_midway: 15,
            fds_peak: 16,
            server_cpu: Duration::from_millis(6),
            client_cpu: Duration::from_millis(3),
            ..Seen::default()
        };
        // Out of order, and one failure among them.
        for ms in [10_300, 10_100] {
            seen.note(Ok(Duration::from_millis(ms)));
        }
        seen.note(Err("first".into()));
        seen.note(Ok(Duration::from_millis(10_200)));
        seen.note(Err("second".into()));
        let f = seen.figures(Mode::Polling, spec).unwrap();
        assert_eq!((f.mode, f.requests, f.seconds), ("polling", 4, 10));
        assert_eq!((f.completed, f.errors), (3, 2));
        assert_eq!(f.first_error.as_deref(), Some("first"));
        assert_eq!(
            (f.http_requests_per_request, f.progress_per_request),
            (3.0, 10.0)
        );
        assert_eq!(
            (f.completion_p50_ms, f.completion_p99_ms),
            (10_200.0, 10_300.0)
        );
        assert_eq!((f.overhead_p50_ms, f.overhead_p99_ms), (200.0, 300.0));
        assert_eq!(
            (
                f.server_rss_idle_kib,
                f.server_rss_midway_kib,
                f.server_rss_peak_kib
            ),
            (1_000, 1_004, 1_008)
        );
        assert_eq!(
            f.server_bytes_per_pending_request, 2_048.0,
            "over all 4 started"
        );
        assert_eq!(
            (f.server_fds_idle, f.server_fds_midway, f.server_fds_peak),
            (12, 15, 16)
        );
        assert_eq!(
            (f.server_cpu_ms_per_request, f.client_cpu_ms_per_request),
            (2.0, 1.0)
        );
    }

    #[test]
    fn a_run_with_nothing_completed_is_an_error() {
        let mut seen = Seen::default();
        seen.note(Err("refused".into()));
        let spec = Spec {
            requests: 1,
            seconds: 1,
            retry_ms: 0,
            pool_idle: 0,
        };
        let e = seen.figures(Mode::Tasks, spec).unwrap_err();
        assert_eq!(e, "tasks: no request completed (1 errors; first: refused)");
        assert_eq!(midway(1), Duration::from_millis(500));
        assert_eq!(midway(10), Duration::from_secs(5));
    }

    #[test]
    fn requests_start_at_the_ramps_rate() {
        assert_eq!(ramp_offset(0), Duration::ZERO);
        assert_eq!(ramp_offset(RAMP_PER_SEC as usize), Duration::from_secs(1));
        assert_eq!(
            ramp_offset(RAMP_PER_SEC as usize / 2 + 1),
            Duration::from_secs_f64(0.5 + 1.0 / RAMP_PER_SEC as f64)
        );
    }

    #[test]
    fn each_session_takes_its_share_of_requests_in_turn() {
        let requests = 2 * PER_SESSION + 50;
        let sessions = requests.div_ceil(PER_SESSION);
        let mut held = vec![0; sessions];
        for i in 0..requests {
            held[session_of(i, sessions)] += 1;
        }
        assert_eq!(held, [PER_SESSION, PER_SESSION, 50]);
        assert_eq!(session_of(PER_SESSION - 1, sessions), 0);
        assert_eq!(session_of(PER_SESSION, sessions), 1);
        // One template (2026-07-28): every request uses it.
        assert!((0..requests).all(|i| session_of(i, 1) == 0));
    }

    #[test]
    fn a_stream_event_is_read_for_what_it_says() {
        assert_eq!(said(""), Ok(Said::Other));
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "p", "progress": 1, "total": 2}});
        assert_eq!(said(&progress.to_string()), Ok(Said::Progress));
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "1"}});
        assert_eq!(said(&log.to_string()), Ok(Said::Other));
        let done = json!({"jsonrpc": "2.0", "id": 1,
            "result": {"content": [{"type": "text", "text": "done"}]}});
        assert_eq!(said(&done.to_string()), Ok(Said::Answer));
    }

    #[test]
    fn a_wrong_or_failed_answer_on_a_stream_is_an_error() {
        for bad in [
            json!({"jsonrpc": "2.0", "id": 1,
                "result": {"content": [{"type": "text", "text": "not done"}]}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true,
                "content": [{"type": "text", "text": "done"}]}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1,
                "error": {"code": -32603, "message": "done"}}),
        ] {
            assert!(said(&bad.to_string()).is_err(), "{bad}");
        }
        assert!(said("{\"result\":").is_err());
    }

    fn task(status: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete",
            "taskId": "t-1", "status": status, "pollIntervalMs": 250}})
    }

    #[test]
    fn a_working_task_is_polled_at_its_interval() {
        assert_eq!(
            task_step(&task("working"), "slept 1 ms"),
            Ok(TaskStep::Poll {
                task_id: "t-1".into(),
                wait_ms: 250
            })
        );
        let mut v = task("working");
        v["result"]["pollIntervalMs"].take();
        assert_eq!(
            task_step(&v, "x"),
            Ok(TaskStep::Poll {
                task_id: "t-1".into(),
                wait_ms: 500
            })
        );
        v["result"]["taskId"].take();
        assert!(task_step(&v, "x").is_err());
    }

    #[test]
    fn a_completed_task_must_carry_the_answer() {
        let mut v = task("completed");
        v["result"]["result"] = json!({"content": [{"type": "text", "text": "slept 1 ms"}]});
        assert_eq!(task_step(&v, "slept 1 ms"), Ok(TaskStep::Done));
        assert!(task_step(&v, "slept 2 ms").is_err());
        v["result"]["result"]["isError"] = json!(true);
        assert!(task_step(&v, "slept 1 ms").is_err());
        assert!(task_step(&task("completed"), "slept 1 ms").is_err());
    }

    #[test]
    fn another_status_or_an_error_ends_the_task() {
        for status in ["failed", "cancelled", "input_required"] {
            assert!(task_step(&task(status), "x").is_err(), "{status}");
        }
        let error = json!({"jsonrpc": "2.0", "id": 2,
            "error": {"code": -32602, "message": "no such task"}});
        assert!(task_step(&error, "x").is_err());
    }
}
