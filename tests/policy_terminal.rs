//! Session approvals on the controlling terminal, for clients that cannot show a question: the
//! server asks on `/dev/tty` (a pseudo-terminal made by `scripts/with_tty.py`), never on stdin,
//! which carries the protocol. Only "yes" or "session" approves; anything else, or no answer in
//! time, denies.

use std::path::Path;
use std::process::Command;

use serde_json::json;
use teaagent_tests::{Bin, RawServer, Tree};

fn server(tree: &Tree, home: &Tree, answers: &str) -> RawServer {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/with_tty.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script)
        .arg(answers)
        .arg(Bin::Fixture.path())
        .env("FIXTURE_ROOT", tree.root())
        .env("TEAAGENT_HOME", home.base())
        .env("FIXTURE_MODE", "prompt")
        .env("FIXTURE_ASK_TIMEOUT_MS", "1500");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    server
}

fn launch(server: &mut RawServer, command: &str) -> serde_json::Value {
    server.request("tools/call", json!({"name": "launch", "arguments": {"command": command}}))
}

#[test]
fn yes_once_and_yes_for_the_session_approve() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = server(&tree, &home, "y,s,n");
    let first = launch(&mut server, "cargo test");
    assert_eq!(first["result"]["content"][0]["text"], "launched cargo test", "{first}\n{}", server.stderr());
    assert!(launch(&mut server, "cargo build")["result"].is_object(), "answered `s`");
    assert!(
        launch(&mut server, "cargo build")["result"].is_object(),
        "the session answer needs no new question"
    );
    let denied = launch(&mut server, "cargo doc");
    assert_eq!(denied["error"]["code"], -32001, "answered `n`: {denied}");
    assert!(denied["error"]["data"]["rule"].as_str().unwrap_or_default().contains("denied on the terminal"));
    // The answers were given at start: the questions may not all be collected yet.
    let terminal = server.stderr_once(|e| e.matches("allow?").count() >= 3);
    assert!(
        terminal.contains("Allow `launch` (tier high") && terminal.contains("command: cargo test"),
        "{terminal}"
    );
    assert_eq!(terminal.matches("allow?").count(), 3, "three questions were asked:\n{terminal}");
    server.finish();
}

#[test]
fn silence_is_a_denial() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = server(&tree, &home, "-");
    let denied = launch(&mut server, "cargo test");
    assert_eq!(denied["error"]["code"], -32001, "{denied}");
    assert!(
        denied["error"]["data"]["rule"].as_str().unwrap_or_default().contains("no answer on the terminal"),
        "{denied}"
    );
    // The protocol still works; the question did not read stdin.
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    server.finish();
}
