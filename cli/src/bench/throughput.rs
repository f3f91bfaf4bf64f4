//! The request-rate workloads: one small `tools/call` after another on
//! fixed connections, against the floor and the reference server in each
//! answer style and session arrangement.

use serde::Serialize;

use super::child::ServerChild;
use super::load::{self, Load, LoadFigures, Sessions};
use super::wire::{self, Template};

/// A request-rate workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// The bare-axum floor.
    Floor,
    /// Stateless 2026-07-28 `tools/call`, answered as JSON.
    ModernJson,
    /// Stateless 2026-07-28 `tools/call`, answered as SSE.
    ModernSse,
    /// 2025-11-25 `tools/call`, a session per connection, answered as JSON.
    LegacyJson,
    /// 2025-11-25 `tools/call`, a session per connection, answered as SSE.
    LegacySse,
    /// 2025-11-25 `tools/call`, every connection on one session, as SSE.
    LegacySseShared,
    /// `LegacySse`'s load against rmcp 3.11's server (the `peers/rmcp`
    /// adapter, `--rmcp-server`); not in `all` or `rate`.
    LegacySseRmcp,
}

impl Workload {
    /// Every request-rate workload, the floor first.
    pub const ALL: [Workload; 6] = [
        Workload::Floor,
        Workload::ModernJson,
        Workload::ModernSse,
        Workload::LegacyJson,
        Workload::LegacySse,
        Workload::LegacySseShared,
    ];

    /// The workloads that need another server's binary (named alone).
    pub const EXTERNAL: [Workload; 1] = [Workload::LegacySseRmcp];

    /// The name used in `--workloads`, the table and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Floor => "floor",
            Workload::ModernJson => "modern-json",
            Workload::ModernSse => "modern-sse",
            Workload::LegacyJson => "legacy-json",
            Workload::LegacySse => "legacy-sse",
            Workload::LegacySseShared => "legacy-sse-shared",
            Workload::LegacySseRmcp => "legacy-sse-rmcp",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Workload::Floor => "bare axum, fixed JSON-RPC answer",
            Workload::ModernJson => "2026-07-28 stateless tools/call, JSON",
            Workload::ModernSse => "2026-07-28 stateless tools/call, SSE",
            Workload::LegacyJson => "2025-11-25 session per connection, JSON",
            Workload::LegacySse => "2025-11-25 session per connection, SSE",
            Workload::LegacySseShared => "2025-11-25 one session for all connections, SSE",
            Workload::LegacySseRmcp => "legacy-sse against rmcp 3.11's server (peers/rmcp)",
        }
    }
}

/// One workload's figures and their ratios to the floor's.
#[derive(Clone, Debug, Serialize)]
pub struct ThroughputRow {
    /// The workload's name.
    pub workload: &'static str,
    /// What it sends and how it is answered.
    pub description: &'static str,
    /// What was measured.
    #[serde(flatten)]
    pub figures: LoadFigures,
    /// Requests per second divided by the floor's.
    pub rps_ratio_to_floor: f64,
    /// p50 latency divided by the floor's.
    pub p50_ratio_to_floor: f64,
    /// p99 latency divided by the floor's.
    pub p99_ratio_to_floor: f64,
}

/// The server children the workloads need, started once.
struct Servers {
    floor: ServerChild,
    json: Option<ServerChild>,
    sse: Option<ServerChild>,
    rmcp: Option<ServerChild>,
}

const MCP_ARGS: &[&str] = &[
    "serve",
    "--bind",
    "127.0.0.1:0",
    "--max-connections",
    "100000",
];

async fn mcp(json: bool) -> Result<ServerChild, String> {
    let mut args = MCP_ARGS.to_vec();
    args.extend(super::store_args());
    if json {
        args.push("--json-response");
    }
    ServerChild::start(&args).await
}

/// The rmcp adapter's server (`peers/rmcp`, built by `peers/rmcp/install.sh`
/// or, for figures, `cargo build --release`): sessions with SSE answers and
/// its `retry` priming, on `127.0.0.1:0`.
async fn rmcp(exe: &std::path::Path) -> Result<ServerChild, String> {
    ServerChild::start_exe(exe, &["--port", "0", "--mode", "sse"])
        .await
        .map_err(|e| format!("rmcp server {}: {e}", exe.display()))
}

/// Runs `selected` (the floor always runs: every ratio needs it); `rmcp`
/// is the rmcp adapter's binary, for [`Workload::LegacySseRmcp`].
pub async fn run(
    selected: &[Workload],
    load: Load,
    rmcp_server: &std::path::Path,
) -> Result<Vec<ThroughputRow>, String> {
    let uses = |f: fn(Workload) -> bool| selected.iter().any(|w| f(*w));
    let servers = Servers {
        floor: ServerChild::start(&["bench", "--floor-server"]).await?,
        json: if uses(|w| matches!(w, Workload::ModernJson | Workload::LegacyJson)) {
            Some(mcp(true).await?)
        } else {
            None
        },
        sse: if uses(|w| {
            matches!(
                w,
                Workload::ModernSse | Workload::LegacySse | Workload::LegacySseShared
            )
        }) {
            Some(mcp(false).await?)
        } else {
            None
        },
        rmcp: if selected.contains(&Workload::LegacySseRmcp) {
            Some(rmcp(rmcp_server).await?)
        } else {
            None
        },
    };
    let mut rows: Vec<ThroughputRow> = Vec::new();
    for w in Workload::ALL.into_iter().chain(Workload::EXTERNAL) {
        if w != Workload::Floor && !selected.contains(&w) {
            continue;
        }
        let server = match w {
            Workload::Floor => &servers.floor,
            Workload::ModernJson | Workload::LegacyJson => servers.json.as_ref().expect("started"),
            Workload::LegacySseRmcp => servers.rmcp.as_ref().expect("started"),
            _ => servers.sse.as_ref().expect("started"),
        };
        let (addr, path) = (server.addr, server.path.as_str());
        let (template, sessions) = match w {
            Workload::Floor | Workload::ModernJson | Workload::ModernSse => {
                (Template::add(addr, path, None), Sessions::None)
            }
            Workload::LegacyJson | Workload::LegacySse | Workload::LegacySseRmcp => (
                Template::add(addr, path, Some("-")),
                Sessions::PerConnection,
            ),
            Workload::LegacySseShared => {
                let mut s = wire::connect(addr).await?;
                let id = wire::open_session(&mut s, addr, path).await?;
                (Template::add(addr, path, Some(&id)), Sessions::Shared(id))
            }
        };
        let figures = load::run(addr, path, template, sessions, load, server.pid)
            .await
            .map_err(|e| format!("{}: {e}", w.name()))?;
        let floor = rows
            .first()
            .map(|r| r.figures.clone())
            .unwrap_or_else(|| figures.clone());
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        rows.push(ThroughputRow {
            workload: w.name(),
            description: w.describe(),
            rps_ratio_to_floor: ratio(figures.requests_per_sec, floor.requests_per_sec),
            p50_ratio_to_floor: ratio(figures.p50_us, floor.p50_us),
            p99_ratio_to_floor: ratio(figures.p99_us, floor.p99_us),
            figures,
        });
    }
    servers.floor.stop().await;
    for s in [servers.json, servers.sse, servers.rmcp]
        .into_iter()
        .flatten()
    {
        s.stop().await;
    }
    Ok(rows)
}
