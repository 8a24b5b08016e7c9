//! The git data inside a writable place that stays read-only for commands: what git runs at the
//! user's next `git` command is named there.
//!
//! - The place's own `.git` (a directory, or a file naming one elsewhere, and then that one too).
//!   Not only hooks and `config` name programs git runs: a gitlink written into the index, or
//!   into a commit, makes the next `git status` enter a "submodule" whose configuration the
//!   command wrote anywhere in the workspace (its `core.fsmonitor` then runs, outside the
//!   sandbox).
//! - Each **submodule** the index records (a gitlink), recursively: `git status` enters a
//!   checked-out one and runs git there, with the configuration its `.git` leads to. A checked-out
//!   submodule's `.git` stays read-only (and the git directory it names); an unpopulated one's
//!   directory stays read-only and empty, so that no `.git` can be made in it. One whose
//!   directory is missing gets an empty one first, as `git clone` leaves it.
//!
//! A read-only mount could still be moved away with a directory that holds it (`mv sub old &&
//! mkdir sub`, then a `.git` of the command's own): the sandbox makes every directory between a
//! writable place and a protected path a mount point of its own (`sandbox/linux.rs`), which can be
//! neither renamed nor removed. (A file renamed across such a directory's boundary fails as
//! between file systems, with `EXDEV`; `mv` copies instead.)
//!
//! Not covered: a repository nested in the workspace that no index records (a clone inside it
//! that nobody added): git runs what its `.git` names when the user runs git in it, not from the
//! workspace's own `git status`.

use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fs::{Mode, OFlags};

use super::git_index;

/// The largest index read (about 3 million entries), so a hostile one cannot make every command
/// read without bound.
const INDEX_MAX: u64 = 256 << 20;
/// The most submodules protected, all levels together, and the deepest nesting followed: each
/// is a mount or two in every command's sandbox.
const MOST_SUBMODULES: usize = 4096;
const DEEPEST: usize = 16;

/// The git data of writable place `dir` that stays read-only (module docs): its `.git`, the git
/// directory that names, and its submodules' (creating the directory of one that has none).
/// An error refuses the command: an index this cannot read, a submodule's path that leads
/// through a link, more submodules than the bound.
pub(super) fn read_only(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut left = MOST_SUBMODULES;
    collect(dir, 0, &mut found, &mut left)?;
    Ok(found)
}

fn collect(dir: &Path, depth: usize, found: &mut Vec<PathBuf>, left: &mut usize) -> Result<(), String> {
    let dot_git = dir.join(".git");
    let named = crate::workspace::git_dir_named_in(dir);
    found.push(dot_git.clone());
    found.extend(named.clone());
    for gitlink in gitlinks(&named.unwrap_or(dot_git))? {
        let Some(relative) = relative_path(&gitlink) else {
            return Err(format!(
                "refused: the git index of {} records a submodule at `{}`, which is no path in it; nothing was run",
                shown(dir),
                crate::visible::escape(&String::from_utf8_lossy(&gitlink))
            ));
        };
        *left = left.checked_sub(1).ok_or_else(|| {
            format!(
                "refused: the workspace has more than {MOST_SUBMODULES} submodules, whose git data the sandbox keeps read-only; nothing was run"
            )
        })?;
        let at = dir.join(&relative);
        let kind = match std::fs::symlink_metadata(&at) {
            Ok(meta) => meta.file_type(),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                make_dirs(dir, &relative)?;
                found.push(at);
                continue;
            }
            Err(e) => return Err(format!("refused: cannot look at the submodule {}: {e}", shown(&at))),
        };
        if kind.is_symlink() {
            return Err(format!(
                "refused: the submodule {} is a symbolic link, which the sandbox cannot keep from being replaced; nothing was run",
                shown(&at)
            ));
        }
        let checked_out = kind.is_dir() && std::fs::symlink_metadata(at.join(".git")).is_ok();
        if !checked_out {
            // Unpopulated (or a file where git expects one): nothing may be made there.
            found.push(at);
        } else if depth + 1 > DEEPEST {
            return Err(format!(
                "refused: submodules nested more than {DEEPEST} deep at {}; nothing was run",
                shown(&at)
            ));
        } else {
            collect(&at, depth + 1, found, left)?;
        }
    }
    Ok(())
}

