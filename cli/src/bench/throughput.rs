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
    /// The floor's handler behind `mcp-http-edge`'s accept loop.
    FloorEdge,
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
    pub const ALL: [Workload; 7] = [
        Workload::Floor,
        Workload::FloorEdge,
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
            Workload::FloorEdge => "floor-edge",
            Workload::ModernJson => "modern-json",
            Workload::ModernSse => "modern-sse",
            Workload::LegacyJson => "legacy-json",
            Workload::LegacySse => "legacy-sse",
            Workload::LegacySseShared => "legacy-sse-shared",
            Workload::LegacySseRmcp => "legacy-sse-rmcp",
        }
    }

    /// The media type (`type/subtype`) its answers come as.
    fn media(self) -> &'static str {
        match self {
            Workload::Floor | Workload::FloorEdge | Workload::ModernJson | Workload::LegacyJson => {
                "application/json"
            }
            Workload::ModernSse
            | Workload::LegacySse
            | Workload::LegacySseShared
            | Workload::LegacySseRmcp => "text/event-stream",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Workload::Floor => "bare axum, fixed JSON-RPC answer",
            Workload::FloorEdge => "the floor's handler behind mcp-http-edge's accept loop",
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
    /// The lowest of the rounds' request-rate ratios (`--rounds`; the
    /// ratio itself when there was one round).
    pub rps_ratio_min: f64,
    /// The highest of the rounds' request-rate ratios.
    pub rps_ratio_max: f64,
}

