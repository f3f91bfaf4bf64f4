//! A request's deadline, shared by every client: the caller's
//! `RequestOptions::timeout` (or the configured default) turned into an
//! instant once, so that retries and resumptions spend the same budget.

use std::future::Future;
use std::time::Duration;

use mcp_transport_core::transport::TransportError;
use tokio::time::Instant;

/// Runs `work` until `deadline`; when it passes first, the result is
/// [`TransportError::Timeout`] naming `timeout` (the budget the deadline was
/// computed from). Without both, `work` runs unbounded.
pub async fn with_deadline<T>(
    deadline: Option<Instant>,
    timeout: Option<Duration>,
    work: impl Future<Output = Result<T, TransportError>>,
) -> Result<T, TransportError> {
    match (deadline, timeout) {
        (Some(deadline), Some(timeout)) => tokio::time::timeout_at(deadline, work)
            .await
            .map_err(|_| TransportError::Timeout(timeout))?,
        _ => work.await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_passed_deadline_is_a_timeout_naming_the_budget() {
        let budget = Duration::from_secs(3);
        let deadline = Some(Instant::now() + budget);
        let never = std::future::pending::<Result<(), TransportError>>();
        let err = with_deadline(deadline, Some(budget), never)
            .await
            .unwrap_err();
        assert!(
            matches!(err, TransportError::Timeout(t) if t == budget),
            "{err:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn work_that_ends_in_time_keeps_its_result() {
        let budget = Duration::from_secs(3);
        let deadline = Some(Instant::now() + budget);
        let work = async {
            tokio::time::sleep(Duration::from_secs(2)).await;
            Ok(7)
        };
        assert_eq!(
            with_deadline(deadline, Some(budget), work).await.unwrap(),
            7
        );
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_deadline_work_runs_unbounded() {
        let work = async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(())
        };
        with_deadline(None, Some(Duration::from_secs(1)), work)
            .await
            .unwrap();
    }
}
