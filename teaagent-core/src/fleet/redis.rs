//! The store in a Redis the replicas share (`fleet.rs`): Lua scripts for what must be atomic,
//! Redis's own clock for the windows, a connection made at the first use and remade by itself.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionManager;

use super::{
    Admit, LocalStore, Reserve, Store, StoreAnswer, StoreMetrics, StoreOp, StoreUnavailable, Ticket,
};
use crate::tool::RateLimit;

/// How the shared state is reached.
#[derive(Debug, Clone)]
pub struct RedisOptions {
    /// Prefix of every key (one per deployment sharing a Redis): `teaagent:` by default.
    pub prefix: String,
    /// The longest wait for a connection or an answer (default 500 ms).
    pub timeout: Duration,
    /// Rate-limit windows per principal (the authenticated caller) rather than per tool only.
    pub per_principal: bool,
    /// When Redis cannot be reached, rate limits fall back to this replica's own window instead
    /// of refusing the call.
    pub fallback_local: bool,
}

impl Default for RedisOptions {
    fn default() -> Self {
        Self {
            prefix: "teaagent:".into(),
            timeout: Duration::from_millis(500),
            per_principal: false,
            fallback_local: false,
        }
    }
}

/// A connection to the Redis that a fleet shares (reconnects by itself; connects lazily, so a
/// replica starts while Redis is down and serves what does not need it).
#[derive(Clone)]
pub struct RedisStore {
    inner: Arc<Inner>,
}

struct Inner {
    /// Made at the first use, inside the runtime that serves (the manager spawns its driver
    /// there; making it earlier, outside any runtime, would panic).
    connection: tokio::sync::OnceCell<ConnectionManager>,
    client: redis::Client,
    config: redis::aio::ConnectionManagerConfig,
    options: RedisOptions,
    /// Shown in logs (without a password).
    shown: String,
    admit: redis::Script,
    release: redis::Script,
    take_uses: redis::Script,
    /// This replica's own windows, for [`RedisOptions::fallback_local`].
    fallback: LocalStore,
    /// How the round trips went (`/metrics`).
    metrics: StoreMetrics,
}

/// Tickets of the fallback's admissions start with this (a Redis member never does: it starts
/// with Redis's time).
const FALLBACK_TICKET: &str = "local:";

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.inner.shown)
            .field("options", &self.inner.options)
            .finish()
    }
}

/// The sliding window: drop admissions older than the window, then admit if fewer than the
/// maximum remain (returning the admission's member, to refund it) or say how long until the
/// oldest leaves (microseconds). `TIME` is Redis's clock, the same for every replica.
const ADMIT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < max then
  local member = now .. ':' .. ARGV[3]
  redis.call('ZADD', KEYS[1], now, member)
  redis.call('PEXPIRE', KEYS[1], math.floor(window / 1000) + 1000)
  return {1, member}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, tostring(tonumber(oldest[2]) + window - now)}
";

/// Takes one use of every grant named (KEYS, each with its `uses=N` in ARGV, the count a key
/// starts from), all or none: 0 when all were taken, else the 1-based index of a grant with no
/// use left.
const TAKE_USES: &str = r"
for i, key in ipairs(KEYS) do
  local left = redis.call('GET', key)
  if not left then left = ARGV[i] end
  if tonumber(left) <= 0 then return i end
end
for i, key in ipairs(KEYS) do
  local left = redis.call('GET', key)
  if not left then left = ARGV[i] end
  redis.call('SET', key, tonumber(left) - 1)
end
return 0
";

/// Deletes a nonce only while it is reserved (a spent one stays, so the state is never good
/// again).
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == 'reserved' then
  return redis.call('DEL', KEYS[1])
end
return 0
";

