//! What the policy says about the tools a server offers, before any call: which need an
//! approval (told at start-up), which it refuses whatever the call (left out of `tools/list`),
//! and which it cannot check.

use std::time::SystemTime;

use super::advice::{Advice, SHARED_FILE};
use super::grant::shell_quote;
use super::{PermissionMode, Policy};
use crate::registry::Registry;
use crate::tool::{Tier, ToolDef};
use crate::visible::shown;

impl Policy {
    /// One line for stderr at startup: the tools of `registry` that need an approval under this
    /// policy's mode (each with why: `destructive`, its tier, or `not read-only`) and how to allow
    /// them, or `None` when every tool runs without one. Tools that a deny rule refuses as a
    /// whole, or that a grant allows as a whole, are left out.
    ///
    /// ```text
    /// tools that need an approval in workspace-write mode: delete_note (destructive); allow them with TEAAGENT_GRANTS (one rule per line, e.g. TEAAGENT_GRANTS='delete_note') or `grants` in /home/me/.teaagent/config.toml, or choose another TEAAGENT_PERMISSION_MODE
    /// ```
    pub fn approvals_needed(&self, registry: &Registry) -> Option<String> {
        let now = SystemTime::now();
        let needing: Vec<(&str, String)> = registry
            .iter()
            .filter(|tool| self.mode.requirement(tool).is_some())
            .filter(|tool| {
                !self.denies.iter().any(|d| d.is_live(now) && d.covers_tool(tool.name()))
                    && !self.grants.iter().any(|g| g.is_live(now) && g.covers_tool(tool.name()))
            })
            .map(|tool| {
                let b = tool.behavior();
                let mut why = Vec::new();
                if b.destructive {
                    why.push("destructive".to_owned());
                }
                if tool.tier() >= Tier::High {
                    why.push(format!("tier {}", tool.tier()));
                }
                if why.is_empty() {
                    why.push("not read-only".to_owned());
                }
                (tool.name(), why.join(", "))
            })
            .collect();
        let (first, _) = needing.first()?;
        let list: Vec<String> =
            needing.iter().map(|(name, why)| format!("{} ({why})", shown(name))).collect();
        let mode = self.mode;
        let verb = if mode == PermissionMode::Prompt { "ask the user" } else { "need an approval" };
        let how = match &self.advice {
            Advice::Flags => format!(
                "allow them with --grant (e.g. --grant {}), --preapprove, or another --permission-mode",
                shell_quote(first)
            ),
            Advice::Environment { file, shared } => format!(
                "allow them with TEAAGENT_GRANTS (one rule per line, e.g. TEAAGENT_GRANTS={}){}, or choose another TEAAGENT_PERMISSION_MODE{}",
                shell_quote(first),
                file.as_ref().map(|f| format!(" or `grants` in {}", f.display())).unwrap_or_default(),
                if *shared { SHARED_FILE } else { "" }
            ),
            Advice::Code => format!(
                "allow them in the server's code with `Policy::grant` (e.g. `.grant({first:?})`) or another `Policy::new(mode)`, or let the server take its policy from the environment (`Server::policy_from_environment`)"
            ),
        };
        Some(format!("tools that {verb} in {mode} mode: {}; {how}", list.join(", ")))
    }

    /// Whether every call of `tool` would be refused, whatever its arguments: a live deny rule
    /// covers the tool as a whole, or the mode needs an approval that nothing configured can
    /// give (not `prompt`, no live grant naming the tool, no preapproved digest at all — a
    /// digest does not say which tool it is for). Such tools are left out of what the model
    /// sees where the server chooses so (the gateway's external tools); they are still refused
    /// at `tools/call`.
    pub fn always_refuses(&self, tool: &ToolDef) -> bool {
        let now = SystemTime::now();
        if self.denies.iter().any(|d| d.is_live(now) && d.covers_tool(tool.name())) {
            return true;
        }
        if self.cannot_check(tool).is_some() {
            return true;
        }
        self.mode.requirement(tool).is_some()
            && self.mode != PermissionMode::Prompt
            && self.preapproved.is_empty()
            && !self.grants.iter().any(|g| g.is_live(now) && g.names_tool(tool.name()))
    }

    /// Why the deny rules cannot be checked on `tool` (a tool of another program, an external
    /// server's): a live rule with an argument names it, and some of its arguments have no role
    /// the rule can look at. Such a tool is refused, every call (fail closed); the server says so
    /// when it starts.
    pub fn cannot_check(&self, tool: &ToolDef) -> Option<String> {
        let unchecked = &tool.foreign()?.unchecked;
        if unchecked.is_empty() {
            return None;
        }
        let now = SystemTime::now();
        let rule = self.denies.iter().find(|d| d.is_live(now) && d.has_arg() && d.names_tool(tool.name()))?;
        let args: Vec<String> = unchecked.iter().map(|a| format!("`{}`", shown(a))).collect();
        Some(format!(
            "deny rule `{rule}` applies to it, and its argument{} {} may hold a path or a command that teaagent cannot tell",
            if args.len() == 1 { "" } else { "s" },
            args.join(", ")
        ))
    }
}
