//! The policy over external tools against the real `teaagent` binary (the set-up:
//! `common/gateway_setup.rs`): a `high` external tool is refused in `workspace-write` without a
//! grant (and left out of `tools/list`), granted it runs; deny rules win; the audit names it; the
//! tool settings of external tools apply and never stop the server; a tier that is not one stops
//! it, naming the key.

use serde_json::json;

use crate::common::gateway_setup;
use gateway_setup::{Setup, call, text_of, tool_names};

#[test]
fn policy_applies_to_external_tools() {
    let setup = Setup::new("");
    setup.allow("rogue");
    // workspace-write, tier high by default: refused, so not shown.
    let mut server = setup.serve(&[]);
    let names = tool_names(&mut server);
    assert!(!names.iter().any(|n| n.starts_with("rogue__")), "always refused, not shown: {names:?}");
    let denied = call(&mut server, "rogue__echo", json!({"text": "x"}));
    assert_eq!(denied["error"]["code"], -32001, "{denied}");
    assert!(
        denied["error"]["data"]["rule"]
            .as_str()
            .is_some_and(|r| r.contains("tier `high`") || r.contains("destructive")),
        "{denied}"
    );
    server.finish();
    assert!(setup.marked("started").len() <= 1);

    // A grant for one tool: that one is shown and runs, the others stay out.
    let mut server = setup.serve(&["--grant", "rogue__echo"]);
    let names = tool_names(&mut server);
    assert!(
        names.iter().any(|n| n == "rogue__echo") && !names.iter().any(|n| n == "rogue__env"),
        "{names:?}"
    );
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "granted"}))), "echo: granted");
    server.finish();
    let audit = std::fs::read_to_string(setup.home.path("audit.jsonl")).expect("audit");
    assert!(audit.lines().any(|l| l.contains("rogue__echo") && l.contains("grant `rogue__echo`")), "{audit}");

    // A deny rule wins over the mode.
    setup.tree.write("ws/.teaagent/config.toml", "deny = [\"rogue__*\"]\n");
    let mut server = setup.serve(&["--permission-mode", "danger-full-access"]);
    assert!(!tool_names(&mut server).iter().any(|n| n.starts_with("rogue__")));
    let denied = call(&mut server, "rogue__echo", json!({"text": "x"}));
    assert_eq!(denied["error"]["code"], -32001, "{denied}");
    server.finish();

    // A tier the user lowered: medium is not destructive, so workspace-write runs it.
    let lowered = Setup::new("tier = \"medium\"\n");
    lowered.allow("rogue");
    let mut server = lowered.serve(&[]);
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "medium"}))), "echo: medium");
    server.finish();
}

#[test]
fn tool_settings_of_external_tools_apply_and_never_stop_the_server() {
    let setup = Setup::new("[tools.rogue__echo]\nrate_limit = { max_calls = 1, window_secs = 60 }\n");
    setup.allow("rogue");
    let mut server = setup.serve(&["--permission-mode", "allow"]);
    assert_eq!(text_of(&call(&mut server, "rogue__echo", json!({"text": "one"}))), "echo: one");
    let limited = call(&mut server, "rogue__echo", json!({"text": "two"}));
    assert_eq!(limited["error"]["code"], -32002, "{limited}");
    server.finish();
    // Denied: its settings have nothing to apply to, and the server still starts.
    assert!(setup.run(&["mcp", "trust", "deny", "rogue"]).status.success());
    let mut server = setup.serve(&[]);
    assert!(tool_names(&mut server).iter().any(|n| n == "read_file"));
    server.finish();
    let out = setup.run(&["run", "read_file", "--args", r#"{"path": "src/a.txt"}"#]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A typo for a tool of a running server is still an error.
    let typo = Setup::new("[tools.rogue__ecko]\ntimeout_secs = 5\n");
    typo.allow("rogue");
    let out = typo.run(&["run", "rogue__echo", "--args", r#"{"text": "x"}"#, "--permission-mode", "allow"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rogue__ecko"));
}

#[test]
fn a_tier_that_is_not_one_stops_the_server_naming_the_key() {
    let setup = Setup::new("tiers = { echo = \"harmless\" }\n");
    setup.allow("rogue");
    let out = setup.run(&["run", "read_file", "--args", r#"{"path": "src/a.txt"}"#]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mcp_servers.rogue.tiers.echo") && err.contains("harmless"), "{err}");
}
