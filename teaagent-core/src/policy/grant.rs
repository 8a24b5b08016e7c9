//! Scoped grants (and deny rules, which share their syntax):
//!
//! ```text
//! TOOL                      every call of the tool (TOOL may be a glob over tool names: `read_*`)
//! TOOL:ARG=GLOB             a `#[path]` argument, matched on its normalised workspace-relative form
//! TOOL:ARG=WORDS*           a `#[command]` argument: these words, then any further whole words
//! TOOL:ARG=WORDS            a `#[command]` argument: exactly these words
//! TOOL:*=PATTERN            every role argument of the call
//! ...;uses=N                at most N approvals
//! ...;expires=WHEN          until an RFC 3339 time, or for a duration from now (`30m`, `2h`)
//! ```
//!
//! **Grants** are fail-closed towards refusing. A grant that names an argument covers only that
//! argument: a call is approved by grants when every one of its role arguments is covered
//! (`move_path` needs both `from` and `to`). Path globs use `globset` with `*` not crossing `/`
//! (`**` does), matched against the path the framework resolved (`./src/x` → `src/x`;
//! `src/../secret` → `secret`, which `src/**` does not match). Commands are compared **word by
//! word** (words are what the shell splits on spaces and tabs): `cargo test*` covers `cargo test`
//! and `cargo test --all`, never `cargo testx`, and `echo safe*` never covers `echo safex` or
//! `echo safe'x y'` (the first words must be exactly the grant's, so no quote can carry a word
//! across the boundary). A prefix grant lets the caller add *any* further arguments, including
//! ones that change what the program does (`--config`, `--output`, `-c`); an exact grant (no
//! `*`) is the safe kind. A command that is more than one simple command or could expand into one
//! — containing `;`, `&`, `|`, `<`, `>`, `` ` ``, `$`, `(`, `)`, `\` or a line break — is covered
//! by no command grant at all.
//!
//! **Deny rules** are fail-closed the other way ([`Grant::may_deny`]): a deny rule refuses every
//! call it cannot prove to be outside it.
//! - A path deny rule (`*:path=secrets/**`) applies to every `#[path]` argument of the call
//!   (`path`, `from`, `to`, `cwd`, …) whatever argument name it spells: a path is a path, and
//!   a rule written for `path` must not be dodged through `cwd`. Only a rule that names a
//!   `#[command]` argument of a tool served (`*:command=rm*`) is not a path rule
//!   ([`Grant::is_path_rule`]). It is matched against both the
//!   entry the call names and where it leads (a link in `pub/` to `secrets/key` is denied, and
//!   so is deleting the link `secrets/link`), and so is a directory whose every child it would
//!   match (`secrets/**` refuses `list_directory secrets`). The same rules hide the paths from walks, searches
//!   and resources ([`crate::policy::Policy::hidden_paths`]).
//! - A command deny rule (`shell_exec:command=touch*`) refuses a command line unless it can
//!   show that no program the line runs matches. A line with anything the check cannot follow —
//!   the compound characters above, quotes (`'`, `"`), globs and braces (`*`, `?`, `[`, `]`,
//!   `{`, `}`), `!`, `^` or another control character — is refused outright. A plain line is split
//!   into words, and **every** word counts as a possible program, not only the first: wrappers
//!   such as `env`, `command`, `exec`, `nice`, `timeout`, `xargs`, `sudo`, `sh -c` run their
//!   arguments, and so may any program the rule cannot know. A word names a program when the
//!   whole word, or one of its pieces between `/`, `=`, `+`, `,`, `:` and other punctuation, or
//!   an option's glued value (`-Stouch`), is the rule's first word (with `*` right after it: starts
//!   with it); the rule's further words must then appear, in order, among the following words.
//!   So `touch*` refuses `touch x`, `true && touch x`, `A=1 touch x`, `/usr/bin/env touch x`,
//!   `timeout 5 touch x` and also `echo touch` (over-refusing is the safe side). A rule's further
//!   words are compared as written, and options have many spellings (`rm -rf`, `rm -fr`,
//!   `rm -r -f`, `rm --recursive --force`): only the program is matched robustly, so deny the
//!   program (`rm*`) when it matters. What no rule on a
//!   command line can see is what a program does with its input: an interpreter's program
//!   (`python3 -c …`, `perl -e …`), a script in the workspace, a git alias. Do not grant a shell
//!   to code you would need such a rule against.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};

