//! What tells one version of a file from another, for caches of what was worked out from its
//! bytes (an external server's digests, `gateway/file_digests.rs`; a git index's gitlinks,
//! `sandbox/git_data.rs`): its device, inode, size, and modification and status change times to
//! the nanosecond.
//!
//! A file whose bytes change gets a new status change time (`ctime`), which no unprivileged
//! process can set back, and a file replaced by a rename (as git writes its index) is another
//! inode. What a cache must add, as git does for its index: remember only a version last changed
//! more than [`SETTLE`] ago (on a file system with coarse timestamps, a second write in the same
//! tick would keep every time as it was), and only when the version was the same before and
//! after the bytes were read.

use std::fs::File;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// How long after its last change a file must have been left alone to be remembered.
const SETTLE: Duration = Duration::from_secs(2);

/// One version of a file (module docs). Its fields are what `$TEAAGENT_HOME/file_digests.json`
/// keeps for each digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct FileVersion {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: u64,
    pub(crate) mtime: (i64, u64),
    pub(crate) ctime: (i64, u64),
}

impl FileVersion {
    /// The version of an open file.
    // (The nanoseconds are unsigned on Linux, signed elsewhere.)
    #[allow(clippy::useless_conversion)]
    pub(crate) fn of(file: &File) -> Option<Self> {
        let st = rustix::fs::fstat(file).ok()?;
        Some(Self {
            dev: st.st_dev,
            ino: st.st_ino,
            size: u64::try_from(st.st_size).ok()?,
            mtime: (st.st_mtime, u64::try_from(st.st_mtime_nsec).ok()?),
            ctime: (st.st_ctime, u64::try_from(st.st_ctime_nsec).ok()?),
        })
    }

    /// Whether the file was last changed more than [`SETTLE`] before `now`.
    pub(crate) fn settled(&self, now: SystemTime) -> bool {
        let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let latest = self.mtime.0.max(self.ctime.0);
        u64::try_from(latest).is_ok_and(|t| t.saturating_add(SETTLE.as_secs()) < now)
    }
}
