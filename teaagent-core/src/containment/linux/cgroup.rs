//! The cgroup v2 mechanism: each scope a child cgroup of the server's own, entered by its first
//! process before its program runs, killed as a whole and removed at the end.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use super::GIVE_UP;
use super::procfs::{kill, reap, scan};
use super::subreaper::subreaper_enabled;
use crate::containment::Kind;

/// The server's own cgroup v2 directory, found once.
fn own_cgroup() -> Result<&'static Path, String> {
    static BASE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BASE.get_or_init(|| {
        let base = find_own_cgroup()?;
        remove_stale(&base);
        Ok(base)
    })
    .as_deref()
    .map_err(Clone::clone)
}

fn find_own_cgroup() -> Result<PathBuf, String> {
    let cgroups =
        std::fs::read_to_string("/proc/self/cgroup").map_err(|e| format!("/proc/self/cgroup: {e}"))?;
    let mounts =
        std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
    let candidates = candidates(&cgroups, &mounts);
    if candidates.is_empty() && !cgroups.lines().any(|l| l.starts_with("0::")) {
        return Err("the server is in no cgroup v2 hierarchy".into());
    }
    candidates
        .into_iter()
        .find(|dir| dir.join("cgroup.procs").is_file())
        .ok_or_else(|| "no cgroup2 mount holds the server's cgroup".into())
}

/// Where the server's cgroup v2 (the `0::PATH` line of `/proc/self/cgroup`) can be, given
/// the `cgroup2` mounts of `/proc/self/mountinfo`: under each mount whose root is a prefix
/// of `PATH` (a mount of a sub-tree, or the namespace's root).
fn candidates(cgroups: &str, mountinfo: &str) -> Vec<PathBuf> {
    let Some(path) = cgroups.lines().find_map(|l| l.strip_prefix("0::")) else { return Vec::new() };
    let mut found = Vec::new();
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else { continue };
        if right.split(' ').next() != Some("cgroup2") {
            continue;
        }
        let fields: Vec<&str> = left.split(' ').collect();
        let (Some(root), Some(point)) = (fields.get(3), fields.get(4)) else { continue };
        let (root, point) = (unescape(root), unescape(point));
        let Some(rest) =
            path.strip_prefix(root.as_str()).filter(|r| root == "/" || r.is_empty() || r.starts_with('/'))
        else {
            continue;
        };
        found.push(Path::new(&point).join(rest.trim_start_matches('/')));
    }
    found
}

/// `\040`-style escapes of `/proc/self/mountinfo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && let Some(v) =
                std::str::from_utf8(&bytes[i + 1..i + 4]).ok().and_then(|o| u8::from_str_radix(o, 8).ok())
        {
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Removes the cgroups that servers gone before left behind (named by their pid), when they
/// are empty and at least a minute old. A populated one refuses `rmdir`, so nothing running
/// is touched (its processes may belong to a live server in another PID namespace); a live
/// server's cgroups are never removed, not even the one it just created for a call.
fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| {
                n.strip_prefix(Kind::Shell.prefix()).or_else(|| n.strip_prefix(Kind::Server.prefix()))
            })
            .and_then(|rest| rest.split('.').next())
            .and_then(|pid| pid.parse::<i32>().ok())
            .and_then(Pid::from_raw)
        else {
            continue;
        };
        let gone = rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH);
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > Duration::from_secs(60)));
        if gone && old {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

pub(super) fn create_cgroup(prefix: &str, token: &str) -> Result<PathBuf, String> {
    let base = own_cgroup()?;
    // Moving a process needs write access to the common ancestor's `cgroup.procs`.
    rustix::fs::access(base.join("cgroup.procs"), rustix::fs::Access::WRITE_OK)
        .map_err(|e| format!("{}: {e}", base.join("cgroup.procs").display()))?;
    let dir = base.join(format!("{prefix}{token}"));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Makes the command's process write `0` to `procs` (entering that cgroup) between `fork`
/// and `exec`: a process that cannot enter fails to spawn, and never runs its program.
#[cfg_attr(not(feature = "gateway"), allow(dead_code))]
pub(in crate::containment) fn enter_on_exec(
    cmd: &mut tokio::process::Command,
    procs: &Path,
) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(procs.as_os_str().as_bytes())
        .map_err(|_| format!("{}: the path holds a NUL byte", procs.display()))?;
    // SAFETY: the closure runs in the child between fork and exec and makes only
    // async-signal-safe system calls (open, write, close) on memory prepared before the fork.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            let flags = rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CLOEXEC;
            let fd = rustix::fs::open(path.as_c_str(), flags, rustix::fs::Mode::empty())?;
            rustix::io::write(&fd, b"0")?;
            Ok(())
        });
    }
    Ok(())
}

