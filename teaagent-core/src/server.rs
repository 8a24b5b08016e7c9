//! The stdio server: a registry served as MCP over newline-delimited JSON-RPC.
//!
//! The shape follows async-lsp's main loop: `main_loop` reads frames and hands each message to
//! small dispatch functions; `router` is the table of methods; `call` is the `tools/call`
//! pipeline with its order of checks; `transport` and [`framing`] turn bytes into lines and back.
//! [`Server`]'s builder is here, its serve methods in `serve` and what they do before the first
//! message in `startup` (private modules but `framing`: their docs are read in the source).
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

use std::sync::Arc;

use crate::mcp::Implementation;
use crate::policy::Policy;
use crate::registry::Registry;
use crate::tool::state::{MissingState, States};
use crate::workspace::Workspace;
use crate::workspace::lock::{LockRegistry, WorkspaceLock};
use registered::Tools;
use startup::PolicyFrom;

mod announcement;
mod approval;
mod availability;
mod call;

mod era;
pub mod framing;
#[cfg(feature = "http")]
pub mod http;
mod main_loop;
mod metrics;
mod params;

mod prompts;
mod refusal;
mod registered;
mod reply;
mod rounds;
mod router;
mod serve;
mod serving;
mod shared;
mod skills;
mod startup;
mod tasks;
mod timer;
mod transport;
mod watch;

pub use crate::config::{ServerConfig, ToolOverride};
pub use crate::session::CallerLimits;
pub use crate::session::{Peer, PeerError, SessionInfo};
pub use crate::task::end_runtime;
pub use announcement::Announcement;
pub use availability::{ExternalStatus, ToolAvailability};
pub use serve::stop_on_signals;
pub use serving::Serving;

pub use crate::resource::ResourceProvider;

/// An MCP server: a registry, limits, and optionally a workspace, its lock and resources.
pub struct Server {
    registry: Tools,
    config: ServerConfig,
    resources: Option<Arc<dyn ResourceProvider>>,
    prompts: Arc<crate::prompt::Prompts>,
    skills: Arc<crate::skill::Skills>,
    /// The store of what replicas share ([`Server::shared_state`]).
    store: Arc<dyn crate::fleet::Store>,
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

impl Server {
    /// A server for `registry` with the default [`ServerConfig`], announcing itself as
    /// `{"name": "teaagent", "version": <this crate's version>}`.
    pub fn new(registry: Registry) -> Self {
        Self::with_tools(Tools::given(registry))
    }

    /// A server for every `#[tool]` function of the program (what
    /// `Registry::builder().registered().build()` collects), collected when the server starts. Invalid tools stop [`Server::run_stdio`] with exit code 1 and
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
        Self::with_tools(Tools::registered())
    }

    fn with_tools(registry: Tools) -> Self {
        Self {
            registry,
            config: ServerConfig::default(),
            resources: None,
            prompts: Arc::default(),
            skills: Arc::default(),
            store: Arc::new(crate::fleet::LocalStore::new()),
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

    /// Offers these skills (`skills/list`, `skills/get`, `resources/directory/read`, and their
    /// files through `resources/list` and `resources/read`; see [`crate::skill`]).
    ///
    /// ```
    /// use teaagent_core::skill::{SkillDef, Skills};
    /// use teaagent_core::{Registry, Server};
    ///
    /// let skill = SkillDef::embedded("triage")
    ///     .file("SKILL.md", "---\nname: triage\ndescription: Sort new issues by area\n---\nLabel each issue.\n");
    /// let server = Server::new(Registry::builder().build().unwrap()).skills(Skills::new().skill(skill));
    /// # let _ = server;
    /// ```
    pub fn skills(mut self, skills: crate::skill::Skills) -> Self {
        self.skills = Arc::new(skills);
        self
    }

    /// Keeps the state replicas of a fleet must agree on (rate-limit windows, request states'
    /// single use, grant uses, "for this session" answers) in `store`, such as a
    /// `fleet::RedisStore` (feature `redis`): see [`crate::fleet`]. The replicas must also share
    /// the key that seals request states (`TEAAGENT_REQUEST_STATE_KEY`). By default it is kept
    /// in this process ([`LocalStore`](crate::fleet::LocalStore)).
    pub fn shared_state(mut self, store: impl crate::fleet::Store) -> Self {
        self.store = Arc::new(store);
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
    ///
    /// [`Advice::Code`]: crate::policy::Advice::Code
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
    ///
    /// [`io::Error`]: std::io::Error
    /// [`io::ErrorKind::InvalidInput`]: std::io::ErrorKind::InvalidInput
    /// [`Error::Internal`]: crate::error::Error::Internal
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

    /// What this server announces at `initialize`.
    pub fn announcement(&self) -> Announcement {
        Announcement {
            server_info: self.info.clone(),
            resources: self.resources.is_some() || !self.skills.is_empty(),
            instructions: self.config.instructions.clone(),
            tools_list_changed: self.availability.is_some(),
            resource_subscribe: self.resources.as_ref().is_some_and(|r| r.subscribable()),
            prompts: !self.prompts.is_empty(),
            completions: self.prompts.completes() || self.resources.as_ref().is_some_and(|r| r.completes()),
            skills: !self.skills.is_empty(),
            // Known once the tools are collected (`Shared::new`).
            tasks: false,
        }
    }
}

#[cfg(test)]
mod tests;
