//! `find_files`: files whose path matches a glob, `.gitignore` honoured.

use globset::GlobBuilder;
use schemars::JsonSchema;
use serde::Serialize;

use super::common::{path_error, workspace};
use crate::tool;
use crate::tool::{Json, ToolContext, ToolError};
use crate::workspace::Target;

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
) -> Result<Json<Found>, ToolError> {
    let path = path.unwrap_or_else(|| ".".to_owned());
    let ws = workspace(ctx)?;
    let start = ws.resolve(&path).map_err(|e| path_error(&path, e))?;
    if start.target() != Target::Dir {
        return Err(ToolError::new(format!("`{path}` is not a directory")));
    }
    let by_name = !pattern.contains('/');
    let glob = GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::new(format!("invalid glob `{pattern}`: {e}")))?
        .compile_matcher();
    let base = ws.absolute(&start);
    let walker = ignore::WalkBuilder::new(&base)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut files = Vec::new();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(within) = entry.path().strip_prefix(&base) else { continue };
        let candidate =
            if by_name { within.file_name().map(std::path::Path::new).unwrap_or(within) } else { within };
        if glob.is_match(candidate) {
            if files.len() >= MAX_FILES {
                return Ok(Json(Found {
                    files,
                    truncated: Some(format!(
                        "stopped at {MAX_FILES} files; narrow the pattern or the directory"
                    )),
                }));
            }
            files.push(start.relative().join(within).to_string_lossy().into_owned());
        }
    }
    Ok(Json(Found { files, truncated: None }))
}
