//! Where a server's policy comes from: the same places for the `teaagent` command and for every
//! server built on this crate.
//!
//! In the order they are applied (a later source wins over an earlier one):
//!
//! 1. `$TEAAGENT_HOME/config.toml`, the user's file (default `~/.teaagent/config.toml`; the
//!    `teaagent` command's `--config FILE` names another one);
//! 2. `<root>/.teaagent/config.toml`, the workspace's file, when the server has a workspace: it
//!    comes with whatever repository was cloned, so it may only **tighten** what the user set (a
//!    stricter mode, fewer grants, more deny rules, lower rate limits, shorter timeouts); anything
//!    that would loosen is ignored with a warning that says so;
//! 3. the environment variables below, which an MCP client sets in the `env` of the server's
//!    entry in its configuration;
//! 4. the `teaagent` command's flags (`--permission-mode`, `--grant`, `--preapprove`).
//!
//! The environment and the flags are the user's own choice, like the user's file: they win over
//! the files, and the workspace's file cannot take back what they allow.
//!
//! # Environment variables
//!
//! | variable | what | like |
//! |---|---|---|
//! | `TEAAGENT_PERMISSION_MODE` | one of the five modes | `--permission-mode`, `permission_mode` |
//! | `TEAAGENT_GRANTS` | grants, **one per line** | `--grant`, `grants` |
//! | `TEAAGENT_DENY` | deny rules, one per line | `deny` |
//! | `TEAAGENT_PREAPPROVE` | `sha256:` digests, separated by lines, spaces or commas | `--preapprove` |
//! | `TEAAGENT_REQUEST_STATE_KEY` | 64 hex digits: the key that seals approval round trips of protocol `2026-07-28` ([`crate::policy::request_state`]); servers that share it accept each other's states | `request_state_key` (the user's file only: a workspace's file that sets it is ignored with a warning), [`Policy::request_state_keys`] |
//! | `TEAAGENT_REQUEST_STATE_PREVIOUS_KEY` | the key before the current one, still accepted while rotating (for ten minutes, a state's longest life) | `request_state_previous_key` |
//! | `TEAAGENT_REDIS_URL` | `redis://[:PASSWORD@]HOST:PORT[/DB]`: a fleet's shared state (`teaagent_core::fleet`, feature `redis`) | `[state] redis_url` (the user's file only) |
//! | `TEAAGENT_REDIS_PASSWORD` | the Redis password, kept out of the URL and the files | `[state] password_env` names another variable |
//!
//! # A fleet's shared state: `[state]`
//!
//! ```toml
//! [state]
//! redis_url = "redis://redis.internal:6379/0"
//! password_env = "TEAAGENT_REDIS_PASSWORD"   # the variable holding the password (this is the default)
//! prefix = "teaagent:prod:"                  # keys of this deployment (default "teaagent:")
//! timeout_ms = 500                           # connect and answer, 1 ms to 60 s
//! per_principal = false                      # rate-limit windows per caller too
//! fallback_local = false                     # Redis down: this replica's own windows, not refusals
//! ```
//!
//! Only the user's file (or `TEAAGENT_REDIS_URL`) may name it: a workspace's file that has a
//! `[state]` section is ignored with a warning (a cloned repository must not point the limits at
//! its own Redis).
//!
//! # What commands may reach: `[shell]`
//!
//! ```toml
//! [shell]
//! network = false          # commands may reach the network (default false, but in danger-full-access)
//! writable = ["~/.cargo"]  # more directories commands may write (absolute, or under ~/)
//! unsandboxed = "refuse"   # where the sandbox cannot be enforced: "refuse" commands, or "warn" and run
//! ```
//!
//! The sandbox itself follows the mode (`teaagent_core::sandbox`, with the built-in tools). A
//! workspace's file may only tighten: `network = false`, `unsandboxed = "refuse"`; its
//! `writable` is ignored with a warning.
//!
//! Grants and deny rules are separated by line breaks because a rule may itself contain `;`
//! (`delete_note;uses=3`), `,` (a glob's `{a,b}`) and spaces (`shell_exec:command=cargo test`),
//! but never a line break (a command with one is compound, which no grant covers). Blank lines
//! and the spaces around each line are ignored. In a client's JSON configuration:
//!
//! ```json
//! "env": { "TEAAGENT_GRANTS": "delete_note\nedit_file:path=src/**", "TEAAGENT_PERMISSION_MODE": "workspace-write" }
//! ```
//!
//! and in a shell: `TEAAGENT_GRANTS=$'delete_note\nedit_file:path=src/**' my-server`. A value
//! that is not valid (an unknown mode, a rule that does not parse, text that is not UTF-8) is a
//! [`ConfigError`] naming the variable, like a bad value in a file.
//!
//! # Reading the files
//!
//! Every file is read with [`crate::home`]'s rules: opened without blocking, a regular file, at
//! most [`MAX_CONFIG_BYTES`](crate::home::MAX_CONFIG_BYTES). The user's file is reached through the home directory's handle (a
//! link there is refused); a `--config FILE` the user named may be a link. The workspace's file
//! is read **through the workspace** ([`Workspace::resolve`](crate::Workspace::resolve) and
//! [`crate::workspace::Resolved::open_read`]): a `.teaagent/config.toml` that is a link out of
//! the root, a FIFO or a device is refused before a byte is read, so nothing outside the root is
//! ever read on the workspace's behalf.
//!
//! # Errors
//!
//! Every problem with a file — unreadable, not TOML, an unknown key, a value of the wrong type or
//! out of its range — is a [`ConfigError`]: it names the file and the key, says what is allowed,
//! and stops the server before anything is served (the `teaagent` command and
//! [`Server::run_stdio`](crate::Server::run_stdio) exit with 2, a usage error). That includes the
//! workspace's file: a broken one is fatal rather than ignored, because ignoring it would silently
//! drop the deny rules and limits its owner relies on (fail closed). A parse error says line and
//! column, never quotes the source line (it could be a megabyte of a repository's bytes). Errors
//! and warnings carry raw text; whoever prints them shows them escaped ([`crate::visible`]), so
//! bytes from a file never reach the terminal raw. (A home directory that cannot be used is the
//! environment's problem, not a usage error: exit 1.)
//!
//! # Ranges
//!
//! | key | allowed |
//! |---|---|
//! | `tools.NAME.rate_limit.max_calls` | a whole number from 1 to 1,000,000 |
//! | `tools.NAME.rate_limit.window_secs` | a number of seconds from 0.001 (1 ms) to 2,592,000 (30 days) |
//! | `tools.NAME.timeout_secs` | a whole number of seconds from 1 to 86,400 (1 day) |
//! | `permission_mode` | one of the five modes |
//! | `grants`, `deny` | rules as `--grant` takes them ([`crate::policy::grant`]) |
//! | `mcp_servers.NAME.command`, `args`, `env` | strings (used by the `teaagent` command only) |
//! | `mcp_servers.NAME.tier`, `tiers.TOOL` | `low`, `medium`, `high` (default) or `critical`: the tier of the server's tools (the user's file only) |
//! | `mcp_servers.NAME.roles.TOOL.ARG` | `path`, `command` or `text`: what an external tool's argument is, for deny rules and grants (`*` for every tool, every argument) |
//! | `audit.max_bytes`, `audit.keep` | 1024 to 1 TiB (default 16 MiB); 1 to 1000 old files (default 5): the audit log's rotation (the user's file only, `config/audit.rs`) |
//! | `mcp_servers.NAME.max_result_bytes` | 1024 to 67,108,864 (default 1,048,576): the most of a tool result passed on, the rest cut with a marker |
//!
//! The bounds keep every value meaningful and every conversion exact: a window under 1 ms would
//! be no limit at all, and 30 days, 1 day and a million calls are far beyond any real use while
//! far inside what `Duration` and the rate limiter can hold (`1e300` seconds made startup panic).
//!
//! # One file, many servers
//!
//! The user's file is shared by the `teaagent` command and every server built on this crate
//! that takes its policy from the environment, so a grant or a mode there applies to all of
//! them (a grant names its tool, so `grants = ["delete_note"]` only matters where there is a
//! `delete_note`). A `[tools.NAME]` section for a tool a server does not have is therefore
//! ignored with a warning by such servers ([`Sources::strict_tool_names`] off); the `teaagent`
//! command, which knows its tools, refuses it (a typo there would otherwise go unnoticed).
//!
//! # Example
//!
//! What [`Server::serve_stdio`](crate::Server::serve_stdio) does when the author did not fix the
//! policy in code, by hand:
//!
//! ```no_run
//! use teaagent_core::config::{Settings, Sources};
//! use teaagent_core::policy::Advice;
//! use teaagent_core::Registry;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Registry::builder().registered().build()?;
//! let settings = Settings::load(&Sources::environment(), &registry)?;
//! for warning in &settings.warnings {
//!     eprintln!("warning: {warning}");
//! }
//! let policy = settings.policy()?.advice(Advice::Environment { file: Some(settings.user_file.clone()), shared: true });
//! # let _ = policy;
//! # Ok(())
//! # }
//! ```

