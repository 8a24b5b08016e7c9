//! The library's policy story, against real binaries: the `author` test
//! binary (a server built on teaagent-core the way the README shows, with a destructive
//! `delete_note`) and the shipped `teaagent`.
//!
//! - by default a library server takes its policy from the `TEAAGENT_*` variables and
//!   `$TEAAGENT_HOME/config.toml`; its refusals name those, never the command's `--grant`;
//! - `TEAAGENT_GRANTS`, `TEAAGENT_PERMISSION_MODE` and the user's file's `grants` take effect;
//!   a bad value stops it with exit 2 naming the variable or the file and key;
//! - a policy fixed in code ignores them, and its refusals name the `Policy` call;
//! - startup lists the tools that will need an approval (stderr), for the command too;
//! - the command still names `--grant`, honours the variables, and its flags win over them.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::wire::WAIT;
use teaagent_tests::{Bin, RawServer, Tree};

/// The `author` binary in `mode` with `home` as `TEAAGENT_HOME`, no `TEAAGENT_*` policy
/// variables and no `RUST_LOG` (the test sets what it needs).
fn author(mode: &str, home: &Tree) -> Command {
    let mut cmd = Command::new(Bin::Author.path());
    cmd.env("AUTHOR_MODE", mode).env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG");
    for var in ["TEAAGENT_PERMISSION_MODE", "TEAAGENT_GRANTS", "TEAAGENT_DENY", "TEAAGENT_PREAPPROVE"] {
        cmd.env_remove(var);
    }
    cmd
}

/// `teaagent mcp serve` on `root`, like [`author`].
fn teaagent_serve(home: &Tree, root: &std::path::Path) -> Command {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root"]).arg(root).env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG");
    for var in ["TEAAGENT_PERMISSION_MODE", "TEAAGENT_GRANTS", "TEAAGENT_DENY", "TEAAGENT_PREAPPROVE"] {
        cmd.env_remove(var);
    }
    cmd
}

/// Calls `delete_note` on a started server: `Ok(text)` when it ran, `Err(error)` when refused.
fn delete_note(server: &mut RawServer) -> Result<String, Value> {
    let answer =
        server.request("tools/call", json!({"name": "delete_note", "arguments": {"title": "groceries"}}));
    match answer.get("error") {
        Some(error) => Err(error.clone()),
        None => Ok(answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()),
    }
}

/// The server's whole stderr after it exited cleanly.
fn stderr_at_exit(mut server: RawServer) -> String {
    server.close_stdin();
    assert!(server.wait(WAIT).success(), "{}", server.stderr());
    // The exit and a moment let the stderr reader catch up.
    std::thread::sleep(Duration::from_millis(50));
    server.stderr()
}

fn details(error: &Value) -> &str {
    error["data"]["details"].as_str().unwrap_or_else(|| panic!("no details in {error}"))
}

