//! Latency summaries shared by the workloads: one nearest-rank quantile
//! for every sample type, and the p50/p99/max figures of the semantic
//! edges (cancel-by-close, resume after disconnect).

use std::time::Duration;

use serde::Serialize;

/// The `q` quantile of sorted samples (nearest rank: the smallest sample
/// at or above a `q` fraction of them); `0.0` when there are none.
pub fn percentile<T: Copy + Into<f64>>(sorted: &[T], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].into()
}

/// Latency over a series of one-at-a-time trials, in microseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyFigures {
    /// Trials run.
    pub trials: usize,
    /// The median trial, µs.
    pub p50_us: f64,
    /// The 99th percentile, µs.
    pub p99_us: f64,
    /// The slowest trial, µs.
    pub max_us: f64,
}

impl LatencyFigures {
    /// Summarises the trials' latencies, in any order.
    pub fn of(trials: &[Duration]) -> Self {
        let mut latencies: Vec<f64> = trials.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        latencies.sort_by(f64::total_cmp);
        Self {
            trials: latencies.len(),
            p50_us: percentile(&latencies, 0.50),
            p99_us: percentile(&latencies, 0.99),
            max_us: latencies.last().copied().unwrap_or(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Duration, LatencyFigures, percentile};

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.5), 50.0);
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&[7u32], 0.99), 7.0);
        assert_eq!(percentile::<u32>(&[], 0.5), 0.0);
        let w: Vec<u32> = (1..=1000).collect();
        assert_eq!(percentile(&w, 0.99), 990.0);
        assert_eq!(percentile(&w, 0.0), 1.0);
        assert_eq!(percentile(&w, 1.0), 1000.0);
    }

    #[test]
    fn figures_sort_their_trials() {
        let mut v: Vec<Duration> = (1..=200).map(Duration::from_micros).collect();
        v.reverse();
        assert_eq!(
            LatencyFigures::of(&v),
            LatencyFigures {
                trials: 200,
                p50_us: 100.0,
                p99_us: 198.0,
                max_us: 200.0
            }
        );
        let none = LatencyFigures::of(&[]);
        assert_eq!((none.trials, none.p50_us, none.max_us), (0, 0.0, 0.0));
    }

    #[test]
    fn figures_are_in_microseconds() {
        let trials = [Duration::from_millis(3), Duration::from_nanos(1_500)];
        let f = LatencyFigures::of(&trials);
        assert_eq!((f.p50_us, f.max_us), (1.5, 3_000.0));
    }
}
