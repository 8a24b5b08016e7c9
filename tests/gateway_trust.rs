//! The gateway's trust decisions against the real `teaagent` binary (the set-up:
//! `common/gateway_setup.rs`): denied, undecided and changed servers (changed arguments, changed
//! executable) are never started — no process is spawned, and stderr says which and why; the
//! trust check runs again before a restart; a pin tampered with or lost starts nothing; `trust
//! allow` shows everything the model will read, escaped and whole, and on a terminal asks first.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::{Bin, Tree};

use crate::common::gateway_setup;
use gateway_setup::{Setup, call, default_tools, text_of, tool_names, wait_until};

#[test]
fn denied_undecided_and_changed_servers_are_never_started() {
    let copy = Tree::new();
    let exe = copy.path("rogue-copy");
    std::fs::copy(Bin::Rogue.path(), &exe).expect("copy rogue");
    let extra = |name: &str, args: &str| {
        format!("[mcp_servers.{name}]\ncommand = {:?}\nargs = [{args}]\n", exe.display().to_string())
    };
    let setup = Setup::new("");
    let markers = setup.markers.display().to_string();
    let config = std::fs::read_to_string(setup.home.path("config.toml")).expect("config");
    let more = [
        extra("denied", &format!("\"--marker\", {markers:?}")),
        extra("undecided", &format!("\"--marker\", {markers:?}")),
        extra("moved", &format!("\"--marker\", {markers:?}")),
        extra("swapped", &format!("\"--marker\", {markers:?}")),
    ]
    .join("");
    setup.home.write("config.toml", &format!("{config}{more}"));
    setup.allow("rogue");
    setup.allow("moved");
    setup.allow("swapped");
    assert!(setup.run(&["mcp", "trust", "deny", "denied"]).status.success());
    // After the decisions: `moved` gets other arguments, `swapped`'s executable changes.
    let config = std::fs::read_to_string(setup.home.path("config.toml")).expect("config");
    let config = config.replace(
        &extra("moved", &format!("\"--marker\", {markers:?}")),
        &extra("moved", &format!("\"--marker\", {markers:?}, \"--noise\"")),
    );
    setup.home.write("config.toml", &config);
    let mut bytes = std::fs::read(&exe).expect("exe");
    bytes.extend_from_slice(b"\0tampered");
    std::fs::write(&exe, bytes).expect("tamper");
    setup.clear_markers();

    let mut server = setup.serve(&["--permission-mode", "allow"]);
    let names = tool_names(&mut server);
    assert!(names.iter().any(|n| n == "rogue__echo"), "{names:?}");
    for refused in ["denied", "undecided", "moved", "swapped"] {
        assert!(!names.iter().any(|n| n.starts_with(&format!("{refused}__"))), "{refused}: {names:?}");
    }
    let unknown = call(&mut server, "swapped__echo", json!({"text": "x"}));
    assert_eq!(unknown["error"]["code"], -32601, "unknown, never started: {unknown}");
    let stderr = server.stderr_once(|s| s.contains("`swapped`"));
    assert!(stderr.contains("not starting external server `denied`: denied"), "{stderr}");
    assert!(stderr.contains("not starting external server `undecided`: not decided"), "{stderr}");
    assert!(
        stderr.contains("not starting external server `moved`: changed since it was allowed (args"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "not starting external server `swapped`: changed since it was allowed (executable sha256"
        ),
        "{stderr}"
    );
    // Only rogue (the allowed, unchanged one) ever ran: one start marker, its own pid.
    let _ = text_of(&call(&mut server, "rogue__echo", json!({"text": "x"})));
    assert_eq!(setup.marked("started").len(), 1, "only rogue started");
    server.finish();
}

#[test]
fn the_trust_check_runs_again_before_a_restart() {
    let copy = Tree::new();
    let exe = copy.path("rogue-copy");
    std::fs::copy(Bin::Rogue.path(), &exe).expect("copy rogue");
    for change in ["deny", "executable"] {
        let setup = Setup::with_rogue(&exe, "");
        setup.allow("rogue");
        let mut server = setup.serve(&["--permission-mode", "allow"]);
        assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "up"}))), "echo: up");
        match change {
            "deny" => assert!(setup.run(&["mcp", "trust", "deny", "rogue"]).status.success()),
            _ => {
                // Replaced the way an update does it (a running executable cannot be written).
                let mut bytes = std::fs::read(&exe).expect("exe");
                bytes.extend_from_slice(b"\0swapped while running");
                let next = copy.path("rogue-next");
                std::fs::write(&next, bytes).expect("new version");
                std::fs::set_permissions(&next, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                    .expect("chmod");
                std::fs::rename(&next, &exe).expect("swap");
            }
        }
        let crashed = call(&mut server, "rogue__crash", json!({}));
        assert_eq!(crashed["error"]["data"]["reason"], "external_server_exited", "{crashed}");
        let mut last = Value::Null;
        wait_until(&format!("withheld after {change}"), Duration::from_secs(10), || {
            last = call(&mut server, "rogue__echo", json!({"text": "again"}));
            last["error"]["data"]["reason"] == "withheld"
        });
        let why = last["error"]["data"]["details"].as_str().expect("details").to_owned();
        match change {
            "deny" => assert!(why.contains("denied"), "{why}"),
            _ => assert!(why.contains("executable sha256"), "{why}"),
        }
        assert_eq!(setup.marked("started").len(), 1, "{change}: never started again");
        server.finish();
        let restored = copy.path("rogue-restored");
        std::fs::copy(Bin::Rogue.path(), &restored).expect("restore rogue");
        std::fs::rename(&restored, &exe).expect("restore rogue");
    }
}

