//! `mcp-compat check-server URL`: points this workspace's client
//! configurations at *someone else's* server and reports which revisions it
//! speaks and, per revision, the transport behaviours it gets right or wrong,
//! each with the spec sentence it checks.
//!
//! 1. **Revisions** ([`RevisionProbe`]): `initialize` offering 2025-03-26,
//!    2025-06-18 and 2025-11-25 in turn (accepted, counter-offered or
//!    refused), and `server/discover` with the 2026-07-28 `_meta` and
//!    headers.
//! 2. **Behaviours** ([`Check`]), only for the revisions the server speaks,
//!    over raw HTTP (reqwest plus the workspace's SSE decoder, so the wire
//!    is seen exactly as sent). The ids are in [`id`]; what each one sends
//!    and expects is documented on its constant.
//! 3. **The peer** ([`Peer`]) from `serverInfo`, its version parsed with
//!    `semver` where it is one, and the **known quirks** of named
//!    implementations whose version range it falls in ([`quirks`], one data
//!    file), each with whether our check observed it.
//!
//! An outcome is [`Outcome::Pass`], [`Outcome::Fail`], or — honestly —
//! [`Outcome::NotApplicable`] (the rule does not bind this server, e.g. it
//! assigns no session id) or [`Outcome::Inconclusive`] (the behaviour could
//! not be observed, e.g. the server answered JSON where the rule is about
//! SSE).
//!
//! Every check carries its [`Level`]: the keyword of the sentence it tests
//! (MUST, SHOULD, MAY) or this project's policy, and cites that sentence's
//! section on the published spec site. The command exits 1 only when a
//! check at the `--fail-on` level or a stricter one fails (default: MUST);
//! `--junit FILE` writes the report as JUnit XML too ([`junit`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), String> {
//! let report = mcp_compat::check::run("http://127.0.0.1:3000/mcp", Default::default()).await?;
//! assert!(report.passed(), "{}", mcp_compat::check::report::render(&report, Default::default()));
//! # Ok(()) }
//! ```

mod detect;
pub mod html;
pub mod junit;
mod legacy;
mod legacy_tasks;
pub mod level;
mod modern;
mod polling;
pub mod quirks;
pub mod report;
mod spec;
mod tasks;
#[cfg(test)]
mod test_fake;
mod wire;

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use mcp_transport_core::ProtocolVersion;
use serde::Serialize;
use serde_json::Value;

pub use detect::{Peer, ProbeAnswer, RevisionProbe};
pub use level::{FailOn, Level};
pub use quirks::{Observation, QuirkFinding};

use crate::revisions;
use spec::Spec;
use wire::Wire;

