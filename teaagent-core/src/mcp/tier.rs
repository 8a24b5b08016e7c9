//! The vocabulary of a tool's annotations: its security tier and its behaviour flags, which the
//! tool list announces (`securityTier`, MCP's hints) and the policy decides by.

use std::fmt;

use serde::Serialize;

/// A tool's security tier: how much harm a call can do, which the permission modes decide by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Tier {
    /// Read-only, no external side effects.
    Low,
    /// Writes to the workspace only.
    Medium,
    /// Writes to external systems or executes a shell.
    High,
    /// Irreversible or affects production systems.
    Critical,
}

impl Tier {
    /// The attribute's spelling: `low`, `medium`, `high`, `critical`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Low => "low",
            Tier::Medium => "medium",
            Tier::High => "high",
            Tier::Critical => "critical",
        }
    }

    /// Parses the attribute's spelling.
    pub fn parse(s: &str) -> Option<Tier> {
        [Tier::Low, Tier::Medium, Tier::High, Tier::Critical].into_iter().find(|t| t.as_str() == s)
    }

    /// The tier a tool gets when none is given: `low` if read-only, `high` if destructive,
    /// else `medium`.
    pub fn default_for(behavior: Behavior) -> Tier {
        if behavior.read_only {
            Tier::Low
        } else if behavior.destructive {
            Tier::High
        } else {
            Tier::Medium
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The behaviour flags of a tool (the attribute's `read_only`, `destructive`, ...).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Behavior {
    /// Never modifies anything.
    pub read_only: bool,
    /// May delete or overwrite data.
    pub destructive: bool,
    /// Repeating a call has no further effect.
    pub idempotent: bool,
    /// Modifies persistent external state.
    pub stateful: bool,
    /// Reaches an open world (network, external systems).
    pub open_world: bool,
}
