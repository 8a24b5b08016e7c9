//! The set-up of the policy hardening tests (`hardening_policy_*.rs`): a server on a
//! workspace with a configuration and flags, one call of a tool, and the code of its answer.

use std::process::Command;

use serde_json::{Value, json};
use teaagent_tests::{Bin, RawServer, Tree};

/// `teaagent mcp serve` on `tree` with `flags`, its home holding `config` (TOML) if not empty.
pub(crate) fn serve(tree: &Tree, home: &Tree, config: &str, flags: &[&str]) -> RawServer {
    if !config.is_empty() {
        std::fs::write(home.base().join("config.toml"), config).expect("config");
    }
    let mut cmd = Command::new(Bin::Teaagent.path());
    cmd.args(["mcp", "serve", "--root"]).arg(tree.root()).args(flags).env("TEAAGENT_HOME", home.base());
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    // `initialize` is answered before the workspace lock is settled; any later line waits for
    // it, so after this answer the lock is this server's (or known to be another's).
    server.request("ping", json!({}));
    server
}

pub(crate) fn call(server: &mut RawServer, tool: &str, args: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": args}))
}

pub(crate) fn code(answer: &Value) -> i64 {
    if answer["result"].is_object() { 0 } else { answer["error"]["code"].as_i64().unwrap_or(i64::MIN) }
}
