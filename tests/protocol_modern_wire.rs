//! The modern era (protocol `2026-07-28`) on the raw wire: the era fixed by the first message,
//! every new error code, the shape of modern results, the methods that are gone, and the sealed
//! `requestState` of approval round trips refused when tampered with, replayed, expired, moved
//! to other arguments or to a path that now leads elsewhere — each refusal audited.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use teaagent_tests::wire::RawServer;
use teaagent_tests::{Bin, Tree};

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "wire", "version": "0"}
    })
}

/// `params` with the modern `_meta` added.
fn modern(mut params: Value) -> Value {
    params["_meta"] = meta();
    params
}

fn error_of(response: &Value) -> (i64, Value) {
    let error = &response["error"];
    assert!(error.is_object(), "expected an error, got {response}");
    (error["code"].as_i64().expect("code"), error["data"].clone())
}

#[test]
fn the_first_message_fixes_the_era() {
    // Modern first: `initialize` is refused, legacy-style requests are malformed.
    let mut server = RawServer::spawn(Bin::Fixture.path(), &[]);
    let discover = server.request("server/discover", json!({"_meta": meta()}));
    let result = &discover["result"];
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(result["resultType"], "complete");
    assert_eq!((result["ttlMs"].as_u64().is_some(), &result["cacheScope"]), (true, &json!("public")));
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "teaagent");
    assert!(result.get("serverInfo").is_none() && result.get("protocolVersion").is_none());
    let init = server.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "late", "version": "0"}}),
    );
    let (code, data) = error_of(&init);
    assert_eq!((code, data["reason"].clone()), (-32600, json!("era_modern")));
    assert!(init["error"]["message"].as_str().is_some_and(|m| m.contains("2026-07-28")), "{init}");
    let bare = server.request("tools/list", json!({}));
    let (code, data) = error_of(&bare);
    assert_eq!((code, data["reason"].clone()), (-32602, json!("invalid_meta")));
    server.finish();

    // A plain modern request first (no discover) chooses the modern era too.
    let mut server = RawServer::spawn(Bin::Fixture.path(), &[]);
    let list = server.request("tools/list", modern(json!({})));
    assert_eq!(list["result"]["resultType"], "complete");
    server.finish();

    // Legacy first: every way of writing a modern request is refused.
    let mut server = RawServer::spawn(Bin::Fixture.path(), &[]);
    server.initialize("2025-11-25");
    for (method, params) in [
        ("server/discover", json!({"_meta": meta()})),
        ("tools/list", modern(json!({}))),
        ("tools/call", modern(json!({"name": "echo", "arguments": {"text": "x"}}))),
    ] {
        let refused = server.request(method, params);
        let (code, data) = error_of(&refused);
        assert_eq!((code, data["reason"].clone()), (-32600, json!("era_legacy")), "{method}: {refused}");
    }
    // ...and the legacy session goes on as before, without the modern decorations.
    let list = server.request("tools/list", json!({}));
    assert!(list["result"]["tools"].is_array() && list["result"].get("resultType").is_none(), "{list}");
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    server.finish();
}

