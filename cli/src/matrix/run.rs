//! Running cells: a fresh server and client per scenario, over loopback.

use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;
use mcp_negotiate::client::{Connection, NegotiateError, connect};
use mcp_negotiate::server::legacy_config;
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_rev_2024_11_05::server::HttpSseServer;
use mcp_rev_2025_11_25::{
    DisconnectPolicy, PollingExt, TasksConfig as LegacyTasksConfig, TasksExt,
};
use mcp_rev_2026_07_28::server::{ModernConfig, TasksConfig};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::transport::Transport;
use serde_json::json;

use super::declared::{self, Declared};
use super::expect::{Expected, Failure, Prediction, expected, expected_given};
pub use super::harness::Observed;
use super::harness::{
    DISCONNECT_AFTER_EVENTS, DISCONNECT_RETRY_MS, Harness, Served, TASK_POLL_MS, client_config,
};
use super::scenario::Scenario;
use super::wire::Wire;
use super::{ClientKind, ServerKind};
use crate::reference::ReferenceHandler;
use mcp_http_edge::faults::Faults;
use mcp_test_support::Proxy;

/// One scenario of one cell, predicted and observed.
#[derive(Clone, Debug)]
pub struct ScenarioResult {
    /// The client configuration.
    pub client: ClientKind,
    /// The server configuration.
    pub server: ServerKind,
    /// The scenario.
    pub scenario: Scenario,
    /// What the spec predicts.
    pub prediction: Prediction,
    /// The revision actually negotiated.
    pub negotiated: Option<ProtocolVersion>,
    /// What happened.
    pub observed: Observed,
}

impl ScenarioResult {
    /// Whether what happened is what the spec predicts.
    pub fn passed(&self) -> bool {
        self.prediction.matches(&self.negotiated, &self.observed)
    }

    /// A one-line explanation of a mismatch (or of the pass).
    pub fn explain(&self) -> String {
        let rev = |r: &Option<ProtocolVersion>| {
            r.as_ref()
                .map(|v| v.to_string())
                .unwrap_or_else(|| "no revision".into())
        };
        let want = match &self.prediction.expected {
            Expected::Works => "works".to_owned(),
            Expected::Fails(f) => f.to_string(),
            Expected::NotApplicable => "not applicable".to_owned(),
        };
        let got = match &self.observed {
            Observed::Works(d) => format!("worked ({d})"),
            Observed::Failed { message, .. } => format!("failed: {message}"),
            Observed::Absent(d) => format!("absent, as checked ({d})"),
        };
        format!(
            "{} x {} / {}: expected {} on {}, got {} on {} [spec: {}]",
            self.client,
            self.server,
            self.scenario,
            want,
            rev(&self.prediction.revision),
            got,
            rev(&self.negotiated),
            self.prediction.spec
        )
    }
}

/// All scenarios of one cell.
#[derive(Clone, Debug)]
pub struct CellResult {
    /// The client configuration.
    pub client: ClientKind,
    /// The server configuration.
    pub server: ServerKind,
    /// One result per scenario run.
    pub scenarios: Vec<ScenarioResult>,
}

impl CellResult {
    /// Whether every scenario matched its prediction.
    pub fn passed(&self) -> bool {
        self.scenarios.iter().all(ScenarioResult::passed)
    }

    /// The revision the cell negotiated, as its scenarios saw it.
    pub fn negotiated(&self) -> Option<ProtocolVersion> {
        self.scenarios.iter().find_map(|s| s.negotiated.clone())
    }
}

/// Time one scenario may take before it counts as hung.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(15);

/// Runs every scenario of one cell (optionally only those `keep` accepts),
/// with the self-test's injected `faults` (none for the real matrix).
pub async fn run_cell(
    client: ClientKind,
    server: ServerKind,
    keep: impl Fn(Scenario) -> bool,
    faults: Faults,
) -> CellResult {
    let mut scenarios = Vec::new();
    for scenario in Scenario::ALL {
        if keep(scenario) {
            scenarios.push(run_one_with(client, server, scenario, faults).await);
        }
    }
    CellResult {
        client,
        server,
        scenarios,
    }
}

