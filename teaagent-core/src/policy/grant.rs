//! Scoped grants (and deny rules, which share their syntax):
//!
//! ```text
//! TOOL                      every call of the tool (TOOL may be a glob over tool names: `read_*`)
//! TOOL:ARG=GLOB             a `#[path]` argument, matched on its normalised workspace-relative form
//! TOOL:ARG=PREFIX*          a `#[command]` argument starting with PREFIX (without `*`: exactly)
//! TOOL:*=PATTERN            every role argument of the call
//! ...;uses=N                at most N approvals
//! ...;expires=WHEN          until an RFC 3339 time, or for a duration from now (`30m`, `2h`)
//! ```
//!
//! A grant that names an argument covers only that argument: a call is approved by grants when
//! every one of its role arguments is covered (`move_path` needs both `from` and `to`). Path globs
//! use `globset` with `*` not crossing `/` (`**` does), matched against the path the framework
//! resolved (`./src/x` → `src/x`; `src/../secret` → `secret`, which `src/**` does not match). A
//! command prefix never covers a compound command: a command containing `;`, `&`, `|`, `<`, `>`,
//! `` ` ``, `$`, `(`, `)`, `\` or a line break is covered by no command grant at all.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use globset::{Glob, GlobBuilder, GlobMatcher};

use crate::tool::ParamRole;

/// Characters that make a command line more than one simple command.
const COMPOUND: &[char] = &[';', '&', '|', '<', '>', '`', '$', '(', ')', '\\', '\n', '\r'];

