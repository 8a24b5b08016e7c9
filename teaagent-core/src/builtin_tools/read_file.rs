//! `read_file`: the text of a workspace file, or a line range of it.
//!
//! Memory is bounded by the output cap whatever the file's shape: lines are read with a cap
//! (`read_line_capped`), so a line longer than the cap is never held whole; its beginning is
//! shown with a marker that says how long it is and how to go on. A path that leads (through a
//! link) to a path policy hides is refused.

use crate::tool;
use std::io::{self, BufRead, BufReader};
use std::num::NonZeroU64;

use super::common::{OUTPUT_CAP, bytes, existing_file, hidden, hidden_error, io_error, looks_binary};
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
    // Where the path really leads (a link followed) must not be a path policy hides.
    if hidden(ctx, &resolved) {
        return Err(hidden_error(&path));
    }
    let mut reader = BufReader::with_capacity(
        64 * 1024,
        resolved.open_read().map_err(|e| super::common::path_error(&path, e))?,
    );
    let head = reader.fill_buf().map_err(|e| io_error(&path, &e))?;
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
        // Lines before the range are skipped without being kept; a line in the range is kept up
        // to what the output still has room for (plus a few bytes to finish a character).
        let keep = if number + 1 < first { 0 } else { OUTPUT_CAP.saturating_sub(out.len()) + 4 };
        let (n, _) = read_line_capped(&mut reader, &mut line, keep).map_err(|e| io_error(&path, &e))?;
        if n == 0 {
            break;
        }
        number += 1;
        if number < first {
            continue;
        }
        let complete = line.len() as u64 == n;
        let text = match std::str::from_utf8(&line) {
            Ok(text) => text,
            // A character cut at the end of what was kept is not an encoding error.
            Err(e) if !complete && e.error_len().is_none() => {
                std::str::from_utf8(&line[..e.valid_up_to()]).unwrap_or_default()
            }
            Err(_) => {
                return Err(ToolError::new(format!(
                    "`{path}` is not UTF-8 text (line {number}); read it as base64 with resources/read {}",
                    uri::to_uri(resolved.relative())
                )));
            }
        };
        if out.len() + text.len() > OUTPUT_CAP || !complete {
            if number == first {
                // The first line alone is past the cap: show its beginning, and say so.
                let mut end = text.len().min(OUTPUT_CAP);
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                out.push_str(&text[..end]);
                out.push_str(&format!(
                    "\n[truncated: line {number} is {} long, more than the output cap of {}; its first {} shown; \
                     the rest of this line is not returned by read_file. Call read_file with offset={} \
                     to continue after it]",
                    bytes(n),
                    bytes(OUTPUT_CAP as u64),
                    bytes(end as u64),
                    number + 1
                ));
                return Ok(out);
            }
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

/// Reads one line (through its `\n`) into `line`, keeping at most `keep` bytes of it and
/// reading past the rest: memory is bounded by `keep`, not by the line. Returns the line's whole
/// length (0 at the end of the file) and whether it ended with `\n`.
fn read_line_capped(reader: &mut impl BufRead, line: &mut Vec<u8>, keep: usize) -> io::Result<(u64, bool)> {
    let mut total = 0u64;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((total, false));
        }
        let (used, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = keep.saturating_sub(line.len());
        line.extend_from_slice(&buf[..used.min(room)]);
        reader.consume(used);
        total += used as u64;
        if done {
            return Ok((total, true));
        }
    }
}
