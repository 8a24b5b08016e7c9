//! The main loop: one `select!` between "stop" and "next line", then small dispatch functions.
//!
//! A request's first poll runs inline, and most requests (a fast tool, a list, a read) finish in
//! it; one that is not done runs on as a task of its own, so a slow call never delays `ping` or
//! another call. `initialize` and notifications are handled inline, in arrival order, because
//! later lines depend on them (batches need the negotiated version; a cancellation must find its
//! request).

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::early::{Announcement, EarlyRead};
use super::framing::Frame;
use super::peer::{Out, Peer, SessionInfo};
use super::reply::{Batch, Reply};
use super::transport::{FrameReader, Input, Output, write_loop};
use super::{ResourceProvider, Server, ServerConfig, router};
use crate::error::{CallerShare, Error, Failure, InvalidRequest, ParamsProblem};
use crate::jsonrpc::message::Rejected;
use crate::jsonrpc::{IdKey, Incoming, Notification, RawParams, Request, RequestId, error_line, result_line};
use crate::mcp::lifecycle::{ListCapability, ResourcesCapability};
use crate::mcp::modern::{DiscoverResult, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, ModernMeta};
use crate::mcp::notifications::CancelledParams;
use crate::mcp::{Implementation, InitializeParams, InitializeResult, ProtocolVersion, ServerCapabilities};
use crate::registry::Registry;
use crate::task::TaskTracker;

/// What every request task shares.
pub(crate) struct Shared {
    pub(crate) registry: Registry,
    pub(crate) config: ServerConfig,
    pub(crate) resources: Option<Arc<dyn ResourceProvider>>,
    /// The prompts ([`Server::prompts`]).
    pub(crate) prompts: Arc<crate::prompt::Prompts>,
    pub(crate) peer: Peer,
    pub(crate) workspace: Option<crate::workspace::Workspace>,
    pub(crate) lock: Option<Arc<crate::workspace::lock::WorkspaceLock>>,
    pub(crate) policy: crate::policy::Policy,
    pub(crate) limiter: crate::rate_limit::RateLimiter,
    /// The tools' shared state ([`Server::state`]), handed to every call's context.
    pub(crate) states: crate::tool::state::States,
    /// Async tools caught blocking the thread, whose calls run isolated ([`super::watch`]).
    pub(crate) blockers: super::watch::Blockers,
    /// What the server announces ([`Server::announcement`], taken once: the parts it is made
    /// of do not change while the server runs).
    pub(crate) announcement: Announcement,
    /// The announced `serverInfo` as JSON, for modern results.
    info_value: serde_json::Value,
    in_flight: Mutex<HashMap<IdKey, InFlight>>,
    /// Turns to run a tool call or a resource read ([`ServerConfig::max_in_flight`]).
    run_permits: Semaphore,
    waiting: AtomicUsize,
    pub(crate) tracker: TaskTracker,
    /// Cancelled when the server stops; every call's token is a child of it.
    stopping: CancellationToken,
    /// Cancelled when the input ends: open `subscriptions/listen` streams end then (gracefully,
    /// with their result) instead of holding the drain for its grace period.
    pub(crate) input_closed: CancellationToken,
    /// Open `subscriptions/listen` streams ([`MAX_LISTENERS`]).
    pub(crate) listeners: AtomicUsize,
    /// Calls in progress per caller ([`super::CallerLimits::calls`]).
    pub(crate) calls_per_caller: Arc<super::fairness::Shares>,
    /// `subscriptions/listen` streams per caller ([`super::CallerLimits::subscriptions`]).
    pub(crate) listeners_per_caller: Arc<super::fairness::Shares>,
    /// Tools whose availability changes while the server runs ([`Server::availability`]).
    pub(crate) availability: Option<Arc<dyn super::ToolAvailability>>,
}

/// Most `subscriptions/listen` streams open at once (each holds a task and an in-flight entry
/// until cancelled); one caller may hold [`super::CallerLimits::subscriptions`] of them.
pub(crate) const MAX_LISTENERS: usize = 16;

struct InFlight {
    cancel: CancellationToken,
    abort: Option<AbortHandle>,
}

