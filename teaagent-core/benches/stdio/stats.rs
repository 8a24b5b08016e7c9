//! Medians and percentiles.

use std::time::Duration;

/// The median over rounds of each round's `p`th percentile, in seconds.
pub(crate) fn per_round(rounds: &[Vec<Duration>], p: usize) -> f64 {
    let each: Vec<f64> = rounds
        .iter()
        .map(|r| percentile(&r.iter().map(Duration::as_secs_f64).collect::<Vec<_>>(), p))
        .collect();
    median(&each)
}

pub(crate) fn median<T: PartialOrd + Copy>(values: &[T]) -> T {
    percentile(values, 50)
}

pub(crate) fn percentile<T: PartialOrd + Copy>(values: &[T], p: usize) -> T {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}
