//! What the built-in tools share: the workspace, error messages an agent can act on, output caps.

use std::io;

use crate::error::PathRefusal;
use crate::tool::{ToolContext, ToolError};
use crate::workspace::{PathError, Resolved, Target, Workspace};

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
