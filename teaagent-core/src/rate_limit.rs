//! Per-tool rate limits (SPEC §7): a sliding window admitting at most `max_calls` calls in any
//! `window`. Each tool's window is a queue of admission times under a mutex, so the count is
//! exact however many calls arrive at once. An admission can be refunded: a call that a later
//! step refuses (the workspace lock) leaves the budget as it found it.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::registry::Registry;
use crate::tool::RateLimit;

/// The rate limits of a registry's tools.
#[derive(Debug, Default)]
pub struct RateLimiter {
    windows: HashMap<String, Window>,
}

#[derive(Debug)]
struct Window {
    limit: RateLimit,
    admitted: Mutex<VecDeque<Instant>>,
}

/// A call admitted by its tool's rate limit.
#[derive(Debug)]
pub struct Admission<'a> {
    window: Option<&'a Window>,
    at: Option<Instant>,
}

impl RateLimiter {
    /// The limits declared by the tools, with `overrides` (by tool name) taking precedence.
    pub fn new(registry: &Registry, overrides: &HashMap<String, RateLimit>) -> Self {
        // (Admission and lookup cost nothing for tools without a limit.)
        let windows = registry
            .iter()
            .filter_map(|tool| {
                let limit = overrides.get(tool.name()).copied().or(tool.rate_limit())?;
                Some((tool.name().to_owned(), Window { limit, admitted: Mutex::new(VecDeque::new()) }))
            })
            .collect();
        Self { windows }
    }

    /// The effective limit of a tool.
    pub fn limit(&self, tool: &str) -> Option<RateLimit> {
        self.windows.get(tool).map(|w| w.limit)
    }

    /// Admits a call of `tool`, or says how long until one would be admitted.
    pub fn admit(&self, tool: &str) -> Result<Admission<'_>, (RateLimit, Duration)> {
        let Some(window) = self.windows.get(tool) else { return Ok(Admission { window: None, at: None }) };
        let now = Instant::now();
        let mut admitted = window.admitted.lock().unwrap_or_else(|p| p.into_inner());
        while admitted.front().is_some_and(|t| now.duration_since(*t) >= window.limit.window) {
            admitted.pop_front();
        }
        if admitted.len() < window.limit.max_calls as usize {
            admitted.push_back(now);
            return Ok(Admission { window: Some(window), at: Some(now) });
        }
        let oldest = admitted.front().copied().unwrap_or(now);
        // (A window too long to add to an `Instant` means: retry after the whole window.)
        let retry = oldest
            .checked_add(window.limit.window)
            .map_or(window.limit.window, |free| free.saturating_duration_since(now));
        Err((window.limit, retry))
    }
}

impl Admission<'_> {
    /// Gives the budget back (the call did not run after all).
    pub fn refund(self) {
        if let (Some(window), Some(at)) = (self.window, self.at) {
            let mut admitted = window.admitted.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(i) = admitted.iter().rposition(|t| *t == at) {
                admitted.remove(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CallToolResult, Handler, ToolDef};
    use serde_json::json;

    fn limiter(max: u32, window: Duration) -> RateLimiter {
        let def = ToolDef::builder("t")
            .description("d")
            .input_schema(json!({"type": "object", "properties": {}}))
            .rate_limit(max, window)
            .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
            .build();
        RateLimiter::new(&Registry::builder().tool(def).build().expect("registry"), &HashMap::new())
    }

    #[test]
    fn exact_under_concurrency() {
        let limiter = limiter(10, Duration::from_secs(60));
        let admitted = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..125 {
                        if limiter.admit("t").is_ok() {
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
        let limiter = limiter(2, Duration::from_millis(200));
        let a = limiter.admit("t").expect("first");
        limiter.admit("t").expect("second");
        let (_, retry) = limiter.admit("t").expect_err("third");
        assert!(retry <= Duration::from_millis(200));
        a.refund();
        limiter.admit("t").expect("refunded budget");
        std::thread::sleep(Duration::from_millis(250));
        limiter.admit("t").expect("the window slid");
        assert!(limiter.admit("unlimited").is_ok());
    }

    #[test]
    fn an_endless_window_refuses_without_panicking() {
        let limiter = limiter(1, Duration::MAX);
        limiter.admit("t").expect("first");
        let (_, retry) = limiter.admit("t").expect_err("second");
        assert!(retry > Duration::from_secs(86_400 * 365));
    }
}