#[test]
fn every_new_error_code_on_the_wire() {
    let mut server = RawServer::spawn(Bin::Fixture.path(), &[]);
    // -32022: a version this server does not speak, with the supported list.
    for version in ["2025-11-25", "2099-01-01", ""] {
        let mut m = meta();
        m["io.modelcontextprotocol/protocolVersion"] = json!(version);
        let refused = server.request("server/discover", json!({"_meta": m}));
        assert_eq!(error_of(&refused), (-32022, json!({"supported": ["2026-07-28"], "requested": version})));
    }
    // -32602: the required keys missing or malformed.
    let mut no_caps = meta();
    no_caps.as_object_mut().expect("object").remove("io.modelcontextprotocol/clientCapabilities");
    let mut bad_level = meta();
    bad_level["io.modelcontextprotocol/logLevel"] = json!("loud");
    let mut bad_caps = meta();
    bad_caps["io.modelcontextprotocol/clientCapabilities"] = json!("all");
    for m in [no_caps, bad_level, bad_caps] {
        let refused = server.request("tools/list", json!({"_meta": m}));
        let (code, data) = error_of(&refused);
        assert_eq!((code, data["reason"].clone()), (-32602, json!("invalid_meta")), "{refused}");
    }
    // -32601: the methods 2026-07-28 removed, with or without `_meta`.
    for method in ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"] {
        let refused = server.request(method, modern(json!({"level": "debug", "uri": "x"})));
        assert_eq!(error_of(&refused).0, -32601, "{method}");
        assert_eq!(error_of(&server.request(method, json!({}))).0, -32601, "{method} without _meta");
    }
    server.finish();

    // -32004 (never -32002) for the rate limit, with the same data.
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_RATE", "echo=1/60");
    let mut server = RawServer::start(cmd);
    let call = modern(json!({"name": "echo", "arguments": {"text": "x"}}));
    assert!(server.request("tools/call", call.clone())["result"].is_object());
    let (code, data) = error_of(&server.request("tools/call", call));
    assert_eq!(
        (code, data["reason"].clone(), data["tool"].clone()),
        (-32004, json!("rate_limited"), json!("echo"))
    );
    assert!(data["retryAfterSeconds"].as_u64().is_some_and(|s| s >= 1));
    // Resource not found stays -32602 (the fixture serves no resources without a root: -32601).
    server.finish();
}

