//! The set-up of the shell hardening tests (`hardening_shell_*.rs`): a server that runs
//! commands without asking, and one call of a tool.

use std::process::Command;

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

/// A server on a fresh workspace in `danger-full-access` (no approval questions), with `env`.
pub(crate) fn serve(tree: &Tree, home: &Tree, env: &[(&str, &str)]) -> RawServer {
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--permission-mode", "danger-full-access", "--root"])
        .arg(tree.root())
        .env("TEAAGENT_HOME", home.base());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    server
}

pub(crate) fn call(server: &mut RawServer, tool: &str, arguments: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": arguments}))
}