/// Serves until the input ends or `shutdown` is cancelled, then drains.
pub(crate) async fn run(
    server: Server,
    input: Input,
    output: Output,
    shutdown: CancellationToken,
    early: Option<EarlyRead>,
) -> io::Result<()> {
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    // A failed write means the client is gone: that stops the loop like EOF.
    let writer = tokio::spawn(write_loop(output, out_rx, shutdown.clone()));
    let peer = Peer::new(out_tx);
    crate::logging::attach(&peer);
    let shared = Arc::new(Shared::new(server, peer));
    tracing::info!(tools = shared.registry.len(), "serving MCP on stdio");
    if let Some(availability) = &shared.availability {
        tokio::spawn(pass_on_list_changes(shared.clone(), availability.changes()));
    }
    // The workspace lock is settled after the first line, not before it: taking it is file I/O
    // with two fsyncs (about 0.9 ms here, most of `teaagent mcp serve`'s cold start), and the
    // first line is `initialize`, answered inline without the lock. Every later line is handled
    // only once the attempt is over, so tools find the lock as settled as before.
    let mut lock_pending = shared.lock.clone();
    let mut reader = FrameReader::new(input, shared.config.max_line_bytes);
    if let Some(read) = early {
        if let Some(info) = read.session {
            tracing::info!(client = %info.client.name, client_version = %info.client.version, protocol = %info.version, "initialize (answered early)");
            shared.peer.initialize(info);
            if let Some(lock) = lock_pending.take() {
                settle_lock(lock).await;
            }
        }
        reader.preload(&read.bytes, read.eof);
    }
    loop {
        tokio::select! {
            // Stop first: once asked to stop, no new line is started.
            biased;
            () = shutdown.cancelled() => break,
            frame = reader.next() => match frame {
                Some(frame) => {
                    shared.handle_frame(frame);
                    if let Some(lock) = lock_pending.take() {
                        settle_lock(lock).await;
                    }
                }
                None => {
                    tracing::info!("stdin closed; finishing in-flight calls");
                    break;
                }
            },
        }
    }
    shared.input_closed.cancel();
    shared.drain().await;
    if let Some(lock) = shared.lock.clone() {
        let _ = tokio::task::spawn_blocking(move || lock.release()).await;
    }
    crate::logging::detach();
    shared.peer.close_pending();
    let (done_tx, done_rx) = oneshot::channel();
    if shared.peer.sender().send(Out::Close(done_tx)).is_ok() {
        let _ = tokio::time::timeout(shared.config.shutdown_grace, done_rx).await;
    }
    writer.abort();
    Ok(())
}

/// Tells a legacy-era client `notifications/tools/list_changed` whenever the available tools
/// may have changed (modern-era clients hear it on their `subscriptions/listen` stream).
async fn pass_on_list_changes(shared: Arc<Shared>, mut changes: tokio::sync::watch::Receiver<u64>) {
    while changes.changed().await.is_ok() {
        if shared.input_closed.is_cancelled() {
            return;
        }
        if !shared.peer.is_modern() && shared.peer.session().is_some() {
            shared.peer.notify("notifications/tools/list_changed", &serde_json::json!({}));
        }
    }
}

/// Takes the workspace lock (or learns who holds it) on the blocking pool, and logs the outcome.
pub(crate) async fn settle_lock(lock: Arc<crate::workspace::lock::WorkspaceLock>) {
    // The answer the first line queued goes out first: the writer runs before the thread is made.
    tokio::task::yield_now().await;
    match tokio::task::spawn_blocking(move || lock.ensure()).await {
        Ok(Ok(())) => {}
        Ok(Err(crate::workspace::lock::LockRefusal::HeldBy(owner))) => tracing::warn!(
            owner_pid = owner.owner_pid,
            since = %owner.acquired_at,
            "another teaagent server holds this workspace: read-only tools work, the others answer -32003 until it is free"
        ),
        Ok(Err(crate::workspace::lock::LockRefusal::Unavailable(why))) => tracing::error!("{why}"),
        Err(e) => tracing::error!(error = %e, "acquiring the workspace lock failed"),
    }
}

