//! What the workspace's file (`.teaagent/config.toml`, in a repository that may have been
//! cloned from anyone) may change in the settings: only tighten them. A mode more permissive,
//! a grant added, a limit raised, `[state]`, `[audit]`, the request-state key, servers and
//! anything that lets commands reach further are ignored, each with a warning.

use std::path::Path;

use super::{ConfigError, ConfigFile, Settings, check_rules};
use crate::Registry;

impl Settings {
    /// Applies the workspace's `file` (at `path`) over the user's settings, tightening only (module
    /// docs).
    pub(super) fn apply_workspace(
        &mut self,
        file: ConfigFile,
        path: &Path,
        registry: &Registry,
        strict: bool,
    ) -> Result<(), ConfigError> {
        // Warnings are raw text too: whoever prints them escapes them.
        let shown = path.display();
        if file.state.is_some() {
            // Whoever names the Redis decides the limits: never a cloned repository.
            self.warnings.push(format!(
                "{shown}: ignored `[state]`: only your own configuration or TEAAGENT_REDIS_URL may name the fleet's shared state"
            ));
        }
        if file.audit.is_some() {
            self.warnings.push(format!(
                "{shown}: ignored `[audit]`: only your own configuration may set how the audit log is rotated"
            ));
        }
        if let Some(shell) = &file.shell {
            // A workspace may keep commands off the network and refuse unenforced sandboxes;
            // never the other way.
            match shell.network {
                Some(true) if !self.shell.network => self.warnings.push(format!(
                    "{shown}: ignored `[shell] network = true`: a workspace file may only tighten what commands reach"
                )),
                Some(network) => self.shell.network = network && self.shell.network,
                None => {}
            }
            if shell.writable.as_ref().is_some_and(|w| !w.is_empty()) {
                self.warnings.push(format!(
                    "{shown}: ignored `[shell] writable`: only your own configuration may let commands write outside the workspace"
                ));
            }
            match shell.warns(path)? {
                Some(true) if !self.shell.warn_unsandboxed => self.warnings.push(format!(
                    "{shown}: ignored `[shell] unsandboxed = \"warn\"`: a workspace file may only tighten what commands reach"
                )),
                Some(warn) => self.shell.warn_unsandboxed = warn && self.shell.warn_unsandboxed,
                None => {}
            }
            if let Some(env) = &shell.env {
                // More left out: fine. Anything passed that would not be: ignored.
                self.shell.env_exclude.extend(env.exclude.iter().cloned());
                if env.inherit_secrets == Some(true)
                    || !env.include.is_empty()
                    || !env.include_only.is_empty()
                    || !env.set.is_empty()
                {
                    self.warnings.push(format!(
                        "{shown}: ignored `[shell.env]` `inherit_secrets`, `include`, `include_only` and `set`: a workspace file may only leave more out (`exclude`)"
                    ));
                }
            }
        }
        if file.request_state_key.is_some() || file.request_state_previous_key.is_some() {
            // Whoever sets the key can seal approvals: never a cloned repository.
            self.warnings.push(format!(
                "{shown}: ignored `request_state_key`: only your own configuration or TEAAGENT_REQUEST_STATE_KEY may set the key that seals approvals"
            ));
        }
        if let Some(mode) = file.permission_mode {
            if mode.permissiveness() <= self.mode.permissiveness() {
                self.mode = mode;
            } else {
                self.warnings.push(format!(
                    "{shown}: ignored `permission_mode = \"{mode}\"`: a workspace file may only tighten the mode (yours is `{}`)",
                    self.mode
                ));
            }
        }
        if let Some(grants) = file.grants {
            check_rules(&grants, "grants", path)?;
            for grant in grants.iter().filter(|g| !self.grants.contains(g)) {
                self.warnings.push(format!(
                    "{shown}: ignored grant `{grant}`: a workspace file may only remove grants, not add them"
                ));
            }
            self.grants.retain(|g| grants.contains(g));
        }
        if let Some(deny) = file.deny {
            check_rules(&deny, "deny", path)?;
            self.denies.extend(deny);
        }
        for (name, tool) in &file.tools {
            let Some(wanted) = self.tool_override(name, tool, path, registry, strict)? else { continue };
            let def = registry.get(name).map(|t| (t.rate_limit(), t.timeout()));
            let entry = self.overrides.entry(name.clone()).or_default();
            let mut ignored = Vec::new();
            if let Some(limit) = wanted.rate_limit {
                let current = entry.rate_limit.or(def.and_then(|d| d.0));
                let tighter =
                    current.is_none_or(|c| limit.max_calls <= c.max_calls && limit.window >= c.window);
                if tighter {
                    entry.rate_limit = Some(limit);
                } else {
                    ignored.push(format!(
                        "{shown}: ignored `tools.{name}.rate_limit`: a workspace file may only lower limits"
                    ));
                }
            }
            if let Some(timeout) = wanted.timeout {
                let current = entry.timeout.or(def.and_then(|d| d.1));
                if current.is_none_or(|c| timeout <= c) {
                    entry.timeout = Some(timeout);
                } else {
                    ignored.push(format!(
                        "{shown}: ignored `tools.{name}.timeout_secs`: a workspace file may only shorten timeouts"
                    ));
                }
            }
            self.warnings.extend(ignored);
        }
        for name in file.mcp_servers.keys() {
            self.warnings.push(format!(
                "{shown}: ignored `mcp_servers.{name}`: only your own configuration ({}) may declare servers",
                self.user_file.display()
            ));
        }
        Ok(())
    }
}
