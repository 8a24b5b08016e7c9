//! `[mcp_servers.NAME]`: an external MCP server the `teaagent` command may start behind the
//! gateway, as the user's file writes it, checked.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{ConfigError, ServerSandbox};
use crate::tool::Tier;

const MIN_RESULT_BYTES: u64 = 1024;
const MAX_RESULT_BYTES: u64 = 64 * 1024 * 1024;
const DEFAULT_RESULT_BYTES: usize = 1024 * 1024;

/// An external MCP server (`[mcp_servers.NAME]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServer {
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its environment: all of it (nothing else of teaagent's environment reaches it).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The tier of its tools in the permission policy: `low`, `medium`, `high` (the default:
    /// an external server's own annotations are never trusted) or `critical`.
    #[serde(default)]
    pub tier: Option<String>,
    /// Tiers of single tools, by the server's own tool names (over `tier`).
    #[serde(default)]
    pub tiers: BTreeMap<String, String>,
    /// What the server's process may reach (`[mcp_servers.NAME.sandbox]`); by default it may
    /// write only a temporary directory of its own, and reach the network.
    #[serde(default)]
    pub sandbox: ServerSandbox,
    /// The most of a tool result passed on, in bytes (default 1 MiB): the rest is cut, with a
    /// marker. Lines from the server longer than four times this (at least 8 MiB, at most 64
    /// MiB) are not read at all: the call they answer fails at once.
    #[serde(default)]
    pub max_result_bytes: Option<u64>,
    /// What its tools' arguments are, for deny rules and grants on paths and commands
    /// (`[mcp_servers.NAME.roles]`): by the server's own tool name (`"*"` for every tool), then
    /// by argument (`"*"` for every argument): `"path"`, `"command"` or `"text"`. Arguments not
    /// declared get a role from their schema where it is clear (`teaagent_core::gateway`).
    #[serde(default)]
    pub roles: BTreeMap<String, BTreeMap<String, String>>,
}

impl McpServer {
    /// The tier of its tools (`tier`; `high` when none is set or it is not valid).
    pub fn tier(&self) -> Tier {
        self.tier.as_deref().and_then(Tier::parse).unwrap_or(Tier::High)
    }

    /// The tier of its tool `tool` (`tiers.TOOL`, else [`McpServer::tier`]).
    pub fn tier_of(&self, tool: &str) -> Tier {
        self.tiers.get(tool).and_then(|t| Tier::parse(t)).unwrap_or_else(|| self.tier())
    }

    /// [`McpServer::max_result_bytes`], or its default.
    pub fn max_result_bytes(&self) -> usize {
        self.max_result_bytes.map_or(DEFAULT_RESULT_BYTES, |n| n as usize)
    }

    pub(super) fn check(&self, name: &str, file: &Path) -> Result<(), ConfigError> {
        let bad = |key: String, value: &str| ConfigError::Invalid {
            file: file.to_path_buf(),
            why: format!("`{key}` = {value:?}: expected one of \"low\", \"medium\", \"high\", \"critical\""),
        };
        if let Some(t) = &self.tier
            && Tier::parse(t).is_none()
        {
            return Err(bad(format!("mcp_servers.{name}.tier"), t));
        }
        for (tool, t) in &self.tiers {
            if Tier::parse(t).is_none() {
                return Err(bad(format!("mcp_servers.{name}.tiers.{tool}"), t));
            }
        }
        if let Some(n) = self.max_result_bytes
            && !(MIN_RESULT_BYTES..=MAX_RESULT_BYTES).contains(&n)
        {
            return Err(ConfigError::Invalid {
                file: file.to_path_buf(),
                why: format!(
                    "`mcp_servers.{name}.max_result_bytes` = {n}: expected a whole number of bytes from {MIN_RESULT_BYTES} to {MAX_RESULT_BYTES}"
                ),
            });
        }
        for (tool, args) in &self.roles {
            for (arg, role) in args {
                if !matches!(role.as_str(), "path" | "command" | "text") {
                    return Err(ConfigError::Invalid {
                        file: file.to_path_buf(),
                        why: format!(
                            "`mcp_servers.{name}.roles.{tool}.{arg}` = {role:?}: expected one of \"path\", \"command\", \"text\""
                        ),
                    });
                }
            }
        }
        self.sandbox.writable_dirs(name, file)?;
        Ok(())
    }
}
