//! Processes as `/proc` shows them (parent, group, state, start time), and signalling and
//! reaping them by pid.

use std::collections::HashMap;

use rustix::process::{Pid, Signal, WaitOptions};

/// What `/proc/PID/stat` says about a process.
#[derive(Debug, Clone, Copy)]
pub(super) struct Proc {
    pub(super) ppid: i32,
    pub(super) pgrp: i32,
    pub(super) state: u8,
    pub(super) start: u64,
}

fn stat(pid: i32) -> Option<Proc> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn parse_stat(text: &str) -> Option<Proc> {
    // The command name (field 2) is in parentheses and may hold anything: split after it.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Proc {
        state: fields.first()?.bytes().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// A process's start time (clock ticks after boot), which tells a reused pid apart.
pub(in crate::containment) fn start_time(pid: i32) -> Option<u64> {
    stat(pid).map(|p| p.start)
}

pub(super) fn scan() -> HashMap<i32, Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return HashMap::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter_map(|pid| stat(pid).map(|p| (pid, p)))
        .collect()
}

/// Sends `signal`; false when the server may not signal that process.
pub(super) fn kill(pid: i32, signal: Signal) -> bool {
    Pid::from_raw(pid)
        .is_none_or(|pid| rustix::process::kill_process(pid, signal) != Err(rustix::io::Errno::PERM))
}

pub(super) fn reap(pid: i32) {
    if let Some(pid) = Pid::from_raw(pid) {
        let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_hostile_command_names_parse() {
        let line = "42 (a) b ) c) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 50";
        let p = parse_stat(line).expect("parsed");
        assert_eq!((p.state, p.ppid, p.pgrp, p.start), (b'S', 7, 42, 98765));
        assert!(parse_stat("42 (x) S 7").is_none());
    }
}
