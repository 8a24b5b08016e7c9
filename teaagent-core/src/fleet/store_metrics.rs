//! [`StoreMetrics`]: how a shared store's round trips went, per kind of operation ([`StoreOp`]):
//! how long each took and how many failed. A store that makes round trips keeps one and gives it
//! out through [`Store::metrics`](super::Store::metrics); the server shows it at `/metrics`.

use std::time::Duration;

use crate::metrics::{Counter, Histogram};

/// The kinds of operation a shared store makes round trips for (a fixed vocabulary: the
/// `operation` label of the metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreOp {
    /// A rate-limit admission.
    RateLimit,
    /// A rate-limit refund.
    Refund,
    /// A request state's nonce: reserved, spent or released.
    RequestState,
    /// Counted grants' uses.
    GrantUses,
    /// A "for this session" approval: told or looked up.
    SessionApproval,
    /// A health check.
    Ping,
    /// A task's snapshot: published or looked up.
    Task,
}

impl StoreOp {
    /// Every kind, in the order of [`StoreMetrics`]' series.
    pub const ALL: [StoreOp; 7] = [
        StoreOp::RateLimit,
        StoreOp::Refund,
        StoreOp::RequestState,
        StoreOp::GrantUses,
        StoreOp::SessionApproval,
        StoreOp::Ping,
        StoreOp::Task,
    ];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            StoreOp::RateLimit => "rate_limit",
            StoreOp::Refund => "rate_limit_refund",
            StoreOp::RequestState => "request_state",
            StoreOp::GrantUses => "grant_uses",
            StoreOp::SessionApproval => "session_approval",
            StoreOp::Ping => "ping",
            StoreOp::Task => "task",
        }
    }

    /// What it is, for a log line.
    pub fn what(self) -> &'static str {
        match self {
            StoreOp::RateLimit => "rate limit",
            StoreOp::Refund => "rate-limit refund",
            StoreOp::RequestState => "request state",
            StoreOp::GrantUses => "grant uses",
            StoreOp::SessionApproval => "session approval",
            StoreOp::Ping => "ping",
            StoreOp::Task => "task snapshot",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Per [`StoreOp`]: the latency of its round trips (failed ones too) and how many failed (no
/// connection, an error answer, no answer in time).
#[derive(Debug, Default)]
pub struct StoreMetrics {
    latency: [Histogram; StoreOp::ALL.len()],
    errors: [Counter; StoreOp::ALL.len()],
}

impl StoreMetrics {
    /// Counts one round trip of `op` that took `took`, and whether it failed.
    pub fn record(&self, op: StoreOp, took: Duration, failed: bool) {
        self.latency[op.index()].observe(took);
        if failed {
            self.errors[op.index()].inc();
        }
    }

    /// The latency of `op`'s round trips.
    pub fn latency(&self, op: StoreOp) -> &Histogram {
        &self.latency[op.index()]
    }

    /// How many of `op`'s round trips failed.
    pub fn errors(&self, op: StoreOp) -> u64 {
        self.errors[op.index()].get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_its_own_series() {
        let metrics = StoreMetrics::default();
        for (i, op) in StoreOp::ALL.into_iter().enumerate() {
            assert_eq!(op.index(), i, "ALL is in the order of the series");
            metrics.record(op, Duration::from_millis(1), true);
        }
        for op in StoreOp::ALL {
            assert_eq!((metrics.latency(op).count(), metrics.errors(op)), (1, 1), "{}", op.label());
        }
    }
}
