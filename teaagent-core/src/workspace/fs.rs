//! File operations on resolved paths. Each one acts through the open directory the resolution
//! ended in, by name, without following a link (`O_NOFOLLOW`), and checks what it opened: the
//! check and the use are the same system call.
//!
//! - Reads open with `O_NONBLOCK` (a FIFO swapped in cannot hang the server) and verify a
//!   regular file.
//! - New files are created exclusively (`O_CREAT | O_EXCL`).
//! - Overwrites write a temporary file in the same directory, `fsync` it, keep the old file's
//!   permissions, and `rename` it over the target: a reader sees the old or the new contents,
//!   never half of each, and a failure leaves the old file untouched.
//! - Files with more than one hard link are never written: the other link could be outside.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::Workspace;
use super::resolve::{PathError, Resolved, Target, open_dir};
use crate::error::PathRefusal;

/// What kind of entry a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device.
    Special,
}

impl EntryKind {
    fn of(mode: u32) -> Self {
        match FileType::from_raw_mode(mode) {
            FileType::RegularFile => EntryKind::File,
            FileType::Directory => EntryKind::Dir,
            FileType::Symlink => EntryKind::Symlink,
            _ => EntryKind::Special,
        }
    }

    /// `file`, `directory`, `symlink`, `special`.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "directory",
            EntryKind::Symlink => "symlink",
            EntryKind::Special => "special",
        }
    }
}

/// Facts about one entry.
#[derive(Debug, Clone, Copy)]
pub struct Metadata {
    /// Its kind.
    pub kind: EntryKind,
    /// Size in bytes.
    pub size: u64,
    /// Last modification.
    pub modified: SystemTime,
    /// Permission bits.
    pub mode: u32,
}

/// One entry of a directory listing.
#[derive(Debug, Clone)]
pub struct DirEntryInfo {
    /// Its name.
    pub name: std::ffi::OsString,
    /// Its metadata (of the entry itself: links are not followed).
    pub meta: Metadata,
}

