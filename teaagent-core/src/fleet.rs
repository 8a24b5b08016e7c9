//! State that the replicas of a fleet share: rate-limit windows and the single use of
//! request states, kept in Redis so that any replica behind a load balancer can take any request.
//!
//! By default everything stays in the process ([`crate::rate_limit::RateLimiter`]'s windows,
//! the request states' nonces). A server given a [`RedisStore`]
//! ([`Server::shared_state`](crate::Server::shared_state), `[state] redis_url` in the user's
//! configuration, or `TEAAGENT_REDIS_URL`) moves them to Redis:
//!
//! - **Rate limits**: the same exact sliding window, evaluated atomically by one Lua script per
//!   admission, with Redis's own `TIME` (replicas' clocks do not matter): one sorted set per tool
//!   (and per principal, with [`RedisOptions::per_principal`]), one round trip per admitted call.
//!   A refund removes the admission again.
//! - **Request states**: a state's nonce is reserved with `SET NX` (with the state's lifetime),
//!   marked spent when the call runs, and released (compare-and-delete) when the call is refused
//!   for another reason, so a retry that lands on another replica is accepted once and a replay on
//!   any replica is refused. The replicas must share the key that seals states
//!   (`TEAAGENT_REQUEST_STATE_KEY`).
//!
//! When Redis cannot be reached (connect or answer within [`RedisOptions::timeout`]), a call that
//! needs it fails closed: `-32000` with `reason: "state_unavailable"` (and a retry with a state is
//! refused as `-32602`), logged each time. With [`RedisOptions::fallback_local`] the replica uses
//! its own window instead (then N replicas admit up to N × `max_calls`), also logged.
//!
//! Not shared: the workspace lock and the file tools are per machine (a fleet serves framework
//! tools, not one workspace).

use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionManager;

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

/// Why the shared state gave no answer.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the shared state (Redis) cannot be reached: {0}")]
pub struct StoreUnavailable(pub String);

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
}

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

