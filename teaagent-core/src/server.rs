//! The stdio server: a registry served as MCP over newline-delimited JSON-RPC.
//!
//! The shape follows async-lsp's main loop: `main_loop` reads frames and hands each message to
//! small dispatch functions; `router` is the table of methods; `call` is the `tools/call`
//! pipeline with its order of checks; `transport` and [`framing`] turn bytes into lines and back
//! (private modules but `framing`: their docs are read in the source).
//!
//! # Tools that block
//!
//! An async tool must not block its thread (`std::thread::sleep`, a synchronous HTTP client, a
//! long computation without an `.await`): on the single-threaded runtime of
//! [`Server::run_stdio`] that thread also reads requests, so `ping` and every other call would
//! wait. Write such a tool as a plain `fn` (it runs on the blocking pool) or move the blocking
//! part into `tokio::task::spawn_blocking`. When one blocks anyway, the server notices: a poll of
//! its future that takes longer than [`ServerConfig::slow_poll`] (100 ms) logs a warning naming
//! the tool and the fix, and its later calls run on a thread of their own, so it stalls the
//! server once, not on every call (see `watch.rs` for why not every call is isolated).
//!
//! ```no_run
//! use teaagent_core::{Registry, Server};
//!
//! fn main() -> std::process::ExitCode {
//!     let registry = Registry::builder().registered().build().expect("valid tools");
//!     Server::new(registry).run_stdio()
//! }
//! ```
//!
//! # Its policy
//!
//! Unless the author fixes it in code with [`Server::policy`], a server served over stdio
//! ([`Server::serve_stdio`], [`Server::run_stdio`]) takes its permission policy from the same
//! places as the `teaagent` command ([`crate::config`]): `$TEAAGENT_HOME/config.toml`, the
//! workspace's `.teaagent/config.toml` when it has a [`Server::workspace`] (tighten-only), and
//! the `TEAAGENT_PERMISSION_MODE`, `TEAAGENT_GRANTS`, `TEAAGENT_DENY` and `TEAAGENT_PREAPPROVE`
//! variables, which an MCP client sets in the `env` of the server's entry:
//!
//! ```json
//! { "command": "/path/to/notes-server", "env": { "TEAAGENT_GRANTS": "delete_note" } }
//! ```
//!
//! Without any of them the mode is `workspace-write`: read-only and non-destructive tools run,
//! destructive and `high`/`critical` ones are refused with `-32001`, whose `details` name the
//! variable (or the file's key) that would allow the call. At startup one line on stderr lists
//! the tools that will need an approval. Why this default: an MCP server is started by a
//! client, not from a shell, and the person who decides what it may do is the one who writes the
//! client's configuration; a library binary owns its command line, so the environment (and the
//! user's file) is the one channel that reaches every server the same way. The policy is still
//! the author's to fix: `.policy(Policy::new(PermissionMode::WorkspaceWrite))` (or any
//! [`Policy`]) makes the server ignore the environment and the files.
//!
//! [`Server::serve`] and [`Server::call_once`] (in-process tests, other transports) do not read
//! the environment unless asked with [`Server::policy_from_environment`]: a test that passes
//! because of the developer's own `~/.teaagent/config.toml` would be a surprise.
//!
//! A policy taken from the environment keeps no audit log (the `teaagent` command appends every
//! decision to `$TEAAGENT_HOME/audit.jsonl`): an audit record costs a file append and the
//! SHA-256 of the call's arguments on every call, allowed or not — measured on the `stdio`
//! benchmark's echo server, it took pipelined calls from 310,000/s to 127,000/s and 1 MiB calls
//! from 241/s to 101/s — which a tool author should choose, not inherit. To keep one, fix the policy in code with
//! [`Policy::audit`](crate::Policy::audit) and an
//! [`AuditLog`](crate::policy::audit::AuditLog).

use std::io;
use std::process::ExitCode;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigError, Settings, Sources};
use crate::error::Error;
use crate::mcp::Implementation;
use crate::policy::{Advice, Policy};
use crate::registry::Registry;
use crate::tool::state::{MissingState, States};
use crate::workspace::Workspace;
use crate::workspace::lock::{LockRegistry, WorkspaceLock};

mod announcement;
mod call;
pub mod early;

mod era;
pub mod framing;
#[cfg(feature = "http")]
pub mod http;
mod main_loop;
mod params;

mod prompts;
mod reply;
mod router;
mod serving;
mod shared;
mod transport;
mod watch;

pub use crate::config::{ServerConfig, ToolOverride};
pub use crate::session::CallerLimits;
pub use crate::session::{Peer, PeerError, SessionInfo};
pub use announcement::Announcement;
pub use early::EarlyStdio;
pub use serving::Serving;

