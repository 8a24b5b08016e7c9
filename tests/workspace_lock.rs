//! The global workspace lock, with real server processes sharing one `$TEAAGENT_HOME`: one
//! writer per workspace, readers always served, dead owners pruned, clean shutdowns releasing,
//! concurrent starts never losing a record, a corrupt registry rebuilt.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

use crate::common::processes;

fn server(root: &Path, home: &Path) -> RawServer {
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_ROOT", root).env("TEAAGENT_HOME", home).env("FIXTURE_MODE", "danger-full-access");
    let mut server = RawServer::start(cmd);
    // The lock is settled before the server answers anything.
    server.initialize("2025-06-18");
    server
}

fn records(home: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(home.join("workspace_registry.json")) else { return Vec::new() };
    let file: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("registry is not JSON ({e}): {text}"));
    file["locks"].as_array().cloned().unwrap_or_default()
}

fn owners(home: &Path) -> Vec<u64> {
    records(home).iter().filter_map(|r| r["owner_pid"].as_u64()).collect()
}

fn poke(server: &mut RawServer) -> Value {
    server.request("tools/call", json!({"name": "poke", "arguments": {"path": "note.txt", "content": "x"}}))
}

fn peek(server: &mut RawServer) -> Value {
    server.request("tools/call", json!({"name": "peek", "arguments": {"path": "src/a.txt"}}))
}

#[test]
fn a_second_server_serves_reads_and_refuses_writes() {
    let tree = Tree::new();
    let home = tempfile::tempdir().expect("home");
    let mut first = server(&tree.root(), home.path());
    let mut second = server(&tree.root(), home.path());
    assert_eq!(owners(home.path()), vec![u64::from(first.pid())]);
    let refused = poke(&mut second);
    assert_eq!(refused["error"]["code"], -32003, "{refused}");
    let data = &refused["error"]["data"];
    assert_eq!((data["tool"].clone(), data["reason"].clone()), (json!("poke"), json!("workspace_locked")));
    assert_eq!(data["ownerPid"], first.pid());
    assert_eq!(data["acquiredAt"], records(home.path())[0]["acquired_at"]);
    assert_eq!(peek(&mut second)["result"]["content"][0]["text"], "hello\n", "reads are served");
    assert_eq!(poke(&mut first)["result"]["isError"], false, "the owner writes");
    second.finish();
    first.finish();
}

#[test]
fn a_killed_owner_frees_the_lock_for_the_next_write() {
    let tree = Tree::new();
    let home = tempfile::tempdir().expect("home");
    let mut first = server(&tree.root(), home.path());
    let mut second = server(&tree.root(), home.path());
    assert_eq!(poke(&mut second)["error"]["code"], -32003);
    first.signal("KILL");
    first.wait(Duration::from_secs(10));
    // The record is still there (nobody cleaned up), but its owner is dead.
    assert_eq!(owners(home.path()), vec![u64::from(first.pid())]);
    assert_eq!(poke(&mut second)["result"]["isError"], false, "the second server takes the lock over");
    assert_eq!(owners(home.path()), vec![u64::from(second.pid())]);
    second.finish();
    assert!(owners(home.path()).is_empty());
}

#[test]
fn sigterm_and_eof_release_the_lock() {
    let tree = Tree::new();
    let home = tempfile::tempdir().expect("home");
    let mut server_a = server(&tree.root(), home.path());
    assert_eq!(owners(home.path()), vec![u64::from(server_a.pid())]);
    server_a.signal("TERM");
    assert!(server_a.wait(Duration::from_secs(10)).success());
    assert!(owners(home.path()).is_empty(), "SIGTERM released the lock");

    let server_b = server(&tree.root(), home.path());
    assert_eq!(owners(home.path()), vec![u64::from(server_b.pid())]);
    server_b.finish(); // stdin EOF
    assert!(owners(home.path()).is_empty(), "EOF released the lock");
}

#[test]
fn twenty_servers_on_twenty_roots_are_all_recorded() {
    let home = tempfile::tempdir().expect("home");
    let trees: Vec<Tree> = (0..20).map(|_| Tree::new()).collect();
    // Watch the file while the servers start: it must parse every single time.
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (stop, path) = (Arc::clone(&stop), home.path().to_path_buf());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(Ordering::Relaxed) {
                let _ = records(&path);
                reads += 1;
            }
            reads
        })
    };
    let mut commands: Vec<Command> = trees
        .iter()
        .map(|t| {
            let mut cmd = Command::new(Bin::Fixture.path());
            cmd.env("FIXTURE_ROOT", t.root())
                .env("TEAAGENT_HOME", home.path())
                .env("FIXTURE_MODE", "danger-full-access");
            cmd
        })
        .collect();
    let mut servers: Vec<RawServer> = commands.drain(..).map(RawServer::start).collect();
    for s in &mut servers {
        s.initialize("2025-06-18");
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while records(home.path()).len() < 20 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let recorded = records(home.path());
    let mut roots: Vec<&str> = recorded.iter().filter_map(|r| r["workspace_path"].as_str()).collect();
    roots.sort_unstable();
    roots.dedup();
    assert_eq!(roots.len(), 20, "{recorded:?}");
    for s in servers {
        s.finish();
    }
    stop.store(true, Ordering::Relaxed);
    assert!(watcher.join().expect("watcher") > 0);
    assert!(records(home.path()).is_empty());
}

#[test]
fn a_garbage_registry_is_reported_and_rebuilt() {
    let tree = Tree::new();
    let home = tempfile::tempdir().expect("home");
    std::fs::write(home.path().join("workspace_registry.json"), "\u{0}garbage{[").expect("write garbage");
    let mut server = server(&tree.root(), home.path());
    assert_eq!(poke(&mut server)["result"]["isError"], false);
    assert_eq!(owners(home.path()), vec![u64::from(server.pid())]);
    assert!(home.path().join("workspace_registry.json.corrupt").exists(), "the corrupt file is kept aside");
    let stderr = server.stderr_once(|e| e.contains("corrupt"));
    assert!(stderr.contains("corrupt"), "{stderr}");
    server.finish();
}