impl RedisStore {
    /// A state in the Redis at `url` (`redis://[:password@]host:port/db`, or `rediss://` for TLS
    /// when built with it). Nothing is connected yet: the first use connects.
    pub fn new(url: &str, options: RedisOptions) -> Result<Self, String> {
        let client = redis::Client::open(url).map_err(|e| format!("invalid Redis URL: {e}"))?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.timeout))
            .set_response_timeout(Some(options.timeout))
            .set_number_of_retries(1)
            .set_max_delay(options.timeout);
        let shown = hide_password(url);
        Ok(Self {
            inner: Arc::new(Inner {
                connection: tokio::sync::OnceCell::new(),
                client,
                config,
                options,
                shown,
                admit: redis::Script::new(ADMIT),
                release: redis::Script::new(RELEASE),
                take_uses: redis::Script::new(TAKE_USES),
                fallback: LocalStore::new(),
                metrics: StoreMetrics::default(),
            }),
        })
    }

    /// The options.
    pub fn options(&self) -> &RedisOptions {
        &self.inner.options
    }

    /// The URL it connects to, as shown in logs and messages (any password hidden).
    pub fn address(&self) -> &str {
        &self.inner.shown
    }

    fn key(&self, kind: &str, name: &str) -> String {
        format!("{}{kind}:{name}", self.inner.options.prefix)
    }

    fn unavailable(&self, what: &str, e: impl std::fmt::Display) -> StoreUnavailable {
        tracing::warn!(redis = %self.inner.shown, "{what}: the shared state cannot be reached: {e}");
        StoreUnavailable(format!("{what}: {e}"))
    }

    /// Runs `f` on a connection, under the timeout; its latency and failure are counted under
    /// `op` ([`Store::metrics`]).
    async fn with<T>(
        &self,
        op: StoreOp,
        f: impl AsyncFnOnce(&mut ConnectionManager) -> redis::RedisResult<T>,
    ) -> Result<T, StoreUnavailable> {
        let started = std::time::Instant::now();
        let answer = self.round_trip(op, f).await;
        self.inner.metrics.record(op, started.elapsed(), answer.is_err());
        answer
    }

    async fn round_trip<T>(
        &self,
        op: StoreOp,
        f: impl AsyncFnOnce(&mut ConnectionManager) -> redis::RedisResult<T>,
    ) -> Result<T, StoreUnavailable> {
        let what = op.what();
        let made = self.inner.connection.get_or_try_init(|| async {
            ConnectionManager::new_lazy_with_config(self.inner.client.clone(), self.inner.config.clone())
        });
        let mut connection = match made.await {
            Ok(connection) => connection.clone(),
            Err(e) => return Err(self.unavailable(what, e)),
        };
        match tokio::time::timeout(self.inner.options.timeout, f(&mut connection)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.unavailable(what, e)),
            Err(_) => {
                Err(self.unavailable(what, format!("no answer within {:?}", self.inner.options.timeout)))
            }
        }
    }

    /// One admission to the window `name` (`max` calls in `window`).
    async fn admit_script(&self, name: &str, max: u32, window: Duration) -> Result<Admit, StoreUnavailable> {
        let key = self.key("rate", name);
        let unique = crate::digest::random_hex(8);
        let micros = u64::try_from(window.as_micros()).unwrap_or(u64::MAX / 2).max(1);
        let (admitted, value): (i64, String) = self
            .with(StoreOp::RateLimit, async |c| {
                self.inner.admit.key(&key).arg(max).arg(micros).arg(&unique).invoke_async(c).await
            })
            .await?;
        if admitted == 1 {
            return Ok(Admit::Admitted(Ticket(value)));
        }
        let micros: u64 = value.parse::<f64>().map_or(micros, |v| v.max(0.0) as u64);
        Ok(Admit::Full(Duration::from_micros(micros)))
    }

    /// Gives an admission back.
    async fn refund_member(&self, name: &str, member: &str) -> Result<(), StoreUnavailable> {
        let key = self.key("rate", name);
        self.with(StoreOp::Refund, async |c| redis::cmd("ZREM").arg(&key).arg(member).query_async(c).await)
            .await
    }

    /// Reserves a request state's nonce for `keep`; `false` when it is already reserved or spent.
    async fn set_reserved(&self, nonce: &str, keep: Duration) -> Result<bool, StoreUnavailable> {
        let key = self.key("nonce", nonce);
        let millis = u64::try_from(keep.as_millis()).unwrap_or(u64::MAX / 2).max(1);
        let set: Option<String> = self
            .with(StoreOp::RequestState, async |c| {
                redis::cmd("SET")
                    .arg(&key)
                    .arg("reserved")
                    .arg("NX")
                    .arg("PX")
                    .arg(millis)
                    .query_async(c)
                    .await
            })
            .await?;
        Ok(set.is_some())
    }

    /// Marks a reserved nonce spent (kept for `keep`).
    async fn set_spent(&self, nonce: &str, keep: Duration) -> Result<(), StoreUnavailable> {
        let key = self.key("nonce", nonce);
        let millis = u64::try_from(keep.as_millis()).unwrap_or(u64::MAX / 2).max(1);
        self.with(StoreOp::RequestState, async |c| {
            redis::cmd("SET").arg(&key).arg("spent").arg("PX").arg(millis).query_async(c).await
        })
        .await
    }

    /// Releases a nonce that is still only reserved.
    async fn release_reserved(&self, nonce: &str) -> Result<(), StoreUnavailable> {
        let key = self.key("nonce", nonce);
        let _: i64 = self
            .with(StoreOp::RequestState, async |c| self.inner.release.key(&key).invoke_async(c).await)
            .await?;
        Ok(())
    }

    /// Takes one use of each grant (`(text, uses=N)`), all or none: `Ok(None)` when taken, else
    /// `Ok(Some(i))` naming a grant with no use left. A grant's count is kept under the digest of
    /// its text, so every replica configured with the same grant counts the same uses.
    async fn take_uses_script(&self, grants: &[(&str, u64)]) -> Result<Option<usize>, StoreUnavailable> {
        let mut invocation = self.inner.take_uses.prepare_invoke();
        for (text, total) in grants {
            invocation.key(self.key("uses", &crate::digest::digest_of(&[text]))).arg(*total);
        }
        let found: i64 = self.with(StoreOp::GrantUses, async |c| invocation.invoke_async(c).await).await?;
        Ok(usize::try_from(found).ok().filter(|i| *i > 0).map(|i| i - 1))
    }

    /// Remembers an approval "for this session" (`key`: the caller and the call's tool and
    /// targets, as the policy forms it) for `ttl`, for every replica.
    async fn set_session_approved(&self, key: &str, ttl: Duration) -> Result<(), StoreUnavailable> {
        let key = self.key("session", &crate::digest::digest_of(&[key]));
        let seconds = ttl.as_secs().max(1);
        self.with(StoreOp::SessionApproval, async |c| {
            redis::cmd("SET").arg(&key).arg(1).arg("EX").arg(seconds).query_async(c).await
        })
        .await
    }

    async fn set_task(&self, id: &str, snapshot: &str, ttl: Duration) -> Result<(), StoreUnavailable> {
        let key = self.key("task", &crate::digest::digest_of(&[id]));
        let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        self.with(StoreOp::Task, async |c| {
            redis::cmd("SET").arg(&key).arg(snapshot).arg("PX").arg(ms).query_async(c).await
        })
        .await
    }

    async fn task_in_redis(&self, id: &str) -> Result<Option<String>, StoreUnavailable> {
        let key = self.key("task", &crate::digest::digest_of(&[id]));
        self.with(StoreOp::Task, async |c| redis::cmd("GET").arg(&key).query_async(c).await).await
    }

    /// Whether an approval "for this session" of `key` was given on any replica.
    async fn session_approved_in_redis(&self, key: &str) -> Result<bool, StoreUnavailable> {
        let key = self.key("session", &crate::digest::digest_of(&[key]));
        self.with(StoreOp::SessionApproval, async |c| redis::cmd("EXISTS").arg(&key).query_async(c).await)
            .await
    }

    /// Whether Redis answers `PING` now (for `/readyz` and start-up logs).
    pub async fn ping(&self) -> Result<(), StoreUnavailable> {
        let _: String = self.with(StoreOp::Ping, async |c| redis::cmd("PING").query_async(c).await).await?;
        Ok(())
    }

    /// Loads the store's Lua scripts into Redis now (they are otherwise loaded at their first
    /// use), checking that Redis knows each by the hash the store calls it by: a Redis that
    /// refuses scripts (`noscript` policies, a proxy without `EVALSHA`) fails here rather than
    /// on a call. Returns how many were loaded.
    pub async fn load_scripts(&self) -> Result<usize, StoreUnavailable> {
        let scripts =
            [(ADMIT, &self.inner.admit), (RELEASE, &self.inner.release), (TAKE_USES, &self.inner.take_uses)];
        for (code, script) in scripts {
            // A health check's round trip (`teaagent doctor` is its one caller).
            let hash: String = self
                .with(StoreOp::Ping, async |c| {
                    redis::cmd("SCRIPT").arg("LOAD").arg(code).query_async(c).await
                })
                .await?;
            if hash != script.get_hash() {
                return Err(StoreUnavailable(format!(
                    "Redis loaded a script as {hash}, not as {}",
                    script.get_hash()
                )));
            }
        }
        Ok(scripts.len())
    }

    /// Runs `f` on this store in the background (for what the server only tells the store: if
    /// Redis is gone, the key simply ages out).
    fn in_background<F>(&self, f: impl FnOnce(RedisStore) -> F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(f(self.clone()));
        }
    }
}

