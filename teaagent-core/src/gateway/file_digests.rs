//! The SHA-256 of an external server's executable and pinned files, worked out once per file
//! version and remembered (in this process, and in `$TEAAGENT_HOME/file_digests.json` for the
//! next start) by the file's version ([`FileVersion`]: device, inode, size, and the
//! modification and status change times to the nanosecond).
//!
//! A remembered digest is only ever found for the very bytes it was worked out from; two cases
//! are never remembered (`home/file_version.rs`): a file changed within the last
//! two seconds, and a file whose version changed while it was read.
//! The file in the home is a cache: one that cannot be read or parsed is ignored and rewritten.
//! It vouches for executables as the pins beside it do, so it is held to the trust store's rule:
//! one that someone else owns or may write is ignored (and replaced, user-only, at the next
//! write). The digests kept, in the file and in the process, are bounded ([`MAX_KEPT`]).

use std::collections::HashMap;
use std::fs::File;
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::home::{FileVersion, Home};

/// The cache's file in `$TEAAGENT_HOME`.
pub(super) const FILE_NAME: &str = "file_digests.json";

/// Most digests kept, in the home's file (the oldest go first) and in the process (all are
/// forgotten when it is full).
const MAX_KEPT: usize = 256;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Stored {
    digests: Vec<(FileVersion, String)>,
}

/// Digests remembered by file identity, and where they are kept between starts.
#[derive(Debug)]
pub(super) struct FileDigests {
    home: Option<Home>,
    known: Mutex<HashMap<FileVersion, String>>,
}

impl FileDigests {
    /// The process's digests, kept in `$TEAAGENT_HOME` (only in this process when it cannot be
    /// used).
    pub(super) fn of_process() -> &'static Self {
        static DIGESTS: OnceLock<FileDigests> = OnceLock::new();
        DIGESTS.get_or_init(|| Self::kept_in(Home::open().ok()))
    }

    fn kept_in(home: Option<Home>) -> Self {
        let known = home.as_ref().map(Self::load).unwrap_or_default();
        Self { home, known: Mutex::new(known.into_iter().collect()) }
    }

    fn load(home: &Home) -> Vec<(FileVersion, String)> {
        if let Some(loose) = home.loose_permissions(FILE_NAME) {
            let path = crate::visible::shown(&home.file(FILE_NAME).display().to_string());
            tracing::warn!("{path} is {loose}: its digests are ignored");
            return Vec::new();
        }
        let Ok(Some(bytes)) = home.read(FILE_NAME, crate::home::MAX_CONFIG_BYTES) else { return Vec::new() };
        serde_json::from_slice::<Stored>(&bytes).map(|s| s.digests).unwrap_or_default()
    }

    /// Adds `entry` to the home's file (best effort: a digest that cannot be kept is worked out
    /// again next time).
    fn store(&self, entry: (FileVersion, String)) {
        let Some(home) = &self.home else { return };
        let _ = home.locked("file_digests.lock", || {
            let mut stored = Stored { digests: Self::load(home) };
            stored.digests.retain(|(id, _)| *id != entry.0);
            stored.digests.push(entry);
            let over = stored.digests.len().saturating_sub(MAX_KEPT);
            stored.digests.drain(..over);
            let body = serde_json::to_vec(&stored).map_err(std::io::Error::other)?;
            home.write_atomic_unsynced(FILE_NAME, &body)
        });
    }

    /// The SHA-256 (hex) of an open file's whole content: remembered when this version of the
    /// file was hashed before, else read with `hash` (and remembered, see the module docs).
    pub(super) fn sha256(&self, file: &File, hash: impl FnOnce(&File) -> Option<String>) -> Option<String> {
        self.sha256_at(file, hash, SystemTime::now())
    }

    fn sha256_at(
        &self,
        file: &File,
        hash: impl FnOnce(&File) -> Option<String>,
        now: SystemTime,
    ) -> Option<String> {
        let before = FileVersion::of(file);
        let known = || self.known.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = before.and_then(|id| known().get(&id).cloned()) {
            return Some(found);
        }
        let digest = hash(file)?;
        if let Some(id) = before.filter(|id| FileVersion::of(file) == Some(*id) && id.settled(now)) {
            let mut known = known();
            if known.len() >= MAX_KEPT {
                known.clear();
            }
            known.insert(id, digest.clone());
            drop(known);
            self.store((id, digest.clone()));
        }
        Some(digest)
    }
}

