//! `write_file`: create or replace a file, atomically.

use super::common::{path_error, workspace};
use crate::tool;
use crate::tool::{ToolContext, ToolError};
use crate::workspace::Target;

/// Write a file: create it (with any missing directories) or replace its whole content. The
/// replacement is atomic (readers see the old or the new content, never a mix) and keeps the
/// file's permissions.
#[tool(unregistered, destructive, idempotent, tier = "medium", title = "Write file")]
pub fn write_file(
    ctx: &ToolContext,
    /// The file, relative to the workspace root.
    #[path]
    path: String,
    /// The whole new content (UTF-8 text).
    content: String,
) -> Result<String, ToolError> {
    let mut target = match ctx.path_target("path") {
        Some(approved) => approved.clone(),
        None => workspace(ctx)?.resolve_for_create(&path).map_err(|e| path_error(&path, e))?,
    };
    if target.target() == Target::Dir {
        return Err(ToolError::new(format!("`{path}` is a directory")));
    }
    let existed = matches!(target.target(), Target::File { .. });
    target.create_parents().map_err(|e| path_error(&path, e))?;
    target.write_atomic(content.as_bytes()).map_err(|e| path_error(&path, e))?;
    let verb = if existed { "replaced" } else { "created" };
    Ok(format!("{verb} {} ({} bytes)", target.display(), content.len()))
}