/// The lock is settled before anything is answered: here the registry's file lock is held by
/// this test, so the server cannot take the workspace lock, nor answer `initialize`, until the
/// test lets go.
#[test]
fn nothing_is_answered_while_the_lock_is_pending() {
    let tree = Tree::new();
    let home = tempfile::tempdir().expect("home");
    let guard = std::fs::File::create(home.path().join("workspace_registry.lock")).expect("lock file");
    rustix::fs::flock(&guard, rustix::fs::FlockOperation::LockExclusive).expect("flock");

    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root"]).arg(tree.root()).env("TEAAGENT_HOME", home.path());
    let mut server = RawServer::start(cmd);
    server.send_json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}));
    assert!(
        server.try_recv(Duration::from_millis(500)).is_none(),
        "initialize was answered before the lock was settled"
    );
    assert!(owners(home.path()).is_empty());

    drop(guard); // closing the file releases the flock
    let answer = server.response(&json!(1));
    assert_eq!(owners(home.path()), vec![u64::from(server.pid())], "the lock was taken first: {answer}");
    server.finish();
    assert!(owners(home.path()).is_empty());
}

/// A server told to stop (stdin closed) while a write waits for the lock registry (its file lock
/// held here, by this test, and waited for up to a minute; the workspace lock another server's)
/// stops after the grace period: it waits neither for that call nor to give back a lock it never
/// got.
#[test]
fn a_stop_does_not_wait_for_a_call_still_asking_for_the_lock() {
    let tree = Tree::new();
    let home = tempfile::tempdir().expect("home");
    let holder = teaagent(&tree.root(), home.path());
    let mut asking = teaagent_with(&tree.root(), home.path(), &[("TEAAGENT_LOCK_WAIT", "60s")]);
    let guard = std::fs::File::create(home.path().join("workspace_registry.lock")).expect("lock file");
    rustix::fs::flock(&guard, rustix::fs::FlockOperation::LockExclusive).expect("flock");
    asking.send_json(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "write_file", "arguments": {"path": "shared.txt", "content": "x"}}}));
    processes::wait_until_waiting_for_a_lock(|| asking.stderr());
    let asked = Instant::now();
    asking.close_stdin();
    let status = asking.wait(Duration::from_secs(15));
    assert!(status.success(), "{status}\n{}", asking.stderr());
    assert!(
        asked.elapsed() >= Duration::from_secs(2),
        "the call had its grace period: {:?}",
        asked.elapsed()
    );
    assert!(!tree.path("ws/shared.txt").exists(), "the write never ran");
    drop(guard);
    assert_eq!(owners(home.path()), vec![u64::from(holder.pid())], "the holder's record is untouched");
    holder.finish();
}

/// `teaagent mcp serve` on `root` in `allow` mode, the handshake made and the lock settled.
fn teaagent(root: &Path, home: &Path) -> RawServer {
    teaagent_with(root, home, &[])
}

/// [`teaagent`] with these environment variables set.
fn teaagent_with(root: &Path, home: &Path, env: &[(&str, &str)]) -> RawServer {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", "allow", "--root"]).arg(root).env("TEAAGENT_HOME", home);
    cmd.envs(env.iter().copied());
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    assert!(server.request("tools/list", json!({}))["result"].is_object());
    server
}

fn write(server: &mut RawServer) -> Value {
    server.request(
        "tools/call",
        json!({"name": "write_file", "arguments": {"path": "shared.txt", "content": "x"}}),
    )
}

#[test]
fn a_lock_conflicts_with_locks_above_and_below_it() {
    for (first, second) in [("ws", "ws/src"), ("ws/src", "ws")] {
        let tree = Tree::new();
        let home = tempfile::tempdir().expect("home");
        let mut owner = teaagent(&tree.path(first), home.path());
        let mut other = teaagent(&tree.path(second), home.path());
        let refused = write(&mut other);
        assert_eq!(refused["error"]["code"], -32003, "{second} inside or around {first}: {refused}");
        assert_eq!(refused["error"]["data"]["ownerPid"], owner.pid());
        assert_eq!(write(&mut owner)["result"]["isError"], false);
        other.finish();
        owner.finish();
    }
}

#[test]
fn a_malformed_record_is_dropped_alone_and_the_live_ones_still_hold() {
    let tree = Tree::new();
    let home = tempfile::tempdir().expect("home");
    let owner = teaagent(&tree.root(), home.path());
    let registry = home.path().join("workspace_registry.json");
    let mut file: Value =
        serde_json::from_str(&std::fs::read_to_string(&registry).expect("registry")).expect("json");
    for bad in [
        json!({"workspace_path": "/elsewhere", "owner_pid": -1, "acquired_at": "now"}),
        json!({"workspace_path": 7}),
        json!("not a record"),
    ] {
        file["locks"].as_array_mut().expect("locks").push(bad);
    }
    std::fs::write(&registry, file.to_string()).expect("write the registry");
    // A third server on the same root: the live owner's record still pins it.
    let mut third = teaagent(&tree.root(), home.path());
    let refused = write(&mut third);
    assert_eq!(refused["error"]["code"], -32003, "two writers: {refused}");
    assert_eq!(owners(home.path()), vec![u64::from(owner.pid())], "only the bad records went");
    assert!(!home.path().join("workspace_registry.json.corrupt").exists(), "the file was not set aside");
    third.finish();
    owner.finish();
}
