//! Resolving a client's path beneath the root, one component at a time.
//!
//! Each directory on the way is opened (`O_DIRECTORY | O_NOFOLLOW`) relative to the one before
//! it, so what was checked is what is used: a directory swapped for a symlink between the check
//! and the open makes the open fail (and the resolution start over), never escape. `..` pops the
//! stack of open directories; it is never looked up in the file system, so it cannot climb out
//! through a directory that was moved. A symbolic link is read and its target spliced into the
//! remaining components: a relative target continues from the link's directory, an absolute one
//! must lie inside the root (compared by components, never as a string prefix). At most 40 links
//! are followed. Nothing is expanded: `~` is a file name like any other.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::Workspace;
use crate::error::PathRefusal;

/// The most symbolic links one resolution follows (as Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Why a path could not be resolved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// Refused by confinement: outside the root, a special file, a link loop, not a valid path.
    #[error("{}{}", reason.describe(), if detail.is_empty() { String::new() } else { format!(" ({detail})") })]
    Refused {
        /// Why.
        reason: PathRefusal,
        /// What exactly (e.g. where a link leads).
        detail: String,
    },
    /// A directory on the way does not exist.
    #[error("no such file or directory")]
    NotFound,
    /// A component on the way is a file, not a directory.
    #[error("a component of the path is not a directory")]
    NotADirectory,
    /// The file system failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl PathError {
    pub(crate) fn refused(reason: PathRefusal, detail: impl Into<String>) -> Self {
        PathError::Refused { reason, detail: detail.into() }
    }
}

/// What a resolved path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Nothing yet (its directory exists): a path to create.
    Missing,
    /// A regular file.
    File {
        /// Size in bytes.
        size: u64,
        /// Hard links to it.
        links: u64,
    },
    /// A directory.
    Dir,
    /// A symbolic link (only when the last link is not followed).
    Symlink,
}

/// A path resolved beneath the root: the open directory that holds it, its name there, and its
/// physical path relative to the root (links resolved).
#[derive(Debug, Clone)]
pub struct Resolved {
    pub(crate) parent: Arc<OwnedFd>,
    /// `None` for the root itself.
    pub(crate) name: Option<OsString>,
    relative: PathBuf,
    target: Target,
    /// Directories that do not exist yet between `parent` and `name` (only from
    /// [`Workspace::resolve_for_create`]).
    pub(crate) missing_dirs: Vec<OsString>,
    /// The git data it lies in, which no write reaches (`off_limits.rs`).
    pub(crate) unwritable: Option<&'static str>,
}

impl Resolved {
    /// The physical path relative to the root (`""` for the root).
    pub fn relative(&self) -> &Path {
        &self.relative
    }

    /// The relative path for display and for policy: `.` for the root, `/`-separated.
    pub fn display(&self) -> String {
        if self.relative.as_os_str().is_empty() {
            ".".to_owned()
        } else {
            self.relative.to_string_lossy().into_owned()
        }
    }

    /// What it names.
    pub fn target(&self) -> Target {
        self.target
    }

    /// How many names (hard links) the file it names has; 1 for anything that is not a file.
    pub fn links(&self) -> u64 {
        match self.target {
            Target::File { links, .. } => links,
            _ => 1,
        }
    }

    /// Whether this is the root itself.
    pub fn is_root(&self) -> bool {
        self.name.is_none()
    }

    /// Directories that would have to be created first (see [`Workspace::resolve_for_create`]).
    pub fn missing_dirs(&self) -> usize {
        self.missing_dirs.len()
    }
}

impl Workspace {
    /// Resolves `input` (relative to the root, or absolute inside it), following symbolic links
    /// that stay inside. FIFOs, sockets and devices are refused.
    pub fn resolve(&self, input: impl AsRef<Path>) -> Result<Resolved, PathError> {
        self.resolve_with(input.as_ref(), true)
    }

