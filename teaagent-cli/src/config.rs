//! Configuration: `$TEAAGENT_HOME/config.toml` (the user's), then `<root>/.teaagent/config.toml`
//! (the workspace's), then flags.
//!
//! The workspace file comes with whatever repository was cloned, so it may only tighten what the
//! user set: a stricter mode, fewer grants, more deny rules, lower rate limits, shorter timeouts.
//! Anything that would loosen (a more permissive mode, a new grant, a higher limit, a server to
//! start) is ignored with a warning that says so. Flags are the user's own choice and win.
//!
//! # Reading the files
//!
//! Every file is read with [`teaagent_core::home`]'s rules: opened without blocking, a regular
//! file, at most [`MAX_CONFIG_BYTES`]. The user's file is reached through the home directory's
//! handle (a link there is refused); a `--config FILE` the user named may be a link. The
//! workspace's file is read **through the workspace** ([`Workspace::resolve`] and
//! [`teaagent_core::workspace::Resolved::open_read`]): a `.teaagent/config.toml` that is a link out of
//! the root, a FIFO or a device is refused before a byte is read, so nothing outside the root is
//! ever read on the workspace's behalf.
//!
//! # Errors
//!
//! Every problem with a file — unreadable, not TOML, an unknown key, a value of the wrong type or
//! out of its range — is a [`ConfigError`]: it names the file and the key, says what is allowed,
//! and makes the command exit with 2 (a usage error), before anything is served. That includes
//! the workspace's file: a broken one is fatal rather than ignored, because ignoring it would
//! silently drop the deny rules and limits its owner relies on (fail closed). A parse error says
//! line and column, never quotes the source line (it could be a megabyte of a repository's
//! bytes). Errors and warnings carry raw text; `main` shows them escaped
//! ([`teaagent_core::visible`]), so bytes from a file never reach the terminal raw. (A home
//! directory that cannot be used is the environment's problem, not a usage error: exit 1.)
//!
//! # Ranges
//!
//! | key | allowed |
//! |---|---|
//! | `tools.NAME.rate_limit.max_calls` | a whole number from 1 to 1,000,000 |
//! | `tools.NAME.rate_limit.window_secs` | a number of seconds from 0.001 (1 ms) to 2,592,000 (30 days) |
//! | `tools.NAME.timeout_secs` | a whole number of seconds from 1 to 86,400 (1 day) |
//! | `permission_mode` | one of the five modes |
//! | `grants`, `deny` | rules as `--grant` takes them |
//! | `mcp_servers.NAME.command`, `args`, `env` | strings |
//!
//! The bounds keep every value meaningful and every conversion exact: a window under 1 ms would
//! be no limit at all, and 30 days, 1 day and a million calls are far beyond any real use while
//! far inside what `Duration` and the rate limiter can hold (`1e300` seconds made startup panic).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use teaagent_core::home::{Home, MAX_CONFIG_BYTES, OwnFileError};
use teaagent_core::policy::grant::Grant;
use teaagent_core::visible;
use teaagent_core::workspace::PathError;
use teaagent_core::{PermissionMode, RateLimit, Registry, ToolOverride, Workspace};

use crate::cli::CallFlags;

/// The user's configuration file's name in the home.
const USER_FILE: &str = "config.toml";
/// The workspace's configuration file, relative to the root.
const WORKSPACE_FILE: &str = ".teaagent/config.toml";

/// One configuration file as written. Numbers are kept as TOML values and range-checked by
/// [`Bounds::check`], so that a wrong one is reported with its key and its range.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    permission_mode: Option<PermissionMode>,
    grants: Option<Vec<String>>,
    deny: Option<Vec<String>>,
    #[serde(default)]
    tools: BTreeMap<String, ToolConfig>,
    #[serde(default)]
    pub(crate) mcp_servers: BTreeMap<String, McpServer>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolConfig {
    rate_limit: Option<RateLimitConfig>,
    timeout_secs: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RateLimitConfig {
    max_calls: toml::Value,
    window_secs: toml::Value,
}

/// An external MCP server (`[mcp_servers.NAME]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpServer {
    pub(crate) command: String,
    #[serde(default)]
    pub(crate) args: Vec<String>,
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
}

