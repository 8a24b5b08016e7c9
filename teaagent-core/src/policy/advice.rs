//! What a refusal tells the user to do, spelled for where the server's policy is configured
//! ([`Advice`]), and the question shown when the user is asked.

use std::path::PathBuf;

use super::facts::CallFacts;
use super::grant::{shell_quote, suggest_rule};
use super::mode::PermissionMode;
use crate::visible::shown;

/// Where the policy of a server is configured, so that a denial's advice names what works for
/// that server (module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Advice {
    /// The `teaagent` command: `--grant`, `--preapprove`, `--permission-mode`.
    Flags,
    /// The `TEAAGENT_*` environment variables and the user's configuration file
    /// ([`crate::config`]).
    Environment {
        /// The configuration file named in the advice: the server's own
        /// (`config::server_file`), else the user's (`None`: only the variables).
        file: Option<PathBuf>,
        /// Whether that file is shared by every server on the machine (the server has no name
        /// of its own): the advice then says how to get a file of its own.
        shared: bool,
    },
    /// The code that built the [`Policy`](super::Policy): [`Policy::grant`](super::Policy::grant), [`Policy::preapprove`](super::Policy::preapprove),
    /// [`Policy::new`](super::Policy::new).
    #[default]
    Code,
}

/// The question shown to the user: tool, tier, what it does to what.
///
/// Every part a client or a tool author controls — the tool's name, argument names and values,
/// the description line — is shown through [`shown`]: escaped so no terminal control, bidi
/// override, zero-width character or line break can hide or fake a part of it, and never cut
/// (only long runs of one character are folded, with their count), so the part of a long command
/// that differs from a harmless one is always in the question.
pub(crate) fn question(call: &CallFacts<'_>) -> String {
    let tool = call.tool;
    let b = tool.behavior();
    let mut flags = Vec::new();
    if b.destructive {
        flags.push("destructive");
    }
    if b.stateful {
        flags.push("stateful");
    }
    if b.open_world {
        flags.push("open world");
    }
    let mut text = format!("Allow `{}` (tier {}", shown(tool.name()), tool.tier());
    for f in flags {
        text.push_str(", ");
        text.push_str(f);
    }
    text.push_str(")?");
    for (arg, _, value) in &call.roles {
        let chars = value.chars().count();
        let size = if chars > 300 { format!(" ({chars} characters)") } else { String::new() };
        text.push_str(&format!("\n{}: {}{size}", shown(arg), shown(value)));
        // A path through a link: what it is called, and (above) where the call will act.
        if let Some((_, entry)) = call.entries.iter().find(|(a, e)| a == arg && e != value) {
            text.push_str(&format!(" (named {})", shown(entry)));
        }
    }
    text.push_str(&format!("\n{}", shown(first_line(tool.description()))));
    text
}

pub(super) fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// The exact settings that would allow this call, spelled for where the policy is configured
/// (module docs): this exact call (its digest), calls with these role arguments (or every call
/// of a tool without any), every such call (the least permissive mode that runs the tool).
pub(super) fn how_to_allow(call: &CallFacts<'_>, advice: &Advice) -> String {
    let name = call.tool.name();
    let rules: Vec<String> = if call.roles.is_empty() {
        vec![suggest_rule(name, None)]
    } else {
        call.roles.iter().map(|(arg, role, value)| suggest_rule(name, Some((arg, *role, value)))).collect()
    };
    let which = if call.roles.is_empty() { "every call of the tool" } else { "calls with these arguments" };
    let mode = PermissionMode::needed_for(call.tool);
    let digest = call.digest;
    // A rule can only be advised when its text is plain: `TEAAGENT_GRANTS` holds one rule per
    // line, so a value with a line break (`echo hi⏎shell_exec`) would turn into a second rule
    // — a grant of the whole tool — once pasted; and no grant covers such a value anyway (a
    // command with a line break is compound). Then only this exact call or the mode is advised.
    if rules.iter().any(|r| r.chars().any(char::is_control)) {
        return match advice {
            Advice::Flags => format!(
                "allow it with --preapprove {digest} (this exact call; no grant covers an argument with a line break or control character), or --permission-mode {mode} if you trust every such call"
            ),
            Advice::Environment { .. } => format!(
                "allow it in the server's environment (the `env` of its entry in the MCP client's configuration) with TEAAGENT_PREAPPROVE={digest} (this exact call; no grant covers an argument with a line break or control character), or TEAAGENT_PERMISSION_MODE={mode} if you trust every such call"
            ),
            Advice::Code => format!(
                "allow it in the server's code, on the `Policy` given to `Server::policy`: `.preapprove(\"{digest}\")?` (this exact call; no grant covers an argument with a line break or control character), or `Policy::new(PermissionMode::{})` if you trust every such call",
                mode.rust_name()
            ),
        };
    }
    match advice {
        // The grant first (the fix the error's message carries), then this exact call, then
        // the mode.
        Advice::Flags => {
            let grants: Vec<String> = rules.iter().map(|r| format!("--grant {}", shell_quote(r))).collect();
            format!(
                "allow it with {} ({which}), or --preapprove {digest} (this exact call), or --permission-mode {mode} if you trust every such call",
                grants.join(" ")
            )
        }
        Advice::Environment { file, shared } => {
            let in_file = file
                .as_ref()
                .map(|f| {
                    let grants: Vec<String> = rules.iter().map(|r| toml_string(r)).collect();
                    format!(
                        "; or in {} with grants = [{}] or permission_mode = \"{mode}\"{}",
                        f.display(),
                        grants.join(", "),
                        if *shared { SHARED_FILE } else { "" }
                    )
                })
                .unwrap_or_default();
            format!(
                "allow it with {} ({which}) in the server's environment (the `env` of its entry in the MCP client's configuration), or TEAAGENT_PREAPPROVE={digest} (this exact call), or TEAAGENT_PERMISSION_MODE={mode} if you trust every such call{in_file}",
                env_lines("TEAAGENT_GRANTS", &rules)
            )
        }
        Advice::Code => {
            let grants: String = rules.iter().map(|r| format!(".grant({r:?})?")).collect();
            format!(
                "allow it with `{grants}` ({which}) on the `Policy` given to `Server::policy`, or `.preapprove(\"{digest}\")?` (this exact call), or `Policy::new(PermissionMode::{})` if you trust every such call; or let the server take its policy from the environment (`Server::policy_from_environment`)",
                mode.rust_name()
            )
        }
    }
}

/// Said of a configuration file every server on the machine reads (the server has no name).
pub(super) const SHARED_FILE: &str = " (that file is read by every server on this machine that has no name of its own, and by the `teaagent` command: name this server with `Server::server_info` to give it a file of its own, $TEAAGENT_HOME/servers/NAME.toml)";

/// `NAME='value'` for a POSIX shell; several lines as `NAME=$'a\nb'` (bash, zsh, ksh).
fn env_lines(name: &str, lines: &[String]) -> String {
    if let [one] = lines {
        return format!("{name}={}", shell_quote(one));
    }
    let escaped: Vec<String> = lines.iter().map(|l| l.replace('\\', "\\\\").replace('\'', "\\'")).collect();
    format!("{name}=$'{}'", escaped.join("\\n"))
}

/// A TOML basic string: `"…"` with `\`, `"` and control characters escaped.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
