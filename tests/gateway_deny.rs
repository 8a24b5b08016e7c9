//! Hardening round 3, "deny rules bind external tools": with `deny = ["*:path=secrets/**",
//! "*:command=rm*"]`, an external tool's arguments are checked like the built-in tools' — against
//! the real `teaagent` binary and `rogue` offering a file server's and a shell server's tools:
//!
//! - arguments get roles from their schemas, conservatively (`path`, `file`, `filePath`, a list
//!   of `paths`, a description that says "file"; `command`, `cmd`), and from
//!   `[mcp_servers.NAME.roles]`;
//! - a path is matched where it leads (`.`/`..`, absolute, through a link, not there yet), a
//!   command word by word whatever its argument is called; what the rules refuse never reaches
//!   the server, and what they allow does;
//! - fail closed: a tool a rule names whose arguments cannot be checked (a free-text `query`, an
//!   object) is left out and refused, and the start says so and how to declare them; an
//!   argument the schema does not declare refuses the call.

use serde_json::{Value, json};
use teaagent_tests::Bin;

use crate::common::gateway_setup;
use gateway_setup::{Setup, call, text_of, tool_names};

fn tools() -> Value {
    let string = json!({"type": "string"});
    json!([
        {"name": "read_file", "description": "Read a file.", "inputSchema": {"type": "object", "properties": {"path": string}}},
        {"name": "read", "description": "Read.", "inputSchema": {"type": "object", "properties": {"filePath": string, "limit": {"type": "integer"}}}},
        {"name": "read_many", "description": "Read several.", "inputSchema": {"type": "object", "properties": {"paths": {"type": "array", "items": string}}}},
        {"name": "open", "description": "Open.", "inputSchema": {"type": "object", "properties": {"where": {"type": "string", "description": "The file to open."}}}},
        {"name": "run", "description": "Run a command.", "inputSchema": {"type": "object", "properties": {"command": string}}},
        {"name": "exec", "description": "Execute.", "inputSchema": {"type": "object", "properties": {"cmd": string, "mode": {"type": "string", "enum": ["fast", "slow"]}}}},
        {"name": "search", "description": "Search.", "inputSchema": {"type": "object", "properties": {"query": string}}},
        {"name": "configure", "description": "Configure.", "inputSchema": {"type": "object", "properties": {"options": {"type": "object"}}}},
        {"name": "count", "description": "Count.", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    ])
}

/// `rogue` with [`tools`], the deny rules in the workspace's configuration, secrets and a link.
fn setup(extra: &str) -> Setup {
    let setup = Setup::with_rogue_args(Bin::Rogue.path(), &["--answer-all"], extra);
    setup.set_tools(&tools());
    setup.tree.write("ws/.teaagent/config.toml", "deny = [\"*:path=secrets/**\", \"*:command=rm*\"]\n");
    setup.tree.write("ws/secrets/key.txt", "k\n");
    setup.tree.write("ws/pub/ok.txt", "ok\n");
    setup.tree.symlink("ws/pub/door", "../secrets");
    setup.allow("rogue");
    setup
}

fn refused(response: &Value) -> bool {
    response["error"]["code"] == -32001
}

fn reached(response: &Value) -> bool {
    response["result"]["isError"] == false
        && response["result"]["content"][0]["text"].as_str().is_some_and(|t| t.starts_with("reached"))
}

#[test]
fn deny_rules_bind_external_tools_arguments_by_their_roles() {
    let setup = setup("");
    let mut server = setup.serve_raw(&["--permission-mode", "danger-full-access"]);
    server.initialize("2025-11-25");
    let root = setup.tree.root();
    let absolute = root.join("secrets/key.txt").display().to_string();
    let denied = [
        ("read_file", json!({"path": "secrets/key.txt"})),
        ("read_file", json!({"path": "./pub/../secrets/key.txt"})),
        ("read_file", json!({"path": absolute})),
        ("read_file", json!({"path": "pub/door/key.txt"})),
        ("read_file", json!({"path": "secrets/not/there/yet.txt"})),
        ("read", json!({"filePath": "secrets//key.txt", "limit": 1})),
        ("read_many", json!({"paths": ["pub/ok.txt", "secrets/key.txt"]})),
        ("open", json!({"where": "secrets/key.txt"})),
        ("run", json!({"command": "rm -rf ."})),
        ("run", json!({"command": "ls && rm -rf ."})),
        ("exec", json!({"cmd": "rm -rf .", "mode": "fast"})),
        ("exec", json!({"cmd": "/bin/rm x"})),
        // An argument the schema does not declare cannot be checked.
        ("read_file", json!({"path": "pub/ok.txt", "extra": "secrets/key.txt"})),
    ];
    for (tool, args) in denied {
        let answer = call(&mut server, &format!("rogue__{tool}"), args.clone());
        assert!(refused(&answer), "{tool} {args}: {answer}");
    }
    let allowed = [
        ("read_file", json!({"path": "pub/ok.txt"})),
        ("read_file", json!({"path": "/etc/hostname"})),
        ("read", json!({"filePath": "pub/ok.txt"})),
        ("read_many", json!({"paths": ["pub/ok.txt", "src/a.txt"]})),
        ("open", json!({"where": "pub/ok.txt"})),
        ("run", json!({"command": "ls -la"})),
        ("exec", json!({"cmd": "echo hi"})),
        ("count", json!({"n": 3})),
    ];
    for (tool, args) in allowed {
        let answer = call(&mut server, &format!("rogue__{tool}"), args.clone());
        assert!(reached(&answer), "{tool} {args}: {answer}");
    }
    // Paths reach the server as written, not rewritten.
    let answer = call(&mut server, "rogue__read_file", json!({"path": "./pub//ok.txt"}));
    assert!(text_of(&answer).contains("./pub//ok.txt"), "{answer}");

    // Fail closed: tools whose arguments the rules cannot see are left out and refused, and the
    // start said so.
    let names = tool_names(&mut server);
    for tool in ["rogue__search", "rogue__configure"] {
        assert!(!names.iter().any(|n| n == tool), "{tool} is listed: {names:?}");
        let answer = call(&mut server, tool, json!({}));
        assert!(refused(&answer), "{tool}: {answer}");
    }
    assert!(names.iter().any(|n| n == "rogue__read_file") && names.iter().any(|n| n == "rogue__count"));
    let stderr = server.stderr_once(|e| {
        e.contains("refused external tool `rogue__search`")
            && e.contains("refused external tool `rogue__configure`")
    });
    for (tool, arg) in [("rogue__search", "`query`"), ("rogue__configure", "`options`")] {
        assert!(
            stderr.lines().any(|l| l.contains(&format!("refused external tool `{tool}`"))
                && l.contains(arg)
                && l.contains("[mcp_servers.rogue.roles]")),
            "{tool}: {stderr}"
        );
    }
    server.finish();
}

#[test]
fn declared_roles_let_the_rules_check_what_the_schema_does_not_say() {
    let setup =
        setup("[mcp_servers.rogue.roles]\nsearch = { query = \"path\" }\nconfigure = { \"*\" = \"text\" }\n");
    let mut server = setup.serve(&["--permission-mode", "danger-full-access"]);
    let names = tool_names(&mut server);
    assert!(
        names.iter().any(|n| n == "rogue__search") && names.iter().any(|n| n == "rogue__configure"),
        "{names:?}"
    );
    assert!(refused(&call(&mut server, "rogue__search", json!({"query": "secrets/key.txt"}))));
    assert!(reached(&call(&mut server, "rogue__search", json!({"query": "pub/ok.txt"}))));
    assert!(reached(&call(&mut server, "rogue__configure", json!({"options": {"path": "anything"}}))));
    server.finish();

    // A role that is not one stops the start, naming the key.
    let bad = Setup::new("[mcp_servers.rogue.roles]\nsearch = { query = \"file\" }\n");
    bad.allow("rogue");
    let out = bad.run(&["run", "read_file", "--args", r#"{"path": "src/a.txt"}"#]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("mcp_servers.rogue.roles.search.query") && stderr.contains("\"file\""),
        "{stderr}"
    );
}