#[test]
fn by_default_a_destructive_tool_is_refused_with_advice_for_this_server() {
    let home = Tree::new();
    let mut server = RawServer::start(author("", &home));
    server.initialize("2025-06-18");
    let listed = |s: &str| s.contains("tools that need an approval in workspace-write mode");
    let stderr = server.stderr_once(listed);
    let line = stderr.lines().find(|l| listed(l)).unwrap_or_else(|| panic!("no listing:\n{stderr}"));
    assert!(line.contains("INFO") && line.contains("delete_note (destructive, tier high)"), "{line}");
    assert!(line.contains("TEAAGENT_GRANTS='delete_note'") && line.contains("config.toml"), "{line}");
    assert!(!line.contains("echo"), "read-only tools need no approval: {line}");
    assert!(!line.contains("--grant"), "{line}");

    let error = delete_note(&mut server).expect_err("refused by default");
    assert_eq!(error["code"], -32001, "{error}");
    let details = details(&error);
    let file = home.base().join("config.toml");
    for wanted in [
        "TEAAGENT_GRANTS='delete_note' (every call of the tool)".to_owned(),
        "TEAAGENT_PERMISSION_MODE=allow".to_owned(),
        "TEAAGENT_PREAPPROVE=sha256:".to_owned(),
        format!("in {} with grants = [\"delete_note\"]", file.display()),
        "`env` of its entry in the MCP client's configuration".to_owned(),
    ] {
        assert!(details.contains(&wanted), "no {wanted:?} in {details}");
    }
    for flag in ["--grant", "--preapprove", "--permission-mode"] {
        assert!(!details.contains(flag), "a flag this binary does not have: {details}");
    }
    // Read-only tools still run.
    let echo = server.request("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}));
    assert_eq!(echo["result"]["content"][0]["text"], "hi", "{echo}");
    server.finish();
}

#[test]
fn the_environment_grants_and_sets_the_mode() {
    let home = Tree::new();
    let mut granted = author("", &home);
    // One rule per line; blank lines and spaces are ignored; a rule may hold `;`.
    granted.env("TEAAGENT_GRANTS", "echo\n\n  delete_note;uses=5  \n");
    let mut server = RawServer::start(granted);
    server.initialize("2025-06-18");
    assert_eq!(delete_note(&mut server), Ok("deleted groceries".to_owned()));
    let stderr = stderr_at_exit(server);
    assert!(!stderr.contains("tools that need an approval"), "granted as a whole:\n{stderr}");

    let mut read_only = author("", &home);
    read_only.env("TEAAGENT_PERMISSION_MODE", "read-only");
    let mut server = RawServer::start(read_only);
    server.initialize("2025-06-18");
    let error = delete_note(&mut server).expect_err("read-only refuses it");
    assert_eq!(error["code"], -32001, "{error}");
    assert!(error["data"]["rule"].as_str().is_some_and(|r| r.contains("read-only")), "{error}");
    let stderr = server.stderr_once(|s| s.contains("in read-only mode"));
    let listed = stderr.lines().find(|l| l.contains("tools that need an approval in read-only mode: "));
    assert!(listed.is_some_and(|l| l.contains("delete_note (destructive")), "{stderr}");
    server.finish();

    let mut allow = author("", &home);
    allow.env("TEAAGENT_PERMISSION_MODE", "allow");
    let mut server = RawServer::start(allow);
    server.initialize("2025-06-18");
    assert_eq!(delete_note(&mut server), Ok("deleted groceries".to_owned()));
    server.finish();
}

#[test]
fn the_users_configuration_file_applies_and_the_environment_wins_over_it() {
    let home = Tree::new();
    home.write("config.toml", "grants = [\"delete_note\"]\n");
    let mut server = RawServer::start(author("", &home));
    server.initialize("2025-06-18");
    assert_eq!(delete_note(&mut server), Ok("deleted groceries".to_owned()));
    server.finish();

    home.write("config.toml", "permission_mode = \"read-only\"\n");
    let mut server = RawServer::start(author("", &home));
    server.initialize("2025-06-18");
    assert_eq!(delete_note(&mut server).expect_err("read-only")["code"], -32001);
    server.finish();

    let mut chosen = author("", &home);
    chosen.env("TEAAGENT_PERMISSION_MODE", "allow");
    let mut server = RawServer::start(chosen);
    server.initialize("2025-06-18");
    assert_eq!(delete_note(&mut server), Ok("deleted groceries".to_owned()), "the variable wins");
    server.finish();

    // The file is shared with `teaagent`: a section for one of its tools is not this server's
    // business (a warning, not a refusal to start).
    home.write("config.toml", "[tools.shell_exec]\ntimeout_secs = 5\n");
    let mut server = RawServer::start(author("", &home));
    server.initialize("2025-06-18");
    let stderr = server.stderr_once(|s| s.contains("ignored `tools.shell_exec`"));
    assert!(stderr.contains("WARN") && stderr.contains("this server has no such tool"), "{stderr}");
    server.finish();
}

#[test]
fn a_workspace_file_may_only_tighten_a_library_servers_policy() {
    let (tree, home) = (Tree::new(), Tree::new());
    let root = tree.root();
    home.write("config.toml", "grants = [\"delete_note\"]\n");
    tree.write("ws/.teaagent/config.toml", "permission_mode = \"allow\"\ngrants = [\"echo\"]\n");
    let in_workspace = |home: &Tree| {
        let mut cmd = author("workspace", home);
        cmd.env("AUTHOR_ROOT", &root);
        cmd
    };
    let mut server = RawServer::start(in_workspace(&home));
    server.initialize("2025-06-18");
    // The file's grant list has no `delete_note`: it takes the user's grant away, and adds none.
    assert_eq!(delete_note(&mut server).expect_err("grant removed")["code"], -32001);
    let stderr = server.stderr_once(|s| s.contains("ignored grant `echo`"));
    assert!(stderr.contains("may only tighten the mode"), "{stderr}");
    assert!(stderr.contains("ignored grant `echo`: a workspace file may only remove grants"), "{stderr}");
    server.finish();

    // What the user sets in the server's environment, the workspace cannot take back.
    let mut chosen = in_workspace(&home);
    chosen.env("TEAAGENT_GRANTS", "delete_note");
    let mut server = RawServer::start(chosen);
    server.initialize("2025-06-18");
    assert_eq!(delete_note(&mut server), Ok("deleted groceries".to_owned()));
    server.finish();
}

#[test]
fn without_a_home_there_is_no_user_file_and_the_variables_still_apply() {
    let home = Tree::new();
    let mut homeless = author("", &home);
    homeless.env_remove("TEAAGENT_HOME").env_remove("HOME").env("TEAAGENT_GRANTS", "delete_note");
    let mut server = RawServer::start(homeless);
    server.initialize("2025-06-18");
    assert_eq!(delete_note(&mut server), Ok("deleted groceries".to_owned()));
    server.finish();
}

#[test]
fn an_unusable_variable_or_file_stops_the_server_with_exit_2() {
    let home = Tree::new();
    for (var, value, says) in [
        ("TEAAGENT_PERMISSION_MODE", "yolo", "unknown permission mode `yolo`"),
        ("TEAAGENT_GRANTS", "delete_note;uses=many", "`uses` must be a number"),
        ("TEAAGENT_PREAPPROVE", "sha256:nope", "64 hex digits"),
    ] {
        let mut cmd = author("", &home);
        cmd.env(var, value);
        let out = cmd.stdin(Stdio::null()).output().expect("run the author binary");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{var}={value}: {stderr}");
        assert!(
            stderr.contains(&format!("environment variable {var}: ")) && stderr.contains(says),
            "{stderr}"
        );
        assert!(out.stdout.is_empty(), "nothing is served");
    }
    home.write("config.toml", "[tools.delete_note]\ntimeout_secs = 0\n");
    let out = author("", &home).stdin(Stdio::null()).output().expect("run the author binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("config.toml") && stderr.contains("`tools.delete_note.timeout_secs` = 0"),
        "{stderr}"
    );
}

#[test]
fn a_policy_fixed_in_code_ignores_the_environment_and_advises_code() {
    let home = Tree::new();
    home.write("config.toml", "grants = [\"delete_note\"]\n");
    let mut cmd = author("code-policy", &home);
    cmd.env("TEAAGENT_GRANTS", "delete_note").env("TEAAGENT_PERMISSION_MODE", "allow");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    let error = delete_note(&mut server).expect_err("the code's policy has no grant");
    let details = details(&error);
    assert!(details.contains(r#"`.grant("delete_note")?` (every call of the tool)"#), "{details}");
    assert!(details.contains("Policy::new(PermissionMode::Allow)"), "{details}");
    assert!(!details.contains("TEAAGENT_GRANTS") && !details.contains("--grant"), "{details}");
    let stderr = server.stderr_once(|s| s.contains("tools that need an approval"));
    assert!(stderr.contains(r#"`.grant("delete_note")`"#), "{stderr}");
    server.finish();
}

#[test]
fn serve_on_other_streams_reads_the_environment_only_when_asked() {
    let home = Tree::new();
    for (mode, runs) in [("serve-streams", false), ("serve-streams-environment", true)] {
        let mut cmd = author(mode, &home);
        cmd.env("TEAAGENT_GRANTS", "delete_note");
        let mut server = RawServer::start(cmd);
        server.initialize("2025-06-18");
        match delete_note(&mut server) {
            Ok(text) => assert!(runs, "{mode}: ran ({text})"),
            Err(error) => {
                assert!(!runs, "{mode}: {error}");
                assert!(details(&error).contains(r#".grant("delete_note")"#), "{mode}: {error}");
            }
        }
        server.finish();
    }
}

#[test]
fn the_command_names_its_flags_and_honours_the_variables() {
    let (tree, home) = (Tree::new(), Tree::new());
    let root = tree.root();
    std::fs::create_dir_all(&root).expect("root");
    std::fs::write(root.join("old.log"), "x").expect("file");
    let delete = json!({"name": "delete_path", "arguments": {"path": "old.log"}});

    let mut server = RawServer::start(teaagent_serve(&home, &root));
    server.initialize("2025-06-18");
    let refused = server.request("tools/call", delete.clone());
    let details = details(&refused["error"]);
    assert!(details.contains("--grant 'delete_path:path=old.log'"), "{details}");
    assert!(!details.contains("TEAAGENT_"), "{details}");
    let listed = |s: &str| s.contains("tools that need an approval in workspace-write mode");
    let stderr = server.stderr_once(listed);
    let line = stderr.lines().find(|l| listed(l)).unwrap_or_else(|| panic!("no listing:\n{stderr}"));
    assert!(line.contains("delete_path (destructive, tier high)") && line.contains("--grant"), "{line}");
    assert!(!line.contains("read_file"), "{line}");
    server.finish();
    assert!(root.join("old.log").exists());

    let mut granted = teaagent_serve(&home, &root);
    granted.env("TEAAGENT_GRANTS", "delete_path:path=*.log");
    let mut server = RawServer::start(granted);
    server.initialize("2025-06-18");
    let ran = server.request("tools/call", delete.clone());
    assert_eq!(ran["result"]["isError"], false, "{ran}");
    server.finish();
    assert!(!root.join("old.log").exists());

    // Flags win over the variables.
    std::fs::write(root.join("old.log"), "x").expect("file");
    let mut flagged = teaagent_serve(&home, &root);
    flagged.env("TEAAGENT_PERMISSION_MODE", "read-only").args(["--permission-mode", "allow"]);
    let mut server = RawServer::start(flagged);
    server.initialize("2025-06-18");
    let ran = server.request("tools/call", delete);
    assert_eq!(ran["result"]["isError"], false, "{ran}");
    server.finish();

    let mut bad = teaagent_serve(&home, &root);
    bad.env("TEAAGENT_PERMISSION_MODE", "yolo");
    let out = bad.stdin(Stdio::null()).output().expect("run teaagent");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("environment variable TEAAGENT_PERMISSION_MODE"));
}

/// A model-chosen value with a line break is never advised as a rule, by the shipped server
/// either: in `TEAAGENT_GRANTS` (one rule per line) `echo hi⏎shell_exec` would become a grant of
/// the whole tool once pasted. Only this exact call and the mode are advised.
#[test]
fn a_value_with_a_line_break_is_never_advised_as_a_rule() {
    let (tree, home) = (Tree::new(), Tree::new());
    let root = tree.root();
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root", root.to_str().expect("utf-8")])
        .env("TEAAGENT_HOME", home.base())
        .env_remove("RUST_LOG")
        .env_remove("TEAAGENT_GRANTS")
        .env_remove("TEAAGENT_PERMISSION_MODE");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    for (tool, arguments) in [
        ("shell_exec", json!({"command": "echo hi\nshell_exec"})),
        ("shell_exec", json!({"command": "echo hi\rshell_exec"})),
        ("delete_path", json!({"path": "a\ndelete_path"})),
    ] {
        let answer = server.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_eq!(answer["error"]["code"], -32001, "{answer}");
        let details = answer["error"]["data"]["details"].as_str().unwrap_or_default();
        assert!(!details.contains("--grant"), "{tool}: {details}");
        assert!(details.contains("--preapprove sha256:") && details.contains("line break"), "{details}");
    }
    server.finish();
}

/// Tool authors, round 2: a library server warns at start about a grant that names no tool of
/// its own, with the closest name (the call it meant is still refused: nothing is guessed).
#[test]
fn a_grant_that_names_no_tool_is_a_warning_with_the_closest_name() {
    let home = Tree::new();
    let mut cmd = author("serve-streams-environment", &home);
    cmd.env("TEAAGENT_GRANTS", "delete_notes");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    let warned = |s: &str| s.contains("did you mean `delete_note`?");
    let stderr = server.stderr_once(warned);
    assert!(
        stderr.contains("the grant `delete_notes` names no tool of this server; did you mean `delete_note`?"),
        "{stderr}"
    );
    assert!(delete_note(&mut server).is_err(), "nothing is guessed");
    server.finish();
}

/// Tool authors, round 2: the refusal's message carries the first way to allow the call (what
/// SDKs and clients show), phrased for this server; a server with a name of its own points to
/// its own settings file, whose grants apply to it alone, and one without says how to get one.
#[test]
fn the_refusal_says_how_to_allow_in_its_message_and_a_named_server_has_its_own_file() {
    let home = Tree::new();
    let mut server = RawServer::start(author("named", &home));
    server.initialize("2025-06-18");
    let error = delete_note(&mut server).expect_err("refused by default");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(
            "; allow it with TEAAGENT_GRANTS='delete_note' (every call of the tool) in the server's environment"
        ),
        "{message}"
    );
    let own = home.base().join("servers/author-notes.toml");
    assert!(
        details(&error).contains(&format!("in {} with grants = [\"delete_note\"]", own.display())),
        "{error}"
    );
    assert!(!details(&error).contains("Server::server_info"), "it has a name: {error}");
    server.finish();

    // A grant in its own file: this server runs the call ...
    home.write("servers/author-notes.toml", "grants = [\"delete_note\"]\n");
    let mut server = RawServer::start(author("named", &home));
    server.initialize("2025-06-18");
    assert_eq!(delete_note(&mut server).expect("granted in its own file"), "deleted groceries");
    server.finish();
    // ... and a server without a name still refuses it, and says how to get a file of its own.
    let mut server = RawServer::start(author("", &home));
    server.initialize("2025-06-18");
    let error = delete_note(&mut server).expect_err("not granted for this one");
    assert!(details(&error).contains("name this server with `Server::server_info`"), "{error}");
    server.finish();
}
