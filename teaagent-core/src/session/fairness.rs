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
#[derive(Debug)]
pub(crate) struct Shares {
    kind: CallerShare,
    held: Mutex<HashMap<Arc<str>, usize>>,
}

/// One thing a caller holds; given back when dropped, however its holder ends (an aborted task
/// included).
#[derive(Debug)]
pub(crate) struct Share {
    shares: Arc<Shares>,
    caller: Arc<str>,
}

impl Shares {
    /// Nothing held yet.
    pub(crate) fn new(kind: CallerShare) -> Arc<Self> {
        Arc::new(Self { kind, held: Mutex::new(HashMap::new()) })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, usize>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One more for `caller`, unless it already holds `max`: then the error that says so.
    pub(crate) fn take(self: &Arc<Self>, caller: &Arc<str>, max: usize) -> Result<Share, Error> {
        let mut held = self.held();
        let count = held.entry(Arc::clone(caller)).or_insert(0);
        if *count >= max {
            return Err(Error::CallerLimit { share: self.kind, max });
        }
        *count += 1;
        Ok(Share { shares: Arc::clone(self), caller: Arc::clone(caller) })
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
        // One look-up (the key is a clone of the `Arc`, not of the text).
        if let std::collections::hash_map::Entry::Occupied(mut entry) =
            self.shares.held().entry(Arc::clone(&self.caller))
        {
            *entry.get_mut() = entry.get().saturating_sub(1);
            if *entry.get() == 0 {
                entry.remove();
            }
        }
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
    fn nothing_is_kept_for_a_caller_that_holds_nothing() {
        let shares = Shares::new(CallerShare::Questions);
        let a: Arc<str> = Arc::from("addr:127.0.0.1");
        drop(shares.take(&a, 1).expect("one"));
        assert!(shares.held().is_empty());
    }

    #[test]
    fn every_limit_stays_in_its_range() {
        let high = CallerLimits::default().calls(usize::MAX).questions(usize::MAX).subscriptions(usize::MAX);
        assert_eq!((high.calls, high.questions, high.subscriptions), (1 << 16, 1024, 16));
        let low = CallerLimits::default().calls(0).questions(0).subscriptions(0);
        assert_eq!((low.calls, low.questions, low.subscriptions), (1, 1, 1));
    }
}
