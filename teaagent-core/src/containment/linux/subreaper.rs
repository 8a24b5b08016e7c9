//! The subreaper mechanism: orphans become the server's children, and a scope's processes are
//! recognised by its token, its first process's group and output pipes, and their descent; at
//! the end they are stopped, killed and reaped.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rustix::process::Signal;

use super::GIVE_UP;
use super::procfs::{Proc, kill, reap, scan, start_time};
use crate::containment::TOKEN_VAR;

static SUBREAPER: OnceLock<Result<(), String>> = OnceLock::new();

pub(super) fn enable_subreaper() -> Result<(), String> {
    SUBREAPER
        .get_or_init(|| {
            rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
                .map_err(|e| format!("cannot contain the command (PR_SET_CHILD_SUBREAPER): {e}"))
        })
        .clone()
}

pub(super) fn subreaper_enabled() -> bool {
    SUBREAPER.get().is_some_and(Result::is_ok)
}

fn has_token(pid: i32, entry: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == entry))
}

/// Whether the process holds one of `pipes` (`pipe:[INODE]` in `/proc/PID/fd`).
fn holds_pipe(pid: i32, pipes: &[String]) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    fds.flatten().take(4096).any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|target| pipes.iter().any(|p| target.as_os_str() == p.as_str()))
    })
}

/// Who the call's processes are: its token, its shell (pid and start time), the inodes of
/// its output pipes.
#[derive(Debug, Clone, Copy)]
struct Marks<'a> {
    token: &'a str,
    shell: Option<(i32, u64)>,
    pipes: &'a [u64],
}

/// The call's processes among `procs`: descendants of the server that carry the token, are
/// in the shell's group, are the shell, hold the call's output pipes, or descend from one of
/// those.
fn members(procs: &HashMap<i32, Proc>, me: i32, marks: Marks<'_>) -> Vec<(i32, u64)> {
    let Marks { token, shell, pipes } = marks;
    let entry = format!("{TOKEN_VAR}={token}").into_bytes();
    let pipes: Vec<String> = pipes.iter().map(|ino| format!("pipe:[{ino}]")).collect();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, p) in procs {
        children.entry(p.ppid).or_default().push(pid);
    }
    let mut found = Vec::new();
    let mut stack: Vec<(i32, bool)> =
        children.get(&me).into_iter().flatten().map(|&pid| (pid, false)).collect();
    while let Some((pid, parent_is_member)) = stack.pop() {
        let Some(p) = procs.get(&pid) else { continue };
        let member = parent_is_member
            || shell.is_some_and(|(spid, sstart)| {
                (pid == spid && p.start == sstart) || (p.pgrp == spid && p.start >= sstart)
            })
            || (p.state != b'Z' && (has_token(pid, &entry) || holds_pipe(pid, &pipes)));
        if member {
            found.push((pid, p.start));
        }
        stack.extend(children.get(&pid).into_iter().flatten().map(|&c| (c, member)));
    }
    found
}

/// Stops, kills and reaps every process of the call (the `containment` module docs).
pub(in crate::containment) fn sweep(token: &str, shell: Option<(i32, u64)>, pipes: &[u64]) {
    let marks = Marks { token, shell, pipes };
    let me = std::process::id() as i32;
    let mut known: HashMap<i32, u64> = HashMap::new();
    // Stop them all first: a stopped process cannot fork, so the set closes.
    for _ in 0..64 {
        let procs = scan();
        let mut running = false;
        for (pid, start) in members(&procs, me, marks) {
            known.insert(pid, start);
            if procs.get(&pid).is_some_and(|p| !matches!(p.state, b'T' | b't' | b'Z' | b'X'))
                && kill(pid, Signal::STOP)
            {
                running = true;
            }
        }
        if !running {
            break;
        }
    }
    for (&pid, &start) in &known {
        if start_time(pid) == Some(start) {
            kill(pid, Signal::KILL);
        }
    }
    // Reap those that are (or become, as their parents die) the server's children. The shell
    // is left to the runtime, which waits for it.
    let deadline = Instant::now() + GIVE_UP;
    loop {
        let procs = scan();
        for (pid, start) in members(&procs, me, marks) {
            if known.insert(pid, start).is_none() {
                kill(pid, Signal::KILL);
            }
        }
        let mut pending = false;
        for (&pid, &start) in &known {
            let Some(p) = procs.get(&pid).filter(|p| p.start == start) else { continue };
            if p.state == b'Z' {
                if p.ppid == me {
                    if shell.is_none_or(|(spid, _)| spid != pid) {
                        reap(pid);
                    }
                } else if known.contains_key(&p.ppid) {
                    pending = true;
                }
            } else if kill(pid, Signal::KILL) {
                // Not dead yet; a process the server may not signal (a setuid program) is
                // not waited for: nothing would change.
                pending = true;
            }
        }
        if !pending {
            return;
        }
        if Instant::now() > deadline {
            tracing::warn!(token, "contained processes are still alive after SIGKILL");
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_descendants_are_told_apart_by_call() {
        // The test process is the "server": a child without the token that is neither the
        // shell nor in the shell's group is not the call's; with its pid as the shell, it is.
        let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        let pid = child.id() as i32;
        let me = std::process::id() as i32;
        let start = start_time(pid).expect("start time");
        let procs = scan();
        let other = Marks { token: "nobody", shell: Some((1, 0)), pipes: &[] };
        assert!(!members(&procs, me, other).iter().any(|(p, _)| *p == pid));
        let ours = Marks { token: "nobody", shell: Some((pid, start)), pipes: &[] };
        assert!(members(&procs, me, ours).contains(&(pid, start)));
        let reused = Marks { token: "nobody", shell: Some((pid, start + 1)), pipes: &[] };
        assert!(!members(&procs, me, reused).iter().any(|(p, _)| *p == pid), "a reused pid is not the shell");
        let _ = child.kill();
        let _ = child.wait();
    }
}
