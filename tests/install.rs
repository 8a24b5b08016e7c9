//! `teaagent mcp install CLIENT` and `mcp uninstall CLIENT` as a user runs them: the real binary
//! with `HOME` (and every variable a client location reads) pointed at a temporary home, writing
//! real files for every client — fresh, beside other servers and comments, twice, replaced,
//! dry-run, removed — and refusing files it cannot use while leaving them byte for byte as they
//! were.

use std::process::{Command, Stdio};

use serde_json::{Value, json};
use teaagent_tests::Bin;
use teaagent_tests::unprivileged::running_as_root;

use crate::common::install_setup;
use install_setup::{CASES, Home, binary, entry, ok, serve_args, stderr, stdout};

#[test]
fn fresh_file_for_every_client_then_nothing_the_second_time() {
    for case in CASES {
        let home = Home::new();
        std::fs::create_dir_all(home.at(case.client_dir())).expect("client dir");
        let out = ok(&home.run(&["mcp", "install", case.id]));
        assert!(out.contains("created") && out.contains(case.user), "{}: {out}", case.id);
        let text = home.read(case.user);
        let (command, args, _) =
            entry(case, &text, "teaagent").unwrap_or_else(|| panic!("{}: {text}", case.id));
        assert_eq!(command, binary(), "{}", case.id);
        assert_eq!(args, serve_args(&home.project(), &[]), "{}", case.id);
        assert!(!home.at(&format!("{}.bak", case.user)).exists(), "{}: no backup of nothing", case.id);

        let again = ok(&home.run(&["mcp", "install", case.id]));
        assert!(again.contains("already in") && again.contains("nothing changed"), "{}: {again}", case.id);
        assert_eq!(home.read(case.user), text, "{}", case.id);
        assert!(
            !home.at(&format!("{}.bak", case.user)).exists(),
            "{}: a second run backs nothing up",
            case.id
        );
    }
}

#[test]
fn other_servers_and_comments_stay_and_uninstall_restores_the_file() {
    for case in CASES {
        let home = Home::new();
        let original = case.existing();
        home.write(case.user, &original);
        let out = ok(&home.run(&["mcp", "install", case.id, "--env", "TEAAGENT_HOME=/srv/ta"]));
        assert!(out.contains("added `teaagent`"), "{}: {out}", case.id);
        let text = home.read(case.user);
        let original_lines: Vec<&str> = original.lines().collect();
        for line in &original_lines {
            // Every line of the user's stays, except the one that gains a comma before the new entry.
            assert!(
                text.lines().any(|l| l == *line || l.trim_end() == format!("{},", line.trim_end())),
                "{}: lost {line:?}:\n{text}",
                case.id
            );
        }
        assert!(text.contains("MARK"), "{}", case.id);
        assert!(entry(case, &text, "other").is_some(), "{}: the other server:\n{text}", case.id);
        let (_, _, env) = entry(case, &text, "teaagent").expect("entry");
        if case.key.is_some() {
            assert_eq!(env, json!({"TEAAGENT_HOME": "/srv/ta"}), "{}", case.id);
        } else {
            assert!(text.contains("env = { TEAAGENT_HOME = \"/srv/ta\" }"), "{text}");
        }
        if case.id == "vscode" {
            assert!(text.contains("\t\t\"teaagent\": {\n\t\t\t\"type\": \"stdio\""), "tabs kept:\n{text}");
        }
        assert_eq!(home.read(&format!("{}.bak", case.user)), original, "{}: backup", case.id);

        let removed = ok(&home.run(&["mcp", "uninstall", case.id]));
        assert!(removed.contains("removed `teaagent`"), "{}: {removed}", case.id);
        assert_eq!(home.read(case.user), original, "{}: uninstall restores the file byte for byte", case.id);
        let none = ok(&home.run(&["mcp", "uninstall", case.id]));
        assert!(none.contains("there is no `teaagent`") && none.contains("nothing changed"), "{none}");
        assert_eq!(home.read(case.user), original, "{}", case.id);
    }
}

