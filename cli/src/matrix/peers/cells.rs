//! The peer cells: which rows and columns the peers add, and running them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_http_edge::faults::Faults;
use mcp_transport_core::ProtocolVersion as V;
use serde::Serialize;
use tokio::sync::Semaphore;

use super::super::expect::{Expected, Prediction};
use super::super::harness::Observed;
use super::super::{ClientKind, ServerKind};
use super::manifest::{Manifest, ModeLimits, Quirk, fill, versions};
use super::outcome::{PeerObserved, Verdict, verdict};
use super::predict::{ClientModel, ServerMode, predict};
use super::process::{install, run_contract_client, start_server};
use super::scenario::PeerScenario;

/// A row: one of our client configurations or a peer's client row.
#[derive(Clone, Debug)]
pub enum Row {
    /// Ours.
    Ours(ClientKind),
    /// A peer's: the manifest and the index of its row.
    Peer(Arc<Manifest>, usize),
}

/// A column: one of our server configurations or a peer server in a mode.
#[derive(Clone, Debug)]
pub enum Column {
    /// Ours.
    Ours(ServerKind),
    /// A peer's server in `mode`, serving `revision` only when its command
    /// takes `{revision}`.
    Peer {
        /// The peer.
        peer: Arc<Manifest>,
        /// The mode.
        mode: String,
        /// The one revision it serves, when the command takes `{revision}`.
        revision: Option<String>,
    },
}

impl Row {
    /// The label in reports (`c-all`, `ts-sdk@1.32.2 c-2025-11-25`).
    pub fn label(&self) -> String {
        match self {
            Row::Ours(c) => c.name().to_owned(),
            Row::Peer(m, i) => format!("{} {}", m.label(), client_rows(m)[*i].name),
        }
    }

    fn model(&self) -> ClientModel {
        match self {
            Row::Ours(c) => ClientModel::of(*c),
            Row::Peer(m, i) => {
                let r = &client_rows(m)[*i];
                let offers = versions(&r.offers);
                let accepts = if r.accepts.is_empty() {
                    offers.clone()
                } else {
                    versions(&r.accepts)
                };
                ClientModel { offers, accepts }
            }
        }
    }
}

fn client_rows(m: &Manifest) -> &[super::manifest::ClientRow] {
    m.client
        .as_ref()
        .map(|c| c.rows.as_slice())
        .unwrap_or_default()
}

impl Column {
    /// The label in reports (`s-all`, `ts-sdk@1.32.2 s-sse`).
    pub fn label(&self) -> String {
        match self {
            Column::Ours(s) => s.name().to_owned(),
            Column::Peer {
                peer,
                mode,
                revision: None,
            } => format!("{} s-{mode}", peer.label()),
            Column::Peer {
                peer,
                mode,
                revision: Some(r),
            } => format!("{} s-{r}-{mode}", peer.label()),
        }
    }

    /// The revisions served.
    pub fn served(&self) -> Vec<V> {
        match self {
            Column::Ours(s) => s.revisions(),
            Column::Peer {
                revision: Some(r), ..
            } => vec![V::parse(r)],
            Column::Peer { peer, .. } => peer
                .server
                .as_ref()
                .map(|s| versions(&s.revisions))
                .unwrap_or_default(),
        }
    }

    fn mode(&self) -> &str {
        match self {
            Column::Ours(_) => "sse",
            Column::Peer { mode, .. } => mode,
        }
    }

    /// What the column's server does: JSON answers in a `json` mode, and
    /// what the peer's manifest says its mode cannot do.
    fn server_mode(&self) -> ServerMode {
        let limits = match self {
            Column::Ours(_) => ModeLimits::default(),
            Column::Peer { peer, mode, .. } => peer
                .server
                .as_ref()
                .map(|s| s.limits(mode))
                .unwrap_or_default(),
        };
        ServerMode {
            json: self.mode() == "json",
            limits,
        }
    }
}

/// One scenario of a peer cell.
#[derive(Clone, Debug, Serialize)]
pub struct PeerResult {
    /// The scenario's name.
    pub scenario: &'static str,
    /// The predicted revision (`None`: no mutual revision).
    pub predicted_revision: Option<String>,
    /// The predicted outcome.
    pub expected: String,
    /// The spec text behind it.
    pub spec: &'static str,
    /// The revision negotiated.
    pub negotiated: Option<String>,
    /// What happened.
    pub observed: String,
    /// `pass`, `quirk`, `quirk gone`, `n/a` or `fail`.
    pub verdict: String,
    /// The quirk id (quirk / quirk gone) or the n/a reason.
    pub note: String,
    #[serde(skip)]
    pub(crate) v: Verdict,
}