    /// Like [`Workspace::resolve`], but a symbolic link in the last component is not followed
    /// (deleting or moving a link acts on the link).
    pub fn resolve_no_follow(&self, input: impl AsRef<Path>) -> Result<Resolved, PathError> {
        self.resolve_with(input.as_ref(), false)
    }

    /// Like [`Workspace::resolve`], but directories missing on the way are allowed: the result
    /// is [`Target::Missing`] and remembers them, so a file can be created with its parents.
    /// After a missing directory only plain names may follow (no `..`, no links to judge).
    pub fn resolve_for_create(&self, input: impl AsRef<Path>) -> Result<Resolved, PathError> {
        let relative = self.relative_input(input.as_ref())?;
        self.retrying(|| self.walk(&relative, true, true))
    }

    /// Like [`Workspace::resolve_for_create`], but a symbolic link in the last component is not
    /// followed: the entry itself, as a tool that acts on names (delete, move) sees it.
    pub fn resolve_entry_for_create(&self, input: impl AsRef<Path>) -> Result<Resolved, PathError> {
        let relative = self.relative_input(input.as_ref())?;
        self.retrying(|| self.walk(&relative, false, true))
    }

    fn resolve_with(&self, input: &Path, follow_last: bool) -> Result<Resolved, PathError> {
        let relative = self.relative_input(input)?;
        self.retrying(|| self.walk(&relative, follow_last, false))
    }

    fn retrying(&self, walk: impl Fn() -> Result<Resolved, PathError>) -> Result<Resolved, PathError> {
        // A directory replaced by a link between its check and its open fails the open; start
        // over (the next pass sees the link and judges where it leads).
        let mut attempts = 0;
        loop {
            match walk() {
                Err(PathError::Io(e)) if is_swap(&e) && attempts < 3 => attempts += 1,
                // Where it really is (links resolved) is what is judged.
                Ok(resolved) if self.in_home(resolved.relative()) => return Err(home_refusal()),
                Ok(mut resolved) => {
                    resolved.unwritable = self.unwritable(resolved.relative());
                    return Ok(resolved);
                }
                other => return other,
            }
        }
    }

    /// The input as a path relative to the root.
    fn relative_input(&self, path: &Path) -> Result<PathBuf, PathError> {
        let bytes = path.as_os_str().as_bytes();
        if bytes.is_empty() {
            return Err(PathError::refused(PathRefusal::InvalidPath, "the path is empty"));
        }
        if bytes.contains(&0) {
            return Err(PathError::refused(PathRefusal::InvalidPath, "the path contains a NUL byte"));
        }
        if !path.is_absolute() {
            return Ok(path.to_path_buf());
        }
        match self.strip_root(path).map(Path::to_path_buf).or_else(|| self.through_links(path)) {
            Some(rest) => Ok(rest),
            None => Err(PathError::refused(
                PathRefusal::OutsideWorkspace,
                format!("an absolute path outside the workspace root {}", self.root().display()),
            )),
        }
    }

    /// An absolute path that names a place inside the root by another spelling (a link above
    /// the root, as `PWD` through a link or macOS's `/tmp` give; `..` in the root's spelling):
    /// its longest existing ancestor, with every link followed, lies inside the canonical root.
    /// The result is relative to the root and is then resolved like any other relative path,
    /// through the root's handle, so nothing outside is reached by it.
    fn through_links(&self, path: &Path) -> Option<PathBuf> {
        physically_beneath(self.root(), path)
    }

