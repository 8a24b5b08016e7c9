//! The first answer, early (`teaagent_core::server::early`): an `initialize` already waiting on
//! stdin is answered before the server is ready, and everything else about the first bytes is
//! left to the server — more lines in the same write, a line split across writes, a first line
//! that is not `initialize`, one too long to be read early, and a configuration that turns out
//! to be unusable after the handshake was answered.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::wire::RawServer;
use teaagent_tests::{Bin, Tree};

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"early","version":"0"}}}"#;

fn servers(ws: &Tree, home: &Tree) -> Vec<(Bin, Command)> {
    [Bin::Echo, Bin::Fixture, Bin::Teaagent]
        .into_iter()
        .map(|bin| {
            let mut cmd = Command::new(bin.path());
            if bin == Bin::Teaagent {
                cmd.args(["mcp", "serve", "--root"]).arg(ws.root());
            }
            cmd.env("TEAAGENT_HOME", home.base());
            (bin, cmd)
        })
        .collect()
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
fn a_first_line_split_across_writes_or_too_long_or_not_initialize_is_the_servers() {
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
        // Longer than what is read early (a client name of 100 KB): answered all the same.
        let mut server = RawServer::start(cmd);
        let long = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "n".repeat(100_000), "version": "0"}}});
        server.send_json(&long);
        assert_eq!(server.recv()["result"]["protocolVersion"], "2025-11-25", "{bin:?}");
        server.finish();
    }
    for (bin, cmd) in servers(&ws, &home) {
        // Not `initialize` first: the server's usual answer.
        let mut server = RawServer::start(cmd);
        let early = server.request("tools/list", json!({}));
        assert_eq!(early["error"]["data"]["reason"], "not_initialized", "{bin:?}: {early}");
        server.finish();
    }
}

#[test]
fn an_unusable_configuration_still_stops_the_server_with_exit_code_2() {
    let (ws, home) = (Tree::new(), Tree::new());
    std::fs::write(home.base().join("config.toml"), "permission_mode = \"yolo\"\n").expect("config");
    for (bin, mut cmd) in servers(&ws, &home) {
        if bin == Bin::Fixture {
            continue; // its policy is fixed in code: it reads no configuration file
        }
        let mut child =
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
        let mut stdin = child.stdin.take().expect("stdin");
        // The handshake is waiting before the configuration is read (or not: either way).
        let _ = stdin.write_all(format!("{INIT}\n").as_bytes());
        // Kept open: the server must stop on its own, not because its input ended.
        let mut out = String::new();
        child.stdout.take().expect("stdout").read_to_string(&mut out).expect("stdout");
        let mut err = String::new();
        child.stderr.take().expect("stderr").read_to_string(&mut err).expect("stderr");
        let status = child.wait().expect("exit");
        assert_eq!(status.code(), Some(2), "{bin:?}: {err}");
        assert!(err.contains("config.toml") && err.contains("yolo"), "{bin:?}: {err}");
        // At most the handshake's answer went out; nothing else.
        let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).expect("JSON-RPC")).collect();
        assert!(lines.len() <= 1, "{bin:?}: {out}");
        assert!(lines.iter().all(|l| l["id"] == "init" && l["result"].is_object()), "{bin:?}: {out}");
        drop(stdin);
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
