//! A server answers only once it is ready: the arguments, the configuration and the policy are
//! settled and the workspace lock is taken before the first byte goes to stdout. Seen from a
//! client: a server that cannot start never answers the handshake (whatever is wrong: a flag, a
//! digest, a configuration file, a rule); the configuration in force is the one read before the
//! first answer; the lock is held when the first answer leaves. And the first bytes are the
//! server's to frame, however they arrive.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::wire::RawServer;
use teaagent_tests::{Bin, Tree};

use crate::common::http as raw;

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"startup","version":"0"}}}"#;

/// `teaagent mcp serve --root WS` with `TEAAGENT_HOME=home`.
fn mcp_serve(ws: &Tree, home: &Tree) -> Command {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root"]).arg(ws.root());
    cmd.env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG");
    cmd
}

fn servers(ws: &Tree, home: &Tree) -> Vec<(Bin, Command)> {
    [Bin::Echo, Bin::Fixture, Bin::Teaagent]
        .into_iter()
        .map(|bin| {
            if bin == Bin::Teaagent {
                return (bin, mcp_serve(ws, home));
            }
            let mut cmd = Command::new(bin.path());
            cmd.env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG");
            (bin, cmd)
        })
        .collect()
}

/// Starts `cmd` with an `initialize` already waiting on its stdin (written before the process
/// can have read anything) and stdin kept open; returns its exit code, stdout and stderr.
fn start_with_handshake_waiting(mut cmd: Command) -> (Option<i32>, String, String) {
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    // A server that stops at once may be gone before the handshake is written: the write then
    // fails with a broken pipe, which is what it should do (nobody reads it), not a test failure.
    match stdin.write_all(format!("{INIT}\n").as_bytes()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => panic!("writing the handshake: {e}"),
    }
    let mut out = String::new();
    child.stdout.take().expect("stdout").read_to_string(&mut out).expect("stdout");
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr");
    let status = child.wait().expect("exit");
    drop(stdin);
    (status.code(), out, err)
}

#[test]
fn a_server_that_cannot_start_never_answers_the_handshake() {
    let ws = Tree::new();
    // Each: the flags, the user's configuration file, what stderr must name.
    let cases: [(&[&str], &str, &str); 6] = [
        (&["--preapprove", "sha256:0123"], "", "--preapprove"),
        (&["--grant", "wirte_file"], "", "wirte_file"),
        (&["--permission-mode", "yolo"], "", "yolo"),
        (&["--no-such-flag"], "", "--no-such-flag"),
        (&[], "permission_mode = \"yolo\"\n", "yolo"),
        (&[], "grants = [\"write_file:path=[\"]\n", "config.toml"),
    ];
    for (flags, config, named) in cases {
        let home = Tree::new();
        if !config.is_empty() {
            home.write("config.toml", config);
        }
        let mut cmd = mcp_serve(&ws, &home);
        cmd.args(flags);
        let (code, out, err) = start_with_handshake_waiting(cmd);
        assert_eq!(code, Some(2), "{flags:?} {config:?}: a usage error\n{err}");
        assert!(out.is_empty(), "{flags:?} {config:?}: the handshake was answered: {out}");
        assert!(err.contains(named), "{flags:?} {config:?}: stderr names {named}\n{err}");
    }
    // A server built on the library (the echo example) reads the same configuration from the
    // environment, and stops the same way.
    let home = Tree::new();
    home.write("config.toml", "permission_mode = \"yolo\"\n");
    let mut cmd = Command::new(Bin::Echo.path());
    cmd.env("TEAAGENT_HOME", home.base());
    let (code, out, err) = start_with_handshake_waiting(cmd);
    assert_eq!(code, Some(2), "echo: {err}");
    assert!(out.is_empty(), "echo: the handshake was answered: {out}");
    assert!(err.contains("config.toml") && err.contains("yolo"), "echo: {err}");
}