/// The check ids, stable across releases (the quirks file names them).
pub mod id {
    /// 2025-11-25: the first event of a POST SSE stream (a `tools/list`, or
    /// a `ping` when that is answered as JSON) has an id and empty data.
    pub const PRIMING_EVENT: &str = "priming-event";
    /// 2025-11-25: a connection the server closes before its stream's
    /// response carries a `retry` field first (observable only when the
    /// server closes early).
    pub const RETRY_BEFORE_CLOSE: &str = "retry-before-close";
    /// A resumed connection closed before it carried any event still
    /// leaves the client an event id.
    pub const RESUMED_CLOSE_CARRIES_ID: &str = "resumed-close-carries-id";
    /// 2025-11-25: the ids of two streams of one session differ.
    pub const EVENT_IDS_UNIQUE: &str = "event-ids-unique";
    /// 2025-11-25: a GET resuming with an id of stream A replays nothing
    /// of stream B.
    pub const RESUME_SAME_STREAM: &str = "resume-same-stream";
    /// 2025-11-25: a GET resuming with `Last-Event-ID: X` never repeats X.
    pub const EXCLUSIVE_REPLAY: &str = "exclusive-replay";
    /// 2025-11-25: a GET with a `Last-Event-ID` the server never issued is
    /// refused with a 4xx, not answered 200 with an empty stream.
    pub const FAILED_RESUME_4XX: &str = "failed-resume-4xx";
    /// 2025-06-18 (or 2025-03-26): no priming event on an older session's
    /// streams.
    pub const NO_PRIMING_FOR_OLDER: &str = "no-priming-for-older";
    /// Legacy: after DELETE, a request naming the session gets 404.
    pub const NOT_FOUND_AFTER_DELETE: &str = "404-after-delete";
    /// Legacy: a request without `MCP-Session-Id` (not `initialize`) gets 400.
    pub const BAD_REQUEST_WITHOUT_SESSION: &str = "400-without-session";
    /// 2025-06-18 and later legacy: a malformed `MCP-Protocol-Version`
    /// gets 400.
    pub const BAD_REQUEST_MALFORMED_VERSION: &str = "400-malformed-version";
    /// Every revision: `Origin: http://evil.example` gets 403 (2025-11-25
    /// and later name the 403; earlier revisions any refusal).
    pub const FORBIDDEN_BAD_ORIGIN: &str = "403-bad-origin";
    /// Every revision: a POST without `Accept` gets 406.
    pub const NOT_ACCEPTABLE_WITHOUT_ACCEPT: &str = "406-without-accept";
    /// 2026-07-28: GET gets 405.
    pub const METHOD_NOT_ALLOWED_ON_GET: &str = "405-on-get";
    /// 2026-07-28: an `Mcp-Method` that differs from the body gets 400 with
    /// `-32020`.
    pub const HEADER_MISMATCH: &str = "header-mismatch";
    /// 2026-07-28: a POST without `MCP-Protocol-Version` gets 400.
    pub const MISSING_VERSION_HEADER: &str = "missing-version-header";
    /// 2026-07-28: an unknown version gets 400 with `-32022` and
    /// `data.supported`.
    pub const UNSUPPORTED_VERSION: &str = "unsupported-version";
    /// 2026-07-28: closing a request's response stream cancels it.
    pub const CANCEL_ON_CLOSE: &str = "cancel-on-close";

    /// Tasks extension: the task methods need the extension declared.
    pub const TASKS_GATED: &str = "tasks-gated";
    /// Tasks extension and 2025-11-25 tasks: an unknown task id is
    /// `-32602` (2025-11-25: for `tasks/get`, `tasks/result` and, where
    /// declared, `tasks/cancel`).
    pub const TASKS_UNKNOWN_ID: &str = "tasks-unknown-id";
    /// Tasks extension: `Mcp-Name` must carry the task id.
    pub const TASKS_MCP_NAME: &str = "tasks-mcp-name";

    /// 2025-11-25 tasks: every `execution.taskSupport` in `tools/list` is
    /// `forbidden`, `optional` or `required`.
    pub const TASKS_SUPPORT_VALUES: &str = "tasks-support-values";
    /// 2025-11-25 tasks: a task-augmented `tools/call` of a tool that
    /// allows tasks gets a `CreateTaskResult` (`task` with `taskId`,
    /// `status`, `createdAt`, `lastUpdatedAt`, `ttl`, and `pollInterval`
    /// if any, typed as the schema says).
    pub const TASKS_CREATE: &str = "tasks-create";
    /// 2025-11-25 tasks: `tasks/get` of that task answers the task, `ttl`
    /// included.
    pub const TASKS_GET: &str = "tasks-get";
    /// 2025-11-25 tasks: `tasks/result` answers only once the task is
    /// terminal (`tasks/get` right after says so), with the tool's result
    /// or its JSON-RPC error (JSON or SSE).
    pub const TASKS_RESULT_BLOCKS: &str = "tasks-result-blocks";
    /// 2025-11-25 tasks: the `tasks/result` result carries
    /// `_meta["io.modelcontextprotocol/related-task"].taskId`.
    pub const TASKS_RELATED_TASK: &str = "tasks-related-task";
    /// 2025-11-25 tasks: `tasks/list` (pages followed) lists the task.
    pub const TASKS_LIST: &str = "tasks-list";
    /// 2025-11-25 tasks: `tasks/cancel` of a terminal task is `-32602`.
    pub const TASKS_CANCEL_TERMINAL: &str = "tasks-cancel-terminal";
    /// 2025-11-25 tasks: a task-augmented call of a tool whose
    /// `taskSupport` is absent or `forbidden` is `-32601`.
    pub const TASKS_FORBIDDEN_TOOL: &str = "tasks-forbidden-tool";
    /// 2025-11-25 tasks: a call without a task of a tool whose
    /// `taskSupport` is `required` is `-32601`.
    pub const TASKS_REQUIRED_TOOL: &str = "tasks-required-tool";
    /// 2025-11-25 tasks: a server that declares `tasks` but not
    /// `tasks.requests.tools.call` serves a task-augmented `tools/call`
    /// normally.
    pub const TASKS_UNDECLARED_IGNORED: &str = "tasks-undeclared-ignored";

