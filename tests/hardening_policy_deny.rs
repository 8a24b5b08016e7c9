//! Hardening: deny rules, each against the real binary (the set-up:
//! `common/policy_setup.rs`).
//!
//! - deny rules on commands are fail-closed (item 5);
//! - deny rules on paths cover every path argument, whatever they are called (item 6).

use serde_json::json;
use teaagent_tests::Tree;

use crate::common::policy_setup;
use policy_setup::{call, code, serve};

// ---------------------------------------------------------------------------------------------
// Item 5: deny rules on commands.

#[test]
fn a_command_deny_rule_refuses_every_line_that_may_run_the_program() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(
        &tree,
        &home,
        "deny = [\"shell_exec:command=touch*\"]\n",
        &["--permission-mode", "danger-full-access"],
    );
    for attack in [
        "touch x",
        "true && touch x",
        "touch x; true",
        "echo | touch x",
        "true || touch x",
        "true & touch x",
        "true\ntouch x",
        "(touch x)",
        "{ touch x; }",
        "echo $(touch x)",
        "echo `touch x`",
        "eval touch x",
        "exec touch x",
        "command touch x",
        "builtin command touch x",
        "/usr/bin/env touch x",
        "env -S touch x",
        "env -Stouch",
        "nice -n 5 touch x",
        "nohup touch x",
        "time touch x",
        "timeout -s KILL 5 touch x",
        "echo x | xargs touch",
        "sudo -n touch x",
        "sh -c 'touch x'",
        "sh -c touch\\ x",
        "t'ouch' x",
        "\\touch x",
        "\"touch\" x",
        "TOUCH=1 touch x",
        "A=1 B=2 touch x",
        "/usr/bin/touch x",
        "/usr/bin/tou?h x",
        "/usr/bin/tou[c]h x",
        "to{uch,} x",
        "touch x > /dev/null",
        "busybox touch x",
    ] {
        let answer = call(&mut server, "shell_exec", json!({"command": attack}));
        assert_eq!(code(&answer), -32001, "{attack:?}: {answer}");
        let rule = answer["error"]["data"]["rule"].as_str().unwrap_or_default();
        assert!(rule.contains("deny rule `shell_exec:command=touch*`"), "{rule}");
    }
    assert!(!tree.root().join("x").exists(), "no variant ran `touch`");
    // A line that provably runs no `touch` still runs.
    let fine = call(&mut server, "shell_exec", json!({"command": "echo fine"}));
    assert_eq!(code(&fine), 0, "{fine}");
    server.finish();
}

#[test]
fn a_deny_rule_with_several_words_finds_them_wherever_the_program_runs() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = serve(
        &tree,
        &home,
        "deny = [\"shell_exec:command=git push*\"]\n",
        &["--permission-mode", "danger-full-access"],
    );
    for attack in [
        "git push",
        "git -C . push origin",
        "git --no-pager push",
        "env GIT_DIR=x git push --force",
        "/usr/bin/git push",
        "git push-all",
        "nice git -c x=y push",
    ] {
        let answer = call(&mut server, "shell_exec", json!({"command": attack}));
        assert_eq!(code(&answer), -32001, "{attack:?}: {answer}");
    }
    for fine in ["git status", "echo pushed", "true"] {
        let answer = call(&mut server, "shell_exec", json!({"command": fine}));
        assert_eq!(code(&answer), 0, "{fine:?}: {answer}");
    }
    server.finish();
}

// ---------------------------------------------------------------------------------------------
// Item 6: deny rules on paths.

#[test]
fn a_path_deny_rule_covers_every_path_argument_of_every_tool() {
    let (tree, home) = (Tree::new(), Tree::new());
    tree.write("ws/secrets/key.pem", "PRIVATE\n");
    tree.write("ws/pub/readme.txt", "public\n");
    tree.symlink("ws/pub/key", "../secrets/key.pem");
    let mut server =
        serve(&tree, &home, "deny = [\"*:path=secrets/**\"]\n", &["--permission-mode", "danger-full-access"]);
    for (tool, args) in [
        ("read_file", json!({"path": "secrets/key.pem"})),
        ("read_file", json!({"path": "./pub/../secrets/key.pem"})),
        // Through a link that leads there.
        ("read_file", json!({"path": "pub/key"})),
        ("file_info", json!({"path": "secrets/key.pem"})),
        // A directory whose children the rule denies.
        ("list_directory", json!({"path": "secrets"})),
        ("search_text", json!({"pattern": "PRIVATE", "path": "secrets"})),
        ("find_files", json!({"pattern": "*", "path": "secrets"})),
        // The rule says `path`; `from`, `to` and `cwd` are paths too.
        ("move_path", json!({"from": "secrets/key.pem", "to": "pub/stolen.pem"})),
        ("move_path", json!({"from": "pub/readme.txt", "to": "secrets/planted.txt"})),
        ("shell_exec", json!({"command": "cat key.pem", "cwd": "secrets"})),
        ("write_file", json!({"path": "secrets/key.pem", "content": "x"})),
        ("delete_path", json!({"path": "pub/key"})),
    ] {
        let answer = call(&mut server, tool, args.clone());
        assert_eq!(code(&answer), -32001, "{tool} {args}: {answer}");
    }
    assert_eq!(std::fs::read_to_string(tree.root().join("secrets/key.pem")).expect("kept"), "PRIVATE\n");
    assert!(tree.root().join("pub/key").symlink_metadata().is_ok(), "the link was not deleted");
    // Paths outside the rule still work.
    assert_eq!(code(&call(&mut server, "read_file", json!({"path": "pub/readme.txt"}))), 0);
    assert_eq!(code(&call(&mut server, "list_directory", json!({"path": "."}))), 0);
    server.finish();
}

/// The other half of item 6: what the rule denies is also left out of walks, searches and
/// resources. The walk helpers consult the filter this server installs
/// (`Workspace::set_hidden`); they land in another branch.
#[test]
fn a_path_deny_rule_hides_the_files_from_searches_and_resources() {
    let (tree, home) = (Tree::new(), Tree::new());
    tree.write("ws/secrets/key.pem", "PRIVATE\n");
    let mut server =
        serve(&tree, &home, "deny = [\"*:path=secrets/**\"]\n", &["--permission-mode", "danger-full-access"]);
    let search = call(&mut server, "search_text", json!({"pattern": "PRIVATE"}));
    assert!(!search.to_string().contains("PRIVATE"), "{search}");
    let found = call(&mut server, "find_files", json!({"pattern": "**/*.pem"}));
    assert!(!found.to_string().contains("key.pem"), "{found}");
    let listed = server.request("resources/list", json!({}));
    assert!(!listed.to_string().contains("key.pem"), "{listed}");
    let uri = format!("file://{}", tree.root().join("secrets/key.pem").display());
    let read = server.request("resources/read", json!({"uri": uri}));
    assert!(!read.to_string().contains("PRIVATE"), "{read}");
    server.finish();
}
