//! Reading the files a walk needs for itself, safely: ignore files (as matchers) and any small
//! file teaagent reads on the workspace's behalf. Only regular files, opened relative to a
//! directory handle without following a link and without blocking, and read up to a bound.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::listing::Listing;
use super::{MAX_IGNORE_FILE, MAX_IGNORE_TOTAL};
use crate::workspace::resolve::open_dir;

/// Opens `name` in `dir` for reading if it is a regular file: `Ok(None)` when it is missing,
/// a link, or not a regular file. Never blocks (`O_NONBLOCK` at open; cleared after the check).
pub(crate) fn open_regular(dir: impl AsFd, name: &OsStr) -> io::Result<Option<File>> {
    let fd = match rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT | Errno::LOOP | Errno::NOTDIR | Errno::NXIO) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let stat = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Ok(None);
    }
    // Blocking reads from here on (a regular file never blocks anyway).
    let _ = rustix::fs::fcntl_setfl(&fd, OFlags::RDONLY);
    Ok(Some(File::from(fd)))
}

/// A small file teaagent reads for itself, read safely: only a regular file (not a link, FIFO,
/// device), opened without blocking, at most `cap` bytes. `Ok(None)` when it does not exist;
/// `truncated` says the file was longer than `cap`.
#[derive(Debug)]
pub(crate) struct SmallFile {
    pub bytes: Vec<u8>,
    pub truncated: bool,
}

/// Why [`read_small`] did not read a file that is there.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SmallFileError {
    /// A symbolic link, FIFO, socket or device.
    #[error("not a regular file (a link, FIFO or device); skipped")]
    NotRegular,
    /// The file system failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Reads `name` in `dir` (see [`SmallFile`]).
pub(crate) fn read_small(
    dir: impl AsFd,
    name: &OsStr,
    cap: u64,
) -> Result<Option<SmallFile>, SmallFileError> {
    let dir = dir.as_fd();
    let file = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Err(Errno::NOENT | Errno::NOTDIR) => return Ok(None),
        Err(e) => return Err(SmallFileError::Io(e.into())),
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile => {
            return Err(SmallFileError::NotRegular);
        }
        Ok(_) => open_regular(dir, name)?.ok_or(SmallFileError::NotRegular)?,
    };
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes)?;
    let truncated = bytes.len() as u64 > cap;
    bytes.truncate(cap as usize);
    Ok(Some(SmallFile { bytes, truncated }))
}

/// One directory's ignore rules.
#[derive(Debug, Default)]
pub(super) struct Rules {
    pub(super) dot_ignore: Option<Gitignore>,
    pub(super) gitignore: Option<Gitignore>,
    pub(super) exclude: Option<Gitignore>,
    /// The directory holds `.git`: a repository's root.
    pub(super) has_git: bool,
}

impl Rules {
    /// Whether these rules can change anything (most directories have no ignore file).
    pub(super) fn is_empty(&self) -> bool {
        self.dot_ignore.is_none() && self.gitignore.is_none() && self.exclude.is_none() && !self.has_git
    }

    /// Reads the ignore files of the directory `dir` (whose entries are `listing`).
    /// `budget` is what the walk may still read of ignore files (see [`MAX_IGNORE_TOTAL`]).
    pub(super) fn read(dir: &OwnedFd, relative: &Path, listing: &Listing, budget: &mut u64) -> Rules {
        let has = |name: &str| listing.contains(name);
        let has_git = has(".git");
        let dot_ignore = if has(".ignore") { rules_file(dir, relative, ".ignore", budget) } else { None };
        let gitignore =
            if has(".gitignore") { rules_file(dir, relative, ".gitignore", budget) } else { None };
        let exclude = if has_git {
            // `.git/info/exclude`, each directory opened without following a link.
            open_dir(dir.as_fd(), Path::new(".git"))
                .and_then(|git| open_dir(&git, Path::new("info")))
                .ok()
                .and_then(|info| rules_file(&info, relative, ".git/info/exclude", budget))
        } else {
            None
        };
        Rules { dot_ignore, gitignore, exclude, has_git }
    }
}

/// One ignore file as a matcher (`None` when absent, unreadable or empty). `shown` is its name
/// for warnings, relative to the directory the rules apply to.
fn rules_file(dir: &impl AsFd, relative: &Path, shown: &str, budget: &mut u64) -> Option<Gitignore> {
    let file_name = Path::new(shown).file_name().unwrap_or_default();
    let where_ = relative.join(shown);
    if *budget == 0 {
        tracing::warn!(
            file = %where_.display(),
            "ignore file skipped: this walk already read {MAX_IGNORE_TOTAL} bytes of ignore files"
        );
        return None;
    }
    let small = match read_small(dir, file_name, MAX_IGNORE_FILE.min(*budget)) {
        Ok(Some(small)) => small,
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!(file = %where_.display(), "ignore file {e}");
            return None;
        }
    };
    *budget = budget.saturating_sub(small.bytes.len() as u64);
    let mut text = String::from_utf8_lossy(&small.bytes).into_owned();
    if small.truncated {
        tracing::warn!(
            file = %where_.display(),
            "ignore file cut: only its first {} bytes are used (at most {MAX_IGNORE_FILE} a file, \
             {MAX_IGNORE_TOTAL} a walk)",
            small.bytes.len()
        );
        // Drop the line that was cut.
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        text.truncate(whole);
    }
    // Matched against paths relative to its own directory (the root `.` strips nothing).
    let mut builder = GitignoreBuilder::new(".");
    for line in text.lines() {
        // A line that is not a valid glob is skipped, as git does.
        let _ = builder.add_line(None, line);
    }
    match builder.build() {
        Ok(gi) if gi.is_empty() => None,
        Ok(gi) => Some(gi),
        Err(e) => {
            tracing::warn!(file = %where_.display(), error = %e, "ignore file skipped");
            None
        }
    }
}
