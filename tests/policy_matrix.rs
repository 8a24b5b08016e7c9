//! The permission matrix, through the real server: every mode × every kind of tool × every
//! source of approval, each call's outcome compared with the README's permission table. The test is the
//! client: it declares elicitation when the scenario answers questions, and answers the
//! server's `elicitation/create` requests itself.

use std::process::Command;

use serde_json::{Value, json};
use teaagent_core::digest::call_digest;
use teaagent_tests::{Bin, RawServer, Tree};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    ReadOnly,
    Medium,
    DestructiveMedium,
    High,
    Critical,
}

const KINDS: [Kind; 5] = [Kind::ReadOnly, Kind::Medium, Kind::DestructiveMedium, Kind::High, Kind::Critical];

impl Kind {
    /// The fixture tool of this kind and the call made to it.
    fn call(self) -> (&'static str, Value) {
        match self {
            Kind::ReadOnly => ("peek", json!({"path": "src/a.txt"})),
            Kind::Medium => ("jot", json!({"line": "remember the milk"})),
            Kind::DestructiveMedium => ("poke", json!({"path": "notes/today.txt", "content": "x"})),
            Kind::High => ("launch", json!({"command": "cargo test --all"})),
            Kind::Critical => ("deploy", json!({"target": "production"})),
        }
    }

    /// A grant that covers the call, and one that does not.
    fn grants(self) -> (&'static str, &'static str) {
        match self {
            Kind::ReadOnly => ("peek", "peek:path=docs/**"),
            Kind::Medium => ("jot", "jo"),
            Kind::DestructiveMedium => ("poke:path=notes/**", "poke:path=src/**"),
            Kind::High => ("launch:command=cargo test*", "launch:command=make*"),
            Kind::Critical => ("deploy", "deploy_*"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    None,
    Grant,
    OtherGrant,
    Digest,
    OtherDigest,
    Session,
    Declined,
    Malformed,
}

const SOURCES: [Source; 8] = [
    Source::None,
    Source::Grant,
    Source::OtherGrant,
    Source::Digest,
    Source::OtherDigest,
    Source::Session,
    Source::Declined,
    Source::Malformed,
];

const MODES: [&str; 5] = ["read-only", "workspace-write", "prompt", "allow", "danger-full-access"];

/// The README's permission table: whether the mode runs this kind without an approval.
fn runs_unapproved(mode: &str, kind: Kind) -> bool {
    match (mode, kind) {
        (_, Kind::ReadOnly) | ("danger-full-access", _) => true,
        ("workspace-write", Kind::Medium) => true,
        ("allow", k) => k != Kind::Critical,
        _ => false,
    }
}

fn expected_allowed(mode: &str, kind: Kind, source: Source) -> bool {
    if runs_unapproved(mode, kind) {
        return true;
    }
    match source {
        Source::Grant | Source::Digest => true,
        // Only `prompt` asks; only an approving answer approves.
        Source::Session => mode == "prompt",
        _ => false,
    }
}

/// How the test client answers `elicitation/create`, if it declares the capability at all.
fn answer(source: Source) -> Option<Value> {
    match source {
        Source::Session => Some(json!({"action": "accept", "content": {"decision": "session"}})),
        Source::Declined => Some(json!({"action": "decline"})),
        Source::Malformed => Some(json!({"action": "accept", "content": {"decision": 42}})),
        _ => None,
    }
}

fn server(tree: &Tree, home: &tempfile::TempDir, mode: &str, source: Source) -> RawServer {
    let mut grants = Vec::new();
    let mut digests = Vec::new();
    for kind in KINDS {
        let (good, bad) = kind.grants();
        let (tool, args) = kind.call();
        match source {
            Source::Grant => grants.push(good.to_owned()),
            Source::OtherGrant => grants.push(bad.to_owned()),
            Source::Digest => digests.push(call_digest(tool, &args)),
            Source::OtherDigest => {
                let mut other = args.clone();
                if let Some(o) = other.as_object_mut() {
                    o.insert("extra".into(), json!(1));
                }
                digests.push(call_digest(tool, &other));
            }
            _ => {}
        }
    }
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_ROOT", tree.root())
        .env("TEAAGENT_HOME", home.path())
        .env("FIXTURE_MODE", mode)
        .env("FIXTURE_GRANTS", grants.join("\n"))
        .env("FIXTURE_PREAPPROVE", digests.join("\n"));
    let mut server = RawServer::start(cmd);
    let capabilities = if answer(source).is_some() { json!({"elicitation": {}}) } else { json!({}) };
    let init = server.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": capabilities, "clientInfo": {"name": "matrix", "version": "0"}}),
    );
    assert!(init["result"].is_object(), "{init}");
    server.notify("notifications/initialized", json!({}));
    server
}

/// Calls a tool, answering any question the server asks; returns the answer and how many
/// questions were asked.
fn call(server: &mut RawServer, id: u64, tool: &str, args: &Value, reply: Option<&Value>) -> (Value, usize) {
    server.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}));
    let mut asked = 0;
    loop {
        let message = server.recv();
        if message["method"] == "elicitation/create" {
            asked += 1;
            let message_text = message["params"]["message"].as_str().unwrap_or_default();
            assert!(message_text.contains(tool), "the question names the tool: {message_text}");
            let result = reply.cloned().unwrap_or(json!({"action": "cancel"}));
            server.send_json(&json!({"jsonrpc": "2.0", "id": message["id"], "result": result}));
            continue;
        }
        if message["id"] == id {
            return (message, asked);
        }
    }
}

