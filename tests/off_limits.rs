//! What no tool reaches, whatever the mode, against the real binary (`teaagent_core::workspace`'s
//! `off_limits`):
//!
//! - teaagent's home, when it lies beneath the root (a server started in the user's home
//!   directory, or at `/`): not read (by name, absolute path, `..`, a link), not listed, found,
//!   searched or served as a resource, not written, and hidden from `shell_exec`'s commands. Two
//!   homes: the root's own `.teaagent/`, and one under another name deeper in the tree.
//! - `.git` and `.teaagent` directories, at any depth, by name or through a link: every tool
//!   that writes is refused (`-32602`, `unwritable`) before it runs, and nothing changes; reading
//!   them still works. So is the git directory the root's `.git` file names.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

const SECRET: &str = "SECRET-TOKEN-7f3a";

/// `teaagent mcp serve --permission-mode allow` on the tree's workspace, with `home` as its home.
fn serve(tree: &Tree, home: &Path) -> RawServer {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", "allow", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home)
        .env_remove("RUST_LOG");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    server
}

fn call(server: &mut RawServer, tool: &str, args: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": args}))
}

/// The `-32602` refusal reason of an answer (`None`: not refused so).
fn refusal(answer: &Value) -> Option<&str> {
    (answer["error"]["code"] == -32602).then(|| answer["error"]["data"]["reason"].as_str().unwrap_or(""))
}

fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn teaagent_home_beneath_the_root_is_out_of_every_tools_reach() {
    // The root's own `.teaagent/` as the home, and a home of another name deeper down.
    for home in [".teaagent", "state/agent-home"] {
        let tree = Tree::new();
        let home_dir = tree.root().join(home);
        tree.write(&format!("ws/{home}/tokens"), &format!("{SECRET}\n"));
        tree.write(&format!("ws/{home}/config.toml"), "[shell]\nnetwork = false\n");
        tree.write("ws/control.txt", "SECRET-TOKEN-control\n");
        tree.symlink("ws/lnk", format!("{home}/tokens"));
        tree.symlink("ws/dirlnk", home);
        let mut server = serve(&tree, &home_dir);

        let absolute = home_dir.join("tokens").display().to_string();
        for path in [
            format!("{home}/tokens"),
            absolute,
            format!("{home}/../{home}/tokens"),
            format!("{home}/nothing/../tokens"),
            "lnk".to_owned(),
            "dirlnk/config.toml".to_owned(),
            home.to_owned(),
        ] {
            let answer = call(&mut server, "read_file", json!({"path": path}));
            assert_eq!(refusal(&answer), Some("teaagent_home"), "{home}: read_file {path}: {answer}");
            for (tool, args) in [
                ("list_directory", json!({"path": path})),
                ("file_info", json!({"path": path})),
                ("write_file", json!({"path": path, "content": "x"})),
            ] {
                let answer = call(&mut server, tool, args);
                assert_eq!(refusal(&answer), Some("teaagent_home"), "{home}: {tool} {path}: {answer}");
            }
        }
        let answer = call(&mut server, "create_file", json!({"path": format!("{home}/new"), "content": "x"}));
        assert_eq!(refusal(&answer), Some("teaagent_home"), "{answer}");
        assert!(!home_dir.join("new").exists());

        // Walks leave it out; what is around it is still there.
        let found = text(&call(&mut server, "search_text", json!({"pattern": "SECRET-TOKEN"})));
        assert!(found.contains("control.txt") && !found.contains(SECRET), "{home}: {found}");
        let files = text(&call(&mut server, "find_files", json!({"pattern": "**/*"})));
        assert!(files.contains("control.txt") && !files.contains("tokens"), "{home}: {files}");
        let parent = Path::new(home).parent().map_or(".".to_owned(), |p| p.display().to_string());
        let parent = if parent.is_empty() { ".".to_owned() } else { parent };
        let listed = text(&call(&mut server, "list_directory", json!({"path": parent})));
        let name = Path::new(home).file_name().and_then(|n| n.to_str()).unwrap_or_default();
        assert!(!listed.contains(&format!("\"{name}\"")), "{home}: {listed}");

        // Resources: not listed, not read.
        let list = server.request("resources/list", json!({}));
        let uris = list["result"]["resources"].to_string();
        assert!(uris.contains("control.txt") && !uris.contains("tokens"), "{home}: {uris}");
        let read =
            server.request("resources/read", json!({"uri": format!("teaagent://workspace/{home}/tokens")}));
        assert_eq!(read["error"]["data"]["reason"], "teaagent_home", "{home}: {read}");

        // A command cannot read it, by any spelling, nor write it.
        let shown = home_dir.display();
        // Undoing the mount, or going round it through the server's own view of the disk.
        let command = format!(
            "cat {shown}/tokens {home}/tokens lnk; ls -A {shown}; touch {shown}/planted; \
             umount {shown}; umount -l {shown}; cat {shown}/tokens; \
             cat /proc/$PPID/root{shown}/tokens /proc/1/root{shown}/tokens /proc/$PPID/cwd/{home}/tokens"
        );
        let ran = text(&call(&mut server, "shell_exec", json!({"command": command})));
        assert!(ran.contains("exit code:") && !ran.contains(SECRET), "{home}: {ran}");
        assert!(!ran.contains("config.toml") && !home_dir.join("planted").exists(), "{home}: {ran}");

        assert_eq!(std::fs::read_to_string(home_dir.join("tokens")).expect("tokens"), format!("{SECRET}\n"));
        assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    }
}

