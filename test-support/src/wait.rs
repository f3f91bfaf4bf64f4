//! Bounded waiting: a test that hangs fails instead of blocking the run.
//!
//! Every wait here is measured on tokio's clock, so under a paused clock
//! (`#[tokio::test(start_paused = true)]`) it costs no real time; the one
//! exception is [`within`], which measures real time on purpose.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// The bound on any single wait in a test.
pub const WAIT: Duration = Duration::from_secs(5);

/// How often [`eventually`] looks at its condition.
const POLL: Duration = Duration::from_millis(5);

/// Polls `cond` every few milliseconds until it holds; fails the test,
/// naming `what`, when it still does not after [`WAIT`].
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(POLL).await;
    }
}

/// Awaits `fut`, failing the test, naming `what`, after 30 s of *real*
/// time. A plain thread keeps the time, so tokio's paused clock (which
/// auto-advances when the runtime is idle) does not fire it early: this is
/// the bound for tests that run on a paused clock.
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(30));
        let _ = tx.send(());
    });
    tokio::select! {
        v = fut => v,
        _ = rx => panic!("{what} did not finish in time"),
    }
}