impl Shared {
    /// Everything a call needs, from a server and the peer its answers go to.
    pub(crate) fn new(server: Server, peer: Peer) -> Self {
        let announcement = server.announcement();
        let overrides = server
            .config
            .tool_overrides
            .iter()
            .filter_map(|(name, o)| Some((name.clone(), o.rate_limit?)))
            .collect();
        let registry = server.registry.into_registry();
        let limiter = crate::rate_limit::RateLimiter::new(&registry, &overrides);
        #[cfg(feature = "redis")]
        let limiter = match server.shared_state {
            Some(state) => {
                server.policy.share(state.clone());
                limiter.shared(state)
            }
            None => limiter,
        };
        Shared {
            run_permits: Semaphore::new(server.config.max_in_flight),
            policy: server.policy.questions_per_caller(server.config.per_caller.questions),
            limiter,
            blockers: super::watch::Blockers::new(server.config.slow_poll),
            registry,
            config: server.config,
            resources: server.resources,
            prompts: server.prompts,
            peer,
            workspace: server.workspace,
            lock: server.lock,
            info_value: serde_json::to_value(&announcement.server_info).unwrap_or_default(),
            announcement,
            states: server.states,
            in_flight: Mutex::new(HashMap::new()),
            waiting: AtomicUsize::new(0),
            tracker: TaskTracker::new(),
            stopping: CancellationToken::new(),
            input_closed: CancellationToken::new(),
            listeners: AtomicUsize::new(0),
            calls_per_caller: super::fairness::Shares::new(CallerShare::Calls),
            listeners_per_caller: super::fairness::Shares::new(CallerShare::Subscriptions),
            availability: server.availability,
        }
    }