#[test]
fn a_home_outside_the_root_is_still_hidden_from_commands() {
    let (tree, home) = (Tree::new(), Tree::new());
    home.write("tokens", &format!("{SECRET}\n"));
    let mut server = serve(&tree, &home.base());
    let command = format!("cat {0}/tokens; ls -A {0}; echo made > {0}/planted", home.base().display());
    let ran = text(&call(&mut server, "shell_exec", json!({"command": command})));
    assert!(ran.contains("exit code:") && !ran.contains(SECRET) && !ran.contains("tokens\n"), "{ran}");
    assert!(!home.path("planted").exists(), "{ran}");
    // The workspace is still the command's to write.
    let ran = text(&call(&mut server, "shell_exec", json!({"command": "echo built > out.txt"})));
    assert!(ran.contains("exit code: 0"), "{ran}");
    assert_eq!(std::fs::read_to_string(tree.path("ws/out.txt")).expect("out"), "built\n");
}

#[test]
fn tools_read_but_never_change_git_and_teaagent_directories() {
    let (tree, home) = (Tree::new(), Tree::new());
    let git = Command::new("git").args(["init", "-q"]).current_dir(tree.root()).status().expect("git");
    assert!(git.success());
    tree.write("ws/vendor/lib/.git/config", "[core]\n");
    tree.write("ws/.teaagent/config.toml", "");
    tree.write("ws/evil.sh", "#!/bin/sh\necho pwned\n");
    tree.symlink("ws/hooks", ".git/hooks");
    std::fs::create_dir(tree.path("ws/payload")).expect("mkdir");
    let config = std::fs::read_to_string(tree.path("ws/.git/config")).expect("git config");
    let mut server = serve(&tree, &home.base());

    let attempts: Vec<(&str, Value)> = vec![
        ("create_file", json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"})),
        ("create_file", json!({"path": "hooks/post-checkout", "content": "#!/bin/sh\n"})),
        ("create_file", json!({"path": "vendor/lib/.git/hooks/pre-commit", "content": "x"})),
        ("create_file", json!({"path": "sub/.git", "content": "gitdir: /tmp\n"})),
        ("create_file", json!({"path": ".Git/config", "content": "x"})),
        ("write_file", json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = ./evil.sh\n"})),
        ("write_file", json!({"path": "./src/../.git/config", "content": "x"})),
        ("write_file", json!({"path": tree.path("ws/.git/config").display().to_string(), "content": "x"})),
        ("write_file", json!({"path": ".teaagent/config.toml", "content": "[shell]\nnetwork = true\n"})),
        (
            "edit_file",
            json!({"path": ".git/config", "old_text": "[core]", "new_text": "[core]\n\thooksPath = /tmp"}),
        ),
        ("delete_path", json!({"path": ".git/config"})),
        ("delete_path", json!({"path": ".teaagent/config.toml"})),
        ("move_path", json!({"from": ".git/config", "to": "config.bak"})),
        ("move_path", json!({"from": "evil.sh", "to": ".git/hooks/pre-push"})),
        ("move_path", json!({"from": "payload", "to": ".git/hooks-new"})),
    ];
    for (tool, args) in attempts {
        let answer = call(&mut server, tool, args.clone());
        assert_eq!(refusal(&answer), Some("unwritable"), "{tool} {args}: {answer}");
    }
    assert_eq!(std::fs::read_to_string(tree.path("ws/.git/config")).expect("git config"), config);
    assert_eq!(std::fs::read_to_string(tree.path("ws/.teaagent/config.toml")).expect("own config"), "");
    for made in ["ws/.git/hooks/pre-commit", "ws/.git/hooks/post-checkout", "ws/sub/.git", "ws/.Git"] {
        assert!(!tree.path(made).exists(), "{made}");
    }
    assert!(tree.path("ws/evil.sh").exists() && tree.path("ws/payload").is_dir());

    // Reading them, and writing next to them, still works.
    let read = call(&mut server, "read_file", json!({"path": ".git/config"}));
    assert!(text(&read).contains("[core]"), "{read}");
    let written = call(&mut server, "write_file", json!({"path": ".gitignore", "content": "target/\n"}));
    assert_eq!(written["result"]["isError"], false, "{written}");
}

/// A repository whose `.git` is a file naming its git directory inside the workspace (`git init
/// --separate-git-dir`): that directory is git data too, whatever its name; also when the file
/// is as large as git still reads (1 MiB, padded with line breaks, which git drops).
#[test]
fn the_git_directory_the_roots_git_file_names_is_unwritable_too() {
    for padded in [false, true] {
        git_directory_named_by_a_git_file_is_unwritable(padded);
    }
}

fn git_directory_named_by_a_git_file_is_unwritable(padded: bool) {
    let (tree, home) = (Tree::new(), Tree::new());
    let git = Command::new("git")
        .args(["init", "-q", "--separate-git-dir", "store", "."])
        .current_dir(tree.root())
        .status()
        .expect("git");
    assert!(git.success());
    if padded {
        let named = std::fs::read_to_string(tree.path("ws/.git")).expect(".git");
        let named = named.trim_end();
        let padding = "\n".repeat((1 << 20) - named.len());
        std::fs::write(tree.path("ws/.git"), format!("{named}{padding}")).expect("pad .git");
        let status = Command::new("git").args(["status"]).current_dir(tree.root()).output().expect("git");
        assert!(status.status.success(), "git reads the padded file: {status:?}");
    }
    tree.symlink("ws/h", "store/hooks");
    let config = std::fs::read_to_string(tree.path("ws/store/config")).expect("git config");
    let mut server = serve(&tree, &home.base());
    for (tool, args) in [
        ("create_file", json!({"path": "store/hooks/pre-commit", "content": "#!/bin/sh\n"})),
        ("create_file", json!({"path": "h/post-checkout", "content": "#!/bin/sh\n"})),
        ("write_file", json!({"path": "store/config", "content": "[core]\n\tfsmonitor = x\n"})),
        ("delete_path", json!({"path": "store/HEAD"})),
    ] {
        let answer = call(&mut server, tool, args.clone());
        assert_eq!(refusal(&answer), Some("unwritable"), "padded {padded}: {tool} {args}: {answer}");
    }
    assert_eq!(std::fs::read_to_string(tree.path("ws/store/config")).expect("git config"), config);
    assert!(!tree.path("ws/store/hooks/pre-commit").exists() && tree.path("ws/store/HEAD").exists());
    let read = call(&mut server, "read_file", json!({"path": "store/HEAD"}));
    assert!(text(&read).contains("ref:"), "{read}");
}