/// Runs every cell, `parallel` at a time, with the injected `faults` (none
/// for the real matrix); `progress` is told of each finished cell.
pub async fn run_matrix(
    filter: impl Fn(ClientKind, ServerKind, Scenario) -> bool + Send + Sync + 'static,
    parallel: usize,
    faults: Faults,
    progress: impl Fn(&CellResult) + Send + Sync + 'static,
) -> Vec<CellResult> {
    let filter = Arc::new(filter);
    let progress = Arc::new(progress);
    let gate = Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let mut tasks = Vec::new();
    for client in ClientKind::ALL {
        for server in ServerKind::ALL {
            if !Scenario::ALL.iter().any(|s| filter(client, server, *s)) {
                continue;
            }
            let (filter, progress, gate) = (filter.clone(), progress.clone(), gate.clone());
            tasks.push(tokio::spawn(async move {
                let _permit = gate.acquire_owned().await;
                let cell = run_cell(client, server, |s| filter(client, server, s), faults).await;
                progress(&cell);
                cell
            }));
        }
    }
    let mut cells = Vec::new();
    for t in tasks {
        if let Ok(cell) = t.await {
            cells.push(cell);
        }
    }
    cells
}

/// Runs one scenario of one cell against a fresh server.
pub async fn run_one(client: ClientKind, server: ServerKind, scenario: Scenario) -> ScenarioResult {
    run_one_with(client, server, scenario, Faults::NONE).await
}

/// Runs one scenario of one cell against a fresh server, with the
/// self-test's injected `faults` switched on in the server and client.
pub async fn run_one_with(
    client: ClientKind,
    server: ServerKind,
    scenario: Scenario,
    faults: Faults,
) -> ScenarioResult {
    let mut prediction = expected(client, server, scenario);
    let (negotiated, observed, seen) =
        match tokio::time::timeout(SCENARIO_TIMEOUT, observe(client, server, scenario, faults))
            .await
        {
            Ok(r) => r,
            Err(_) => (
                prediction.revision.clone(),
                Observed::Failed {
                    kind: None,
                    message: format!("hung: no outcome within {SCENARIO_TIMEOUT:?}"),
                },
                None,
            ),
        };
    // The task scenarios' prediction follows the declarations on the wire
    // (see `declared`).
    if seen.is_some() {
        prediction = expected_given(client, server, scenario, seen);
    }
    ScenarioResult {
        client,
        server,
        scenario,
        prediction,
        negotiated,
        observed,
    }
}

pub(crate) async fn spawn_server(
    client: ClientKind,
    server: ServerKind,
    scenario: Scenario,
    faults: Faults,
) -> std::io::Result<Harness> {
    let handler = Arc::new(ReferenceHandler::new());
    let wire = Wire::default();
    if server == ServerKind::Cluster {
        // One handler (the application) behind every instance; each
        // instance its own engines over the shared stores.
        let stores = super::cluster::stores()
            .await
            .map_err(std::io::Error::other)?;
        let mut servers = Vec::new();
        let mut apps = Vec::new();
        for st in &stores {
            let multi = MultiServer::new(
                handler.clone(),
                server_config(server, scenario, faults, Some(st)),
            );
            apps.push(wire.wrap(multi.route("/mcp")));
            servers.push(multi);
        }
        let running = super::cluster::serve(apps).await?;
        return Ok(Harness {
            server: Served::Cluster(servers),
            handler,
            addr: running.balancer.addr(),
            wire,
            client,
            faults,
            task: tokio::spawn(std::future::ready(())),
            _cluster: Some(running),
        });
    }
    let config = server_config(server, scenario, faults, None);
    let (served, mut app) = if server == ServerKind::S1105 {
        let h = HttpSseServer::new(handler.clone(), "/messages");
        let app = h.router("/mcp");
        (Served::HttpSse(h), app)
    } else {
        let multi = MultiServer::new(handler.clone(), config);
        let app = multi.route("/mcp");
        (Served::Multi(multi), app)
    };
    if server == ServerKind::Legacy200 {
        app = app.layer(axum::middleware::from_fn(discover_answered_200));
    }
    let app = wire.wrap(app);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let listener = listener.tap_io(|t| {
        let _ = t.set_nodelay(true);
    });
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(Harness {
        server: served,
        handler,
        addr,
        wire,
        client,
        faults,
        task,
        _cluster: None,
    })
}