pub use crate::resource::ResourceProvider;

/// An MCP server: a registry, limits, and optionally a workspace, its lock and resources.
pub struct Server {
    registry: Tools,
    config: ServerConfig,
    resources: Option<Arc<dyn ResourceProvider>>,
    prompts: Arc<crate::prompt::Prompts>,
    /// The fleet's shared state ([`Server::shared_state`]).
    #[cfg(feature = "redis")]
    shared_state: Option<crate::fleet::RedisStore>,
    workspace: Option<Workspace>,
    lock: Option<Arc<WorkspaceLock>>,
    policy: Policy,
    policy_from: PolicyFrom,
    info: Implementation,
    states: States,
    /// [`Server::prepare`] ran.
    prepared: bool,
    availability: Option<Arc<dyn ToolAvailability>>,
}

/// Tools of a registry whose availability changes while the server runs: the gateway's
/// external tools (`teaagent_core::gateway`, feature `gateway`). A withheld tool is left out of
/// `tools/list` and refused at `tools/call` (`-32000`, `reason: "withheld"`); an external tool
/// that the policy would refuse whatever the call ([`Policy::always_refuses`]) is left out of
/// `tools/list` too (and still refused at `tools/call`). When the set may have changed, the
/// client is told `notifications/tools/list_changed` (the capability says `listChanged: true`).
pub trait ToolAvailability: Send + Sync + 'static {
    /// Whether anything may change at all (a gateway without servers: no). When not, the
    /// server lists its tools as one without this (cacheable, nothing filtered).
    fn may_change(&self) -> bool {
        true
    }
    /// Whether `tool` is one of these tools.
    fn is_external(&self, tool: &str) -> bool;
    /// Why `tool` is withheld now, if it is.
    fn withheld(&self, tool: &str) -> Option<String>;
    /// Changes whenever the set of available tools may have changed.
    fn changes(&self) -> tokio::sync::watch::Receiver<u64>;
    /// What the tools still wait for before they can be served (a gateway's servers that are
    /// starting), or `None` when they are settled: `/readyz` answers `503` until then.
    fn pending(&self) -> Option<String> {
        None
    }
}

/// A server's tools: given to [`Server::new`], or collected from the program's `#[tool]`
/// functions the first time they are needed ([`Server::registered`]).
struct Tools {
    registry: std::sync::OnceLock<Registry>,
    /// Why collecting them failed (the registry is then empty).
    error: std::sync::OnceLock<crate::registry::RegistryError>,
}

impl Tools {
    fn get(&self) -> &Registry {
        self.registry.get_or_init(|| match Registry::builder().registered().build() {
            Ok(registry) => registry,
            Err(e) => {
                let _ = self.error.set(e);
                Registry::empty()
            }
        })
    }

    /// The tools, collected now if they were not yet; `Err` when they are invalid.
    fn check(&self) -> Result<&Registry, &crate::registry::RegistryError> {
        let registry = self.get();
        self.error.get().map_or(Ok(registry), Err)
    }

    fn into_registry(self) -> Registry {
        let _ = self.get();
        self.registry.into_inner().unwrap_or_else(Registry::empty)
    }
}

/// Where a server's policy comes from (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PolicyFrom {
    /// Nothing said: the environment over stdio, [`Policy::default`] elsewhere.
    Unset,
    /// [`Server::policy`].
    Code,
    /// [`Server::policy_from_environment`].
    Environment,
}

impl Server {
    /// A server for `registry` with the default [`ServerConfig`], announcing itself as
    /// `{"name": "teaagent", "version": <this crate's version>}`.
    pub fn new(registry: Registry) -> Self {
        Self::with_tools(Tools { registry: registry.into(), error: std::sync::OnceLock::new() })
    }

    /// A server for every `#[tool]` function of the program (what
    /// `Registry::builder().registered().build()` collects), collected when the server starts,
    /// after [`Server::run_stdio`] has answered a waiting `initialize` ([`early`]): the fastest
    /// start for the common case. Invalid tools stop [`Server::run_stdio`] with exit code 1 and
    /// the problems on stderr (the serve methods return them as an error); [`Server::registry`]
    /// collects them at once when called first.
    ///
    /// ```no_run
    /// use teaagent_core::{Server, tool};
    ///
    /// /// Echo the text back.
    /// #[tool(read_only)]
    /// async fn echo(text: String) -> String {
    ///     text
    /// }
    ///
    /// fn main() -> std::process::ExitCode {
    ///     Server::registered().run_stdio()
    /// }
    /// ```
    pub fn registered() -> Self {
        Self::with_tools(Tools { registry: std::sync::OnceLock::new(), error: std::sync::OnceLock::new() })
    }

