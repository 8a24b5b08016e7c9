//! `create_file`: a new file, never an existing one.

use super::common::{io_error, path_error, workspace};
use crate::tool;
use crate::tool::{ToolContext, ToolError};
use crate::workspace::{PathError, Target};

/// Create a new file with the given content (and any missing directories on its path). Fails if
/// the path exists: use `write_file` to replace a file or `edit_file` to change part of it.
#[tool(unregistered, tier = "medium", title = "Create file")]
pub fn create_file(
    ctx: &ToolContext,
    /// The new file, relative to the workspace root.
    #[path]
    path: String,
    /// Its content (UTF-8 text).
    content: String,
) -> Result<String, ToolError> {
    let mut target = match ctx.path_target("path") {
        Some(approved) => approved.clone(),
        None => workspace(ctx)?.resolve_for_create(&path).map_err(|e| path_error(&path, e))?,
    };
    if target.target() != Target::Missing {
        return Err(ToolError::new(format!(
            "`{path}` already exists; use write_file to replace it or edit_file to change part of it"
        )));
    }
    target.create_parents().map_err(|e| path_error(&path, e))?;
    target.create_new(content.as_bytes()).map_err(|e| match e {
        PathError::Io(e) => io_error(&path, &e),
        other => path_error(&path, other),
    })?;
    Ok(format!("created {} ({} bytes)", target.display(), content.len()))
}
