//! Memory per idle 2025-11-25 session: the server child's resident set
//! before and after N sessions are opened (`initialize` +
//! `notifications/initialized`, then nothing), their connections closed.

use std::time::Duration;

use serde::Serialize;

use super::child::ServerChild;
use super::proc::{Pid, bytes_each, rss_kib};
use super::wire;

/// Connections that open the sessions, side by side.
const OPENERS: usize = 4;

/// What the idle-session measurement found.
#[derive(Clone, Debug, Serialize)]
pub struct IdleFigures {
    /// Sessions opened and left idle.
    pub sessions: usize,
    /// Server RSS before, KiB (after one warm-up session).
    pub rss_before_kib: u64,
    /// Server RSS with every session open, KiB.
    pub rss_after_kib: u64,
    /// (after - before) / sessions, bytes.
    pub bytes_per_idle_session: f64,
}

/// Opens `n` idle sessions on a fresh server child and measures its RSS.
pub async fn run(n: usize) -> Result<IdleFigures, String> {
    let server = ServerChild::start(&["serve", "--bind", "127.0.0.1:0", "--json-response"]).await?;
    let (addr, path) = (server.addr, server.path.clone());
    {
        let mut s = wire::connect(addr).await?;
        wire::open_session(&mut s, addr, &path).await?;
    }
    settle().await;
    let before = rss_kib(Pid::Of(server.pid)).ok_or("cannot read the server's RSS")?;
    let mut tasks = Vec::new();
    for i in 0..OPENERS {
        let count = share(n, i);
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = wire::connect(addr).await?;
            for _ in 0..count {
                wire::open_session(&mut s, addr, &path).await?;
            }
            Ok::<_, String>(())
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    settle().await;
    let after = rss_kib(Pid::Of(server.pid)).ok_or("cannot read the server's RSS")?;
    server.stop().await;
    Ok(IdleFigures {
        sessions: n,
        rss_before_kib: before,
        rss_after_kib: after,
        bytes_per_idle_session: bytes_each(before, after, n),
    })
}

/// How many of `n` sessions opener `i` (of [`OPENERS`]) opens: an even
/// share, one more for each of the first `n % OPENERS`.
fn share(n: usize, i: usize) -> usize {
    n / OPENERS + usize::from(i < n % OPENERS)
}

/// Lets the server finish with the closed connections.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_openers_share_every_session() {
        for n in 0..=2 * OPENERS + 1 {
            let shares: Vec<usize> = (0..OPENERS).map(|i| share(n, i)).collect();
            assert_eq!(shares.iter().sum::<usize>(), n, "{n}: {shares:?}");
            let (min, max) = (shares.iter().min(), shares.iter().max());
            assert!(
                max.zip(min).is_some_and(|(a, b)| a - b <= 1),
                "{n}: {shares:?}"
            );
        }
        assert_eq!(share(OPENERS + 1, 0), 2);
        assert_eq!(share(OPENERS + 1, 1), 1);
    }
}
