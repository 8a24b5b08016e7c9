//! `move_path`: rename or move inside the workspace.

use super::common::{io_error, path_error, workspace};
use crate::tool;
use crate::tool::{ToolContext, ToolError};
use crate::workspace::{PathError, Target};

/// Move or rename a file or directory inside the workspace (missing directories of the
/// destination are created). The destination must not exist. A symbolic link is moved itself,
/// not what it points to.
#[tool(unregistered, destructive, tier = "high", title = "Move path")]
pub fn move_path(
    ctx: &ToolContext,
    /// What to move, relative to the workspace root.
    #[path]
    from: String,
    /// Where to, relative to the workspace root.
    #[path]
    to: String,
) -> Result<String, ToolError> {
    let ws = workspace(ctx)?;
    let source = match ctx.path_entry("from") {
        Some(approved) => approved.clone(),
        None => ws.resolve_no_follow(&from).map_err(|e| path_error(&from, e))?,
    };
    if source.target() == Target::Missing {
        return Err(path_error(&from, PathError::NotFound));
    }
    if source.is_root() {
        return Err(ToolError::new("the workspace root cannot be moved"));
    }
    let mut dest = match ctx.path_target("to") {
        Some(approved) => approved.clone(),
        None => ws.resolve_for_create(&to).map_err(|e| path_error(&to, e))?,
    };
    if dest.target() != Target::Missing {
        return Err(ToolError::new(format!("`{to}` already exists; delete it first or choose another name")));
    }
    if source.target() == Target::Dir && dest.relative().starts_with(source.relative()) {
        return Err(ToolError::new(format!("`{from}` cannot be moved into itself")));
    }
    // Git data is never moved (`workspace/off_limits.rs`), submodules included: a submodule's
    // directory moved away, and another with a `.git` of its own moved into its place, would
    // have the user's next `git status` run what that `.git` leads to.
    let submodules = crate::sandbox::git_data::survey(ws.root())
        .map_err(|e| ToolError::new(format!("refused: {e}; nothing was moved")))?
        .submodules;
    for (path, given) in [(source.relative(), &from), (dest.relative(), &to)] {
        let path = ws.root().join(path);
        if submodules.iter().any(|submodule| submodule.starts_with(&path)) {
            return Err(ToolError::new(format!(
                "`{given}` is a submodule or holds one: git data, which tools do not move; nothing was moved"
            )));
        }
    }
    dest.create_parents().map_err(|e| path_error(&to, e))?;
    source.rename_to(&dest).map_err(|e| match e {
        PathError::Io(e) => io_error(&to, &e),
        other => path_error(&from, other),
    })?;
    Ok(format!("moved {} to {}", source.display(), dest.display()))
}