    /// Every id.
    pub const ALL: [&str; 31] = [
        PRIMING_EVENT,
        RETRY_BEFORE_CLOSE,
        RESUMED_CLOSE_CARRIES_ID,
        EVENT_IDS_UNIQUE,
        RESUME_SAME_STREAM,
        EXCLUSIVE_REPLAY,
        FAILED_RESUME_4XX,
        NO_PRIMING_FOR_OLDER,
        NOT_FOUND_AFTER_DELETE,
        BAD_REQUEST_WITHOUT_SESSION,
        BAD_REQUEST_MALFORMED_VERSION,
        FORBIDDEN_BAD_ORIGIN,
        NOT_ACCEPTABLE_WITHOUT_ACCEPT,
        METHOD_NOT_ALLOWED_ON_GET,
        HEADER_MISMATCH,
        MISSING_VERSION_HEADER,
        UNSUPPORTED_VERSION,
        CANCEL_ON_CLOSE,
        TASKS_GATED,
        TASKS_UNKNOWN_ID,
        TASKS_MCP_NAME,
        TASKS_SUPPORT_VALUES,
        TASKS_CREATE,
        TASKS_GET,
        TASKS_RESULT_BLOCKS,
        TASKS_RELATED_TASK,
        TASKS_LIST,
        TASKS_CANCEL_TERMINAL,
        TASKS_FORBIDDEN_TOOL,
        TASKS_REQUIRED_TOOL,
        TASKS_UNDECLARED_IGNORED,
    ];
}

/// What a check found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum Outcome {
    /// The server does what the sentence says.
    Pass,
    /// It does not; the reason says what it did instead.
    Fail(String),
    /// The sentence does not bind this server (and why).
    NotApplicable(String),
    /// The behaviour could not be observed (and why).
    Inconclusive(String),
    /// Allowed by the spec, but a widely used client breaks on it (and
    /// which, and why). Not a failure.
    Warn(String),
}

impl Outcome {
    /// Whether this is a failure.
    pub fn is_fail(&self) -> bool {
        matches!(self, Outcome::Fail(_))
    }

    /// The reason, for anything but a pass.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Outcome::Pass => None,
            Outcome::Fail(r)
            | Outcome::NotApplicable(r)
            | Outcome::Inconclusive(r)
            | Outcome::Warn(r) => Some(r),
        }
    }

    /// A short label: `pass`, `FAIL`, `n/a`, `inconclusive`, `warn`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail(_) => "FAIL",
            Outcome::NotApplicable(_) => "n/a",
            Outcome::Inconclusive(_) => "inconclusive",
            Outcome::Warn(_) => "warn",
        }
    }
}

