//! The lock files of `$TEAAGENT_HOME` held by another process, against the real binary: any
//! process of the user can take them (a command a tool runs, with a file opened for reading), so
//! a server waits for them a bounded time (`TEAAGENT_LOCK_WAIT`, here 1 s), never on the thread
//! that answers, and goes on answering meanwhile.

use std::os::fd::AsFd;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

/// `teaagent mcp serve --permission-mode allow` on `root`, locks waited for 1 s at most.
fn serve(root: &Path, home: &Path) -> RawServer {
    serve_waiting(root, home, "1s")
}

/// [`serve`], locks waited for `wait` at most.
fn serve_waiting(root: &Path, home: &Path, wait: &str) -> RawServer {
    serve_in("allow", root, home, wait)
}

/// [`serve_waiting`] in `mode`.
fn serve_in(mode: &str, root: &Path, home: &Path, wait: &str) -> RawServer {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", mode, "--root"]).arg(root);
    cmd.env("TEAAGENT_HOME", home).env("TEAAGENT_LOCK_WAIT", wait);
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    server
}

/// Whether another process holds `path` (an `flock` of its own, here asked for without waiting).
fn held_elsewhere(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else { return false };
    match rustix::fs::flock(file.as_fd(), rustix::fs::FlockOperation::NonBlockingLockShared) {
        Ok(()) => false,
        Err(e) => e == rustix::io::Errno::WOULDBLOCK,
    }
}

fn call(server: &mut RawServer, id: u64, tool: &str, arguments: Value) {
    server.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}}));
}

/// `TEAAGENT_LOCK_WAIT` past its limit (a deadline that far overflowed the clock, and the server
/// died at its start), not a duration, or carrying control characters: the server starts, serves
/// a write (the locks it takes waited for the default), and says on stderr which value it did not
/// take, its control characters escaped.
#[test]
fn a_lock_wait_that_is_no_wait_is_refused_and_the_default_used() {
    for value in ["18446744073709551615s", "2h", "soon\u{1b}[2J\r\u{7}"] {
        let (tree, home) = (Tree::new(), tempfile::tempdir().expect("home"));
        let mut server = serve_waiting(&tree.root(), home.path(), value);
        let written = server.request(
            "tools/call",
            json!({"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}),
        );
        assert_eq!(written["result"]["isError"], false, "{value:?}: {written}");
        let stderr = server.stderr_once(|log| log.contains("TEAAGENT_LOCK_WAIT"));
        assert!(stderr.contains("waiting 5s for locks"), "{value:?}: {stderr}");
        assert!(!stderr.chars().any(|c| c.is_control() && c != '\n'), "{value:?}: {stderr:?}");
        server.finish();
    }
}

/// A command a call runs takes `audit.lock` and keeps it (a hostile command, or one stuck). In
/// `danger-full-access`, as here, commands run unsandboxed, as any other process of the user
/// does; a sandboxed one cannot see the home at all (`off_limits.rs`). The server goes on answering (`ping` at once), writes its records when it can, refuses what
/// it may not run unrecorded (a write: the audit log cannot be written, naming the lock), runs
/// what it may (a read), still ends the command at its timeout, and records again once the
/// command is gone.
#[test]
fn a_command_holding_the_audit_lock_cannot_freeze_the_server() {
    let (tree, home) = (Tree::new(), tempfile::tempdir().expect("home"));
    tree.write("ws/a.txt", "hi\n");
    let lock = home.path().join("audit.lock");
    let mut server = serve_in("danger-full-access", &tree.root(), home.path(), "1s");
    let command = format!("exec 9< '{}' && flock -x 9 && sleep 120", lock.display());
    call(&mut server, 2, "shell_exec", json!({"command": command, "timeout_secs": 4}));
    let started = Instant::now();
    while !held_elsewhere(&lock) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the command never took the lock:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // The write's record waits (1 s at most), but not on the thread that answers `ping`.
    call(&mut server, 3, "write_file", json!({"path": "b.txt", "content": "x"}));
    let asked = Instant::now();
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    assert!(
        asked.elapsed() < Duration::from_millis(900),
        "ping waited for the record: {:?}",
        asked.elapsed()
    );
    let refused = server.response(&json!(3));
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("audit log cannot be written"), "{refused}");
    assert!(message.contains("audit.lock") && message.contains("locked by another process"), "{refused}");
    assert!(!tree.path("ws/b.txt").exists(), "no write ran unrecorded");

    call(&mut server, 4, "read_file", json!({"path": "a.txt"}));
    let read = server.response(&json!(4));
    assert_eq!(read["result"]["content"][0]["text"], "hi\n", "{read}");

    let ended = server.response(&json!(2));
    assert_eq!(ended["result"]["isError"], true, "{ended}");
    let text = ended["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("timed out after 4s"), "{ended}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the command's timeout held: {:?}",
        started.elapsed()
    );
    let free = Instant::now() + Duration::from_secs(20);
    while held_elsewhere(&lock) {
        assert!(Instant::now() < free, "the command kept the lock after its end");
        std::thread::sleep(Duration::from_millis(20));
    }

    call(&mut server, 5, "write_file", json!({"path": "b.txt", "content": "x"}));
    let written = server.response(&json!(5));
    assert_eq!(written["result"]["isError"], false, "{written}");
    let log = std::fs::read_to_string(home.path().join("audit.jsonl")).expect("audit log");
    let writes: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["tool"] == "write_file")
        .map(|r| r["outcome"].clone())
        .collect();
    assert_eq!(writes, ["allowed", "completed"], "only the write that ran is recorded:\n{log}");
    let stderr = server.stderr_once(|e| e.contains("the audit log cannot be written"));
    assert!(stderr.contains("the audit log cannot be written"), "{stderr}");
    server.finish();
}