#[test]
fn the_configuration_in_force_is_the_one_read_before_the_first_answer() {
    let (ws, home) = (Tree::new(), Tree::new());
    home.write("config.toml", "permission_mode = \"read-only\"\n");
    let mut server = RawServer::start(mcp_serve(&ws, &home));
    server.initialize("2025-06-18");
    // Loosened the moment the handshake is answered: too late, the server read it already.
    home.write("config.toml", "permission_mode = \"allow\"\n");
    let call = server.request(
        "tools/call",
        json!({"name": "write_file", "arguments": {"path": "loosened.txt", "content": "x"}}),
    );
    assert_eq!(call["error"]["code"], -32001, "read-only was in force: {call}");
    assert!(!ws.root().join("loosened.txt").exists());
    server.finish();

    // And the other way: allowed when read, tightened after the handshake.
    home.write("config.toml", "permission_mode = \"allow\"\n");
    let mut server = RawServer::start(mcp_serve(&ws, &home));
    server.initialize("2025-06-18");
    home.write("config.toml", "permission_mode = \"read-only\"\n");
    let call = server.request(
        "tools/call",
        json!({"name": "write_file", "arguments": {"path": "allowed.txt", "content": "x"}}),
    );
    assert!(call["result"].is_object(), "allow was in force: {call}");
    assert!(ws.root().join("allowed.txt").exists());
    server.finish();
}

fn lock_owners(home: &Path) -> Vec<u64> {
    let Ok(text) = std::fs::read_to_string(home.join("workspace_registry.json")) else { return Vec::new() };
    let file: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    file["locks"].as_array().into_iter().flatten().filter_map(|r| r["owner_pid"].as_u64()).collect()
}

/// The names of a process's threads (as `/proc` gives them: 15 bytes at most).
fn thread_names(pid: u32) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("tasks");
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .collect()
}

#[test]
fn a_server_whose_tools_block_has_its_blocking_thread_before_the_first_call() {
    // `teaagent mcp serve`'s tools run on the blocking pool: its first thread is made at start,
    // beside the rest of the start, so the first call does not wait while it is made. No call is
    // made here: without that, no such thread would ever appear. The echo's tool is async: it
    // makes none.
    for (bin, blocking) in [(Bin::Teaagent, true), (Bin::Echo, false)] {
        let (ws, home) = (Tree::new(), Tree::new());
        let cmd = match bin {
            Bin::Teaagent => mcp_serve(&ws, &home),
            _ => {
                let mut cmd = Command::new(bin.path());
                cmd.env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG");
                cmd
            }
        };
        let mut server = RawServer::start(cmd);
        server.send(INIT);
        assert_eq!(server.recv()["id"], "init", "{bin:?}");
        // A new thread names itself once it runs: a moment after it is made.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let pool = || thread_names(server.pid()).iter().any(|name| name.starts_with("tokio-"));
        while blocking && !pool() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(pool(), blocking, "{bin:?}: threads {:?}", thread_names(server.pid()));
        server.finish();
    }
}

#[test]
fn the_lock_is_held_when_the_first_answer_leaves() {
    // Over stdio, for the command and for a server built on the library (the fixture locks its
    // root): the registry names the server before its first answer is read.
    for bin in [Bin::Teaagent, Bin::Fixture] {
        let (ws, home) = (Tree::new(), Tree::new());
        let cmd = match bin {
            Bin::Teaagent => mcp_serve(&ws, &home),
            _ => {
                let mut cmd = Command::new(bin.path());
                cmd.env("FIXTURE_ROOT", ws.root()).env("FIXTURE_MODE", "allow");
                cmd.env("TEAAGENT_HOME", home.base()).env_remove("RUST_LOG");
                cmd
            }
        };
        let mut server = RawServer::start(cmd);
        server.send(INIT);
        let answer = server.recv();
        assert_eq!(answer["id"], "init", "{bin:?}: {answer}");
        assert_eq!(lock_owners(&home.base()), vec![u64::from(server.pid())], "{bin:?}: the lock is held");
        server.finish();
    }
    // Over HTTP, the first answer of either era.
    for first in ["initialize", "server/discover"] {
        let (ws, home) = (Tree::new(), Tree::new());
        let server = raw::Http::teaagent(&ws, &home, &[], &[]);
        if first == "initialize" {
            // (It checks the answer: 200, the version, a session id.)
            raw::open_session(&server, &[], json!({}));
        } else {
            let reply = server.post(&raw::request(1, "server/discover", json!({})));
            assert_eq!(reply.status, 200, "{reply:?}");
        }
        assert_eq!(
            lock_owners(&home.base()),
            vec![u64::from(server.child.id())],
            "{first}: the lock is held"
        );
    }
}

