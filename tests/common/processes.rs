//! The machine's processes as `/proc` shows them, for the tests that check what a call started
//! (still running, or gone): found by a marker unique to the test in their command line.

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
