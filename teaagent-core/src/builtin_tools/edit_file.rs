//! `edit_file`: replace an exact piece of text.

use crate::tool;
use std::io::Read;

use super::common::{existing_file, io_error, path_error};
use crate::tool::{ToolContext, ToolError};
use crate::workspace::Target;

/// The largest file `edit_file` edits, and the largest file an edit may produce (16 MiB, the
/// default longest message): the whole text is held in memory, so the work is bounded by this,
/// never by the file's size or by `replace_all` multiplying a large `new_text`.
pub const MAX_EDIT: u64 = 16 * 1024 * 1024;

/// Replace an exact piece of text in a file. `old_text` must occur exactly once (include enough
/// surrounding lines to make it unique) unless `replace_all` is set. The file is rewritten
/// atomically, keeping its permissions. Files (and results) over 16 MiB are refused.
#[tool(unregistered, destructive, tier = "medium", title = "Edit file")]
pub fn edit_file(
    ctx: &ToolContext,
    /// The file, relative to the workspace root.
    #[path]
    path: String,
    /// The exact text to replace (whitespace and line breaks included).
    old_text: String,
    /// The text to put in its place.
    new_text: String,
    /// Replace every occurrence instead of requiring exactly one (default false).
    replace_all: Option<bool>,
) -> Result<String, ToolError> {
    if old_text.is_empty() {
        return Err(ToolError::new("`old_text` is empty: say what to replace"));
    }
    let resolved = match ctx.path_target("path") {
        Some(approved) if matches!(approved.target(), Target::File { .. }) => approved.clone(),
        _ => existing_file(ctx, &path)?.0,
    };
    let mut raw = Vec::new();
    resolved
        .open_read()
        .map_err(|e| path_error(&path, e))?
        .take(MAX_EDIT + 1)
        .read_to_end(&mut raw)
        .map_err(|e| io_error(&path, &e))?;
    if raw.len() as u64 > MAX_EDIT {
        return Err(ToolError::new(format!(
            "`{path}` is larger than {}: too large to edit here; use write_file for a new version, or shell_exec with a stream editor",
            super::common::bytes(MAX_EDIT)
        )));
    }
    let text = String::from_utf8(raw)
        .map_err(|_| ToolError::new(format!("`{path}` is not UTF-8 text; it cannot be edited")))?;
    let count = text.matches(old_text.as_str()).count();
    let replace_all = replace_all.unwrap_or(false);
    match count {
        0 => {
            return Err(ToolError::new(format!(
                "`old_text` does not occur in `{path}`; read the file and copy the text exactly (whitespace included)"
            )));
        }
        1 => {}
        n if !replace_all => {
            return Err(ToolError::new(format!(
                "`old_text` occurs {n} times in `{path}`; include more surrounding text to pick one, or set replace_all"
            )));
        }
        _ => {}
    }
    let replaced = if replace_all { count } else { 1 };
    let size = (text.len() - replaced * old_text.len()) as u64
        + (replaced as u64).saturating_mul(new_text.len() as u64);
    if size > MAX_EDIT {
        return Err(ToolError::new(format!(
            "the edited `{path}` would be {}, more than {}: replace fewer occurrences at a time",
            super::common::bytes(size),
            super::common::bytes(MAX_EDIT)
        )));
    }
    let edited =
        if replace_all { text.replace(&old_text, &new_text) } else { text.replacen(&old_text, &new_text, 1) };
    resolved.write_atomic(edited.as_bytes()).map_err(|e| path_error(&path, e))?;
    let what = if count == 1 { "1 occurrence".to_owned() } else { format!("{count} occurrences") };
    Ok(format!("replaced {what} in {}", resolved.display()))
}