    fn handle_frame(self: &Arc<Self>, frame: Frame) {
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong { len } => {
                tracing::warn!(
                    len,
                    max = self.config.max_line_bytes,
                    "refused a line over the maximum length"
                );
                let error = Error::InvalidRequest { reason: InvalidRequest::LineTooLong };
                self.peer.send_line(error_line(None, &error.to_error_object()));
                return;
            }
        };
        match line.iter().copied().find(|b| !b.is_ascii_whitespace()) {
            None => {} // blank lines carry nothing and get nothing
            Some(b'[') => self.handle_batch(&line),
            Some(_) => match Incoming::parse_line(line) {
                Ok(message) => self.handle_message(message, || Reply::direct(self.peer.clone())),
                Err(rejected) => self.reject(&rejected, Reply::direct(self.peer.clone())),
            },
        }
    }

    fn handle_batch(self: &Arc<Self>, line: &[u8]) {
        let elements: Vec<Box<RawValue>> = match serde_json::from_slice(line) {
            Ok(elements) => elements,
            Err(e) if e.is_data() => {
                return self.reject_line(Error::InvalidRequest { reason: InvalidRequest::NotAMessage });
            }
            Err(e) => return self.reject_line(Error::Parse { details: e.to_string() }),
        };
        let allowed = self.peer.session().is_some_and(|s| s.version.allows_batches());
        if !allowed {
            return self.reject_line(Error::InvalidRequest { reason: InvalidRequest::BatchNotSupported });
        }
        if elements.is_empty() {
            return self.reject_line(Error::InvalidRequest { reason: InvalidRequest::EmptyBatch });
        }
        let batch = Batch::new(self.peer.clone());
        for element in &elements {
            match Incoming::from_raw(element) {
                Ok(message) => self.handle_message(message, || batch.reply()),
                Err(rejected) => self.reject(&rejected, batch.reply()),
            }
        }
        batch.sealed();
    }

    fn reject_line(&self, error: Error) {
        self.peer.send_line(error_line(None, &error.to_error_object()));
    }

    fn reject(&self, rejected: &Rejected, reply: Reply) {
        reply.send(error_line(rejected.id.as_ref(), &rejected.error.to_error_object()));
    }

    fn handle_message(self: &Arc<Self>, message: Incoming, reply: impl FnOnce() -> Reply) {
        match message {
            Incoming::Request(request) => self.handle_request(request, reply()),
            Incoming::Notification(notification) => self.handle_notification(notification),
            Incoming::Response(response) => self.peer.complete(response),
        }
    }

    fn handle_request(self: &Arc<Self>, request: Request, reply: Reply) {
        let Request { id, method, params } = request;
        if method == "initialize" {
            reply.send(self.initialize(&id, params.as_ref().map(RawParams::get)));
            return;
        }
        let caller = match self.caller(&method, params.as_ref()) {
            Ok(caller) => caller,
            Err(error) => {
                let modern = self.peer.is_modern();
                return reply.send(error_line(Some(&id), &error.to_error_object_for(modern)));
            }
        };
        if self.in_flight().contains_key(id.key()) {
            let error = Error::InvalidRequest { reason: InvalidRequest::DuplicateId };
            return reply.send(error_line(Some(&id), &error.to_error_object()));
        }
        // The in-flight entry's key, kept: the future owns `id`.
        let key = id.key().clone();
        let cancel = self.stopping.child_token();
        let shared = Arc::clone(self);
        let log_level = caller.as_ref().and_then(|c| c.log_level);
        let token = cancel.clone();
        // Modern era: `notifications/message` only for a request that asked, at its level.
        // (`router::dispatch` answers a panic of its own as an internal error.)
        let mut work = Box::pin(async move {
            crate::logging::for_request(
                log_level,
                router::dispatch(&shared, &id, &method, params, token, caller),
            )
            .await
        });
        // The first poll runs here, inline: most requests (a fast tool, a list, a read) finish
        // in it, and then need no task, no in-flight entry and no hand-off between tasks (a
        // sequential call's latency, the stdio benchmark). Nothing can cancel a request between
        // its arrival and the end of this poll: the loop reads no other line meanwhile. A
        // request that is not done gets its task, whose first poll registers its own waker
        // (the one given here wakes nothing, as the `Future` contract allows: only the latest
        // poll's waker counts).
        let first = work.as_mut().poll(&mut std::task::Context::from_waker(std::task::Waker::noop()));
        if let std::task::Poll::Ready(line) = first {
            return reply.send(line);
        }
        self.in_flight().insert(key.clone(), InFlight { cancel, abort: None });
        let shared = Arc::clone(self);
        let task_key = key.clone();
        let task = self.tracker.spawn(async move {
            let line = work.await;
            // Gone from the map means cancelled while running: no response.
            if shared.in_flight().remove(&task_key).is_some() {
                reply.send(line);
            }
        });
        if let Some(entry) = self.in_flight().get_mut(&key) {
            entry.abort = Some(task.abort_handle());
        }
    }

    /// Who is asking (SPEC §12): the legacy session `initialize` settled, or, in the modern era,
    /// what this request's `_meta` says. The first message fixes the era: a request that names
    /// a protocol version in `_meta` (or is `server/discover`) chooses the modern one. `Ok(None)`:
    /// a `ping` before any era is chosen.
    fn caller(&self, method: &str, params: Option<&RawParams>) -> Result<Option<Arc<SessionInfo>>, Error> {
        if let Some(session) = self.peer.legacy() {
            // `tools/call` looks at its own `_meta` as it parses it (its arguments may be large:
            // they are not read twice for this).
            if method == "server/discover" || (method != "tools/call" && names_modern_version(params)) {
                return Err(Error::InvalidRequest { reason: InvalidRequest::LegacyEra });
            }
            return Ok(Some(session));
        }
        let meta = modern_meta(params)?;
        let modern = method == "server/discover"
            || meta.as_ref().is_some_and(ModernMeta::is_modern)
            || self.peer.is_modern();
        if !modern {
            if method == "ping" {
                return Ok(None);
            }
            return Err(Error::InvalidRequest { reason: InvalidRequest::NotInitialized });
        }
        if !self.peer.choose_modern() {
            return Err(Error::InvalidRequest { reason: InvalidRequest::LegacyEra });
        }
        modern_caller(method, meta).map(Some)
    }

    fn handle_notification(&self, notification: Notification) {
        match notification.method.as_str() {
            "notifications/cancelled" => {
                let params =
                    notification.params.as_ref().map(|p| serde_json::from_str::<CancelledParams>(p.get()));
                let Some(Ok(params)) = params else {
                    tracing::debug!("ignored a malformed notifications/cancelled");
                    return;
                };
                let Some(key) = IdKey::of_value(&params.request_id) else { return };
                if let Some(entry) = self.in_flight().remove(&key) {
                    tracing::debug!(id = ?key, reason = params.reason.as_deref().unwrap_or(""), "request cancelled");
                    entry.cancel.cancel();
                    if let Some(abort) = entry.abort {
                        abort.abort();
                    }
                }
            }
            "notifications/initialized" => tracing::debug!("client initialized"),
            other => tracing::debug!(method = other, "ignored notification"),
        }
    }

    fn initialize(&self, id: &RequestId, params: Option<&str>) -> Vec<u8> {
        if self.peer.is_modern() {
            let error = Error::InvalidRequest { reason: InvalidRequest::ModernEra };
            return error_line(Some(id), &error.to_error_object());
        }
        let (line, info) = match initialize_answer(id, params, &self.announcement) {
            Ok(answer) => answer,
            Err(line) => return line,
        };
        tracing::info!(client = %info.client.name, client_version = %info.client.version, protocol = %info.version, "initialize");
        if !self.peer.initialize(info) {
            let error = Error::InvalidRequest { reason: InvalidRequest::AlreadyInitialized };
            return error_line(Some(id), &error.to_error_object());
        }
        line
    }

    /// What the server implements, the same in both eras.
    fn capabilities(&self) -> ServerCapabilities {
        capabilities(&self.announcement)
    }

    /// `server/discover` (modern era): the versions a request may name, the capabilities, the
    /// instructions. The server's name and version go in the result's `_meta`, as on every
    /// modern result. Only modern versions are listed: the legacy ones are negotiated by
    /// `initialize` in a process of their own.
    pub(crate) fn discover(&self) -> DiscoverResult {
        DiscoverResult {
            supported_versions: ProtocolVersion::MODERN.iter().map(|v| v.as_str()).collect(),
            capabilities: self.capabilities(),
            instructions: self.config.instructions.clone(),
        }
    }

    /// `{"name": "teaagent", "version": …}` (or the author's), as the JSON every modern result
    /// carries in `_meta` (made once).
    pub(crate) fn server_info_value(&self) -> &serde_json::Value {
        &self.info_value
    }

    /// A share of [`super::CallerLimits::calls`] for a call of the request being handled
    /// (`None` without a caller: stdio), or the refusal when its caller holds them all.
    pub(crate) fn call_share(&self) -> Result<Option<super::fairness::Share>, Error> {
        self.calls_per_caller.take_for_current(self.config.per_caller.calls)
    }

    /// Waits for a turn to run; refuses when too many are already waiting.
    pub(crate) async fn turn(&self, tool: &str) -> Result<tokio::sync::SemaphorePermit<'_>, Error> {
        if let Ok(permit) = self.run_permits.try_acquire() {
            return Ok(permit);
        }
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
        let permit = self.run_permits.acquire().await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        permit.map_err(|_| Error::Internal { details: "the server is stopping".into() })
    }

    /// Lets in-flight calls finish for the grace period, then cancels the rest (they get no
    /// response).
    async fn drain(&self) {
        self.tracker.close();
        if tokio::time::timeout(self.config.shutdown_grace, self.tracker.wait()).await.is_err() {
            let left: Vec<InFlight> = self.in_flight().drain().map(|(_, v)| v).collect();
            tracing::warn!(calls = left.len(), "grace period over; cancelling the calls still running");
            self.stopping.cancel();
            for entry in left {
                if let Some(abort) = entry.abort {
                    abort.abort();
                }
            }
            self.tracker.wait().await;
        }
        self.stopping.cancel();
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<IdKey, InFlight>> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Methods protocol `2026-07-28` removed: `-32601` in the modern era.
pub(crate) const REMOVED_IN_MODERN: [&str; 4] =
    ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"];

/// What the server implements, the same in both eras.
fn capabilities(offers: &Announcement) -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ListCapability { list_changed: offers.tools_list_changed }),
        resources: offers
            .resources
            .then_some(ResourcesCapability { subscribe: offers.resource_subscribe, list_changed: false }),
        // Without prompts, `prompts/list` still answers (empty) for clients that call it anyway,
        // but the capability is not declared (SPEC §4: each only when the server has it), so
        // clients do not show an empty prompts menu.
        prompts: offers.prompts.then(ListCapability::default),
        completions: offers.completions.then(Default::default),
        logging: Some(Default::default()),
    }
}

