//! The compatibility matrix: every client configuration against every server
//! configuration, each cell running a fixed list of scenarios over loopback,
//! each outcome checked against what the spec predicts ([`expect`]).
//!
//! A cell passes when what happened matches what was expected — a predicted
//! failure that happens is a pass, and a scenario the negotiated revision
//! does not have is "not applicable": it still runs, and passes only when
//! the mechanism is observed to be absent.

mod checks;
pub mod cluster;
pub mod declared;
pub mod expect;
mod failure;
mod harness;
pub mod html;
mod long_running;
mod outcome;
pub mod peers;
pub mod report;
pub mod run;
pub mod scenario;
pub mod scenario_impl;
mod seen;
pub mod selftest;
mod sessions;
mod streams;
mod task;
#[cfg(test)]
mod test_wire;
pub mod wire;

use std::fmt;

use mcp_transport_core::ProtocolVersion;

pub use expect::{Expected, expected};
pub use run::{CellResult, ScenarioResult, run_cell, run_matrix};

/// A client configuration: the revisions it may use, most preferred first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClientKind {
    /// Only 2024-11-05: the deprecated HTTP+SSE transport.
    C1105,
    /// Only 2025-03-26.
    C0326,
    /// Only 2025-06-18.
    C0618,
    /// Only 2025-11-25.
    C1125,
    /// Only 2026-07-28 (modern-only).
    Modern,
    /// Every legacy revision (legacy-only dual): 2025-11-25, 2025-06-18, 2025-03-26.
    Legacy,
    /// Every revision (dual-era): 2026-07-28 first, then the legacy ones,
    /// then 2024-11-05 over HTTP+SSE.
    All,
    /// Modern, offering a future version ([`FUTURE_VERSION`]) first, then
    /// 2026-07-28: the `-32022` → retry path of 2026-07-28 *Versioning*.
    Future,
}

/// The version [`ClientKind::Future`] offers first: well-formed, modern,
/// and served by no one.
pub const FUTURE_VERSION: &str = "2099-01-01";

/// A server configuration: the revisions it serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServerKind {
    /// Only 2024-11-05: an HTTP+SSE server (`GET` for the stream, `POST`
    /// to the endpoint it names; the Streamable POST is 405).
    S1105,
    /// Only 2025-03-26.
    S0326,
    /// Only 2025-06-18.
    S0618,
    /// Only 2025-11-25.
    S1125,
    /// Only 2026-07-28.
    S0728,
    /// Every legacy revision.
    Legacy,
    /// Every revision (dual-era).
    All,
    /// Every legacy revision, configured the other way the spec allows:
    /// `GET` without `Last-Event-ID` and `DELETE` answered 405.
    Legacy405,
    /// Every legacy revision, answering a `server/discover` that carries no
    /// session id the way a sessionless legacy server does: HTTP 200 with a
    /// JSON-RPC `-32601` (the era-ambiguous answer of 2026-07-28
    /// *Versioning*; a modern server says 404 with `-32601`).
    Legacy200,
    /// Two instances of [`All`](Self::All) sharing their state (in process,
    /// or in Redis with `matrix --store`) behind a round-robin balancer
    /// without stickiness ([`cluster`]); predicted as `s-all`.
    Cluster,
}

impl ClientKind {
    /// Every client configuration, in table order.
    pub const ALL: [ClientKind; 8] = [
        ClientKind::C1105,
        ClientKind::C0326,
        ClientKind::C0618,
        ClientKind::C1125,
        ClientKind::Modern,
        ClientKind::Future,
        ClientKind::Legacy,
        ClientKind::All,
    ];

    /// The revisions, most preferred first.
    pub fn revisions(self) -> Vec<ProtocolVersion> {
        use ProtocolVersion as V;
        match self {
            ClientKind::C1105 => vec![V::V2024_11_05],
            ClientKind::C0326 => vec![V::V2025_03_26],
            ClientKind::C0618 => vec![V::V2025_06_18],
            ClientKind::C1125 => vec![V::V2025_11_25],
            ClientKind::Modern => vec![V::V2026_07_28],
            ClientKind::Legacy => vec![V::V2025_11_25, V::V2025_06_18, V::V2025_03_26],
            ClientKind::All => vec![
                V::V2026_07_28,
                V::V2025_11_25,
                V::V2025_06_18,
                V::V2025_03_26,
                V::V2024_11_05,
            ],
            ClientKind::Future => vec![V::parse(FUTURE_VERSION), V::V2026_07_28],
        }
    }

    /// The short name used in test names and reports.
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::C1105 => "c-2024-11-05",
            ClientKind::C0326 => "c-2025-03-26",
            ClientKind::C0618 => "c-2025-06-18",
            ClientKind::C1125 => "c-2025-11-25",
            ClientKind::Modern => "c-2026-07-28",
            ClientKind::Legacy => "c-legacy",
            ClientKind::All => "c-all",
            ClientKind::Future => "c-future",
        }
    }

    /// Looks a configuration up by [`name`](Self::name).
    pub fn by_name(name: &str) -> Option<ClientKind> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl ServerKind {
    /// Every server configuration, in table order.
    pub const ALL: [ServerKind; 10] = [
        ServerKind::S1105,
        ServerKind::S0326,
        ServerKind::S0618,
        ServerKind::S1125,
        ServerKind::S0728,
        ServerKind::Legacy,
        ServerKind::Legacy405,
        ServerKind::Legacy200,
        ServerKind::All,
        ServerKind::Cluster,
    ];

    /// The revisions served.
    pub fn revisions(self) -> Vec<ProtocolVersion> {
        use ProtocolVersion as V;
        match self {
            ServerKind::S1105 => vec![V::V2024_11_05],
            ServerKind::S0326 => vec![V::V2025_03_26],
            ServerKind::S0618 => vec![V::V2025_06_18],
            ServerKind::S1125 => vec![V::V2025_11_25],
            ServerKind::S0728 => vec![V::V2026_07_28],
            ServerKind::Legacy | ServerKind::Legacy405 | ServerKind::Legacy200 => {
                vec![V::V2025_03_26, V::V2025_06_18, V::V2025_11_25]
            }
            ServerKind::All | ServerKind::Cluster => vec![
                V::V2025_03_26,
                V::V2025_06_18,
                V::V2025_11_25,
                V::V2026_07_28,
            ],
        }
    }

    /// The short name used in test names and reports.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::S1105 => "s-2024-11-05",
            ServerKind::S0326 => "s-2025-03-26",
            ServerKind::S0618 => "s-2025-06-18",
            ServerKind::S1125 => "s-2025-11-25",
            ServerKind::S0728 => "s-2026-07-28",
            ServerKind::Legacy => "s-legacy",
            ServerKind::All => "s-all",
            ServerKind::Legacy405 => "s-legacy-405",
            ServerKind::Legacy200 => "s-legacy-200",
            ServerKind::Cluster if cluster::store().is_some() => "s-cluster-redis",
            ServerKind::Cluster => "s-cluster",
        }
    }

    /// The configuration whose predictions this one has: a cluster must
    /// behave exactly as the single server it is made of, so `s-cluster`
    /// is predicted as `s-all`; every other configuration as itself.
    pub fn predicted_as(self) -> ServerKind {
        match self {
            ServerKind::Cluster => ServerKind::All,
            other => other,
        }
    }

    /// Looks a configuration up by [`name`](Self::name).
    pub fn by_name(name: &str) -> Option<ServerKind> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for ClientKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub use scenario::Scenario;
