//! Fair shares: how much of a server one caller may hold at once, so that one caller cannot
//! stall the others (README, "Security model and its limits").
//!
//! A *caller* is who the transport says made a request: over Streamable HTTP the authenticated
//! principal (`token:NAME`, `oauth:SUB`), and without authentication the client's address
//! (`addr:IP`). Over stdio there is one client and no caller: only the server-wide limits
//! ([`ServerConfig`](crate::ServerConfig)) apply there.
//!
//! | one caller holds at once | default | range | past it |
//! |---|---|---|---|
//! | [`CallerLimits::calls`]: calls in progress (`tools/call`, `resources/read`, `prompts/get`), running or waiting for anything | 16 | 1 to 65,536 | `-32000`, `data: {reason: "caller_limit", limit: "calls", max}` |
//! | [`CallerLimits::questions`]: approval questions open, asked or waiting for their turn | 4 | 1 to 1,024 | `-32000`, `limit: "questions"` |
//! | [`CallerLimits::subscriptions`]: `subscriptions/listen` streams | 4 | 1 to 16 | `-32000`, `limit: "subscriptions"` |
//! | HTTP requests in progress, each holding its connection (`HttpOptions::max_connections_per_caller`) | 64 | 1 to the server's connections | HTTP `429`, `Retry-After`, `limit: "requests"`, the connection closed |
//!
//! Every refusal comes first, before the call's arguments are looked at: a refused call spends
//! no rate-limit budget and no grant use, and asks nobody. The error names the limit
//! ([`crate::error::CallerShare`]) and carries `retryAfterSeconds`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{CallerShare, Error};

/// How much of a server one caller may hold at once (module docs). Every setter keeps its value
/// within the documented range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallerLimits {
    /// Calls in progress (`tools/call`, `resources/read`, `prompts/get`) of one caller, from
    /// the moment they arrive to their answer. Default 16.
    pub calls: usize,
    /// Approval questions of one caller that are open: being asked, or waiting for their turn
    /// (questions to one client, or to the terminal, are asked one at a time). Default 4.
    pub questions: usize,
    /// `subscriptions/listen` streams one caller keeps open (of the server's 16). Default 4.
    pub subscriptions: usize,
}

impl Default for CallerLimits {
    fn default() -> Self {
        Self { calls: 16, questions: 4, subscriptions: 4 }
    }
}

impl CallerLimits {
    /// Sets [`CallerLimits::calls`] (1 to 65,536).
    pub fn calls(mut self, n: usize) -> Self {
        self.calls = n.clamp(1, 1 << 16);
        self
    }
    /// Sets [`CallerLimits::questions`] (1 to 1,024).
    pub fn questions(mut self, n: usize) -> Self {
        self.questions = n.clamp(1, 1024);
        self
    }
    /// Sets [`CallerLimits::subscriptions`] (1 to 16, the server's own limit).
    pub fn subscriptions(mut self, n: usize) -> Self {
        self.subscriptions = n.clamp(1, MAX_LISTENERS);
        self
    }
}

/// Most `subscriptions/listen` streams open at once (each holds a task and an in-flight entry
/// until cancelled); one caller may hold [`CallerLimits::subscriptions`] of them.
pub(crate) const MAX_LISTENERS: usize = 16;

/// What each caller holds of one kind of thing.
///
/// Each caller's count is a counter of its own, found by one look-up when a share is taken and
/// given back by the share itself (no look-up, no lock). A caller that holds nothing keeps its
/// (zeroed) counter until the next clearing: callers that come and go do not remove and insert
/// their entry on every request; a new caller clears the map of the callers that hold nothing
/// once it has doubled since the last clearing, so it stays within twice the callers that hold
/// something (and at least [`CLEAR_FROM`]).
#[derive(Debug)]
pub(crate) struct Shares {
    kind: CallerShare,
    held: Mutex<Held>,
}

/// How many callers the map of [`Shares`] holds before it is first cleared of the callers that
/// hold nothing.
const CLEAR_FROM: usize = 64;

/// Callers' counters by caller. A key names who the caller is (an authenticated principal, or
/// the connection's address), and the map is kept to about twice the callers that hold
/// something: foldhash, seeded at random per process, is enough for such keys, where std's
/// SipHash took about 200 instructions a look-up, two look-ups an HTTP request.
type Counts = HashMap<Arc<str>, Arc<AtomicUsize>, foldhash::fast::RandomState>;

