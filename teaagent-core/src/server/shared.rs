//! What every request task of a server shares ([`Shared`]): the registry, the policy, the limits
//! and the turns to run, the peer, the calls in flight.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::announcement::Announcement;
use super::{ResourceProvider, Server, ServerConfig};
use crate::error::{CallerShare, Error, Failure};
use crate::jsonrpc::IdKey;
use crate::mcp::modern::DiscoverResult;
use crate::mcp::{ProtocolVersion, ServerCapabilities};
use crate::registry::Registry;
use crate::session::peer::Peer;
use crate::task::TaskTracker;

/// What every request task shares.
pub(crate) struct Shared {
    pub(crate) registry: Registry,
    pub(crate) config: ServerConfig,
    pub(crate) resources: Option<Arc<dyn ResourceProvider>>,
    /// The prompts ([`Server::prompts`]).
    pub(crate) prompts: Arc<crate::prompt::Prompts>,
    /// The skills ([`Server::skills`]).
    pub(crate) skills: Arc<crate::skill::Skills>,
    pub(crate) peer: Peer,
    pub(crate) workspace: Option<crate::workspace::Workspace>,
    pub(crate) lock: Option<Arc<crate::workspace::lock::WorkspaceLock>>,
    pub(crate) policy: crate::policy::Policy,
    pub(crate) limiter: crate::rate_limit::RateLimiter,
    /// The store of what replicas share (also the policy's and the limiter's): `/metrics` reads
    /// its round trips, tasks' snapshots are published there.
    pub(crate) store: Arc<dyn crate::fleet::Store>,
    /// What the server counts (`/metrics`).
    pub(crate) metrics: super::metrics::ServerMetrics,
    /// The tools' shared state ([`Server::state`]), handed to every call's context.
    pub(crate) states: crate::tool::state::States,
    /// Async tools caught blocking the thread, whose calls run isolated ([`super::watch`]).
    pub(crate) blockers: super::watch::Blockers,
    /// What the server announces ([`Server::announcement`], taken once: the parts it is made
    /// of do not change while the server runs).
    pub(crate) announcement: Announcement,
    /// The announced `serverInfo` as JSON, for modern results.
    pub(super) info_value: serde_json::Value,
    /// The `_meta` of a modern result that carries nothing else: `{"…/serverInfo": …}`, written
    /// once.
    pub(super) info_meta: Box<str>,
    pub(super) in_flight: Mutex<HashMap<IdKey, InFlight>>,
    /// Turns to run a tool call or a resource read ([`ServerConfig::max_in_flight`]).
    pub(super) run_permits: Arc<Semaphore>,
    pub(super) waiting: AtomicUsize,
    pub(crate) tracker: TaskTracker,
    /// Cancelled when the server stops; every call's token is a child of it.
    pub(super) stopping: CancellationToken,
    /// Cancelled when the input ends: open `subscriptions/listen` streams end then (gracefully,
    /// with their result) instead of holding the drain for its grace period.
    pub(crate) input_closed: CancellationToken,
    /// Open `subscriptions/listen` streams ([`crate::session::fairness::MAX_LISTENERS`]).
    pub(crate) listeners: AtomicUsize,
    /// Calls in progress per caller ([`super::CallerLimits::calls`]).
    pub(crate) calls_per_caller: Arc<crate::session::fairness::Shares>,
    /// `subscriptions/listen` streams per caller ([`super::CallerLimits::subscriptions`]).
    pub(crate) listeners_per_caller: Arc<crate::session::fairness::Shares>,
    /// Tools whose availability changes while the server runs ([`Server::availability`]).
    pub(crate) availability: Option<Arc<dyn super::ToolAvailability>>,
    /// The tasks (`server/tasks.rs`).
    pub(crate) tasks: super::tasks::TaskStore,
}

/// A request in progress: how to cancel it, and to abort its task.
pub(super) struct InFlight {
    pub(super) cancel: CancellationToken,
    pub(super) abort: Option<AbortHandle>,
}

impl Shared {
    /// Everything a call needs, from a server and the peer its answers go to.
    pub(crate) fn new(server: Server, peer: Peer) -> Self {
        let mut announcement = server.announcement();
        let overrides = server
            .config
            .tool_overrides
            .iter()
            .filter_map(|(name, o)| Some((name.clone(), o.rate_limit?)))
            .collect();
        let registry = server.registry.into_registry();
        announcement.tasks =
            registry.iter().any(|t| t.task_support() != crate::mcp::tasks::TaskSupport::Forbidden);
        let limiter = crate::rate_limit::RateLimiter::new(&registry, &overrides, Arc::clone(&server.store));
        let metrics = super::metrics::ServerMetrics::new(&registry);
        Shared {
            store: Arc::clone(&server.store),
            metrics,
            run_permits: Arc::new(Semaphore::new(server.config.max_in_flight)),
            policy: server
                .policy
                .with_store(server.store)
                .questions_per_caller(server.config.per_caller.questions),
            limiter,
            blockers: super::watch::Blockers::new(server.config.slow_poll),
            registry,
            config: server.config,
            resources: server.resources,
            prompts: server.prompts,
            skills: server.skills,
            peer,
            workspace: server.workspace,
            lock: server.lock,
            info_value: serde_json::to_value(&announcement.server_info).unwrap_or_default(),
            info_meta: serde_json::to_string(&std::collections::BTreeMap::from([(
                crate::mcp::modern::META_SERVER_INFO,
                &announcement.server_info,
            )]))
            .unwrap_or_default()
            .into_boxed_str(),
            announcement,
            states: server.states,
            in_flight: Mutex::new(HashMap::new()),
            waiting: AtomicUsize::new(0),
            tracker: TaskTracker::new(),
            stopping: CancellationToken::new(),
            input_closed: CancellationToken::new(),
            listeners: AtomicUsize::new(0),
            calls_per_caller: crate::session::fairness::Shares::new(CallerShare::Calls),
            listeners_per_caller: crate::session::fairness::Shares::new(CallerShare::Subscriptions),
            availability: server.availability,
            tasks: super::tasks::TaskStore::new(super::tasks::TaskLimits::default()),
        }
    }