/// One behaviour checked at one revision.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// The check's id (see [`id`]).
    pub id: &'static str,
    /// The revision it ran at.
    pub revision: ProtocolVersion,
    /// How binding the rule is: the keyword of the sentence it tests, or
    /// this project's policy.
    pub level: Level,
    /// What it checks, in a line.
    pub title: &'static str,
    /// The spec sentence it checks, quoted exactly.
    pub spec: &'static str,
    /// The heading of the spec section that sentence is in.
    pub spec_section: &'static str,
    /// That section on the published spec site.
    pub spec_url: String,
    /// What it found.
    pub outcome: Outcome,
}

impl Check {
    fn new(
        id: &'static str,
        revision: &ProtocolVersion,
        title: &'static str,
        spec: Spec,
        outcome: Outcome,
    ) -> Check {
        Check {
            id,
            revision: revision.clone(),
            level: spec.level,
            title,
            spec: spec.text,
            spec_section: spec.section,
            spec_url: spec.url(),
            outcome,
        }
    }
}

/// A long-running tool of the server under test, for the cancellation check.
#[derive(Clone, Debug)]
pub struct SlowTool {
    /// The tool's name (it must be in `tools/list`).
    pub name: String,
    /// Arguments that keep it running for several seconds.
    pub arguments: Value,
    /// A tool whose text result starts with the number of requests the
    /// server has seen cancelled (e.g. the reference server's
    /// `cancelled_count`); without one, whether the work stopped cannot be
    /// seen from outside and the check is inconclusive.
    pub cancel_count_tool: Option<String>,
}

/// A tool of the server under test that the 2025-11-25 task checks may
/// call, with arguments that make a short, harmless call. The checks call
/// only tools named here: which check uses which follows from its
/// `execution.taskSupport` in `tools/list`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
}

impl std::str::FromStr for ToolCall {
    type Err = String;

    /// `NAME` (arguments `{}`) or `NAME=JSON-OBJECT`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, args) = match s.split_once('=') {
            Some((n, a)) => (n, a),
            None => (s, "{}"),
        };
        if name.trim().is_empty() {
            return Err(format!("--tool {s:?}: no tool name"));
        }
        let arguments: Value = serde_json::from_str(args)
            .map_err(|e| format!("--tool {s:?}: the arguments are not JSON: {e}"))?;
        if !arguments.is_object() {
            return Err(format!("--tool {s:?}: the arguments must be a JSON object"));
        }
        Ok(ToolCall {
            name: name.trim().to_owned(),
            arguments,
        })
    }
}

/// How to run the checks.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The revisions to probe (and check, where the server speaks them).
    pub revisions: Vec<ProtocolVersion>,
    /// The bound on one HTTP exchange, and on reading one SSE stream.
    pub timeout: Duration,
    /// A long-running tool, for `cancel-on-close` (and a chance to see a
    /// 2025-11-25 server close a stream early, for `retry-before-close`).
    pub slow_tool: Option<SlowTool>,
    /// Tools the 2025-11-25 task checks may call (see [`ToolCall`]).
    pub tools: Vec<ToolCall>,
    /// The HTTP client (a fresh one when `None`).
    pub http: Option<reqwest::Client>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            revisions: revisions::SERVED.to_vec(),
            timeout: Duration::from_secs(5),
            slow_tool: None,
            tools: Vec::new(),
            http: None,
        }
    }
}

/// What `check-server` found.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The endpoint checked.
    pub url: String,
    /// The server, from its `serverInfo`.
    pub peer: Option<Peer>,
    /// How the server answered each revision.
    pub revisions: Vec<RevisionProbe>,
    /// The behaviour checks, by revision.
    pub checks: Vec<Check>,
    /// Known quirks of the named implementation at its version.
    pub quirks: Vec<QuirkFinding>,
}

impl Report {
    /// The revisions the server accepted.
    pub fn speaks(&self) -> Vec<ProtocolVersion> {
        self.revisions
            .iter()
            .filter(|p| p.answer == ProbeAnswer::Accepted)
            .map(|p| p.revision.clone())
            .collect()
    }

