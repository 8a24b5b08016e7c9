//! Reading the audit log (`audit.rs`): its files oldest first, opened together under the lock,
//! and their records line by line, an incomplete last line held back until its end is written.

use std::fs::File;
use std::io::{self, Read};

use super::rotate::{Rotation, old_name};
use super::{FILE_NAME, LOCK_NAME};
use crate::home::{Home, LockKind};

/// One of the log's files, open.
#[derive(Debug)]
pub struct LogFile {
    /// Its name in the home (`audit.jsonl.2`, `audit.jsonl`).
    pub name: String,
    /// The file.
    pub file: File,
}

/// The names of the log's files in `home` as they are now, oldest first: `audit.jsonl.N` …
/// `audit.jsonl.1` (as far as they go without a gap), then `audit.jsonl` (whether or not it
/// exists).
pub fn file_names(home: &Home) -> io::Result<Vec<String>> {
    let mut names = vec![FILE_NAME.to_owned()];
    for n in 1..=Rotation::MAX_KEEP {
        let name = old_name(n);
        if home.stat(&name)?.is_none() {
            break;
        }
        names.push(name);
    }
    names.reverse();
    Ok(names)
}

/// Opens the log's files in `home`, oldest first ([`file_names`]), all under the rotation
/// lock held shared (`audit.lock`, made if missing), so that no rotation moves records between
/// them while they are opened.
/// Files that do not exist are left out (an empty list: there is no log). A file that is a link
/// or not a regular file is an error that names it.
pub fn open_files(home: &Home) -> io::Result<Vec<LogFile>> {
    // Without the lock (it cannot be made here), the files are opened all the same: at worst a
    // rotation in between shows a file's records twice or not at all.
    let lock = home.lock_file(LOCK_NAME).ok();
    if let Some(lock) = &lock {
        let deadline = crate::home::lock_deadline();
        crate::home::lock(lock, &home.file(LOCK_NAME), LockKind::Shared, Some(deadline))?;
    }
    let mut files = Vec::new();
    for name in file_names(home)? {
        if let Some(file) = home.open_read(&name)? {
            files.push(LogFile { name, file });
        }
    }
    drop(lock);
    Ok(files)
}

/// The most of one line [`Lines`] keeps (16 MiB, far beyond any record): the rest of a longer
/// line is read past, not kept, so a hostile file cannot make a reader hold it all. What is kept
/// of such a line is not a whole JSON value, so it is reported as no record.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// The complete lines of a file as it grows, numbered from 1. The last line is a record only
/// once its newline is written: until then it is held back ([`Lines::incomplete`]). A line is
/// handed over cut to [`MAX_LINE`] bytes.
#[derive(Debug)]
pub struct Lines {
    file: File,
    pending: Vec<u8>,
    number: u64,
}

impl Lines {
    /// The lines of `file`, from where it is now read (its start, for a file just opened).
    pub fn new(file: File) -> Self {
        Self { file, pending: Vec::new(), number: 0 }
    }

    /// Hands `each` every complete line written since the last call (without its newline),
    /// with its number; stops at the first error `each` returns. Returns how many lines it
    /// handed over.
    pub fn read_new(&mut self, mut each: impl FnMut(u64, &[u8]) -> io::Result<()>) -> io::Result<u64> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut handed = 0;
        loop {
            let n = match self.file.read(&mut buf) {
                Ok(0) => return Ok(handed),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let mut chunk = &buf[..n];
            while let Some(end) = memchr::memchr(b'\n', chunk) {
                self.number += 1;
                handed += 1;
                if self.pending.is_empty() {
                    each(self.number, &chunk[..end])?;
                } else {
                    self.keep(&chunk[..end]);
                    let line = std::mem::take(&mut self.pending);
                    each(self.number, &line)?;
                }
                chunk = &chunk[end + 1..];
            }
            self.keep(chunk);
        }
    }

    /// Adds `bytes` to the line being read, as far as [`MAX_LINE`] allows.
    fn keep(&mut self, bytes: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.pending.len());
        self.pending.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// The last line read so far without its newline (a writer still writing it, or one that
    /// stopped in the middle), with the number it will have.
    pub fn incomplete(&self) -> Option<(u64, &[u8])> {
        (!self.pending.is_empty()).then_some((self.number + 1, self.pending.as_slice()))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn lines_of(lines: &mut Lines) -> Vec<(u64, String)> {
        let mut out = Vec::new();
        lines
            .read_new(|n, line| {
                out.push((n, String::from_utf8_lossy(line).into_owned()));
                Ok(())
            })
            .expect("read");
        out
    }

    #[test]
    fn an_incomplete_last_line_waits_for_its_end() {
        let dir = crate::scratch::Scratch::new("audit-lines");
        let path = dir.path().join("log");
        let mut writer = File::create(&path).expect("create");
        writer.write_all(b"{\"a\":1}\n{\"b\":").expect("write");
        let mut lines = Lines::new(File::open(&path).expect("open"));
        assert_eq!(lines_of(&mut lines), [(1, "{\"a\":1}".to_owned())]);
        assert_eq!(lines.incomplete(), Some((2, b"{\"b\":".as_slice())));
        assert!(lines_of(&mut lines).is_empty(), "still waiting");
        writer.write_all(b"2}\n\n{\"c\":3}\n").expect("write");
        assert_eq!(
            lines_of(&mut lines),
            [(2, "{\"b\":2}".to_owned()), (3, String::new()), (4, "{\"c\":3}".to_owned())]
        );
        assert_eq!(lines.incomplete(), None);
    }

    #[test]
    fn a_line_longer_than_the_bound_is_cut_not_kept_whole() {
        let dir = crate::scratch::Scratch::new("audit-long-line");
        let path = dir.path().join("log");
        let mut long = vec![b'x'; MAX_LINE + 300_000];
        long.extend_from_slice(b"\n{}\n");
        std::fs::write(&path, &long).expect("write");
        let mut lines = Lines::new(File::open(&path).expect("open"));
        let mut seen = Vec::new();
        lines
            .read_new(|n, line| {
                seen.push((n, line.len()));
                Ok(())
            })
            .expect("read");
        assert_eq!(seen, [(1, MAX_LINE), (2, 2)]);
    }
}
