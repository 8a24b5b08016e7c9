//! Configuration: `$TEAAGENT_HOME/config.toml` (the user's), then `<root>/.teaagent/config.toml`
//! (the workspace's), then flags.
//!
//! The workspace file comes with whatever repository was cloned, so it may only tighten what the
//! user set: a stricter mode, fewer grants, more deny rules, lower rate limits, shorter timeouts.
//! Anything that would loosen (a more permissive mode, a new grant, a higher limit, a server to
//! start) is ignored with a warning that says so. Flags are the user's own choice and win.
//! Unknown keys and bad values are errors that name the key and the file.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use serde::Deserialize;
use teaagent_core::policy::grant::Grant;
use teaagent_core::{PermissionMode, RateLimit, Registry, ToolOverride};

use crate::cli::CallFlags;

/// One configuration file as written.
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
    timeout_secs: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RateLimitConfig {
    max_calls: u32,
    window_secs: f64,
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

/// The user's configuration file: `--config`, else `$TEAAGENT_HOME/config.toml`.
pub(crate) fn user_file(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    match flag {
        Some(path) => Ok(path.to_path_buf()),
        None => Ok(teaagent_core::home::dir().context("cannot find the teaagent home")?.join("config.toml")),
    }
}

/// Reads a configuration file; a missing file is an empty configuration, except when it was
/// named with `--config`.
pub(crate) fn read(path: &Path, must_exist: bool) -> anyhow::Result<Option<ConfigFile>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => return Ok(None),
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    let file: ConfigFile = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), one_line(&e.to_string())))?;
    Ok(Some(file))
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.chars().all(|c| c == '|' || c == '^' || c.is_whitespace()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Loads the user's and the workspace's files and applies the flags.
pub(crate) fn load(flags: &CallFlags, root: &Path, registry: &Registry) -> anyhow::Result<Settings> {
    let user_path = user_file(flags.config.as_deref())?;
    let mut settings = Settings { user_file: user_path.clone(), ..Settings::default() };
    if let Some(user) = read(&user_path, flags.config.is_some())? {
        apply_user(&mut settings, user, &user_path, registry)?;
    }
    let ws_path = root.join(".teaagent/config.toml");
    if let Some(ws) = read(&ws_path, false)? {
        apply_workspace(&mut settings, ws, &ws_path, registry)?;
    }
    if let Some(mode) = flags.permission_mode {
        settings.mode = mode;
    }
    settings.grants.extend(flags.grant.iter().cloned());
    settings.preapproved.extend(flags.preapprove.iter().cloned());
    Ok(settings)
}

fn check_rules(rules: &[String], key: &str, file: &Path) -> anyhow::Result<()> {
    for (i, rule) in rules.iter().enumerate() {
        Grant::parse(rule).map_err(|e| anyhow::anyhow!("{}: `{key}[{i}]`: {e}", file.display()))?;
    }
    Ok(())
}

fn tool_override(
    name: &str,
    tool: &ToolConfig,
    file: &Path,
    registry: &Registry,
) -> anyhow::Result<ToolOverride> {
    if registry.get(name).is_none() {
        let known: Vec<&str> = registry.iter().map(|t| t.name()).collect();
        bail!("{}: `tools.{name}`: no such tool (known: {})", file.display(), known.join(", "));
    }
    let rate_limit = match &tool.rate_limit {
        None => None,
        Some(r) if r.max_calls == 0 => {
            bail!("{}: `tools.{name}.rate_limit.max_calls` must be at least 1", file.display())
        }
        Some(r) if !(r.window_secs > 0.0 && r.window_secs.is_finite()) => {
            bail!(
                "{}: `tools.{name}.rate_limit.window_secs` must be a positive number of seconds",
                file.display()
            )
        }
        Some(r) => Some(RateLimit { max_calls: r.max_calls, window: Duration::from_secs_f64(r.window_secs) }),
    };
    let timeout = match tool.timeout_secs {
        Some(0) => bail!("{}: `tools.{name}.timeout_secs` must be at least 1", file.display()),
        t => t.map(Duration::from_secs),
    };
    Ok(ToolOverride { rate_limit, timeout })
}

fn apply_user(s: &mut Settings, file: ConfigFile, path: &Path, registry: &Registry) -> anyhow::Result<()> {
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
) -> anyhow::Result<()> {
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