/// The configuration of one server (one instance of `s-cluster`, whose
/// shared state `stores` gives) for `scenario`.
fn server_config(
    server: ServerKind,
    scenario: Scenario,
    faults: Faults,
    stores: Option<&super::cluster::Stores>,
) -> MultiConfig {
    let json = scenario == Scenario::Json;
    let mut legacy = legacy_config()
        .with_json_response(json)
        .with_retry_ms(20)
        .with_keepalive(None);
    if scenario == Scenario::Disconnect {
        legacy = legacy
            .with_retry_ms(DISCONNECT_RETRY_MS)
            .with_disconnect(DisconnectPolicy::AfterEvents(DISCONNECT_AFTER_EVENTS));
    }
    if let Some(st) = stores {
        legacy = legacy
            .with_event_store(st.events.clone())
            .with_session_store(st.sessions.clone())
            .with_signals(st.signals.clone());
    }
    if task_scenario(scenario) && declared::configured(server, &ProtocolVersion::V2025_11_25).server
    {
        let mut tasks = LegacyTasksConfig {
            poll_interval_ms: TASK_POLL_MS,
            ..LegacyTasksConfig::default()
        };
        if let Some(st) = stores {
            tasks.store = st.tasks.clone();
        }
        legacy = legacy.with_tasks(tasks);
    }
    if server == ServerKind::Legacy405 {
        legacy = legacy.with_get_stream(false).with_allow_delete(false);
    }
    legacy.http.faults = faults;
    let mut modern = ModernConfig::default()
        .with_json_response(json)
        .with_keepalive(None);
    modern.http.faults = faults;
    if task_scenario(scenario) && declared::configured(server, &ProtocolVersion::V2026_07_28).server
    {
        let mut tasks = TasksConfig {
            poll_interval_ms: TASK_POLL_MS,
            ..TasksConfig::default()
        };
        if let Some(st) = stores {
            tasks.store = st.tasks.clone();
        }
        modern.tasks = Some(tasks);
    }
    if let Some(st) = stores {
        modern = modern
            .with_state_key(Some(st.state_key))
            .with_signals(Some(st.signals.clone()));
    }
    MultiConfig {
        revisions: server.revisions(),
        legacy,
        modern,
        running: Default::default(),
    }
}

/// `s-legacy-200`: a `server/discover` without a session id is answered
/// as a sessionless legacy server answers an unknown method, HTTP 200 with
/// `-32601`; everything else goes to the legacy engine.
async fn discover_answered_200(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 4 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    if parts.method == http::Method::POST
        && v["method"] == "server/discover"
        && !parts
            .headers
            .contains_key(mcp_http_edge::headers::SESSION_ID)
    {
        let answer = json!({
            "jsonrpc": "2.0",
            "id": v["id"],
            "error": { "code": -32601, "message": "Method not found: server/discover" },
        });
        return axum::response::Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(axum::body::Body::from(answer.to_string()))
            .unwrap_or_default();
    }
    next.run(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from(body),
    ))
    .await
}

/// A failed negotiation is the spec-named failure when the error names
/// every version the client offered and at least one the server speaks.
fn classify_connect(e: &NegotiateError, client: ClientKind, server: ServerKind) -> Observed {
    let message = e.to_string();
    let names_client = client
        .revisions()
        .iter()
        .all(|v| message.contains(v.as_str()));
    // A legacy server's answer to `server/discover` names no version, nor
    // does a Streamable server's refusal of the HTTP+SSE GET; the error then
    // has to say which era or transport the server is not.
    let names_server = server
        .revisions()
        .iter()
        .any(|v| message.contains(v.as_str()))
        || (client.revisions().iter().all(ProtocolVersion::is_modern)
            && message.contains("not a modern server"))
        // An HTTP+SSE-only client learns only that the URL is no HTTP+SSE
        // endpoint.
        || (client == ClientKind::C1105 && message.contains("not an HTTP+SSE endpoint"));
    let kind = (matches!(e, NegotiateError::NoMatch { .. }) && names_client && names_server)
        .then_some(Failure::NoMutualRevision);
    let message = if kind.is_none() && matches!(e, NegotiateError::NoMatch { .. }) {
        format!(
            "{message} (the error does not name both sides' versions: client's named {names_client}, server's named {names_server})"
        )
    } else {
        message
    };
    Observed::Failed { kind, message }
}