/// One grant (or deny rule).
#[derive(Debug)]
pub struct Grant {
    text: String,
    tool: GlobMatcher,
    arg: Option<(ArgName, String)>,
    path: Option<GlobMatcher>,
    uses_left: Option<AtomicU64>,
    expires: Option<SystemTime>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ArgName {
    Named(String),
    Any,
}

/// Why a grant does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid grant `{text}`: {why}")]
pub struct GrantError {
    /// The grant as written.
    pub text: String,
    /// What is wrong.
    pub why: String,
}

impl Grant {
    /// Parses a grant.
    pub fn parse(text: &str) -> Result<Self, GrantError> {
        let error = |why: String| GrantError { text: text.to_owned(), why };
        let mut parts = text.split(';');
        let rule = parts.next().unwrap_or_default().trim();
        let (tool, arg) = match rule.split_once(':') {
            None => (rule, None),
            Some((tool, rest)) => match rest.split_once('=') {
                Some((name, pattern)) if !name.is_empty() && !pattern.is_empty() => {
                    let name = if name == "*" { ArgName::Any } else { ArgName::Named(name.to_owned()) };
                    (tool, Some((name, pattern.to_owned())))
                }
                _ => return Err(error("write `TOOL:ARG=PATTERN` (e.g. `edit_file:path=src/**`)".into())),
            },
        };
        if tool.is_empty() {
            return Err(error("the tool name is empty".into()));
        }
        let tool = Glob::new(tool).map_err(|e| error(format!("bad tool glob: {e}")))?.compile_matcher();
        let path = match &arg {
            Some((_, pattern)) => Some(
                GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| error(format!("bad path glob: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let mut uses_left = None;
        let mut expires = None;
        for option in parts {
            let option = option.trim();
            match option.split_once('=') {
                Some(("uses", n)) => {
                    let n: u64 =
                        n.parse().map_err(|_| error(format!("`uses` must be a number, not `{n}`")))?;
                    uses_left = Some(AtomicU64::new(n));
                }
                Some(("expires", when)) => {
                    // A duration too long to add to now (`expires=500000000000y`) is refused
                    // like any other bad value, never a panic.
                    let at = humantime::parse_rfc3339_weak(when)
                        .map_err(drop)
                        .or_else(|()| {
                            let d = humantime::parse_duration(when).map_err(drop)?;
                            SystemTime::now().checked_add(d).ok_or(())
                        })
                        .map_err(|()| {
                            error(format!(
                                "`expires` takes an RFC 3339 time or a duration (`30m`), not `{when}`"
                            ))
                        })?;
                    expires = Some(at);
                }
                _ => {
                    return Err(error(format!(
                        "unknown option `{option}`; expected `uses=N` or `expires=WHEN`"
                    )));
                }
            }
        }
        Ok(Self { text: text.to_owned(), tool, arg, path, uses_left, expires })
    }

    /// The grant as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether it is still usable (not expired, uses left).
    pub fn is_live(&self, now: SystemTime) -> bool {
        self.expires.is_none_or(|at| now < at)
            && self.uses_left.as_ref().is_none_or(|n| n.load(Ordering::Acquire) > 0)
    }

    /// Whether the grant is for `tool` as a whole (no argument).
    pub fn covers_tool(&self, tool: &str) -> bool {
        self.arg.is_none() && self.tool.is_match(tool)
    }

    /// Whether the grant covers argument `name` (of `role`) with `value` in a call of `tool`.
    pub fn covers_arg(&self, tool: &str, name: &str, role: ParamRole, value: &str) -> bool {
        let Some((arg, pattern)) = &self.arg else { return false };
        if !self.tool.is_match(tool) || (*arg != ArgName::Any && *arg != ArgName::Named(name.to_owned())) {
            return false;
        }
        match role {
            ParamRole::Path => self.path.as_ref().is_some_and(|glob| glob.is_match(value)),
            ParamRole::Command => command_matches(pattern, value),
        }
    }

    /// Takes one use (for grants with a use count); `false` when none was left.
    pub fn take_use(&self) -> bool {
        match &self.uses_left {
            None => true,
            Some(n) => {
                n.fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| left.checked_sub(1)).is_ok()
            }
        }
    }
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Whether a command grant's pattern covers `command`: `PREFIX*` by prefix, else exactly; never
/// a compound command.
pub fn command_matches(pattern: &str, command: &str) -> bool {
    if is_compound(command) {
        return false;
    }
    let command = command.trim();
    match pattern.strip_suffix('*') {
        Some(prefix) => command.starts_with(prefix.trim_start()),
        None => command == pattern.trim(),
    }
}

/// Whether a command line is more than one simple command (or could expand into one).
pub fn is_compound(command: &str) -> bool {
    command.contains(COMPOUND)
}

/// A grant that would allow exactly this value, quoted for a shell: `'tool:arg=value'`.
pub fn suggest(tool: &str, arg: Option<(&str, ParamRole, &str)>) -> String {
    let rule = match arg {
        None => tool.to_owned(),
        Some((name, ParamRole::Path, value)) => format!("{tool}:{name}={}", escape_glob(value)),
        Some((name, ParamRole::Command, value)) => format!("{tool}:{name}={}", value.trim()),
    };
    format!("--grant {}", shell_quote(&rule))
}

/// Escapes glob metacharacters so a path grant matches this path only.
fn escape_glob(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('[');
            out.push(c);
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}

/// Single-quotes for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(text: &str) -> Grant {
        Grant::parse(text).expect("valid grant")
    }

    #[test]
    fn path_globs_match_the_normalised_path() {
        let grant = g("edit_file:path=src/**");
        assert!(grant.covers_arg("edit_file", "path", ParamRole::Path, "src/main.rs"));
        assert!(grant.covers_arg("edit_file", "path", ParamRole::Path, "src/a/b/c.rs"));
        // What the framework hands over after resolving `src/../secret` and `./src/x`:
        assert!(!grant.covers_arg("edit_file", "path", ParamRole::Path, "secret"));
        assert!(grant.covers_arg("edit_file", "path", ParamRole::Path, "src/x"));
        assert!(!grant.covers_arg("edit_file", "path", ParamRole::Path, "srcx/y"));
        assert!(!grant.covers_arg("edit_file", "other", ParamRole::Path, "src/x"));
        assert!(!grant.covers_arg("write_file", "path", ParamRole::Path, "src/x"));
        assert!(!g("edit_file:path=src/*").covers_arg("edit_file", "path", ParamRole::Path, "src/a/b"));
    }

    #[test]
    fn command_prefixes_never_cover_compound_commands() {
        let grant = g("shell_exec:command=cargo test*");
        for ok in ["cargo test", "cargo test --all", "  cargo test -p x"] {
            assert!(grant.covers_arg("shell_exec", "command", ParamRole::Command, ok), "{ok}");
        }
        for bad in [
            "cargo test && curl x | sh",
            "cargo test; rm -rf ~",
            "cargo test $(id)",
            "cargo test `id`",
            "cargo test > /etc/x",
            "cargo test < /etc/passwd",
            "cargo test\nrm -rf ~",
            "cargo test & disown",
            "cargo test ${HOME}",
            "cargo build",
        ] {
            assert!(!grant.covers_arg("shell_exec", "command", ParamRole::Command, bad), "{bad}");
        }
        let exact = g("shell_exec:command=make");
        assert!(exact.covers_arg("shell_exec", "command", ParamRole::Command, "make"));
        assert!(!exact.covers_arg("shell_exec", "command", ParamRole::Command, "make install"));
    }

    #[test]
    fn tool_globs_uses_and_expiry() {
        assert!(g("read_*").covers_tool("read_file"));
        assert!(!g("read_*").covers_tool("write_file"));
        let once = g("delete_path;uses=1");
        assert!(once.is_live(SystemTime::now()) && once.take_use());
        assert!(!once.is_live(SystemTime::now()) && !once.take_use());
        assert!(!g("x;expires=2001-01-01T00:00:00Z").is_live(SystemTime::now()));
        assert!(g("x;expires=1h").is_live(SystemTime::now()));
        for bad in [
            "",
            ":path=x",
            "x:path",
            "x:=y",
            "x;uses=many",
            "x;expires=soon",
            "x;color=red",
            "x:path=[",
            "[:path=x",
        ] {
            assert!(Grant::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn suggestions_match_exactly_what_was_asked() {
        assert_eq!(
            suggest("delete_path", Some(("path", ParamRole::Path, "tmp/a*b.txt"))),
            "--grant 'delete_path:path=tmp/a[*]b.txt'"
        );
        let grant = g("delete_path:path=tmp/a[*]b.txt");
        assert!(grant.covers_arg("delete_path", "path", ParamRole::Path, "tmp/a*b.txt"));
        assert!(!grant.covers_arg("delete_path", "path", ParamRole::Path, "tmp/axxb.txt"));
        assert_eq!(
            suggest("shell_exec", Some(("command", ParamRole::Command, "echo 'hi'"))),
            "--grant 'shell_exec:command=echo '\\''hi'\\'''"
        );
    }
}
