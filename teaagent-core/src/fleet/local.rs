//! The store kept in this process (`fleet.rs`): what a server alone, or each replica that shares
//! nothing, remembers.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{Admit, Reserve, Store, StoreAnswer, Ticket};
use crate::tool::RateLimit;

/// Most nonces remembered at once; past it, states are refused until older ones are forgotten
/// (fail closed: a flood of approvals cannot make the server forget which it has seen).
pub const MAX_NONCES: usize = 65_536;

/// Most windows kept at once before the empty ones are dropped (windows are per tool, or per
/// tool and principal).
const TIDY_WINDOWS_OVER: usize = 1024;

/// The store of one process: each window a queue of admission times, each nonce with the instant
/// it is forgotten, each counted grant its uses left ("for this session" answers are the
/// policy's own: there is no other replica to hear of them). One mutex per kind, so
/// every answer is exact however many calls arrive at once.
#[derive(Debug, Default)]
pub struct LocalStore {
    windows: Mutex<HashMap<String, Window>>,
    /// Tells the admissions of one instant apart (for refunds).
    admitted: AtomicU64,
    nonces: Mutex<Nonces>,
    uses: Mutex<HashMap<String, u64>>,
}

/// Nonces of the states that were opened: reserved by a call still on its way, or spent by one
/// that ran. Each is kept until `keep` after it was opened, measured on the monotonic clock (a
/// wall clock set back cannot make a spent state good again), and dropped in order.
#[derive(Debug, Default)]
struct Nonces {
    state: HashMap<String, (Nonce, Instant)>,
    order: VecDeque<(Instant, String)>,
}

/// One sliding window: its span, and its admissions (when, and the ticket's number).
#[derive(Debug)]
struct Window {
    span: Duration,
    admitted: VecDeque<(Instant, u64)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Nonce {
    Reserved,
    Spent,
}

impl Nonces {
    fn forget_old(&mut self, now: Instant) {
        while let Some((until, _)) = self.order.front() {
            if *until > now {
                break;
            }
            let Some((until, nonce)) = self.order.pop_front() else { break };
            if self.state.get(&nonce).is_some_and(|(_, u)| *u == until) {
                self.state.remove(&nonce);
            }
        }
    }
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl LocalStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// [`Store::admit`], answered at once.
    pub fn admit_now(&self, window: &str, limit: RateLimit) -> Admit {
        self.admit_at(window, limit, Instant::now())
    }

    /// [`Self::admit_now`] as if it were `now` (tests step the clock without sleeping).
    fn admit_at(&self, window: &str, limit: RateLimit, now: Instant) -> Admit {
        let mut windows = locked(&self.windows);
        if windows.len() > TIDY_WINDOWS_OVER {
            windows.retain(|_, w| w.admitted.back().is_some_and(|(t, _)| now.duration_since(*t) < w.span));
        }
        let window = match windows.get_mut(window) {
            Some(window) => window,
            None => windows
                .entry(window.to_owned())
                .or_insert_with(|| Window { span: limit.window, admitted: VecDeque::new() }),
        };
        window.span = limit.window;
        let admitted = &mut window.admitted;
        while admitted.front().is_some_and(|(t, _)| now.duration_since(*t) >= limit.window) {
            admitted.pop_front();
        }
        if admitted.len() < limit.max_calls as usize {
            let n = self.admitted.fetch_add(1, Ordering::Relaxed);
            admitted.push_back((now, n));
            return Admit::Admitted(Ticket(n.to_string()));
        }
        let oldest = admitted.front().map_or(now, |(t, _)| *t);
        // (A window too long to add to an `Instant` means: retry after the whole window.)
        let retry =
            oldest.checked_add(limit.window).map_or(limit.window, |free| free.saturating_duration_since(now));
        Admit::Full(retry)
    }

    /// [`Store::reserve`], answered at once.
    pub fn reserve_now(&self, nonce: &str, keep: Duration) -> Reserve {
        self.reserve_at(nonce, keep, Instant::now())
    }

    /// [`Self::reserve_now`] as if it were `now` (tests step the clock without sleeping).
    fn reserve_at(&self, nonce: &str, keep: Duration, now: Instant) -> Reserve {
        let mut nonces = locked(&self.nonces);
        nonces.forget_old(now);
        if nonces.state.contains_key(nonce) {
            return Reserve::Taken;
        }
        if nonces.state.len() >= MAX_NONCES {
            return Reserve::Full;
        }
        let until = now.checked_add(keep).unwrap_or(now);
        nonces.state.insert(nonce.to_owned(), (Nonce::Reserved, until));
        nonces.order.push_back((until, nonce.to_owned()));
        Reserve::Reserved
    }

    /// [`Store::take_uses`], answered at once.
    pub fn take_uses_now(&self, grants: &[(&str, u64)]) -> Option<usize> {
        let mut uses = locked(&self.uses);
        let left = |uses: &HashMap<String, u64>, (text, total): &(&str, u64)| {
            uses.get(*text).copied().unwrap_or(*total)
        };
        if let Some(i) = grants.iter().position(|grant| left(&uses, grant) == 0) {
            return Some(i);
        }
        for grant in grants {
            let now = left(&uses, grant) - 1;
            uses.insert(grant.0.to_owned(), now);
        }
        None
    }
}

impl Store for LocalStore {
    fn admit<'a>(&'a self, window: &'a str, limit: RateLimit) -> StoreAnswer<'a, Admit> {
        Box::pin(std::future::ready(Ok(self.admit_now(window, limit))))
    }