use super::tool_glob::ToolGlob;
use crate::tool::ParamRole;

/// Characters that make a command line more than one simple command.
const COMPOUND: &[char] = &[';', '&', '|', '<', '>', '`', '$', '(', ')', '\\', '\n', '\r'];

/// One grant (or deny rule).
#[derive(Debug)]
pub struct Grant {
    text: String,
    tool: ToolGlob,
    arg: Option<(ArgName, String)>,
    path: Option<GlobMatcher>,
    uses_left: Option<AtomicU64>,
    /// `uses=N` as written (a fleet counts its uses from it in the shared state).
    uses_total: Option<u64>,
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
        let tool = ToolGlob::new(tool).map_err(|e| error(format!("bad tool glob: {e}")))?;
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
        let mut uses_total = None;
        let mut expires = None;
        for option in parts {
            let option = option.trim();
            match option.split_once('=') {
                Some(("uses", n)) => {
                    let n: u64 =
                        n.parse().map_err(|_| error(format!("`uses` must be a number, not `{n}`")))?;
                    uses_left = Some(AtomicU64::new(n));
                    uses_total = Some(n);
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
        Ok(Self { text: text.to_owned(), tool, arg, path, uses_left, uses_total, expires })
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

    /// Whether this rule, as a deny rule, refuses argument `name` (of `role`) with `value` in a
    /// call of `tool`. Fail-closed: a path rule applies to every path argument whatever argument
    /// it names; a command rule refuses what it cannot prove to be outside it (module docs).
    /// `is_command_arg` says which argument names are `#[command]` arguments.
    pub fn may_deny(
        &self,
        tool: &str,
        name: &str,
        role: ParamRole,
        value: &str,
        is_command_arg: impl Fn(&str) -> bool,
    ) -> bool {
        let Some((arg, pattern)) = &self.arg else { return false };
        if !self.tool.is_match(tool) {
            return false;
        }
        match role {
            // A directory whose children the rule denies is denied too (`secrets/**` refuses
            // `list_directory secrets` and `search_text` in it), as is any path the rule matches.
            ParamRole::Path => {
                self.is_path_rule(is_command_arg)
                    && self.path.as_ref().is_some_and(|glob| {
                        let child = if value == "." { "\u{0}".to_owned() } else { format!("{value}/\u{0}") };
                        glob.is_match(value) || glob.is_match(child)
                    })
            }
            // A command is a command whatever its argument is called (`cmd`, `script` of an
            // external server): a rule naming a command argument binds them all.
            ParamRole::Command => {
                (match arg {
                    ArgName::Any => true,
                    ArgName::Named(named) => named == name || is_command_arg(named),
                }) && command_may_match(pattern, value)
            }
        }
    }

    /// Whether this rule is about paths: every rule with an argument is, except one that names a
    /// `#[command]` argument (`shell_exec:command=…` says nothing about `cwd`, nor about the
    /// files of other tools). `*` and any other name count as paths: a rule is never dodged by
    /// calling the path argument something else.
    pub fn is_path_rule(&self, is_command_arg: impl Fn(&str) -> bool) -> bool {
        match &self.arg {
            None => false,
            Some((ArgName::Any, _)) => true,
            Some((ArgName::Named(arg), _)) => !is_command_arg(arg),
        }
    }

    /// Whether the rule names an argument (`TOOL:ARG=PATTERN`).
    pub fn has_arg(&self) -> bool {
        self.arg.is_some()
    }

    /// The rule's tool pattern, as written (`read_*`, `delete_note`).
    pub fn tool_pattern(&self) -> &str {
        self.tool.as_str()
    }

    /// Whether the rule names `tool` (by its tool glob), whatever its arguments.
    pub fn names_tool(&self, tool: &str) -> bool {
        self.tool.is_match(tool)
    }

    /// The tool glob, path glob and expiry of a rule with an argument, for hiding paths.
    pub(crate) fn path_rule(&self) -> Option<(ToolGlob, GlobMatcher, Option<SystemTime>)> {
        Some((self.tool.clone(), self.path.clone()?, self.expires))
    }

    /// Whether the grant has a use count (`;uses=N`).
    pub fn is_counted(&self) -> bool {
        self.uses_left.is_some()
    }

    /// `uses=N` as written, for a grant with a use count.
    pub fn uses_total(&self) -> Option<u64> {
        self.uses_total
    }

    /// Marks the grant used up in this process (the store's count says none is left), so this
    /// process stops offering it and, in `prompt` mode, asks instead.
    pub(crate) fn exhaust(&self) {
        if let Some(n) = &self.uses_left {
            n.store(0, Ordering::Release);
        }
    }

    /// Counts here a use the store gave (the count here is what this process knows is left: the
    /// store's, or more when other replicas spent some).
    pub(crate) fn note_used(&self) {
        if let Some(n) = &self.uses_left {
            let _ = n.fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| left.checked_sub(1));
        }
    }
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Whether a command grant's pattern covers `command`: `WORDS*` when the command's first words
/// are exactly `WORDS` (further whole words may follow), else when its words are exactly
/// `WORDS`; never a compound command.
pub fn command_matches(pattern: &str, command: &str) -> bool {
    if is_compound(command) {
        return false;
    }
    let have: Vec<&str> = shell_words(command).collect();
    match pattern.trim().strip_suffix('*') {
        Some(prefix) => {
            let want: Vec<&str> = shell_words(prefix).collect();
            // A glued `*` (`echo safe*`) means the same as a spaced one: whole words only.
            have.len() >= want.len() && have[..want.len()] == want[..]
        }
        None => have == shell_words(pattern).collect::<Vec<_>>(),
    }
}

/// Whether a command deny rule's pattern may match `command` (fail-closed, see the module docs).
pub fn command_may_match(pattern: &str, command: &str) -> bool {
    if !is_plain(command) {
        return true;
    }
    let pattern = pattern.trim();
    let (body, glued) = match pattern.strip_suffix('*') {
        Some(body) => (body, !body.ends_with([' ', '\t'])),
        None => (pattern, false),
    };
    let want: Vec<&str> = shell_words(body).collect();
    let Some((first, rest)) = want.split_first() else { return true };
    // `/usr/bin/touch` in a rule means the program `touch`.
    let first = first.rsplit('/').next().unwrap_or(first);
    let words: Vec<&str> = shell_words(command).collect();
    let last = want.len() - 1;
    words.iter().enumerate().any(|(i, word)| {
        if !names(word, first, glued && last == 0) {
            return false;
        }
        let mut following = words[i + 1..].iter();
        rest.iter().enumerate().all(|(k, w)| following.any(|word| names(word, w, glued && k + 1 == last)))
    })
}

/// Whether a word of a command line names `want`: the word itself, or one of its pieces (split at
/// punctuation other than `-`, `_`, `.`), or an option's glued value; `prefix`: starts with it.
fn names(word: &str, want: &str, prefix: bool) -> bool {
    let hit = |piece: &str| if prefix { piece.starts_with(want) } else { piece == want };
    if hit(word) {
        return true;
    }
    word.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))).any(|piece| {
        if hit(piece) {
            return true;
        }
        // `-Stouch`, `--x=touch` (the `=` split already), `-e` glued to its value.
        let bare = piece.trim_start_matches('-');
        piece.starts_with('-')
            && (hit(bare) || bare.char_indices().nth(1).is_some_and(|(i, _)| hit(&bare[i..])))
    })
}