/// The scenarios whose prediction depends on who declares tasks.
fn task_scenario(scenario: Scenario) -> bool {
    matches!(scenario, Scenario::LongRunningDrop | Scenario::Task)
}

/// What happened: the negotiated revision, the outcome, and (for the task
/// scenarios) who declared tasks on the wire.
type Observation = (Option<ProtocolVersion>, Observed, Option<Declared>);

async fn observe(
    client: ClientKind,
    server: ServerKind,
    scenario: Scenario,
    faults: Faults,
) -> Observation {
    let cannot = |message: String| {
        (
            None,
            Observed::Failed {
                kind: None,
                message,
            },
            None,
        )
    };
    let harness = match spawn_server(client, server, scenario, faults).await {
        Ok(h) => h,
        Err(e) => return cannot(format!("cannot start the server: {e}")),
    };
    // Network drops go through a proxy that can cut connections.
    let proxy = if matches!(
        scenario,
        Scenario::NetworkDrop | Scenario::TwoStreams | Scenario::LongRunningDrop
    ) {
        match Proxy::start(harness.addr).await {
            Ok(p) => Some(p),
            Err(e) => return cannot(format!("cannot start the proxy: {e}")),
        }
    } else {
        None
    };
    let target = proxy.as_ref().map(Proxy::addr).unwrap_or(harness.addr);
    let mut config = client_config(client, target, faults);
    if task_scenario(scenario) {
        config = config.with_capabilities(declared::client_capabilities());
    }
    let conn: Connection = match connect(config).await {
        Ok(c) => c,
        Err(e) => return (None, classify_connect(&e, client, server), None),
    };
    let negotiated = Some(conn.revision());
    if client == ClientKind::Future
        && let Err(why) = future_version_retried(&harness.wire)
    {
        return (
            negotiated,
            Observed::Failed {
                kind: None,
                message: why,
            },
            None,
        );
    }
    // Every scenario runs, also where the revision lacks the mechanism: it
    // then checks the absence.
    let mut observed = super::scenario_impl::run(scenario, &conn, &harness, proxy.as_ref()).await;
    let _ = conn.close().await;
    let seen = task_scenario(scenario).then(|| {
        let rev = conn.revision();
        let seen = declared::on_wire(&harness.wire.exchanges(), &rev);
        if let Some(why) = declared::missing(declared::configured(server, &rev), seen) {
            observed = Observed::Failed {
                kind: None,
                message: format!("{why} (the wire shows {seen:?})"),
            };
        }
        seen
    });
    (negotiated, observed, seen)
}

/// The `-32022` → retry path on the wire: the first modern request offered
/// [`super::FUTURE_VERSION`] and was answered `-32022` listing the
/// supported versions; a later request used one of them.
fn future_version_retried(wire: &Wire) -> Result<(), String> {
    let exchanges = wire.exchanges();
    let version = |e: &super::wire::Exchange| {
        e.header(mcp_http_edge::headers::PROTOCOL_VERSION)
            .unwrap_or_default()
            .to_owned()
    };
    let first = exchanges
        .iter()
        .find(|e| e.method == http::Method::POST)
        .ok_or("no request on the wire")?;
    if version(first) != super::FUTURE_VERSION {
        return Err(format!(
            "the first request offered {:?}, not {}",
            version(first),
            super::FUTURE_VERSION
        ));
    }
    let answer = first.messages().into_iter().next().unwrap_or_default();
    let supported = &answer["error"]["data"]["supported"];
    if answer["error"]["code"] != -32022 || !supported.is_array() {
        return Err(format!(
            "{} was answered {answer}, not -32022 with data.supported",
            super::FUTURE_VERSION
        ));
    }
    let retried = exchanges
        .iter()
        .skip_while(|e| !std::ptr::eq(*e, first))
        .skip(1)
        .any(|e| {
            supported
                .as_array()
                .is_some_and(|s| s.iter().any(|v| v.as_str() == Some(version(e).as_str())))
        });
    if retried {
        Ok(())
    } else {
        Err(format!(
            "no request retried with a version from {supported} after -32022"
        ))
    }
}

#[cfg(test)]
mod tests;
