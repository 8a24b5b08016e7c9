//! Real directory trees for the workspace tests: a workspace root with neighbours an attacker
//! would aim at (an outside directory with a secret, a sibling whose name extends the root's),
//! and a snapshot of everything outside the root to prove nothing there changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// `base/ws` (the workspace), `base/outside/secret.txt`, `base/ws-evil/secret.txt`.
pub struct Tree {
    base: TempDir,
}

impl Tree {
    /// A fresh tree with `ws/src/a.txt` ("hello\n") and the neighbours.
    pub fn new() -> Self {
        let base = tempfile::Builder::new().prefix("teaagent-tree-").tempdir().expect("temp dir");
        let tree = Self { base };
        tree.write("ws/src/a.txt", "hello\n");
        tree.write("outside/secret.txt", "top secret\n");
        tree.write("ws-evil/secret.txt", "evil twin\n");
        tree
    }

    /// The base directory (canonical).
    pub fn base(&self) -> PathBuf {
        self.base.path().canonicalize().expect("canonical base")
    }

    /// The workspace root.
    pub fn root(&self) -> PathBuf {
        self.base().join("ws")
    }

    /// `base/rel` as a path.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.base().join(rel)
    }

    /// Writes `base/rel` (with its directories).
    pub fn write(&self, rel: &str, contents: &str) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, contents).expect("write");
    }

    /// A symbolic link `base/link` → `target` (taken literally).
    pub fn symlink(&self, link: &str, target: impl AsRef<Path>) {
        std::os::unix::fs::symlink(target, self.path(link)).expect("symlink");
    }

    /// A FIFO at `base/rel` (with the system's `mkfifo`).
    pub fn fifo(&self, rel: &str) {
        let status = Command::new("mkfifo").arg(self.path(rel)).status().expect("mkfifo");
        assert!(status.success());
    }

    /// Every file, directory and link under `base` except the workspace itself, with contents.
    pub fn outside_snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        let root = self.root();
        let mut stack = vec![self.base()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("read_dir").flatten() {
                let path = entry.path();
                if path == root {
                    continue;
                }
                let meta = std::fs::symlink_metadata(&path).expect("metadata");
                let what = if meta.is_dir() {
                    stack.push(path.clone());
                    "dir".to_owned()
                } else if meta.file_type().is_symlink() {
                    format!("link {}", std::fs::read_link(&path).expect("readlink").display())
                } else {
                    std::fs::read_to_string(&path).unwrap_or_else(|_| "<binary>".into())
                };
                out.insert(path, what);
            }
        }
        out
    }
}

impl Default for Tree {
    fn default() -> Self {
        Self::new()
    }
}