/// One cell: a row against a column.
#[derive(Clone, Debug, Serialize)]
pub struct PeerCell {
    /// The row's label.
    pub client: String,
    /// The column's label.
    pub server: String,
    /// One result per scenario run.
    pub scenarios: Vec<PeerResult>,
}

impl PeerCell {
    /// Whether every scenario matched the prediction or a listed quirk.
    pub fn accepted(&self) -> bool {
        self.scenarios.iter().all(|s| s.v.accepted())
    }

    /// The revision negotiated (the first scenario that says).
    pub fn negotiated(&self) -> Option<&str> {
        self.scenarios.iter().find_map(|s| s.negotiated.as_deref())
    }
}

/// The rows and columns the peers add (ours are added where a peer has the
/// other side).
pub fn layout(peers: &[Arc<Manifest>]) -> (Vec<Row>, Vec<Column>) {
    let mut rows = Vec::new();
    let mut cols = Vec::new();
    let peer_servers = peers.iter().any(|p| p.server.is_some());
    let peer_clients = peers.iter().any(|p| p.client.is_some());
    if peer_servers {
        rows.extend(ClientKind::ALL.into_iter().map(Row::Ours));
    }
    if peer_clients {
        cols.extend(ServerKind::ALL.into_iter().map(Column::Ours));
    }
    for p in peers {
        for i in 0..client_rows(p).len() {
            rows.push(Row::Peer(p.clone(), i));
        }
        if let Some(s) = &p.server {
            let per_revision = s.command.iter().any(|a| a.contains("{revision}"));
            for mode in &s.modes {
                if per_revision {
                    for r in &s.revisions {
                        cols.push(Column::Peer {
                            peer: p.clone(),
                            mode: mode.clone(),
                            revision: Some(r.clone()),
                        });
                    }
                } else {
                    cols.push(Column::Peer {
                        peer: p.clone(),
                        mode: mode.clone(),
                        revision: None,
                    });
                }
            }
        }
    }
    (rows, cols)
}

/// The quirks of the peers in a cell that concern `scenario` on `revision`.
fn quirks_for<'a>(
    row: &'a Row,
    col: &'a Column,
    scenario: PeerScenario,
    revision: Option<&V>,
) -> Vec<&'a Quirk> {
    let mut out = Vec::new();
    let rev = revision.map(|r| r.as_str().to_owned()).unwrap_or_default();
    let mut add = |m: &'a Manifest, side: &str, counterpart: String| {
        for q in &m.quirks {
            let fits = q.side == side
                && q.scenario == scenario.name()
                && (q.revisions.is_empty() || q.revisions.contains(&rev))
                && (q.modes.is_empty() || q.modes.iter().any(|x| x == col.mode()))
                && (q.against.is_empty() || q.against.iter().any(|a| counterpart.contains(a)));
            if fits {
                out.push(q);
            }
        }
    };
    if let Row::Peer(m, _) = row {
        add(m, "client", col.label());
    }
    if let Column::Peer { peer, .. } = col {
        add(peer, "server", row.label());
    }
    out
}

fn describe(expected: &Expected) -> String {
    match expected {
        Expected::Works => "works".into(),
        Expected::Fails(f) => f.to_string(),
        Expected::NotApplicable => "not applicable (absence checked)".into(),
    }
}

fn describe_observed(o: &PeerObserved) -> String {
    match o {
        PeerObserved::NotExpressible(why) => format!("n/a: {why}"),
        PeerObserved::Ran(Observed::Works(d)) => format!("worked ({d})"),
        PeerObserved::Ran(Observed::Failed { message, .. }) => format!("failed: {message}"),
        PeerObserved::Ran(Observed::Absent(d)) => format!("absent ({d})"),
    }
}

