//! Per-tool rate limits: a sliding window admitting at most `max_calls` calls in any
//! `window`. Each tool's window is a queue of admission times under a mutex, so the count is
//! exact however many calls arrive at once. An admission can be refunded: a call that a later
//! step refuses (the workspace lock) leaves the budget as it found it.
//!
//! With a fleet's shared state (feature `redis`, `teaagent_core::fleet`) the windows live in Redis
//! instead: [`RateLimiter::admit_shared`] admits through one atomic script, and a refund removes
//! that admission there.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::registry::Registry;
use crate::tool::RateLimit;

/// The rate limits of a registry's tools.
#[derive(Debug, Default)]
pub struct RateLimiter {
    windows: HashMap<String, Window>,
    /// The fleet's windows, when the server shares its state.
    #[cfg(feature = "redis")]
    shared: Option<crate::fleet::RedisStore>,
}

/// Why a call was not admitted.
#[derive(Debug, Clone)]
pub enum RateRefusal {
    /// The window is full: the limit, and how long until a call would be admitted.
    Limited(RateLimit, Duration),
    /// The fleet's shared state cannot be reached (and no fallback to this replica's window is
    /// configured).
    Unavailable(String),
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
    /// Admitted by the shared window: the state, the window's name and the admission's member.
    #[cfg(feature = "redis")]
    shared: Option<(crate::fleet::RedisStore, String, String)>,
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
        Self {
            windows,
            #[cfg(feature = "redis")]
            shared: None,
        }
    }

    /// Keeps the windows in the fleet's shared state.
    #[cfg(feature = "redis")]
    pub fn shared(mut self, state: crate::fleet::RedisStore) -> Self {
        self.shared = Some(state);
        self
    }

    /// Whether the windows are the fleet's (so an admission is a round trip to Redis).
    pub fn is_shared(&self) -> bool {
        #[cfg(feature = "redis")]
        return self.shared.is_some();
        #[cfg(not(feature = "redis"))]
        false
    }

    /// Admits a call of `tool` by the fleet's shared window when there is one (`principal`
    /// names the caller, for windows per principal), else by this process's
    /// ([`RateLimiter::admit`]).
    pub async fn admit_shared(
        &self,
        tool: &str,
        principal: Option<&str>,
    ) -> Result<Admission<'_>, RateRefusal> {
        #[cfg(feature = "redis")]
        if let (Some(state), Some(window)) = (&self.shared, self.windows.get(tool)) {
            let name = match principal.filter(|_| state.options().per_principal) {
                Some(principal) => format!("{tool}:{principal}"),
                None => tool.to_owned(),
            };
            return match state.admit(&name, window.limit.max_calls, window.limit.window).await {
                Ok(crate::fleet::Window::Admitted(member)) => {
                    Ok(Admission { window: None, at: None, shared: Some((state.clone(), name, member)) })
                }
                Ok(crate::fleet::Window::Full(retry)) => Err(RateRefusal::Limited(window.limit, retry)),
                Err(e) if state.options().fallback_local => {
                    tracing::warn!(
                        tool,
                        "rate limit: {e}; this replica's own window decides (fallback_local)"
                    );
                    self.admit(tool).map_err(|(limit, retry)| RateRefusal::Limited(limit, retry))
                }
                Err(e) => Err(RateRefusal::Unavailable(e.0)),
            };
        }
        let _ = principal;
        self.admit(tool).map_err(|(limit, retry)| RateRefusal::Limited(limit, retry))
    }

    /// The effective limit of a tool.
    pub fn limit(&self, tool: &str) -> Option<RateLimit> {
        self.windows.get(tool).map(|w| w.limit)
    }

    /// Admits a call of `tool`, or says how long until one would be admitted.
    pub fn admit(&self, tool: &str) -> Result<Admission<'_>, (RateLimit, Duration)> {
        let Some(window) = self.windows.get(tool) else {
            return Ok(Admission {
                window: None,
                at: None,
                #[cfg(feature = "redis")]
                shared: None,
            });
        };
        let now = Instant::now();
        let mut admitted = window.admitted.lock().unwrap_or_else(|p| p.into_inner());
        while admitted.front().is_some_and(|t| now.duration_since(*t) >= window.limit.window) {
            admitted.pop_front();
        }
        if admitted.len() < window.limit.max_calls as usize {
            admitted.push_back(now);
            return Ok(Admission {
                window: Some(window),
                at: Some(now),
                #[cfg(feature = "redis")]
                shared: None,
            });
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
        #[cfg(feature = "redis")]
        if let Some((state, name, member)) = self.shared {
            // In the background: the caller is refusing the call anyway. A refund that cannot
            // reach Redis leaves the admission to age out of the window (fail closed).
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = state.refund(&name, &member).await;
                });
            }
            return;
        }
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