/// The allowed range of a numeric configuration value.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    min: f64,
    max: f64,
    /// Only whole numbers.
    whole: bool,
    /// What the range says in a message.
    text: &'static str,
}

const MAX_CALLS: Bounds =
    Bounds { min: 1.0, max: 1_000_000.0, whole: true, text: "a whole number from 1 to 1000000" };
const WINDOW_SECS: Bounds = Bounds {
    min: 0.001,
    max: 2_592_000.0,
    whole: false,
    text: "a number of seconds from 0.001 to 2592000 (30 days)",
};
const TIMEOUT_SECS: Bounds = Bounds {
    min: 1.0,
    max: 86_400.0,
    whole: true,
    text: "a whole number of seconds from 1 to 86400 (1 day)",
};

impl Bounds {
    /// `value` as a number within the bounds, or an error naming `key` in `file`.
    fn check(self, value: &toml::Value, key: &str, file: &Path) -> Result<f64, ConfigError> {
        let number = match value {
            toml::Value::Integer(i) => Some(*i as f64),
            toml::Value::Float(f) if !self.whole => Some(*f),
            _ => None,
        };
        match number {
            Some(n) if n.is_finite() && n >= self.min && n <= self.max => Ok(n),
            _ => Err(ConfigError::OutOfRange {
                file: file.to_path_buf(),
                key: key.to_owned(),
                value: shown_value(value),
                allowed: self.text,
            }),
        }
    }
}

/// A TOML value as a message shows it.
fn shown_value(value: &toml::Value) -> String {
    match value {
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => format!("{f:?}"),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::String(s) => format!("\"{s}\""),
        toml::Value::Datetime(d) => format!("{d:?}"),
        toml::Value::Array(_) => "an array".to_owned(),
        toml::Value::Table(_) => "a table".to_owned(),
    }
}

/// A configuration file that cannot be used: the command exits with 2.
#[derive(Debug)]
pub(crate) enum ConfigError {
    /// The home directory cannot be used.
    Home(teaagent_core::home::HomeError),
    /// The file cannot be read (safely).
    Unreadable { file: PathBuf, why: String },
    /// Not TOML, an unknown key, or a value of the wrong type.
    Invalid { file: PathBuf, why: String },
    /// A value out of its range.
    OutOfRange { file: PathBuf, key: String, value: String, allowed: &'static str },
    /// A grant or deny rule that does not parse.
    BadRule { file: PathBuf, key: String, why: String },
    /// `tools.NAME` for a tool that does not exist.
    UnknownTool { file: PathBuf, name: String, known: String },
}

/// Raw text: whoever prints it escapes it (`main` does, with [`visible::escape`]).
impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Home(e) => write!(f, "{e}"),
            ConfigError::Unreadable { file, why } => {
                write!(f, "{}: cannot use this configuration file: {why}", file.display())
            }
            ConfigError::Invalid { file, why } => write!(f, "{}: {why}", file.display()),
            ConfigError::OutOfRange { file, key, value, allowed } => {
                write!(f, "{}: `{key}` = {value} is out of range: allowed is {allowed}", file.display())
            }
            ConfigError::BadRule { file, key, why } => write!(f, "{}: `{key}`: {why}", file.display()),
            ConfigError::UnknownTool { file, name, known } => {
                write!(f, "{}: `tools.{name}`: no such tool (known: {known})", file.display())
            }
        }
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// Whether the command should exit with 2: everything but an unusable home directory (which
    /// is the environment's problem, not the command line's: exit 1).
    pub(crate) fn is_usage(&self) -> bool {
        !matches!(self, ConfigError::Home(_))
    }
}

/// What the calls will run under.
#[derive(Debug, Default)]
pub(crate) struct Settings {
    pub(crate) mode: PermissionMode,
    pub(crate) grants: Vec<String>,
    pub(crate) denies: Vec<String>,
    pub(crate) preapproved: Vec<String>,
    pub(crate) overrides: HashMap<String, ToolOverride>,
    pub(crate) servers: BTreeMap<String, McpServer>,
    /// The user configuration file (whether or not it exists).
    pub(crate) user_file: PathBuf,
    /// What was ignored, for stderr.
    pub(crate) warnings: Vec<String>,
}

/// Where the user's configuration is: `--config FILE` as given, else `config.toml` in the home.
pub(crate) enum UserFile {
    /// A file the user named (it must exist; links are followed).
    Named(PathBuf),
    /// The home's `config.toml` (may be missing; never a link).
    InHome(Home),
}

