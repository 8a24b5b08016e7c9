//! `$TEAAGENT_HOME`: where teaagent keeps its per-user state (the lock registry, the audit log,
//! the trust store, the user's configuration), and the one way teaagent reads its own files.
//!
//! It is the `TEAAGENT_HOME` environment variable when set (and not empty), else `~/.teaagent`.
//! It is created on first use with user-only permissions (0700), because what it holds says which
//! projects the user works on and what they allowed.
//!
//! # Links and special files
//!
//! Whoever can plant a link in teaagent's way could have it write the lock registry or audit
//! lines somewhere else, or read a file it should not. So:
//!
//! - The home directory itself must be a real directory owned by the user. If its last
//!   component is a symbolic link, teaagent **refuses** it (it does not resolve it and go on):
//!   set `TEAAGENT_HOME` to the real directory instead. (Links in the components above it,
//!   such as `/tmp` → `/private/tmp`, are the system's business and are followed.) A home that
//!   others may write (group or world writable) is used, with a warning on stderr.
//! - [`Home`] holds the directory open and reaches every file in it relative to that handle, with
//!   `O_NOFOLLOW`: a link *inside* the home is always refused, never followed.
//! - Temporary files are created with `O_CREAT | O_EXCL | O_NOFOLLOW`, so a name planted in
//!   advance is never written through.
//! - Every file teaagent reads for itself ([`Home::read`], [`read_path`], and the workspace's
//!   configuration through the workspace) goes through [`read_regular`]: opened without blocking
//!   (`O_NONBLOCK`, so a FIFO cannot hang it), checked to be a regular file after the open
//!   (`fstat`, so `/dev/zero` or a socket is refused), and read up to a bound (so a huge file is an
//!   error, not an exhausted memory).

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::visible;

mod file_lock;
mod file_stat;
// (Its caches are the gateway's and the command sandbox's.)
#[cfg(any(feature = "builtin-tools", feature = "gateway"))]
mod file_version;
mod rewrite;

pub use file_lock::{DEFAULT_LOCK_WAIT, LockKind, MAX_LOCK_WAIT, lock, lock_deadline, lock_wait, unlock};
pub use file_stat::FileStat;
#[cfg(any(feature = "builtin-tools", feature = "gateway"))]
pub(crate) use file_version::FileVersion;

/// The largest configuration or trust store file teaagent reads (1 MiB).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The teaagent home directory (not created, not checked).
pub fn dir() -> Result<PathBuf, HomeError> {
    if let Some(home) = std::env::var_os(crate::env::ENV_HOME).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".teaagent")),
        None => Err(HomeError::Unset),
    }
}

/// Why the home directory cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HomeError {
    /// Neither variable is set.
    #[error("neither TEAAGENT_HOME nor HOME is set: set TEAAGENT_HOME to a directory teaagent may use")]
    Unset,
    /// The home is a symbolic link.
    #[error(
        "{} is a symbolic link; teaagent does not follow a link for its home: set TEAAGENT_HOME to the directory it points to",
        show(path)
    )]
    Link {
        /// The home.
        path: PathBuf,
    },
    /// The home is not a directory.
    #[error("{} is not a directory: set TEAAGENT_HOME to a directory teaagent may use", show(path))]
    NotADirectory {
        /// The home.
        path: PathBuf,
    },
    /// The home belongs to another user.
    #[error(
        "{} belongs to uid {owner}, not to you (uid {me}): set TEAAGENT_HOME to a directory of your own",
        show(path)
    )]
    NotOwned {
        /// The home.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// This process's effective uid.
        me: u32,
    },
    /// The file system failed.
    #[error("cannot use {} as the teaagent home: {source}", show(path))]
    Io {
        /// The home.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

impl From<HomeError> for io::Error {
    fn from(e: HomeError) -> Self {
        let kind = match &e {
            HomeError::Unset => io::ErrorKind::NotFound,
            HomeError::Io { source, .. } => source.kind(),
            _ => io::ErrorKind::PermissionDenied,
        };
        io::Error::new(kind, e.to_string())
    }
}

/// Why one of teaagent's own files cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OwnFileError {
    /// A symbolic link where teaagent never follows one.
    #[error(
        "{} is a symbolic link; teaagent does not follow links for its own files: replace it with the file itself",
        show(path)
    )]
    Link {
        /// The file.
        path: PathBuf,
    },
    /// A directory, FIFO, socket or device.
    #[error("{} is not a regular file (it is {kind}); teaagent reads only regular files", show(path))]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead (`a directory`, `a FIFO`, ...).
        kind: &'static str,
    },
    /// Larger than the bound.
    #[error("{} is larger than {limit} bytes, the most teaagent reads from such a file", show(path))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The bound.
        limit: u64,
    },
    /// The file system failed.
    #[error("cannot read {}: {source}", show(path))]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