    fn walk(&self, relative: &Path, follow_last: bool, allow_missing: bool) -> Result<Resolved, PathError> {
        if self.in_home(Path::new("")) {
            return Err(home_refusal());
        }
        let root = self.dir_handle();
        let mut queue: VecDeque<OsString> = components(relative)?;
        // Directories entered so far (not counting the root).
        let mut stack: Vec<(OsString, Arc<OwnedFd>)> = Vec::new();
        let mut links = 0;
        while let Some(name) = queue.pop_front() {
            if name == ".." {
                if stack.pop().is_none() {
                    return Err(PathError::refused(
                        PathRefusal::OutsideWorkspace,
                        "`..` leads above the root",
                    ));
                }
                continue;
            }
            let last = queue.is_empty();
            let dir = stack.last().map_or(&root, |(_, fd)| fd).clone();
            let stat = match rustix::fs::statat(dir.as_fd(), name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                Err(Errno::NOENT) if last => {
                    return Ok(finish(&root, &stack, Some((name, dir)), Target::Missing));
                }
                Err(Errno::NOENT) if allow_missing => {
                    let mut missing = vec![name];
                    while let Some(next) = queue.pop_front() {
                        if next == ".." {
                            return Err(PathError::refused(
                                PathRefusal::InvalidPath,
                                "`..` after a directory that does not exist",
                            ));
                        }
                        missing.push(next);
                    }
                    let Some(file) = missing.pop() else { return Err(PathError::NotFound) };
                    let mut resolved = finish(&root, &stack, Some((file, dir)), Target::Missing);
                    let mut relative: PathBuf = stack.iter().map(|(n, _)| n.as_os_str()).collect();
                    relative.extend(missing.iter());
                    relative.push(resolved.name.as_deref().unwrap_or_default());
                    resolved.relative = relative;
                    resolved.missing_dirs = missing;
                    return Ok(resolved);
                }
                Err(Errno::NOENT) => return Err(PathError::NotFound),
                Err(Errno::NOTDIR) => return Err(PathError::NotADirectory),
                Err(e) => return Err(PathError::Io(e.into())),
            };
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Symlink if !last || follow_last => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(PathError::refused(
                            PathRefusal::SymlinkLoop,
                            format!("more than {MAX_LINKS} links"),
                        ));
                    }
                    let target = rustix::fs::readlinkat(dir.as_fd(), name.as_os_str(), Vec::new())
                        .map_err(|e| PathError::Io(e.into()))?;
                    let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
                    let rest = if target.is_absolute() {
                        match self.strip_root(&target) {
                            Some(inside) => {
                                stack.clear();
                                inside.to_path_buf()
                            }
                            None => {
                                return Err(PathError::refused(
                                    PathRefusal::OutsideWorkspace,
                                    format!("`{}` is a link to {}", name.to_string_lossy(), target.display()),
                                ));
                            }
                        }
                    } else {
                        target
                    };
                    for (i, c) in components(&rest)?.into_iter().enumerate() {
                        queue.insert(i, c);
                    }
                }
                FileType::Symlink => {
                    return Ok(finish(&root, &stack, Some((name, dir)), Target::Symlink));
                }
                FileType::Directory if !last => {
                    // Not a step into teaagent's home, not even to learn what is there.
                    if self.inner.home.as_deref().is_some_and(|home| enters(home, &stack, &name)) {
                        return Err(home_refusal());
                    }
                    let fd = open_dir(dir.as_fd(), Path::new(&name))?;
                    stack.push((name, Arc::new(fd)));
                }
                FileType::Directory => return Ok(finish(&root, &stack, Some((name, dir)), Target::Dir)),
                FileType::RegularFile if last => {
                    let target = Target::File { size: stat.st_size as u64, links: stat.st_nlink as u64 };
                    return Ok(finish(&root, &stack, Some((name, dir)), target));
                }
                FileType::RegularFile => return Err(PathError::NotADirectory),
                _ if last => {
                    return Err(PathError::refused(
                        PathRefusal::SpecialFile,
                        format!("`{}` is a FIFO, socket or device", name.to_string_lossy()),
                    ));
                }
                _ => return Err(PathError::NotADirectory),
            }
        }
        // Every component consumed: the path is a directory already entered (or the root).
        Ok(match stack.pop() {
            None => Resolved {
                parent: root,
                name: None,
                relative: PathBuf::new(),
                target: Target::Dir,
                missing_dirs: Vec::new(),
                unwritable: None,
            },
            Some((name, _)) => {
                let parent = stack.last().map_or(&root, |(_, fd)| fd).clone();
                finish(&root, &stack, Some((name, parent)), Target::Dir)
            }
        })
    }

    pub(crate) fn dir_handle(&self) -> Arc<OwnedFd> {
        Arc::clone(&self.inner.dir)
    }
}

