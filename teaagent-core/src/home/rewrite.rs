//! Rewriting a small file of the home that is only ever read and written under a lock (the
//! workspace lock registry): in place when it fits, replaced otherwise.
//!
//! Replacing a file by renaming a new one over it is what keeps readers from ever seeing it torn,
//! but on ext4 it costs what a server's start should not pay: the rename makes the file system
//! allocate and write back the new file's blocks at once (`auto_da_alloc`), and free the old
//! file's (with the `discard` mount option, a discard of them on the way). Measured here, a
//! rename over a 300-byte file took 0.27–0.65 ms (median 0.37), where overwriting the same file in
//! place took 0.06 ms. The lock registry is rewritten when a server takes its lock, on the path
//! of every start, and again when it releases it.
//!
//! Under a lock that every reader takes, nobody reads the file while it is rewritten, so the
//! rename is not needed for readers. It remains needed against a writer that dies halfway: an
//! overwrite is made only as **one write of at most one page from the start of the file**, which a
//! killed process cannot leave half done (the kernel copies a page whole before it acts on a
//! fatal signal), and only over a file that needs no new blocks (no longer than it is already).
//! After a crash of the machine the file may be anything; the registry treats a file it cannot
//! parse as unusable (see `workspace::lock`).

use std::io;
use std::os::fd::AsFd;

use rustix::fs::{FileType, Mode, OFlags};

use super::{Durability, Home};

/// The largest file rewritten in place: one page. A file replaced while shorter is padded to it,
/// so that the next rewrites fit.
const PAGE: usize = 4096;

impl Home {
    /// Rewrites `name` with `bytes`, for a small file in a format where trailing whitespace means
    /// nothing (JSON), that every reader and writer reaches only while holding the same lock
    /// ([`Home::locked`]), and that means nothing after the machine stops.
    ///
    /// When `name` is already teaagent's own (a regular file, not a link, with no other hard
    /// link, owned by the user) of at most one page and no shorter than `bytes`, it is
    /// overwritten in place in one write, padded with spaces to its length (and a last newline).
    /// Otherwise it is replaced as by [`Home::write_atomic`] without the `fsync`s (a link, FIFO
    /// or hard link at `name` is replaced, never written through), padded to one page when
    /// shorter.
    pub fn rewrite_padded(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        if bytes.len() <= PAGE && self.overwrite(name, bytes) {
            return Ok(());
        }
        if bytes.len() >= PAGE {
            return self.replace(name, bytes, Durability::Unsynced);
        }
        self.replace(name, &padded(bytes, PAGE), Durability::Unsynced)
    }

    /// Overwrites `name` in place if [`Home::rewrite_padded`] may; whether it did (a short or
    /// failed write is followed by a replacement, which writes the file whole).
    fn overwrite(&self, name: &str, bytes: &[u8]) -> bool {
        let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let Ok(fd) = rustix::fs::openat(self.dir.as_fd(), name, flags, Mode::empty()) else {
            return false;
        };
        let Ok(stat) = rustix::fs::fstat(&fd) else {
            return false;
        };
        let own = FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile
            && stat.st_nlink == 1
            && stat.st_uid == rustix::process::geteuid().as_raw();
        let size = usize::try_from(stat.st_size).unwrap_or(usize::MAX);
        if !own || size < bytes.len() || size > PAGE {
            return false;
        }
        let body = padded(bytes, size);
        matches!(rustix::io::pwrite(&fd, &body, 0), Ok(written) if written == body.len())
    }
}

/// `bytes` followed by spaces up to `len` bytes, the last one a newline (`bytes` when as long).
fn padded(bytes: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len.max(bytes.len()));
    out.extend_from_slice(bytes);
    if out.len() < len {
        out.resize(len - 1, b' ');
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt as _;

    use super::*;
    use crate::scratch::Scratch;

    #[test]
    fn a_fitting_rewrite_keeps_the_file_and_pads_it() {
        let dir = Scratch::new("rewrite-in-place");
        let home = Home::at(dir.path()).expect("home");
        home.rewrite_padded("r.json", b"{\"a\": [1, 2, 3]}\n").expect("first");
        let path = dir.path().join("r.json");
        let first = std::fs::metadata(&path).expect("written");
        assert_eq!(first.len(), PAGE as u64, "padded to a page, so that the next rewrites fit");
        home.rewrite_padded("r.json", b"{\"a\": []}\n").expect("second");
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(std::fs::metadata(&path).expect("kept").ino(), first.ino(), "rewritten in place");
        assert_eq!(text.len(), PAGE);
        assert!(text.ends_with(" \n"));
        let value: serde_json::Value = serde_json::from_str(&text).expect("still JSON");
        assert_eq!(value, serde_json::json!({"a": []}));
    }

    #[test]
    fn what_does_not_fit_or_is_not_our_own_is_replaced() {
        let dir = Scratch::new("rewrite-replace");
        let home = Home::at(dir.path()).expect("home");
        let path = dir.path().join("r.json");
        // Shorter than the new content: replaced (and padded).
        std::fs::write(&path, "{}").expect("short");
        let before = std::fs::metadata(&path).expect("short").ino();
        home.rewrite_padded("r.json", b"{\"longer\": true}").expect("rewrite");
        assert_ne!(std::fs::metadata(&path).expect("new").ino(), before);
        // Larger than a page: written whole, unpadded, by replacement.
        let big = format!("[{}0]", "0,".repeat(PAGE));
        home.rewrite_padded("r.json", big.as_bytes()).expect("big");
        assert_eq!(std::fs::read_to_string(&path).expect("big"), big);
        // A hard link to a file elsewhere is never written through.
        let outside = dir.path().join("outside");
        std::fs::write(&outside, " ".repeat(100)).expect("outside");
        std::fs::remove_file(&path).expect("rm");
        std::fs::hard_link(&outside, &path).expect("hard link");
        home.rewrite_padded("r.json", b"{}").expect("rewrite");
        assert_eq!(std::fs::read_to_string(&outside).expect("outside"), " ".repeat(100));
        assert_eq!(std::fs::read_to_string(&path).expect("new").trim_end(), "{}");
    }
}