impl From<OwnFileError> for io::Error {
    fn from(e: OwnFileError) -> Self {
        let kind = match &e {
            OwnFileError::Io { source, .. } => source.kind(),
            OwnFileError::TooLarge { .. } => io::ErrorKind::FileTooLarge,
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, e.to_string())
    }
}

fn show(path: &Path) -> String {
    visible::escape(&path.display().to_string())
}

/// What a file type is called in messages.
fn kind_name(file_type: FileType) -> &'static str {
    match file_type {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "of an unknown type",
    }
}

/// Reads an already opened file (`path` only names it in errors): it must be a regular file
/// (checked with `fstat` on the open handle, so nothing can be swapped in between) of at most
/// `limit` bytes. Open it with `O_NONBLOCK`, so that opening a FIFO did not hang already.
pub fn read_regular(fd: impl Into<OwnedFd>, path: &Path, limit: u64) -> Result<Vec<u8>, OwnFileError> {
    let fd: OwnedFd = fd.into();
    let io_err = |source: io::Error| OwnFileError::Io { path: path.to_path_buf(), source };
    let stat = rustix::fs::fstat(&fd).map_err(|e| io_err(e.into()))?;
    let file_type = FileType::from_raw_mode(stat.st_mode);
    if file_type != FileType::RegularFile {
        return Err(OwnFileError::NotRegular { path: path.to_path_buf(), kind: kind_name(file_type) });
    }
    let too_large = || OwnFileError::TooLarge { path: path.to_path_buf(), limit };
    let size = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
    if size > limit {
        return Err(too_large());
    }
    // A regular file never blocks; read it the ordinary way (and never past the bound, even if
    // it grows meanwhile). Room for the whole file and one byte more (at least 1 KiB, within the
    // bound: `/proc` files say they are empty): one read for its bytes and one that finds its
    // end. From an empty buffer, the reads would start at 32 bytes and double: nine of them for
    // the lock registry's page.
    let _ = rustix::fs::fcntl_setfl(&fd, OFlags::empty());
    let room = size.saturating_add(1).max(1024).min(limit.saturating_add(1));
    let mut bytes = Vec::with_capacity(usize::try_from(room).unwrap_or(0));
    File::from(fd).take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(io_err)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Reads a file the user named (e.g. `--config FILE`): links are followed (the user chose the
/// path), but the file must be regular and at most `limit` bytes, and opening it never blocks.
/// `Ok(None)` when it does not exist.
pub fn read_path(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, OwnFileError> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => read_regular(fd, path, limit).map(Some),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(OwnFileError::Io { path: path.to_path_buf(), source: e.into() }),
    }
}

/// The home directory, held open: every file in it is reached relative to this handle, never
/// through a link. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Home {
    path: PathBuf,
    dir: Arc<OwnedFd>,
}

