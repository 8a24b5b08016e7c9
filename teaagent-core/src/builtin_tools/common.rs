//! What the built-in tools share: the workspace, error messages an agent can act on, output caps,
//! and the limits on patterns.
//!
//! A tool's domain failure is a result with `isError: true` ([`ToolError`]); an argument the
//! tool cannot take at all (a pattern past the limits below) is refused exactly like a schema
//! violation ([`Error::InvalidArguments`], pointing at the argument): `-32602` up to protocol
//! `2025-06-18`, an `isError` result carrying the same report and `_meta` from `2025-11-25` on
//! (see [`crate::error`]). The tools return an [`Outcome`] for that: `Result<T, ToolError>`
//! turns every error into a plain `isError` result, so this small wrapper carries the second
//! kind through to the pipeline, which gives it the session's form. A pattern that is merely
//! wrong (`[unclosed`) stays a tool error the agent can fix in its next call.

use std::io;

use crate::error::{ArgumentError, Error, PathRefusal};
use crate::mcp::CallToolResult;
use crate::tool::{IntoToolOutput, ToolContext, ToolError};
use crate::workspace::{PathError, Resolved, Target, Workspace};

/// Longest glob accepted (`find_files` `pattern`, `search_text` `glob`), in bytes.
pub(crate) const MAX_GLOB: usize = 4096;
/// Longest regular expression (or literal) accepted by `search_text`, in bytes.
pub(crate) const MAX_PATTERN: usize = 16 * 1024;
/// Most memory a compiled pattern may take (regex NFA, and the lazy DFA's cache).
pub(crate) const PATTERN_SIZE_LIMIT: usize = 10 * 1024 * 1024;

/// What a built-in tool returns: `Ok` or a tool error as usual, or an argument refused like a
/// schema violation (`invalid_arguments`).
pub struct Outcome<T>(pub(crate) Result<T, ToolRefusal>);

/// Why a built-in tool did not produce its output.
pub(crate) enum ToolRefusal {
    /// A domain failure: a result with `isError: true`.
    Tool(ToolError),
    /// An argument the tool cannot take: `invalid_arguments`, in the session's form.
    Argument(Error),
}

impl From<ToolError> for ToolRefusal {
    fn from(e: ToolError) -> Self {
        ToolRefusal::Tool(e)
    }
}

// Internal to the built-in tools: kept out of the list of return types a tool author's compile
// error suggests.
#[diagnostic::do_not_recommend]
impl<T: IntoToolOutput> IntoToolOutput for Outcome<T> {
    fn output_schema() -> Option<serde_json::Value> {
        T::output_schema()
    }

    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        match self.0 {
            Ok(value) => value.into_tool_result(),
            Err(ToolRefusal::Tool(e)) => Ok(CallToolResult::error(e.to_string())),
            Err(ToolRefusal::Argument(e)) => Err(e),
        }
    }
}

/// `argument` refused like a schema violation (`invalid_arguments`, pointer `/argument`); the
/// message is bounded and escaped ([`ArgumentError::new`]).
pub(crate) fn invalid_argument(ctx: &ToolContext, argument: &str, message: impl Into<String>) -> ToolRefusal {
    ToolRefusal::Argument(Error::InvalidArguments {
        tool: ctx.tool().to_owned(),
        errors: vec![ArgumentError::new(format!("/{argument}"), message.into())],
    })
}

/// Refuses a pattern argument longer than `max` bytes.
pub(crate) fn check_length(
    ctx: &ToolContext,
    argument: &str,
    value: &str,
    max: usize,
) -> Result<(), ToolRefusal> {
    if value.len() > max {
        return Err(invalid_argument(
            ctx,
            argument,
            format!("`{argument}` is {} bytes long; at most {max} are accepted", value.len()),
        ));
    }
    Ok(())
}

/// Whether a regex compiler's error says the compiled pattern would be too large (as opposed
/// to a mistake in the pattern). Pinned by a unit test, since it reads the error's text.
pub(crate) fn is_size_limit(message: &str) -> bool {
    message.contains("size limit")
}

/// A glob that parsed but could not be compiled: globset's regexes are built under a size limit,
/// and a parsed glob fails only past it (its error does not say more), so this is
/// `invalid_arguments`.
pub(crate) fn glob_too_large(ctx: &ToolContext, argument: &str) -> ToolRefusal {
    invalid_argument(ctx, argument, format!("`{argument}` compiles to more than the size limit; simplify it"))
}