impl Store for RedisStore {
    fn admit<'a>(&'a self, window: &'a str, limit: RateLimit) -> StoreAnswer<'a, Admit> {
        Box::pin(async move {
            match self.admit_script(window, limit.max_calls, limit.window).await {
                Err(e) if self.inner.options.fallback_local => {
                    tracing::warn!(
                        window,
                        "rate limit: {e}; this replica's own window decides (fallback_local)"
                    );
                    Ok(match self.inner.fallback.admit_now(window, limit) {
                        Admit::Admitted(Ticket(n)) => {
                            Admit::Admitted(Ticket(format!("{FALLBACK_TICKET}{n}")))
                        }
                        full => full,
                    })
                }
                answer => answer,
            }
        })
    }

    fn refund(&self, window: &str, ticket: Ticket) {
        if let Some(n) = ticket.0.strip_prefix(FALLBACK_TICKET) {
            self.inner.fallback.refund(window, Ticket(n.to_owned()));
            return;
        }
        // The caller is refusing the call anyway. A refund that cannot reach Redis leaves the
        // admission to age out of the window (fail closed).
        let window = window.to_owned();
        self.in_background(move |store| async move {
            let _ = store.refund_member(&window, &ticket.0).await;
        });
    }

    fn reserve<'a>(&'a self, nonce: &'a str, keep: Duration) -> StoreAnswer<'a, Reserve> {
        Box::pin(async move {
            Ok(match self.set_reserved(nonce, keep).await? {
                true => Reserve::Reserved,
                false => Reserve::Taken,
            })
        })
    }

