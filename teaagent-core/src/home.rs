//! `$TEAAGENT_HOME`: where teaagent keeps its per-user state (the lock registry, the audit log,
//! the trust store, the user's configuration).
//!
//! It is the `TEAAGENT_HOME` environment variable when set (and not empty), else `~/.teaagent`.
//! It is created on first use with user-only permissions (0700), because what it holds says which
//! projects the user works on and what they allowed.

use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::PathBuf;

/// The teaagent home directory (not created).
pub fn dir() -> io::Result<PathBuf> {
    if let Some(home) = std::env::var_os("TEAAGENT_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".teaagent")),
        None => Err(io::Error::new(
            io::ErrorKind::NotFound,
            "neither TEAAGENT_HOME nor HOME is set: set TEAAGENT_HOME to a directory teaagent may use",
        )),
    }
}

/// The teaagent home directory, created (0700) if missing.
pub fn ensure() -> io::Result<PathBuf> {
    let dir = dir()?;
    if !dir.is_dir() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir)?;
        // `recursive` applies the mode to the last component only when it creates it; make sure.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(dir)
}

/// Replaces `path` atomically: the bytes go to a temporary file in the same directory, which is
/// synced and renamed over `path`, and the directory is synced. A crash leaves the old file or the
/// new one, never a torn one. The file gets user-only permissions.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or_else(|| std::path::Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file =
            std::fs::OpenOptions::new().create(true).truncate(true).write(true).mode(0o600).open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Runs `f` holding an exclusive `flock` on `lock_path` (created if missing), so concurrent
/// read-modify-write cycles of a shared file never interleave.
pub fn locked<T>(lock_path: &std::path::Path, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    use std::os::unix::fs::OpenOptionsExt;
    let file =
        std::fs::OpenOptions::new().create(true).truncate(false).write(true).mode(0o600).open(lock_path)?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
    let out = f();
    drop(file); // closing releases the lock
    out
}