#[test]
fn a_pin_that_was_tampered_with_or_lost_starts_nothing() {
    for damage in ["edit", "delete", "link"] {
        let setup = Setup::new("");
        setup.allow("rogue");
        let pin = std::fs::read_dir(setup.home.base())
            .expect("home")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("trust-tools-")))
            .expect("a pin file");
        match damage {
            "edit" => {
                let text = std::fs::read_to_string(&pin).expect("pin");
                std::fs::write(
                    &pin,
                    text.replace("Echo the text back.", "Echo, and mail ~/.aws/credentials."),
                )
                .expect("edit");
            }
            "delete" => std::fs::remove_file(&pin).expect("delete"),
            _ => {
                // The same content, but through a link: teaagent's own files are never read
                // through one (its target could be anything, a FIFO or /dev/zero included).
                let elsewhere = setup.tree.path("pin-elsewhere.json");
                std::fs::rename(&pin, &elsewhere).expect("move");
                std::os::unix::fs::symlink(&elsewhere, &pin).expect("link");
            }
        }
        let mut server = setup.serve(&["--permission-mode", "allow"]);
        assert!(!tool_names(&mut server).iter().any(|n| n.starts_with("rogue__")), "{damage}");
        let stderr = server.stderr_once(|s| s.contains("not starting external server `rogue`"));
        let says = match damage {
            "edit" => "does not match the record",
            "delete" => "is missing",
            _ => "cannot be read",
        };
        assert!(stderr.contains(says), "{damage}: {stderr}");
        assert!(setup.marked("started").is_empty(), "{damage}: never started");
        server.finish();
    }
}

#[test]
fn trust_allow_shows_everything_the_model_will_read_escaped_and_whole() {
    let setup = Setup::new("");
    let long = "x".repeat(3000);
    let mut tools = default_tools();
    tools[0]["description"] = json!(format!("Echo.\u{1b}]0;owned\u{7} {long} END"));
    setup.set_tools(&tools);
    let shown = setup.allow("rogue");
    assert!(shown.contains("\\e]0;owned\\u{7}"), "escaped: {shown}");
    assert!(!shown.contains('\u{1b}'));
    assert!(shown.contains(" END"), "nothing cut");
    assert!(shown.contains("inputSchema"), "the schemas too");
    let out = setup.run(&["mcp", "tools"]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        table.contains("rogue__echo") && table.contains("pinned; the server offers the same tools"),
        "{table}"
    );
    let json: Value = serde_json::from_slice(&setup.run(&["mcp", "tools", "--json"]).stdout).expect("json");
    let echo = json.as_array().expect("array").iter().find(|t| t["name"] == "rogue__echo").expect("listed");
    assert_eq!(echo["_meta"]["io.teaagent/server"], "rogue");
    // A server whose command cannot start: nothing is recorded.
    let broken = Setup::new("[mcp_servers.broken]\ncommand = \"/bin/false\"\n");
    let out = broken.run(&["mcp", "trust", "allow", "broken"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read the tools of `broken`"));
    let list = String::from_utf8_lossy(&broken.run(&["mcp", "trust", "list"]).stdout).into_owned();
    assert!(list.contains("not decided"), "{list}");
}

/// Runs `cmd` with stdin and stdout on a pseudo-terminal (stderr a pipe), typing `input`;
/// returns (what the terminal showed, stderr, exit code).
fn on_a_terminal(cmd: &Command, input: &str) -> (String, String, Option<i32>) {
    let script = r#"
import os, pty, subprocess, sys, time
master, slave = pty.openpty()
p = subprocess.Popen(sys.argv[2:], stdin=slave, stdout=slave, stderr=subprocess.PIPE)
os.close(slave)
time.sleep(1.5)
os.write(master, sys.argv[1].encode())
shown = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    shown += chunk
err = p.stderr.read()
p.wait(timeout=20)
sys.stdout.buffer.write(shown)
sys.stderr.buffer.write(err)
sys.exit(p.returncode)
"#;
    let mut python = Command::new("python3");
    python.args(["-c", script, input]).arg(cmd.get_program()).args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => python.env(key, v),
            None => python.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        python.current_dir(dir);
    }
    let out = python.output().expect("python3");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[test]
fn on_a_terminal_allow_asks_first_and_run_shows_text_escaped() {
    let setup = Setup::new("");
    let (shown, _, code) = on_a_terminal(&setup.command(&["mcp", "trust", "allow", "rogue"]), "n\n");
    assert_eq!(code, Some(0));
    assert!(shown.contains("tool echo") && shown.contains("nothing was recorded"), "{shown}");
    let list = String::from_utf8_lossy(&setup.run(&["mcp", "trust", "list"]).stdout).into_owned();
    assert!(list.contains("not decided"), "declined: {list}");
    let (shown, err, code) = on_a_terminal(&setup.command(&["mcp", "trust", "allow", "rogue"]), "y\n");
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("Allow `rogue` with these tools? [y/N]"), "{err}");
    assert!(shown.contains("allowed `rogue`"), "{shown}");
    // A tool's text drives no terminal: escaped when stdout is one.
    let (shown, err, code) = on_a_terminal(
        &setup.command(&[
            "run",
            "rogue__echo",
            "--args",
            r#"{"text": "\u001b]52;c;b3duZWQ=\u0007 clipboard"}"#,
            "--permission-mode",
            "allow",
        ]),
        "",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(shown.contains(r"echo: \e]52;c;b3duZWQ=\u{7} clipboard"), "{shown:?}");
    assert!(!shown.contains('\u{1b}'), "{shown:?}");
}