/// The words of a command line as the shell splits them (spaces and tabs; no quote handling:
/// callers either refuse quotes or compare words exactly).
fn shell_words(command: &str) -> impl Iterator<Item = &str> {
    command.split([' ', '\t']).filter(|w| !w.is_empty())
}

/// Whether a command line is more than one simple command (or could expand into one).
pub fn is_compound(command: &str) -> bool {
    command.contains(COMPOUND)
}

/// Whether a command line is one simple command whose words are exactly what the shell will see:
/// nothing compound, no quoting, globbing, brace or history expansion, no control character.
fn is_plain(command: &str) -> bool {
    !command.chars().any(|c| {
        COMPOUND.contains(&c)
            || matches!(c, '\'' | '"' | '*' | '?' | '[' | ']' | '{' | '}' | '!' | '^')
            || (c.is_control() && c != '\t')
    })
}

/// The grant that would allow exactly this value, as a rule: `tool:arg=value` (a path's glob
/// characters escaped), or `tool` for every call of the tool.
pub fn suggest_rule(tool: &str, arg: Option<(&str, ParamRole, &str)>) -> String {
    match arg {
        None => tool.to_owned(),
        Some((name, ParamRole::Path, value)) => format!("{tool}:{name}={}", escape_glob(value)),
        Some((name, ParamRole::Command, value)) => format!("{tool}:{name}={}", value.trim()),
    }
}

