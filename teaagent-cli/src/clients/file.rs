//! Reading and writing a client's configuration file.
//!
//! Reading: a regular file of at most [`MAX_BYTES`], UTF-8, opened without blocking (a FIFO in
//! its place is an error, not a hang).
//!
//! Writing is atomic: the new contents go to a temporary file in the same directory, with the old
//! file's permissions, flushed to disk, then renamed over the file, so a reader (the client, at
//! any moment) sees the old file or the new one, never a part. The old contents are kept beside
//! it as `FILE.bak` (written the same way, before the file is touched; one backup, the latest).
//!
//! A file that is a symbolic link is followed and its target written: people keep their
//! configuration in a dotfiles repository linked into place, and replacing the link with a file
//! would silently cut it off from that repository. The backup and the temporary file go beside
//! the target. (A project's file is only followed inside the project: see
//! [`ClientError::OutsideProject`].)

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::ClientError;

/// The largest client file read (Claude Code's `~/.claude.json` keeps history and grows past a
/// megabyte).
pub(crate) const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The file's text, `None` when it does not exist.
pub(crate) fn read(path: &Path) -> Result<Option<String>, ClientError> {
    match teaagent_core::home::read_path(path, MAX_BYTES) {
        Ok(None) => Ok(None),
        Ok(Some(bytes)) => {
            String::from_utf8(bytes).map(Some).map_err(|_| ClientError::NotText { path: path.to_path_buf() })
        }
        Err(e) => Err(ClientError::Read { path: path.to_path_buf(), source: e.into() }),
    }
}

/// The backup of `file`: `FILE.bak` beside it.
pub(crate) fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".bak");
    file.with_file_name(name)
}

/// Where writing `path` writes: the target of a link, else `path` itself.
pub(crate) fn target(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Replaces the contents of `path` with `new`: `old` is what it holds now (`None`: it does not
/// exist, and is created with `new_mode`). Returns the backup written, if any. On an error the
/// file is as it was.
pub(crate) fn write(
    path: &Path,
    old: Option<&str>,
    new: &str,
    new_mode: u32,
) -> Result<Option<PathBuf>, ClientError> {
    let target = target(path);
    let (mode, owner) = match fs::metadata(&target) {
        Ok(meta) => (meta.permissions().mode() & 0o7777, Some((meta.uid(), meta.gid()))),
        Err(_) => (new_mode, None),
    };
    let failed = |path: PathBuf| move |source| ClientError::Write { path, source };
    let backup = match old {
        Some(old) => {
            let backup = backup_of(&target);
            replace(&backup, old.as_bytes(), mode, owner).map_err(failed(backup.clone()))?;
            Some(backup)
        }
        None => None,
    };
    replace(&target, new.as_bytes(), mode, owner).map_err(failed(target.clone()))?;
    Ok(backup)
}

/// Writes `bytes` to `file` through a temporary file beside it and a rename; the new file gets
/// `mode` and, when given (the old file's), its owner (so that `sudo teaagent mcp install`
/// leaves a user's file theirs; an unprivileged user cannot give files away and keeps its own).
fn replace(file: &Path, bytes: &[u8], mode: u32, owner: Option<(u32, u32)>) -> io::Result<()> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut name = std::ffi::OsString::from(".");
    name.push(file.file_name().unwrap_or_default());
    name.push(format!(".teaagent-{}.tmp", std::process::id()));
    let temp = dir.join(name);
    // A temporary file left by a process that died with this one's id is stale.
    let _ = fs::remove_file(&temp);
    let mut out = fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(&temp)?;
    let written = out
        .write_all(bytes)
        .and_then(|()| {
            if let Some((uid, gid)) = owner {
                // Best effort: only root may change the owner, and nobody else needs to.
                let _ = std::os::unix::fs::fchown(&out, Some(uid), Some(gid));
            }
            out.set_permissions(fs::Permissions::from_mode(mode))
        })
        .and_then(|()| out.sync_all())
        .and_then(|()| fs::rename(&temp, file));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written?;
    // The rename itself reaches the disk with the directory.
    if let Ok(dir) = fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}