    fn with_tools(registry: Tools) -> Self {
        Self {
            registry,
            config: ServerConfig::default(),
            resources: None,
            prompts: Arc::default(),
            #[cfg(feature = "redis")]
            shared_state: None,
            workspace: None,
            lock: None,
            policy: Policy::default(),
            policy_from: PolicyFrom::Unset,
            info: announcement::default_server_info(),
            states: States::default(),
            prepared: false,
            availability: None,
        }
    }

    /// Replaces the limits.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Sets how much of the server one caller may hold at once ([`ServerConfig::per_caller`]).
    pub fn caller_limits(mut self, limits: CallerLimits) -> Self {
        self.config.per_caller = limits;
        self
    }

    /// Offers these prompts (`prompts/list`, `prompts/get`, `completion/complete`; see
    /// [`crate::prompt`]).
    pub fn prompts(mut self, prompts: crate::prompt::Prompts) -> Self {
        self.prompts = Arc::new(prompts);
        self
    }

    /// Shares the state replicas of a fleet must agree on (rate-limit windows, request states'
    /// single use) through Redis: see [`crate::fleet`]. The replicas must also share the key
    /// that seals request states (`TEAAGENT_REQUEST_STATE_KEY`).
    #[cfg(feature = "redis")]
    pub fn shared_state(mut self, state: crate::fleet::RedisStore) -> Self {
        self.shared_state = Some(state);
        self
    }

    /// Serves resources from `provider`.
    pub fn resources(mut self, provider: impl ResourceProvider) -> Self {
        self.resources = Some(Arc::new(provider));
        self
    }

    /// Confines tools to `workspace`: every `#[path]` argument is resolved beneath its root
    /// before the tool runs (a refusal answers `-32602`), and tools reach it through
    /// [`ToolContext::workspace`](crate::ToolContext::workspace).
    pub fn workspace(mut self, workspace: Workspace) -> Self {
        self.workspace = Some(workspace);
        self
    }

    /// Holds the workspace lock in `registry` while serving: acquired right after the first line
    /// is handled (so `initialize` is answered without waiting for its file I/O; every later line
    /// waits for the attempt), released at shutdown; while another live server holds it, tools
    /// that are not read-only answer `-32003` (and each such call tries again to acquire it). Set the [`Server::workspace`]
    /// first: the lock then knows the workspace by the directory it holds open (device and
    /// inode), so a renamed root or another spelling of it is still the same workspace.
    pub fn lock(mut self, registry: LockRegistry, root: impl Into<std::path::PathBuf>) -> Self {
        let root = root.into();
        // The workspace's own handle names the directory served, even if `root` was renamed.
        let lock = match &self.workspace {
            Some(ws) if ws.root() == root => WorkspaceLock::of_workspace(registry, ws),
            _ => WorkspaceLock::new(registry, root),
        };
        self.lock = Some(Arc::new(lock));
        self
    }

