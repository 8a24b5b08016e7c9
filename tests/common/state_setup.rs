//! The set-up of the state hardening tests (`hardening_state_*.rs`): `teaagent` run
//! with a home of its own under a watchdog, servers on a workspace, and the special files the
//! attacks put where teaagent reads its own.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer};

/// Longest a command may take before the test calls it hung (a watchdog, not a timing check).
pub(crate) const HUNG: Duration = Duration::from_secs(30);

/// Runs `teaagent ARGS` with `TEAAGENT_HOME=home` in `cwd`; kills it and fails if it hangs.
pub(crate) fn teaagent_in(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(Bin::Teaagent.path())
        .args(args)
        .current_dir(cwd)
        .env("TEAAGENT_HOME", home)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run teaagent");
    let deadline = Instant::now() + HUNG;
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!("teaagent {args:?} hung; stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("output")
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty home directory (user-only permissions).
pub(crate) fn new_home() -> tempfile::TempDir {
    let home = tempfile::Builder::new().prefix("teaagent-home-").tempdir().expect("home");
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    home
}

pub(crate) fn read_a(home: &Path, root: &Path) -> Output {
    teaagent_in(home, root, &["run", "read_file", "--args", r#"{"path": "src/a.txt"}"#])
}

pub(crate) fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

pub(crate) fn write_big(path: &Path, bytes: usize) {
    std::fs::write(path, "#".repeat(bytes)).expect("big file");
}

/// `teaagent mcp serve` on `root` (spelled as given), initialised.
pub(crate) fn serve(root: &Path, home: &Path, extra: &[&str]) -> RawServer {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root"])
        .arg(root)
        .args(extra)
        .env("TEAAGENT_HOME", home)
        .env_remove("RUST_LOG");
    let mut server = RawServer::start(cmd);
    // The lock is settled before the server answers anything.
    server.initialize("2025-06-18");
    server
}

pub(crate) fn write_call(server: &mut RawServer, name: &str) -> Value {
    server.request("tools/call", json!({"name": "write_file", "arguments": {"path": name, "content": "x"}}))
}
