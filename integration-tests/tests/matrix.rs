//! Every cell × scenario of the compatibility matrix, as a named test.

use integration_tests::check;
use mcp_compat::matrix::{ClientKind, Scenario, ServerKind};

macro_rules! scenarios {
    ($c:expr, $s:expr) => {
        use super::super::*;
        #[tokio::test]
        async fn json() {
            check($c, $s, Scenario::Json).await
        }
        #[tokio::test]
        async fn sse() {
            check($c, $s, Scenario::Sse).await
        }
        #[tokio::test]
        async fn progress() {
            check($c, $s, Scenario::Progress).await
        }
        #[tokio::test]
        async fn input() {
            check($c, $s, Scenario::Input).await
        }
        #[tokio::test]
        async fn cancel() {
            check($c, $s, Scenario::Cancel).await
        }
        #[tokio::test]
        async fn disconnect() {
            check($c, $s, Scenario::Disconnect).await
        }
        #[tokio::test]
        async fn network_drop() {
            check($c, $s, Scenario::NetworkDrop).await
        }
        #[tokio::test]
        async fn two_streams() {
            check($c, $s, Scenario::TwoStreams).await
        }
        #[tokio::test]
        async fn changes() {
            check($c, $s, Scenario::Changes).await
        }
        #[tokio::test]
        async fn expiry() {
            check($c, $s, Scenario::Expiry).await
        }
        #[tokio::test]
        async fn delete() {
            check($c, $s, Scenario::Delete).await
        }
        #[tokio::test]
        async fn get_405() {
            check($c, $s, Scenario::Get405).await
        }
        #[tokio::test]
        async fn era_cache() {
            check($c, $s, Scenario::EraCache).await
        }
        #[tokio::test]
        async fn long_running_drop() {
            check($c, $s, Scenario::LongRunningDrop).await
        }
        #[tokio::test]
        async fn task() {
            check($c, $s, Scenario::Task).await
        }
    };
}

macro_rules! servers {
    ($c:expr) => {
        mod s_2024_11_05 {
            scenarios!($c, ServerKind::S1105);
        }
        mod s_2025_03_26 {
            scenarios!($c, ServerKind::S0326);
        }
        mod s_2025_06_18 {
            scenarios!($c, ServerKind::S0618);
        }
        mod s_2025_11_25 {
            scenarios!($c, ServerKind::S1125);
        }
        mod s_2026_07_28 {
            scenarios!($c, ServerKind::S0728);
        }
        mod s_legacy {
            scenarios!($c, ServerKind::Legacy);
        }
        mod s_legacy_405 {
            scenarios!($c, ServerKind::Legacy405);
        }
        mod s_legacy_200 {
            scenarios!($c, ServerKind::Legacy200);
        }
        mod s_all {
            scenarios!($c, ServerKind::All);
        }
        mod s_cluster {
            scenarios!($c, ServerKind::Cluster);
        }
    };
}

mod c_2024_11_05 {
    servers!(ClientKind::C1105);
}
mod c_2025_03_26 {
    servers!(ClientKind::C0326);
}
mod c_2025_06_18 {
    servers!(ClientKind::C0618);
}
mod c_2025_11_25 {
    servers!(ClientKind::C1125);
}
mod c_2026_07_28 {
    servers!(ClientKind::Modern);
}
mod c_future {
    servers!(ClientKind::Future);
}
mod c_legacy {
    servers!(ClientKind::Legacy);
}
mod c_all {
    servers!(ClientKind::All);
}

/// Every scenario is covered by the macro above.
#[test]
fn scenario_list_is_complete() {
    assert_eq!(Scenario::ALL.len(), 15);
    assert_eq!(ClientKind::ALL.len(), 8);
    assert_eq!(ServerKind::ALL.len(), 10);
}
