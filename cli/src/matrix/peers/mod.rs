//! Real SDKs in the matrix (`mcp-compat matrix --peer NAME` / `--peers`):
//! each peer's manifest ([`manifest`]) adds server columns (one per mode)
//! and client rows (one per configuration); the cells are peer × peer,
//! peer × ours and ours × peer (ours × ours is `matrix` without flags).
//! Every cell runs the peer scenarios ([`scenario`]) and compares each
//! outcome with the spec's prediction ([`predict`]) and then with the
//! peer's listed quirks ([`outcome`]): a deviation is accepted only when a
//! quirk names it, and a quirk that no longer shows is reported gone.

pub mod cells;
pub mod check_client;
mod forget;
pub mod manifest;
pub mod ours;
pub mod outcome;
pub mod predict;
pub mod process;
mod proxy;
pub mod report;
pub mod scenario;

pub use cells::{Column, PeerCell, PeerResult, Row, run_peers};
pub use manifest::Manifest;