fn result(
    row: &Row,
    col: &Column,
    scenario: PeerScenario,
    prediction: Prediction,
    negotiated: Option<V>,
    observed: PeerObserved,
) -> PeerResult {
    let quirks = quirks_for(
        row,
        col,
        scenario,
        negotiated.as_ref().or(prediction.revision.as_ref()),
    );
    let v = verdict(&prediction, &negotiated, &observed, &quirks);
    let (name, note) = match &v {
        Verdict::Pass => ("pass", String::new()),
        Verdict::Quirk(id) => ("quirk", id.clone()),
        Verdict::QuirkGone(id) => ("quirk gone", id.clone()),
        Verdict::NotApplicable(why) => ("n/a", why.clone()),
        Verdict::Fail => ("fail", String::new()),
    };
    PeerResult {
        scenario: scenario.name(),
        predicted_revision: prediction.revision.as_ref().map(|r| r.as_str().to_owned()),
        expected: describe(&prediction.expected),
        spec: prediction.spec,
        negotiated: negotiated.map(|r| r.as_str().to_owned()),
        observed: describe_observed(&observed),
        verdict: name.to_owned(),
        note,
        v,
    }
}

/// Runs one scenario of a peer client row against `url`.
async fn peer_client(
    m: &Manifest,
    i: usize,
    url: &str,
    scenario: PeerScenario,
    root: &Path,
) -> (Option<V>, PeerObserved) {
    let Some(c) = &m.client else {
        return (None, PeerObserved::NotExpressible("no client".into()));
    };
    run_contract_client(&c.command, url, scenario.name(), &c.rows[i].revision, root).await
}

/// The scenarios a cell runs: every one (in the column's mode), or only
/// `call` where no revision is mutual (the others would fail the same way).
fn scenarios_of(row: &Row, col: &Column, keep: &dyn Fn(&str) -> bool) -> Vec<PeerScenario> {
    let none = predict(
        &row.model(),
        &col.served(),
        ServerMode::FULL,
        PeerScenario::Call,
    )
    .revision
    .is_none();
    PeerScenario::ALL
        .into_iter()
        .filter(|s| s.runs_in_mode(col.mode()))
        .filter(|s| !none || *s == PeerScenario::Call)
        .filter(|s| keep(&format!("{}/{}/{}", row.label(), col.label(), s.name())))
        .collect()
}

/// One cell of a peer row against one of our servers: a fresh in-process
/// server per scenario, configured as our own matrix configures it.
async fn peer_row_vs_ours(
    m: &Manifest,
    i: usize,
    server: ServerKind,
    scenario: PeerScenario,
    root: &Path,
) -> (Option<V>, PeerObserved) {
    let harness = match super::super::run::spawn_server(
        ClientKind::All,
        server,
        scenario.scenario(),
        Faults::NONE,
    )
    .await
    {
        Ok(h) => h,
        Err(e) => {
            return (
                None,
                PeerObserved::Ran(Observed::Failed {
                    kind: None,
                    message: format!("cannot start our server: {e}"),
                }),
            );
        }
    };
    let url = format!("http://{}/mcp", harness.addr);
    peer_client(m, i, &url, scenario, root).await
}

