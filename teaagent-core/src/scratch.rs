//! Scratch directories for the unit tests: one per test name and process, emptied when made
//! and removed when dropped.

use std::path::{Path, PathBuf};

/// A scratch directory, removed at the end.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    /// `$TMPDIR/teaagent-{name}-{pid}`, empty.
    pub(crate) fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("teaagent-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        Scratch(dir)
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `rel` (with its directories).
    // (Only the walk's tests write trees; they need the feature `builtin-tools`.)
    #[cfg_attr(not(feature = "builtin-tools"), allow(dead_code))]
    pub(crate) fn write(&self, rel: &str, contents: &str) {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, contents).expect("write");
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
