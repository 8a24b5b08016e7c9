//! The machine's processes as `/proc` shows them, for the tests that check what a call started
//! (still running, or gone): found by a marker unique to the test in their command line; and
//! what a server's threads are waiting in.

/// Live processes whose command line contains `marker` (a zombie has none): each one's pid and
/// command line, its arguments joined by spaces.
pub(crate) fn with_marker(marker: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(marker) {
                found.push((pid, cmdline));
            }
        }
    }
    found
}

/// Waits (at most 20 s, else fails with `stderr()`) until a thread of process `pid` waits in
/// `flock(2)`.
pub(crate) fn wait_until_in_flock(pid: u32, stderr: impl Fn() -> String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !in_flock(pid) {
        assert!(std::time::Instant::now() < deadline, "no thread ever waited in flock:\n{}", stderr());
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

/// Whether a thread of process `pid` is waiting in `flock(2)` (what `/proc` says each thread is in).
fn in_flock(pid: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    const FLOCK: &str = "73";
    #[cfg(target_arch = "aarch64")]
    const FLOCK: &str = "32";
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    threads.flatten().any(|thread| {
        std::fs::read_to_string(thread.path().join("syscall"))
            .is_ok_and(|call| call.split_whitespace().next() == Some(FLOCK))
    })
}