#[test]
fn modern_results_say_what_they_are_and_how_long_they_keep() {
    let ws = Tree::new();
    ws.write("ws/a.txt", "alpha\n");
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_ROOT", ws.root());
    let mut server = RawServer::start(cmd);
    let call = server.request("tools/call", modern(json!({"name": "echo", "arguments": {"text": "x"}})));
    let result = &call["result"];
    assert_eq!(result["resultType"], "complete");
    assert!(result.get("ttlMs").is_none(), "a call result is not cacheable: {result}");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    // A refused argument keeps its report in `_meta`, next to the server's name.
    server.send_json(&json!({"jsonrpc": "2.0", "id": "refused", "method": "tools/call",
        "params": modern(json!({"name": "slow", "arguments": {"ms": "soon"}}))}));
    let (refused, raw) = server.response_raw(&json!("refused"));
    assert_eq!(raw.matches("\"_meta\"").count(), 1, "one `_meta` member: {raw}");
    let result = &refused["result"];
    assert_eq!((result["isError"].clone(), result["resultType"].clone()), (json!(true), json!("complete")));
    assert_eq!(result["_meta"]["reason"], "invalid_arguments");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "teaagent");
    for (method, params, scope) in [
        ("tools/list", json!({}), "public"),
        ("resources/list", json!({}), "private"),
        ("resources/templates/list", json!({}), "public"),
        ("resources/read", json!({"uri": "teaagent://workspace/a.txt"}), "private"),
    ] {
        let answer = server.request(method, modern(params));
        let result = &answer["result"];
        assert_eq!(result["resultType"], "complete", "{method}");
        assert!(result["ttlMs"].is_u64(), "{method}: {answer}");
        assert_eq!(result["cacheScope"], scope, "{method}");
    }
    // The fixture declares no prompts, so it does not answer for them.
    assert_eq!(error_of(&server.request("prompts/list", modern(json!({})))).0, -32601);
    let missing = server.request("resources/read", modern(json!({"uri": "teaagent://workspace/none.txt"})));
    assert_eq!(error_of(&missing).0, -32602, "resource not found stays -32602");
    // Per-request log level: a request without it gets no log lines.
    let quiet = server.request(
        "tools/call",
        modern(json!({"name": "log", "arguments": {"level": "error", "message": "m1"}})),
    );
    assert!(quiet["result"].is_object());
    let mut loud = modern(json!({"name": "log", "arguments": {"level": "error", "message": "m2"}}));
    loud["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    assert!(server.request("tools/call", loud)["result"].is_object());
    // A blocking tool's events carry the request's level to the thread that runs it.
    let mut blocking = modern(json!({"name": "log_blocking", "arguments": {"message": "m3"}}));
    blocking["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    assert!(server.request("tools/call", blocking)["result"].is_object());
    let quiet =
        server.request("tools/call", modern(json!({"name": "log_blocking", "arguments": {"message": "m4"}})));
    assert!(quiet["result"].is_object());
    let logs: Vec<Value> = server
        .drain(Duration::from_millis(300))
        .into_iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    let messages: Vec<&Value> = logs.iter().map(|l| &l["params"]["data"]["message"]).collect();
    assert_eq!(messages, [&json!("m2"), &json!("m3")], "{logs:?}");
    server.finish();
}

#[test]
fn a_listen_stream_is_acknowledged_first_and_ends_with_the_input() {
    let mut server = RawServer::spawn(Bin::Fixture.path(), &[]);
    server.send_json(&json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
        "params": modern(json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["x"]}}))}));
    let ack = server.recv();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1");
    assert_eq!(ack["params"]["notifications"], json!({}));
    // The stream stays open (no response) while other requests are served.
    let echo = server.request("tools/call", modern(json!({"name": "echo", "arguments": {"text": "x"}})));
    assert!(echo["result"].is_object());
    assert!(server.drain(Duration::from_millis(200)).is_empty());
    // A cancelled stream gets no response; another one ends with its result at EOF.
    server.notify("notifications/cancelled", json!({"requestId": "listen-1"}));
    server.send_json(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": modern(json!({}))}),
    );
    assert_eq!(server.recv()["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
    server.close_stdin();
    let (end, raw) = server.response_raw(&json!(7));
    assert_eq!(raw.matches("\"_meta\"").count(), 1, "one `_meta` member: {raw}");
    assert_eq!(end["result"]["resultType"], "complete");
    assert_eq!(end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
    let rest = server.drain(Duration::from_millis(200));
    assert!(rest.iter().all(|m| m.get("id") != Some(&json!("listen-1"))), "{rest:?}");
    server.finish();
}

/// A fixture in `prompt` mode serving the shipped tools on `ws`, auditing into `home`.
fn prompt_fixture(ws: &Tree, home: &Tree, ask_timeout_ms: u64) -> RawServer {
    let mut cmd = Command::new(Bin::Fixture.path());
    cmd.env("FIXTURE_ROOT", ws.root())
        .env("FIXTURE_MODE", "prompt")
        .env("FIXTURE_BUILTIN", "1")
        .env("FIXTURE_AUDIT", "1")
        .env("FIXTURE_ASK_TIMEOUT_MS", ask_timeout_ms.to_string())
        .env("TEAAGENT_HOME", home.base());
    RawServer::start(cmd)
}

fn create(path: &str, content: &str) -> Value {
    modern(json!({"name": "create_file", "arguments": {"path": path, "content": content}}))
}

/// The retry of `call` with `state` and an answer.
fn retry(call: &Value, state: &Value, decision: &str) -> Value {
    let mut retry = call.clone();
    retry["requestState"] = state.clone();
    retry["inputResponses"] = json!({"approval": {"action": "accept", "content": {"decision": decision}}});
    retry
}

/// Asks for `call` and returns its `requestState`, checking the question's shape.
fn ask(server: &mut RawServer, call: &Value) -> Value {
    let answer = server.request("tools/call", call.clone());
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    assert!(result.get("ttlMs").is_none(), "{answer}");
    let question = &result["inputRequests"]["approval"];
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(question["params"]["mode"], "form");
    assert_eq!(question["params"]["requestedSchema"]["required"], json!(["decision"]));
    assert!(question.get("id").is_none() && question.get("jsonrpc").is_none());
    result["requestState"].clone()
}

fn refused_state(answer: &Value, why: &str) {
    let (code, data) = error_of(answer);
    assert_eq!((code, data["reason"].clone()), (-32602, json!("invalid_request_state")), "{answer}");
    assert!(data["details"].as_str().is_some_and(|d| d.contains(why)), "{why}: {data}");
}

#[test]
fn a_request_state_is_accepted_once_for_its_own_call_only() {
    let (ws, home) = (Tree::new(), Tree::new());
    let mut server = prompt_fixture(&ws, &home, 60_000);
    let call = create("a.txt", "one");
    let state = ask(&mut server, &call);

    // Another call's arguments, or another tool, with this state: refused, nothing done.
    let swapped = server.request("tools/call", retry(&create("b.txt", "one"), &state, "once"));
    refused_state(&swapped, "other arguments");
    let other_tool = modern(json!({"name": "write_file", "arguments": {"path": "a.txt", "content": "one"}}));
    refused_state(&server.request("tools/call", retry(&other_tool, &state, "once")), "other tool");
    // A tampered state (one hex digit of the payload, or of the tag) is refused.
    let text = state.as_str().expect("a string");
    for at in [6, text.len() - 3] {
        let mut bytes = text.as_bytes().to_vec();
        bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
        let tampered = json!(String::from_utf8(bytes).expect("ascii"));
        refused_state(&server.request("tools/call", retry(&call, &tampered, "once")), "altered");
    }
    refused_state(&server.request("tools/call", retry(&call, &json!("forged"), "once")), "altered");
    assert!(!ws.path("ws/a.txt").exists() && !ws.path("ws/b.txt").exists());

    // The genuine retry runs once...
    let ran = server.request("tools/call", retry(&call, &state, "once"));
    assert_eq!(ran["result"]["resultType"], "complete", "{ran}");
    assert_eq!(std::fs::read_to_string(ws.path("ws/a.txt")).expect("created"), "one");
    // ...and its replay is refused.
    std::fs::remove_file(ws.path("ws/a.txt")).expect("remove");
    refused_state(&server.request("tools/call", retry(&call, &state, "once")), "used already");
    assert!(!ws.path("ws/a.txt").exists());
    // A retry with a good state but no answer is asked again, not run.
    let state = ask(&mut server, &call);
    let mut unanswered = call.clone();
    unanswered["requestState"] = state;
    let again = server.request("tools/call", unanswered);
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    server.finish();

    let audit = std::fs::read_to_string(home.base().join("audit.jsonl")).expect("audit log");
    for why in ["other arguments", "other tool", "not issued by this server", "used already"] {
        assert!(audit.contains(why), "{why} is audited:\n{audit}");
    }
}

#[test]
fn a_request_state_expires() {
    let (ws, home) = (Tree::new(), Tree::new());
    let mut server = prompt_fixture(&ws, &home, 200);
    let call = create("late.txt", "x");
    let state = ask(&mut server, &call);
    std::thread::sleep(Duration::from_millis(400));
    refused_state(&server.request("tools/call", retry(&call, &state, "once")), "expired");
    assert!(!ws.path("ws/late.txt").exists());
    server.finish();
    let audit = std::fs::read_to_string(home.base().join("audit.jsonl")).expect("audit log");
    assert!(audit.contains("expired"), "{audit}");
}

#[test]
fn a_path_that_leads_elsewhere_after_the_question_is_refused() {
    let (ws, home) = (Tree::new(), Tree::new());
    std::fs::create_dir_all(ws.path("ws/real")).expect("mkdir");
    std::fs::create_dir_all(ws.path("ws/other")).expect("mkdir");
    ws.symlink("ws/via", "real");
    let mut server = prompt_fixture(&ws, &home, 60_000);
    let call = create("via/x.txt", "x");
    let state = ask(&mut server, &call);
    // The link is pointed elsewhere (inside the workspace) while the user looks at the question.
    std::fs::remove_file(ws.path("ws/via")).expect("unlink");
    ws.symlink("ws/via", "other");
    refused_state(&server.request("tools/call", retry(&call, &state, "once")), "path targets");
    assert!(!ws.path("ws/real/x.txt").exists() && !ws.path("ws/other/x.txt").exists());
    server.finish();
}

#[test]
fn replicas_that_share_a_key_accept_each_others_states_and_others_do_not() {
    let (ws, home) = (Tree::new(), Tree::new());
    let serve = |key: &str| {
        let mut cmd = Command::new(Bin::Teaagent.path());
        cmd.args(["mcp", "serve", "--permission-mode", "prompt", "--root"])
            .arg(ws.root())
            .env("TEAAGENT_HOME", home.base())
            .env("TEAAGENT_REQUEST_STATE_KEY", key);
        RawServer::start(cmd)
    };
    let shared = "5a".repeat(32);
    let call = create("fleet.txt", "x");
    let mut first = serve(&shared);
    let state = ask(&mut first, &call);
    first.finish();
    let mut stranger = serve(&"6b".repeat(32));
    refused_state(&stranger.request("tools/call", retry(&call, &state, "once")), "not issued by this server");
    stranger.finish();
    let mut replica = serve(&shared);
    let ran = replica.request("tools/call", retry(&call, &state, "once"));
    assert_eq!(ran["result"]["resultType"], "complete", "{ran}");
    assert!(ws.path("ws/fleet.txt").exists());
    replica.finish();

    // The key from the user's configuration file works the same; from a workspace's file (a
    // cloned repository's) it is ignored: such a server accepts none of the fleet's states.
    let call = create("fleet2.txt", "x");
    let mut first = serve(&shared);
    let state = ask(&mut first, &call);
    first.finish();
    let (own_home, own_ws) = (Tree::new(), Tree::new());
    std::fs::write(own_home.base().join("config.toml"), format!("request_state_key = \"{shared}\"\n"))
        .expect("config");
    std::fs::create_dir_all(own_ws.path("ws/.teaagent")).expect("mkdir");
    std::fs::write(own_ws.path("ws/.teaagent/config.toml"), format!("request_state_key = \"{shared}\"\n"))
        .expect("config");
    let serve_with = |home: &Tree| {
        let mut cmd = Command::new(Bin::Teaagent.path());
        cmd.args(["mcp", "serve", "--permission-mode", "prompt", "--root"])
            .arg(ws.root())
            .env("TEAAGENT_HOME", home.base());
        RawServer::start(cmd)
    };
    let mut by_repository = {
        let mut cmd = Command::new(Bin::Teaagent.path());
        cmd.args(["mcp", "serve", "--permission-mode", "prompt", "--root"])
            .arg(own_ws.root())
            .env("TEAAGENT_HOME", home.base());
        RawServer::start(cmd)
    };
    let other_ws_call = create("fleet2.txt", "x");
    refused_state(
        &by_repository.request("tools/call", retry(&other_ws_call, &state, "once")),
        "not issued by this server",
    );
    let stderr = by_repository.stderr_once(|e| e.contains("ignored `request_state_key`"));
    assert!(stderr.contains("ignored `request_state_key`"), "{stderr}");
    by_repository.finish();
    let mut by_user_file = serve_with(&own_home);
    let ran = by_user_file.request("tools/call", retry(&call, &state, "once"));
    assert_eq!(ran["result"]["resultType"], "complete", "{ran}");
    by_user_file.finish();

    // A key that is not 64 hex digits is a configuration error (exit 2), not a weak key.
    let out = Command::new(Bin::Teaagent.path())
        .args(["mcp", "serve", "--root"])
        .arg(ws.root())
        .env("TEAAGENT_HOME", home.base())
        .env("TEAAGENT_REQUEST_STATE_KEY", "hunter2")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("TEAAGENT_REQUEST_STATE_KEY"));
}

#[test]
fn an_answer_without_its_state_or_with_a_state_in_use_approves_nothing() {
    let (ws, home) = (Tree::new(), Tree::new());
    let mut server = prompt_fixture(&ws, &home, 60_000);
    // An approving answer with no state: asked again, nothing runs.
    let call = create("free.txt", "x");
    let mut unsealed = call.clone();
    unsealed["inputResponses"] =
        json!({"approval": {"action": "accept", "content": {"decision": "session"}}});
    let asked = server.request("tools/call", unsealed);
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    assert!(!ws.path("ws/free.txt").exists());
    // A state that is not a string is no state of ours.
    let mut odd = retry(&call, &json!({"forged": true}), "once");
    odd["id"] = json!(1);
    refused_state(&server.request("tools/call", odd), "not issued by this server");
    // The same state sent twice at once: one call runs, the other is a replay. (A file that
    // exists, so the first call does not change what the path leads to.)
    let call = modern(json!({"name": "write_file", "arguments": {"path": "src/a.txt", "content": "x"}}));
    let state = ask(&mut server, &call);
    let again = retry(&call, &state, "once");
    for id in ["twin-1", "twin-2"] {
        server.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": again}));
    }
    let answers = [server.response(&json!("twin-1")), server.response(&json!("twin-2"))];
    let ran = answers.iter().filter(|a| a["result"]["resultType"] == "complete").count();
    let replays = answers
        .iter()
        .filter(|a| a["error"]["data"]["reason"] == "invalid_request_state")
        .filter(|a| a["error"]["data"]["details"].as_str().is_some_and(|d| d.contains("used already")))
        .count();
    assert_eq!((ran, replays), (1, 1), "{answers:?}");
    assert_eq!(std::fs::read_to_string(ws.path("ws/src/a.txt")).expect("written"), "x");
    server.finish();
}

#[test]
fn an_approval_is_not_spent_by_a_call_refused_after_it() {
    let (ws, home) = (Tree::new(), Tree::new());
    // Another server holds the workspace lock: calls that may write are refused with -32003
    // after the approval was given.
    let mut holder = Command::new(Bin::Fixture.path());
    holder.env("FIXTURE_ROOT", ws.root()).env("TEAAGENT_HOME", home.base());
    let mut holder = RawServer::start(holder);
    holder.initialize("2025-11-25");
    let mut server = prompt_fixture(&ws, &home, 60_000);
    let call = create("later.txt", "x");
    let state = ask(&mut server, &call);
    let locked = server.request("tools/call", retry(&call, &state, "once"));
    assert_eq!(error_of(&locked).0, -32003, "{locked}");
    assert!(!ws.path("ws/later.txt").exists());
    // The lock is freed: the same answer still approves the call, once.
    holder.finish();
    let ran = server.request("tools/call", retry(&call, &state, "once"));
    assert_eq!(ran["result"]["resultType"], "complete", "{ran}");
    assert!(ws.path("ws/later.txt").exists());
    std::fs::remove_file(ws.path("ws/later.txt")).expect("remove");
    refused_state(&server.request("tools/call", retry(&call, &state, "once")), "used already");
    server.finish();
}

#[test]
fn a_legacy_call_ignores_round_trip_fields_and_asks_through_its_session() {
    let (ws, home) = (Tree::new(), Tree::new());
    let mut server = prompt_fixture(&ws, &home, 60_000);
    let init = server.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "l", "version": "0"}}),
    );
    assert!(init["result"].is_object());
    let params = json!({"name": "create_file", "arguments": {"path": "legacy.txt", "content": "x"},
        "requestState": "ta1.00.00", "inputResponses": {"approval": {"action": "accept", "content": {"decision": "once"}}}});
    server.send_json(&json!({"jsonrpc": "2.0", "id": "l-1", "method": "tools/call", "params": params}));
    // The legacy era asks with a request of its own; the unsealed answer in the params counts
    // for nothing.
    let question = server.recv();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    server.send_json(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}));
    let denied = server.response(&json!("l-1"));
    assert_eq!(error_of(&denied).0, -32001, "{denied}");
    assert!(!ws.path("ws/legacy.txt").exists());
    server.finish();
}