/// The gitlinks the index of git directory `git_dir` records (a split index's and its shared
/// index's together); none when it has no index.
fn gitlinks(git_dir: &Path) -> Result<Vec<Vec<u8>>, String> {
    let Some(split) = read_index(&git_dir.join("index"))? else { return Ok(Vec::new()) };
    let mut paths = split.paths.clone();
    if let Some(shared) = &split.shared {
        let shared_path = git_dir.join(format!("sharedindex.{shared}"));
        let shared_index = read_index(&shared_path)?.ok_or_else(|| {
            format!("refused: the shared index {} is missing; nothing was run", shown(&shared_path))
        })?;
        // The split index's removals are not applied: a submodule removed since is protected
        // still, which only keeps read-only what was git data.
        paths.extend(shared_index.paths.iter().cloned());
        if split.unnamed {
            return Err(format!(
                "refused: the split index in {} replaces an entry with a submodule this version of teaagent cannot place; run `git update-index --no-split-index` there; nothing was run",
                shown(git_dir)
            ));
        }
    }
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// What an index file is: git replaces its index by renaming a new file over it, so a file with
/// the same identity, size and times, changed more than two seconds ago (file times are coarser
/// than the time two writes can take), has the same entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

/// The indexes read before (a few: a server has one workspace and a few writable places), so
/// that a large repository's is not read again at every command.
static READ: Mutex<Vec<(PathBuf, Identity, Arc<git_index::Gitlinks>)>> = Mutex::new(Vec::new());
/// The most indexes [`READ`] keeps.
const KEPT: usize = 16;

fn read_index(path: &Path) -> Result<Option<Arc<git_index::Gitlinks>>, String> {
    let refused = |e: &dyn std::fmt::Display| {
        format!("refused: the sandbox cannot read git's index {}: {e}; nothing was run", shown(path))
    };
    // Opened without blocking (a FIFO in its place), never as a terminal.
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        // No index (a repository without commits), or no git directory at all.
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return Ok(None),
        Err(e) => return Err(refused(&e)),
    };
    let file = std::fs::File::from(fd);
    let meta = file.metadata().map_err(|e| refused(&e))?;
    let identity = Identity {
        dev: meta.dev(),
        ino: meta.ino(),
        size: meta.size(),
        modified: (meta.mtime(), meta.mtime_nsec()),
        changed: (meta.ctime(), meta.ctime_nsec()),
    };
    let mut read = READ.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, _, links)) = read.iter().find(|(p, id, _)| p == path && *id == identity) {
        return Ok(Some(Arc::clone(links)));
    }
    drop(read);
    let bytes = crate::home::read_regular(file, path, INDEX_MAX).map_err(|e| refused(&e))?;
    let links = git_index::gitlinks(&bytes)
        .map_err(|e| format!("refused: {} is {e}; nothing was run", shown(path)))?;
    let links = Arc::new(links);
    let nanos = |(secs, nanos): (i64, i64)| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let last_change = nanos(identity.modified).max(nanos(identity.changed));
    if i128::try_from(now.as_nanos()).is_ok_and(|now| now - last_change > 2_000_000_000) {
        read = READ.lock().unwrap_or_else(PoisonError::into_inner);
        read.retain(|(p, _, _)| p != path);
        if read.len() == KEPT {
            read.remove(0);
        }
        read.push((path.to_path_buf(), identity, Arc::clone(&links)));
    }
    Ok(Some(links))
}

/// A gitlink's path as a relative path of plain names (git writes no other).
fn relative_path(gitlink: &[u8]) -> Option<PathBuf> {
    let path = Path::new(std::ffi::OsStr::from_bytes(gitlink));
    let plain = path.components().all(|c| matches!(c, Component::Normal(_)));
    (plain && !gitlink.is_empty() && !gitlink.contains(&0)).then(|| path.to_path_buf())
}

/// Makes the directories of `relative` beneath `dir`, one name at a time from a handle on the
/// one before, never through a link.
fn make_dirs(dir: &Path, relative: &Path) -> Result<(), String> {
    let failed = |e: rustix::io::Errno| {
        format!(
            "refused: cannot make the directory of the submodule {}: {e}; nothing was run",
            shown(&dir.join(relative))
        )
    };
    let open = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut at = rustix::fs::open(dir, open, Mode::empty()).map_err(failed)?;
    for name in relative.components() {
        match rustix::fs::mkdirat(&at, name.as_os_str(), Mode::from_bits_truncate(0o777)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(failed(e)),
        }
        at = rustix::fs::openat(&at, name.as_os_str(), open | OFlags::NOFOLLOW, Mode::empty())
            .map_err(failed)?;
    }
    Ok(())
}

fn shown(path: &Path) -> String {
    crate::visible::escape(&path.display().to_string())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git").args(args).current_dir(dir).output().expect("git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn add_gitlink(dir: &Path, path: &str) {
        let blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
        git(dir, &["update-index", "--add", "--cacheinfo", &format!("160000,{blob},{path}")]);
    }

    /// An index read again while unchanged is not parsed again; one git replaced is.
    #[test]
    fn an_index_is_read_again_only_when_git_replaced_it() {
        let scratch = crate::scratch::Scratch::new("git-data-cache");
        let dir = scratch.path();
        git(dir, &["init", "-q"]);
        add_gitlink(dir, "one");
        let index = dir.join(".git/index");
        // Only an index older than two seconds is kept.
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let first = read_index(&index).expect("read").expect("an index");
        let again = read_index(&index).expect("read").expect("an index");
        assert!(Arc::ptr_eq(&first, &again), "an unchanged index was read again");
        add_gitlink(dir, "two");
        let changed = read_index(&index).expect("read").expect("an index");
        assert_eq!(changed.paths, vec![b"one".to_vec(), b"two".to_vec()]);
        assert_eq!(gitlinks(&dir.join(".git")).expect("gitlinks"), vec![b"one".to_vec(), b"two".to_vec()]);
    }

    #[test]
    fn only_plain_relative_paths_are_submodule_paths() {
        for good in ["a", "a/b", "lib/deep/sub-two"] {
            assert_eq!(relative_path(good.as_bytes()), Some(PathBuf::from(good)), "{good}");
        }
        for bad in ["", "/etc", "../x", "a/../../x", "./a", "a/./b", "a\0b"] {
            let found = relative_path(bad.as_bytes());
            assert!(
                found.is_none() || bad == "a/./b" && found == Some(PathBuf::from("a/b")),
                "{bad}: {found:?}"
            );
        }
    }
}
