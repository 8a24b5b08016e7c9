//! A file's size and identity, as the home's own files are compared with what their names lead
//! to now (the audit log, `policy/audit.rs`).

use std::fs::File;
use std::io;
use std::os::fd::AsFd;

use rustix::fs::AtFlags;
use rustix::io::Errno;

/// A file's size and identity ([`Home::stat`](super::Home::stat), [`FileStat::of_file`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    /// Its size in bytes.
    pub size: u64,
    /// The device that holds it.
    pub dev: u64,
    /// Its inode: with `dev`, which file it is, whatever its name now.
    pub ino: u64,
    /// How many names (hard links) it has.
    pub links: u64,
}

impl FileStat {
    /// The size and identity of an open file.
    pub fn of_file(file: &File) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        return Ok(Self::at(file.as_fd(), "", AtFlags::EMPTY_PATH)?);
        #[cfg(not(target_os = "linux"))]
        return Ok(Self::of_stat(&rustix::fs::fstat(file)?));
    }

    /// `name` under `dir` (with `AtFlags::EMPTY_PATH` and an empty name: `dir` itself).
    ///
    /// On Linux, `statx` is asked for these four fields alone. Asking for a file's times too (as
    /// `stat` does) tells the kernel that someone looks at them closely, and the next write to
    /// the file then stamps it with a fine-grained time, an inode update of its own: the audit
    /// log looks at its file before every line, and each line cost a fifth more that way.
    #[cfg(target_os = "linux")]
    pub(super) fn at(dir: std::os::fd::BorrowedFd<'_>, name: &str, flags: AtFlags) -> Result<Self, Errno> {
        use rustix::fs::StatxFlags;
        let wanted = StatxFlags::SIZE | StatxFlags::INO | StatxFlags::NLINK;
        match rustix::fs::statx(dir, name, flags, wanted) {
            Ok(stat) => Ok(Self {
                size: stat.stx_size,
                dev: rustix::fs::makedev(stat.stx_dev_major, stat.stx_dev_minor),
                ino: stat.stx_ino,
                links: u64::from(stat.stx_nlink),
            }),
            // Kernels before 4.11 (and some container sandboxes) have no `statx`.
            Err(Errno::NOSYS) => Ok(Self::of_stat(&rustix::fs::statat(dir, name, flags)?)),
            Err(e) => Err(e),
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn at(dir: std::os::fd::BorrowedFd<'_>, name: &str, flags: AtFlags) -> Result<Self, Errno> {
        Ok(Self::of_stat(&rustix::fs::statat(dir, name, flags)?))
    }

    #[allow(clippy::useless_conversion)] // `st_nlink` is `u64` on Linux, narrower elsewhere
    fn of_stat(stat: &rustix::fs::Stat) -> Self {
        Self {
            size: u64::try_from(stat.st_size).unwrap_or(0),
            dev: stat.st_dev,
            ino: stat.st_ino,
            links: u64::from(stat.st_nlink),
        }
    }

    /// Whether both are the same file.
    pub fn same_file(&self, other: &FileStat) -> bool {
        self.dev == other.dev && self.ino == other.ino
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::home::Home;
    use crate::scratch::Scratch;

    #[test]
    fn a_name_and_its_open_file_have_one_identity() {
        use std::os::unix::fs::MetadataExt;
        let scratch = Scratch::new("home-identity");
        let dir = scratch.path();
        let home = Home::at(dir).expect("home");
        let mut log = home.open_append("audit.jsonl").expect("open");
        log.write_all(b"one line\n").expect("write");
        let named = home.stat("audit.jsonl").expect("stat").expect("there");
        let open = FileStat::of_file(&log).expect("fstat");
        assert_eq!(named, open);
        let std = std::fs::symlink_metadata(dir.join("audit.jsonl")).expect("metadata");
        assert_eq!((named.dev, named.ino, named.links, named.size), (std.dev(), std.ino(), 1, 9));
        // The fallback where there is no `statx` reads the same identity.
        let by_stat = rustix::fs::statat(home.dir.as_fd(), "audit.jsonl", AtFlags::SYMLINK_NOFOLLOW);
        assert_eq!(FileStat::of_stat(&by_stat.expect("stat")), named);

        std::fs::write(dir.join("other"), b"x").expect("write");
        std::fs::rename(dir.join("other"), dir.join("audit.jsonl")).expect("replace");
        let now = home.stat("audit.jsonl").expect("stat").expect("there");
        assert!(!now.same_file(&open) && now.size == 1);
        assert_eq!(FileStat::of_file(&log).expect("fstat").links, 0, "the file kept open has no name now");
        home.remove("audit.jsonl").expect("remove");
        assert_eq!(home.stat("audit.jsonl").expect("stat"), None);
    }
}