/// Runs every peer cell the filter keeps, `parallel` scenarios at a time;
/// installs each peer first. `progress` hears of each finished cell.
pub async fn run_peers(
    dir: &Path,
    names: &[String],
    keep: impl Fn(&str) -> bool + Send + Sync + 'static,
    parallel: usize,
    progress: impl Fn(&PeerCell, usize, usize) + Send + Sync + 'static,
) -> Result<(Vec<Arc<Manifest>>, Vec<PeerCell>), String> {
    let root: PathBuf = super::manifest::root_of(dir);
    let mut peers = Vec::new();
    for n in names {
        let m = Manifest::load(dir, n)?;
        eprintln!("installing {} ({:?})", m.label(), m.install);
        install(&m.install, &root)
            .await
            .map_err(|e| format!("{}: install failed: {e}", m.label()))?;
        peers.push(Arc::new(m));
    }
    let (rows, cols) = layout(&peers);
    let keep: Arc<dyn Fn(&str) -> bool + Send + Sync> = Arc::new(keep);
    let mut plan = Vec::new();
    for col in &cols {
        for row in &rows {
            if matches!((row, col), (Row::Ours(_), Column::Ours(_))) {
                continue;
            }
            let scenarios = scenarios_of(row, col, &*keep);
            if !scenarios.is_empty() {
                plan.push((row.clone(), col.clone(), scenarios));
            }
        }
    }
    let total = plan.len();
    eprintln!("running {total} peer cells");
    let gate = Arc::new(Semaphore::new(parallel.max(1)));
    let progress = Arc::new(progress);
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let root = Arc::new(root);
    let mut cells = Vec::new();
    // Peer columns: one server process per column, shared by its cells.
    for col in &cols {
        let mine: Vec<_> = plan
            .iter()
            .filter(|(_, c, _)| c.label() == col.label())
            .cloned()
            .collect();
        if mine.is_empty() {
            continue;
        }
        let server = match col {
            Column::Peer {
                peer,
                mode,
                revision,
            } => {
                let spec = peer.server.as_ref().ok_or("a column without a server")?;
                let rev = revision.clone().unwrap_or_default();
                let started = start_server(
                    |port| {
                        fill(
                            &spec.command,
                            &[
                                ("port", &port.to_string()),
                                ("mode", mode),
                                ("revision", &rev),
                            ],
                        )
                    },
                    &root,
                )
                .await;
                Some(started.map_err(|e| format!("{}: {e}", col.label()))?)
            }
            Column::Ours(_) => None,
        };
        let server = server.map(Arc::new);
        let mut tasks = Vec::new();
        for (row, col, scenarios) in mine {
            let (gate, root, server, progress, done) = (
                gate.clone(),
                root.clone(),
                server.clone(),
                progress.clone(),
                done.clone(),
            );
            tasks.push(tokio::spawn(async move {
                let mut results = Vec::new();
                for sc in scenarios {
                    let _permit = gate.acquire().await;
                    let prediction = predict(&row.model(), &col.served(), col.server_mode(), sc);
                    let (negotiated, observed) = match (&row, &col, &server) {
                        (Row::Ours(c), _, Some(s)) => {
                            let (r, o) = super::ours::observe(*c, s.addr, sc).await;
                            (r, PeerObserved::Ran(o))
                        }
                        (Row::Peer(m, i), Column::Ours(s), _) => {
                            peer_row_vs_ours(m, *i, *s, sc, &root).await
                        }
                        (Row::Peer(m, i), _, Some(s)) => {
                            peer_client(m, *i, &s.url, sc, &root).await
                        }
                        _ => (None, PeerObserved::NotExpressible("no server".into())),
                    };
                    results.push(result(&row, &col, sc, prediction, negotiated, observed));
                }
                let cell = PeerCell {
                    client: row.label(),
                    server: col.label(),
                    scenarios: results,
                };
                let n = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                progress(&cell, n, total);
                cell
            }));
        }
        for t in tasks {
            if let Ok(cell) = t.await {
                cells.push(cell);
            }
        }
    }
    Ok((peers, cells))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEER: &str = r#"
name = "x"
version = "1"
install = ["true"]
[server]
revisions = ["2025-06-18", "2025-11-25"]
modes = ["sse", "json"]
command = ["srv", "{port}", "{mode}", "{revision}"]
[server.mode.json]
back_channel = false
[client]
command = ["cli", "{url}", "{scenario}"]
[[client.rows]]
name = "c-2025-11-25"
revision = "2025-11-25"
offers = ["2025-11-25"]
accepts = ["2025-11-25", "2025-06-18"]
[[client.rows]]
name = "c-2025-06-18"
revision = "2025-06-18"
offers = ["2025-06-18"]
[[quirks]]
id = "any"
side = "server"
scenario = "call"
observed = "absent"
what = "w"
[[quirks]]
id = "narrow"
side = "server"
scenario = "call"
revisions = ["2025-11-25"]
modes = ["json"]
against = ["c-all"]
observed = "absent"
what = "w"
[[quirks]]
id = "client"
side = "client"
scenario = "input"
against = ["s-all"]
observed = "fails"
what = "w"
"#;

    fn peer() -> Arc<Manifest> {
        Arc::new(Manifest::parse(PEER).unwrap())
    }

    fn column(mode: &str, revision: Option<&str>) -> Column {
        Column::Peer {
            peer: peer(),
            mode: mode.into(),
            revision: revision.map(str::to_owned),
        }
    }

    #[test]
    fn a_peer_adds_its_rows_and_a_column_per_mode_and_revision() {
        let (rows, cols) = layout(&[peer()]);
        let rows: Vec<String> = rows.iter().map(Row::label).collect();
        let cols: Vec<String> = cols.iter().map(Column::label).collect();
        // Our rows face its server, our columns its client.
        assert_eq!(rows.len(), ClientKind::ALL.len() + 2);
        assert_eq!(
            &rows[..ClientKind::ALL.len()],
            ClientKind::ALL.map(|c| c.name())
        );
        assert_eq!(
            rows[ClientKind::ALL.len()..],
            ["x@1 c-2025-11-25", "x@1 c-2025-06-18"]
        );
        assert_eq!(cols.len(), ServerKind::ALL.len() + 4);
        assert_eq!(
            cols[ServerKind::ALL.len()..],
            [
                "x@1 s-2025-06-18-sse",
                "x@1 s-2025-11-25-sse",
                "x@1 s-2025-06-18-json",
                "x@1 s-2025-11-25-json"
            ]
        );
        // A server only: no peer rows and none of our columns.
        let server_only = Manifest {
            client: None,
            ..(*peer()).clone()
        };
        let (rows, cols) = layout(&[Arc::new(server_only)]);
        assert_eq!(rows.len(), ClientKind::ALL.len());
        assert_eq!(cols.len(), 4);
        assert!(layout(&[]).0.is_empty() && layout(&[]).1.is_empty());
    }

    #[test]
    fn a_column_serves_its_revision_and_its_mode_s_limits() {
        assert_eq!(column("sse", Some("2025-06-18")).served(), [V::V2025_06_18]);
        assert_eq!(
            column("sse", None).served(),
            [V::V2025_06_18, V::V2025_11_25]
        );
        assert_eq!(Column::Ours(ServerKind::S1125).served(), [V::V2025_11_25]);
        assert_eq!(column("sse", None).label(), "x@1 s-sse");
        let json = column("json", None).server_mode();
        assert!(json.json && !json.limits.back_channel && json.limits.resumption);
        assert_eq!(column("sse", None).server_mode(), ServerMode::FULL);
        assert_eq!(
            Column::Ours(ServerKind::All).server_mode(),
            ServerMode::FULL
        );
    }

    #[test]
    fn a_peer_row_accepts_its_offers_unless_it_lists_more() {
        let listed = Row::Peer(peer(), 0).model();
        assert_eq!(listed.offers, [V::V2025_11_25]);
        assert_eq!(listed.accepts, [V::V2025_11_25, V::V2025_06_18]);
        let default = Row::Peer(peer(), 1).model();
        assert_eq!(default.accepts, default.offers);
        assert_eq!(
            Row::Ours(ClientKind::All).model(),
            ClientModel::of(ClientKind::All)
        );
    }

    #[test]
    fn a_quirk_applies_only_where_every_filter_fits() {
        let ids = |row: &Row, col: &Column, sc, rev: Option<&V>| -> Vec<String> {
            quirks_for(row, col, sc, rev)
                .iter()
                .map(|q| q.id.clone())
                .collect()
        };
        let rev = Some(&V::V2025_11_25);
        let c_all = Row::Ours(ClientKind::All);
        let json = column("json", Some("2025-11-25"));
        assert_eq!(
            ids(&c_all, &json, PeerScenario::Call, rev),
            ["any", "narrow"]
        );
        // Each filter of `narrow` on its own: revision, mode, counterpart.
        let old = Some(&V::V2025_06_18);
        assert_eq!(ids(&c_all, &json, PeerScenario::Call, old), ["any"]);
        assert_eq!(ids(&c_all, &json, PeerScenario::Call, None), ["any"]);
        let sse = column("sse", Some("2025-11-25"));
        assert_eq!(ids(&c_all, &sse, PeerScenario::Call, rev), ["any"]);
        let c_1125 = Row::Ours(ClientKind::C1125);
        assert_eq!(ids(&c_1125, &json, PeerScenario::Call, rev), ["any"]);
        // Another scenario; the server side's quirks only in its columns.
        assert!(ids(&c_all, &json, PeerScenario::Progress, rev).is_empty());
        let theirs = Row::Peer(peer(), 0);
        assert!(
            ids(
                &theirs,
                &Column::Ours(ServerKind::S1125),
                PeerScenario::Call,
                rev
            )
            .is_empty()
        );
        // The client side's, in its rows, against the named counterpart.
        let s_all = Column::Ours(ServerKind::All);
        assert_eq!(ids(&theirs, &s_all, PeerScenario::Input, rev), ["client"]);
        let s_1125 = Column::Ours(ServerKind::S1125);
        assert!(ids(&theirs, &s_1125, PeerScenario::Input, rev).is_empty());
    }

    #[test]
    fn a_cell_runs_its_mode_s_scenarios_or_only_call_without_a_mutual_revision() {
        let all = |_: &str| true;
        let c1125 = Row::Ours(ClientKind::C1125);
        let sse = column("sse", Some("2025-11-25"));
        assert_eq!(scenarios_of(&c1125, &sse, &all), PeerScenario::ALL);
        // A JSON mode has no stream for progress or a request to the client.
        let json = column("json", Some("2025-11-25"));
        assert_eq!(scenarios_of(&c1125, &json, &all), [PeerScenario::Call]);
        // No mutual revision: the other scenarios would fail the same way.
        let modern = Row::Ours(ClientKind::Modern);
        assert_eq!(scenarios_of(&modern, &sse, &all), [PeerScenario::Call]);
        // `--filter` reads `ROW/COLUMN/SCENARIO`.
        let progress = |name: &str| name == "c-2025-11-25/x@1 s-2025-11-25-sse/progress";
        assert_eq!(
            scenarios_of(&c1125, &sse, &progress),
            [PeerScenario::Progress]
        );
    }

    #[test]
    fn a_cell_is_accepted_unless_a_scenario_failed() {
        let cell = |verdicts: Vec<Verdict>| PeerCell {
            client: "r".into(),
            server: "c".into(),
            scenarios: verdicts
                .into_iter()
                .map(|v| PeerResult {
                    scenario: "call",
                    predicted_revision: None,
                    expected: String::new(),
                    spec: "",
                    negotiated: None,
                    observed: String::new(),
                    verdict: String::new(),
                    note: String::new(),
                    v,
                })
                .collect(),
        };
        let quirk = || Verdict::Quirk("q".into());
        assert!(
            cell(vec![
                Verdict::Pass,
                quirk(),
                Verdict::NotApplicable("-".into())
            ])
            .accepted()
        );
        assert!(!cell(vec![Verdict::Pass, Verdict::Fail, quirk()]).accepted());
    }

    #[test]
    fn a_result_names_its_verdict_and_describes_both_sides() {
        let row = Row::Ours(ClientKind::All);
        let col = column("json", Some("2025-11-25"));
        let prediction = predict(
            &row.model(),
            &col.served(),
            col.server_mode(),
            PeerScenario::Call,
        );
        let call = |negotiated, observed| {
            result(
                &row,
                &col,
                PeerScenario::Call,
                prediction.clone(),
                negotiated,
                observed,
            )
        };
        let absent = PeerObserved::Ran(Observed::Absent("no close".into()));
        let r = call(Some(V::V2025_11_25), absent);
        assert_eq!((r.verdict.as_str(), r.note.as_str()), ("quirk", "any"));
        assert_eq!(r.observed, "absent (no close)");
        assert_eq!(r.expected, "works");
        assert_eq!(r.predicted_revision.as_deref(), Some("2025-11-25"));
        let works = PeerObserved::Ran(Observed::Works("ok".into()));
        let r = call(Some(V::V2025_11_25), works);
        assert_eq!((r.verdict.as_str(), r.note.as_str()), ("quirk gone", "any"));
        assert_eq!(r.observed, "worked (ok)");
        let na = PeerObserved::NotExpressible("no API".into());
        let r = call(None, na);
        assert_eq!(
            (r.verdict.as_str(), r.note.as_str(), r.observed.as_str()),
            ("n/a", "no API", "n/a: no API")
        );
        let failed = PeerObserved::Ran(Observed::Failed {
            kind: None,
            message: "boom".into(),
        });
        let plain = Row::Ours(ClientKind::C1125);
        let r = result(
            &plain,
            &column("sse", None),
            PeerScenario::Progress,
            prediction,
            Some(V::V2025_11_25),
            failed,
        );
        assert_eq!(
            (r.verdict.as_str(), r.observed.as_str()),
            ("fail", "failed: boom")
        );
        let works = PeerObserved::Ran(Observed::Works("ok".into()));
        let prediction = predict(
            &plain.model(),
            &col.served(),
            col.server_mode(),
            PeerScenario::Progress,
        );
        let r = result(
            &plain,
            &col,
            PeerScenario::Progress,
            prediction,
            Some(V::V2025_11_25),
            works,
        );
        assert_eq!((r.verdict.as_str(), r.note.as_str()), ("pass", ""));
        assert_eq!(
            describe(&Expected::NotApplicable),
            "not applicable (absence checked)"
        );
    }
}
