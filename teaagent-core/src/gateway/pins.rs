//! What a start of an external server must find unchanged, checked by the gateway right where it
//! starts the server (`Launch::pins`).
//!
//! - **The executable is run through the very file that was hashed.** It is opened once, its
//!   SHA-256 computed from that open file and compared with the pin, and the server is started
//!   from the same open file (`/proc/self/fd/N` on Linux): a file swapped at the path between
//!   the check and the start is never run. Elsewhere it is hashed and then run by its path.
//! - **Files its arguments name** (the script an interpreter runs: `python3 server.py`,
//!   `node dist/index.js`) are hashed right before the start and must match their pins. The
//!   interpreter opens them by name afterwards, and what they import is not pinned.
//!
//! What the `teaagent` command pins besides (command, arguments, environment names, the values
//! of variables that load code, a package's exact version) it checks before it asks for a start.

use std::path::{Path, PathBuf};

/// What a start must find unchanged (module docs). The default pins nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pins {
    /// The SHA-256 (hex) the executable must have.
    pub executable_sha256: Option<String>,
    /// Files the arguments name, with the SHA-256 (hex) each must have.
    pub files: Vec<(PathBuf, String)>,
}

/// The SHA-256 (hex) of the regular file at `path`, streamed; `None` for anything else (a FIFO
/// or a device is never read: it is opened without blocking and checked first) or when it
/// cannot be read.
pub fn sha256_of(path: &Path) -> Option<String> {
    let file = open_regular(path).ok()?;
    sha256_of_file(&file)
}

/// Opens `path` for reading if it is a regular file (never blocking on a FIFO).
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{FileType, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::open(path, flags, Mode::empty())?;
    let stat = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(std::io::Error::other("not a regular file"));
    }
    rustix::fs::fcntl_setfl(&fd, OFlags::empty())?;
    Ok(std::fs::File::from(fd))
}

/// The SHA-256 (hex) of an open file's whole content: read once per version of the file
/// (`file_digests`).
fn sha256_of_file(file: &std::fs::File) -> Option<String> {
    super::file_digests::FileDigests::of_process().sha256(file, super::file_digests::hash_file)
}

/// The executable checked against `pins` and held open, to be run from that open file.
pub(crate) struct Checked {
    file: std::fs::File,
}

impl Checked {
    /// The path to start the server by: the open file itself on Linux, else the path.
    pub(crate) fn program(&self, path: &Path) -> PathBuf {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let _ = path;
            PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
        }
        #[cfg(not(target_os = "linux"))]
        {
            path.to_path_buf()
        }
    }

    /// Lets the child keep the open file across `exec` (a script's interpreter reads it by its
    /// `/proc/self/fd/N` name): its close-on-exec flag is cleared in the child only.
    pub(crate) fn keep_open_in(&self, cmd: &mut tokio::process::Command) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let fd = self.file.as_raw_fd();
            // SAFETY: runs in the child between fork and exec; one fcntl on a descriptor number
            // that the fork copied, no memory of the parent touched.
            #[allow(unsafe_code)]
            unsafe {
                cmd.pre_exec(move || {
                    let fd = std::os::fd::BorrowedFd::borrow_raw(fd);
                    rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?;
                    Ok(())
                });
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = cmd;
    }
}

/// Opens the executable, checks it and every pinned file (module docs); `Err(why)` when one
/// changed or cannot be read.
pub(crate) fn check(program: &Path, pins: &Pins) -> Result<Checked, String> {
    let shown = |p: &Path| crate::visible::shown(&p.display().to_string());
    let file =
        open_regular(program).map_err(|e| format!("cannot open its executable {}: {e}", shown(program)))?;
    if let Some(pinned) = &pins.executable_sha256 {
        let now =
            sha256_of_file(&file).ok_or_else(|| format!("cannot read its executable {}", shown(program)))?;
        if &now != pinned {
            return Err(format!(
                "its executable {} changed since it was allowed (sha256 {now}, allowed {pinned})",
                shown(program)
            ));
        }
    }
    for (path, pinned) in &pins.files {
        match sha256_of(path) {
            Some(now) if &now == pinned => {}
            Some(now) => {
                return Err(format!(
                    "the file {} its arguments name changed since it was allowed (sha256 {now}, allowed {pinned})",
                    shown(path)
                ));
            }
            None => return Err(format!("the file {} its arguments name is gone or unreadable", shown(path))),
        }
    }
    Ok(Checked { file })
}
