//! `teaagent doctor` against the real binary, real files, real processes and a real Redis: each
//! thing that goes wrong is found, named and given a fix; a sound set-up has no error; nothing
//! is changed; every value read from a file is shown escaped.

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use teaagent_tests::services::{Redis, Resp};
use teaagent_tests::{Bin, Tree};

use crate::common::gateway_setup;
use gateway_setup::Setup;

/// The variables where clients' files are looked for.
const CLIENT_VARS: [&str; 5] =
    ["XDG_CONFIG_HOME", "APPDATA", "USERPROFILE", "CODEX_HOME", "CLAUDE_CONFIG_DIR"];

/// `teaagent doctor ARGS` in `setup`'s home and workspace; `HOME` is the teaagent home's
/// parent directory's stand-in (`setup.home`), so no real client's file is read.
fn doctor(setup: &Setup, args: &[&str]) -> Output {
    let root = setup.tree.root();
    let mut all = vec!["doctor", "--root", root.to_str().expect("utf-8")];
    all.extend_from_slice(args);
    let mut cmd = setup.command(&all);
    cmd.env("HOME", setup.home.path("user"));
    for var in CLIENT_VARS {
        cmd.env_remove(var);
    }
    cmd.stdin(Stdio::null()).output().expect("run teaagent doctor")
}

/// The `--json` report and the exit code.
fn report(setup: &Setup, args: &[&str]) -> (Value, Option<i32>) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = doctor(setup, &all);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let report = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"));
    (report, out.status.code())
}

/// The findings of `check` (and, when given, about `subject`).
fn findings<'a>(report: &'a Value, check: &str) -> Vec<&'a Value> {
    report["findings"].as_array().expect("findings").iter().filter(|f| f["check"] == check).collect()
}

fn only<'a>(report: &'a Value, check: &str) -> &'a Value {
    let found = findings(report, check);
    assert_eq!(found.len(), 1, "one `{check}` finding expected: {report:#}");
    found[0]
}

fn errors(report: &Value) -> Vec<&Value> {
    report["findings"].as_array().expect("findings").iter().filter(|f| f["status"] == "error").collect()
}

#[test]
fn a_sound_set_up_has_no_error_and_a_broken_config_is_named_with_its_fix() {
    let setup = Setup::new("");
    setup.allow("rogue");
    setup.home.write("tokens", "ci:0123456789abcdef0123456789\n");
    std::fs::set_permissions(setup.home.path("tokens"), std::fs::Permissions::from_mode(0o600))
        .expect("chmod");
    let (sound, code) = report(&setup, &[]);
    assert_eq!(code, Some(0), "{sound:#}");
    assert_eq!(sound["ok"], true);
    assert!(errors(&sound).is_empty(), "{sound:#}");
    for check in ["binary", "home", "config", "lock", "external", "token-file"] {
        assert!(!findings(&sound, check).is_empty(), "no `{check}` finding: {sound:#}");
    }
    let rogue = only(&sound, "external");
    assert_eq!(rogue["subject"], "rogue");
    assert_eq!(rogue["status"], "ok", "{rogue}");
    assert_eq!(only(&sound, "token-file")["status"], "ok");

    // A typo in the user's file: an error that names the file and the key, with a fix, exit 1.
    let config = std::fs::read_to_string(setup.home.path("config.toml")).expect("config");
    setup.home.write("config.toml", &format!("permision_mode = \"read-only\"\n{config}"));
    let (broken, code) = report(&setup, &[]);
    assert_eq!(code, Some(1), "{broken:#}");
    assert_eq!(broken["ok"], false);
    let error = only(&broken, "config");
    assert_eq!(error["status"], "error");
    let message = error["message"].as_str().expect("message");
    assert!(message.contains("config.toml") && message.contains("permision_mode"), "{message}");
    assert!(error["fix"].is_string(), "{error}");
    // As a person reads it: the status, the check, the fix on its own line.
    let text = String::from_utf8(doctor(&setup, &[]).stdout).expect("utf-8");
    assert!(text.lines().any(|l| l.starts_with("error") && l.contains("permision_mode")), "{text}");
    assert!(text.lines().any(|l| l.trim_start().starts_with("fix: edit the file")), "{text}");
    assert!(text.trim_end().ends_with("see the fixes above"), "{text}");
}