/// What one admission attempt found.
pub(crate) enum Window {
    /// Admitted; this member of the window refunds it.
    Admitted(String),
    /// Full: the oldest admission leaves after this.
    Full(Duration),
}

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
            }),
        })
    }

    /// The options.
    pub fn options(&self) -> &RedisOptions {
        &self.inner.options
    }

    fn key(&self, kind: &str, name: &str) -> String {
        format!("{}{kind}:{name}", self.inner.options.prefix)
    }

    fn unavailable(&self, what: &str, e: impl std::fmt::Display) -> StoreUnavailable {
        tracing::warn!(redis = %self.inner.shown, "{what}: the shared state cannot be reached: {e}");
        StoreUnavailable(format!("{what}: {e}"))
    }

    /// Runs `f` on a connection, under the timeout.
    async fn with<T>(
        &self,
        what: &str,
        f: impl AsyncFnOnce(&mut ConnectionManager) -> redis::RedisResult<T>,
    ) -> Result<T, StoreUnavailable> {
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
    pub(crate) async fn admit(
        &self,
        name: &str,
        max: u32,
        window: Duration,
    ) -> Result<Window, StoreUnavailable> {
        let key = self.key("rate", name);
        let unique = crate::digest::random_hex(8);
        let micros = u64::try_from(window.as_micros()).unwrap_or(u64::MAX / 2).max(1);
        let (admitted, value): (i64, String) = self
            .with("rate limit", async |c| {
                self.inner.admit.key(&key).arg(max).arg(micros).arg(&unique).invoke_async(c).await
            })
            .await?;
        if admitted == 1 {
            return Ok(Window::Admitted(value));
        }
        let micros: u64 = value.parse::<f64>().map_or(micros, |v| v.max(0.0) as u64);
        Ok(Window::Full(Duration::from_micros(micros)))
    }

    /// Gives an admission back.
    pub(crate) async fn refund(&self, name: &str, member: &str) -> Result<(), StoreUnavailable> {
        let key = self.key("rate", name);
        self.with("rate-limit refund", async |c| {
            redis::cmd("ZREM").arg(&key).arg(member).query_async(c).await
        })
        .await
    }

    /// Reserves a request state's nonce for `keep`; `false` when it is already reserved or spent.
    pub(crate) async fn reserve(&self, nonce: &str, keep: Duration) -> Result<bool, StoreUnavailable> {
        let key = self.key("nonce", nonce);
        let millis = u64::try_from(keep.as_millis()).unwrap_or(u64::MAX / 2).max(1);
        let set: Option<String> = self
            .with("request state", async |c| {
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
    pub(crate) async fn spend(&self, nonce: &str, keep: Duration) -> Result<(), StoreUnavailable> {
        let key = self.key("nonce", nonce);
        let millis = u64::try_from(keep.as_millis()).unwrap_or(u64::MAX / 2).max(1);
        self.with("request state", async |c| {
            redis::cmd("SET").arg(&key).arg("spent").arg("PX").arg(millis).query_async(c).await
        })
        .await
    }

    /// Releases a nonce that is still only reserved.
    pub(crate) async fn release(&self, nonce: &str) -> Result<(), StoreUnavailable> {
        let key = self.key("nonce", nonce);
        let _: i64 =
            self.with("request state", async |c| self.inner.release.key(&key).invoke_async(c).await).await?;
        Ok(())
    }

    /// Takes one use of each grant (`(text, uses=N)`), all or none: `Ok(None)` when taken, else
    /// `Ok(Some(i))` naming a grant with no use left. A grant's count is kept under the digest of
    /// its text, so every replica configured with the same grant counts the same uses.
    pub(crate) async fn take_uses(&self, grants: &[(&str, u64)]) -> Result<Option<usize>, StoreUnavailable> {
        let mut invocation = self.inner.take_uses.prepare_invoke();
        for (text, total) in grants {
            invocation.key(self.key("uses", &crate::digest::digest_of(&[text]))).arg(*total);
        }
        let found: i64 = self.with("grant uses", async |c| invocation.invoke_async(c).await).await?;
        Ok(usize::try_from(found).ok().filter(|i| *i > 0).map(|i| i - 1))
    }

    /// Remembers an approval "for this session" (`key`: the caller and the call's tool and
    /// targets, as the policy forms it) for `ttl`, for every replica.
    pub(crate) async fn approve_session(&self, key: &str, ttl: Duration) -> Result<(), StoreUnavailable> {
        let key = self.key("session", &crate::digest::digest_of(&[key]));
        let seconds = ttl.as_secs().max(1);
        self.with("session approval", async |c| {
            redis::cmd("SET").arg(&key).arg(1).arg("EX").arg(seconds).query_async(c).await
        })
        .await
    }

    /// Whether an approval "for this session" of `key` was given on any replica.
    pub(crate) async fn session_approved(&self, key: &str) -> Result<bool, StoreUnavailable> {
        let key = self.key("session", &crate::digest::digest_of(&[key]));
        self.with("session approval", async |c| redis::cmd("EXISTS").arg(&key).query_async(c).await).await
    }

    /// Whether Redis answers `PING` now (for `/readyz` and start-up logs).
    pub async fn ping(&self) -> Result<(), StoreUnavailable> {
        let _: String = self.with("ping", async |c| redis::cmd("PING").query_async(c).await).await?;
        Ok(())
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
        let refused = runtime.block_on(state.admit("t", 1, Duration::from_secs(1)));
        assert!(matches!(refused, Err(StoreUnavailable(_))), "nobody listens on port 1");
    }

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(hide_password("redis://:s3cret@db:6379/0"), "redis://:***@db:6379/0");
        assert_eq!(hide_password("rediss://me:s3cret@db"), "rediss://me:***@db");
        assert_eq!(hide_password("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