/// The answer to an `initialize` request and the session it settles (the version negotiated),
/// or the error line for params that are not `initialize`'s. Shared by the main loop and the
/// early answer ([`super::early`]).
pub(crate) fn initialize_answer(
    id: &RequestId,
    params: Option<&str>,
    announcement: &Announcement,
) -> Result<(Vec<u8>, SessionInfo), Vec<u8>> {
    let params: InitializeParams =
        router::parse_params(params).map_err(|e| error_line(Some(id), &e.to_error_object()))?;
    let version = ProtocolVersion::negotiate(&params.protocol_version);
    let result = InitializeResult {
        protocol_version: version,
        capabilities: capabilities(announcement),
        server_info: announcement.server_info.clone(),
        instructions: announcement.instructions.clone(),
    };
    let info = SessionInfo {
        version,
        capabilities: params.capabilities,
        client: params.client_info,
        log_level: None,
    };
    Ok((result_line(id, &result), info))
}

/// The modern `_meta` of a request's params, if it has one; params that are not an object, or a
/// `_meta` whose reserved keys have the wrong shape, are `-32602`.
/// Who is asking in the modern era: what one request's `_meta` says (every modern request speaks
/// for itself; stdio and HTTP alike). The methods 2026-07-28 removed are unknown whatever their
/// `_meta` says.
pub(crate) fn modern_caller(method: &str, meta: Option<ModernMeta>) -> Result<Arc<SessionInfo>, Error> {
    if REMOVED_IN_MODERN.contains(&method) {
        return Err(Error::MethodNotFound { method: method.to_owned() });
    }
    let meta = meta.unwrap_or_default();
    let invalid = |details: String| Error::InvalidParams { reason: ParamsProblem::InvalidMeta, details };
    let Some(requested) = meta.protocol_version else {
        return Err(invalid(format!(
            "every request of protocol 2026-07-28 carries `_meta[\"{META_PROTOCOL_VERSION}\"]`"
        )));
    };
    let Some(version) = ProtocolVersion::MODERN.into_iter().find(|v| v.as_str() == requested) else {
        return Err(Error::UnsupportedVersion { requested });
    };
    let Some(capabilities) = meta.client_capabilities else {
        return Err(invalid(format!(
            "every request of protocol 2026-07-28 carries `_meta[\"{META_CLIENT_CAPABILITIES}\"]` (`{{}}` for none)"
        )));
    };
    let client = meta.client_info.unwrap_or_else(|| Implementation {
        name: String::new(),
        version: String::new(),
        title: None,
    });
    Ok(Arc::new(SessionInfo { version, capabilities, client, log_level: meta.log_level }))
}

pub(crate) fn modern_meta(params: Option<&RawParams>) -> Result<Option<ModernMeta>, Error> {
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "_meta", default)]
        meta: Option<ModernMeta>,
    }
    let Some(params) = params else { return Ok(None) };
    serde_json::from_str::<Params>(params.get())
        .map(|p| p.meta)
        .map_err(|e| Error::InvalidParams { reason: ParamsProblem::InvalidMeta, details: e.to_string() })
}

/// Whether a legacy request's params name a modern protocol version in `_meta` (a request of the
/// other era).
pub(crate) fn names_modern_version(params: Option<&RawParams>) -> bool {
    let Some(params) = params else { return false };
    memchr::memmem::find(params.get().as_bytes(), META_PROTOCOL_VERSION.as_bytes()).is_some()
        && modern_meta(Some(params)).ok().flatten().is_some_and(|m| m.is_modern())
}
