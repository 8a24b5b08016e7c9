//! Numbers a server keeps about itself, and their text for a scraper: counters and latency
//! histograms made of atomics (a gauge is read off what the server keeps anyway, when scraped),
//! and [`Exposition`], which writes them in the Prometheus text exposition format (`# HELP`,
//! `# TYPE`, one sample a line, label values escaped).
//!
//! Everything here is cheap where it is touched on a call's path: an update is one or a few
//! relaxed atomic additions, with no lock and no allocation. Series are made up front by their
//! owners (the server makes one set per registered tool, `server/metrics.rs`), so a client can
//! never create one: label values come only from names the server knows. Text is made only when
//! someone scrapes.

mod exposition;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub use exposition::{Exposition, Kind};

/// A count that only goes up.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// One more.
    pub fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// The count now.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The upper bounds of a latency histogram's buckets, in seconds: from 100 µs (a call that does
/// little) to a minute (a call that waited for a person or a slow tool).
pub const LATENCY_BUCKETS: [f64; 17] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    60.0,
];

/// The same bounds in nanoseconds, for comparing without floating point.
const BOUNDS_NANOS: [u64; 17] = {
    let mut nanos = [0u64; 17];
    let micros: [u64; 17] = [
        100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
        2_500_000, 5_000_000, 10_000_000, 60_000_000,
    ];
    let mut i = 0;
    while i < 17 {
        nanos[i] = micros[i] * 1_000;
        i += 1;
    }
    nanos
};

/// Durations counted in [`LATENCY_BUCKETS`], with their sum and count.
#[derive(Debug, Default)]
pub struct Histogram {
    /// Observations that fell in each bucket alone (not cumulative); the last is above every
    /// bound.
    buckets: [AtomicU64; 18],
    sum_nanos: AtomicU64,
}

impl Histogram {
    /// Counts one duration.
    pub fn observe(&self, took: Duration) {
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        let at = BOUNDS_NANOS.iter().position(|bound| nanos <= *bound).unwrap_or(BOUNDS_NANOS.len());
        self.buckets[at].fetch_add(1, Ordering::Relaxed);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// How many durations were counted (the buckets' sum: one atomic addition less per
    /// observation).
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).sum()
    }

    /// Their sum, in seconds.
    pub fn sum_seconds(&self) -> f64 {
        self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// The cumulative count at or below each bound of [`LATENCY_BUCKETS`], then the total.
    pub fn cumulative(&self) -> [u64; 18] {
        let mut out = [0u64; 18];
        let mut running = 0;
        for (slot, bucket) in out.iter_mut().zip(&self.buckets) {
            running += bucket.load(Ordering::Relaxed);
            *slot = running;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_counts_each_duration_in_its_bucket_and_above() {
        let h = Histogram::default();
        h.observe(Duration::from_micros(100)); // at the first bound: in it
        h.observe(Duration::from_micros(101));
        h.observe(Duration::from_secs(3600)); // above every bound
        let c = h.cumulative();
        assert_eq!(c[0], 1);
        assert_eq!(c[1], 2);
        assert_eq!(c[16], 2);
        assert_eq!(c[17], 3);
        assert_eq!(h.count(), 3);
        assert!((h.sum_seconds() - 3600.000201).abs() < 1e-9);
    }
}