//!
//! # Flags
//!
//! A library server does not parse the `teaagent` command's flags: its command line is its
//! author's, and an MCP client configures a server through its `env` as easily as through its
//! arguments. An author who wants flags anyway parses them with whatever the program already
//! uses and hands them over as [`Sources::flags`] (applied last, as the command does), with
//! [`Advice::Flags`](crate::policy::Advice::Flags) if the flags are spelled like the command's:
//!
//! ```no_run
//! use teaagent_core::config::{Choices, Settings, Sources};
//! use teaagent_core::policy::Advice;
//! use teaagent_core::{Registry, Server, ServerConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Registry::builder().registered().build()?;
//! // e.g. from clap: `--grant RULE` (repeatable), `--permission-mode MODE`
//! let flags = Choices { grants: vec!["delete_note".into()], ..Choices::default() };
//! let settings = Settings::load(&Sources { flags, ..Sources::environment() }, &registry)?;
//! let policy = settings.policy()?.advice(Advice::Flags);
//! let config = settings.server_config(ServerConfig::default());
//! Server::new(registry).config(config).policy(policy).run_stdio();
//! # Ok(())
//! # }
//! ```

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::policy::grant::{Grant, GrantError};
use crate::policy::request_state::RequestStateKey;

mod audit;
mod bounds;
mod choices;
mod error;
mod files;
mod fleet;
mod mcp_server;
mod server;
mod shell;
mod workspace_file;
use crate::Registry;
pub use crate::env::{
    ENV_DENY, ENV_GRANTS, ENV_PERMISSION_MODE, ENV_PREAPPROVE, ENV_REDIS_PASSWORD, ENV_REDIS_URL,
    ENV_REQUEST_STATE_KEY, ENV_REQUEST_STATE_PREVIOUS_KEY, VARIABLES, Variable, is_secret_variable,
};
use crate::policy::{PermissionMode, Policy};
use crate::tool::RateLimit;
use bounds::{MAX_CALLS, TIMEOUT_SECS, ToolConfig, WINDOW_SECS};
pub use choices::Choices;
pub use error::ConfigError;
use files::read_workspace;
pub use files::{ReadUserFile, Sources, UserFile, server_file};
pub use fleet::StateSettings;
use fleet::{StateConfig, state_settings};
pub use mcp_server::McpServer;
pub use server::{ServerConfig, ToolOverride};
use shell::ShellConfig;
pub use shell::{ServerSandbox, ShellSettings};