#[test]
fn a_changed_executable_and_an_undecided_server_are_found() {
    let copy = Tree::new();
    let exe = copy.path("rogue-copy");
    std::fs::copy(Bin::Rogue.path(), &exe).expect("copy rogue");
    let extra = format!("[mcp_servers.later]\ncommand = {:?}\n", exe.display().to_string());
    let setup = Setup::with_rogue(&exe, &extra);
    setup.allow("rogue");
    let (before, _) = report(&setup, &[]);
    let by_name = |report: &Value, name: &str| -> Value {
        findings(report, "external").into_iter().find(|f| f["subject"] == name).cloned().expect(name)
    };
    assert_eq!(by_name(&before, "rogue")["status"], "ok");
    let later = by_name(&before, "later");
    assert_eq!(later["status"], "warning", "{later}");
    assert!(later["fix"].as_str().expect("fix").contains("teaagent mcp trust allow later"), "{later}");

    let mut bytes = std::fs::read(&exe).expect("exe");
    bytes.extend_from_slice(b"\0changed");
    std::fs::write(&exe, bytes).expect("change the executable");
    let (after, code) = report(&setup, &[]);
    assert_eq!(code, Some(1), "{after:#}");
    let rogue = by_name(&after, "rogue");
    assert_eq!(rogue["status"], "error", "{rogue}");
    assert!(rogue["message"].as_str().expect("message").contains("changed since it was allowed"), "{rogue}");
    assert!(rogue["fix"].as_str().expect("fix").contains("teaagent mcp trust inspect rogue"), "{rogue}");

    std::fs::remove_file(&exe).expect("remove the executable");
    let (gone, _) = report(&setup, &[]);
    let rogue = by_name(&gone, "rogue");
    assert_eq!(rogue["status"], "error");
    assert!(rogue["message"].as_str().expect("message").contains("not found"), "{rogue}");
}

#[test]
fn the_lock_holder_is_named_alive_and_then_stale() {
    let setup = Setup::new("");
    let (free, _) = report(&setup, &[]);
    assert_eq!(only(&free, "lock")["status"], "ok");

    let mut server = setup.serve_raw(&["--permission-mode", "read-only"]);
    let pid = server.pid();
    // The server takes its lock before it answers anything.
    server.initialize("2025-11-25");
    let (held, code) = report(&setup, &[]);
    assert_eq!(code, Some(0), "a held lock is a warning: {held:#}");
    let lock = only(&held, "lock");
    assert_eq!(lock["status"], "warning", "{lock}");
    assert!(lock["message"].as_str().expect("message").contains(&format!("pid {pid}")), "{lock}");
    assert!(lock["fix"].as_str().expect("fix").contains(&format!("kill {pid}")), "{lock}");

    // Killed (as a crash would): its record stays, and is shown as stale.
    let killed = Command::new("kill").args(["-KILL", &pid.to_string()]).status().expect("kill");
    assert!(killed.success());
    let gone = Instant::now();
    while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z")) {
        assert!(gone.elapsed() < Duration::from_secs(10), "pid {pid} did not die");
        std::thread::sleep(Duration::from_millis(10));
    }
    let (stale, _) = report(&setup, &[]);
    let lock = only(&stale, "lock");
    assert_eq!(lock["status"], "ok", "{lock}");
    let message = lock["message"].as_str().expect("message");
    assert!(message.contains("stale") && message.contains(&format!("pid {pid}")), "{message}");
    // The doctor changed nothing: the stale record is still there.
    let registry = std::fs::read_to_string(setup.home.path("workspace_registry.json")).expect("registry");
    assert!(
        registry.contains(&format!("\"owner_pid\": {pid}"))
            || registry.contains(&format!("\"owner_pid\":{pid}")),
        "{registry}"
    );
}

