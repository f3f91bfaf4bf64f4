//! `mcp-compat matrix`: runs the compatibility matrix in process and prints it.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Args;
use mcp_http_edge::faults::{Fault, Faults};

use crate::matrix::report::{Format, render};
use crate::matrix::{ClientKind, Scenario, ServerKind, run_matrix};

/// Options of `mcp-compat matrix`.
#[derive(Args, Debug, Clone)]
pub struct MatrixArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write the report to this file instead of stdout.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Keep only the results whose `CLIENT/SERVER/SCENARIO` name contains
    /// every comma-separated part (e.g. `c-all,s-2025-11-25` or `network_drop`).
    #[arg(long)]
    pub filter: Option<String>,
    /// How many cells run at once.
    #[arg(long, default_value_t = 6)]
    pub parallel: usize,
    /// Prove the matrix can fail: run the cells each injected bug concerns
    /// once per bug (and once with none) and pass only when every bug turns
    /// a cell red in a scenario meant to catch it.
    #[arg(long)]
    pub self_test: bool,
    /// With `--self-test`: only these faults (comma-separated names, e.g.
    /// `skip-priming,mint-session-id`).
    #[arg(long, requires = "self_test")]
    pub fault: Option<String>,
    /// Add a real implementation described by `PEERS_DIR/NAME.toml` (its
    /// server columns and client rows; repeatable). Runs only the cells
    /// with a peer in them.
    #[arg(long = "peer", value_name = "NAME", conflicts_with = "self_test")]
    pub peer: Vec<String>,
    /// Add every peer of `PEERS_DIR`.
    #[arg(long, conflicts_with = "self_test")]
    pub peers: bool,
    /// Where the peer manifests are; commands run in its parent directory.
    #[arg(long, default_value = "peers")]
    pub peers_dir: PathBuf,
    /// Where the two instances of the `s-cluster` column share their state:
    /// `memory` (in-process stores, the default), `redis://HOST:PORT/DB` or
    /// `redis+cluster://HOST:PORT[,HOST:PORT…]` (each instance its own
    /// connection to that Redis or Redis Cluster; the column is then named
    /// `s-cluster-redis`).
    #[arg(long, default_value = "memory")]
    pub store: String,
}

/// `--peer` / `--peers`: the peer cells, rendered.
async fn peers(args: &MatrixArgs) -> Result<bool, String> {
    use crate::matrix::peers::{Manifest, report, run_peers};
    let mut names = args.peer.clone();
    if args.peers {
        names = Manifest::names(&args.peers_dir)?;
    }
    if names.is_empty() {
        return Err(format!("no peer manifests in {}", args.peers_dir.display()));
    }
    let parts = filter_parts(args.filter.as_deref());
    let keep = move |name: &str| parts.iter().all(|p| name.contains(p.as_str()));
    let (manifests, cells) = run_peers(
        &args.peers_dir,
        &names,
        keep,
        args.parallel,
        |cell, n, total| {
            eprintln!(
                "[{n}/{total}] {} x {}: {}",
                cell.client,
                cell.server,
                report::mark(cell)
            );
        },
    )
    .await?;
    if cells.is_empty() {
        return Err("--filter matches no peer cell".into());
    }
    let text = match args.format {
        Format::Table => report::render(&manifests, &cells, false),
        Format::Markdown => report::render(&manifests, &cells, true),
        Format::Json => report::json(&cells),
        other => return Err(format!("--format {other:?} is not available with --peer")),
    };
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(cells.iter().all(|c| c.accepted()))
}

/// `--self-test`: prints the table "fault → cells that caught it".
async fn self_test(args: &MatrixArgs) -> Result<bool, String> {
    let mut faults = Vec::new();
    for name in args.fault.as_deref().unwrap_or_default().split(',') {
        let name = name.trim();
        if name.is_empty() {
            continue;
        }
        let f = Fault::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
                format!("unknown fault {name:?} (known: {})", names.join(", "))
            })?;
        faults.push(f);
    }
    let report = crate::matrix::selftest::run(&faults, |line| eprintln!("{line}")).await;
    let text = report.render();
    match &args.output {
        Some(path) => std::fs::write(path, &text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(report.passed())
}

/// The name a filter matches against.
pub fn result_name(c: ClientKind, s: ServerKind, scenario: Scenario) -> String {
    format!("{c}/{s}/{scenario}")
}

/// Runs the matrix; returns whether every cell matched its prediction.
pub async fn run(args: MatrixArgs) -> Result<bool, String> {
    if args.self_test {
        return self_test(&args).await;
    }
    if args.peers || !args.peer.is_empty() {
        return peers(&args).await;
    }
    crate::matrix::cluster::set_store(&args.store)?;
    let parts = filter_parts(args.filter.as_deref());
    let keep = move |c: ClientKind, s: ServerKind, sc: Scenario| {
        let name = result_name(c, s, sc);
        parts.iter().all(|p| name.contains(p.as_str()))
    };
    let total = ClientKind::ALL
        .iter()
        .flat_map(|c| ServerKind::ALL.iter().map(move |s| (*c, *s)))
        .filter(|(c, s)| Scenario::ALL.iter().any(|sc| keep(*c, *s, *sc)))
        .count();
    if total == 0 {
        return Err("--filter matches no cell".into());
    }
    let done = Arc::new(AtomicUsize::new(0));
    eprintln!(
        "running {total} cells ({} scenarios each at most)",
        Scenario::ALL.len()
    );
    let cells = run_matrix(keep, args.parallel, Faults::NONE, move |cell| {
        let n = done.fetch_add(1, Ordering::SeqCst) + 1;
        let rev = cell
            .negotiated()
            .map(|v| v.to_string())
            .unwrap_or_else(|| "none".into());
        let mark = if cell.passed() { "✓" } else { "✗" };
        eprintln!(
            "[{n}/{total}] {} x {}: {rev} {mark}",
            cell.client, cell.server
        );
    })
    .await;
    let ok = cells.iter().all(|c| c.passed());
    let text = render(&cells, args.format);
    match &args.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(ok)
}

/// The comma-separated parts of `--filter` (a result is kept when its name
/// contains every part).
fn filter_parts(filter: Option<&str>) -> Vec<String> {
    filter
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}