impl UserFile {
    /// `--config`, else the home's file.
    pub(crate) fn locate(flag: Option<&Path>) -> Result<Self, ConfigError> {
        match flag {
            Some(path) => Ok(UserFile::Named(path.to_path_buf())),
            None => Ok(UserFile::InHome(Home::open().map_err(ConfigError::Home)?)),
        }
    }

    /// Its path, for messages.
    pub(crate) fn path(&self) -> PathBuf {
        match self {
            UserFile::Named(path) => path.clone(),
            UserFile::InHome(home) => home.file(USER_FILE),
        }
    }

    /// Reads and parses it; a missing home file is an empty configuration, a missing named file
    /// an error.
    pub(crate) fn read(&self) -> Result<Option<ConfigFile>, ConfigError> {
        let path = self.path();
        let unreadable = |e: OwnFileError| ConfigError::Unreadable { file: path.clone(), why: e.to_string() };
        let bytes = match self {
            UserFile::Named(named) => match teaagent_core::home::read_path(named, MAX_CONFIG_BYTES) {
                Ok(Some(bytes)) => {
                    use std::os::unix::fs::MetadataExt;
                    if std::fs::metadata(named).is_ok_and(|m| m.mode() & 0o022 != 0) {
                        tracing::warn!(
                            "{} is writable by others: they could change your configuration; run `chmod 600` on it",
                            visible::escape(&path.display().to_string())
                        );
                    }
                    bytes
                }
                Ok(None) => {
                    return Err(ConfigError::Unreadable { file: path, why: "no such file".to_owned() });
                }
                Err(e) => return Err(unreadable(e)),
            },
            UserFile::InHome(home) => {
                if let Some(loose) = home.loose_permissions(USER_FILE) {
                    tracing::warn!(
                        "{} is {loose}: others could change your configuration; run `chmod 600` on it",
                        visible::escape(&path.display().to_string())
                    );
                }
                match home.read(USER_FILE, MAX_CONFIG_BYTES).map_err(unreadable)? {
                    Some(bytes) => bytes,
                    None => return Ok(None),
                }
            }
        };
        parse(&bytes, &path).map(Some)
    }
}

/// The workspace's configuration file, read through the workspace (see the module docs);
/// `Ok(None)` when there is none.
fn read_workspace(workspace: &Workspace) -> Result<Option<ConfigFile>, ConfigError> {
    let path = workspace.root().join(WORKSPACE_FILE);
    let refused = |e: PathError| ConfigError::Unreadable { file: path.clone(), why: e.to_string() };
    let resolved = match workspace.resolve(WORKSPACE_FILE) {
        Ok(resolved) => resolved,
        Err(PathError::NotFound) => return Ok(None),
        Err(e) => return Err(refused(e)),
    };
    let file = match resolved.open_read() {
        Ok(file) => file,
        Err(PathError::NotFound) => return Ok(None),
        Err(e) => return Err(refused(e)),
    };
    let bytes = teaagent_core::home::read_regular(file, &path, MAX_CONFIG_BYTES)
        .map_err(|e| ConfigError::Unreadable { file: path.clone(), why: e.to_string() })?;
    parse(&bytes, &path).map(Some)
}

fn parse(bytes: &[u8], path: &Path) -> Result<ConfigFile, ConfigError> {
    let invalid = |why: String| ConfigError::Invalid { file: path.to_path_buf(), why };
    let text = std::str::from_utf8(bytes).map_err(|e| invalid(format!("not UTF-8 text: {e}")))?;
    toml::from_str(text).map_err(|e| invalid(located(text, &e)))
}

