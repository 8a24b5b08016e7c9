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
//! The repository is the one that holds the place: the place itself, or the nearest directory
//! above it with a `.git`, as git finds it (a workspace that is a package of a monorepo); of its
//! submodules, those beneath the place. The built-in `move_path`, which runs outside the
//! sandbox, reads the same ([`survey`]) and moves no submodule, nor a directory that holds one,
//! nor anything into a submodule's place.
//!
//! Not covered: a repository nested in the workspace that no index records (a clone inside it
//! that nobody added): git runs what its `.git` names when the user runs git in it, not from the
//! workspace's own `git status`.

use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use rustix::fs::{Mode, OFlags};

use super::git_index;
use crate::home::FileVersion;

/// The largest index read (about 3 million entries), so a hostile one cannot make every command
/// read without bound.
const INDEX_MAX: u64 = 256 << 20;
/// The most submodules protected, all levels together, and the deepest nesting followed: each
/// is a mount or two in every command's sandbox.
const MOST_SUBMODULES: usize = 4096;
const DEEPEST: usize = 16;

/// What git reads in a place, found by [`survey`].
#[derive(Debug, Default)]
pub(crate) struct GitData {
    /// Each repository's `.git` (the place's and every checked-out submodule's) and the git
    /// directory a `.git` file names.
    git_dirs: Vec<PathBuf>,
    /// Every submodule's path (the gitlinks of every index, nested ones included).
    #[cfg_attr(not(feature = "builtin-tools"), allow(dead_code))]
    pub(crate) submodules: Vec<PathBuf>,
    /// What stays read-only of a submodule that is not checked out: its directory, or what
    /// stands where one of its leading directories should be.
    unpopulated: Vec<PathBuf>,
    /// Submodules without a directory: the place whose index records each, and its path there.
    missing: Vec<(PathBuf, PathBuf)>,
}

/// The git data of writable place `dir` that stays read-only (module docs), making the
/// directory of each submodule that has none first. An error refuses the command.
pub(super) fn read_only(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let refused = |e: String| format!("refused: {e}; nothing was run");
    let data = survey(dir).map_err(refused)?;
    let mut read_only = data.git_dirs;
    read_only.extend(data.unpopulated);
    // (All beneath `dir`: the survey keeps only the submodules there.)
    for (place, relative) in data.missing {
        make_dirs(&place, &relative).map_err(refused)?;
        read_only.push(place.join(relative));
    }
    Ok(read_only)
}

/// What git reads in the repository that holds `dir` (`dir` itself when it has a `.git`, else
/// the nearest directory above it that has one, as git finds it): its git directory and its
/// submodules, recursively. An error when an index cannot be read, a submodule's path leads
/// through a symbolic link (which anyone who may write beside it can replace), or there are
/// more submodules than the bound.
pub(crate) fn survey(dir: &Path) -> Result<GitData, String> {
    let top = dir.ancestors().find(|up| std::fs::symlink_metadata(up.join(".git")).is_ok()).unwrap_or(dir);
    let mut data = GitData::default();
    collect(top, dir, 0, &mut data)?;
    Ok(data)
}

