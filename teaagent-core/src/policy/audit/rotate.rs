//! Rotating the audit log by size (`audit.rs`, "Rotation"): when, and the renames.

use std::io;

use super::FILE_NAME;
use crate::home::Home;

/// How the audit log is rotated: `[audit] max_bytes` and `[audit] keep` in the user's
/// configuration ([`crate::config`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotation {
    /// The most `audit.jsonl` holds before it becomes `audit.jsonl.1` (a record larger than
    /// this alone still starts a file of its own).
    pub max_bytes: u64,
    /// How many old files are kept (`audit.jsonl.1`, newest, to `audit.jsonl.{keep}`).
    pub keep: u32,
}

impl Rotation {
    /// The default most bytes of `audit.jsonl` (16 MiB).
    pub const DEFAULT_MAX_BYTES: u64 = 16 * 1024 * 1024;
    /// The default number of old files kept.
    pub const DEFAULT_KEEP: u32 = 5;
    /// The most old files a setting may keep (and the highest number looked for).
    pub const MAX_KEEP: u32 = 1000;

    /// Whether a line of `incoming` bytes must go to a new file, after `size` bytes. An empty
    /// file takes any line, so a record larger than the limit is never refused.
    pub(super) fn is_due(self, size: u64, incoming: usize) -> bool {
        size > 0 && size.saturating_add(incoming as u64) > self.max_bytes
    }
}

impl Default for Rotation {
    fn default() -> Self {
        Self { max_bytes: Self::DEFAULT_MAX_BYTES, keep: Self::DEFAULT_KEEP }
    }
}

/// The name of the `n`th old file (`audit.jsonl.n`).
pub(super) fn old_name(n: u32) -> String {
    format!("{FILE_NAME}.{n}")
}

/// Rotates the log in `home` if a line of `incoming` bytes is still due to start a new file
/// (another writer may have rotated while this one waited). Call it holding the lock exclusive.
pub(super) fn rotate_if_due(home: &Home, rotation: Rotation, incoming: usize) -> io::Result<()> {
    let Some(current) = home.stat(FILE_NAME)? else { return Ok(()) };
    if !rotation.is_due(current.size, incoming) {
        return Ok(());
    }
    // The oldest kept, and any left past `keep` by a larger setting before.
    let keep = rotation.keep.clamp(1, Rotation::MAX_KEEP);
    for n in keep..=Rotation::MAX_KEEP {
        if !home.remove(&old_name(n))? && n > keep {
            break;
        }
    }
    for n in (1..keep).rev() {
        match home.rename(&old_name(n), &old_name(n + 1)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => other?,
        }
    }
    home.rename(FILE_NAME, &old_name(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_goes_to_a_new_file_only_past_the_limit_and_never_to_an_empty_one() {
        let r = Rotation { max_bytes: 100, keep: 2 };
        assert!(!r.is_due(0, 500), "an empty file takes any line");
        assert!(!r.is_due(60, 40), "exactly the limit fits");
        assert!(r.is_due(60, 41));
        assert!(r.is_due(u64::MAX, usize::MAX), "no overflow");
    }
}