/// [`suggest_rule`] as the `teaagent` command's flag, quoted for a shell: `--grant 'tool:arg=value'`.
pub fn suggest(tool: &str, arg: Option<(&str, ParamRole, &str)>) -> String {
    format!("--grant {}", shell_quote(&suggest_rule(tool, arg)))
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
    fn command_prefixes_match_whole_words() {
        let echo = g("shell_exec:command=echo safe*");
        for ok in ["echo safe", "echo safe x", "echo\tsafe  'x y'"] {
            assert!(echo.covers_arg("shell_exec", "command", ParamRole::Command, ok), "{ok}");
        }
        for bad in ["echo safex", "echo safe'x y'", "echo 'safe' x", "echo safe\"x\"", "echosafe", "echo"] {
            assert!(!echo.covers_arg("shell_exec", "command", ParamRole::Command, bad), "{bad}");
        }
        let spaced = g("shell_exec:command=git log *");
        assert!(spaced.covers_arg("shell_exec", "command", ParamRole::Command, "git log -3"));
        assert!(!spaced.covers_arg("shell_exec", "command", ParamRole::Command, "git logx"));
        let exact = g("shell_exec:command=cargo test");
        assert!(exact.covers_arg("shell_exec", "command", ParamRole::Command, " cargo  test "));
        assert!(!exact.covers_arg(
            "shell_exec",
            "command",
            ParamRole::Command,
            "cargo test --config build.rustc-wrapper=./pwn.sh"
        ));
    }

    #[test]
    fn command_deny_rules_refuse_what_they_cannot_rule_out() {
        let touch = "touch*";
        for bad in [
            "touch x",
            "true && touch x",
            "touch x; true",
            "echo | touch x",
            "command touch x",
            "/usr/bin/env touch x",
            "TOUCH=1 touch x",
            "A=1 touch x",
            "/usr/bin/touch x",
            "./touch",
            "env -Stouch",
            "env --split-string=touch",
            "timeout -s KILL 5 touch x",
            "nice -n 5 nohup xargs touch",
            "sudo -u root touch x",
            "exec touch x",
            "eval touch x",
            "sh -c 'touch x'",
            "t'ouch' x",
            "\\touch x",
            "\"touch\" x",
            "$(echo touch) x",
            "`echo touch` x",
            "/usr/bin/tou?h x",
            "to{uch,} x",
            "(touch x)",
            "echo\ntouch x",
            "perl -esystem+q+touch+",
            "touchy",
        ] {
            assert!(command_may_match(touch, bad), "{bad}");
        }
        for fine in ["ls -la", "echo retouch", "cargo test --all", "git status"] {
            assert!(!command_may_match(touch, fine), "{fine}");
        }
        // Several words: the program anywhere, its further words in order after it.
        let push = "git push*";
        for bad in ["git push", "git -C . push origin", "env git --no-pager push -f", "git push-all"] {
            assert!(command_may_match(push, bad), "{bad}");
        }
        for fine in ["git pull", "git status", "echo push git"] {
            assert!(!command_may_match(push, fine), "{fine}");
        }
        // An exact deny rule is fail-closed too: more arguments do not slip past it.
        assert!(command_may_match("rm -rf /", "rm -rf / --no-preserve-root"));
        assert!(command_may_match("rm", "format && x"));
        assert!(!command_may_match("rm", "npm run format"));
    }

    #[test]
    fn tool_globs_uses_and_expiry() {
        assert!(g("read_*").covers_tool("read_file"));
        assert!(!g("read_*").covers_tool("write_file"));
        let once = g("delete_path;uses=1");
        assert!(once.is_live(SystemTime::now()) && once.uses_total() == Some(1));
        once.note_used();
        assert!(!once.is_live(SystemTime::now()));
        once.note_used();
        assert!(!once.is_live(SystemTime::now()), "never below none");
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
