//! Rate limits, the audit log and payload digests through the real server.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_core::digest::call_digest;
use teaagent_tests::{Bin, RawServer, Tree};

fn fixture(tree: &Tree, home: &Tree, env: &[(&str, &str)]) -> RawServer {
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_ROOT", tree.root()).env("TEAAGENT_HOME", home.base()).envs(env.iter().copied());
    let mut server = RawServer::start(cmd);
    server.initialize("2025-06-18");
    server
}

fn call(server: &mut RawServer, tool: &str, args: Value) -> Value {
    server.request("tools/call", json!({"name": tool, "arguments": args}))
}

#[test]
fn a_thousand_pipelined_calls_admit_exactly_ten() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = fixture(&tree, &home, &[]);
    let mut batch = String::new();
    for id in 0..1000 {
        batch.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"tick\"}}}}\n"
        ));
    }
    server.send_raw(batch.as_bytes());
    let (mut admitted, mut limited) = (0, 0);
    for id in 0..1000 {
        let answer = server.response(&json!(id));
        if answer["result"].is_object() {
            admitted += 1;
        } else {
            let error = &answer["error"];
            assert_eq!(error["code"], -32002, "{answer}");
            assert_eq!(error["message"], "Rate limit exceeded for tool 'tick': 10 calls per 60s");
            let retry = error["data"]["retryAfterSeconds"].as_u64().expect("retryAfterSeconds");
            assert!((1..=60).contains(&retry), "{retry}");
            limited += 1;
        }
    }
    assert_eq!((admitted, limited), (10, 990));
    server.finish();
}

#[test]
fn calls_refused_before_the_rate_limit_use_no_budget() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = fixture(
        &tree,
        &home,
        &[
            ("FIXTURE_MODE", "read-only"),
            ("FIXTURE_GRANTS", "launch:command=ok*"),
            ("FIXTURE_RATE", "launch=2/60"),
        ],
    );
    for _ in 0..5 {
        assert_eq!(call(&mut server, "launch", json!({"command": "rm -rf /"}))["error"]["code"], -32001);
        assert_eq!(call(&mut server, "launch", json!({"command": 7}))["error"]["code"], -32602);
        assert_eq!(call(&mut server, "launch", json!({}))["error"]["code"], -32602);
    }
    assert!(call(&mut server, "launch", json!({"command": "ok 1"}))["result"].is_object());
    assert!(call(&mut server, "launch", json!({"command": "ok 2"}))["result"].is_object());
    assert_eq!(call(&mut server, "launch", json!({"command": "ok 3"}))["error"]["code"], -32002);
    server.finish();
}

#[test]
fn the_window_slides() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = fixture(&tree, &home, &[("FIXTURE_RATE", "tick=2/0.5")]);
    assert!(call(&mut server, "tick", json!({}))["result"].is_object());
    assert!(call(&mut server, "tick", json!({}))["result"].is_object());
    let limited = call(&mut server, "tick", json!({}));
    assert_eq!(limited["error"]["code"], -32002);
    assert_eq!(limited["error"]["message"], "Rate limit exceeded for tool 'tick': 2 calls per 0.5s");
    assert_eq!(limited["error"]["data"]["retryAfterSeconds"], 1);
    std::thread::sleep(Duration::from_millis(600));
    assert!(
        call(&mut server, "tick", json!({}))["result"].is_object(),
        "admitted again once the window moved on"
    );
    server.finish();
}