    /// The failed checks.
    pub fn failures(&self) -> Vec<&Check> {
        self.checks.iter().filter(|c| c.outcome.is_fail()).collect()
    }

    /// The check `id` at `revision`, if it ran.
    pub fn find(&self, id: &str, revision: &ProtocolVersion) -> Option<&Check> {
        self.checks
            .iter()
            .find(|c| c.id == id && &c.revision == revision)
    }

    /// The failed checks that count under `fail_on`.
    pub fn failures_at(&self, fail_on: FailOn) -> Vec<&Check> {
        self.checks
            .iter()
            .filter(|c| c.outcome.is_fail() && fail_on.counts(c.level))
            .collect()
    }

    /// The server speaks at least one revision and no check failed.
    pub fn passed(&self) -> bool {
        !self.speaks().is_empty() && self.failures().is_empty()
    }

    /// The server speaks at least one revision and no check failed at
    /// `fail_on` or a stricter level.
    pub fn passed_at(&self, fail_on: FailOn) -> bool {
        !self.speaks().is_empty() && self.failures_at(fail_on).is_empty()
    }
}

/// What the checks share.
pub(crate) struct Ctx<'a> {
    pub wire: &'a Wire,
    pub opts: &'a CheckOptions,
    /// The revisions the server accepted.
    pub speaks: &'a [ProtocolVersion],
}

/// Runs every probe and check against `url`. Fails only when `url` is not
/// a usable http(s) URL; everything the server does is in the report.
pub async fn run(url: &str, opts: CheckOptions) -> Result<Report, String> {
    let wire = Wire::new(url, opts.timeout, opts.http.clone())?;
    let mut probes = Vec::new();
    let mut peer = None;
    let mut wanted = opts.revisions.clone();
    wanted.sort();
    wanted.dedup();
    for rev in &wanted {
        let (probe, info) = if rev.is_modern() {
            detect::probe_modern(&wire, rev).await
        } else {
            detect::probe_legacy(&wire, rev).await
        };
        tracing::debug!(revision = %rev, answer = ?probe.answer, detail = %probe.detail, "probed");
        if peer.is_none()
            && let Some(info) = info
        {
            peer = Peer::from_server_info(&info, rev);
        }
        probes.push(probe);
    }
    let speaks: Vec<ProtocolVersion> = probes
        .iter()
        .filter(|p| p.answer == ProbeAnswer::Accepted)
        .map(|p| p.revision.clone())
        .collect();
    let cx = Ctx {
        wire: &wire,
        opts: &opts,
        speaks: &speaks,
    };
    let mut checks = Vec::new();
    for rev in &speaks {
        if rev.is_legacy() {
            checks.extend(legacy::run(&cx, rev).await);
            if rev.has(|f| f.sse_polling) {
                checks.extend(polling::run(&cx, rev).await);
            }
            if *rev == ProtocolVersion::V2025_11_25 {
                checks.extend(legacy_tasks::run(&cx, rev).await);
            }
        } else {
            checks.extend(modern::run(&cx, rev).await);
            checks.extend(tasks::run(&cx, rev).await);
        }
    }
    let quirks = match &peer {
        Some(p) => quirks::flag(p, &checks),
        None => Vec::new(),
    };
    Ok(Report {
        url: url.to_owned(),
        peer,
        revisions: probes,
        checks,
        quirks,
    })
}