/// The user's configuration file's name in the home.
pub const USER_FILE: &str = "config.toml";
/// The workspace's configuration file, relative to the root.
pub const WORKSPACE_FILE: &str = ".teaagent/config.toml";

/// One configuration file as written. Numbers are kept as TOML values and range-checked by
/// `Bounds::check`, so that a wrong one is reported with its key and its range.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    permission_mode: Option<PermissionMode>,
    grants: Option<Vec<String>>,
    deny: Option<Vec<String>>,
    #[serde(default)]
    tools: BTreeMap<String, ToolConfig>,
    /// The request-state key (user's file only; module docs).
    request_state_key: Option<String>,
    /// The previous request-state key, while rotating (user's file only).
    request_state_previous_key: Option<String>,
    /// External MCP servers (`[mcp_servers.NAME]`), for the `teaagent` command.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServer>,
    /// A fleet's shared state (user's file only).
    state: Option<StateConfig>,
    /// What commands may reach (`[shell]`).
    shell: Option<ShellConfig>,
    /// How the audit log is rotated (`[audit]`, user's file only).
    audit: Option<audit::AuditConfig>,
}

/// What the calls will run under.
#[derive(Debug, Default)]
pub struct Settings {
    /// The mode.
    pub mode: PermissionMode,
    /// Grants, checked.
    pub grants: Vec<String>,
    /// Deny rules, checked.
    pub denies: Vec<String>,
    /// Preapproved digests, checked.
    pub preapproved: Vec<String>,
    /// Per-tool rate limits and timeouts.
    pub overrides: HashMap<String, ToolOverride>,
    /// External servers declared in the user's file.
    pub servers: BTreeMap<String, McpServer>,
    /// The user configuration file (whether or not it exists).
    pub user_file: PathBuf,
    /// The request-state keys chosen (else each process draws a random one).
    pub request_state_keys: Option<(RequestStateKey, Option<RequestStateKey>)>,
    /// What was ignored, for stderr (raw text: escape it).
    pub warnings: Vec<String>,
    /// A fleet's shared state, when configured.
    pub state: Option<StateSettings>,
    /// What commands may reach (`[shell]`).
    pub shell: ShellSettings,
    /// How the audit log is rotated (`[audit]`; the defaults without it).
    pub audit: crate::policy::audit::Rotation,
}

