//! The confinement attack suite, through real server processes, real files and real links: a
//! file tool that reads, one that writes, and `resources/read`, each fed paths and URIs that try
//! to leave the workspace. After every attempt, nothing outside the root has changed or appeared
//! and the server still answers.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

/// A server under attack: which binary, and the names of its read and write tools.
struct Subject {
    server: RawServer,
    read: &'static str,
    write: &'static str,
}

fn subjects(tree: &Tree, home: &tempfile::TempDir) -> Vec<Subject> {
    let mut fixture = Command::new(Bin::Fixture.path());
    fixture
        .env("FIXTURE_ROOT", tree.root())
        .env("TEAAGENT_HOME", home.path())
        .env("FIXTURE_MODE", "danger-full-access");
    let mut subjects = vec![Subject { server: RawServer::start(fixture), read: "peek", write: "poke" }];
    if let Some(subject) = shipped(tree, home) {
        subjects.push(subject);
    }
    for s in &mut subjects {
        s.server.initialize("2025-06-18");
    }
    subjects
}

/// The shipped `teaagent` binary and its built-in file tools.
fn shipped(tree: &Tree, home: &tempfile::TempDir) -> Option<Subject> {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", "danger-full-access", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.path());
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    let tools = server.request("tools/list", json!({}));
    let names: Vec<&str> =
        tools["result"]["tools"].as_array()?.iter().filter_map(|t| t["name"].as_str()).collect();
    if !(names.contains(&"read_file") && names.contains(&"write_file")) {
        return None;
    }
    Some(Subject { server, read: "read_file", write: "write_file" })
}

fn call(server: &mut RawServer, tool: &str, args: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": args}))
}

/// The refusal reason of a `-32602` answer, or `None` when the call was not refused.
fn refusal(answer: &Value) -> Option<String> {
    (answer["error"]["code"] == -32602)
        .then(|| answer["error"]["data"]["reason"].as_str().unwrap_or_default().to_owned())
}

fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

/// Runs `attack` against every subject and checks the aftermath.
fn each(tree: &Tree, mut attack: impl FnMut(&mut Subject)) {
    let home = tempfile::tempdir().expect("home");
    let before = tree.outside_snapshot();
    for mut subject in subjects(tree, &home) {
        attack(&mut subject);
        assert_eq!(
            subject.server.request("ping", json!({}))["result"],
            json!({}),
            "the server still answers"
        );
        assert_eq!(tree.outside_snapshot(), before, "something outside the workspace changed");
        subject.server.finish();
    }
}

#[test]
fn dot_dot_chains_and_absolute_paths_are_refused() {
    let tree = Tree::new();
    let root = tree.root();
    each(&tree, |s| {
        for path in [
            "../outside/secret.txt".to_owned(),
            "../../../../../../etc/passwd".to_owned(),
            "src/../../outside/secret.txt".to_owned(),
            "src/./../../outside/secret.txt".to_owned(),
            "/etc/passwd".to_owned(),
            tree.path("outside/secret.txt").display().to_string(),
            format!("{}/../outside/secret.txt", root.display()),
        ] {
            let answer = call(&mut s.server, s.read, json!({"path": path}));
            assert_eq!(refusal(&answer).as_deref(), Some("outside_workspace"), "{path}: {answer}");
            assert_eq!(answer["error"]["data"]["path"], path.as_str());
            let answer = call(
                &mut s.server,
                s.write,
                json!({"path": path.replace("secret.txt", "planted.txt"), "content": "x"}),
            );
            assert_eq!(refusal(&answer).as_deref(), Some("outside_workspace"), "{path}: {answer}");
        }
        // An absolute path inside the root is fine (agents often send them).
        let inside =
            call(&mut s.server, s.read, json!({"path": root.join("src/a.txt").display().to_string()}));
        assert!(text(&inside).contains("hello"), "{inside}");
    });
}

#[test]
fn encoded_and_look_alike_paths_stay_inside() {
    let tree = Tree::new();
    each(&tree, |s| {
        // Tool paths are not URLs: `%2e%2e%2f` is a file name, and so are look-alike dots.
        for path in [
            "%2e%2e%2foutside%2fsecret.txt",
            "\u{2024}\u{2024}/outside/secret.txt",
            "\u{ff0e}\u{ff0e}/outside/secret.txt",
            "~/secret.txt",
        ] {
            let answer = call(&mut s.server, s.read, json!({"path": path}));
            assert_eq!(answer["result"]["isError"], true, "{path}: {answer}");
            assert!(!text(&answer).contains("top secret"));
        }
    });
}

#[test]
fn links_leaving_the_root_at_any_component_are_refused() {
    let tree = Tree::new();
    tree.symlink("ws/leak", tree.path("outside/secret.txt"));
    tree.symlink("ws/relative-leak", "../outside/secret.txt");
    tree.symlink("ws/linkdir", tree.path("outside"));
    tree.symlink("ws/src/deep", "../../outside");
    tree.symlink("ws/inside", "src/a.txt");
    tree.symlink("ws/absolute-inside", tree.path("ws/src/a.txt"));
    each(&tree, |s| {
        for path in ["leak", "relative-leak", "linkdir/secret.txt", "src/deep/secret.txt", "linkdir"] {
            let answer = call(&mut s.server, s.read, json!({"path": path}));
            assert_eq!(refusal(&answer).as_deref(), Some("outside_workspace"), "{path}: {answer}");
        }
        for path in ["linkdir/planted.txt", "src/deep/planted.txt", "leak"] {
            let answer = call(&mut s.server, s.write, json!({"path": path, "content": "owned"}));
            assert_eq!(refusal(&answer).as_deref(), Some("outside_workspace"), "{path}: {answer}");
        }
        // Links that stay inside are followed.
        for path in ["inside", "absolute-inside"] {
            let answer = call(&mut s.server, s.read, json!({"path": path}));
            assert!(text(&answer).contains("hello"), "{path}: {answer}");
        }
    });
}