    /// Fixes the permission policy in code: the server then ignores the `TEAAGENT_*` variables
    /// and the configuration files (module docs), and denials advise the [`Policy`] call that
    /// would allow the call ([`Advice::Code`], unless the policy says otherwise).
    ///
    /// ```no_run
    /// use teaagent_core::{PermissionMode, Policy, Registry, Server};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let registry = Registry::builder().registered().build()?;
    /// let policy = Policy::new(PermissionMode::WorkspaceWrite).grant("delete_note")?;
    /// Server::new(registry).policy(policy).run_stdio();
    /// # Ok(())
    /// # }
    /// ```
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self.policy_from = PolicyFrom::Code;
        self
    }

    /// Takes the policy from the environment and the configuration files ([`crate::config`])
    /// however the server is served: what [`Server::serve_stdio`] does by default, here also for
    /// [`Server::serve`] and [`Server::call_once`]. Replaces an earlier [`Server::policy`].
    pub fn policy_from_environment(mut self) -> Self {
        self.policy_from = PolicyFrom::Environment;
        self
    }

    /// Gives the tools shared state of type `T`: every [`State<T>`](crate::State) parameter (and
    /// [`ToolContext::state`](crate::ToolContext::state)) gets a clone of `value`, for each call.
    /// Call it once per type; several types are fine (a second value of the same type replaces
    /// the first). See [`crate::tool::state`] for the design.
    ///
    /// Before serving, the server checks that it has every type its tools take: a missing one
    /// refuses to start ([`MissingState`]: [`Server::serve_stdio`] and [`Server::serve`] return
    /// it inside an [`io::Error`] of kind [`io::ErrorKind::InvalidInput`],
    /// [`Server::call_once`] as [`Error::Internal`], [`Server::run_stdio`] logs it and exits
    /// with code 1), so no call can fail for want of state.
    ///
    /// ```no_run
    /// use std::collections::BTreeMap;
    /// use std::sync::{Arc, Mutex};
    /// use teaagent_core::{Registry, Server};
    ///
    /// #[derive(Clone, Default)]
    /// struct Notes(Arc<Mutex<BTreeMap<String, String>>>);
    ///
    /// let registry = Registry::builder().registered().build().expect("valid tools");
    /// let server = Server::new(registry).state(Notes::default());
    /// ```
    pub fn state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.states.insert(value);
        self
    }

    /// Every state type the tools take, checked against what [`Server::state`] was given.
    pub fn check_state(&self) -> Result<(), MissingState> {
        self.states.check(self.registry.get().iter().map(|tool| &**tool))
    }

    /// Serves tools whose availability changes while the server runs (see [`ToolAvailability`];
    /// the `teaagent` command gives its gateway). Their definitions must be in the registry.
    pub fn availability(mut self, availability: impl ToolAvailability) -> Self {
        self.availability = Some(Arc::new(availability));
        self
    }

    /// Announces another name and version in `serverInfo` (for servers built on teaagent).
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info.name = name.into();
        self.info.version = version.into();
        self
    }

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        self.registry.get()
    }

    /// Tells the policy which arguments are commands ([`Policy::know_tools`]) and installs its
    /// path deny rules as the workspace's hidden paths
    /// ([`Policy::hidden_paths`], [`Workspace::set_hidden`]) before anything is served: walks,
    /// searches, listings and resources then leave out what the rules deny, for every tool and
    /// for `resources/*`, not only the calls that name a denied path. Done here, at start, because
    /// only the server knows both the policy and the workspace (and builder calls come in any
    /// order); every clone of the workspace (tools, resources) shares the filter. A workspace
    /// that already has a filter (installed by its owner) keeps it, with a warning.
    fn hide_denied_paths(&self) {
        self.policy.know_tools(self.registry.get());
        let (Some(workspace), Some(hidden)) =
            (&self.workspace, self.policy.hidden_paths(self.registry.get()))
        else {
            return;
        };
        if !workspace.set_hidden(hidden) {
            tracing::warn!("the workspace already hides paths; the deny rules' paths are not added to it");
        }
        // A path rule holds for the file: one with several names may be a denied file.
        if let Some(scopes) = self.policy.link_scopes() {
            workspace.set_hides_links(scopes);
        }
    }

    /// Warns on stderr when the registry is empty: the server would start and answer
    /// `tools/list` with nothing, which is nearly always a forgotten
    /// [`RegistryBuilder::registered`](crate::RegistryBuilder::registered) (or `.tool(...)`)
    /// rather than an intent. A warning, not a refusal: a server may offer only resources.
    fn warn_if_no_tools(&self) {
        if self.registry.get().is_empty() {
            tracing::warn!(
                "this server offers no tools: `#[tool]` functions are listed only by \
                 `Registry::builder().registered()`, hand-built ones by `.tool(...)` or `.tools(...)`"
            );
        }
    }

    /// Resolves where the policy comes from (module docs): with `stdio`, an unset policy is
    /// taken from the environment. A configuration that cannot be used is an
    /// [`io::ErrorKind::InvalidInput`] error whose inner error is the [`ConfigError`].
    fn resolve_policy(&mut self, stdio: bool) -> io::Result<()> {
        let from_environment = match self.policy_from {
            PolicyFrom::Environment => true,
            PolicyFrom::Unset => stdio,
            PolicyFrom::Code => false,
        };
        if !from_environment {
            return Ok(());
        }
        // A server with a name of its own also reads its own file (grants written there are
        // this server's, not every server's on the machine).
        let own = crate::config::server_file(&self.info.name);
        let sources = Sources {
            workspace: self.workspace.as_ref(),
            server_file: own.as_deref(),
            ..Sources::environment()
        };
        let settings = Settings::load(&sources, self.registry.get()).map_err(config_error)?;
        for warning in &settings.warnings {
            tracing::warn!("{}", crate::visible::escape(warning));
        }
        let rules = settings.policy().map_err(config_error)?;
        let shared = own.is_none();
        let file = own.unwrap_or_else(|| settings.user_file.clone());
        self.policy = rules.advice(Advice::Environment { file: Some(file), shared });
        self.config = settings.server_config(std::mem::take(&mut self.config));
        self.policy_from = PolicyFrom::Code;
        Ok(())
    }

    /// Everything done before the first message is read: the policy's source, the startup lines
    /// (no tools; which tools will need an approval, see [`Policy::approvals_needed`]), the deny
    /// rules' hidden paths.
    fn prepare(&mut self, stdio: bool) -> io::Result<()> {
        if self.prepared {
            return Ok(());
        }
        self.prepared = true;
        if let Err(e) = self.registry.check() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, e.clone()));
        }
        self.check_state().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        if let Some(why) = self.prompts.defs.iter().find_map(|d| d.problem()) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
        }
        self.warn_if_no_tools();
        self.resolve_policy(stdio)?;
        for rule in self.policy.rules_naming_no_tool(self.registry.get()) {
            tracing::warn!(
                "{rule}: it applies to nothing (grants and deny rules name tools by their exact names or a glob)"
            );
        }
        if let Some(line) = self.policy.approvals_needed(self.registry.get()) {
            tracing::info!("{line}");
        }
        self.hide_denied_paths();
        Ok(())
    }

    /// Serves stdin/stdout until stdin ends or SIGINT/SIGTERM arrives, then drains in-flight
    /// calls for [`ServerConfig::shutdown_grace`] and returns.
    ///
    /// Unless [`Server::policy`] fixed it, the policy comes from the environment and the
    /// configuration files (module docs); one that cannot be used is an error of kind
    /// [`io::ErrorKind::InvalidInput`] wrapping the [`ConfigError`], before anything is read.
    /// So is a tool that takes state the server was not given ([`MissingState`]).
    ///
    /// Nothing runs until the [`Serving`] is awaited.
    pub fn serve_stdio(self) -> Serving {
        Serving::new(self.serve_stdio_after(None))
    }

    /// [`Server::serve_stdio`], taking over from an early answer to `initialize`.
    async fn serve_stdio_after(mut self, early: Option<EarlyStdio>) -> io::Result<()> {
        self.prepare(true)?;
        let shutdown = CancellationToken::new();
        let signals = tokio::spawn(on_signal(shutdown.clone()));
        let early = early.and_then(|early| early::take_over(early, &self.announcement()));
        let result = match transport::stdio() {
            Ok((input, output, _restore)) => main_loop::run(self, input, output, shutdown, early).await,
            Err(e) => Err(e),
        };
        signals.abort();
        result
    }

    /// What this server announces at `initialize` (for [`Server::answer_initialize_early`]).
    pub fn announcement(&self) -> Announcement {
        Announcement {
            server_info: self.info.clone(),
            resources: self.resources.is_some(),
            instructions: self.config.instructions.clone(),
            tools_list_changed: self.availability.is_some(),
            resource_subscribe: self.resources.as_ref().is_some_and(|r| r.subscribable()),
            prompts: !self.prompts.is_empty(),
            completions: self.prompts.completes() || self.resources.as_ref().is_some_and(|r| r.completes()),
        }
    }

    /// Answers the first `initialize` now if it is already waiting on stdin, before the caller
    /// gets the server ready (builds the registry, reads its configuration); hand the result to
    /// [`Server::run_stdio_after`]. Never waits for input. The answer says what `announcement` says, which
    /// must be what the server will announce ([`Server::announcement`]; a difference is logged
    /// as a warning). See [`early`] for what this changes for a client.
    ///
    /// [`Server::run_stdio`] does this by itself once the server is built; this is for a `main`
    /// that has work to do before that, as the `teaagent` command has:
    ///
    /// ```no_run
    /// use teaagent_core::{Announcement, Registry, Server};
    /// let early = Server::answer_initialize_early(Announcement::teaagent(false));
    /// let registry = Registry::builder().registered().build().expect("valid tools"); // the slow part
    /// std::process::exit(match Server::new(registry).run_stdio_after(early) {
    ///     code if code == std::process::ExitCode::SUCCESS => 0,
    ///     _ => 1,
    /// });
    /// ```
    pub fn answer_initialize_early(announcement: Announcement) -> EarlyStdio {
        EarlyStdio::start(announcement)
    }

    /// [`Server::run_stdio`] after [`Server::answer_initialize_early`].
    pub fn run_stdio_after(self, early: EarlyStdio) -> ExitCode {
        self.run_stdio_with(Some(early))
    }

    /// Serves any byte streams (in-process tests, other transports) until `reader` ends or
    /// `shutdown` is cancelled. Refuses to start like [`Server::serve_stdio`]. Nothing runs until
    /// the [`Serving`] is awaited.
    pub fn serve<R, W>(mut self, reader: R, writer: W, shutdown: CancellationToken) -> Serving
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Serving::new(async move {
            self.prepare(false)?;
            let input = transport::Input::Async(Box::new(reader));
            let output = transport::Output::Async(Box::new(writer));
            main_loop::run(self, input, output, shutdown, None).await
        })
    }

    /// Serves Streamable HTTP (both eras: protocol `2026-07-28`, and sessions of the legacy one)
    /// on `listener`, at `/mcp`, until `shutdown`
    /// is cancelled; answers in progress then get the grace period
    /// ([`ServerConfig::shutdown_grace`]). See [`http`] for the endpoint and its checks. Refuses
    /// to start like [`Server::serve_stdio`], and also when `listener` is not on a loopback
    /// address and `options` has no authentication (tokens, or OAuth with the feature `oauth`):
    /// a server reachable from the network is never open to anyone; and when `options` has both
    /// tokens and OAuth (one authentication at a time, see [`http`]).
    ///
    /// ```no_run
    /// use teaagent_core::{Registry, Server};
    /// use teaagent_core::server::http::HttpOptions;
    ///
    /// # async fn run() -> std::io::Result<()> {
    /// let registry = Registry::builder().registered().build().expect("valid tools");
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8787").await?;
    /// let stop = tokio_util::sync::CancellationToken::new();
    /// Server::new(registry).serve_http(listener, HttpOptions::default(), stop).await
    /// # }
    /// ```
    ///
    /// Nothing runs until the [`Serving`] is awaited.
    #[cfg(feature = "http")]
    pub fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        options: http::HttpOptions,
        shutdown: CancellationToken,
    ) -> Serving {
        Serving::new(self.serve_http_until(listener, options, shutdown))
    }

    /// [`Server::serve_http`]'s work.
    #[cfg(feature = "http")]
    async fn serve_http_until(
        mut self,
        listener: tokio::net::TcpListener,
        options: http::HttpOptions,
        shutdown: CancellationToken,
    ) -> io::Result<()> {
        let local = listener.local_addr()?;
        if !http::is_loopback(&local) && !options.authenticates() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "refusing to serve HTTP on {local} without authentication: give bearer tokens (HttpOptions::tokens; `--http-token-file` or TEAAGENT_HTTP_TOKENS for the teaagent command) or OAuth (HttpOptions::oauth; `--oauth-issuer` and `--oauth-resource`), or bind a loopback address"
                ),
            ));
        }
        #[cfg(feature = "oauth")]
        let oauth = match &options.oauth {
            Some(_) if !options.tokens.is_empty() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "bearer tokens and OAuth are both configured: an OAuth resource server accepts only its authorization server's tokens; choose one (for the teaagent command: `--http-token-file`/TEAAGENT_HTTP_TOKENS, or the `--oauth-*` flags)",
                ));
            }
            Some(config) => Some(Arc::new(http::oauth::OAuth::start(config)?)),
            None => None,
        };
        self.prepare(false)?;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // The process's own peer has no client over HTTP: each request answers on its own.
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let shared = Arc::new(shared::Shared::new(self, Peer::new(tx)));
        if let Some(lock) = shared.lock.clone() {
            main_loop::settle_lock(lock).await;
        }
        let endpoint = Arc::new(http::Endpoint {
            shared: shared.clone(),
            options,
            local,
            draining: shutdown.clone(),
            stopping: CancellationToken::new(),
            sessions: Default::default(),
            requests: crate::session::fairness::Shares::new(crate::error::CallerShare::Requests),
            #[cfg(feature = "oauth")]
            oauth,
        });
        let served = http::serve(endpoint, listener, shutdown).await;
        // Calls cancelled at the end of the grace period wind down before the lock goes.
        shared.tracker.close();
        let _ = tokio::time::timeout(shared.config.shutdown_grace, shared.tracker.wait()).await;
        if let Some(lock) = shared.lock.clone() {
            let _ = tokio::task::spawn_blocking(move || lock.release()).await;
        }
        drain.abort();
        served
    }

    /// Makes one call through the whole pipeline — validation, confinement, policy, rate limit,
    /// workspace lock, audit — without a client (what `teaagent run` does). In `prompt` mode the
    /// question goes to the terminal. The workspace lock, if taken, is released afterwards.
    ///
    /// The policy is the one given to [`Server::policy`] (default: `workspace-write`), or the
    /// environment's after [`Server::policy_from_environment`]; a configuration that cannot be
    /// used is an [`Error::Internal`].
    /// A tool that takes state the server was not given (any tool of the registry, as when
    /// serving) is an [`Error::Internal`] carrying the [`MissingState`] message, and nothing runs.
    pub async fn call_once(
        mut self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<crate::CallToolResult, Error> {
        self.check_state().map_err(|e| Error::Internal { details: e.to_string() })?;
        self.resolve_policy(false).map_err(|e| Error::Internal { details: e.to_string() })?;
        self.hide_denied_paths();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // Notifications (progress, logs) have no client to go to.
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let shared = Arc::new(shared::Shared::new(self, Peer::new(tx)));
        let params = crate::mcp::tools::CallToolParams {
            name: name.to_owned(),
            arguments: Some(arguments),
            meta: None,
            input_responses: None,
            request_state: None,
        };
        let id = crate::jsonrpc::RequestId::server(0);
        // No caller: the legacy pipeline, whose questions go to the terminal; never a round trip.
        let result = match call::call_tool(&shared, &id, params, CancellationToken::new(), None).await {
            Ok(call::CallOutcome::Complete(result)) => Ok(result),
            Ok(call::CallOutcome::InputRequired(_)) => {
                Err(Error::Internal { details: "a call without a client cannot ask through one".into() })
            }
            Err(e) => Err(e),
        };
        if let Some(lock) = shared.lock.clone() {
            let _ = tokio::task::spawn_blocking(move || lock.release()).await;
        }
        drain.abort();
        result
    }

    /// Everything a `main` needs: logs to stderr ([`crate::logging::init`] at `info`), a runtime,
    /// [`Server::serve_stdio`]. Exit code 0 after a clean shutdown; 2 when the configuration
    /// (a file or a `TEAAGENT_*` variable, see [`crate::config`]) cannot be used, with the
    /// variable or the file and key on stderr; 1 on any other error.
    ///
    /// The runtime is single-threaded on purpose: a request is read, run and answered on one
    /// thread with no cross-thread wake-ups, which is what keeps a call's latency near that of a
    /// bare read-parse-write loop. Blocking tools ([`crate::Handler::blocking`]) run on the
    /// blocking pool, so they never stall it; an async tool must not block (as in any runtime),
    /// and one that does is named and isolated after its first stall (see "Tools that block"
    /// in the module docs).
    ///
    /// Called from inside a runtime (an `async fn main` under `#[tokio::main]`, a
    /// `spawn_blocking` closure, a thread that entered one), it still works: tokio refuses to
    /// start a runtime on a thread that is running one ("Cannot start a runtime from within a
    /// runtime"), so the server gets a thread and a runtime of its own, and the calling thread
    /// waits for it. A line on stderr names [`Server::serve_stdio`]`.await`, the form that serves on
    /// the caller's runtime; it is a warning on a current-thread runtime, whose other tasks (and
    /// anything the tools' state needs from them) stand still while the caller waits. Serving on
    /// the caller's runtime from here is not possible in general: `block_in_place` panics on a
    /// current-thread runtime.
    ///
    /// A server missing state its tools take ([`Server::state`]) logs [`MissingState`] and
    /// returns exit code 1 without serving.
    pub fn run_stdio(self) -> ExitCode {
        self.run_stdio_with(None)
    }

    fn run_stdio_with(mut self, early: Option<EarlyStdio>) -> ExitCode {
        // A waiting `initialize` is answered before the rest gets ready: the logs, the policy
        // from the environment and the files, the runtime (see `early`).
        let early = early.unwrap_or_else(|| EarlyStdio::start(self.announcement()));
        crate::logging::init("info");
        if let Err(e) = self.registry.check() {
            tracing::error!("the program's tools are invalid: {e}");
            return ExitCode::FAILURE;
        }
        if let Err(missing) = self.check_state() {
            tracing::error!("{missing}");
            return ExitCode::FAILURE;
        }
        let Ok(caller) = tokio::runtime::Handle::try_current() else {
            if let Err(e) = self.prepare(true) {
                return exit_code(Err(e));
            }
            return self.run_on_own_runtime(Some(early));
        };
        if matches!(caller.runtime_flavor(), tokio::runtime::RuntimeFlavor::CurrentThread) {
            tracing::warn!(
                "`run_stdio()` was called inside a current-thread tokio runtime: serving on a \
                 runtime of its own while that one waits; in an `async fn main`, \
                 `server.serve_stdio().await` serves on yours"
            );
        } else {
            tracing::info!(
                "`run_stdio()` was called inside a tokio runtime: serving on a runtime of its own; \
                 in an `async fn main`, `server.serve_stdio().await` serves on yours"
            );
        }
        let thread = std::thread::Builder::new()
            .name("teaagent-server".into())
            .spawn(move || self.run_on_own_runtime(Some(early)));
        match thread.map(std::thread::JoinHandle::join) {
            Ok(Ok(code)) => code,
            Ok(Err(_)) => {
                tracing::error!("the server thread panicked");
                ExitCode::FAILURE
            }
            Err(e) => {
                tracing::error!(
                    error = %e,
                    "cannot start the server's thread; call `server.serve_stdio().await` instead"
                );
                ExitCode::FAILURE
            }
        }
    }

    /// [`Server::run_stdio`] on this thread, which must not be in a runtime.
    fn run_on_own_runtime(self, early: Option<EarlyStdio>) -> ExitCode {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => {
                tracing::error!(error = %e, "cannot start the async runtime");
                return ExitCode::FAILURE;
            }
        };
        let result = runtime.block_on(self.serve_stdio_after(early));
        // Blocking tool threads that outlived the grace period must not hold the exit.
        runtime.shutdown_timeout(std::time::Duration::from_millis(100));
        exit_code(result)
    }
}