#[test]
fn loose_permissions_and_bad_tokens_are_errors_and_no_token_is_ever_shown() {
    let setup = Setup::new("");
    let tokens = setup.home.path("tokens");
    setup.home.write("tokens", "ci:0123456789abcdef-secret-0123\n");
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let (loose, code) = report(&setup, &[]);
    assert_eq!(code, Some(1));
    let finding = only(&loose, "token-file");
    assert_eq!(finding["status"], "error");
    assert!(finding["fix"].as_str().expect("fix").contains("chmod 600"), "{finding}");

    // A named file with a guessable token: which line, never the token.
    let other = setup.tree.path("short-tokens");
    std::fs::write(&other, "# tokens\nci:short-secret\n").expect("write");
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let out = doctor(&setup, &["--http-token-file", other.to_str().expect("utf-8")]);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains("line 2"), "{text}");
    assert!(!text.contains("short-secret"), "a token was shown:\n{text}");

    // A home others may write, and a trust store others may write.
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    setup.allow("rogue");
    std::fs::set_permissions(setup.home.path("trust.json"), std::fs::Permissions::from_mode(0o664))
        .expect("chmod");
    std::fs::set_permissions(setup.home.base(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let (open, _) = report(&setup, &[]);
    let home: Vec<&Value> = findings(&open, "home").into_iter().filter(|f| f["status"] == "error").collect();
    assert!(home.iter().any(|f| f["fix"].as_str().unwrap_or("").starts_with("chmod 700")), "{open:#}");
    assert!(
        home.iter().any(|f| f["subject"].as_str().unwrap_or("").ends_with("trust.json")
            && f["fix"].as_str().unwrap_or("").starts_with("chmod 600")),
        "{open:#}"
    );
    std::fs::set_permissions(setup.home.base(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
}

#[test]
fn redis_is_reached_and_given_the_scripts_or_named_unreachable() {
    let redis = Redis::start();
    let setup = Setup::new(&format!("[state]\nredis_url = {:?}\n", redis.url()));
    let (up, code) = report(&setup, &[]);
    let fleet = only(&up, "fleet");
    assert_eq!(fleet["status"], "ok", "{up:#}");
    assert_eq!(code, Some(0), "{up:#}");
    assert!(fleet["message"].as_str().expect("message").contains("3 scripts"), "{fleet}");
    // Redis has them now: a replica's first call finds them loaded.
    match redis.command(&["INFO", "memory"]) {
        Ok(Resp::Bulk(Some(info))) => {
            let info = String::from_utf8_lossy(&info);
            assert!(info.contains("number_of_cached_scripts:3"), "{info}");
        }
        other => panic!("INFO memory: {other:?}"),
    }

    let down = Setup::new("[state]\nredis_url = \"redis://127.0.0.1:1\"\ntimeout_ms = 300\n");
    let started = Instant::now();
    let (report_down, code) = report(&down, &[]);
    assert!(started.elapsed() < Duration::from_secs(10), "the check waited {:?}", started.elapsed());
    assert_eq!(code, Some(1));
    let fleet = only(&report_down, "fleet");
    assert_eq!(fleet["status"], "error", "{fleet}");
    assert!(fleet["fix"].as_str().expect("fix").contains("start Redis"), "{fleet}");
}

#[test]
fn nothing_is_created_and_hostile_names_are_shown_escaped() {
    let base = Tree::new();
    let home = base.path("no-home-yet");
    let out = Command::new(Bin::Teaagent.path())
        .args(["doctor", "--root"])
        .arg(base.root())
        .env("TEAAGENT_HOME", &home)
        .stdin(Stdio::null())
        .output()
        .expect("doctor");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!home.exists(), "the doctor created the home");

    // A server whose name and command carry terminal escapes: shown escaped, never raw.
    let setup =
        Setup::new("[mcp_servers.\"evil\\u001b[2J\"]\ncommand = \"/nonexistent/\\u001b]0;pwned\\u0007\"\n");
    let out = doctor(&setup, &[]);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "a raw control character reached stdout:\n{text:?}"
    );
    assert!(text.contains(r"evil\e[2J"), "{text}");
    let json = doctor(&setup, &["--json"]);
    assert!(!json.stdout.contains(&0x1b), "raw escape in --json");
}

#[test]
fn client_entries_that_name_a_missing_binary_or_root_are_found() {
    let setup = Setup::new("");
    let user = setup.home.path("user");
    // Installed by the real command (Cursor counts as installed once its directory exists): sound.
    std::fs::create_dir_all(user.join(".cursor")).expect("mkdir");
    let root = setup.tree.root();
    let out = setup
        .command(&["mcp", "install", "cursor", "--root", root.to_str().expect("utf-8")])
        .env("HOME", &user)
        .stdin(Stdio::null())
        .output()
        .expect("install");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Written by hand: a binary that is gone, a root that is gone; and a file that does not parse.
    std::fs::create_dir_all(user.join(".codeium/windsurf")).expect("mkdir");
    std::fs::write(
        user.join(".codeium/windsurf/mcp_config.json"),
        r#"{"mcpServers": {"old": {"command": "/nonexistent/bin/teaagent", "args": ["mcp", "serve", "--root", "/tmp"]},
           "moved": {"command": "/bin/sh", "args": ["mcp", "serve", "--root", "/nonexistent/project"]},
           "other": {"command": "/nonexistent/other-server"}}}"#,
    )
    .expect("write");
    std::fs::create_dir_all(user.join(".gemini")).expect("mkdir");
    std::fs::write(user.join(".gemini/settings.json"), "{ \"mcpServers\": ").expect("write");

    let (report, code) = report(&setup, &[]);
    assert_eq!(code, Some(1), "{report:#}");
    let clients = findings(&report, "client");
    let about = |part: &str| -> &Value {
        clients
            .iter()
            .find(|f| f["subject"].as_str().unwrap_or("").contains(part))
            .copied()
            .unwrap_or_else(|| panic!("no finding about {part}: {report:#}"))
    };
    let cursor = about("Cursor");
    assert_eq!(cursor["status"], "ok", "{cursor}");
    let old = about(": old");
    assert_eq!(old["status"], "error", "{old}");
    assert!(old["fix"].as_str().expect("fix").contains("teaagent mcp install windsurf"), "{old}");
    let moved = about(": moved");
    assert_eq!(moved["status"], "error", "{moved}");
    assert!(moved["message"].as_str().expect("message").contains("/nonexistent/project"), "{moved}");
    // Another server's entry is not teaagent's business.
    assert!(!clients.iter().any(|f| f["subject"].as_str().unwrap_or("").contains(": other")), "{report:#}");
    let gemini = about("Gemini");
    assert_eq!(gemini["status"], "error", "{gemini}");
}

