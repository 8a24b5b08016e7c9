//! Hardening, against the real binary (the set-up: `common/state_setup.rs`):
//! teaagent's own files (the workspace's and the user's configuration, `--config`, the trust
//! store, the lock registry, the audit log) as links, FIFOs, devices or huge files: a clear
//! error, never a hang, never an outside file's contents.

use std::path::Path;

use teaagent_tests::Tree;

use crate::common::state_setup;
use state_setup::{mkfifo, new_home, read_a, serve, stderr, teaagent_in, write_big, write_call};

#[test]
fn a_workspace_config_that_is_a_link_out_a_fifo_a_device_or_huge_is_refused_unread() {
    let tree = Tree::new();
    let home = new_home();
    let root = tree.root();
    tree.write("outside/config.toml", "SECRET-FIRST-LINE = \"do not show\"\n");
    tree.write("outside/dir/config.toml", "SECRET-IN-DIR = 1\n");
    std::fs::create_dir_all(root.join(".teaagent")).expect("mkdir");
    let config = root.join(".teaagent/config.toml");
    type Make<'a> = Box<dyn Fn() + 'a>;
    let cases: Vec<(&str, Make<'_>)> = vec![
        ("link to /dev/zero", Box::new(|| std::os::unix::fs::symlink("/dev/zero", &config).expect("link"))),
        (
            "link to /dev/urandom",
            Box::new(|| std::os::unix::fs::symlink("/dev/urandom", &config).expect("link")),
        ),
        ("fifo", Box::new(|| mkfifo(&config))),
        (
            "link to an outside file",
            Box::new(|| std::os::unix::fs::symlink(tree.path("outside/config.toml"), &config).expect("link")),
        ),
        (
            "relative link out",
            Box::new(|| std::os::unix::fs::symlink("../../outside/config.toml", &config).expect("link")),
        ),
        ("a directory", Box::new(|| std::fs::create_dir(&config).expect("mkdir"))),
        ("2 MiB", Box::new(|| write_big(&config, 2 * 1024 * 1024))),
    ];
    for (what, make) in cases {
        let _ = std::fs::remove_file(&config);
        let _ = std::fs::remove_dir(&config);
        make();
        let out = read_a(home.path(), &root);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{what}: {message}");
        assert!(out.stdout.is_empty(), "{what}: nothing is served");
        assert!(message.contains(".teaagent/config.toml"), "{what}: names the file: {message}");
        assert!(!message.contains("SECRET") && !message.contains("do not show"), "{what}: {message}");
        assert_eq!(message.lines().count(), 1, "{what}: {message}");
    }
    // The whole `.teaagent` directory as a link out of the root.
    std::fs::remove_dir_all(root.join(".teaagent")).expect("rm");
    std::os::unix::fs::symlink(tree.path("outside/dir"), root.join(".teaagent")).expect("link");
    let out = read_a(home.path(), &root);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!stderr(&out).contains("SECRET"), "{}", stderr(&out));
    // The server refuses to start the same way, rather than hang.
    std::fs::remove_file(root.join(".teaagent")).expect("rm");
    std::fs::create_dir(root.join(".teaagent")).expect("mkdir");
    mkfifo(&config);
    let out = teaagent_in(home.path(), &root, &["mcp", "serve"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn an_invalid_workspace_config_is_reported_without_echoing_its_bytes() {
    let tree = Tree::new();
    let home = new_home();
    let root = tree.root();
    std::fs::create_dir_all(root.join(".teaagent")).expect("mkdir");
    let config = root.join(".teaagent/config.toml");
    let cases = [
        format!("a = {}\n", "[".repeat(500_000)),
        format!("a = {}\n", "{b=".repeat(100_000)),
        "permission_mode = \"\u{1b}[2K\u{202e}yolo\"\n".to_owned(),
        "\u{1b}]0;pwned\u{7} = 1\n".to_owned(),
        format!("x = \"{}\n", "\u{200b}".repeat(1000)),
        "\u{ff}\u{fe} = 1\n".to_owned(),
    ];
    for text in &cases {
        std::fs::write(&config, text).expect("config");
        let out = read_a(home.path(), &root);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{message}");
        assert!(out.stdout.is_empty());
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(message.len() < 2000, "the file's bytes are not echoed: {} bytes", message.len());
        for c in ['\u{1b}', '\u{202e}', '\u{200b}', '\u{7}'] {
            assert!(!message.contains(c), "raw {c:?}: {message}");
        }
    }
}

#[test]
fn a_link_inside_the_workspace_to_its_config_is_still_read() {
    let tree = Tree::new();
    let home = new_home();
    let root = tree.root();
    tree.write("ws/shared/teaagent.toml", "deny = [\"write_file\"]\n");
    std::fs::create_dir_all(root.join(".teaagent")).expect("mkdir");
    std::os::unix::fs::symlink("../shared/teaagent.toml", root.join(".teaagent/config.toml")).expect("link");
    let write = teaagent_in(
        home.path(),
        &root,
        &["run", "write_file", "--args", r#"{"path": "x.md", "content": "x"}"#, "--grant", "write_file"],
    );
    assert_eq!(write.status.code(), Some(1), "denied by the linked file: {}", stderr(&write));
    assert!(!root.join("x.md").exists());
    assert!(read_a(home.path(), &root).status.success());
}

#[test]
fn the_users_own_files_as_fifos_devices_or_huge_files_are_errors_not_hangs() {
    let tree = Tree::new();
    let root = tree.root();
    // $TEAAGENT_HOME/config.toml
    for make in [
        (|p: &Path| mkfifo(p)) as fn(&Path),
        |p: &Path| std::os::unix::fs::symlink("/dev/zero", p).expect("link"),
        |p: &Path| write_big(p, 2 * 1024 * 1024),
    ] {
        let home = new_home();
        make(&home.path().join("config.toml"));
        let out = read_a(home.path(), &root);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("config.toml"), "{}", stderr(&out));
        assert!(out.stdout.is_empty());
    }
    // --config FILE
    let home = new_home();
    let fifo = tree.path("fifo.toml");
    mkfifo(&fifo);
    for named in [Path::new("/dev/zero"), fifo.as_path(), Path::new("/nonexistent/config.toml")] {
        let out = teaagent_in(
            home.path(),
            &root,
            &[
                "run",
                "read_file",
                "--args",
                r#"{"path": "src/a.txt"}"#,
                "--config",
                &named.display().to_string(),
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{named:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(&named.display().to_string()), "{}", stderr(&out));
    }
    // trust.json
    let home = new_home();
    mkfifo(&home.path().join("trust.json"));
    let out = teaagent_in(home.path(), &root, &["mcp", "trust", "list"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("trust.json") && stderr(&out).contains("FIFO"), "{}", stderr(&out));
    // The audit log: the write it would record is refused.
    let home = new_home();
    mkfifo(&home.path().join("audit.jsonl"));
    let out = teaagent_in(
        home.path(),
        &root,
        &["run", "write_file", "--args", r#"{"path": "w.md", "content": "x"}"#, "--grant", "write_file"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("audit"), "{}", stderr(&out));
    assert!(!root.join("w.md").exists(), "no unaudited write");
    // The registry: set aside and rebuilt.
    for make in [(|p: &Path| mkfifo(p)) as fn(&Path), |p: &Path| write_big(p, 9 * 1024 * 1024)] {
        let home = new_home();
        make(&home.path().join("workspace_registry.json"));
        let mut server = serve(&root, home.path(), &["--permission-mode", "danger-full-access"]);
        let written = write_call(&mut server, "w.md");
        assert_eq!(written["result"]["isError"], false, "{written}; stderr: {}", server.stderr());
        server.finish();
        std::fs::remove_file(root.join("w.md")).expect("written");
        assert!(
            home.path().join("workspace_registry.json.corrupt").exists(),
            "the bad registry is set aside"
        );
    }
}
