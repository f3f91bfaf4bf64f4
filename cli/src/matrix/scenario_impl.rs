//! What each scenario does, through the era-independent `Transport`, and
//! what it checks on the wire ([`super::wire`]): each scenario asserts what
//! its name promises, and where the negotiated revision lacks the mechanism
//! it checks the absence (reported as [`Observed::Absent`]).

use mcp_negotiate::client::Connection;
use mcp_test_support::Proxy;

use super::harness::{Harness, Observed};
use super::scenario::Scenario;
use super::{long_running, sessions, streams, task};

pub use super::outcome::Ada;

/// Runs one scenario; the connection is already negotiated.
pub(crate) async fn run(
    scenario: Scenario,
    conn: &Connection,
    harness: &Harness,
    proxy: Option<&Proxy>,
) -> Observed {
    let outcome = match scenario {
        Scenario::Json => streams::json_answer(conn, harness).await,
        Scenario::Sse => streams::streamed(conn, harness).await,
        Scenario::Progress => streams::progress(conn, harness).await,
        Scenario::Disconnect => streams::disconnect(conn, harness).await,
        Scenario::NetworkDrop => streams::network_drop(conn, harness, proxy).await,
        Scenario::TwoStreams => streams::two_streams(conn, harness, proxy).await,
        Scenario::Input => sessions::input(conn).await,
        Scenario::Cancel => sessions::cancel(conn, harness).await,
        Scenario::Changes => sessions::changes(conn, harness).await,
        Scenario::Expiry => sessions::expiry(conn, harness).await,
        Scenario::Delete => sessions::delete(conn, harness).await,
        Scenario::Get405 => sessions::get_405(conn, harness).await,
        Scenario::EraCache => sessions::era_cache(conn, harness).await,
        Scenario::LongRunningDrop => long_running::drop_mid_way(conn, harness, proxy).await,
        Scenario::Task => task::task(conn, harness).await,
    };
    outcome.unwrap_or_else(|o| o)
}