/// A call of the fixture's `ask_why`, which asks the client why before it appends to `log`.
fn why(text: &str, log: &std::path::Path) -> Value {
    modern(json!({"name": "ask_why", "arguments": {"text": text, "log": log}}))
}

/// `call` retried with `state` and the answer `why` to the tool's own question.
fn because(call: &Value, state: &Value, why: &str) -> Value {
    let mut retry = call.clone();
    retry["requestState"] = state.clone();
    retry["inputResponses"] = json!({"why": {"action": "accept", "content": {"why": why}}});
    retry
}

#[test]
fn a_tool_asks_across_rounds_and_its_approval_is_asked_once() {
    let (ws, home) = (Tree::new(), Tree::new());
    let mut server = prompt_fixture(&ws, &home, 60_000);
    let log = home.base().join("why.log");
    let call = why("note", &log);

    // Round 1: the policy's question. Round 2, approved once: the tool runs and asks its own.
    let state = ask(&mut server, &call);
    let second = server.request("tools/call", retry(&call, &state, "once"));
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required", "{second}");
    assert_eq!(result["inputRequests"]["why"]["method"], "elicitation/create");
    assert_eq!(result["inputRequests"]["why"]["params"]["message"], "Why?");
    assert_eq!(result["inputRequests"]["why"]["params"]["mode"], "form");
    assert!(result["inputRequests"].get("approval").is_none(), "{second}");
    assert!(!log.exists(), "nothing past the question ran");
    let state = result["requestState"].clone();

    // The state is bound to the call: other arguments, or an answer that is not an object, are
    // refused before anything runs.
    refused_state(
        &server.request("tools/call", because(&why("other", &log), &state, "x")),
        "other arguments",
    );
    let mut malformed = call.clone();
    malformed["requestState"] = state.clone();
    malformed["inputResponses"] = json!({"why": 42});
    let (code, data) = error_of(&server.request("tools/call", malformed));
    assert_eq!(code, -32602, "{data}");
    assert!(data["details"].as_str().is_some_and(|d| d.contains("inputResponses.why")), "{data}");

    // Round 3: answered. The approval of round 1 carries over: not asked again.
    let third = because(&call, &state, "because");
    let done = server.request("tools/call", third.clone());
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "note: because");
    assert_eq!(std::fs::read_to_string(&log).expect("log"), "note: because\n");
    // Its state was used: a replay is refused and nothing runs again.
    refused_state(&server.request("tools/call", third), "used already");
    assert_eq!(std::fs::read_to_string(&log).expect("log"), "note: because\n");

    // A client that cannot show a form is never sent the tool's question: `-32021`. (The
    // approval is granted in the first round, by a client that can.)
    let state = ask(&mut server, &call);
    let mut formless = retry(&call, &state, "once");
    formless["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let refused = server.request("tools/call", formless);
    let (code, data) = error_of(&refused);
    assert_eq!(
        (code, data["requiredCapabilities"].clone()),
        (-32021, json!({"elicitation": {}})),
        "{refused}"
    );
    server.finish();
}