    /// What the server implements, the same in both eras.
    fn capabilities(&self) -> ServerCapabilities {
        super::era::capabilities(&self.announcement)
    }

    /// `server/discover` (modern era): the versions a request may name, the capabilities, the
    /// instructions. The server's name and version go in the result's `_meta`, as on every
    /// modern result. Only modern versions are listed: the legacy ones are negotiated by
    /// `initialize` in a process of their own.
    pub(crate) fn discover(&self) -> DiscoverResult {
        DiscoverResult {
            supported_versions: ProtocolVersion::MODERN.iter().map(|v| v.as_str()).collect(),
            capabilities: {
                let mut capabilities = self.capabilities();
                let mut extensions = crate::mcp::JsonObject::new();
                if self.announcement.skills {
                    extensions.insert(
                        crate::mcp::skills::SKILLS_EXTENSION.to_owned(),
                        serde_json::json!({ "directoryRead": true }),
                    );
                }
                // Tasks are declared when a tool may run as one.
                if self.serves_tasks() {
                    extensions.insert(crate::mcp::tasks::TASKS_EXTENSION.to_owned(), serde_json::json!({}));
                }
                if !extensions.is_empty() {
                    capabilities.extensions = Some(extensions);
                }
                capabilities
            },
            instructions: self.config.instructions.clone(),
        }
    }

    /// Whether a tool may run as a task (`#[tool(task)]`): the tasks extension is declared, and
    /// its methods served, exactly then.
    pub(crate) fn serves_tasks(&self) -> bool {
        self.announcement.tasks
    }

    /// `{"name": "teaagent", "version": …}` (or the author's), as the JSON every modern result
    /// carries in `_meta` (made once).
    pub(crate) fn server_info_value(&self) -> &serde_json::Value {
        &self.info_value
    }

    /// The `_meta` of a modern result that carries nothing but `serverInfo`, as JSON text.
    pub(crate) fn server_info_meta(&self) -> &str {
        &self.info_meta
    }

    /// A share of [`super::CallerLimits::calls`] for a call of `caller` (`None` when it counts
    /// against nobody: stdio), or the refusal when its caller holds them all.
    pub(crate) fn call_share(
        &self,
        caller: &crate::session::Caller,
    ) -> Result<Option<crate::session::fairness::Share>, Error> {
        self.calls_per_caller.take_for(caller.counted_as.as_ref(), self.config.per_caller.calls)
    }

    /// Waits for a turn to run; refuses when too many are already waiting. No call starts while
    /// the client leaves too much of what it was sent unread (`session/backlog.rs`): what calls
    /// answer is bounded by the calls already running.
    pub(crate) async fn turn(&self, tool: &str) -> Result<tokio::sync::OwnedSemaphorePermit, Error> {
        let permit = match Arc::clone(&self.run_permits).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.config.max_queued {
                    self.waiting.fetch_sub(1, Ordering::AcqRel);
                    return Err(Error::ToolFailed {
                        tool: tool.to_owned(),
                        reason: Failure::Overloaded,
                        details: format!(
                            "{} calls are running and {} waiting; retry later",
                            self.config.max_in_flight, self.config.max_queued
                        ),
                    });
                }
                let permit = Arc::clone(&self.run_permits).acquire_owned().await;
                self.waiting.fetch_sub(1, Ordering::AcqRel);
                permit.map_err(|_| Error::Internal { details: "the server is stopping".into() })?
            }
        };
        // Looked at with the turn in hand: a call that waited for its turn started when the
        // backlog was another.
        if self.peer.is_behind() {
            self.peer.room().await;
        }
        Ok(permit)
    }

    pub(super) fn in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<IdKey, InFlight>> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Gives the workspace lock back as the server stops, waiting for it at most
    /// [`LOCK_RELEASE_WAIT`]. A call cut off while it asked for the lock may still wait for the
    /// lock registry's file lock (another process holds it; `TEAAGENT_LOCK_WAIT` at most), and
    /// the release waits behind it; the stop does not. A record left behind names this process,
    /// gone by then, and the next server to take the lock prunes it.
    pub(crate) async fn release_lock(&self) {
        let Some(lock) = self.lock.clone() else { return };
        let release = tokio::task::spawn_blocking(move || lock.release());
        if tokio::time::timeout(LOCK_RELEASE_WAIT, release).await.is_err() {
            tracing::warn!(
                "the workspace lock was not released within {LOCK_RELEASE_WAIT:?} (the lock registry is busy); \
                 its record names this process, and the next server to take the lock removes it"
            );
        }
    }
}

/// How long a stopping server waits to give the workspace lock back ([`Shared::release_lock`]).
const LOCK_RELEASE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
