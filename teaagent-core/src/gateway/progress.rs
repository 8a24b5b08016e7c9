//! An external server's progress reports for one call, on their way to the client.
//!
//! A server may send them as fast as its pipe takes them, and the client may read slowly or not
//! at all; neither may make teaagent hold more than a few. So:
//!
//! - between the thread that reads the server and the call's task, at most [`QUEUED`] reports
//!   wait, in order; past that, the newest replaces the last one waiting;
//! - the call passes them on in order, [`BURST`] at once and then [`PER_SECOND`] a second; when
//!   it is over that pace, it waits, and passes on the newest report that came meanwhile;
//! - when the reply comes, what is still waiting is passed on before the result: in order while
//!   the pace allows, and the newest in any case. The last report a server sent before its reply
//!   always reaches the client, before the result.
//!
//! A tool that reports a few times a second is never slowed or thinned.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Reports waiting for one call, at most.
pub(crate) const QUEUED: usize = 64;
/// Reports a call passes on at once before the pace applies.
pub(crate) const BURST: f64 = 32.0;
/// Reports a call passes on per second once its burst is spent.
pub(crate) const PER_SECOND: f64 = 20.0;

/// A progress report of the child, for the call whose token it names.
#[derive(Debug, Clone)]
pub(crate) struct Progress {
    pub(crate) progress: f64,
    pub(crate) total: Option<f64>,
    pub(crate) message: Option<String>,
}

/// The reports waiting for one call (module docs).
#[derive(Debug, Default)]
pub(crate) struct ProgressQueue {
    waiting: Mutex<VecDeque<Progress>>,
    arrived: Notify,
}

impl ProgressQueue {
    /// Queues a report; past [`QUEUED`] it replaces the last one waiting.
    pub(crate) fn push(&self, report: Progress) {
        {
            let mut waiting = self.waiting();
            if waiting.len() >= QUEUED {
                waiting.pop_back();
            }
            waiting.push_back(report);
        }
        self.arrived.notify_one();
    }

    /// The next report to pass on, at `pace`. Cancel-safe: a report leaves the queue only as
    /// this returns it.
    pub(crate) async fn next(&self, pace: &mut Pace) -> Progress {
        loop {
            if !self.waiting().is_empty() {
                if pace.take() {
                    if let Some(next) = self.waiting().pop_front() {
                        return next;
                    }
                } else {
                    tokio::time::sleep(pace.until_next()).await;
                    if pace.take() {
                        // Over the pace: what waited meanwhile is stale but for the newest.
                        let newest = {
                            let mut waiting = self.waiting();
                            let newest = waiting.pop_back();
                            waiting.clear();
                            newest
                        };
                        if let Some(newest) = newest {
                            return newest;
                        }
                    }
                }
                continue;
            }
            self.arrived.notified().await;
        }
    }

    /// What is still waiting when the reply has come: in order while `pace` allows, then only
    /// the newest.
    pub(crate) fn rest(&self, pace: &mut Pace) -> Vec<Progress> {
        let waiting: Vec<Progress> = self.waiting().drain(..).collect();
        let last = waiting.len().saturating_sub(1);
        waiting.into_iter().enumerate().filter(|(i, _)| *i == last || pace.take()).map(|(_, p)| p).collect()
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, VecDeque<Progress>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How many reports a call may still pass on now: a bucket of [`BURST`], refilled at
/// [`PER_SECOND`].
#[derive(Debug)]
pub(crate) struct Pace {
    tokens: f64,
    at: Instant,
}

impl Default for Pace {
    fn default() -> Self {
        Pace { tokens: BURST, at: Instant::now() }
    }
}

impl Pace {
    /// Spends one report, when there is one to spend.
    fn take(&mut self) -> bool {
        let now = Instant::now();
        self.tokens = (self.tokens + now.duration_since(self.at).as_secs_f64() * PER_SECOND).min(BURST);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// How long until one more report may be passed on.
    fn until_next(&self) -> Duration {
        Duration::from_secs_f64(((1.0 - self.tokens) / PER_SECOND).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(n: u32) -> Progress {
        Progress { progress: f64::from(n), total: None, message: None }
    }

    fn numbers(reports: &[Progress]) -> Vec<f64> {
        reports.iter().map(|p| p.progress).collect()
    }

    #[test]
    fn past_its_bound_the_newest_replaces_the_last_waiting() {
        let queue = ProgressQueue::default();
        for n in 1..=1000 {
            queue.push(report(n));
        }
        let waiting = numbers(&queue.waiting().iter().cloned().collect::<Vec<_>>());
        assert_eq!(waiting.len(), QUEUED);
        assert_eq!(waiting[..QUEUED - 1], (1..QUEUED as u32).map(f64::from).collect::<Vec<_>>()[..]);
        assert_eq!(waiting[QUEUED - 1], 1000.0);
    }

    #[test]
    fn the_rest_is_passed_on_in_order_while_the_pace_allows_and_the_newest_always() {
        let queue = ProgressQueue::default();
        for n in 1..=3 {
            queue.push(report(n));
        }
        assert_eq!(numbers(&queue.rest(&mut Pace::default())), [1.0, 2.0, 3.0]);
        let mut spent = Pace { tokens: 0.0, at: Instant::now() };
        for n in 1..=3 {
            queue.push(report(n));
        }
        assert_eq!(numbers(&queue.rest(&mut spent)), [3.0]);
        assert!(queue.rest(&mut spent).is_empty());
    }

    #[tokio::test]
    async fn a_burst_passes_at_once_then_the_pace_and_the_newest() {
        let queue = ProgressQueue::default();
        let mut pace = Pace::default();
        for n in 1..=40 {
            queue.push(report(n));
        }
        let mut passed = Vec::new();
        for _ in 0..BURST as usize {
            passed.push(poll_once(queue.next(&mut pace)).expect("within the burst, at once").progress);
        }
        assert_eq!(passed, (1..=BURST as u32).map(f64::from).collect::<Vec<_>>());
        // Over the pace: the next waits for a twentieth of a second, and is the newest.
        let started = Instant::now();
        assert_eq!(queue.next(&mut pace).await.progress, 40.0);
        assert!(started.elapsed() >= Duration::from_millis(40), "{:?}", started.elapsed());
        assert!(queue.waiting().is_empty());
    }

    fn poll_once<F: std::future::Future>(f: F) -> Option<F::Output> {
        let mut f = std::pin::pin!(f);
        match f.as_mut().poll(&mut std::task::Context::from_waker(std::task::Waker::noop())) {
            std::task::Poll::Ready(v) => Some(v),
            std::task::Poll::Pending => None,
        }
    }
}
