//! A directory's entries as a walk reads them: names sorted, kept in one buffer, with their
//! kinds when the directory says them.
//!
//! One buffer for every name of a directory, not a string each: a walk visits every entry once
//! and keeps only the names of the files it yields (in their paths), so a string for each name
//! was an allocation and a free an entry, for nothing.

use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{FileType, Mode, OFlags, RawDir};

use crate::workspace::resolve::PathError;

/// A directory's entries (`.` and `..` left out), sorted by name.
#[derive(Debug, Default)]
pub(super) struct Listing {
    names: Vec<u8>,
    entries: Vec<Entry>,
    /// The next entry [`Listing::next`] gives.
    next: usize,
}

#[derive(Debug)]
struct Entry {
    /// Where its name is in the buffer.
    start: usize,
    len: u16,
    kind: Option<FileType>,
}

impl Entry {
    fn name(&self) -> Range<usize> {
        self.start..self.start + usize::from(self.len)
    }
}

impl Listing {
    /// Reads `dir` through a handle of its own (`openat(dir, ".")`), whose position no other
    /// reader shares, into a buffer on the stack.
    pub(super) fn read(dir: &OwnedFd) -> Result<Listing, PathError> {
        Listing::default().reread(dir)
    }

    /// [`Listing::read`], into this listing's buffers (a listing done with): a walk reads one
    /// directory after another, and growing two buffers anew for each cost more than reading
    /// it (allocations of a kilobyte or more also make glibc's allocator sort every small block
    /// freed since into its bins: each small allocation after that took its slow path).
    pub(super) fn reread(self, dir: &OwnedFd) -> Result<Listing, PathError> {
        let Listing { mut names, mut entries, .. } = self;
        names.clear();
        entries.clear();
        let own = rustix::fs::openat(
            dir,
            c".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| PathError::Io(e.into()))?;
        // Larger than any one record (a name is at most 255 bytes), so `EINVAL` cannot come back.
        let mut buffer = [MaybeUninit::<u8>::uninit(); 16 * 1024];
        let mut records = RawDir::new(&own, &mut buffer);
        while let Some(record) = records.next() {
            let record = record.map_err(|e| PathError::Io(e.into()))?;
            let name = record.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let Ok(len) = u16::try_from(name.len()) else { continue };
            let kind = match record.file_type() {
                FileType::Unknown => None,
                kind => Some(kind),
            };
            entries.push(Entry { start: names.len(), len, kind });
            names.extend_from_slice(name);
        }
        entries.sort_unstable_by(|a, b| names[a.name()].cmp(&names[b.name()]));
        Ok(Listing { names, entries, next: 0 })
    }

    /// Whether its buffers are small enough to keep for the next directory: a walk keeps a
    /// few listings while it is paused between pages (see `Walk::spare`), and one directory of
    /// a million names must not leave its buffers held for as long.
    pub(super) fn worth_keeping(&self) -> bool {
        const KEPT: usize = 64 * 1024;
        self.names.capacity() + self.entries.capacity() * std::mem::size_of::<Entry>() <= KEPT
    }

    /// Whether an entry is called `name`.
    pub(super) fn contains(&self, name: &str) -> bool {
        self.entries.binary_search_by(|entry| self.names[entry.name()].cmp(name.as_bytes())).is_ok()
    }

    /// The next entry: its name, and its kind when the directory says it.
    pub(super) fn next(&mut self) -> Option<(&OsStr, Option<FileType>)> {
        let entry = self.entries.get(self.next)?;
        self.next += 1;
        Some((OsStr::from_bytes(&self.names[entry.name()]), entry.kind))
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::OwnedFd;

    use super::*;
    use crate::scratch::Scratch;

    #[test]
    fn entries_come_sorted_with_their_kinds_and_without_dots() {
        let s = Scratch::new("walk-listing");
        // More names than one `getdents` record buffer holds, with long ones among them.
        for i in (0..400).rev() {
            s.write(&format!("{i:03}-{}", "n".repeat(i % 200)), "");
        }
        s.write("sub/file", "");
        std::os::unix::fs::symlink("sub", s.path().join("link")).expect("link");
        let dir: OwnedFd = std::fs::File::open(s.path()).expect("open").into();
        let mut listing = Listing::read(&dir).expect("listing");
        assert!(listing.contains("sub") && listing.contains("link") && !listing.contains("."));
        let mut names = Vec::new();
        while let Some((name, kind)) = listing.next() {
            let expected = match name.to_str() {
                Some("sub") => FileType::Directory,
                Some("link") => FileType::Symlink,
                _ => FileType::RegularFile,
            };
            assert_eq!(kind.unwrap_or(expected), expected, "{name:?}");
            names.push(name.to_owned());
        }
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_eq!(names.len(), 402);

        assert!(!listing.worth_keeping(), "402 long names are more than a listing keeps");
        assert!(Listing::default().worth_keeping());

        // Read again into those buffers, another directory's listing is that directory's alone.
        let sub: OwnedFd = std::fs::File::open(s.path().join("sub")).expect("open").into();
        let mut again = listing.reread(&sub).expect("listing");
        assert!(again.contains("file") && !again.contains("sub") && !again.contains("000-"));
        assert_eq!(again.next().map(|(name, _)| name.to_owned()), Some("file".into()));
        assert!(again.next().is_none());
    }
}