/// A TOML error as `line L, column C: message` — without the quoted source line the parser's
/// own report carries, which could be a megabyte of the workspace's bytes.
fn located(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().lines().map(str::trim).collect::<Vec<_>>().join(" ");
    match e.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|b| **b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

/// Loads the user's and the workspace's files and applies the flags.
pub(crate) fn load(
    flags: &CallFlags,
    workspace: &Workspace,
    registry: &Registry,
) -> Result<Settings, ConfigError> {
    let user = UserFile::locate(flags.config.as_deref())?;
    let user_path = user.path();
    let mut settings = Settings { user_file: user_path.clone(), ..Settings::default() };
    if let Some(file) = user.read()? {
        apply_user(&mut settings, file, &user_path, registry)?;
    }
    if let Some(ws) = read_workspace(workspace)? {
        let ws_path = workspace.root().join(WORKSPACE_FILE);
        apply_workspace(&mut settings, ws, &ws_path, registry)?;
    }
    if let Some(mode) = flags.permission_mode {
        settings.mode = mode;
    }
    settings.grants.extend(flags.grant.iter().cloned());
    settings.preapproved.extend(flags.preapprove.iter().cloned());
    Ok(settings)
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

fn tool_override(
    name: &str,
    tool: &ToolConfig,
    file: &Path,
    registry: &Registry,
) -> Result<ToolOverride, ConfigError> {
    if registry.get(name).is_none() {
        let known: Vec<&str> = registry.iter().map(|t| t.name()).collect();
        return Err(ConfigError::UnknownTool {
            file: file.to_path_buf(),
            name: name.to_owned(),
            known: known.join(", "),
        });
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
    Ok(ToolOverride { rate_limit, timeout })
}

fn apply_user(
    s: &mut Settings,
    file: ConfigFile,
    path: &Path,
    registry: &Registry,
) -> Result<(), ConfigError> {
    if let Some(mode) = file.permission_mode {
        s.mode = mode;
    }
    if let Some(grants) = file.grants {
        check_rules(&grants, "grants", path)?;
        s.grants = grants;
    }
    if let Some(deny) = file.deny {
        check_rules(&deny, "deny", path)?;
        s.denies = deny;
    }
    for (name, tool) in &file.tools {
        s.overrides.insert(name.clone(), tool_override(name, tool, path, registry)?);
    }
    s.servers = file.mcp_servers;
    Ok(())
}

fn apply_workspace(
    s: &mut Settings,
    file: ConfigFile,
    path: &Path,
    registry: &Registry,
) -> Result<(), ConfigError> {
    // Warnings are raw text too: `main` escapes them.
    let shown = path.display();
    if let Some(mode) = file.permission_mode {
        if mode.permissiveness() <= s.mode.permissiveness() {
            s.mode = mode;
        } else {
            s.warnings.push(format!(
                "{shown}: ignored `permission_mode = \"{mode}\"`: a workspace file may only tighten the mode (yours is `{}`)",
                s.mode
            ));
        }
    }
    if let Some(grants) = file.grants {
        check_rules(&grants, "grants", path)?;
        for grant in grants.iter().filter(|g| !s.grants.contains(g)) {
            s.warnings.push(format!(
                "{shown}: ignored grant `{grant}`: a workspace file may only remove grants, not add them"
            ));
        }
        s.grants.retain(|g| grants.contains(g));
    }
    if let Some(deny) = file.deny {
        check_rules(&deny, "deny", path)?;
        s.denies.extend(deny);
    }
    for (name, tool) in &file.tools {
        let wanted = tool_override(name, tool, path, registry)?;
        let def = registry.get(name).map(|t| (t.rate_limit(), t.timeout()));
        let entry = s.overrides.entry(name.clone()).or_default();
        if let Some(limit) = wanted.rate_limit {
            let current = entry.rate_limit.or(def.and_then(|d| d.0));
            let tighter = current.is_none_or(|c| limit.max_calls <= c.max_calls && limit.window >= c.window);
            if tighter {
                entry.rate_limit = Some(limit);
            } else {
                s.warnings.push(format!(
                    "{shown}: ignored `tools.{name}.rate_limit`: a workspace file may only lower limits"
                ));
            }
        }
        if let Some(timeout) = wanted.timeout {
            let current = entry.timeout.or(def.and_then(|d| d.1));
            if current.is_none_or(|c| timeout <= c) {
                entry.timeout = Some(timeout);
            } else {
                s.warnings.push(format!(
                    "{shown}: ignored `tools.{name}.timeout_secs`: a workspace file may only shorten timeouts"
                ));
            }
        }
    }
    for name in file.mcp_servers.keys() {
        s.warnings.push(format!(
            "{shown}: ignored `mcp_servers.{name}`: only your own configuration ({}) may declare servers",
            s.user_file.display()
        ));
    }
    Ok(())
}