impl Home {
    /// `$TEAAGENT_HOME` (or `~/.teaagent`), created (0700) if missing, and checked: a real
    /// directory (not a link) owned by this user. A directory others may write is used with a
    /// warning.
    pub fn open() -> Result<Self, HomeError> {
        let path = dir()?;
        if let Err(e) = std::fs::symlink_metadata(&path) {
            if e.kind() != io::ErrorKind::NotFound {
                return Err(HomeError::Io { path, source: e });
            }
            // `recursive` creates missing parents too; the last component gets 0700.
            if let Err(e) = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&path) {
                return Err(HomeError::Io { path, source: e });
            }
        }
        Self::at(path)
    }

    /// An existing directory as the home, with the same checks as [`Home::open`].
    pub fn at(path: impl Into<PathBuf>) -> Result<Self, HomeError> {
        let path = path.into();
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let dir = match rustix::fs::open(&path, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::LOOP) => return Err(HomeError::Link { path }),
            Err(Errno::NOTDIR) => {
                // O_NOFOLLOW with O_DIRECTORY reports a link to a directory as "not a directory".
                let is_link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
                return Err(if is_link {
                    HomeError::Link { path }
                } else {
                    HomeError::NotADirectory { path }
                });
            }
            Err(e) => return Err(HomeError::Io { path, source: e.into() }),
        };
        let stat =
            rustix::fs::fstat(&dir).map_err(|e| HomeError::Io { path: path.clone(), source: e.into() })?;
        let me = rustix::process::geteuid().as_raw();
        if stat.st_uid != me {
            return Err(HomeError::NotOwned { path, owner: stat.st_uid, me });
        }
        // Said once per process, however many parts open the home.
        static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if stat.st_mode & 0o022 != 0 && !WARNED.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "{} is writable by {} (mode {:o}): others could change teaagent's state there; run `chmod 700` on it",
                show(&path),
                writers(stat.st_mode),
                stat.st_mode & 0o7777
            );
        }
        Ok(Self { path, dir: Arc::new(dir) })
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in the home (for messages).
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Reads `name` (bounded, regular, never through a link, never blocking); `Ok(None)` when
    /// it does not exist.
    pub fn read(&self, name: &str, limit: u64) -> Result<Option<Vec<u8>>, OwnFileError> {
        let path = self.file(name);
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        match rustix::fs::openat(self.dir.as_fd(), name, flags, Mode::empty()) {
            Ok(fd) => read_regular(fd, &path, limit).map(Some),
            Err(Errno::NOENT) => Ok(None),
            Err(Errno::LOOP) => Err(OwnFileError::Link { path }),
            Err(e) => Err(OwnFileError::Io { path, source: e.into() }),
        }
    }

    /// Who besides the user may write `name`, if anyone (`None` also when it does not exist or
    /// is a link).
    pub fn loose_permissions(&self, name: &str) -> Option<String> {
        let stat = rustix::fs::statat(self.dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink {
            return None; // a link is refused when it is opened; its own mode means nothing
        }
        let me = rustix::process::geteuid().as_raw();
        if stat.st_uid != me {
            return Some(format!("owned by uid {}, not by you (uid {me})", stat.st_uid));
        }
        (stat.st_mode & 0o022 != 0)
            .then(|| format!("writable by {} (mode {:o})", writers(stat.st_mode), stat.st_mode & 0o7777))
    }

    /// Opens `name` for appending (created 0600 if missing): never through a link, never a
    /// FIFO or device, and never a file with another hard link (appending to it would write
    /// wherever that other name is).
    pub fn open_append(&self, name: &str) -> io::Result<File> {
        let flags = OFlags::WRONLY
            | OFlags::APPEND
            | OFlags::CREATE
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC
            | OFlags::NOCTTY;
        let file = self.open_regular(name, flags)?;
        let links = rustix::fs::fstat(&file)?.st_nlink;
        if links != 1 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} has {links} hard links; teaagent appends only to a file of its own: move it aside",
                    show(&self.file(name))
                ),
            ));
        }
        Ok(file)
    }

    fn open_regular(&self, name: &str, flags: OFlags) -> io::Result<File> {
        let path = self.file(name);
        let fd = match rustix::fs::openat(self.dir.as_fd(), name, flags, Mode::RUSR | Mode::WUSR) {
            Ok(fd) => fd,
            Err(Errno::LOOP) => return Err(OwnFileError::Link { path }.into()),
            // A FIFO without a reader, opened for writing without blocking.
            Err(Errno::NXIO) => return Err(OwnFileError::NotRegular { path, kind: "a FIFO" }.into()),
            Err(e) => return Err(OwnFileError::Io { path, source: e.into() }.into()),
        };
        let stat = rustix::fs::fstat(&fd)?;
        let file_type = FileType::from_raw_mode(stat.st_mode);
        if file_type != FileType::RegularFile {
            return Err(OwnFileError::NotRegular { path, kind: kind_name(file_type) }.into());
        }
        let _ = rustix::fs::fcntl_setfl(&fd, flags & OFlags::APPEND);
        Ok(File::from(fd))
    }

    /// Replaces `name` atomically: the bytes go to a new temporary file in the home (created
    /// with `O_EXCL | O_NOFOLLOW`), which is synced and renamed over `name`, and the directory is
    /// synced. A crash leaves the old file or the new one, never a torn one. The file gets
    /// user-only permissions. A link at `name` is replaced, never written through.
    pub fn write_atomic(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.replace(name, bytes, Durability::Synced)
    }

    /// [`Home::write_atomic`] without the two `fsync`s, for a file that means nothing after the
    /// machine stops (a cache). Other processes see the old file or the new one, never a torn
    /// one; after a crash the file may be empty or old, and whoever reads it must treat it as
    /// unusable.
    pub fn write_atomic_unsynced(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.replace(name, bytes, Durability::Unsynced)
    }

    fn replace(&self, name: &str, bytes: &[u8], durability: Durability) -> io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let temp = format!(
            ".{name}.{}.{}.{nanos:x}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY;
        let fd = rustix::fs::openat(self.dir.as_fd(), temp.as_str(), flags, Mode::RUSR | Mode::WUSR)?;
        let result = (|| {
            let mut file = File::from(fd);
            file.write_all(bytes)?;
            if durability == Durability::Synced {
                file.sync_all()?;
            }
            rustix::fs::renameat(self.dir.as_fd(), temp.as_str(), self.dir.as_fd(), name)?;
            if durability == Durability::Synced {
                rustix::fs::fsync(self.dir.as_fd())?;
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(self.dir.as_fd(), temp.as_str(), AtFlags::empty());
        }
        result
    }

    /// Renames `from` to `to` in the home (a link is moved, not followed).
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        Ok(rustix::fs::renameat(self.dir.as_fd(), from, self.dir.as_fd(), to)?)
    }

    /// Runs `f` holding an exclusive `flock` on `lock_name` in the home (created if missing; a
    /// link there is refused), so concurrent read-modify-write cycles of a shared file never
    /// interleave. Another process's lock is waited for [`lock_wait`] at most ([`lock`]).
    pub fn locked<T>(&self, lock_name: &str, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        self.locked_until(lock_name, lock_deadline(), f)
    }

    /// [`Home::locked`], waiting for another process's lock until `deadline` at most.
    pub fn locked_until<T>(
        &self,
        lock_name: &str,
        deadline: std::time::Instant,
        f: impl FnOnce() -> io::Result<T>,
    ) -> io::Result<T> {
        let file = self.lock_file(lock_name)?;
        lock(&file, &self.file(lock_name), LockKind::Exclusive, Some(deadline))?;
        let out = f();
        drop(file); // closing releases the lock
        out
    }

    /// Opens `lock_name` (created 0600 if missing; a link, FIFO or device is refused) to take
    /// an `flock` on it: the caller chooses shared or exclusive, and closing it releases it.
    pub fn lock_file(&self, lock_name: &str) -> io::Result<File> {
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC
            | OFlags::NOCTTY;
        self.open_regular(lock_name, flags)
    }

    /// Opens `name` for reading as it grows (never through a link, never blocking, a regular
    /// file only); `Ok(None)` when it does not exist. Unlike [`Home::read`] nothing is read yet
    /// and there is no bound: the caller reads it a piece at a time.
    pub fn open_read(&self, name: &str) -> Result<Option<File>, OwnFileError> {
        let path = self.file(name);
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = match rustix::fs::openat(self.dir.as_fd(), name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => return Err(OwnFileError::Link { path }),
            Err(e) => return Err(OwnFileError::Io { path, source: e.into() }),
        };
        let stat =
            rustix::fs::fstat(&fd).map_err(|e| OwnFileError::Io { path: path.clone(), source: e.into() })?;
        let file_type = FileType::from_raw_mode(stat.st_mode);
        if file_type != FileType::RegularFile {
            return Err(OwnFileError::NotRegular { path, kind: kind_name(file_type) });
        }
        let _ = rustix::fs::fcntl_setfl(&fd, OFlags::empty());
        Ok(Some(File::from(fd)))
    }

    /// The size and identity (device, inode) of `name` as it is now (a link is not followed);
    /// `Ok(None)` when it does not exist.
    pub fn stat(&self, name: &str) -> io::Result<Option<FileStat>> {
        match FileStat::at(self.dir.as_fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes `name` from the home (a link is removed, not followed); `Ok(false)` when there
    /// was none.
    pub fn remove(&self, name: &str) -> io::Result<bool> {
        match rustix::fs::unlinkat(self.dir.as_fd(), name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

fn writers(mode: u32) -> &'static str {
    match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (true, true) => "its group and everyone",
        (true, false) => "its group",
        _ => "everyone",
    }
}

/// Whether a replaced file must survive a crash of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durability {
    Synced,
    Unsynced,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("teaagent-home-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn links_inside_and_as_the_home_are_refused() {
        let dir = temp_dir("links");
        let outside = dir.join("outside.txt");
        std::fs::write(&outside, "outside\n").expect("write");
        let home_dir = dir.join("home");
        std::fs::create_dir(&home_dir).expect("mkdir");
        std::os::unix::fs::symlink(&outside, home_dir.join("audit.jsonl")).expect("link");
        std::os::unix::fs::symlink(&home_dir, dir.join("linked-home")).expect("link");
        assert!(matches!(Home::at(dir.join("linked-home")), Err(HomeError::Link { .. })));
        let home = Home::at(&home_dir).expect("home");
        assert!(home.open_append("audit.jsonl").is_err());
        assert!(matches!(home.read("audit.jsonl", 100), Err(OwnFileError::Link { .. })));
        std::fs::hard_link(&outside, home_dir.join("hard.jsonl")).expect("hard link");
        assert!(home.open_append("hard.jsonl").is_err(), "a hard link to elsewhere is refused");
        home.write_atomic("audit.jsonl", b"new\n").expect("replaces the link");
        assert_eq!(std::fs::read_to_string(&outside).expect("outside"), "outside\n");
        assert_eq!(home.read("audit.jsonl", 100).expect("read"), Some(b"new\n".to_vec()));
    }

    #[test]
    fn reads_are_bounded_and_regular() {
        let dir = temp_dir("bounded");
        std::fs::write(dir.join("big"), vec![b'x'; 101]).expect("write");
        let home = Home::at(&dir).expect("home");
        assert!(matches!(home.read("big", 100), Err(OwnFileError::TooLarge { limit: 100, .. })));
        assert_eq!(home.read("missing", 100).expect("missing"), None);
        assert!(matches!(read_path(Path::new("/dev/zero"), 100), Err(OwnFileError::NotRegular { .. })));
        assert!(matches!(read_path(&dir, 100), Err(OwnFileError::NotRegular { kind: "a directory", .. })));
    }
}
