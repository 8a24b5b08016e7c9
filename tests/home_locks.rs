//! The lock files of `$TEAAGENT_HOME` held by another process, against the real binary: any
//! process of the user can take them, so a server waits for them a bounded time
//! (`TEAAGENT_LOCK_WAIT`, here 1 s), never on the thread that answers, and goes on answering
//! meanwhile.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

/// `teaagent mcp serve --permission-mode allow` on `root`, locks waited for 1 s at most.
fn serve(root: &Path, home: &Path) -> RawServer {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", "allow", "--root"]).arg(root);
    cmd.env("TEAAGENT_HOME", home).env("TEAAGENT_LOCK_WAIT", "1s");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    server
}

fn call(server: &mut RawServer, id: u64, tool: &str, arguments: Value) {
    server.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}}));
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