    fn refund(&self, window: &str, ticket: Ticket) {
        let mut windows = locked(&self.windows);
        let (Some(window), Ok(ticket)) = (windows.get_mut(window), ticket.0.parse::<u64>()) else { return };
        if let Some(i) = window.admitted.iter().rposition(|(_, n)| *n == ticket) {
            window.admitted.remove(i);
        }
    }

    fn reserve<'a>(&'a self, nonce: &'a str, keep: Duration) -> StoreAnswer<'a, Reserve> {
        Box::pin(std::future::ready(Ok(self.reserve_now(nonce, keep))))
    }

    fn spend(&self, nonce: &str, _keep: Duration) {
        // Kept until the instant it was reserved for (longer than any state lives).
        if let Some((state, _)) = locked(&self.nonces).state.get_mut(nonce) {
            *state = Nonce::Spent;
        }
    }

    fn release(&self, nonce: &str) {
        let mut nonces = locked(&self.nonces);
        if nonces.state.get(nonce).is_some_and(|(state, _)| *state == Nonce::Reserved) {
            nonces.state.remove(nonce);
        }
    }

    fn take_uses<'a>(&'a self, grants: &'a [(&'a str, u64)]) -> StoreAnswer<'a, Option<usize>> {
        Box::pin(std::future::ready(Ok(self.take_uses_now(grants))))
    }

    /// A store of one process has no other replica to tell.
    fn approve_session(&self, _key: &str, _ttl: Duration) {}

    /// No other replica: nothing approved elsewhere.
    fn session_approved<'a>(&'a self, _key: &'a str) -> StoreAnswer<'a, bool> {
        Box::pin(std::future::ready(Ok(false)))
    }

    fn is_shared(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(max_calls: u32, window: Duration) -> RateLimit {
        RateLimit { max_calls, window }
    }

    #[test]
    fn a_window_is_exact_under_concurrency() {
        let store = LocalStore::new();
        let admitted = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..125 {
                        if matches!(
                            store.admit_now("t", limit(10, Duration::from_secs(60))),
                            Admit::Admitted(_)
                        ) {
                            admitted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(admitted.into_inner(), 10);
    }

    #[test]
    fn refunds_and_sliding() {
        let store = LocalStore::new();
        let start = Instant::now();
        let l = limit(2, Duration::from_millis(200));
        let Admit::Admitted(first) = store.admit_at("t", l, start) else { panic!("first") };
        assert!(matches!(store.admit_at("t", l, start), Admit::Admitted(_)));
        let Admit::Full(retry) = store.admit_at("t", l, start + Duration::from_millis(50)) else {
            panic!("third")
        };
        assert_eq!(retry, Duration::from_millis(150));
        store.refund("t", first);
        assert!(matches!(store.admit_at("t", l, start), Admit::Admitted(_)), "refunded budget");
        let later = start + Duration::from_millis(200);
        assert!(matches!(store.admit_at("t", l, later), Admit::Admitted(_)), "the window slid");
        assert!(matches!(store.admit_at("other", l, later), Admit::Admitted(_)), "windows are apart");
    }

    #[test]
    fn an_endless_window_refuses_without_panicking() {
        let store = LocalStore::new();
        let l = limit(1, Duration::MAX);
        assert!(matches!(store.admit_now("t", l), Admit::Admitted(_)));
        let Admit::Full(retry) = store.admit_now("t", l) else { panic!("second") };
        assert!(retry > Duration::from_secs(86_400 * 365));
    }

    #[test]
    fn a_nonce_is_taken_once_and_a_released_one_again() {
        let store = LocalStore::new();
        let keep = Duration::from_secs(60);
        assert_eq!(store.reserve_now("n", keep), Reserve::Reserved);
        assert_eq!(store.reserve_now("n", keep), Reserve::Taken);
        store.release("n");
        assert_eq!(store.reserve_now("n", keep), Reserve::Reserved);
        store.spend("n", keep);
        store.release("n");
        assert_eq!(store.reserve_now("n", keep), Reserve::Taken, "a spent nonce stays");
    }

    #[test]
    fn uses_are_taken_all_or_none() {
        let store = LocalStore::new();
        assert_eq!(store.take_uses_now(&[("a", 1), ("b", 2)]), None);
        assert_eq!(store.take_uses_now(&[("b", 2), ("a", 1)]), Some(1), "`a` is used up");
        assert_eq!(store.take_uses_now(&[("b", 2)]), None, "`b` was not taken by the refusal");
        assert_eq!(store.take_uses_now(&[("b", 2)]), Some(0));
    }

    #[test]
    fn nonces_past_the_limit_are_refused_until_old_ones_are_forgotten() {
        let store = LocalStore::new();
        let start = Instant::now();
        let keep = Duration::from_secs(60);
        for n in 0..MAX_NONCES {
            assert_eq!(store.reserve_at(&n.to_string(), keep, start), Reserve::Reserved);
        }
        let soon = start + Duration::from_secs(59);
        assert_eq!(store.reserve_at("one more", keep, soon), Reserve::Full);
        assert_eq!(store.reserve_at("0", keep, soon), Reserve::Taken, "still remembered");
        let later = start + keep;
        assert_eq!(store.reserve_at("one more", keep, later), Reserve::Reserved);
        assert_eq!(store.reserve_at("0", keep, later), Reserve::Reserved, "forgotten in time");
    }
}