/// Collects what git reads in the work tree at `dir`, of the submodules beneath `within`.
fn collect(dir: &Path, within: &Path, depth: usize, data: &mut GitData) -> Result<(), String> {
    let dot_git = dir.join(".git");
    let named = crate::workspace::git_dir_named_in(dir);
    data.git_dirs.push(dot_git.clone());
    data.git_dirs.extend(named.clone());
    for gitlink in gitlinks(&named.unwrap_or(dot_git))? {
        let Some(relative) = relative_path(&gitlink) else {
            return Err(format!(
                "the git index of {} records a submodule at `{}`, which is no path in it",
                shown(dir),
                crate::visible::escape(&String::from_utf8_lossy(&gitlink))
            ));
        };
        let at = dir.join(&relative);
        if !at.starts_with(within) {
            continue;
        }
        if data.submodules.len() == MOST_SUBMODULES {
            return Err(format!(
                "the workspace has more than {MOST_SUBMODULES} submodules, whose git data is kept read-only"
            ));
        }
        data.submodules.push(at.clone());
        // Each leading directory, then the submodule's own: none may be a link.
        let mut reached = dir.to_path_buf();
        let mut found = Found::Directory;
        for name in relative.components() {
            reached.push(name);
            match std::fs::symlink_metadata(&reached) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    let link = match reached == at {
                        true => "is a symbolic link".to_owned(),
                        false => format!("leads through the symbolic link {}", shown(&reached)),
                    };
                    return Err(format!(
                        "the submodule {} {link}, which cannot be kept from being replaced",
                        shown(&at)
                    ));
                }
                Ok(meta) if !meta.is_dir() => {
                    found = Found::Other(reached);
                    break;
                }
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    found = Found::Missing;
                    break;
                }
                Err(e) => return Err(format!("cannot look at the submodule {}: {e}", shown(&at))),
            }
        }
        match found {
            Found::Missing => data.missing.push((dir.to_path_buf(), relative)),
            // A file where git expects a directory: nothing may be made in its place.
            Found::Other(standing) => data.unpopulated.push(standing),
            // Unpopulated: nothing may be made in it.
            Found::Directory if std::fs::symlink_metadata(at.join(".git")).is_err() => {
                data.unpopulated.push(at)
            }
            Found::Directory if depth + 1 > DEEPEST => {
                return Err(format!("submodules nested more than {DEEPEST} deep at {}", shown(&at)));
            }
            Found::Directory => collect(&at, within, depth + 1, data)?,
        }
    }
    Ok(())
}

/// What stands at a submodule's path.
enum Found {
    /// A directory, every leading one too.
    Directory,
    /// Nothing, there or at a leading directory.
    Missing,
    /// Something else than a directory (a file), there or at a leading directory.
    Other(PathBuf),
}