impl Settings {
    /// Reads the sources in order (module docs) for a server of `registry`.
    pub fn load(sources: &Sources<'_>, registry: &Registry) -> Result<Settings, ConfigError> {
        let (user_path, user_contents) = match sources.user_read {
            Some(read) => (read.file.path(), read.contents.clone()),
            None => {
                let user = match (sources.user_file, sources.create_home) {
                    (Some(path), _) => UserFile::Named(path.to_path_buf()),
                    (None, true) => UserFile::locate(None)?,
                    (None, false) => UserFile::locate_existing()?,
                };
                (user.path(), user.read()?)
            }
        };
        let mut settings = Settings { user_file: user_path.clone(), ..Settings::default() };
        let strict = sources.strict_tool_names;
        if let Some(file) = user_contents {
            settings.apply_user(file, &user_path, registry, strict)?;
        }
        if let Some(path) = sources.server_file.filter(|p| p.is_file())
            && let Some(file) = UserFile::Named(path.to_path_buf()).read()?
        {
            settings.apply_user(file, path, registry, strict)?;
        }
        if let Some(ws) = sources.workspace
            && let Some(file) = read_workspace(ws)?
        {
            settings.apply_workspace(file, &ws.root().join(WORKSPACE_FILE), registry, strict)?;
        }
        let mut chosen = Choices::default();
        if sources.environment {
            chosen = Choices::from_environment()?;
        }
        let chosen = chosen.then(sources.flags.clone());
        if let Some(mode) = chosen.permission_mode {
            settings.mode = mode;
        }
        settings.grants.extend(chosen.grants);
        settings.denies.extend(chosen.deny);
        settings.preapproved.extend(chosen.preapprove);
        if chosen.request_state_keys.is_some() {
            settings.request_state_keys = chosen.request_state_keys;
        }
        if sources.environment {
            settings.state_from_environment(&|name| std::env::var(name).ok())?;
        }
        Ok(settings)
    }

    /// The policy these settings describe (no audit log, [`crate::policy::Advice::Code`]: set
    /// the advice that fits the server with [`Policy::advice`]).
    pub fn policy(&self) -> Result<Policy, ConfigError> {
        let mut policy = Policy::new(self.mode);
        for grant in &self.grants {
            policy = policy.grant(grant)?;
        }
        for deny in &self.denies {
            policy = policy.deny(deny)?;
        }
        for digest in &self.preapproved {
            policy = policy.preapprove(digest).map_err(|why| GrantError { text: digest.clone(), why })?;
        }
        if let Some((key, previous)) = &self.request_state_keys {
            policy = policy.request_state_keys(key.clone(), previous.clone());
        }
        Ok(policy)
    }

    /// `config` with the per-tool overrides added (they replace the author's for the same tool).
    pub fn server_config(&self, mut config: ServerConfig) -> ServerConfig {
        for (tool, o) in &self.overrides {
            config = config.tool_override(tool.clone(), *o);
        }
        config
    }

