//! Containment on systems other than Linux: the first process's group only (the `containment`
//! module docs).

use std::path::{Path, PathBuf};

pub(super) fn prepare(_prefix: &str, _token: &str) -> Result<Option<PathBuf>, String> {
    Ok(None)
}

pub(super) fn enter_on_exec(_cmd: &mut tokio::process::Command, _procs: &Path) -> Result<(), String> {
    Ok(())
}

pub(super) fn start_time(_pid: i32) -> Option<u64> {
    Some(0)
}

pub(super) fn close_cgroup(_dir: &Path, _shell: Option<i32>) {}

pub(super) fn sweep(_token: &str, shell: Option<(i32, u64)>, _pipes: &[u64]) {
    if let Some(pid) = shell.and_then(|(pid, _)| rustix::process::Pid::from_raw(pid)) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}