#[test]
fn a_call_refused_as_overloaded_spends_neither_budget_nor_a_grant_use() {
    let (tree, home) = (Tree::new(), Tree::new());
    let env = [
        ("FIXTURE_MAX_IN_FLIGHT", "1"),
        ("FIXTURE_MAX_QUEUED", "0"),
        ("FIXTURE_GRANTS", "poke;uses=1"),
        ("FIXTURE_RATE", "poke=1/60"),
    ];
    let mut server = fixture(&tree, &home, &env);
    // The only turn is taken by a slow call.
    server.send(r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow","arguments":{"ms":800}}}"#);
    std::thread::sleep(Duration::from_millis(200));
    let poke = json!({"path": "n.txt", "content": "x"});
    let refused = call(&mut server, "poke", poke.clone());
    assert_eq!(
        (refused["error"]["code"].clone(), refused["error"]["data"]["reason"].clone()),
        (json!(-32000), json!("overloaded")),
        "{refused}"
    );
    assert!(server.response(&json!("slow"))["result"].is_object());
    // The grant's one use and the window's one call are still there for the user's next call.
    let ran = call(&mut server, "poke", poke.clone());
    assert!(ran["result"].is_object() && tree.root().join("n.txt").exists(), "{ran}");
    // And then the grant's one use is spent: the mode refuses the next call.
    let spent = call(&mut server, "poke", poke);
    assert_eq!(spent["error"]["code"], -32001, "{spent}");
    server.finish();
}

#[test]
fn a_call_refused_by_the_lock_gives_its_budget_back() {
    let (tree, home) = (Tree::new(), Tree::new());
    let env = [("FIXTURE_MODE", "danger-full-access"), ("FIXTURE_RATE", "poke=1/60")];
    let mut owner = fixture(&tree, &home, &env);
    let mut second = fixture(&tree, &home, &env);
    let poke = json!({"path": "n.txt", "content": "x"});
    for _ in 0..3 {
        assert_eq!(call(&mut second, "poke", poke.clone())["error"]["code"], -32003);
    }
    owner.signal("KILL");
    owner.wait(Duration::from_secs(10));
    assert!(
        call(&mut second, "poke", poke.clone())["result"].is_object(),
        "the one call of the window is still there"
    );
    assert_eq!(call(&mut second, "poke", poke)["error"]["code"], -32002);
    second.finish();
}

#[test]
fn every_decision_is_audited_and_an_unwritable_log_stops_writes() {
    let (tree, home) = (Tree::new(), Tree::new());
    let mut server = fixture(&tree, &home, &[("FIXTURE_AUDIT", "1"), ("FIXTURE_RATE", "tick=1/60")]);
    assert!(call(&mut server, "peek", json!({"path": "src/a.txt"}))["result"].is_object());
    assert_eq!(call(&mut server, "poke", json!({"path": "x", "content": "y"}))["error"]["code"], -32001);
    assert!(call(&mut server, "tick", json!({}))["result"].is_object());
    assert_eq!(call(&mut server, "tick", json!({}))["error"]["code"], -32002);
    server.finish();
    let log = std::fs::read_to_string(home.base().join("audit.jsonl")).expect("audit log");
    let lines: Vec<Value> =
        log.lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    let outcomes: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l["tool"].as_str().unwrap_or(""), l["outcome"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("peek", "allowed"),
            ("peek", "completed"),
            ("poke", "denied"),
            ("tick", "allowed"),
            ("tick", "completed"),
            ("tick", "allowed"),
            ("tick", "rate_limited")
        ]
    );
    // A call that ran has a record of its end too: how long it ran, by the rule that allowed it.
    assert!(lines[1]["duration_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{}", lines[1]);
    assert_eq!(lines[1]["rule"], lines[0]["rule"]);
    assert!(lines.iter().filter(|l| l["outcome"] != "completed").all(|l| l.get("duration_ms").is_none()));
    let denied = &lines[2];
    assert_eq!(denied["mode"], "workspace-write");
    assert_eq!(denied["tier"], "medium");
    assert_eq!(denied["digest"], call_digest("poke", &json!({"path": "x", "content": "y"})));
    assert!(denied["rule"].as_str().unwrap_or_default().contains("destructive"));
    assert!(denied["time"].as_str().unwrap_or_default().ends_with('Z'));

    // The log cannot be written: writes are refused, reads go on.
    std::fs::remove_file(home.base().join("audit.jsonl")).expect("remove");
    std::fs::create_dir(home.base().join("audit.jsonl")).expect("a directory where the log should be");
    let mut server = fixture(&tree, &home, &[("FIXTURE_AUDIT", "1"), ("FIXTURE_MODE", "danger-full-access")]);
    let refused = call(&mut server, "poke", json!({"path": "x", "content": "y"}));
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    assert!(refused["error"]["data"]["rule"].as_str().unwrap_or_default().contains("audit log"), "{refused}");
    assert!(
        call(&mut server, "peek", json!({"path": "src/a.txt"}))["result"].is_object(),
        "tier low still runs"
    );
    server.finish();
    assert!(!tree.root().join("x").exists());
}

#[test]
fn a_digest_approves_every_spelling_of_its_call_and_nothing_else() {
    let (tree, home) = (Tree::new(), Tree::new());
    let args = json!({"target": "prod-é", "options": {"b": 1, "a": [1.5, true]}});
    let digest = call_digest("deploy", &args);
    let mut server = fixture(&tree, &home, &[("FIXTURE_MODE", "allow"), ("FIXTURE_PREAPPROVE", &digest)]);
    // Keys reordered, a unicode escape, a number written differently: the same call.
    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"options":{"a":[15e-1,true],"b":1.0},"target":"prod-\u00e9"},"name":"deploy"}}"#);
    let same = server.response(&json!(1));
    assert!(same["result"].is_object(), "{same}");
    server.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"options":{"a":[1.5,true],"b":2},"target":"prod-\u00e9"},"name":"deploy"}}"#);
    assert_eq!(server.response(&json!(2))["error"]["code"], -32001, "another argument, another digest");
    server.finish();
}