    /// The override of `tools.NAME`, or `None` (with a warning) for an unknown tool when not
    /// `strict`.
    fn tool_override(
        &mut self,
        name: &str,
        tool: &ToolConfig,
        file: &Path,
        registry: &Registry,
        strict: bool,
    ) -> Result<Option<ToolOverride>, ConfigError> {
        // `[tools.SERVER__tool]` of an external server that is not running now (denied, changed,
        // not decided, or not needed by `teaagent run`): nothing to apply it to, and no error —
        // an executable that changed must not stop the whole server.
        let external_not_running = self.servers.keys().any(|server| {
            let prefix = format!("{server}__");
            name.starts_with(&prefix) && !registry.iter().any(|t| t.name().starts_with(&prefix))
        });
        if registry.get(name).is_none() && external_not_running {
            return Ok(None);
        }
        if registry.get(name).is_none() {
            let known: Vec<&str> = registry.iter().map(|t| t.name()).collect();
            if strict {
                return Err(ConfigError::UnknownTool {
                    file: file.to_path_buf(),
                    name: name.to_owned(),
                    known: known.join(", "),
                });
            }
            self.warnings.push(format!(
                "{}: ignored `tools.{name}`: this server has no such tool (it has: {})",
                file.display(),
                known.join(", ")
            ));
            return Ok(None);
        }
        let key = |k: &str| format!("tools.{name}.{k}");
        let rate_limit = match &tool.rate_limit {
            None => None,
            Some(r) => {
                let max_calls = MAX_CALLS.check(&r.max_calls, &key("rate_limit.max_calls"), file)?;
                let window = WINDOW_SECS.check(&r.window_secs, &key("rate_limit.window_secs"), file)?;
                // Both are within their bounds, so neither conversion can fail or panic.
                Some(RateLimit { max_calls: max_calls as u32, window: Duration::from_secs_f64(window) })
            }
        };
        let timeout = match &tool.timeout_secs {
            None => None,
            Some(t) => Some(Duration::from_secs(TIMEOUT_SECS.check(t, &key("timeout_secs"), file)? as u64)),
        };
        Ok(Some(ToolOverride { rate_limit, timeout }))
    }

    fn apply_user(
        &mut self,
        file: ConfigFile,
        path: &Path,
        registry: &Registry,
        strict: bool,
    ) -> Result<(), ConfigError> {
        if let Some(mode) = file.permission_mode {
            self.mode = mode;
        }
        if let Some(grants) = file.grants {
            check_rules(&grants, "grants", path)?;
            self.grants = grants;
        }
        if let Some(deny) = file.deny {
            check_rules(&deny, "deny", path)?;
            self.denies = deny;
        }
        for (name, server) in &file.mcp_servers {
            server.check(name, path)?;
        }
        self.servers = file.mcp_servers;
        for (name, tool) in &file.tools {
            if let Some(o) = self.tool_override(name, tool, path, registry, strict)? {
                self.overrides.insert(name.clone(), o);
            }
        }
        if let Some(state) = &file.state {
            self.state = Some(state_settings(state, path, &|name| std::env::var(name).ok())?);
        }
        if let Some(audit) = &file.audit {
            self.audit = audit.rotation(path)?;
        }
        if let Some(shell) = &file.shell {
            self.shell.network = shell.network.unwrap_or(false);
            self.shell.writable = shell.writable(path)?;
            self.shell.warn_unsandboxed = shell.warns(path)?.unwrap_or(false);
            if let Some(env) = &shell.env {
                self.shell.env_inherit_secrets = env.inherit_secrets.unwrap_or(false);
                self.shell.env_exclude = env.exclude.clone();
                self.shell.env_include = env.include.clone();
                self.shell.env_include_only = env.include_only.clone();
                self.shell.env_set = env.set.clone();
            }
        }
        if let Some(name) = file.state.as_ref().and_then(|s| s.password_env.clone()) {
            self.shell.env_secrets.push(name);
        }
        let key = |text: &Option<String>, name: &str| -> Result<Option<RequestStateKey>, ConfigError> {
            text.as_deref().map(RequestStateKey::parse).transpose().map_err(|why| ConfigError::Invalid {
                file: path.to_path_buf(),
                why: format!("`{name}`: {why}"),
            })
        };
        let previous = key(&file.request_state_previous_key, "request_state_previous_key")?;
        match key(&file.request_state_key, "request_state_key")? {
            Some(current) => self.request_state_keys = Some((current, previous)),
            None if previous.is_some() => {
                return Err(ConfigError::Invalid {
                    file: path.to_path_buf(),
                    why: "`request_state_previous_key` is only accepted next to `request_state_key`".into(),
                });
            }
            None => {}
        }
        Ok(())
    }
}

fn check_rules(rules: &[String], key: &str, file: &Path) -> Result<(), ConfigError> {
    for (i, rule) in rules.iter().enumerate() {
        Grant::parse(rule).map_err(|e| ConfigError::BadRule {
            file: file.to_path_buf(),
            key: format!("{key}[{i}]"),
            why: e.to_string(),
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
