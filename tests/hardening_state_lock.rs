//! Hardening, the workspace lock, against the real binary (the set-up:
//! `common/state_setup.rs`):
//!
//! - zombie and forged lock records do not pin a workspace (item 4);
//! - one writer per workspace directory, however it is named (item 14).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use teaagent_tests::{Bin, RawServer, Tree};

use crate::common::state_setup;
use state_setup::{HUNG, new_home, serve, write_call};

// ---------------------------------------------------------------------------------------------
// Item 4: zombie and forged lock records.

fn proc_stat(pid: u32) -> (char, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let rest: Vec<&str> = stat[stat.rfind(')').expect(")") + 1..].split_whitespace().collect();
    (rest[0].chars().next().expect("state"), rest[19].parse().expect("start"))
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").expect("boot id").trim().to_owned()
}

/// A registry holding one record for `root`, in the format the servers write.
fn plant_record(home: &Path, root: &Path, pid: u32, start: Option<u64>, boot: Option<&str>) {
    let meta = std::fs::metadata(root).expect("root");
    let record = json!({
        "workspace_path": root,
        "owner_pid": pid,
        "acquired_at": "2026-01-01T00:00:00Z",
        "owner_start": start,
        "boot_id": boot,
        "root_dev": meta.dev(),
        "root_ino": meta.ino(),
    });
    let body = serde_json::to_string_pretty(&json!({"version": 1, "locks": [record]})).expect("json");
    std::fs::write(home.join("workspace_registry.json"), body).expect("registry");
}

fn assert_writes(root: &Path, home: &Path, what: &str) {
    let mut server = serve(root, home, &["--permission-mode", "danger-full-access"]);
    let written = write_call(&mut server, "note.txt");
    assert_eq!(written["result"]["isError"], false, "{what}: {written}; stderr: {}", server.stderr());
    server.finish();
    std::fs::remove_file(root.join("note.txt")).expect("written");
}

#[test]
fn a_zombie_owner_does_not_pin_the_lock() {
    let tree = Tree::new();
    let home = new_home();
    let root = tree.root();
    let mut child = Command::new("true").spawn().expect("spawn");
    let pid = child.id();
    // Not reaped: once it exits it stays a zombie until `wait`.
    let deadline = Instant::now() + HUNG;
    while proc_stat(pid).0 != 'Z' {
        assert!(Instant::now() < deadline, "the child never became a zombie");
        std::thread::sleep(Duration::from_millis(5));
    }
    let start = proc_stat(pid).1;
    plant_record(home.path(), &root, pid, Some(start), Some(&boot_id()));
    assert_writes(&root, home.path(), "zombie");
    child.wait().expect("reap");
}

#[test]
fn forged_records_do_not_pin_the_lock() {
    let tree = Tree::new();
    let root = tree.root();
    let me = std::process::id();
    let (_, my_start) = proc_stat(me);
    let (_, init_start) = proc_stat(1);
    let boot = boot_id();
    let cases: Vec<(&str, u32, Option<u64>, Option<&str>)> = vec![
        ("pid 1, no start time, no boot id", 1, None, None),
        ("pid 1, no start time", 1, None, Some(&boot)),
        ("pid 1, wrong start time", 1, Some(init_start + 12345), Some(&boot)),
        ("pid 1, wrong boot id", 1, Some(init_start), Some("00000000-0000-0000-0000-000000000000")),
        ("pid 1, no boot id", 1, Some(init_start), None),
        ("a live process, wrong start time", me, Some(my_start + 1), Some(&boot)),
        ("a live process, no start time", me, None, Some(&boot)),
    ];
    for (what, pid, start, boot) in cases {
        let home = new_home();
        plant_record(home.path(), &root, pid, start, boot);
        assert_writes(&root, home.path(), what);
    }
}

// ---------------------------------------------------------------------------------------------
// Item 14: one writer per workspace directory, whatever its name.

#[test]
fn a_renamed_root_is_still_locked() {
    let tree = Tree::new();
    let home = new_home();
    let mut first = serve(&tree.root(), home.path(), &["--permission-mode", "danger-full-access"]);
    std::fs::rename(tree.root(), tree.path("ws2")).expect("mv ws ws2");
    let mut second = serve(&tree.path("ws2"), home.path(), &["--permission-mode", "danger-full-access"]);
    let refused = write_call(&mut second, "b.txt");
    assert_eq!(refused["error"]["code"], -32003, "{refused}");
    assert_eq!(refused["error"]["data"]["ownerPid"], first.pid());
    assert!(!tree.path("ws2/b.txt").exists());
    // The owner still writes (the directory it opened at start).
    assert_eq!(write_call(&mut first, "a.txt")["result"]["isError"], false);
    assert!(tree.path("ws2/a.txt").exists());
    first.finish();
    // Once the owner is gone, the renamed root is free.
    assert_eq!(write_call(&mut second, "b.txt")["result"]["isError"], false);
    second.finish();
}

#[test]
fn a_root_spelled_through_a_link_is_the_same_workspace() {
    let tree = Tree::new();
    let home = new_home();
    tree.symlink("alias", tree.root());
    tree.symlink("alias-dir", tree.base());
    let first = serve(&tree.root(), home.path(), &["--permission-mode", "danger-full-access"]);
    for spelled in [tree.path("alias"), tree.path("alias-dir/ws"), tree.path("ws/src/..")] {
        let mut second = serve(&spelled, home.path(), &["--permission-mode", "danger-full-access"]);
        let refused = write_call(&mut second, "b.txt");
        assert_eq!(refused["error"]["code"], -32003, "{spelled:?}: {refused}");
        second.finish();
    }
    assert!(!tree.root().join("b.txt").exists());
    first.finish();
}

#[test]
fn a_root_reached_through_a_bind_mount_is_the_same_workspace() {
    // A bind mount gives the same directory a second canonical path. It is made in a private
    // mount namespace (`unshare -Urm`), so the host's mounts are never touched.
    let probe = Command::new("unshare").args(["-Urm", "true"]).stderr(Stdio::null()).status();
    if !probe.is_ok_and(|s| s.success()) {
        teaagent_tests::skip("this system cannot make a private mount namespace (unshare -Urm)");
        return;
    }
    let tree = Tree::new();
    let home = new_home();
    std::fs::create_dir(tree.path("bound")).expect("mount point");
    let first = serve(&tree.root(), home.path(), &["--permission-mode", "danger-full-access"]);
    let mut cmd = Command::new("unshare");
    cmd.args([
        "-Urm",
        "sh",
        "-c",
        r#"mount --bind "$1" "$2" && exec "$3" mcp serve --root "$2" --permission-mode danger-full-access"#,
        "sh",
    ])
    .arg(tree.root())
    .arg(tree.path("bound"))
    .arg(Bin::Teaagent.path())
    .env("TEAAGENT_HOME", home.path())
    .env_remove("RUST_LOG");
    let mut second = RawServer::start(cmd);
    second.initialize("2025-06-18");
    let refused = write_call(&mut second, "b.txt");
    assert_eq!(refused["error"]["code"], -32003, "{refused}; stderr: {}", second.stderr());
    assert!(!tree.root().join("b.txt").exists());
    second.finish();
    first.finish();
}