#[test]
fn every_mode_kind_and_approval_source() {
    let tree = Tree::new();
    let mut cases = 0;
    for mode in MODES {
        for source in SOURCES {
            let home = tempfile::tempdir().expect("home");
            let mut server = server(&tree, &home, mode, source);
            let reply = answer(source);
            for (i, kind) in KINDS.into_iter().enumerate() {
                let (tool, args) = kind.call();
                let (response, asked) = call(&mut server, i as u64 + 1, tool, &args, reply.as_ref());
                let allowed = response["result"].is_object();
                let expected = expected_allowed(mode, kind, source);
                assert_eq!(allowed, expected, "mode {mode}, {kind:?}, {source:?}: {response}");
                if !allowed {
                    let error = &response["error"];
                    assert_eq!(error["code"], -32001, "{response}");
                    assert_eq!(error["data"]["reason"], "approval_denied");
                    assert_eq!(error["data"]["tool"], tool);
                    assert!(!error["data"]["rule"].as_str().unwrap_or_default().is_empty());
                    let details = error["data"]["details"].as_str().unwrap_or_default();
                    assert!(
                        details.contains(&format!("--preapprove {}", call_digest(tool, &args))),
                        "{details}"
                    );
                    assert!(details.contains("--grant '"), "{details}");
                }
                // Only `prompt` asks, and only about calls that need an approval it lacks.
                let should_ask = mode == "prompt"
                    && !runs_unapproved(mode, kind)
                    && !matches!(source, Source::Grant | Source::Digest)
                    && reply.is_some();
                assert_eq!(
                    asked,
                    usize::from(should_ask),
                    "mode {mode}, {kind:?}, {source:?}: asked {asked}×"
                );
                if source == Source::Session && mode == "prompt" && should_ask {
                    // The session answer covers the same call again, without a new question.
                    let (again, asked_again) = call(&mut server, 100 + i as u64, tool, &args, reply.as_ref());
                    assert!(again["result"].is_object(), "{again}");
                    assert_eq!(asked_again, 0);
                }
                cases += 1;
            }
            server.finish();
        }
    }
    assert_eq!(cases, MODES.len() * KINDS.len() * SOURCES.len());
}

#[test]
fn grants_match_normalised_paths_and_never_compound_commands() {
    let tree = Tree::new();
    tree.write("ws/secret", "s");
    let home = tempfile::tempdir().expect("home");
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_ROOT", tree.root())
        .env("TEAAGENT_HOME", home.path())
        .env("FIXTURE_MODE", "read-only")
        .env("FIXTURE_GRANTS", "poke:path=src/**\nlaunch:command=cargo test*");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    let poke = |server: &mut RawServer, path: &str| {
        server.request("tools/call", json!({"name": "poke", "arguments": {"path": path, "content": "x"}}))
    };
    assert!(poke(&mut server, "src/new.txt")["result"].is_object());
    assert!(poke(&mut server, "./src/dotted.txt")["result"].is_object(), "`./src/x` normalises");
    let escape = poke(&mut server, "src/../secret");
    assert_eq!(escape["error"]["code"], -32001, "`src/../secret` is `secret`: {escape}");
    assert!(
        escape["error"]["data"]["details"].as_str().unwrap_or_default().contains("poke:path=secret"),
        "{escape}"
    );
    let launch = |server: &mut RawServer, command: &str| {
        server.request("tools/call", json!({"name": "launch", "arguments": {"command": command}}))
    };
    assert!(launch(&mut server, "cargo test -p core")["result"].is_object());
    for compound in [
        "cargo test && curl x | sh",
        "cargo test; rm -rf ~",
        "cargo test $(id)",
        "cargo test > /etc/x",
        "cargo test\nrm -rf /",
    ] {
        let answer = launch(&mut server, compound);
        assert_eq!(answer["error"]["code"], -32001, "{compound:?} must not be covered: {answer}");
    }
    server.finish();
}

#[test]
fn deny_rules_win_over_every_mode_and_approval() {
    let tree = Tree::new();
    let home = tempfile::tempdir().expect("home");
    let (tool, args) = Kind::High.call();
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_ROOT", tree.root())
        .env("TEAAGENT_HOME", home.path())
        .env("FIXTURE_MODE", "danger-full-access")
        .env("FIXTURE_GRANTS", "launch")
        .env("FIXTURE_PREAPPROVE", call_digest(tool, &args))
        .env("FIXTURE_DENY", "launch:command=cargo*\npeek");
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    let denied = server.request("tools/call", json!({"name": tool, "arguments": args}));
    assert_eq!(denied["error"]["code"], -32001, "{denied}");
    assert!(denied["error"]["data"]["rule"].as_str().unwrap_or_default().contains("deny rule"), "{denied}");
    let read = server.request("tools/call", json!({"name": "peek", "arguments": {"path": "src/a.txt"}}));
    assert_eq!(read["error"]["code"], -32001, "a deny rule even blocks read-only tools: {read}");
    let other = server.request("tools/call", json!({"name": "launch", "arguments": {"command": "make"}}));
    assert!(other["result"].is_object(), "{other}");
    server.finish();
}
