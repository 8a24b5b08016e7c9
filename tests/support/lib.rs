//! Helpers shared by the end-to-end tests: the real binaries (built on demand by the same cargo
//! that runs the tests) and a raw-wire driver that checks every stdout line is JSON-RPC.

pub mod bins;
pub mod services;
pub mod snap;
pub mod tree;
pub mod unprivileged;
pub mod wire;

pub use bins::Bin;
pub use tree::Tree;
pub use wire::RawServer;

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