/// Options of `mcp-compat check-server`.
#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// The MCP endpoint URL of the server to check.
    pub url: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: report::Format,
    /// Revisions to probe and check: a comma-separated list or `all`.
    #[arg(long, default_value = "all")]
    pub revisions: String,
    /// Bound on one HTTP exchange (and on reading one SSE stream), in ms.
    #[arg(long, default_value_t = 5_000)]
    pub timeout_ms: u64,
    /// A tool of the server that runs for several seconds (for
    /// `cancel-on-close`); it must be in `tools/list`.
    #[arg(long)]
    pub slow_tool: Option<String>,
    /// The slow tool's arguments, as a JSON object.
    #[arg(long, default_value = "{}", requires = "slow_tool")]
    pub slow_args: String,
    /// A tool whose text result is the number of cancelled requests so far
    /// (e.g. `cancelled_count`), so `cancel-on-close` can see the
    /// cancellation.
    #[arg(long, requires = "slow_tool")]
    pub cancel_count_tool: Option<String>,
    /// A tool the 2025-11-25 task checks may call, as `NAME` or
    /// `NAME=JSON` (its arguments; repeatable). They call no other tool:
    /// name one that allows tasks, one that forbids them and one that
    /// requires them (`execution.taskSupport`) for every task check to run.
    #[arg(long = "tool", value_name = "NAME[=JSON]")]
    pub tools: Vec<ToolCall>,
    /// Exit 1 only when a check at this level or a stricter one fails
    /// (must < should < may < policy).
    #[arg(long, value_enum, default_value = "must")]
    pub fail_on: FailOn,
    /// Also write the report as JUnit XML to this file (one test case per
    /// check and revision; n/a and inconclusive as skipped).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the report to this file instead of stdout.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Headers and trusted certificates.
    #[command(flatten)]
    pub http: crate::http_client::HttpClientArgs,
}

impl CheckArgs {
    /// The library options these arguments mean.
    pub fn options(&self) -> Result<CheckOptions, String> {
        let revisions = revisions::parse_served(&self.revisions)?;
        let slow_tool = match &self.slow_tool {
            Some(name) => {
                let arguments: Value = serde_json::from_str(&self.slow_args)
                    .map_err(|e| format!("--slow-args is not JSON: {e}"))?;
                if !arguments.is_object() {
                    return Err("--slow-args must be a JSON object".into());
                }
                Some(SlowTool {
                    name: name.clone(),
                    arguments,
                    cancel_count_tool: self.cancel_count_tool.clone(),
                })
            }
            None => None,
        };
        if self.timeout_ms == 0 {
            return Err("--timeout-ms must be at least 1".into());
        }
        Ok(CheckOptions {
            revisions,
            timeout: Duration::from_millis(self.timeout_ms),
            slow_tool,
            tools: self.tools.clone(),
            http: Some(self.http.client()?),
        })
    }
}