    fn spend(&self, nonce: &str, keep: Duration) {
        // Reserved already (no other replica can take it); marking it spent keeps it from being
        // released. If Redis is gone, the reservation simply outlives the state.
        let nonce = nonce.to_owned();
        self.in_background(move |store| async move {
            let _ = store.set_spent(&nonce, keep).await;
        });
    }

    fn release(&self, nonce: &str) {
        let nonce = nonce.to_owned();
        self.in_background(move |store| async move {
            let _ = store.release_reserved(&nonce).await;
        });
    }

    fn take_uses<'a>(&'a self, grants: &'a [(&'a str, u64)]) -> StoreAnswer<'a, Option<usize>> {
        Box::pin(self.take_uses_script(grants))
    }

    fn approve_session(&self, key: &str, ttl: Duration) {
        let key = key.to_owned();
        self.in_background(move |store| async move {
            let _ = store.set_session_approved(&key, ttl).await;
        });
    }

    fn session_approved<'a>(&'a self, key: &'a str) -> StoreAnswer<'a, bool> {
        Box::pin(self.session_approved_in_redis(key))
    }

    fn publish_task(&self, id: &str, snapshot: String, ttl: Duration) {
        let id = id.to_owned();
        self.in_background(move |store| async move {
            let _ = store.set_task(&id, &snapshot, ttl).await;
        });
    }

    fn publish_task_now<'a>(&'a self, id: &'a str, snapshot: String, ttl: Duration) -> StoreAnswer<'a, ()> {
        Box::pin(async move { self.set_task(id, &snapshot, ttl).await })
    }

    fn published_task<'a>(&'a self, id: &'a str) -> StoreAnswer<'a, Option<String>> {
        Box::pin(self.task_in_redis(id))
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn windows_per_principal(&self) -> bool {
        self.inner.options.per_principal
    }

    fn metrics(&self) -> Option<&StoreMetrics> {
        Some(&self.inner.metrics)
    }
}

/// `url` with any password replaced by `***`.
fn hide_password(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_made_outside_any_runtime_and_fails_closed_without_redis() {
        // Made before the server's runtime exists, as `teaagent mcp serve` does.
        let state = RedisStore::new("redis://127.0.0.1:1", RedisOptions::default()).expect("made");
        assert!(RedisStore::new("http://x", RedisOptions::default()).is_err());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let limit = RateLimit { max_calls: 1, window: Duration::from_secs(1) };
        let refused = runtime.block_on(state.admit("t", limit));
        assert!(matches!(refused, Err(StoreUnavailable(_))), "nobody listens on port 1");
    }

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(hide_password("redis://:s3cret@db:6379/0"), "redis://:***@db:6379/0");
        assert_eq!(hide_password("rediss://me:s3cret@db"), "rediss://me:***@db");
        assert_eq!(hide_password("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