/// Told to stop (SIGTERM) while a call's record waits for `audit.lock` (held by this test, and
/// waited for up to a minute), the server stops after its grace period: the call is cut off,
/// never run, and nothing waits for the record.
#[test]
fn a_record_waiting_for_the_audit_lock_does_not_hold_a_stopping_server() {
    let (tree, home) = (Tree::new(), tempfile::tempdir().expect("home"));
    let mut server = serve_waiting(&tree.root(), home.path(), "60s");
    // A first record makes the log and its lock file.
    assert_eq!(
        server.request("tools/call", json!({"name": "list_directory", "arguments": {}}))["result"]["isError"],
        false
    );
    let held = std::fs::File::open(home.path().join("audit.lock")).expect("lock file");
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).expect("flock");
    call(&mut server, 2, "write_file", json!({"path": "b.txt", "content": "x"}));
    crate::common::processes::wait_until_waiting_for_a_lock(|| server.stderr());
    let asked = Instant::now();
    server.signal("TERM");
    let status = server.wait(Duration::from_secs(15));
    assert!(status.success(), "{status}\n{}", server.stderr());
    assert!(
        asked.elapsed() >= Duration::from_secs(2),
        "the call had its grace period: {:?}",
        asked.elapsed()
    );
    assert!(!tree.path("ws/b.txt").exists(), "the write never ran");
    drop(held);
}

/// Writes ask the lock registry for the workspace lock (another server holds it); the registry's
/// file lock, held here, is waited for 1 s from each write's asking, then the write is refused
/// with an error that names it: four writes at once are all refused after about a second (not
/// one after another, a second each). Meanwhile the server answers.
#[test]
fn writes_wait_for_the_lock_registry_a_bounded_time() {
    let tree = Tree::new();
    let home = tempfile::tempdir().expect("home");
    let holder = serve(&tree.root(), home.path());
    let mut asking = serve(&tree.root(), home.path());
    let registry = std::fs::File::create(home.path().join("workspace_registry.lock")).expect("lock file");
    rustix::fs::flock(&registry, rustix::fs::FlockOperation::LockExclusive).expect("flock");

    let asked = Instant::now();
    for id in 10..14 {
        call(&mut asking, id, "write_file", json!({"path": "shared.txt", "content": "x"}));
    }
    let pinged = Instant::now();
    assert_eq!(asking.request("ping", json!({}))["result"], json!({}));
    assert!(
        pinged.elapsed() < Duration::from_millis(900),
        "ping waited for the writes: {:?}",
        pinged.elapsed()
    );
    for id in 10..14 {
        let refused = asking.response(&json!(id));
        let said = refused.to_string();
        assert!(
            said.contains("workspace_registry.lock") && said.contains("locked by another process"),
            "{said}"
        );
    }
    let took = asked.elapsed();
    assert!(took >= Duration::from_secs(1), "waited for the lock: {took:?}");
    assert!(took < Duration::from_secs(3), "the writes waited one after another: {took:?}");
    assert!(!tree.path("ws/shared.txt").exists(), "no write ran");

    // Let go: the registry says who holds the workspace (-32003, the holder).
    drop(registry);
    call(&mut asking, 3, "write_file", json!({"path": "shared.txt", "content": "x"}));
    let locked = asking.response(&json!(3));
    assert_eq!(locked["error"]["code"], -32003, "{locked}");
    assert_eq!(locked["error"]["data"]["ownerPid"], holder.pid(), "{locked}");
    asking.finish();
    holder.finish();
}