#[test]
fn a_legacy_tool_asks_with_a_request_of_its_own_after_the_approval() {
    let (ws, home) = (Tree::new(), Tree::new());
    let mut server = prompt_fixture(&ws, &home, 60_000);
    let log = home.base().join("why.log");
    let init = server.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "l", "version": "0"}}),
    );
    assert!(init["result"].is_object());
    server.notify("notifications/initialized", json!({}));
    let params = json!({"name": "ask_why", "arguments": {"text": "legacy", "log": log}});
    server.send_json(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}));
    let approval = server.recv();
    assert_eq!(approval["method"], "elicitation/create", "{approval}");
    server.send_json(&json!({"jsonrpc": "2.0", "id": approval["id"],
        "result": {"action": "accept", "content": {"decision": "once"}}}));
    let question = server.recv();
    assert_eq!(
        (question["method"].clone(), question["params"]["message"].clone()),
        (json!("elicitation/create"), json!("Why?")),
        "{question}"
    );
    assert!(question["params"].get("mode").is_none(), "a legacy form names no mode: {question}");
    server.send_json(&json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"action": "accept", "content": {"why": "it asked"}}}));
    let done = server.response(&json!(7));
    assert_eq!(done["result"]["content"][0]["text"], "legacy: it asked", "{done}");
    assert_eq!(std::fs::read_to_string(&log).expect("log"), "legacy: it asked\n");
    server.finish();
}
