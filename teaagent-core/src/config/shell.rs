//! `[shell]` and `[mcp_servers.NAME.sandbox]`: what commands and external servers may reach
//! (`teaagent_core::sandbox`) and the environment commands get (`[shell.env]`), as the files
//! write them, checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

/// `[shell]` as written: the command sandbox (`teaagent_core::sandbox`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ShellConfig {
    /// Commands may reach the network.
    pub(super) network: Option<bool>,
    /// More directories commands may write (absolute, or under `~/`).
    pub(super) writable: Option<Vec<String>>,
    /// Where the sandbox cannot be enforced: `"refuse"` (default) or `"warn"`.
    pub(super) unsandboxed: Option<String>,
    /// The commands' environment (`[shell.env]`).
    pub(super) env: Option<ShellEnvConfig>,
}

/// `[shell.env]` as written (`tools::shell_exec`'s environment policy).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ShellEnvConfig {
    pub(super) inherit_secrets: Option<bool>,
    #[serde(default)]
    pub(super) exclude: Vec<String>,
    #[serde(default)]
    pub(super) include: Vec<String>,
    #[serde(default)]
    pub(super) include_only: Vec<String>,
    #[serde(default)]
    pub(super) set: BTreeMap<String, String>,
}

/// What commands may reach, from `[shell]` (the user's file; a workspace's may only tighten).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellSettings {
    /// Commands may reach the network (`[shell] network`, default `false`).
    pub network: bool,
    /// More directories commands may write (`[shell] writable`, the user's file only).
    pub writable: Vec<PathBuf>,
    /// Run commands with what can be enforced, and a warning, where the sandbox cannot be
    /// (`[shell] unsandboxed = "warn"`); else they are refused.
    pub warn_unsandboxed: bool,
    /// `[shell.env] inherit_secrets`: pass names that look like credentials.
    pub env_inherit_secrets: bool,
    /// `[shell.env] exclude`: more names to leave out (globs).
    pub env_exclude: Vec<String>,
    /// `[shell.env] include`: names that look like credentials, passed all the same (globs).
    pub env_include: Vec<String>,
    /// `[shell.env] include_only`: when not empty, the only names passed (globs).
    pub env_include_only: Vec<String>,
    /// `[shell.env] set`: variables set for every command.
    pub env_set: BTreeMap<String, String>,
    /// Variables the configuration names as holding a secret of the server
    /// (`[state] password_env`): never passed.
    pub env_secrets: Vec<String>,
}

impl ShellConfig {
    /// `unsandboxed`, checked: whether it says `"warn"`.
    pub(super) fn warns(&self, path: &Path) -> Result<Option<bool>, ConfigError> {
        match self.unsandboxed.as_deref() {
            None => Ok(None),
            Some("refuse") => Ok(Some(false)),
            Some("warn") => Ok(Some(true)),
            Some(other) => Err(ConfigError::Invalid {
                file: path.to_path_buf(),
                why: format!(
                    "`[shell] unsandboxed` must be \"refuse\" or \"warn\" (got \"{}\")",
                    crate::visible::escape(other)
                ),
            }),
        }
    }

    /// `writable`, checked: absolute paths, or `~/…` under the user's home.
    pub(super) fn writable(&self, path: &Path) -> Result<Vec<PathBuf>, ConfigError> {
        writable_dirs(self.writable.as_deref().unwrap_or_default(), "[shell] writable", path)
    }
}

/// `[mcp_servers.NAME.sandbox]`: the OS sandbox of an external server's process (the same as
/// `shell_exec`'s, `teaagent_core::sandbox`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSandbox {
    /// May reach the network (default `true`: most servers are clients of some service).
    pub network: Option<bool>,
    /// Directories it may write besides its temporary directory (absolute, or under `~/`).
    #[serde(default)]
    pub writable: Vec<String>,
    /// No sandbox at all (default `false`).
    #[serde(default)]
    pub unrestricted: bool,
}

impl ServerSandbox {
    /// `writable`, expanded and checked.
    pub fn writable_dirs(&self, name: &str, file: &Path) -> Result<Vec<PathBuf>, ConfigError> {
        writable_dirs(&self.writable, &format!("mcp_servers.{name}.sandbox.writable"), file)
    }
}

/// Directories a configuration lets commands write: absolute paths, or `~/…` under `$HOME`.
fn writable_dirs(dirs: &[String], key: &str, file: &Path) -> Result<Vec<PathBuf>, ConfigError> {
    let invalid = |why: String| ConfigError::Invalid { file: file.to_path_buf(), why };
    let mut out = Vec::new();
    for dir in dirs {
        let expanded = match dir.strip_prefix("~/") {
            Some(rest) => match std::env::var_os("HOME") {
                Some(home) => PathBuf::from(home).join(rest),
                None => {
                    return Err(invalid(format!(
                        "`{key}`: `{}` needs $HOME, which is not set",
                        crate::visible::escape(dir)
                    )));
                }
            },
            None => PathBuf::from(dir),
        };
        if !expanded.is_absolute() {
            return Err(invalid(format!(
                "`{key}`: `{}` must be an absolute path (or start with `~/`)",
                crate::visible::escape(dir)
            )));
        }
        out.push(expanded);
    }
    Ok(out)
}