#[test]
fn another_name_and_flags_replace_just_that_entry() {
    let home = Home::new();
    let case = &CASES[2]; // cursor
    home.write(case.user, &case.existing());
    ok(&home.run(&["mcp", "install", "cursor"]));
    ok(&home.run(&["mcp", "install", "cursor", "--name", "app"]));
    let before = home.read(case.user);
    let out = ok(&home.run(&[
        "mcp",
        "install",
        "cursor",
        "--permission-mode",
        "read-only",
        "--grant",
        "edit_file:path=src/**",
        "--grant",
        "shell_exec:command=cargo test",
    ]));
    assert!(out.contains("replaced `teaagent`") && out.contains("it started"), "{out}");
    assert!(out.contains("note: `app` in the same file also starts teaagent"), "{out}");
    let text = home.read(case.user);
    let (_, args, _) = entry(case, &text, "teaagent").expect("entry");
    assert_eq!(
        args,
        serve_args(
            &home.project(),
            &[
                "--permission-mode",
                "read-only",
                "--grant",
                "edit_file:path=src/**",
                "--grant",
                "shell_exec:command=cargo test"
            ]
        )
    );
    assert_eq!(entry(case, &text, "app"), entry(case, &before, "app"), "the other entry is untouched");
    assert_eq!(home.read(&format!("{}.bak", case.user)), before);
    // Key order: `theme`, then the servers in the order they were added.
    let order: Vec<usize> = ["\"theme\"", "\"other\"", "\"teaagent\"", "\"app\""]
        .iter()
        .map(|k| text.find(k).expect(k))
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn dry_run_shows_a_diff_and_writes_nothing() {
    let home = Home::new();
    let case = &CASES[3]; // vscode
    let original = case.existing();
    home.write(case.user, &original);
    let out = ok(&home.run(&["mcp", "install", "vscode", "--dry-run"]));
    assert!(out.contains(&format!("--- {}", home.at(case.user).display())), "{out}");
    assert!(out.contains("+\\t\\t\"teaagent\": {"), "{out}");
    assert!(
        out.contains(" \\t\\t\"other\": { \"type\": \"stdio\", \"command\": \"npx\" }, // keep"),
        "{out}"
    );
    assert!(out.contains("dry run:") && out.contains("was not changed"), "{out}");
    assert_eq!(home.read(case.user), original);
    assert!(!home.at(&format!("{}.bak", case.user)).exists());

    ok(&home.run(&["mcp", "install", "vscode"]));
    let installed = home.read(case.user);
    std::fs::remove_file(home.at(&format!("{}.bak", case.user))).expect("rm backup");
    let out = ok(&home.run(&["mcp", "uninstall", "vscode", "--dry-run"]));
    assert!(out.contains("-\\t\\t\"teaagent\": {"), "{out}");
    assert_eq!(home.read(case.user), installed);
    assert!(!home.at(&format!("{}.bak", case.user)).exists());

    // A file not yet created diffs from /dev/null.
    std::fs::create_dir_all(home.at(".cursor")).expect("mkdir");
    let out = ok(&home.run(&["mcp", "install", "cursor", "--dry-run"]));
    assert!(out.starts_with("--- /dev/null\n"), "{out}");
    assert!(!home.at(".cursor/mcp.json").exists());
}

#[test]
fn project_files_go_inside_the_root() {
    for case in CASES {
        let home = Home::new();
        let out = home.run(&["mcp", "install", case.id, "--project"]);
        match case.project {
            Some(rel) => {
                let text = ok(&out);
                assert!(text.contains("created"), "{}: {text}", case.id);
                let file = home.project().join(rel);
                let written = std::fs::read_to_string(&file).expect("project file");
                let (_, args, _) = entry(case, &written, "teaagent").expect("entry");
                assert_eq!(args, serve_args(&home.project(), &[]));
                ok(&home.run(&["mcp", "uninstall", case.id, "--project"]));
                assert!(entry(case, &std::fs::read_to_string(&file).expect("file"), "teaagent").is_none());
            }
            None => {
                assert_eq!(out.status.code(), Some(2), "{}: {}", case.id, stderr(&out));
                assert!(stderr(&out).contains("has no project-level configuration file"), "{}", stderr(&out));
                assert!(std::fs::read_dir(home.project()).expect("ls").next().is_none(), "nothing written");
            }
        }
    }
    // --root names the project (and what the entry serves).
    let home = Home::new();
    std::fs::create_dir(home.at("other")).expect("mkdir");
    ok(&home.run(&["mcp", "install", "gemini-cli", "--project", "--root", "../other"]));
    let text = home.read("other/.gemini/settings.json");
    let (_, args, _) = entry(&CASES[6], &text, "teaagent").expect("entry");
    assert_eq!(args, serve_args(&home.at("other"), &[]));
}

#[test]
fn a_client_that_is_not_installed_is_an_error_and_nothing_is_created() {
    for case in CASES {
        let home = Home::new();
        let out = home.run(&["mcp", "install", case.id]);
        assert_eq!(out.status.code(), Some(1), "{}: {}", case.id, stderr(&out));
        let message = stderr(&out);
        assert!(message.contains("does not seem to be installed"), "{message}");
        assert!(message.contains(&home.at(case.client_dir()).display().to_string()), "{message}");
        assert!(message.contains("mcp install mcp-json"), "{message}");
        assert!(!home.at(case.user).exists() && !home.at(case.client_dir()).exists(), "{}", case.id);
        // Nothing to remove is not an error.
        let none = ok(&home.run(&["mcp", "uninstall", case.id]));
        assert!(none.contains("does not exist") && none.contains("nothing changed"), "{none}");
    }
}

#[test]
fn files_it_cannot_use_are_errors_that_leave_them_untouched() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("cursor", ".cursor/mcp.json", "{\n  \"mcpServers\": {\n    \"a\": 1,,\n  }\n}\n", "line 3"),
        (
            "claude-desktop",
            ".config/Claude/claude_desktop_config.json",
            "[1, 2]\n",
            "the top level is an array",
        ),
        ("vscode", ".config/Code/User/mcp.json", "{ \"servers\": \"none\" }", "`servers` is a string"),
        ("gemini-cli", ".gemini/settings.json", "{ 'mcpServers': {} }", "line 1"),
        ("windsurf", ".codeium/windsurf/mcp_config.json", "{ \"mcpServers\": {", "not valid JSON"),
        ("codex", ".codex/config.toml", "model = \"o3\"\nmcp_servers = 1\n", "`mcp_servers` is an integer"),
        ("codex", ".codex/config.toml", "# mine\n[mcp_servers.x\ncommand = 1\n", "not valid TOML (line 2"),
        ("claude-code", ".claude.json", "{\"mcpServers\": {}} {}", "not valid JSON"),
        (
            "claude-desktop",
            ".config/Claude/claude_desktop_config.json",
            "{\"mcpServers\": {\"teaagent\": {\"command\": \"a\"}, \"teaagent\": {\"command\": \"b\"}}}",
            "has the server `teaagent` more than once",
        ),
    ];
    for (id, rel, text, says) in cases {
        let home = Home::new();
        home.write(rel, text);
        for args in [&["mcp", "install", id][..], &["mcp", "uninstall", id]] {
            let out = home.run(args);
            assert_eq!(out.status.code(), Some(2), "{args:?} {text:?}: {}", stderr(&out));
            let message = stderr(&out);
            assert!(message.contains(&home.at(rel).display().to_string()), "names the file: {message}");
            assert!(message.contains(says), "{text:?}: {message}");
            assert!(out.stdout.is_empty());
            assert_eq!(home.read(rel), *text, "untouched");
            assert!(!home.at(&format!("{rel}.bak")).exists(), "no backup");
        }
    }
    // Not UTF-8, and a FIFO where the file goes: errors, never a hang.
    let home = Home::new();
    std::fs::create_dir_all(home.at(".cursor")).expect("mkdir");
    std::fs::write(home.at(".cursor/mcp.json"), b"{\"mcpServers\": {\"\xff\": 1}}").expect("write");
    let out = home.run(&["mcp", "install", "cursor"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is not UTF-8"), "{}", stderr(&out));
    let home = Home::new();
    std::fs::create_dir_all(home.at(".gemini")).expect("mkdir");
    assert!(Command::new("mkfifo").arg(home.at(".gemini/settings.json")).status().expect("mkfifo").success());
    let out = home.run(&["mcp", "install", "gemini-cli"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot read") && stderr(&out).contains("settings.json"),
        "{}",
        stderr(&out)
    );
}

/// A file its user may read but not write. As root (which writes anything) the command runs as
/// `nobody` through `setpriv`, with the home's files owned by root.
#[test]
fn a_file_that_is_not_writable_is_an_error_that_leaves_it_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let home = Home::new();
    let case = &CASES[2]; // cursor
    let original = case.existing();
    home.write(case.user, &original);
    let dir = home.at(".cursor");
    let mut cmd = if running_as_root() {
        if Command::new("setpriv").arg("--version").output().is_err() {
            teaagent_tests::skip("running as root without setpriv: no user to whom a file is read-only");
            return;
        }
        for path in [home.path(), home.project(), dir.clone()] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        std::fs::set_permissions(home.at(case.user), std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(Bin::Teaagent.path())
            .args(["mcp", "install", "cursor"])
            .current_dir(home.project())
            .env("HOME", home.path())
            .env_remove("XDG_CONFIG_HOME")
            .stdin(Stdio::null());
        cmd
    } else {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).expect("chmod");
        home.command(&["mcp", "install", "cursor"])
    };
    let out = cmd.output().expect("run");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let message = stderr(&out);
    assert!(message.contains("cannot write") && message.contains("left as it was"), "{message}");
    assert!(message.contains(&dir.display().to_string()), "names the file: {message}");
    assert_eq!(home.read(case.user), original);
    let leftovers: Vec<_> = std::fs::read_dir(&dir).expect("ls").flatten().map(|e| e.file_name()).collect();
    assert_eq!(leftovers, vec![std::ffi::OsString::from("mcp.json")], "no backup, no temporary file");
}

#[test]
fn a_linked_file_is_followed_and_its_target_written() {
    let home = Home::new();
    let case = &CASES[6]; // gemini-cli
    let original = case.existing();
    home.write("dotfiles/gemini.json", &original);
    std::fs::create_dir_all(home.at(".gemini")).expect("mkdir");
    std::os::unix::fs::symlink(home.at("dotfiles/gemini.json"), home.at(".gemini/settings.json"))
        .expect("link");
    let out = ok(&home.run(&["mcp", "install", "gemini-cli"]));
    assert!(out.contains("is a link: its target") && out.contains("dotfiles/gemini.json"), "{out}");
    assert!(
        std::fs::symlink_metadata(home.at(".gemini/settings.json")).expect("meta").file_type().is_symlink()
    );
    assert!(entry(case, &home.read("dotfiles/gemini.json"), "teaagent").is_some());
    assert_eq!(home.read("dotfiles/gemini.json.bak"), original, "the backup sits beside the target");

    // A project's file may not lead out of the project.
    let home = Home::new();
    home.write("elsewhere/settings.json", "{}\n");
    std::fs::create_dir_all(home.project().join(".gemini")).expect("mkdir");
    std::os::unix::fs::symlink(
        home.at("elsewhere/settings.json"),
        home.project().join(".gemini/settings.json"),
    )
    .expect("link");
    let out = home.run(&["mcp", "install", "gemini-cli", "--project"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("leads outside the project"), "{}", stderr(&out));
    assert_eq!(home.read("elsewhere/settings.json"), "{}\n");
}

#[test]
fn the_variables_clients_honour_move_their_files() {
    let home = Home::new();
    std::fs::create_dir_all(home.at("codex-home")).expect("mkdir");
    std::fs::create_dir_all(home.at("claude-config")).expect("mkdir");
    std::fs::create_dir_all(home.at("xdg/Claude")).expect("mkdir");
    for (var, dir, id, file) in [
        ("CODEX_HOME", "codex-home", "codex", "codex-home/config.toml"),
        ("CLAUDE_CONFIG_DIR", "claude-config", "claude-code", "claude-config/.claude.json"),
        ("XDG_CONFIG_HOME", "xdg", "claude-desktop", "xdg/Claude/claude_desktop_config.json"),
    ] {
        let out = home.command(&["mcp", "install", id]).env(var, home.at(dir)).output().expect("run");
        ok(&out);
        assert!(home.at(file).exists(), "{id}: {}", stdout(&out));
    }
}

#[test]
fn mcp_json_prints_the_entry_and_writes_nothing() {
    let home = Home::new();
    let out = ok(&home.run(&[
        "mcp",
        "install",
        "mcp-json",
        "--name",
        "app",
        "--permission-mode",
        "prompt",
        "--env",
        "A=1=2",
    ]));
    let printed: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        printed,
        json!({"mcpServers": {"app": {
            "command": binary(),
            "args": serve_args(&home.project(), &["--permission-mode", "prompt"]),
            "env": {"A": "1=2"}
        }}})
    );
    let entries: Vec<_> =
        std::fs::read_dir(home.path()).expect("ls").flatten().map(|e| e.file_name()).collect();
    assert_eq!(entries, vec![std::ffi::OsString::from("project")], "nothing written");
}

#[test]
fn bad_flags_are_usage_errors() {
    let home = Home::new();
    std::fs::create_dir_all(home.at(".cursor")).expect("mkdir");
    for args in [
        &["mcp", "install", "notepad"][..],
        &["mcp", "install", "cursor", "--env", "NOEQUALS"],
        &["mcp", "install", "cursor", "--env", "1X=a"],
        &["mcp", "install", "cursor", "--env", "A=1", "--env", "A=2"],
        &["mcp", "install", "cursor", "--name", "a b"],
        &["mcp", "install", "cursor", "--name", ""],
        &["mcp", "install", "cursor", "--permission-mode", "yolo"],
        &["mcp", "install", "cursor", "--grant", "write_file:path"],
        &["mcp", "install", "cursor", "--root", "/does/not/exist"],
        &["mcp", "install", "mcp-json", "--project"],
        &["mcp", "uninstall", "mcp-json"],
    ] {
        let out = home.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!home.at(".cursor/mcp.json").exists(), "{args:?}");
    }
}

/// A root whose name holds a terminal escape is written as JSON escapes it and shown escaped.
#[test]
fn paths_with_control_characters_are_shown_escaped() {
    let home = Home::new();
    std::fs::create_dir_all(home.at(".cursor")).expect("mkdir");
    let root = home.at("evil\u{1b}[2Jdir");
    std::fs::create_dir(&root).expect("mkdir");
    let out = home.run(&["mcp", "install", "cursor", "--root", root.to_str().expect("utf-8"), "--dry-run"]);
    let text = ok(&out);
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(text.contains("evil\\\\u001b[2Jdir") || text.contains("evil\\e[2Jdir"), "{text}");
    ok(&home.run(&["mcp", "install", "cursor", "--root", root.to_str().expect("utf-8")]));
    let (_, args, _) = entry(&CASES[2], &home.read(".cursor/mcp.json"), "teaagent").expect("entry");
    assert_eq!(args[3], root.to_str().expect("utf-8"));
}
