//! `file_info`: what a path is, how big, when changed, and how many lines a text file has.
//!
//! Lines are counted in 64 KiB blocks (memory does not grow with the file or its lines). A path
//! that leads (through a link) to a path policy hides is refused.

use crate::tool;
use std::io::Read;

use schemars::JsonSchema;
use serde::Serialize;

use super::common::{hidden, hidden_error, looks_binary, path_error, workspace};
use crate::tool::{Json, ToolContext, ToolError};
use crate::workspace::Target;

/// Facts about one path.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FileInfo {
    /// The path, relative to the workspace root.
    pub path: String,
    /// `file`, `directory` or `symlink`.
    pub kind: String,
    /// Size in bytes.
    pub size: u64,
    /// Last modification (RFC 3339, UTC).
    pub modified: String,
    /// Whether the file looks like text (no NUL byte in its first 8 KiB); absent for directories.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<bool>,
    /// Lines of a text file (a last line without a newline counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
}

/// Describe a file or directory: kind, size, modification time, and the line count of text.
#[tool(unregistered, read_only, idempotent, tier = "low", title = "File info")]
pub fn file_info(
    ctx: &ToolContext,
    /// The file or directory, relative to the workspace root.
    #[path]
    path: String,
) -> Result<Json<FileInfo>, ToolError> {
    let resolved = workspace(ctx)?.resolve(&path).map_err(|e| path_error(&path, e))?;
    if hidden(ctx, &resolved) {
        return Err(hidden_error(&path));
    }
    if resolved.target() == Target::Missing {
        return Err(path_error(&path, crate::workspace::PathError::NotFound));
    }
    let meta = resolved.metadata().map_err(|e| path_error(&path, e))?;
    let (text, lines) = match resolved.target() {
        Target::File { .. } => {
            let mut file = resolved.open_read().map_err(|e| path_error(&path, e))?;
            let mut buf = vec![0u8; 64 * 1024];
            let (mut lines, mut last, mut first, mut binary) = (0u64, b'\n', true, false);
            loop {
                let n = file.read(&mut buf).map_err(|e| super::common::io_error(&path, &e))?;
                if n == 0 {
                    break;
                }
                if first && looks_binary(&buf[..n.min(8192)]) {
                    binary = true;
                    break;
                }
                first = false;
                lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
                last = buf[n - 1];
            }
            if binary { (Some(false), None) } else { (Some(true), Some(lines + u64::from(last != b'\n'))) }
        }
        _ => (None, None),
    };
    Ok(Json(FileInfo {
        path: resolved.display(),
        kind: meta.kind.as_str().to_owned(),
        size: meta.size,
        modified: humantime::format_rfc3339_seconds(meta.modified).to_string(),
        text,
        lines,
    }))
}