/// Runs `check-server` as the binary does: prints (or writes) the report,
/// writes the JUnit file if asked, and returns whether no check failed at
/// the `--fail-on` level or a stricter one.
pub async fn cli(args: CheckArgs) -> Result<bool, String> {
    let opts = args.options()?;
    eprintln!("checking {}", args.url);
    let report = run(&args.url, opts).await?;
    let text = report::render(&report, args.format);
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => print!("{text}"),
    }
    if let Some(path) = &args.junit {
        let xml = junit::render(&report)?;
        std::fs::write(path, xml).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if report.speaks().is_empty() {
        return Err(format!("{} speaks none of the revisions tried", report.url));
    }
    Ok(report.passed_at(args.fail_on))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use mcp_transport_core::ProtocolVersion as V;

    #[test]
    fn a_report_counts_failures_by_the_level_asked() {
        let r = report::tests::report();
        assert_eq!(r.speaks(), [V::V2025_11_25]);
        let ids = |checks: Vec<&Check>| -> Vec<(&str, V)> {
            checks.iter().map(|c| (c.id, c.revision.clone())).collect()
        };
        assert_eq!(
            ids(r.failures()),
            [("origin", V::V2025_11_25), ("priming", V::V2025_11_25)]
        );
        // origin is a MUST, priming a SHOULD.
        assert_eq!(
            ids(r.failures_at(FailOn::Must)),
            [("origin", V::V2025_11_25)]
        );
        assert_eq!(ids(r.failures_at(FailOn::Should)).len(), 2);
        assert!(!r.passed() && !r.passed_at(FailOn::Must));
        assert_eq!(
            r.find("origin", &V::V2025_06_18).map(|c| &c.outcome),
            Some(&Outcome::Pass)
        );
        assert!(r.find("origin", &V::V2026_07_28).is_none());
        assert!(r.find("priming", &V::V2025_06_18).is_none());
        // Without the MUST failure: passed at MUST, not at SHOULD.
        let mut should_only = r.clone();
        should_only.checks.retain(|c| c.id != "origin");
        assert!(should_only.passed_at(FailOn::Must));
        assert!(!should_only.passed_at(FailOn::Should) && !should_only.passed());
        // Nothing failed, but nothing spoken: not a pass.
        let mut clean = should_only.clone();
        clean.checks.retain(|c| !c.outcome.is_fail());
        assert!(clean.passed() && clean.passed_at(FailOn::Policy));
        clean
            .revisions
            .retain(|p| p.answer != ProbeAnswer::Accepted);
        assert!(!clean.passed() && !clean.passed_at(FailOn::Policy));
    }

    #[test]
    fn a_tool_is_a_name_and_a_json_object() {
        let t: ToolCall = "echo".parse().expect("a name");
        assert_eq!(
            (t.name.as_str(), t.arguments),
            ("echo", serde_json::json!({}))
        );
        let t: ToolCall = r#" add ={"a":1}"#.parse().expect("with arguments");
        assert_eq!(t.name, "add");
        assert_eq!(t.arguments, serde_json::json!({"a": 1}));
        for (bad, why) in [
            ("={}", "no tool name"),
            ("x=[1]", "must be a JSON object"),
            ("x={", "not JSON"),
        ] {
            let err = bad.parse::<ToolCall>().expect_err(bad);
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CheckArgs,
    }

    fn options(argv: &[&str]) -> Result<CheckOptions, String> {
        let cli = Cli::try_parse_from(
            ["check-server", "http://127.0.0.1:1/mcp"]
                .iter()
                .chain(argv),
        )
        .map_err(|e| e.to_string())?;
        cli.args.options()
    }

    #[test]
    fn the_arguments_become_options_or_a_clear_error() {
        let o = options(&[]).expect("defaults");
        // `all`: every Streamable HTTP revision, newest first.
        let mut served = revisions::SERVED.to_vec();
        served.reverse();
        assert_eq!(o.revisions, served);
        assert_eq!(o.timeout, Duration::from_secs(5));
        assert!(o.slow_tool.is_none() && o.tools.is_empty() && o.http.is_some());
        let o = options(&[
            "--revisions",
            "2025-11-25",
            "--timeout-ms",
            "250",
            "--slow-tool",
            "slow",
            "--slow-args",
            r#"{"ms": 5000}"#,
            "--cancel-count-tool",
            "cancelled_count",
            "--tool",
            "echo",
        ])
        .expect("options");
        assert_eq!(o.revisions, [V::V2025_11_25]);
        assert_eq!(o.timeout, Duration::from_millis(250));
        let slow = o.slow_tool.expect("a slow tool");
        assert_eq!(slow.name, "slow");
        assert_eq!(slow.arguments, serde_json::json!({"ms": 5000}));
        assert_eq!(slow.cancel_count_tool.as_deref(), Some("cancelled_count"));
        assert_eq!(o.tools.len(), 1);
        for (argv, why) in [
            (
                &["--timeout-ms", "0"][..],
                "--timeout-ms must be at least 1",
            ),
            (
                &["--slow-tool", "s", "--slow-args", "[]"][..],
                "--slow-args must be a JSON object",
            ),
            (
                &["--slow-tool", "s", "--slow-args", "{"][..],
                "--slow-args is not JSON",
            ),
            (&["--revisions", "soon"][..], "soon"),
        ] {
            let err = options(argv)
                .err()
                .unwrap_or_else(|| panic!("{argv:?} accepted"));
            assert!(err.contains(why), "{argv:?}: {err}");
        }
    }
}
