//! What the sandbox reads of a git index (a repository's `index` file, in the format git
//! documents as `index-format`, versions 2 to 4, SHA-1 or SHA-256): the paths of its gitlinks,
//! the entries that make `git status` enter a directory as a submodule.
//!
//! The index is not trusted more than any other file of a workspace: every length is checked
//! against the bytes there are, and an index this reading does not understand is an error, never
//! "no submodules".

/// The mode of a gitlink entry.
const GITLINK: u32 = 0o160000;
/// An entry's fixed part before its object name: ctime, mtime, dev, ino, mode, uid, gid, size.
const STAT_BYTES: usize = 40;
/// The entry flag saying a second, extended flags word follows (version 3 and later).
const EXTENDED: u16 = 0x4000;
/// The bits of an entry's flags that give its name's length (0xfff: that long or longer).
const NAME_LENGTH: u16 = 0x0fff;

/// The gitlinks one index file records.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Gitlinks {
    /// Their paths, relative to the work tree, as the index spells them.
    pub paths: Vec<Vec<u8>>,
    /// A gitlink entry without a name: in a split index, an entry that replaces one of the
    /// shared index's, whose path this file does not say.
    pub unnamed: bool,
    /// The hex name of the shared index this one extends (`sharedindex.<hex>` beside it), for a
    /// split index.
    pub shared: Option<String>,
}

/// The gitlinks `index` records; an error when it is not an index of a version git writes.
pub(super) fn gitlinks(index: &[u8]) -> Result<Gitlinks, &'static str> {
    if index.get(..4) != Some(b"DIRC") {
        return Err("not a git index");
    }
    // The index does not say which hash its repository uses: the one that reads the whole file
    // consistently (every name its length, every padding zeros, the extensions up to the
    // checksum) is it.
    [20, 32]
        .into_iter()
        .find_map(|hash| read(index, hash))
        .ok_or("an index this version of teaagent cannot read")
}

/// Reads `bytes` as an index whose object names are `hash` bytes long.
fn read(bytes: &[u8], hash: usize) -> Option<Gitlinks> {
    let end = bytes.len().checked_sub(hash)?;
    let mut at = Cursor { bytes: &bytes[..end], at: 4 };
    let version = at.u32()?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = at.u32()?;
    let mut found = Gitlinks::default();
    // Version 4's names are made from the one before; others are read where they lie.
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at.at;
        at.take(24)?;
        let mode = at.u32()?;
        at.take(12 + hash)?;
        let flags = at.u16()?;
        if flags & EXTENDED != 0 {
            if version < 3 {
                return None;
            }
            at.u16()?;
        }
        let name: &[u8] = if version == 4 {
            // The name is the previous one's start (all but `strip` bytes) and a suffix.
            let strip = at.varint()?;
            let kept = previous.len().checked_sub(usize::try_from(strip).ok()?)?;
            previous.truncate(kept);
            previous.extend_from_slice(at.through_nul()?);
            &previous
        } else {
            let name = at.through_nul()?;
            // The entry is padded with one to eight NULs to a multiple of eight bytes (the first
            // of them ended the name).
            let fixed = STAT_BYTES + hash + if flags & EXTENDED != 0 { 4 } else { 2 };
            let padded = start.checked_add((fixed + name.len() + 8) & !7)?;
            let padding = at.bytes.get(at.at..padded)?;
            if padding.iter().any(|&b| b != 0) {
                return None;
            }
            at.at = padded;
            name
        };
        let length = usize::from(flags & NAME_LENGTH);
        if length < usize::from(NAME_LENGTH) && name.len() != length {
            return None;
        }
        if mode == GITLINK {
            match name.is_empty() {
                true => found.unnamed = true,
                false => found.paths.push(name.to_vec()),
            }
        }
    }
    while at.at < at.bytes.len() {
        let signature = at.take(4)?;
        let size = usize::try_from(at.u32()?).ok()?;
        let data = at.take(size)?;
        if signature == b"link" {
            found.shared = Some(crate::digest::hex(data.get(..hash)?));
        }
    }
    Some(found)
}