/// The SHA-256 (hex) of an open file's whole content, read from its start.
pub(super) fn hash_file(file: &std::fs::File) -> Option<String> {
    use std::os::unix::fs::FileExt;
    let mut hasher = crate::digest::Sha256::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut offset = 0u64;
    loop {
        match file.read_at(&mut buf, offset) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buf[..n]);
                offset += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(crate::digest::hex(&hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::io::Write;
    use std::time::Duration;

    fn counted(count: &Cell<u32>) -> impl FnOnce(&File) -> Option<String> + '_ {
        move |file| {
            count.set(count.get() + 1);
            hash_file(file)
        }
    }

    #[test]
    fn a_settled_file_is_hashed_once_its_next_version_again_and_a_fresh_one_each_time() {
        let dir = crate::scratch::Scratch::new("file-digests");
        let home = Home::at(dir.path()).expect("home");
        let path = dir.path().join("server");
        std::fs::write(&path, b"version one").expect("write");
        let later = SystemTime::now() + Duration::from_secs(60);
        let digests = FileDigests::kept_in(Some(home));
        let open = || File::open(&path).expect("open");
        let count = Cell::new(0);
        let first = digests.sha256_at(&open(), counted(&count), later);
        let again = digests.sha256_at(&open(), counted(&count), later);
        assert_eq!((again, count.get()), (first.clone(), 1), "remembered");
        // Kept in the home: a new process finds it.
        let next = FileDigests::kept_in(Some(Home::at(dir.path()).expect("home")));
        assert_eq!((next.sha256_at(&open(), counted(&count), later), count.get()), (first.clone(), 1));

        // Rewritten in place with the same size and modification time: the status change time
        // moved, so it is hashed again.
        let mtime = open().metadata().and_then(|m| m.modified()).expect("mtime");
        let mut file = File::options().write(true).open(&path).expect("open");
        file.write_all(b"version two").expect("write");
        file.set_modified(mtime).expect("mtime");
        let changed = digests.sha256_at(&open(), counted(&count), later);
        assert_eq!(count.get(), 2);
        assert_ne!(changed, first);

        // Changed just now (not settled): hashed every time.
        std::fs::write(&path, b"version 3").expect("write");
        let now = SystemTime::now();
        let fresh = digests.sha256_at(&open(), counted(&count), now);
        assert_eq!((digests.sha256_at(&open(), counted(&count), now), count.get()), (fresh, 4));
    }

    #[test]
    fn a_file_of_digests_someone_else_may_write_is_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let dir = crate::scratch::Scratch::new("file-digests-loose");
        let path = dir.path().join("server");
        std::fs::write(&path, b"the allowed one").expect("write");
        let later = SystemTime::now() + Duration::from_secs(60);
        let open = || File::open(&path).expect("open");
        let id = FileVersion::of(&open()).expect("identity");
        // A forged digest for this very file, in a file its group may write.
        let forged = Stored { digests: vec![(id, "0".repeat(64))] };
        let kept = dir.path().join(FILE_NAME);
        std::fs::write(&kept, serde_json::to_vec(&forged).expect("json")).expect("write");
        std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o664)).expect("chmod");
        let digests = FileDigests::kept_in(Some(Home::at(dir.path()).expect("home")));
        let count = Cell::new(0);
        let found = digests.sha256_at(&open(), counted(&count), later).expect("hashed");
        assert_eq!(count.get(), 1, "read, not taken from the loose file");
        assert_ne!(found, "0".repeat(64));
        // Rewritten user-only, with the true digest.
        let mode = std::fs::metadata(&kept).expect("kept").permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        // The same file, user-only: its digests are used.
        let next = FileDigests::kept_in(Some(Home::at(dir.path()).expect("home")));
        assert_eq!(next.sha256_at(&open(), counted(&count), later), Some(found));
        assert_eq!(count.get(), 1);
    }

    #[test]
    fn the_digests_kept_are_bounded_and_the_oldest_go_first() {
        let dir = crate::scratch::Scratch::new("file-digests-bounded");
        let digests = FileDigests::kept_in(Some(Home::at(dir.path()).expect("home")));
        let id = |ino| FileVersion { dev: 1, ino, size: 1, mtime: (1, 0), ctime: (1, 0) };
        for ino in 0..=MAX_KEPT as u64 {
            digests.store((id(ino), format!("{ino}")));
        }
        let kept = FileDigests::load(&Home::at(dir.path()).expect("home"));
        assert_eq!(kept.len(), MAX_KEPT);
        assert_eq!(kept.first().map(|(i, _)| i.ino), Some(1), "the oldest went");
        assert_eq!(kept.last().map(|(i, _)| i.ino), Some(MAX_KEPT as u64));
    }
}