/// `path` (absolute) relative to `root` (canonical) where it really is: its longest existing
/// ancestor with every link followed, and the rest as spelled; `None` when that is not beneath
/// the root, or a missing component is `..`.
pub(super) fn physically_beneath(root: &Path, path: &Path) -> Option<PathBuf> {
    let mut existing = path;
    let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut inside = real.strip_prefix(root).ok()?.to_path_buf();
            inside.extend(missing.iter().rev());
            return Some(inside);
        }
        // A last component of `..` has no name: such a spelling is not followed.
        missing.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

/// A refusal of a path in teaagent's home (see `off_limits.rs`).
fn home_refusal() -> PathError {
    PathError::refused(PathRefusal::TeaagentHome, "")
}

/// Whether entering `name` from the directories of `stack` is entering `home` (relative to the
/// root; every step is judged, so a deeper one passes this one first).
fn enters(home: &Path, stack: &[(OsString, Arc<OwnedFd>)], name: &OsString) -> bool {
    home.iter().eq(stack.iter().map(|(n, _)| n.as_os_str()).chain([name.as_os_str()]))
}

fn finish(
    root: &Arc<OwnedFd>,
    stack: &[(OsString, Arc<OwnedFd>)],
    last: Option<(OsString, Arc<OwnedFd>)>,
    target: Target,
) -> Resolved {
    let mut relative: PathBuf = stack.iter().map(|(n, _)| n.as_os_str()).collect();
    let (name, parent) = match last {
        Some((name, parent)) => {
            relative.push(&name);
            (Some(name), parent)
        }
        None => (None, Arc::clone(root)),
    };
    Resolved { parent, name, relative, target, missing_dirs: Vec::new(), unwritable: None }
}

/// The components of a relative path: names and `..` (`.` and empty ones dropped).
fn components(path: &Path) -> Result<VecDeque<OsString>, PathError> {
    let mut out = VecDeque::new();
    for c in path.components() {
        match c {
            Component::Normal(name) => out.push_back(name.to_os_string()),
            Component::ParentDir => out.push_back(OsString::from("..")),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathError::refused(
                    PathRefusal::InvalidPath,
                    "an absolute component inside the path",
                ));
            }
        }
    }
    Ok(out)
}

/// Opens a directory relative to `dir`, refusing to follow a link.
pub(crate) fn open_dir<Fd: AsFd>(dir: Fd, name: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Errors that mean "the entry changed between its check and its open".
fn is_swap(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(code) if code == Errno::LOOP.raw_os_error() || code == Errno::NOTDIR.raw_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_given_through_a_link_accepts_both_spellings_and_nothing_else() {
        let scratch = crate::scratch::Scratch::new("resolve-link");
        let base = scratch.path().to_path_buf();
        std::fs::create_dir_all(base.join("real/src")).expect("mkdir");
        std::fs::create_dir_all(base.join("link-evil")).expect("mkdir");
        std::fs::write(base.join("real/src/a"), "a").expect("write");
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).expect("link");
        let ws = Workspace::open(format!("{}/", base.join("link").display())).expect("open");
        let canonical = std::fs::canonicalize(base.join("real")).expect("canonical");
        for inside in [base.join("link/src/a"), base.join("link/./src/a"), canonical.join("src/a")] {
            let resolved = ws.resolve(&inside).unwrap_or_else(|e| panic!("{}: {e}", inside.display()));
            assert_eq!(resolved.relative(), Path::new("src/a"));
        }
        for outside in [base.join("link-evil/x"), base.join("link/../real/src/a"), base.join("linkx/src/a")] {
            assert!(
                matches!(
                    ws.resolve(&outside),
                    Err(PathError::Refused { reason: PathRefusal::OutsideWorkspace, .. })
                ),
                "{}",
                outside.display()
            );
        }
    }
}