/// A position in the bytes of an index, every read of which is bounded by them.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let taken = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(taken)
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    /// The bytes up to the next NUL, which is read too.
    fn through_nul(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let len = rest.iter().position(|&b| b == 0)?;
        self.at += len + 1;
        Some(&rest[..len])
    }

    /// Git's offset varint: seven bits a byte, most significant first, each continuation adding
    /// one (so every value has one spelling).
    fn varint(&mut self) -> Option<u64> {
        let mut byte = self.take(1)?[0];
        let mut value = u64::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = self.take(1)?[0];
            value = value.checked_add(1)?.checked_mul(128)?.checked_add(u64::from(byte & 0x7f))?;
        }
        Some(value)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::path::Path;
    use std::process::Command;

    use super::*;

    /// Runs git in `dir` (with an author, and local submodules allowed), which must succeed.
    pub(in crate::sandbox) fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// A repository with a file, two gitlinks (one nested in directories) and, for version 4's
    /// prefix compression, names that share their starts.
    fn repository(dir: &Path, init: &[&str]) -> String {
        git(dir, &[&["init", "-q"], init].concat());
        std::fs::create_dir_all(dir.join("lib/deep")).expect("dirs");
        std::fs::write(dir.join("lib/deep/file.txt"), "x").expect("file");
        git(dir, &["add", "."]);
        git(dir, &["commit", "-q", "-m", "first"]);
        let out = Command::new("git").args(["rev-parse", "HEAD"]).current_dir(dir).output().expect("git");
        let head = String::from_utf8(out.stdout).expect("hex").trim().to_owned();
        for path in ["lib/deep/sub", "lib/deep/sub-two"] {
            git(dir, &["update-index", "--add", "--cacheinfo", &format!("160000,{head},{path}")]);
        }
        head
    }

    fn read_index(dir: &Path) -> Gitlinks {
        gitlinks(&std::fs::read(dir.join(".git/index")).expect("index")).expect("an index")
    }

    #[test]
    fn the_gitlinks_of_every_index_version_and_both_hashes_are_found() {
        for (init, version) in [
            (&[][..], "2"),
            (&[][..], "3"),
            (&[][..], "4"),
            (&["--object-format=sha256"][..], "2"),
            (&["--object-format=sha256"][..], "4"),
        ] {
            let scratch = crate::scratch::Scratch::new(&format!("git-index-{}-{version}", init.len()));
            let dir = scratch.path();
            repository(dir, init);
            git(dir, &["update-index", "--index-version", version]);
            if version == "3" {
                // Version 3 exists for the extended flags: an intent-to-add entry has them.
                std::fs::write(dir.join("later.txt"), "y").expect("file");
                git(dir, &["add", "--intent-to-add", "later.txt"]);
            }
            let found = read_index(dir);
            assert_eq!(
                found.paths,
                vec![b"lib/deep/sub".to_vec(), b"lib/deep/sub-two".to_vec()],
                "{init:?} version {version}"
            );
            assert!(!found.unnamed && found.shared.is_none());
        }
    }

    #[test]
    fn a_split_index_names_its_shared_index() {
        let scratch = crate::scratch::Scratch::new("git-index-split");
        let dir = scratch.path();
        let head = repository(dir, &[]);
        git(dir, &["update-index", "--split-index"]);
        git(dir, &["update-index", "--add", "--cacheinfo", &format!("160000,{head},later")]);
        let split = read_index(dir);
        let shared = split.shared.clone().expect("a split index");
        let base = std::fs::read(dir.join(format!(".git/sharedindex.{shared}"))).expect("shared index");
        let base = gitlinks(&base).expect("an index");
        let mut all = [base.paths, split.paths].concat();
        all.sort();
        assert!(all.contains(&b"later".to_vec()) && all.contains(&b"lib/deep/sub".to_vec()), "{all:?}");
    }

    #[test]
    fn anything_else_is_an_error() {
        let scratch = crate::scratch::Scratch::new("git-index-other");
        let dir = scratch.path();
        repository(dir, &[]);
        let index = std::fs::read(dir.join(".git/index")).expect("index");
        assert!(gitlinks(&index).is_ok());
        // Cut anywhere, or with a name's length or a padding byte changed, it reads as nothing.
        for cut in [4, 12, 40, 70, index.len() / 2, index.len() - 21] {
            assert!(gitlinks(&index[..cut]).is_err(), "cut at {cut}");
        }
        let first_flags = 12 + STAT_BYTES + 20;
        let mut longer = index.clone();
        longer[first_flags + 1] += 1;
        assert!(gitlinks(&longer).is_err());
        let mut version = index.clone();
        version[7] = 5;
        assert!(gitlinks(&version).is_err());
        assert!(gitlinks(b"not an index at all").is_err());
        assert!(gitlinks(b"").is_err());
    }
}
