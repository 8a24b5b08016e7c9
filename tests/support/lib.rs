//! Helpers shared by the end-to-end tests: the real binaries (built on demand by the same cargo
//! that runs the tests) and a raw-wire driver that checks every stdout line is JSON-RPC.

pub mod bins;
pub mod prometheus;
pub mod registry_packages;
pub mod services;
pub mod snap;
pub mod tree;
pub mod unprivileged;
pub mod wire;

pub use bins::Bin;
pub use tree::Tree;
pub use wire::RawServer;

/// The most memory process `pid` has had resident so far (`VmHWM` in `/proc/PID/status`), in
/// bytes.
pub fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    kib * 1024
}

/// A test whose premise this machine cannot provide (no PID namespaces, no writable cgroup, no
/// `setpriv`) says so and returns early on a developer's machine; under CI (`CI` set, as
/// `.ci/run` does) it fails instead, so a missing component never passes silently there.
#[track_caller]
pub fn skip(reason: &str) {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("this test needs what the machine lacks (CI never skips): {reason}");
    }
    eprintln!("skipped: {reason}");
}

/// Serves `server` over Streamable HTTP on `addr` (`127.0.0.1:0` for a free port) on a
/// current-thread runtime, says `listening on http://ADDR/mcp` on stderr once bound, and serves
/// until killed: the HTTP mode of the test fixtures (`tests/bin/fixture`, `tests/bin/conformance`).
/// `FIXTURE_HEADER_TIMEOUT_MS` and `FIXTURE_BODY_TIMEOUT_MS` set the matching `HttpOptions`
/// fields (the defaults, 10 s and 30 s, make a slow client's test slow).
pub fn serve_http(server: teaagent_core::Server, addr: &str) -> std::process::ExitCode {
    use std::process::ExitCode;
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return ExitCode::FAILURE;
    };
    runtime.block_on(async {
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(listener) => listener,
            Err(e) => {
                eprintln!("cannot listen on {addr}: {e}");
                return ExitCode::FAILURE;
            }
        };
        if let Ok(local) = listener.local_addr() {
            eprintln!("listening on http://{local}/mcp");
        }
        let mut options = teaagent_core::server::http::HttpOptions::default();
        let millis = |name| std::env::var(name).ok()?.parse().ok().map(std::time::Duration::from_millis);
        if let Some(timeout) = millis("FIXTURE_HEADER_TIMEOUT_MS") {
            options.header_timeout = timeout;
        }
        if let Some(timeout) = millis("FIXTURE_BODY_TIMEOUT_MS") {
            options.body_timeout = timeout;
        }
        match server.serve_http(listener, options, tokio_util::sync::CancellationToken::new()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        }
    })
}