/// Whether policy hides this resolved path from the calling tool (a deny rule on paths).
pub(crate) fn hidden(ctx: &ToolContext, resolved: &Resolved) -> bool {
    ctx.workspace().is_some_and(|ws| ws.hides_file(ctx.tool(), resolved))
}

/// The error for a path that leads somewhere policy hides.
pub(crate) fn hidden_error(path: &str) -> ToolError {
    ToolError::new(format!(
        "`{path}` leads to a path the permission policy hides (a deny rule on paths; a file with several hard links is hidden too, as it may be a denied file by another name)"
    ))
}

/// Most text a tool returns in one result (a marker says when more was cut).
pub(crate) const OUTPUT_CAP: usize = 256 * 1024;

/// The server's workspace.
pub(crate) fn workspace(ctx: &ToolContext) -> Result<&Workspace, ToolError> {
    ctx.workspace().ok_or_else(|| {
        ToolError::new("this server has no workspace: start it with `teaagent mcp serve --root DIR`")
    })
}

/// A resolution failure, said so an agent knows what to do next.
pub(crate) fn path_error(path: &str, e: PathError) -> ToolError {
    match e {
        PathError::NotFound => ToolError::new(format!(
            "no such file or directory: `{path}` (list_directory or find_files shows what exists)"
        )),
        PathError::NotADirectory => {
            ToolError::new(format!("`{path}`: a component of the path is a file, not a directory"))
        }
        PathError::Refused { reason: PathRefusal::HardLinked, .. } => ToolError::new(format!(
            "`{path}` has more than one hard link, so writing it could change a file outside the workspace; refused"
        )),
        PathError::Refused { reason, detail } => {
            ToolError::new(format!("`{path}` {}{}", reason.describe(), paren(&detail)))
        }
        PathError::Io(e) => io_error(path, &e),
    }
}

/// An I/O failure on `path`, in words.
pub(crate) fn io_error(path: &str, e: &io::Error) -> ToolError {
    match e.kind() {
        io::ErrorKind::NotFound => ToolError::new(format!("no such file or directory: `{path}`")),
        io::ErrorKind::PermissionDenied => ToolError::new(format!("permission denied: `{path}`")),
        io::ErrorKind::AlreadyExists => ToolError::new(format!("`{path}` already exists")),
        io::ErrorKind::IsADirectory => ToolError::new(format!("`{path}` is a directory")),
        io::ErrorKind::DirectoryNotEmpty => {
            ToolError::new(format!("`{path}` is a directory that is not empty"))
        }
        _ => ToolError::new(format!("`{path}`: {e}")),
    }
}

fn paren(detail: &str) -> String {
    if detail.is_empty() { String::new() } else { format!(" ({detail})") }
}

/// Resolves an existing regular file for reading.
pub(crate) fn existing_file(ctx: &ToolContext, path: &str) -> Result<(Resolved, u64), ToolError> {
    let resolved = workspace(ctx)?.resolve(path).map_err(|e| path_error(path, e))?;
    match resolved.target() {
        Target::File { size, .. } => Ok((resolved, size)),
        Target::Dir => Err(ToolError::new(format!("`{path}` is a directory: use list_directory"))),
        Target::Missing | Target::Symlink => Err(path_error(path, PathError::NotFound)),
    }
}

/// Whether a prefix of a file looks binary (a NUL byte, as git and ripgrep decide).
pub(crate) fn looks_binary(prefix: &[u8]) -> bool {
    memchr::memchr(0, prefix).is_some()
}

/// Human-friendly byte counts.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{n} bytes") } else { format!("{value:.1} {}", UNITS[unit]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`is_size_limit`] reads the compilers' error text: pin it, so an upgrade that rewords it
    /// fails here rather than turning an argument refusal into a tool error.
    #[test]
    fn size_limit_errors_are_recognised() {
        let regex = grep_regex::RegexMatcherBuilder::new()
            .size_limit(PATTERN_SIZE_LIMIT)
            .dfa_size_limit(PATTERN_SIZE_LIMIT)
            .build(r"\w{500}\w{500}")
            .expect_err("too large");
        assert!(is_size_limit(&regex.to_string()), "{regex}");
        let syntax = grep_regex::RegexMatcherBuilder::new().build("(unclosed").expect_err("invalid");
        assert!(!is_size_limit(&syntax.to_string()), "{syntax}");
        let glob = globset::Glob::new(&"*".repeat(100_000)).expect("a valid glob");
        // A glob that parses fails to build only past the size limit (see `glob_too_large`).
        assert!(globset::GlobSetBuilder::new().add(glob).build().is_err());
    }
}
