//! `find_files`: files whose path matches a glob, `.gitignore` honoured.
//!
//! The tree is walked beneath the root's handle ([`Walk`]): links are not followed, not even a
//! directory swapped for one mid-walk. The glob is at most 4 KiB and is compiled
//! under a size limit; past either it is refused as invalid arguments (`-32602`, or an
//! `isError` result from protocol `2025-11-25` on).

use std::path::Path;

use globset::{GlobBuilder, GlobSetBuilder};
use schemars::JsonSchema;
use serde::Serialize;

use super::common::{
    MAX_GLOB, Outcome, ToolRefusal, check_length, glob_too_large, hidden, hidden_error, path_error, workspace,
};
use crate::tool;
use crate::tool::{Json, ToolContext, ToolError};
use crate::workspace::Target;
use crate::workspace::walk::Walk;

/// Files one call returns at most.
const MAX_FILES: usize = 1000;

/// What was found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Found {
    /// Matching files, relative to the workspace root, sorted.
    pub files: Vec<String>,
    /// Set when the search stopped at its cap: narrow the pattern or the directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

/// Find files by glob: `*.rs` matches a file name anywhere, `src/**/*.rs` matches the path from
/// the search directory (`*` stays within one directory, `**` crosses them). Files ignored by
/// `.gitignore` and the `.git` directory are skipped; hidden files are searched. At most 1000.
#[tool(unregistered, read_only, idempotent, tier = "low", title = "Find files")]
pub fn find_files(
    ctx: &ToolContext,
    /// The glob, e.g. `*.rs`, `src/**/*.toml`, `**/test_*.py`.
    pattern: String,
    /// The directory to search, relative to the workspace root (default `.`).
    #[path]
    path: Option<String>,
) -> Outcome<Json<Found>> {
    Outcome(find(ctx, &pattern, path))
}

fn find(ctx: &ToolContext, pattern: &str, path: Option<String>) -> Result<Json<Found>, ToolRefusal> {
    let path = path.unwrap_or_else(|| ".".to_owned());
    let ws = workspace(ctx)?;
    check_length(ctx, "pattern", pattern, MAX_GLOB)?;
    let start = ws.resolve(&path).map_err(|e| path_error(&path, e))?;
    if start.target() != Target::Dir {
        return Err(ToolError::new(format!("`{path}` is not a directory")).into());
    }
    if hidden(ctx, &start) {
        return Err(hidden_error(&path).into());
    }
    let by_name = !pattern.contains('/');
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::new(format!("invalid glob `{pattern}`: {e}")))?;
    // Built as a set: a glob too large to compile is an error here, never a panic.
    let glob = GlobSetBuilder::new().add(glob).build().map_err(|_| glob_too_large(ctx, "pattern"))?;
    let walk = Walk::new(ws, &start, ctx.tool()).map_err(|e| path_error(&path, e))?;
    let mut files = Vec::new();
    for entry in walk {
        if ctx.is_cancelled() {
            // Timed out or cancelled: nobody reads the answer any more.
            break;
        }
        let Ok(within) = entry.relative().strip_prefix(start.relative()) else { continue };
        let candidate = if by_name { within.file_name().map(Path::new).unwrap_or(within) } else { within };
        if glob.is_match(candidate) {
            if files.len() >= MAX_FILES {
                return Ok(Json(Found {
                    files,
                    truncated: Some(format!(
                        "stopped at {MAX_FILES} files; narrow the pattern or the directory"
                    )),
                }));
            }
            files.push(entry.relative().to_string_lossy().into_owned());
        }
    }
    Ok(Json(Found { files, truncated: None }))
}
