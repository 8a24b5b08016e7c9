//! The store of what the replicas of a fleet must agree on: rate-limit windows, the single use of
//! request states, counted grants' uses, "for this session" approvals and tasks' snapshots.
//!
//! Every server has one [`Store`], given to the rate limiter, the policy and the request states
//! when the server builds them. By default it is a [`LocalStore`]: all of it in this process. A
//! server given a `RedisStore` (feature `redis`; [`Server::shared_state`](crate::Server::shared_state),
//! `[state] redis_url` in the user's configuration, or `TEAAGENT_REDIS_URL`) keeps it in Redis,
//! so that any replica behind a load balancer can take any request:
//!
//! - **Rate limits**: the same exact sliding window, evaluated atomically by one Lua script per
//!   admission, with Redis's own `TIME` (replicas' clocks do not matter): one sorted set per tool
//!   (and per principal, with `RedisOptions::per_principal`), one round trip per admitted call.
//!   A refund removes the admission again.
//! - **Tasks**: the replica that runs a task publishes its snapshot (principal, status, result)
//!   under the digest of its id with `SET PX` (its time to live) when it is created and when it
//!   ends; another replica answers `tasks/get` from it ([`Store::publish_task`]).
//! - **Request states**: a state's nonce is reserved with `SET NX` (with the state's lifetime),
//!   marked spent when the call runs, and released (compare-and-delete) when the call is refused
//!   for another reason, so a retry that lands on another replica is accepted once and a replay on
//!   any replica is refused. The replicas must share the key that seals states
//!   (`TEAAGENT_REQUEST_STATE_KEY`).
//! - **Grant uses** are counted under the digest of the grant's text, all or none in one script;
//!   **"for this session" answers** are kept for [`FLEET_SESSION_APPROVAL`].
//!
//! When Redis cannot be reached (connect or answer within `RedisOptions::timeout`), a call that
//! needs it fails closed: `-32000` with `reason: "state_unavailable"` (and a retry with a state is
//! refused as `-32602`), logged each time. With `RedisOptions::fallback_local` the replica uses
//! its own window instead (then N replicas admit up to N × `max_calls`), also logged.
//!
//! Not shared: the workspace lock and the file tools are per machine (a fleet serves framework
//! tools, not one workspace).
//!
//! Another store (another database) implements [`Store`]; its answers for one key must be
//! atomic across every replica that shares it.

mod local;
#[cfg(feature = "redis")]
mod redis;
mod store_metrics;

use std::fmt;
use std::time::Duration;

pub use local::{LocalStore, MAX_NONCES};
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use redis::{RedisOptions, RedisStore};
pub use store_metrics::{StoreMetrics, StoreOp};

use crate::task::BoxFuture;
use crate::tool::RateLimit;

/// How long a "for this session" answer is remembered by a shared store (a session there has no
/// end the replicas could see).
pub const FLEET_SESSION_APPROVAL: Duration = Duration::from_secs(12 * 3600);

/// What a [`Store`] answers: the value, or why the store could not be reached.
pub type StoreAnswer<'a, T> = BoxFuture<'a, Result<T, StoreUnavailable>>;

/// Why the store gave no answer.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the shared state (Redis) cannot be reached: {0}")]
pub struct StoreUnavailable(pub String);

/// The admission of one call to a rate-limit window, to refund it by ([`Store::refund`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket(pub String);

/// What one admission attempt found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admit {
    /// Admitted; this ticket refunds it.
    Admitted(Ticket),
    /// Full: the oldest admission leaves the window after this.
    Full(Duration),
}

/// What reserving a request state's nonce found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    /// Reserved for this call.
    Reserved,
    /// Reserved by another call, or spent: a replay.
    Taken,
    /// The store remembers too many nonces to take another (it fails closed rather than
    /// forget one it has seen).
    Full,
}

/// The state replicas share (module docs). Answers that the server waits for are futures;
/// what it only tells the store (spend, release, refund, approve) returns at once, and a store
/// that needs a round trip for it does it in the background.
pub trait Store: Send + Sync + fmt::Debug + 'static {
    /// Admits one call to the sliding window `window` (`limit.max_calls` in `limit.window`).
    fn admit<'a>(&'a self, window: &'a str, limit: RateLimit) -> StoreAnswer<'a, Admit>;

    /// Gives an admission back (the call did not run).
    fn refund(&self, window: &str, ticket: Ticket);

    /// Reserves a request state's nonce, remembered for `keep`.
    fn reserve<'a>(&'a self, nonce: &'a str, keep: Duration) -> StoreAnswer<'a, Reserve>;

    /// Marks a reserved nonce spent (remembered for `keep`): the state is never good again.
    fn spend(&self, nonce: &str, keep: Duration);

    /// Forgets a nonce that is still only reserved (the call was refused for another reason, so
    /// the state may be used again until it expires).
    fn release(&self, nonce: &str);

    /// Takes one use of each grant (its text, and the `uses=N` it starts from), all or none:
    /// `None` when taken, else the index of a grant with no use left.
    fn take_uses<'a>(&'a self, grants: &'a [(&'a str, u64)]) -> StoreAnswer<'a, Option<usize>>;

    /// Tells the other replicas of an approval "for this session" of `key` (the caller and the
    /// call's tool and targets, as the policy forms it), for `ttl`. (The policy remembers the
    /// answers this process was given itself.)
    fn approve_session(&self, key: &str, ttl: Duration);

    /// Whether another replica was given an approval "for this session" of `key`.
    fn session_approved<'a>(&'a self, key: &'a str) -> StoreAnswer<'a, bool>;

    /// Publishes a task's snapshot (JSON text: its principal and its `tasks/get` answer) for the
    /// other replicas, kept for `ttl`. A task runs in the replica that created it; the others
    /// answer `tasks/get` from its latest snapshot. A store with no other replica keeps nothing.
    fn publish_task(&self, _id: &str, _snapshot: String, _ttl: Duration) {}

    /// [`Store::publish_task`], done when the answer is: for a task just created, whose handle
    /// the client may take to another replica at once.
    fn publish_task_now<'a>(&'a self, id: &'a str, snapshot: String, ttl: Duration) -> StoreAnswer<'a, ()> {
        self.publish_task(id, snapshot, ttl);
        Box::pin(std::future::ready(Ok(())))
    }

    /// The snapshot another replica published of task `id`, if any.
    fn published_task<'a>(&'a self, _id: &'a str) -> StoreAnswer<'a, Option<String>> {
        Box::pin(std::future::ready(Ok(None)))
    }

    /// Whether each answer is a round trip to another process (so the server does not ask for
    /// one it does not need, such as a look at a window before a question).
    fn is_shared(&self) -> bool;

    /// Whether rate-limit windows are per principal (the authenticated caller) rather than per
    /// tool only.
    fn windows_per_principal(&self) -> bool {
        false
    }

    /// How the store's round trips went (latency and failures per kind of operation), for
    /// `/metrics`; `None` for a store that makes none (in this process).
    fn metrics(&self) -> Option<&StoreMetrics> {
        None
    }
}