/// Kills everything in the scope's cgroup, waits until it is empty and removes it.
pub(in crate::containment) fn close_cgroup(dir: &Path, shell: Option<i32>) {
    if std::fs::write(dir.join("cgroup.kill"), "1").is_err() {
        // Before Linux 5.14: freeze (no more forks), then kill every member until none is left.
        let _ = std::fs::write(dir.join("cgroup.freeze"), "1");
        for _ in 0..100 {
            let pids = procs(dir);
            if pids.is_empty() {
                break;
            }
            for pid in pids {
                kill(pid, Signal::KILL);
            }
        }
    }
    let deadline = Instant::now() + GIVE_UP;
    while populated(dir) {
        if Instant::now() > deadline {
            tracing::warn!(cgroup = %dir.display(), "contained processes are still alive after SIGKILL");
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // Orphans come to the server when it is a subreaper (an earlier call fell back) or PID 1
    // (in a container): reap the call's, recognised by the cgroup a zombie still names.
    let me = std::process::id() as i32;
    if subreaper_enabled() || me == 1 {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for (pid, p) in scan() {
            if p.ppid == me && p.state == b'Z' && Some(pid) != shell && in_cgroup(pid, &name) {
                reap(pid);
            }
        }
    }
    if let Err(e) = remove_tree(dir, 16) {
        tracing::warn!(cgroup = %dir.display(), error = %e, "cannot remove a containment cgroup");
    }
}

/// Whether the process's cgroup v2 is the one named `name` or inside it.
fn in_cgroup(pid: i32, name: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|text| {
        text.lines()
            .filter_map(|l| l.strip_prefix("0::"))
            .any(|path| path.split('/').any(|part| part == name))
    })
}

/// Removes an empty cgroup and the cgroups a command (as root) may have created inside it,
/// `depth` levels down at most.
fn remove_tree(dir: &Path, depth: u32) -> std::io::Result<()> {
    if depth > 0 {
        for entry in std::fs::read_dir(dir)?.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = remove_tree(&entry.path(), depth - 1);
            }
        }
    }
    std::fs::remove_dir(dir)
}

fn procs(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

fn populated(dir: &Path) -> bool {
    match std::fs::read_to_string(dir.join("cgroup.events")) {
        Ok(events) => events.lines().any(|l| l == "populated 1"),
        Err(_) => !procs(dir).is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_cgroup_is_found_under_its_mount() {
        let hybrid = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
                      35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            candidates("4:memory:/x\n0::/app.slice/a b.scope\n", hybrid),
            [PathBuf::from("/sys/fs/cgroup/unified/app.slice/a b.scope")]
        );
        assert_eq!(candidates("0::/\n", hybrid), [PathBuf::from("/sys/fs/cgroup/unified")]);
        // A container that sees a sub-tree mounted at its root, with an escaped space.
        let subtree = "50 40 0:30 /user.slice /mnt/cg\\040x rw - cgroup2 cgroup2 rw\n";
        assert_eq!(candidates("0::/user.slice/u.service\n", subtree), [PathBuf::from("/mnt/cg x/u.service")]);
        assert!(candidates("0::/user.sliced\n", subtree).is_empty(), "a prefix of a name is not a parent");
        assert!(candidates("1:name=systemd:/\n", hybrid).is_empty(), "no cgroup v2 membership");
    }
}
