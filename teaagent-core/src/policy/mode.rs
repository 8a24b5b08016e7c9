//! The permission modes: how much runs without an approval, and which tools each asks about.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::tool::{Tier, ToolDef};

/// How much runs without an approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Only read-only tools.
    ReadOnly,
    /// Read-only tools and non-destructive `low`/`medium` tools.
    #[default]
    WorkspaceWrite,
    /// Read-only tools; everything else is asked.
    Prompt,
    /// Everything up to `high`.
    Allow,
    /// Everything.
    DangerFullAccess,
}

impl PermissionMode {
    /// Every mode, in the table's order.
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::ReadOnly,
        PermissionMode::WorkspaceWrite,
        PermissionMode::Prompt,
        PermissionMode::Allow,
        PermissionMode::DangerFullAccess,
    ];

    /// The flag's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::ReadOnly => "read-only",
            PermissionMode::WorkspaceWrite => "workspace-write",
            PermissionMode::Prompt => "prompt",
            PermissionMode::Allow => "allow",
            PermissionMode::DangerFullAccess => "danger-full-access",
        }
    }

    /// How permissive the mode is, for "may only tighten" comparisons: `read-only` 0 …
    /// `danger-full-access` 4 (`prompt` sits with `workspace-write`'s reads but asks for the
    /// rest, so it counts as tighter than `workspace-write`).
    pub fn permissiveness(self) -> u8 {
        match self {
            PermissionMode::ReadOnly => 0,
            PermissionMode::Prompt => 1,
            PermissionMode::WorkspaceWrite => 2,
            PermissionMode::Allow => 3,
            PermissionMode::DangerFullAccess => 4,
        }
    }

    /// The rule recorded for calls this mode runs without an approval.
    pub(super) fn no_approval_rule(self) -> &'static str {
        match self {
            PermissionMode::ReadOnly => "mode `read-only` runs read-only tools without an approval",
            PermissionMode::WorkspaceWrite => "mode `workspace-write` runs this tool without an approval",
            PermissionMode::Prompt => "mode `prompt` runs read-only tools without an approval",
            PermissionMode::Allow => "mode `allow` runs this tool without an approval",
            PermissionMode::DangerFullAccess => "mode `danger-full-access` runs everything",
        }
    }

    /// `None` when `tool` runs without an approval in this mode, else the rule that asks for one.
    pub(super) fn requirement(self, tool: &ToolDef) -> Option<String> {
        let b = tool.behavior();
        if b.read_only {
            return None;
        }
        let tier = tool.tier();
        let mode = self.as_str();
        match self {
            PermissionMode::ReadOnly => {
                Some(format!("mode `{mode}`: only read-only tools run without an approval"))
            }
            PermissionMode::Prompt => {
                Some(format!("mode `{mode}`: tools that are not read-only need the user's approval"))
            }
            PermissionMode::WorkspaceWrite if b.destructive => {
                Some(format!("mode `{mode}`: destructive tools need an approval"))
            }
            PermissionMode::WorkspaceWrite if tier >= Tier::High => {
                Some(format!("mode `{mode}`: tier `{tier}` tools need an approval"))
            }
            PermissionMode::Allow if tier == Tier::Critical => {
                Some(format!("mode `{mode}`: tier `critical` tools need an approval"))
            }
            _ => None,
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PermissionMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|m| m.as_str() == s).ok_or_else(|| {
            format!(
                "unknown permission mode `{s}`; expected one of {}",
                Self::ALL.map(|m| format!("`{m}`")).join(", ")
            )
        })
    }
}

impl PermissionMode {
    /// The least permissive mode that runs `tool` without an approval.
    pub(super) fn needed_for(tool: &ToolDef) -> PermissionMode {
        Self::ALL
            .into_iter()
            .filter(|m| *m != PermissionMode::Prompt)
            .find(|m| m.requirement(tool).is_none())
            .unwrap_or(PermissionMode::DangerFullAccess)
    }

    /// The variant's name in Rust (`WorkspaceWrite`), for advice about code.
    pub(super) fn rust_name(self) -> &'static str {
        match self {
            PermissionMode::ReadOnly => "ReadOnly",
            PermissionMode::WorkspaceWrite => "WorkspaceWrite",
            PermissionMode::Prompt => "Prompt",
            PermissionMode::Allow => "Allow",
            PermissionMode::DangerFullAccess => "DangerFullAccess",
        }
    }
}