/// The gitlinks the index of git directory `git_dir` records (a split index's and its shared
/// index's together); none when it has no index.
fn gitlinks(git_dir: &Path) -> Result<Vec<Vec<u8>>, String> {
    let Some(split) = read_index(&git_dir.join("index"))? else { return Ok(Vec::new()) };
    let mut paths = split.paths.clone();
    if let Some(shared) = &split.shared {
        let shared_path = git_dir.join(format!("sharedindex.{shared}"));
        let shared_index = read_index(&shared_path)?
            .ok_or_else(|| format!("the shared index {} is missing", shown(&shared_path)))?;
        // The split index's removals are not applied: a submodule removed since is protected
        // still, which only keeps read-only what was git data.
        paths.extend(shared_index.paths.iter().cloned());
        if split.unnamed {
            return Err(format!(
                "the split index in {} replaces an entry with a submodule this version of teaagent cannot place (run `git update-index --no-split-index` there)",
                shown(git_dir)
            ));
        }
    }
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// The indexes read before (a few: a server has one workspace and a few writable places), so
/// that a large repository's is not read again at every command.
static READ: Mutex<Vec<(PathBuf, FileVersion, Arc<git_index::Gitlinks>)>> = Mutex::new(Vec::new());
/// The most indexes [`READ`] keeps.
const KEPT: usize = 16;

fn read_index(path: &Path) -> Result<Option<Arc<git_index::Gitlinks>>, String> {
    let refused = |e: &dyn std::fmt::Display| format!("cannot read git's index {}: {e}", shown(path));
    // Opened without blocking (a FIFO in its place), never as a terminal.
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        // No index (a repository without commits), or no git directory at all.
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return Ok(None),
        Err(e) => return Err(refused(&e)),
    };
    let file = std::fs::File::from(fd);
    // Kept by its version (`home/file_version.rs`): git replaces its index by renaming a new
    // file over it.
    let version = FileVersion::of(&file);
    let mut read = READ.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, _, links)) = read.iter().find(|(p, v, _)| p == path && Some(*v) == version) {
        return Ok(Some(Arc::clone(links)));
    }
    drop(read);
    let reader = file.try_clone().map_err(|e| refused(&e))?;
    let bytes = crate::home::read_regular(reader, path, INDEX_MAX).map_err(|e| refused(&e))?;
    let links = git_index::gitlinks(&bytes).map_err(|e| format!("{} is {e}", shown(path)))?;
    let links = Arc::new(links);
    let unchanged = version.filter(|v| FileVersion::of(&file) == Some(*v) && v.settled(SystemTime::now()));
    if let Some(version) = unchanged {
        read = READ.lock().unwrap_or_else(PoisonError::into_inner);
        read.retain(|(p, _, _)| p != path);
        if read.len() == KEPT {
            read.remove(0);
        }
        read.push((path.to_path_buf(), version, Arc::clone(&links)));
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
        format!("cannot make the directory of the submodule {}: {e}", shown(&dir.join(relative)))
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

    use super::super::git_index::tests::git;
    use super::*;

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
        // Only an index left alone for two seconds is kept (counted in whole seconds).
        std::thread::sleep(std::time::Duration::from_millis(3100));
        let first = read_index(&index).expect("read").expect("an index");
        let again = read_index(&index).expect("read").expect("an index");
        assert!(Arc::ptr_eq(&first, &again), "an unchanged index was read again");
        add_gitlink(dir, "two");
        let changed = read_index(&index).expect("read").expect("an index");
        assert_eq!(changed.paths, vec![b"one".to_vec(), b"two".to_vec()]);
        assert_eq!(gitlinks(&dir.join(".git")).expect("gitlinks"), vec![b"one".to_vec(), b"two".to_vec()]);
    }

    /// A FIFO, a link to `/dev/zero` or a file past the bound where the index should be:
    /// refused at once, nothing read or waited for.
    #[test]
    fn an_index_that_is_no_regular_file_or_too_large_is_refused_without_reading() {
        let scratch = crate::scratch::Scratch::new("git-data-hostile-index");
        let index = scratch.path().join("index");
        let fifo = Command::new("mkfifo").arg(&index).status().expect("mkfifo");
        assert!(fifo.success());
        let started = std::time::Instant::now();
        assert!(read_index(&index).is_err_and(|e| e.contains("not a regular file")));
        std::fs::remove_file(&index).expect("remove");
        std::os::unix::fs::symlink("/dev/zero", &index).expect("link");
        assert!(read_index(&index).is_err_and(|e| e.contains("not a regular file")));
        std::fs::remove_file(&index).expect("remove");
        let past = std::fs::File::create(&index).expect("index");
        past.set_len(INDEX_MAX + 1).expect("a sparse file past the bound");
        assert!(read_index(&index).is_err_and(|e| e.contains("larger than")));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    /// At the bound of submodules the survey goes on; past it, it refuses. A name with control
    /// characters is shown escaped.
    #[test]
    fn submodules_are_bounded_and_their_names_shown_escaped() {
        let scratch = crate::scratch::Scratch::new("git-data-bounds");
        let dir = scratch.path();
        git(dir, &["init", "-q"]);
        let add = |from: usize, to: usize| {
            let blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
            let lines: String = (from..to).map(|i| format!("160000 {blob}\tm/{i}\n")).collect();
            let mut child = Command::new("git")
                .args(["update-index", "--index-info"])
                .current_dir(dir)
                .stdin(std::process::Stdio::piped())
                .spawn()
                .expect("git");
            std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), lines.as_bytes())
                .expect("write");
            assert!(child.wait().expect("git").success());
        };
        add(0, MOST_SUBMODULES);
        assert_eq!(survey(dir).expect("at the bound").submodules.len(), MOST_SUBMODULES);
        add(MOST_SUBMODULES, MOST_SUBMODULES + 1);
        assert!(survey(dir).is_err_and(|e| e.contains("more than 4096 submodules")));

        let scratch = crate::scratch::Scratch::new("git-data-escaped");
        let dir = scratch.path();
        git(dir, &["init", "-q"]);
        add_gitlink(dir, "ln\u{1b}[31mk");
        std::os::unix::fs::symlink("/tmp", dir.join("ln\u{1b}[31mk")).expect("link");
        let said = survey(dir).expect_err("a link at a submodule's path");
        assert!(said.contains("is a symbolic link") && !said.contains('\u{1b}'), "{said:?}");
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
