//! `delete_path`: remove a file, a link, or an empty directory.

use super::common::{path_error, workspace};
use crate::tool;
use crate::tool::{ToolContext, ToolError};
use crate::workspace::{PathError, Target};

/// Delete a file or an empty directory. A symbolic link is deleted itself; what it points to is
/// never touched. Directories with contents are refused (delete what is inside first).
#[tool(unregistered, destructive, tier = "high", title = "Delete path")]
pub fn delete_path(
    ctx: &ToolContext,
    /// The file or empty directory, relative to the workspace root.
    #[path]
    path: String,
) -> Result<String, ToolError> {
    let resolved = match ctx.path_entry("path") {
        Some(approved) => approved.clone(),
        None => workspace(ctx)?.resolve_no_follow(&path).map_err(|e| path_error(&path, e))?,
    };
    if resolved.is_root() {
        return Err(ToolError::new("the workspace root cannot be deleted"));
    }
    let what = match resolved.target() {
        Target::Missing => return Err(path_error(&path, PathError::NotFound)),
        Target::Dir => {
            let entries = resolved.read_dir().map_err(|e| path_error(&path, e))?.len();
            if entries > 0 {
                return Err(ToolError::new(format!(
                    "`{path}` is a directory with {entries} entries; delete what is inside first"
                )));
            }
            "directory"
        }
        Target::Symlink => "link",
        Target::File { .. } => "file",
    };
    resolved.remove().map_err(|e| path_error(&path, e))?;
    Ok(format!("deleted {what} {}", resolved.display()))
}