fn metadata_of(stat: &rustix::fs::Stat) -> Metadata {
    let modified = if stat.st_mtime >= 0 {
        SystemTime::UNIX_EPOCH + Duration::new(stat.st_mtime as u64, stat.st_mtime_nsec as u32)
    } else {
        SystemTime::UNIX_EPOCH
    };
    Metadata {
        kind: EntryKind::of(stat.st_mode),
        size: stat.st_size.max(0) as u64,
        modified,
        mode: stat.st_mode & 0o7777,
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Resolved {
    fn name_or_root(&self) -> Result<&OsStr, PathError> {
        self.name
            .as_deref()
            .ok_or_else(|| PathError::refused(PathRefusal::InvalidPath, "this is the workspace root itself"))
    }

    /// Metadata of the entry (links not followed).
    pub fn metadata(&self) -> Result<Metadata, PathError> {
        let stat = match &self.name {
            Some(name) => {
                rustix::fs::statat(self.parent.as_fd(), name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
            }
            None => rustix::fs::fstat(self.parent.as_fd()),
        };
        match stat {
            Ok(stat) => Ok(metadata_of(&stat)),
            Err(Errno::NOENT) => Err(PathError::NotFound),
            Err(e) => Err(PathError::Io(e.into())),
        }
    }

    /// Opens the regular file for reading.
    pub fn open_read(&self) -> Result<File, PathError> {
        let name = self.name_or_root()?;
        let fd = match rustix::fs::openat(
            self.parent.as_fd(),
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Err(PathError::NotFound),
            Err(Errno::LOOP) => {
                return Err(PathError::refused(
                    PathRefusal::OutsideWorkspace,
                    "the file was replaced by a link while it was opened",
                ));
            }
            Err(e) => return Err(PathError::Io(e.into())),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| PathError::Io(e.into()))?;
        match EntryKind::of(stat.st_mode) {
            EntryKind::File => {}
            EntryKind::Dir => {
                return Err(PathError::Io(io::Error::new(io::ErrorKind::IsADirectory, "is a directory")));
            }
            _ => return Err(PathError::refused(PathRefusal::SpecialFile, "not a regular file")),
        }
        // Blocking reads from here on (a regular file never blocks anyway).
        let _ = rustix::fs::fcntl_setfl(&fd, OFlags::RDONLY);
        Ok(File::from(fd))
    }

    /// Opens the directory for listing.
    pub fn open_dir(&self) -> Result<OwnedFd, PathError> {
        match &self.name {
            None => Ok(rustix::io::fcntl_dupfd_cloexec(self.parent.as_fd(), 0)
                .map_err(|e| PathError::Io(e.into()))?),
            Some(name) => open_dir(self.parent.as_fd(), std::path::Path::new(name)).map_err(|e| {
                match e.raw_os_error() {
                    Some(c) if c == Errno::NOENT.raw_os_error() => PathError::NotFound,
                    Some(c) if c == Errno::NOTDIR.raw_os_error() => PathError::NotADirectory,
                    _ => PathError::Io(e),
                }
            }),
        }
    }

    /// The directory's entries, sorted by name (links not followed).
    pub fn read_dir(&self) -> Result<Vec<DirEntryInfo>, PathError> {
        Ok(self.read_dir_first(usize::MAX, |_| true)?.0)
    }

    /// The first `limit` entries by name that `keep` accepts (links not followed), and whether
    /// there were more. Memory is bounded by `limit`, not by the directory: names are kept in a
    /// heap of the `limit` smallest while the directory is read, and only those are `stat`ed.
    pub fn read_dir_first(
        &self,
        limit: usize,
        keep: impl Fn(&OsStr) -> bool,
    ) -> Result<(Vec<DirEntryInfo>, bool), PathError> {
        let fd = self.open_dir()?;
        let mut dir = rustix::fs::Dir::read_from(&fd).map_err(|e| PathError::Io(e.into()))?;
        let mut smallest = std::collections::BinaryHeap::new();
        let mut more = false;
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|e| PathError::Io(e.into()))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." || !keep(OsStr::from_bytes(name)) {
                continue;
            }
            smallest.push(OsStr::from_bytes(name).to_os_string());
            if smallest.len() > limit {
                smallest.pop();
                more = true;
            }
        }
        let mut entries = Vec::with_capacity(smallest.len());
        for name in smallest.into_sorted_vec() {
            match rustix::fs::statat(&fd, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => entries.push(DirEntryInfo { name, meta: metadata_of(&stat) }),
                Err(Errno::NOENT) => {} // removed while listing
                Err(e) => return Err(PathError::Io(e.into())),
            }
        }
        Ok((entries, more))
    }

    /// Creates the missing directories in front of a path from
    /// [`Workspace::resolve_for_create`] (each one exclusively, relative to the one before).
    pub fn create_parents(&mut self) -> Result<(), PathError> {
        self.check_writable()?;
        for dir in std::mem::take(&mut self.missing_dirs) {
            match rustix::fs::mkdirat(self.parent.as_fd(), dir.as_os_str(), Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(PathError::Io(e.into())),
            }
            let fd = open_dir(self.parent.as_fd(), std::path::Path::new(&dir))?;
            self.parent = std::sync::Arc::new(fd);
        }
        Ok(())
    }

    /// Creates the file, which must not exist yet, with `contents`.
    pub fn create_new(&self, contents: &[u8]) -> Result<(), PathError> {
        self.check_writable()?;
        let name = self.name_or_root()?;
        if !self.missing_dirs.is_empty() {
            return Err(PathError::NotFound);
        }
        let fd = match rustix::fs::openat(
            self.parent.as_fd(),
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        ) {
            Ok(fd) => fd,
            Err(Errno::EXIST) => {
                return Err(PathError::Io(io::Error::new(io::ErrorKind::AlreadyExists, "already exists")));
            }
            Err(e) => return Err(PathError::Io(e.into())),
        };
        let mut file = File::from(fd);
        let written = file.write_all(contents).and_then(|()| file.sync_all());
        if let Err(e) = written {
            // Leave nothing half-written behind.
            let _ = rustix::fs::unlinkat(self.parent.as_fd(), name, AtFlags::empty());
            return Err(PathError::Io(e));
        }
        Ok(())
    }

    /// Replaces (or creates) the file atomically with `contents`, keeping its permissions.
    /// Refused for files with more than one hard link.
    pub fn write_atomic(&self, contents: &[u8]) -> Result<(), PathError> {
        self.check_writable()?;
        let name = self.name_or_root()?;
        if !self.missing_dirs.is_empty() {
            return Err(PathError::NotFound);
        }
        let mode = match self.target() {
            Target::File { links, .. } if links > 1 => {
                return Err(PathError::refused(PathRefusal::HardLinked, format!("{links} links")));
            }
            Target::File { .. } => self.metadata()?.mode,
            Target::Missing => 0o644,
            Target::Dir => {
                return Err(PathError::Io(io::Error::new(io::ErrorKind::IsADirectory, "is a directory")));
            }
            Target::Symlink => {
                return Err(PathError::refused(PathRefusal::InvalidPath, "is a symbolic link"));
            }
        };
        let temp = temp_name(name.as_bytes(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed));
        let fd = rustix::fs::openat(
            self.parent.as_fd(),
            temp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .map_err(|e| PathError::Io(e.into()))?;
        let mut file = File::from(fd);
        let written = file
            .write_all(contents)
            .and_then(|()| {
                rustix::fs::fchmod(file.as_fd(), Mode::from_raw_mode(mode)).map_err(io::Error::from)
            })
            .and_then(|()| file.sync_all())
            .and_then(|()| {
                rustix::fs::renameat(self.parent.as_fd(), temp.as_str(), self.parent.as_fd(), name)
                    .map_err(io::Error::from)
            });
        if let Err(e) = written {
            let _ = rustix::fs::unlinkat(self.parent.as_fd(), temp.as_str(), AtFlags::empty());
            return Err(PathError::Io(e));
        }
        let _ = rustix::fs::fsync(self.parent.as_fd());
        Ok(())
    }

    /// Removes a file, a link (never what it points to) or an empty directory.
    pub fn remove(&self) -> Result<(), PathError> {
        self.check_writable()?;
        let name = self.name_or_root()?;
        let flags = if self.target() == Target::Dir { AtFlags::REMOVEDIR } else { AtFlags::empty() };
        match rustix::fs::unlinkat(self.parent.as_fd(), name, flags) {
            Ok(()) => Ok(()),
            Err(Errno::NOENT) => Err(PathError::NotFound),
            Err(Errno::NOTEMPTY | Errno::EXIST) => Err(PathError::Io(io::Error::new(
                io::ErrorKind::DirectoryNotEmpty,
                "the directory is not empty",
            ))),
            Err(e) => Err(PathError::Io(e.into())),
        }
    }

    /// Moves this entry to `to` (which must not exist; its directory must).
    pub fn rename_to(&self, to: &Resolved) -> Result<(), PathError> {
        self.check_writable()?;
        to.check_writable()?;
        let from = self.name_or_root()?;
        let dest = to.name_or_root()?;
        if to.target() != Target::Missing {
            return Err(PathError::Io(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "the destination already exists",
            )));
        }
        rename_no_replace(&self.parent, from, &to.parent, dest).map_err(|e| match e {
            Errno::EXIST | Errno::NOTEMPTY => {
                PathError::Io(io::Error::new(io::ErrorKind::AlreadyExists, "the destination already exists"))
            }
            Errno::NOENT => PathError::NotFound,
            e => PathError::Io(e.into()),
        })
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn rename_no_replace(from_dir: &OwnedFd, from: &OsStr, to_dir: &OwnedFd, to: &OsStr) -> Result<(), Errno> {
    rustix::fs::renameat_with(from_dir, from, to_dir, to, rustix::fs::RenameFlags::NOREPLACE)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn rename_no_replace(from_dir: &OwnedFd, from: &OsStr, to_dir: &OwnedFd, to: &OsStr) -> Result<(), Errno> {
    // Without `RENAME_NOREPLACE`: check, then rename (a narrow race, documented).
    match rustix::fs::statat(to_dir, to, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(_) => Err(Errno::EXIST),
        Err(Errno::NOENT) => rustix::fs::renameat(from_dir, from, to_dir, to),
        Err(e) => Err(e),
    }
}

impl Workspace {
    /// The absolute path of a resolved entry, under the canonical root (for messages and for
    /// programs that need one). Opening it re-resolves the root by name: after the root was
    /// renamed and a link put in its place it leads elsewhere, so the workspace's own I/O never
    /// uses it (it goes through the open handles).
    pub fn absolute(&self, resolved: &Resolved) -> PathBuf {
        self.root().join(resolved.relative())
    }
}

/// Longest file name the temporary file of a write keeps of the name it replaces, in bytes: with
/// the rest of its name (`.`, `.teaagent-PID-N.tmp`) it stays under the 255 bytes file systems
/// allow for a name, whatever the length of the file's own.
const TEMP_NAME_KEEPS: usize = 160;

/// The temporary name beside `name` for write number `n`: a dot, up to [`TEMP_NAME_KEEPS`] bytes
/// of `name` (cut at a character boundary), this process and `n`.
fn temp_name(name: &[u8], n: u64) -> String {
    let lossy = String::from_utf8_lossy(name);
    let mut end = lossy.len().min(TEMP_NAME_KEEPS);
    while !lossy.is_char_boundary(end) {
        end -= 1;
    }
    format!(".{}.teaagent-{}-{n}.tmp", &lossy[..end], std::process::id())
}

#[cfg(test)]
mod temp_name_tests {
    use super::*;

    #[test]
    fn temporary_names_fit_a_file_system_name_whatever_the_name() {
        for name in ["a".repeat(255), "é".repeat(127), "x".to_owned()] {
            let temp = temp_name(name.as_bytes(), u64::MAX);
            assert!(temp.len() <= 255, "{} bytes: {temp}", temp.len());
            assert!(temp.starts_with('.') && temp.ends_with(".tmp"));
        }
    }
}
