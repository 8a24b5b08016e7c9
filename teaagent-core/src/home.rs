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
