//! `list_directory`: what a directory holds, to a depth.
//!
//! Entries policy hides (a deny rule on paths) are left out, and a hidden directory is not
//! entered; a path that leads to a hidden directory is refused. Memory is bounded by the entry
//! cap (and one directory's listing at a time).

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use super::common::{hidden, hidden_error, path_error, workspace};
use crate::tool;
use crate::tool::{Json, ToolContext, ToolError};
use crate::workspace::{EntryKind, Resolved, Target, Workspace};

/// Entries one call lists at most.
const MAX_ENTRIES: usize = 2000;

/// One entry.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Entry {
    /// Its path, relative to the workspace root.
    pub path: String,
    /// `file`, `directory`, `symlink` or `special`.
    pub kind: String,
    /// Size in bytes (of the entry itself for links).
    pub size: u64,
}

/// A listing.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Listing {
    /// The entries, sorted by path (a directory right before what it holds).
    pub entries: Vec<Entry>,
    /// Set when the listing stopped at its cap: list a subdirectory or lower `depth`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

/// List a directory's entries with their kind and size, to a depth (1 = the directory itself).
/// Links are listed, not followed; `.git` is listed but not entered. At most 2000 entries.
#[tool(unregistered, read_only, idempotent, tier = "low", title = "List directory")]
pub fn list_directory(
    ctx: &ToolContext,
    /// The directory, relative to the workspace root (default `.`).
    #[path]
    path: Option<String>,
    /// How many levels to descend (default 1, at most 10).
    depth: Option<crate::Bounded<1, 10>>,
) -> Result<Json<Listing>, ToolError> {
    let path = path.unwrap_or_else(|| ".".to_owned());
    let ws = workspace(ctx)?;
    let resolved = ws.resolve(&path).map_err(|e| path_error(&path, e))?;
    if hidden(ctx, &resolved) {
        return Err(hidden_error(&path));
    }
    match resolved.target() {
        Target::Dir => {}
        Target::Missing => return Err(path_error(&path, crate::workspace::PathError::NotFound)),
        _ => {
            return Err(ToolError::new(format!(
                "`{path}` is a file, not a directory: use file_info or read_file"
            )));
        }
    }
    let depth = depth.map_or(1, |d| d.get() as u8);
    let mut entries = Vec::new();
    let truncated = walk(ws, ctx.tool(), &resolved, depth, &mut entries).map_err(|e| path_error(&path, e))?;
    Ok(Json(Listing {
        entries,
        truncated: truncated
            .then(|| format!("stopped at {MAX_ENTRIES} entries; list a subdirectory or use a smaller depth")),
    }))
}

/// Depth-first, sorted; `true` when the cap stopped it.
fn walk(
    ws: &Workspace,
    scope: &str,
    dir: &Resolved,
    depth: u8,
    out: &mut Vec<Entry>,
) -> Result<bool, crate::workspace::PathError> {
    // Never more of a directory than the listing still has room for (hidden entries left out).
    let room = MAX_ENTRIES.saturating_sub(out.len()) + 1;
    let (entries, more) =
        dir.read_dir_first(room, |name| !ws.is_hidden(scope, &dir.relative().join(name)))?;
    for entry in entries {
        if out.len() >= MAX_ENTRIES {
            return Ok(true);
        }
        let relative: PathBuf = dir.relative().join(&entry.name);
        out.push(Entry {
            path: relative.to_string_lossy().into_owned(),
            kind: entry.meta.kind.as_str().to_owned(),
            size: entry.meta.size,
        });
        if depth > 1 && entry.meta.kind == EntryKind::Dir && entry.name != ".git" {
            // Entered through the workspace again: a directory swapped for a link is refused.
            let child = ws.resolve_no_follow(&relative)?;
            if child.target() == Target::Dir && walk(ws, scope, &child, depth - 1, out)? {
                return Ok(true);
            }
        }
    }
    Ok(more && out.len() >= MAX_ENTRIES)
}