#[test]
fn a_home_that_is_a_link_or_holds_one_is_an_error_and_nothing_is_followed() {
    let setup = Setup::new("");
    // A file of the home that is a link (to a configuration that would loosen everything).
    let elsewhere = setup.tree.path("elsewhere.toml");
    std::fs::write(&elsewhere, "permission_mode = \"danger-full-access\"\n").expect("write");
    let config = setup.home.path("config.toml");
    let kept = std::fs::read(&config).ok();
    let _ = std::fs::remove_file(&config);
    std::os::unix::fs::symlink(&elsewhere, &config).expect("link");
    let (linked, code) = report(&setup, &[]);
    assert_eq!(code, Some(1), "{linked:#}");
    assert!(
        findings(&linked, "home").iter().any(|f| f["status"] == "error"
            && f["subject"].as_str().unwrap_or("").ends_with("config.toml")
            && f["message"].as_str().unwrap_or("").contains("symbolic link")),
        "{linked:#}"
    );
    assert!(!linked.to_string().contains("danger-full-access"), "the link was followed: {linked:#}");
    std::fs::remove_file(&config).expect("unlink");
    if let Some(kept) = kept {
        std::fs::write(&config, kept).expect("restore");
    }

    // The home itself given through a link.
    let link = setup.tree.path("home-link");
    std::os::unix::fs::symlink(setup.home.base(), &link).expect("link");
    let root = setup.tree.root();
    let out = setup
        .command(&["doctor", "--json", "--root", root.to_str().expect("utf-8")])
        .env("TEAAGENT_HOME", &link)
        .env("HOME", setup.home.path("user"))
        .stdin(Stdio::null())
        .output()
        .expect("run teaagent doctor");
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let home = only(&report, "home");
    assert_eq!(home["status"], "error", "{report:#}");
    assert_eq!(home["fix"], "set TEAAGENT_HOME to the directory the link points to", "{report:#}");
}
