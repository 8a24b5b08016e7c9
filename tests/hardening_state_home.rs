//! Hardening, against the real binary (the set-up: `common/state_setup.rs`):
//! links in or as `$TEAAGENT_HOME` are never written through; a trust store others may write is
//! not trusted.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use teaagent_tests::{Bin, Tree};

use crate::common::state_setup;
use state_setup::{new_home, read_a, serve, stderr, stdout, teaagent_in, write_call};

/// Every file (with contents) under `dir`.
fn contents(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        out.push((path.clone(), std::fs::read_to_string(&path).unwrap_or_default()));
    }
    out.sort();
    out
}

#[test]
fn a_home_that_is_a_link_is_refused_and_nothing_is_written_through_it() {
    let tree = Tree::new();
    let real = new_home();
    let link = tree.path("home-link");
    std::os::unix::fs::symlink(real.path(), &link).expect("link");
    let out = teaagent_in(
        &link,
        &tree.root(),
        &["run", "write_file", "--args", r#"{"path": "w.md", "content": "x"}"#, "--grant", "write_file"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("symbolic link") && stderr(&out).contains("TEAAGENT_HOME"),
        "{}",
        stderr(&out)
    );
    assert!(contents(real.path()).is_empty(), "nothing written through the link");
    assert!(!tree.root().join("w.md").exists());
    let served = teaagent_in(&link, &tree.root(), &["mcp", "serve"]);
    assert_eq!(served.status.code(), Some(1), "{}", stderr(&served));
    let trust = teaagent_in(&link, &tree.root(), &["mcp", "trust", "list"]);
    assert_eq!(trust.status.code(), Some(1), "{}", stderr(&trust));
    assert!(contents(real.path()).is_empty());
}

#[test]
fn links_inside_the_home_are_never_written_through() {
    let tree = Tree::new();
    let root = tree.root();
    let outside = tempfile::tempdir().expect("outside");
    for name in ["audit.jsonl", "workspace_registry.json", "workspace_registry.lock"] {
        let home = new_home();
        let target = outside.path().join(format!("{name}.target"));
        std::fs::write(&target, "").expect("target");
        std::os::unix::fs::symlink(&target, home.path().join(name)).expect("link");
        let mut server = serve(&root, home.path(), &["--permission-mode", "danger-full-access"]);
        let answer = write_call(&mut server, "n.txt");
        server.finish();
        assert_eq!(
            std::fs::read_to_string(&target).expect("target"),
            "",
            "{name}: written through: {answer}"
        );
        let _ = std::fs::remove_file(root.join("n.txt"));
        if name == "workspace_registry.json" {
            assert_eq!(answer["result"]["isError"], false, "the link is set aside: {answer}");
            assert!(!home.path().join(name).is_symlink(), "rebuilt as a file");
        }
    }
    // A hard link is not appended through either.
    let home = new_home();
    let target = outside.path().join("hard-linked");
    std::fs::write(&target, "").expect("target");
    std::fs::hard_link(&target, home.path().join("audit.jsonl")).expect("hard link");
    let mut server = serve(&root, home.path(), &["--permission-mode", "danger-full-access"]);
    let answer = write_call(&mut server, "n.txt");
    server.finish();
    assert_eq!(std::fs::read_to_string(&target).expect("target"), "", "{answer}");
    assert!(!root.join("n.txt").exists(), "no unaudited write: {answer}");
    // Nor is the lock registry rewritten through one, though a registry that fits in its page is
    // rewritten in place.
    let home = new_home();
    let target = outside.path().join("registry-hard-linked");
    let registry = format!("{{\"version\": 1, \"locks\": []}}{}\n", " ".repeat(3000));
    std::fs::write(&target, &registry).expect("target");
    std::fs::hard_link(&target, home.path().join("workspace_registry.json")).expect("hard link");
    let mut server = serve(&root, home.path(), &["--permission-mode", "danger-full-access"]);
    let answer = write_call(&mut server, "n.txt");
    server.finish();
    assert_eq!(std::fs::read_to_string(&target).expect("target"), registry, "written through: {answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let own = std::fs::metadata(home.path().join("workspace_registry.json")).expect("registry");
    assert_eq!(std::os::unix::fs::MetadataExt::nlink(&own), 1, "replaced by a file of its own");
    std::fs::remove_file(root.join("n.txt")).expect("written");
    // The user's configuration: refused at start, unread.
    let home = new_home();
    let target = outside.path().join("config.toml");
    std::fs::write(&target, "SECRET = 1\n").expect("target");
    std::os::unix::fs::symlink(&target, home.path().join("config.toml")).expect("link");
    let out = read_a(home.path(), &root);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link") && !stderr(&out).contains("SECRET"), "{}", stderr(&out));
    // A dangling link is not created through either.
    let home = new_home();
    let target = outside.path().join("created-by-link");
    std::os::unix::fs::symlink(&target, home.path().join("audit.jsonl")).expect("link");
    let mut server = serve(&root, home.path(), &["--permission-mode", "danger-full-access"]);
    let answer = write_call(&mut server, "n.txt");
    server.finish();
    assert!(!target.exists(), "{answer}");
    // The trust store and its lock.
    for name in ["trust.json", "trust.lock"] {
        let home = new_home();
        let target = outside.path().join(format!("{name}.target"));
        std::fs::write(&target, "").expect("target");
        std::os::unix::fs::symlink(&target, home.path().join(name)).expect("link");
        std::fs::write(home.path().join("config.toml"), rogue_config("s")).expect("config");
        let out = teaagent_in(home.path(), &root, &["mcp", "trust", "allow", "s"]);
        assert_eq!(std::fs::read_to_string(&target).expect("target"), "", "{name}: {}", stderr(&out));
    }
}

/// The audit log's two files swapped for links while a server runs (after its first records):
/// nothing is written through either, and a write that cannot be audited is refused. The log is
/// looked at before every record; the lock file when the log has moved, and there the link is
/// refused as at a first open.
#[test]
fn audit_files_swapped_for_links_while_serving_are_never_written_through() {
    let tree = Tree::new();
    let root = tree.root();
    let outside = tempfile::tempdir().expect("outside");
    for swapped in [&["audit.jsonl"][..], &["audit.lock", "audit.jsonl"]] {
        let home = new_home();
        let mut server = serve(&root, home.path(), &["--permission-mode", "danger-full-access"]);
        let first = write_call(&mut server, "first.txt");
        assert_eq!(first["result"]["isError"], false, "{first}");
        let mut targets = Vec::new();
        for name in swapped {
            let target = outside.path().join(format!("{}-{name}", swapped.len()));
            std::fs::write(&target, "").expect("target");
            let file = home.path().join(name);
            std::fs::remove_file(&file).expect("the server made it");
            std::os::unix::fs::symlink(&target, &file).expect("link");
            targets.push(target);
        }
        let answer = write_call(&mut server, "second.txt");
        server.finish();
        for target in &targets {
            assert_eq!(std::fs::read_to_string(target).expect("target"), "", "{swapped:?}: {answer}");
        }
        assert!(!root.join("second.txt").exists(), "{swapped:?}: no unaudited write: {answer}");
        let _ = std::fs::remove_file(root.join("first.txt"));
    }
}

/// A configuration that declares `name` as the tests' MCP server (`allow` starts it once).
fn rogue_config(name: &str) -> String {
    format!("[mcp_servers.{name}]\ncommand = {:?}\n", Bin::Rogue.path().display().to_string())
}

#[test]
fn a_trust_store_others_may_write_is_not_trusted() {
    let tree = Tree::new();
    let home = new_home();
    std::fs::write(home.path().join("config.toml"), rogue_config("s")).expect("config");
    let allow = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "allow", "s"]);
    assert!(allow.status.success(), "{}", stderr(&allow));
    let store = home.path().join("trust.json");
    assert_eq!(std::fs::metadata(&store).expect("store").permissions().mode() & 0o777, 0o600);
    let list = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "list"]);
    assert!(stdout(&list).contains("allowed, and the fingerprint matches"), "{}", stdout(&list));
    for mode in [0o666, 0o620, 0o602] {
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(mode)).expect("chmod");
        let list = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "list"]);
        assert!(stdout(&list).contains("not decided"), "{mode:o}: {}", stdout(&list));
        assert!(
            stderr(&list).contains("trust.json") && stderr(&list).contains("writable"),
            "{}",
            stderr(&list)
        );
        let inspect = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "inspect", "s"]);
        assert!(stdout(&inspect).contains("record:      none"), "{}", stdout(&inspect));
    }
    // A home others may write is warned about.
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let list = teaagent_in(home.path(), &tree.root(), &["mcp", "trust", "list"]);
    assert!(stderr(&list).contains("writable by"), "{}", stderr(&list));
    assert_eq!(stderr(&list).matches("writable by").count(), 1, "said once: {}", stderr(&list));
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    // So is a configuration file others may write.
    let config = home.path().join("config.toml");
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o646)).expect("chmod");
    let out = read_a(home.path(), &tree.root());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("config.toml") && stderr(&out).contains("writable"), "{}", stderr(&out));
}
