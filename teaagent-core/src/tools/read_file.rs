//! `read_file`: the text of a workspace file, or a line range of it.

use crate::tool;
use std::io::{BufRead, BufReader};
use std::num::NonZeroU64;

use super::common::{OUTPUT_CAP, bytes, existing_file, looks_binary};
use crate::tool::{ToolContext, ToolError};
use crate::workspace::uri;

/// Read a UTF-8 text file of the workspace, whole or a range of lines.
///
/// Without `offset` and `limit` the whole file is returned (up to 256 KiB; a marker at the end
/// says where it stopped and how to continue). Lines are read as they come, so a small range of a
/// huge file costs only what comes before it. Binary files are refused: read them with
/// `resources/read`, which returns them as base64.
#[tool(unregistered, read_only, idempotent, tier = "low", title = "Read file")]
pub fn read_file(
    ctx: &ToolContext,
    /// The file, relative to the workspace root (or absolute inside it).
    #[path]
    path: String,
    /// The first line to return, 1-based (default 1).
    offset: Option<NonZeroU64>,
    /// How many lines to return (default: to the end of the file).
    limit: Option<NonZeroU64>,
) -> Result<String, ToolError> {
    let (resolved, size) = existing_file(ctx, &path)?;
    let mut reader = BufReader::with_capacity(
        64 * 1024,
        resolved.open_read().map_err(|e| super::common::path_error(&path, e))?,
    );
    let head = reader.fill_buf().map_err(|e| super::common::io_error(&path, &e))?;
    if looks_binary(&head[..head.len().min(8192)]) {
        return Err(ToolError::new(format!(
            "`{path}` is a binary file ({}); read it as base64 with resources/read {}",
            bytes(size),
            uri::to_uri(resolved.relative())
        )));
    }
    let first = offset.map_or(1, NonZeroU64::get);
    let last = limit.map(|l| first.saturating_add(l.get() - 1));
    let mut out = String::new();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(|e| super::common::io_error(&path, &e))?;
        if n == 0 {
            break;
        }
        number += 1;
        if number < first {
            continue;
        }
        let text = std::str::from_utf8(&line).map_err(|_| {
            ToolError::new(format!(
                "`{path}` is not UTF-8 text (line {number}); read it as base64 with resources/read {}",
                uri::to_uri(resolved.relative())
            ))
        })?;
        if out.len() + text.len() > OUTPUT_CAP {
            out.push_str(&format!(
                "\n[truncated: output capped at {} — lines {first} to {} shown; call read_file with offset={number} to continue]",
                bytes(OUTPUT_CAP as u64),
                number - 1
            ));
            return Ok(out);
        }
        out.push_str(text);
        if last.is_some_and(|l| number >= l) {
            return Ok(out);
        }
    }
    if number < first && !(number == 0 && first == 1) {
        return Err(ToolError::new(format!(
            "offset {first} is past the end of `{path}`, which has {number} lines"
        )));
    }
    Ok(out)
}
