//! A tool that blocks its thread inside an `async fn`, the mistake of issue 11 item 7.

use teaagent_core::tool;

/// Sleep with `std::thread::sleep` inside an async tool (blocks the thread it is polled on).
#[tool(read_only)]
async fn nap(
    /// How long to sleep, in milliseconds.
    ms: u64,
    /// A file to create just before sleeping, so a test knows the call is running.
    started: Option<String>,
) -> String {
    if let Some(path) = started {
        std::fs::write(path, b"started").expect("write the start marker");
    }
    std::thread::sleep(std::time::Duration::from_millis(ms));
    format!("slept {ms} ms")
}