#[derive(Debug)]
struct Held {
    counts: Counts,
    /// The map's size at which it is next cleared.
    clear_at: usize,
}

/// One thing a caller holds; given back when dropped, however its holder ends (an aborted task
/// included).
#[derive(Debug)]
pub(crate) struct Share {
    count: Arc<AtomicUsize>,
}

impl Shares {
    /// Nothing held yet.
    pub(crate) fn new(kind: CallerShare) -> Arc<Self> {
        Arc::new(Self { kind, held: Mutex::new(Held { counts: Counts::default(), clear_at: CLEAR_FROM }) })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One more for `caller`, unless it already holds `max`: then the error that says so.
    pub(crate) fn take(self: &Arc<Self>, caller: &Arc<str>, max: usize) -> Result<Share, Error> {
        let mut held = self.held();
        let count = match held.counts.get(caller) {
            Some(count) => Arc::clone(count),
            None => {
                let Held { counts, clear_at } = &mut *held;
                if counts.len() >= *clear_at {
                    counts.retain(|_, count| count.load(Ordering::Acquire) > 0);
                    *clear_at = (counts.len() * 2).max(CLEAR_FROM);
                }
                let count = Arc::new(AtomicUsize::new(0));
                counts.insert(Arc::clone(caller), Arc::clone(&count));
                count
            }
        };
        // Taken under the lock (shares are given back without it: a count read here is never
        // lower than the truth, so no caller ever holds more than `max`).
        if count.load(Ordering::Acquire) >= max {
            return Err(Error::CallerLimit { share: self.kind, max });
        }
        count.fetch_add(1, Ordering::AcqRel);
        Ok(Share { count })
    }

    /// One more for `caller` (none without one: stdio).
    pub(crate) fn take_for(
        self: &Arc<Self>,
        caller: Option<&Arc<str>>,
        max: usize,
    ) -> Result<Option<Share>, Error> {
        caller.map(|caller| self.take(caller, max)).transpose()
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_gets_its_share_and_no_more_and_gets_it_back() {
        let shares = Shares::new(CallerShare::Calls);
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("token:a"), Arc::from("token:b"));
        let first = shares.take(&a, 2).expect("first");
        let _second = shares.take(&a, 2).expect("second");
        let refused = shares.take(&a, 2).expect_err("third");
        assert_eq!(refused, Error::CallerLimit { share: CallerShare::Calls, max: 2 });
        assert_eq!(refused.to_error_object().data.expect("data")["limit"], "calls");
        assert!(shares.take(&b, 2).is_ok(), "another caller has its own share");
        drop(first);
        assert!(shares.take(&a, 2).is_ok(), "given back when dropped");
    }

    #[test]
    fn callers_that_hold_nothing_are_cleared_as_the_map_grows() {
        let shares = Shares::new(CallerShare::Questions);
        let a: Arc<str> = Arc::from("addr:127.0.0.1");
        drop(shares.take(&a, 1).expect("one"));
        // Kept, zeroed, until the map is next cleared.
        assert_eq!(shares.held().counts[&a].load(Ordering::Acquire), 0);
        // Callers that come and go leave the map within twice those that hold something.
        let holding: Vec<Share> =
            (0..10).map(|i| shares.take(&Arc::from(format!("addr:10.0.0.{i}")), 1).expect("share")).collect();
        for i in 0..1000 {
            drop(shares.take(&Arc::from(format!("addr:10.0.1.{i}")), 1).expect("share"));
            assert!(shares.held().counts.len() <= CLEAR_FROM.max(2 * holding.len()) + 1);
        }
        // The callers that hold something kept their counts through every clearing.
        for i in 0..10 {
            let again = shares.take(&Arc::from(format!("addr:10.0.0.{i}")), 1);
            assert!(again.is_err(), "caller {i} still holds its one share");
        }
        drop(holding);
        assert!(shares.take(&Arc::from("addr:10.0.0.0"), 1).is_ok());
    }

    #[test]
    fn every_limit_stays_in_its_range() {
        let high = CallerLimits::default().calls(usize::MAX).questions(usize::MAX).subscriptions(usize::MAX);
        assert_eq!((high.calls, high.questions, high.subscriptions), (1 << 16, 1024, 16));
        let low = CallerLimits::default().calls(0).questions(0).subscriptions(0);
        assert_eq!((low.calls, low.questions, low.subscriptions), (1, 1, 1));
    }
}
