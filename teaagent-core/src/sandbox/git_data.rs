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
use std::path::{Component, Path, PathBuf};

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
    let mut paths = split.paths;
    if let Some(shared) = split.shared {
        let shared_path = git_dir.join(format!("sharedindex.{shared}"));
        let shared_index = read_index(&shared_path)?.ok_or_else(|| {
            format!("refused: the shared index {} is missing; nothing was run", shown(&shared_path))
        })?;
        // The split index's removals are not applied: a submodule removed since is protected
        // still, which only keeps read-only what was git data.
        paths.extend(shared_index.paths);
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

fn read_index(path: &Path) -> Result<Option<git_index::Gitlinks>, String> {
    let bytes = match crate::home::read_path(path, INDEX_MAX) {
        Ok(Some(bytes)) => bytes,
        // No index (a repository without commits), or no git directory at all.
        Ok(None) => return Ok(None),
        Err(crate::home::OwnFileError::Io { source, .. })
            if matches!(source.raw_os_error(), Some(libc::ENOTDIR) | Some(libc::ENOENT)) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(format!("refused: the sandbox cannot read git's index: {e}; nothing was run")),
    };
    git_index::gitlinks(&bytes)
        .map(Some)
        .map_err(|e| format!("refused: {} is {e}; nothing was run", shown(path)))
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