#[test]
fn the_handshake_and_the_lines_behind_it_in_one_write() {
    let (ws, home) = (Tree::new(), Tree::new());
    for (bin, cmd) in servers(&ws, &home) {
        let mut server = RawServer::start(cmd);
        let mut burst = format!("{INIT}\n");
        burst.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        burst.push_str("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
        burst.push_str("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
        server.send_raw(burst.as_bytes());
        let init = server.recv();
        assert_eq!(init["id"], "init", "{bin:?}: the handshake is answered first: {init}");
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{bin:?}");
        assert_eq!(init["result"]["serverInfo"]["name"], "teaagent");
        let resources = init["result"]["capabilities"].get("resources").is_some();
        assert_eq!(resources, bin == Bin::Teaagent, "{bin:?}: the capabilities are the server's own");
        assert!(server.response(&json!(2))["result"]["tools"].is_array(), "{bin:?}");
        assert_eq!(server.response(&json!(3))["result"], json!({}), "{bin:?}");
        // A second `initialize` is refused as always.
        let again = server.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}));
        assert_eq!(again["error"]["data"]["reason"], "already_initialized", "{bin:?}: {again}");
        server.finish();
    }
}

#[test]
fn a_first_line_split_across_writes_or_long_or_not_initialize() {
    let (ws, home) = (Tree::new(), Tree::new());
    for (bin, cmd) in servers(&ws, &home) {
        // Split: half now, the rest later.
        let mut server = RawServer::start(cmd);
        let (head, tail) = INIT.split_at(40);
        server.send_raw(head.as_bytes());
        std::thread::sleep(Duration::from_millis(150));
        server.send_raw(format!("{tail}\n").as_bytes());
        assert_eq!(server.recv()["result"]["serverInfo"]["name"], "teaagent", "{bin:?}");
        server.finish();
    }
    for (bin, cmd) in servers(&ws, &home) {
        // A client name of 100 KB: answered all the same.
        let mut server = RawServer::start(cmd);
        let long = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "n".repeat(100_000), "version": "0"}}});
        server.send_json(&long);
        assert_eq!(server.recv()["result"]["protocolVersion"], "2025-11-25", "{bin:?}");
        server.finish();
    }
    for (bin, cmd) in servers(&ws, &home) {
        // Not `initialize` first: refused, and the session can still begin.
        let mut server = RawServer::start(cmd);
        let early = server.request("tools/list", json!({}));
        assert_eq!(early["error"]["data"]["reason"], "not_initialized", "{bin:?}: {early}");
        server.finish();
    }
}

#[test]
fn a_signal_before_any_line_still_stops_the_server_cleanly() {
    let (ws, home) = (Tree::new(), Tree::new());
    for (bin, cmd) in servers(&ws, &home) {
        let server = RawServer::start(cmd);
        std::thread::sleep(Duration::from_millis(200));
        server.signal("TERM");
        let mut server = server;
        let status = server.wait(Duration::from_secs(10));
        assert!(status.success(), "{bin:?}: {status}");
    }
}
