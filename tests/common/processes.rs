//! The machine's processes as `/proc` shows them, for the tests that check what a call started
//! (still running, or gone): found by a marker unique to the test in their command line; and
//! whether a server waits for a lock another process holds.

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

/// Waits (at most 20 s, else fails with what `stderr()` gives) until the server whose log
/// `stderr()` gives says that it waits for a lock file another process holds
/// (`teaagent_core::home`'s lock files log it once a wait passes 200 ms).
pub(crate) fn wait_until_waiting_for_a_lock(stderr: impl Fn() -> String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let log = stderr();
        if log.contains("locked by another process; waiting") {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "never waited for a lock:\n{log}");
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}