#[test]
fn link_loops_and_prefix_look_alikes_are_refused() {
    let tree = Tree::new();
    tree.symlink("ws/loop1", "loop2");
    tree.symlink("ws/loop2", "loop1");
    tree.symlink("ws/self", "self");
    // A link whose target shares the root's name as a string prefix.
    tree.symlink("ws/evil", tree.path("ws-evil/secret.txt"));
    let evil_absolute = tree.path("ws-evil/secret.txt").display().to_string();
    each(&tree, |s| {
        for path in ["loop1", "self", "loop1/x"] {
            let answer = call(&mut s.server, s.read, json!({"path": path}));
            assert_eq!(refusal(&answer).as_deref(), Some("symlink_loop"), "{path}: {answer}");
        }
        for path in ["evil", "../ws-evil/secret.txt", evil_absolute.as_str()] {
            let answer = call(&mut s.server, s.read, json!({"path": path}));
            assert_eq!(refusal(&answer).as_deref(), Some("outside_workspace"), "{path}: {answer}");
        }
    });
}

#[test]
fn fifos_are_refused_without_hanging() {
    let tree = Tree::new();
    tree.fifo("ws/pipe");
    each(&tree, |s| {
        let start = Instant::now();
        let answer = call(&mut s.server, s.read, json!({"path": "pipe"}));
        assert_eq!(refusal(&answer).as_deref(), Some("special_file"), "{answer}");
        let resource = s.server.request("resources/read", json!({"uri": "teaagent://workspace/pipe"}));
        assert_eq!(resource["error"]["data"]["reason"], "special_file", "{resource}");
        assert!(start.elapsed() < Duration::from_secs(10), "a FIFO made the server wait");
    });
}

#[test]
fn hard_links_to_outside_files_are_never_written() {
    let tree = Tree::new();
    std::fs::hard_link(tree.path("outside/secret.txt"), tree.path("ws/hard")).expect("hard link");
    each(&tree, |s| {
        let answer = call(&mut s.server, s.write, json!({"path": "hard", "content": "overwritten"}));
        assert_eq!(refusal(&answer).as_deref(), Some("hard_linked"), "{answer}");
    });
    assert_eq!(std::fs::read_to_string(tree.path("outside/secret.txt")).expect("secret"), "top secret\n");
}

#[test]
fn a_link_swapped_in_after_a_successful_call_is_caught() {
    let tree = Tree::new();
    tree.write("ws/swap/a.txt", "first\n");
    each(&tree, |s| {
        let ok = call(&mut s.server, s.read, json!({"path": "swap/a.txt"}));
        assert!(text(&ok).contains("first"), "{ok}");
        std::fs::remove_dir_all(tree.path("ws/swap")).expect("remove");
        std::os::unix::fs::symlink(tree.path("outside"), tree.path("ws/swap")).expect("swap in a link");
        let answer = call(&mut s.server, s.read, json!({"path": "swap/secret.txt"}));
        assert_eq!(refusal(&answer).as_deref(), Some("outside_workspace"), "{answer}");
        let answer = call(&mut s.server, s.write, json!({"path": "swap/planted.txt", "content": "x"}));
        assert_eq!(refusal(&answer).as_deref(), Some("outside_workspace"), "{answer}");
        // Put it back for the next subject.
        std::fs::remove_file(tree.path("ws/swap")).expect("unlink");
        tree.write("ws/swap/a.txt", "first\n");
    });
}

#[test]
fn resource_uris_are_parsed_strictly() {
    let tree = Tree::new();
    tree.symlink("ws/leak", tree.path("outside/secret.txt"));
    each(&tree, |s| {
        for (uri, reason) in [
            ("teaagent://workspace/../outside/secret.txt", "invalid_uri"),
            ("teaagent://workspace/%2e%2e%2foutside%2fsecret.txt", "invalid_uri"),
            ("teaagent://workspace/%2e%2e/outside/secret.txt", "invalid_uri"),
            ("teaagent://workspace/src%2fa.txt", "invalid_uri"),
            ("teaagent://workspace//etc/passwd", "invalid_uri"),
            ("teaagent://x@host/src/a.txt", "invalid_uri"),
            ("teaagent://workspace@evil/src/a.txt", "invalid_uri"),
            ("teaagent://workspace/src/a.txt?raw=1", "invalid_uri"),
            ("teaagent://workspace/src/a.txt#top", "invalid_uri"),
            ("file:///etc/passwd", "invalid_uri"),
            ("teaagent://workspace/leak", "outside_workspace"),
            ("teaagent://workspace/missing.txt", "not_found"),
            ("teaagent://workspace/src", "special_file"),
        ] {
            let answer = s.server.request("resources/read", json!({"uri": uri}));
            assert_eq!(answer["error"]["code"], -32602, "{uri}: {answer}");
            assert_eq!(answer["error"]["data"]["reason"], reason, "{uri}: {answer}");
            assert_eq!(answer["error"]["data"]["uri"], uri);
        }
        let ok = s.server.request("resources/read", json!({"uri": "teaagent://workspace/src/a.txt"}));
        assert_eq!(ok["result"]["contents"][0]["text"], "hello\n", "{ok}");
    });
}
