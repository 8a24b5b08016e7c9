//! What tools never reach in the workspace, whatever the policy says.
//!
//! - **teaagent's home**, when it lies beneath the root (a server started in the user's home
//!   directory, or at `/`, as some clients start servers): it holds the configuration (with the
//!   environment of external servers), the trust store, tokens and the audit log. Nothing in it
//!   is read, listed, searched, served as a resource or written, by any path or link that leads
//!   there: [`Workspace::resolve`](super::Workspace::resolve) refuses it (`resolve.rs`) and walks
//!   leave it out ([`Workspace::is_hidden`](super::Workspace::is_hidden)).
//! - **`.git` and `.teaagent` directories**, at any depth, are read but never changed: git runs
//!   what `.git/hooks` and `.git/config` name as programs at the user's next `git` command (even
//!   `git status`), outside any sandbox; `.teaagent/` holds a workspace's own teaagent settings.
//!   Every write of the workspace ([`Resolved`]'s `create_parents`, `create_new`, `write_atomic`,
//!   `remove`, `rename_to`) refuses a path with such a component, whatever links led there; a
//!   call of a tool that is not read-only is refused before it runs. So is the git directory the
//!   root's `.git` file names, when it lies beneath the root (`git init --separate-git-dir`).
//!   A submodule's directory is git data too: `move_path` moves none, nor anything into the
//!   place of one (`sandbox/git_data.rs`).
//!
//! `shell_exec`'s commands meet the same rules in their sandbox (`crate::sandbox`).

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use super::PathError;
use super::Resolved;
use crate::error::PathRefusal;

/// The largest `.git` file git reads (its `read_gitfile_gently` refuses larger ones): one that
/// size still names a git directory, so nothing smaller is the limit here.
const GIT_FILE_MAX: u64 = 1 << 20;

/// Directory names whose contents tools may read but never change, at any depth (compared
/// without regard to ASCII case, as a case-insensitive file system would).
pub const UNWRITABLE_DIRS: [&str; 2] = [".git", ".teaagent"];

/// The first component of `relative` that [`UNWRITABLE_DIRS`] names, if any.
fn unwritable_component(relative: &Path) -> Option<&'static str> {
    relative.components().find_map(|c| match c {
        Component::Normal(name) => unwritable_name(name),
        _ => None,
    })
}

fn unwritable_name(name: &OsStr) -> Option<&'static str> {
    let name = name.as_encoded_bytes();
    UNWRITABLE_DIRS.into_iter().find(|dir| dir.as_bytes().eq_ignore_ascii_case(name))
}

impl Resolved {
    /// Refuses a write to what this names when it lies in git data or teaagent's settings
    /// ([`Workspace::unwritable`](super::Workspace::unwritable), judged when it was resolved).
    pub(crate) fn check_writable(&self) -> Result<(), PathError> {
        match self.unwritable {
            Some(dir) => Err(PathError::refused(PathRefusal::Unwritable, format!("`{dir}`"))),
            None => Ok(()),
        }
    }
}

impl super::Workspace {
    /// The git data or settings `relative` (physical) lies in, which tools never change: a
    /// `.git` or `.teaagent` component, or the git directory the root's `.git` file names.
    pub fn unwritable(&self, relative: &Path) -> Option<&'static str> {
        unwritable_component(relative).or_else(|| {
            let named = self.inner.git_dir.as_deref()?;
            relative.starts_with(named).then_some(".git")
        })
    }
}

/// The git directory a `.git` file in `dir` names (`gitdir: PATH`, as `git init
/// --separate-git-dir`, a worktree and a submodule's checkout have), as spelled, joined to
/// `dir`. The file is read only if it is a regular file no larger than git itself reads
/// (1 MiB), opened without blocking (a command may have put a FIFO in its place).
pub fn git_dir_named_in(dir: &Path) -> Option<PathBuf> {
    let bytes = crate::home::read_path(&dir.join(".git"), GIT_FILE_MAX).ok().flatten()?;
    let text = String::from_utf8_lossy(&bytes);
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    Some(dir.join(named))
}

/// Where the git directory the root's `.git` file names lies beneath the root, if it does.
pub(super) fn git_dir_beneath(root: &Path) -> Option<PathBuf> {
    super::resolve::physically_beneath(root, &git_dir_named_in(root)?)
}

/// Where teaagent's home lies beneath `root` (both physical: links followed), relative to the
/// root; `None` when it does not (or has no place: no `TEAAGENT_HOME`, no `HOME`). A home that
/// does not exist yet is placed by its longest existing ancestor.
pub(super) fn home_beneath(root: &Path) -> Option<PathBuf> {
    let home = std::path::absolute(crate::home::dir().ok()?).ok()?;
    super::resolve::physically_beneath(root, &home)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_or_teaagent_component_anywhere_is_unwritable_in_any_case() {
        for path in [".git", ".git/hooks/pre-commit", "vendor/lib/.git/config", ".GIT/config", ".teaagent/x"]
        {
            assert!(unwritable_component(Path::new(path)).is_some(), "{path}");
        }
        for path in ["src/git/x", ".gitignore", ".github/workflows/ci.yml", "a.git/x", "teaagent/x", ""] {
            assert_eq!(unwritable_component(Path::new(path)), None, "{path}");
        }
    }

    /// The writes themselves refuse, whatever a caller checked before (a tool of the
    /// framework's user, or a link swapped in after the call's check).
    #[test]
    fn every_write_of_the_workspace_refuses_an_unwritable_place() {
        let scratch = crate::scratch::Scratch::new("off-limits");
        let base = scratch.path();
        std::fs::create_dir_all(base.join(".git/hooks")).expect("mkdir");
        std::fs::write(base.join(".git/config"), "[core]\n").expect("write");
        std::fs::write(base.join("evil.sh"), "x").expect("write");
        std::os::unix::fs::symlink(".git/hooks", base.join("hooks")).expect("link");
        let ws = super::super::Workspace::open(base).expect("open");
        let unwritable = |r: Result<(), PathError>| {
            matches!(r, Err(PathError::Refused { reason: PathRefusal::Unwritable, .. }))
        };
        let mut nested = ws.resolve_for_create(".git/new/dir/file").expect("resolve");
        assert!(unwritable(nested.create_parents()));
        assert!(unwritable(ws.resolve_for_create("hooks/pre-commit").expect("resolve").create_new(b"x")));
        let config = ws.resolve(".git/config").expect("resolve");
        assert!(unwritable(config.write_atomic(b"x")));
        assert!(unwritable(config.remove()));
        assert!(unwritable(config.rename_to(&ws.resolve_for_create("config").expect("resolve"))));
        let evil = ws.resolve_no_follow("evil.sh").expect("resolve");
        assert!(unwritable(evil.rename_to(&ws.resolve_for_create(".git/hooks/pre-push").expect("resolve"))));
        assert_eq!(std::fs::read_to_string(base.join(".git/config")).expect("read"), "[core]\n");
        assert!(!base.join(".git/new").exists() && !base.join(".git/hooks/pre-commit").exists());
        assert!(base.join("evil.sh").exists());
    }
}