/// The exit code of a serve: 0, 2 for a configuration that cannot be used, 1 otherwise (each
/// failure logged).
fn exit_code(result: io::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.get_ref().is_some_and(|inner| inner.is::<ConfigError>()) => {
            tracing::error!("cannot start: {}", crate::visible::escape(&e.to_string()));
            let usage = e
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<ConfigError>())
                .is_some_and(ConfigError::is_usage);
            if usage { ExitCode::from(2) } else { ExitCode::FAILURE }
        }
        Err(e) => {
            tracing::error!(error = %e, "the server stopped with an error");
            ExitCode::FAILURE
        }
    }
}

/// A configuration error as the `io::Error` the serve methods return.
fn config_error(e: ConfigError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e)
}

/// Cancels `shutdown` on SIGINT or SIGTERM.
async fn on_signal(shutdown: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        tracing::warn!("cannot listen for SIGINT/SIGTERM; only stdin EOF stops the server");
        return;
    };
    let which = tokio::select! {
        _ = int.recv() => "SIGINT",
        _ = term.recv() => "SIGTERM",
    };
    tracing::info!("{which} received; finishing in-flight calls");
    shutdown.cancel();
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    /// A tool taking state the server was not given: `serve` and `call_once` refuse before
    /// anything is read or run, with the `MissingState` inside.
    #[tokio::test]
    async fn serving_without_the_state_a_tool_takes_is_refused() {
        #[derive(Clone)]
        struct Notes;
        let registry = || {
            let def = crate::ToolDef::builder("add_note")
                .description("Adds a note.")
                .input_schema(serde_json::json!({"type": "object", "properties": {}}))
                .needs_state::<Notes>()
                .handler(crate::Handler::new(|_, _| async { Ok(crate::CallToolResult::text("ok")) }))
                .build();
            Registry::builder().tool(def).build().expect("valid")
        };
        let (reader, writer) = tokio::io::split(tokio::io::duplex(64).0);
        let err = Server::new(registry())
            .serve(reader, writer, CancellationToken::new())
            .await
            .expect_err("refused");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let missing = err.get_ref().and_then(|e| e.downcast_ref::<MissingState>()).expect("MissingState");
        assert_eq!(missing.missing().map(|(tool, _)| tool).collect::<Vec<_>>(), ["add_note"]);

        let err =
            Server::new(registry()).call_once("add_note", serde_json::json!({})).await.expect_err("refused");
        assert!(err.to_string().contains("tool `add_note` takes `State<"), "{err}");
        let called = Server::new(registry()).state(Notes).call_once("add_note", serde_json::json!({})).await;
        assert!(called.is_ok(), "{called:?}");
    }

    /// `serve` over in-memory streams: the same main loop as stdio.
    #[tokio::test]
    async fn serves_any_byte_streams() {
        let registry = Registry::builder().build().expect("empty registry");
        let (client, server_end) = tokio::io::duplex(4096);
        let (server_read, server_write) = tokio::io::split(server_end);
        let serving =
            tokio::spawn(Server::new(registry).serve(server_read, server_write, CancellationToken::new()));
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut lines = BufReader::new(client_read).lines();
        client_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")
            .await
            .expect("write");
        let first: serde_json::Value =
            serde_json::from_str(&lines.next_line().await.expect("read").expect("a line")).expect("json");
        assert_eq!(first["result"]["protocolVersion"], "2025-06-18");
        let second = lines.next_line().await.expect("read").expect("a line");
        assert_eq!(second, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
        client_write.shutdown().await.expect("close");
        drop(client_write);
        serving.await.expect("joined").expect("served until EOF");
    }
}