/// The server children the workloads need, started once.
struct Servers {
    floor: ServerChild,
    floor_edge: Option<ServerChild>,
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

/// Runs `selected` (the floor always runs: every ratio needs it) `rounds`
/// times, the floor first in each round; `rmcp` is the rmcp adapter's
/// binary, for [`Workload::LegacySseRmcp`].
///
/// Each ratio is taken against the floor of its own round, measured
/// seconds before it: on a shared host the machine's speed drifts between
/// runs (session 14 saw the floor alone swing from 65k to 103k req/s), and
/// a ratio of two figures measured a minute apart carries that drift. A
/// row is the round whose request-rate ratio is the median of the rounds'
/// (the lower one of the middle two for an even count), with the lowest
/// and highest ratio beside it.
pub async fn run(
    selected: &[Workload],
    load: Load,
    rounds: usize,
    rmcp_server: &std::path::Path,
) -> Result<Vec<ThroughputRow>, String> {
    let uses = |f: fn(Workload) -> bool| selected.iter().any(|w| f(*w));
    let servers = Servers {
        floor: ServerChild::start(&["bench", "--floor-server"]).await?,
        floor_edge: if selected.contains(&Workload::FloorEdge) {
            Some(ServerChild::start(&["bench", "--floor-server", "--edge"]).await?)
        } else {
            None
        },
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
    let workloads: Vec<Workload> = Workload::ALL
        .into_iter()
        .chain(Workload::EXTERNAL)
        .filter(|w| *w == Workload::Floor || selected.contains(w))
        .collect();
    // `measured[round][i]`: workload `workloads[i]` in that round.
    let mut measured: Vec<Vec<LoadFigures>> = Vec::with_capacity(rounds);
    for _ in 0..rounds.max(1) {
        let mut round = Vec::with_capacity(workloads.len());
        for &w in &workloads {
            round.push(measure(&servers, w, load).await?);
        }
        measured.push(round);
    }
    let rows = workloads
        .iter()
        .enumerate()
        .map(|(i, w)| row(*w, &measured, i))
        .collect();
    servers.floor.stop().await;
    for s in [servers.floor_edge, servers.json, servers.sse, servers.rmcp]
        .into_iter()
        .flatten()
    {
        s.stop().await;
    }
    Ok(rows)
}

/// One load run of `w` against its server.
async fn measure(servers: &Servers, w: Workload, load: Load) -> Result<LoadFigures, String> {
    let server = match w {
        Workload::Floor => &servers.floor,
        Workload::FloorEdge => servers.floor_edge.as_ref().expect("started"),
        Workload::ModernJson | Workload::LegacyJson => servers.json.as_ref().expect("started"),
        Workload::LegacySseRmcp => servers.rmcp.as_ref().expect("started"),
        _ => servers.sse.as_ref().expect("started"),
    };
    let (addr, path) = (server.addr, server.path.as_str());
    let (template, sessions) = match w {
        Workload::Floor | Workload::FloorEdge | Workload::ModernJson | Workload::ModernSse => {
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
    load::run(addr, path, template, sessions, load, server.pid, w.media())
        .await
        .map_err(|e| format!("{}: {e}", w.name()))
}

/// The lower median's index among `values` (`0` when there is one).
fn median_index(values: &[f64]) -> usize {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    order[(values.len().max(1) - 1) / 2]
}

/// Workload `i`'s row: the round with the median request-rate ratio (for
/// the floor itself, `i` = 0, the round with its median rate).
fn row(w: Workload, measured: &[Vec<LoadFigures>], i: usize) -> ThroughputRow {
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let ratios: Vec<f64> = measured
        .iter()
        .map(|round| ratio(round[i].requests_per_sec, round[0].requests_per_sec))
        .collect();
    let k = if i == 0 {
        let rates: Vec<f64> = measured.iter().map(|r| r[0].requests_per_sec).collect();
        median_index(&rates)
    } else {
        median_index(&ratios)
    };
    let (figures, floor) = (&measured[k][i], &measured[k][0]);
    ThroughputRow {
        workload: w.name(),
        description: w.describe(),
        rps_ratio_to_floor: ratios[k],
        p50_ratio_to_floor: ratio(figures.p50_us, floor.p50_us),
        p99_ratio_to_floor: ratio(figures.p99_us, floor.p99_us),
        rps_ratio_min: ratios.iter().copied().fold(f64::INFINITY, f64::min),
        rps_ratio_max: ratios.iter().copied().fold(0.0, f64::max),
        figures: figures.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(rps: f64, p50: f64) -> LoadFigures {
        LoadFigures {
            requests_per_sec: rps,
            p50_us: p50,
            p99_us: 2.0 * p50,
            ..LoadFigures::default()
        }
    }

    #[test]
    fn the_median_is_the_lower_middle_value() {
        assert_eq!(median_index(&[5.0]), 0);
        assert_eq!(median_index(&[3.0, 1.0, 2.0]), 2);
        assert_eq!(median_index(&[4.0, 1.0, 3.0, 2.0]), 3);
    }

    /// Each workload's name is its own (what `--workloads` selects it
    /// by, and what the table and the JSON call it), and so is its
    /// description.
    #[test]
    fn names_and_descriptions_are_each_workloads_own() {
        let all: Vec<Workload> = Workload::ALL
            .into_iter()
            .chain(Workload::EXTERNAL)
            .collect();
        for w in &all {
            assert!(!w.describe().is_empty(), "{w:?}");
            let selected = super::super::select(&[w.name().to_owned()]).expect("a known name");
            assert_eq!(selected.rate, [*w], "--workloads {}", w.name());
        }
        let names: std::collections::HashSet<_> = all.iter().map(|w| w.name()).collect();
        let descriptions: std::collections::HashSet<_> = all.iter().map(|w| w.describe()).collect();
        assert_eq!((names.len(), descriptions.len()), (all.len(), all.len()));
    }

    /// A round whose floor answered nothing gives ratios of 0, not
    /// infinities.
    #[test]
    fn a_silent_floor_gives_no_ratio() {
        let measured = vec![vec![figures(0.0, 0.0), figures(10.0, 5.0)]];
        let r = row(Workload::ModernJson, &measured, 1);
        assert_eq!(
            (
                r.rps_ratio_to_floor,
                r.p50_ratio_to_floor,
                r.p99_ratio_to_floor
            ),
            (0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn each_ratio_is_to_its_own_rounds_floor() {
        // The host halves its speed in the second round and recovers in
        // the third: each round's own floor keeps the ratios steady.
        let measured = vec![
            vec![figures(100.0, 10.0), figures(80.0, 12.0)],
            vec![figures(50.0, 20.0), figures(35.0, 30.0)],
            vec![figures(90.0, 11.0), figures(81.0, 11.0)],
        ];
        let r = row(Workload::ModernJson, &measured, 1);
        assert_eq!(r.rps_ratio_to_floor, 0.8);
        assert_eq!(r.figures.requests_per_sec, 80.0);
        assert_eq!(r.p50_ratio_to_floor, 1.2);
        assert_eq!(r.p99_ratio_to_floor, 1.2);
        assert_eq!(r.rps_ratio_min, 0.7);
        assert_eq!(r.rps_ratio_max, 0.9);
        let floor = row(Workload::Floor, &measured, 0);
        assert_eq!(floor.figures.requests_per_sec, 90.0);
        assert_eq!(
            (
                floor.rps_ratio_to_floor,
                floor.rps_ratio_min,
                floor.rps_ratio_max
            ),
            (1.0, 1.0, 1.0)
        );
    }
}
