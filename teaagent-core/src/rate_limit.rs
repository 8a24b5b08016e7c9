//! Per-tool rate limits: a sliding window admitting at most `max_calls` calls in any `window`,
//! kept by the server's store (`crate::fleet`): exact however many calls arrive at once, in this
//! process or, for a fleet, across every replica. An admission can be refunded: a call that a
//! later step refuses (the workspace lock) leaves the budget as it found it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::fleet::{Admit, Store, Ticket};
use crate::registry::Registry;
use crate::tool::RateLimit;

/// The rate limits of a registry's tools.
#[derive(Debug)]
pub struct RateLimiter {
    limits: HashMap<String, RateLimit>,
    store: Arc<dyn Store>,
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

/// A call admitted by its tool's rate limit (by nothing, for a tool without one): dropped, it
/// stays counted (the call ran); [`Admission::refund`] gives it back.
#[derive(Debug)]
pub struct Admission {
    taken: Option<(Arc<dyn Store>, String, Ticket)>,
}

impl RateLimiter {
    /// The limits declared by the tools, with `overrides` (by tool name) taking precedence, kept
    /// in `store`.
    pub fn new(registry: &Registry, overrides: &HashMap<String, RateLimit>, store: Arc<dyn Store>) -> Self {
        // (Admission and lookup cost nothing for tools without a limit.)
        let limits = registry
            .iter()
            .filter_map(|tool| {
                let limit = overrides.get(tool.name()).copied().or(tool.rate_limit())?;
                Some((tool.name().to_owned(), limit))
            })
            .collect();
        Self { limits, store }
    }

    /// Whether the windows are the fleet's (so an admission is a round trip).
    pub fn is_shared(&self) -> bool {
        self.store.is_shared()
    }

    /// The effective limit of a tool.
    pub fn limit(&self, tool: &str) -> Option<RateLimit> {
        self.limits.get(tool).copied()
    }

    /// Admits a call of `tool` (`principal` names the caller, for a store whose windows are per
    /// principal), or says why not.
    pub async fn admit(&self, tool: &str, principal: Option<&str>) -> Result<Admission, RateRefusal> {
        let Some(limit) = self.limits.get(tool).copied() else { return Ok(Admission { taken: None }) };
        let window = match principal.filter(|_| self.store.windows_per_principal()) {
            Some(principal) => format!("{tool}:{principal}"),
            None => tool.to_owned(),
        };
        match self.store.admit(&window, limit).await {
            Ok(Admit::Admitted(ticket)) => {
                Ok(Admission { taken: Some((Arc::clone(&self.store), window, ticket)) })
            }
            Ok(Admit::Full(retry)) => Err(RateRefusal::Limited(limit, retry)),
            Err(e) => Err(RateRefusal::Unavailable(e.0)),
        }
    }

    /// Whether a call of `tool` would be admitted now, taking nothing; always yes with a shared
    /// store (a look there is two round trips, and admission decides anyway).
    pub async fn look(&self, tool: &str) -> Result<(), RateRefusal> {
        if self.is_shared() {
            return Ok(());
        }
        self.admit(tool, None).await.map(Admission::refund)
    }
}

impl Admission {
    /// Gives the budget back (the call did not run after all).
    pub fn refund(self) {
        if let Some((store, window, ticket)) = self.taken {
            store.refund(&window, ticket);
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
        let registry = Registry::builder().tool(def).build().expect("registry");
        RateLimiter::new(&registry, &HashMap::new(), Arc::new(crate::fleet::LocalStore::new()))
    }

    fn block_on<T>(f: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().build().expect("runtime").block_on(f)
    }

    #[test]
    fn admissions_refunds_and_looks() {
        let limiter = limiter(2, Duration::from_secs(60));
        block_on(async {
            let first = limiter.admit("t", None).await.expect("first");
            limiter.look("t").await.expect("a look at a window with room");
            limiter.admit("t", None).await.expect("second: the look took nothing");
            let refused = limiter.admit("t", None).await.expect_err("third");
            assert!(
                matches!(refused, RateRefusal::Limited(limit, retry) if limit.max_calls == 2 && retry <= Duration::from_secs(60))
            );
            assert!(limiter.look("t").await.is_err());
            first.refund();
            limiter.admit("t", None).await.expect("refunded budget");
            for _ in 0..10 {
                limiter.admit("unlimited", None).await.expect("no limit").refund();
            }
        });
    }

    #[test]
    fn overrides_take_precedence() {
        let registry = limiter(2, Duration::from_secs(60));
        let overrides =
            HashMap::from([("t".to_owned(), RateLimit { max_calls: 1, window: Duration::from_secs(1) })]);
        let def = ToolDef::builder("t")
            .description("d")
            .input_schema(json!({"type": "object", "properties": {}}))
            .rate_limit(2, Duration::from_secs(60))
            .handler(Handler::new(|_, _| async { Ok(CallToolResult::text("")) }))
            .build();
        let tools = Registry::builder().tool(def).build().expect("registry");
        let limiter = RateLimiter::new(&tools, &overrides, Arc::new(crate::fleet::LocalStore::new()));
        assert_eq!(limiter.limit("t").map(|l| l.max_calls), Some(1));
        assert_eq!(registry.limit("t").map(|l| l.max_calls), Some(2));
        assert!(!limiter.is_shared());
    }
}
